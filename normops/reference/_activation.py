"""Executable specification of Sigmoid (docs/specification.md §10.1).

The exponential is normops' own (``_transcendental``): exp32 for float32,
exp64 for float64.
"""
import numpy as np

from ._sum16 import canonical_nan
from ._transcendental import exp as _exp


def sigmoid(x):
    """Sigmoid (docs/specification.md §10.1): 1 / (1 + exp(-x)), both operations
    rounded, NaN canonical."""
    one = x.dtype.type(1)
    with np.errstate(over="ignore", invalid="ignore"):
        return canonical_nan(one / (one + _exp(-x)))
