"""Executable specification of Softmax, LogSoftmax and Hardmax on rows
(docs/specification.md §9).

The exponential and logarithm are normops' own (``_transcendental``): a
model of the arithmetic around them, not of the functions themselves.
"""
import numpy as np

from ._sum16 import canonical_nan, sum16
from ._transcendental import exp as _exp
from ._transcendental import log as _log


def nan_rows(x):
    """docs/specification.md §9.2 step 1: a row holding NaN or +inf, or only -inf."""
    return np.isnan(x).any(axis=1) | np.isposinf(x).any(axis=1) | np.isneginf(x).all(axis=1)


def rows(x, op_type):
    """The operator over each row of the contiguous 2-D float32/float64 x."""
    x = np.ascontiguousarray(x)
    if op_type == "Hardmax":
        # 1 at the first maximum, 0 elsewhere; a row holding NaN is all 0
        y = np.zeros_like(x)
        if x.size:
            first = np.argmax(x, axis=1)
            keep = ~np.isnan(x).any(axis=1)
            y[np.nonzero(keep)[0], first[keep]] = 1
        return y
    with np.errstate(invalid="ignore", over="ignore"):
        m = x.max(axis=1, keepdims=True) if x.size else np.zeros((x.shape[0], 1), x.dtype)  # step 2
        d = x - m                                   # step 3: the difference rounded first
        e = _exp(d)                                 # step 3: e = exp(d)
        s = sum16(e)[:, None]                       # step 4: the canonical sum
        if op_type == "Softmax":
            y = e / s                               # step 5: one division per element
        else:
            y = d - _log(s)                         # LogSoftmax: d - log(sum)
    y[nan_rows(x)] = np.nan                         # step 1
    return canonical_nan(y)
