"""Executable specification of Gelu and com.microsoft BiasGelu
(docs/exactness.md, "Gelu").

erf32 and tanh32 are modelled operation by operation (``_poly32``).
erf64/tanh64 (float64) are normops' own kernels: as for exp32 in
``_transcendental``, a model of the arithmetic around them, not of the functions
themselves.
"""
import numpy as np

from ._poly32 import erf32, tanh32
from ._transcendental import apply as _apply
from ._sum16 import canonical_nan

#: the constants, as Python floats (rounded once more to float32 for float32)
SQRT1_2 = 0.7071067811865476      # 1/sqrt(2)
SQRT_2_OVER_PI = 0.7978845608028654  # sqrt(2/pi)
CUBIC = 0.044715


def gelu(x, b=None, tanh=False):
    """Gelu of x, or of x + b (b added to every row of its length, the sum
    rounded first); float32 or float64 arrays of one dtype."""
    t = x.dtype.type
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        v = x if b is None else x + b
        if tanh:
            inner = v + t(CUBIC) * ((v * v) * v)
            w = t(SQRT_2_OVER_PI) * inner
            g = tanh32(w) if t is np.float32 else _apply(w, "tanh32_into", "tanh64_into")
        else:
            u = v * t(SQRT1_2)
            g = erf32(u) if t is np.float32 else _apply(u, "erf32_into", "erf64_into")
        return canonical_nan((t(0.5) * v) * (t(1) + g))
