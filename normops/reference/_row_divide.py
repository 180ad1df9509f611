"""Executable specification of MeanVarianceNormalization and LpNormalization
(exact flavour; docs/exactness.md, "MeanVarianceNormalization,
LpNormalization").

Both divide each row by one statistic of that row, one rounded operation
per line:

* MeanVarianceNormalization: the reduced axes are moved last (kept axes in
  their order, then the reduced axes in increasing order), so a row is the
  reduced index tuples in row-major order. ``mean = Sum16(x) / n``,
  ``d = x - mean``, ``s = sqrt(Sum16(d * d) / n)``, ``y = d / s``: the
  LayerNormalization steps 1-2 (docs/specification.md §8.1), then ONNX's formula
  ``(X - E[X]) / sqrt(E[(X - E[X])^2])`` with no epsilon (as ONNX Runtime's
  CPU kernel).
* LpNormalization: the axis is moved last. ``s = Sum16(|x|)`` (p=1) or
  ``sqrt(Sum16(x * x))`` (p=2), ``y = x / s``; a row whose s is 0 is +0
  throughout (as ONNX Runtime).

float16/bfloat16 are widened to float32 and each result rounded once;
float64 runs the same order in float64; every NaN is canonical.
"""
import numpy as np

from ._normalization import _compute_dtype, _native
from ._sum16 import canonical_nan, sum16

__all__ = ["divide_rows", "mean_variance_normalization", "lp_normalization"]


def divide_rows(x2d, kind):
    """Rows of the float32/float64 ``(rows, cols)`` array divided by their
    statistic: kind "std" (MeanVarianceNormalization), "l1" or "l2"."""
    x = np.asarray(x2d)
    dt = x.dtype
    n = dt.type(x.shape[1])
    with np.errstate(all="ignore"):
        if kind == "std":
            mean = sum16(x) / n
            d = x - mean[:, None]
            s = np.sqrt(sum16(d * d) / n)
        else:
            d = x
            s = sum16(np.abs(x)) if kind == "l1" else np.sqrt(sum16(x * x))
        y = d / s[:, None]
        if kind != "std":
            y[s == 0, :] = 0
    return canonical_nan(y)


def _run(X, row_axes, kind):
    """Move ``row_axes`` last (kept axes in order, then the row axes in
    increasing order), divide the rows, move back; the dtype rule of
    docs/specification.md §4. Works on a copy: X is never modified."""
    X = np.asarray(X)
    if X.size == 0:
        return np.empty(X.shape, _native(X.dtype))
    row_axes = sorted(row_axes)
    front = [a for a in range(X.ndim) if a not in row_axes] + row_axes
    moved = np.transpose(X, front)
    cols = int(np.prod([X.shape[a] for a in row_axes], dtype=np.int64))
    x2d = np.array(moved, dtype=_compute_dtype(X.dtype), order="C").reshape(-1, cols)
    y = np.transpose(divide_rows(x2d, kind).reshape(moved.shape), np.argsort(front))
    with np.errstate(over="ignore"):
        return canonical_nan(np.ascontiguousarray(y).astype(_native(X.dtype)))


def mean_variance_normalization(X, axes):
    """MeanVarianceNormalization -> ``(Y,)``; ``axes`` already validated
    (in range, non-negative, distinct, non-empty)."""
    return (_run(X, list(axes), "std"),)


def lp_normalization(X, axis, p):
    """LpNormalization -> ``(Y,)``; ``axis`` in [0, ndim), p 1 or 2."""
    return (_run(X, [axis], "l1" if p == 1 else "l2"),)
