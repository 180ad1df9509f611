"""normops' own exponential and logarithms, for the models of the families
that use them (docs/specification.md §5): exp32/log32/log1p32 (float32,
correctly rounded, proven over all 2^32 inputs by ``python -m normops
verify-transcendentals``) and their float64 counterparts. The models use
the kernels' functions themselves: they model the arithmetic around them,
not the functions."""
import numpy as np


def apply(a, float32_kernel, float64_kernel):
    """normops' own function (a kernel entry point name) over an array."""
    from .. import _isa

    out = np.empty_like(a)
    name = float32_kernel if a.dtype == np.float32 else float64_kernel
    getattr(_isa.kernels, name)(a.reshape(-1), out.reshape(-1), 1)
    return out


def exp(a):
    return apply(a, "exp32_into", "exp64_into")


def log(a):
    return apply(a, "log32_into", "log64_into")


def log1p(a):
    return apply(a, "log1p32_into", "log1p64_into")
