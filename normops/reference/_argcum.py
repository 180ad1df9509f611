"""Executable specification of ArgMax, ArgMin, CumSum and CumProd
(docs/specification.md §12 and §13; §4 for the types).

ArgMax / ArgMin are a sequential scan: the running winner starts at index 0
and a later element replaces it when strictly better (or better or equal
with select_last_index). Comparisons are exact and NaN compares false, so
the scan's result is, without running it:

* 0 when the sequence is empty or its first element is NaN (nothing
  compares better than NaN);
* otherwise the first (select_last_index: the last) index holding the best
  non-NaN value.

The long-sequence blocks of docs/specification.md §12 combine to that same index, so
they do not appear here. NumPy's rule (``nan_wins``): the first NaN, if
any, else the above.

CumSum adds and CumProd multiplies in the direction of accumulation, one
element at a time, in the arithmetic type (float32 for float16/bfloat16,
rounded once per output); integers wrap around modulo 2^k. An exclusive
line starts from the operation's identity (0 or 1).
"""
import math

import numpy as np

from ._sum16 import canonical_nan

_FLOAT32 = np.dtype(np.float32)


def _widened(x):
    """float16 / bfloat16 widened exactly to float32; other dtypes as they are."""
    if x.dtype.itemsize == 2 and (x.dtype.kind == "f" or x.dtype.name == "bfloat16"):
        return x.astype(_FLOAT32)
    return x


def arg_reduce(x, axis, is_min, last, nan_wins):
    """int64 indices along ``axis`` (the axis removed from the shape)."""
    x = _widened(np.asarray(x))
    if x.dtype.kind == "b":
        x = x.view(np.uint8)
    rows = np.moveaxis(x, axis, -1)
    out_shape, n = rows.shape[:-1], rows.shape[-1]
    if n == 0 or rows.size == 0:
        return np.zeros(out_shape, np.int64)
    rows = rows.reshape(-1, n)
    is_float = x.dtype.kind == "f"
    nan = np.isnan(rows) if is_float else np.zeros(rows.shape, bool)
    # the best non-NaN value of each row: NaN made the reduction's identity
    # first (fmax/fmin return NaN for a signalling NaN, as IEEE maxNum
    # does); the hits are then found among the original values
    candidates = np.where(nan, np.inf if is_min else -np.inf, rows) if is_float else rows
    best = (np.minimum if is_min else np.maximum).reduce(candidates, axis=1)
    hit = rows == best[:, None]
    first = np.argmax(hit, axis=1)
    final = n - 1 - np.argmax(hit[:, ::-1], axis=1)
    index = final if last else first
    index[nan[:, 0]] = 0                      # a leading NaN is never replaced
    if nan_wins:
        has_nan = nan.any(axis=1)
        index[has_nan] = np.argmax(nan, axis=1)[has_nan]
    return index.astype(np.int64).reshape(out_shape)


def cumulate(x, axis, exclusive, reverse, op):
    """The running ``op`` (``np.add``: CumSum, ``np.multiply``: CumProd) of
    ``x`` along ``axis``, in x's dtype."""
    x = np.asarray(x)
    wide = _widened(x)
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
