"""Executable specification of CumSum and CumProd (docs/specification.md §13;
§4 for the types).

CumSum adds and CumProd multiplies in the direction of accumulation, one
element at a time, in the arithmetic type (float32 for float16/bfloat16,
rounded once per output); integers wrap around modulo 2^k. An exclusive
line starts from the operation's identity (0 or 1).
"""
import math

import numpy as np

from ._sum16 import canonical_nan
from ._types import widened


def cumulate(x, axis, exclusive, reverse, op):
    """The running ``op`` (``np.add``: CumSum, ``np.multiply``: CumProd) of
    ``x`` along ``axis``, in x's dtype."""
    x = np.asarray(x)
    wide = widened(x)
    moved = np.moveaxis(wide, axis, 0)
    n = moved.shape[0]
    lines = moved.reshape(n, math.prod(moved.shape[1:]))  # rows stay arrays: integer results wrap silently
    y = np.empty_like(lines)
    order = list(range(n))[::-1] if reverse else list(range(n))
    if n:
        identity = 1 if op is np.multiply else 0
        acc = np.full_like(lines[0], identity) if exclusive else lines[order[0]].copy()
        y[order[0]] = acc
        with np.errstate(invalid="ignore", over="ignore", under="ignore"):  # inf - inf, 0 * inf, overflow
            for k in range(1, n):
                source = order[k - 1] if exclusive else order[k]
                acc = op(acc, lines[source])   # one rounded operation (or wrap) per element
                y[order[k]] = acc
    y = np.moveaxis(y.reshape(moved.shape), 0, axis)
    if y.dtype.kind == "f":
        y = canonical_nan(y)
        with np.errstate(over="ignore", under="ignore"):
            y = y.astype(x.dtype)              # one rounding for float16/bfloat16
    return np.ascontiguousarray(y)


def cum_sum(x, axis, exclusive, reverse):
    """The cumulative sum of ``x`` along ``axis``, in x's dtype."""
    return cumulate(x, axis, exclusive, reverse, np.add)


def cum_prod(x, axis, exclusive, reverse):
    """The cumulative product of ``x`` along ``axis``, in x's dtype."""
    return cumulate(x, axis, exclusive, reverse, np.multiply)
