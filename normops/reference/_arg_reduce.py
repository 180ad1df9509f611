"""Executable specification of ArgMax and ArgMin (docs/specification.md §12;
§4 for the types).

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
"""
import numpy as np

from ._types import widened


def arg_reduce(x, axis, is_min, last, nan_wins):
    """int64 indices along ``axis`` (the axis removed from the shape)."""
    x = widened(np.asarray(x))
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
