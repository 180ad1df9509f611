"""Executable specification of the NumPy- and SciPy-style functions'
own arithmetic (docs/specification.md §16.2): ``where=`` and ``initial=``
of sum, prod, max, min and mean, an integer ``dtype=`` of mean, ``var`` and
``std``, and SciPy's accurate, weighted ``logsumexp``.

The arguments are taken already checked: ``axes`` is a tuple of distinct
axes in [0, ndim), ``where`` a bool array that broadcasts to the input's
shape (or None), ``initial`` a NumPy scalar of the accumulation type (or
None).
Each rounded operation is one NumPy operation on one line; the layout,
Sum16 and the blocks of long reductions are those of ``_reduction``; exp, log
and log1p are normops' own (docs/specification.md §5: their bits are
specified there and proven separately). Written from the specification,
independently of the production code, which never calls it.
"""
import math

import numpy as np

from ._reduction import KINDS, MAX_NAN, PROD, SUM, arranged, identity, output_shape
from ._reduction import accumulate as _accumulate
from ._reduction import reduce as _reduce
from ._sum16 import canonical_nan, sum16
from ._transcendental import exp as _exp
from ._transcendental import log as _log
from ._transcendental import log1p as _log1p

__all__ = ["masked_reduce", "mean", "var", "std", "logsumexp"]


def _work(dtype):
    """The arithmetic type T (docs/specification.md §4.1): float64 stays,
    the narrower floats compute in float32; integers are their own."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        return dtype
    return np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)


def _round(y, dtype):
    """y canonical, rounded once to ``dtype``."""
    y = canonical_nan(np.asarray(y))
    with np.errstate(over="ignore"):
        return canonical_nan(y.astype(dtype))


# ----------------------------------------------------- where=, initial=

def masked_reduce(kind, x, axes, keepdims, dtype, where=None, initial=None):
    """``sum`` ("ReduceSum"), ``prod`` ("ReduceProd"), ``max`` ("numpy.max")
    or ``min`` ("numpy.min") of x converted to ``dtype`` (for max and min:
    x's own type), over ``axes``:

    1. x in the arithmetic type T; every element ``where`` leaves out is
       replaced by the operation's identity (+0, 1, -inf / the type's
       minimum, +inf / its maximum), keeping its place in the sequence;
    2. the reduction of docs/specification.md §11 (layout, Sum16, blocks)
       in T;
    3. with ``initial``: one more step, initial first: ``initial + s``,
       ``initial * p``, or for max / min the scan step of §16.2 (a value
       replaces initial only if strictly larger / smaller, or NaN);
    4. rounded once to ``dtype``, NaN canonical.
    """
    op = KINDS[kind][0]
    dtype = np.dtype(dtype)
    if dtype.kind == "b":  # max / min of bools: as uint8 0 and 1
        init = None if initial is None else np.uint8(initial)
        return masked_reduce(kind, np.asarray(x).view(np.uint8), axes, keepdims, np.uint8, where,
                             init).astype(np.bool_)
    T = _work(dtype)
    t = np.asarray(x).astype(dtype).astype(T)
    if where is not None:
        t = np.where(np.broadcast_to(where, t.shape), t, identity(op, T))
    r = _reduce(kind, t, frozenset(axes), keepdims)
    if initial is not None:
        init = T.type(initial)
        with np.errstate(all="ignore"):
            if op == SUM:
                r = np.add(init, r, dtype=T)
            elif op == PROD:
                r = np.multiply(init, r, dtype=T)
            else:
                beyond = (r > init) if op == MAX_NAN else (r < init)
                if T.kind == "f":
                    beyond = beyond | (np.isnan(r) & ~np.isnan(init))
                r = np.where(beyond, r, init)
    r = np.asarray(r)
    return _round(r, dtype) if dtype.kind == "f" or dtype.name == "bfloat16" else r.astype(dtype)


def _count(where, shape, axes, keepdims):
    """How many elements each output reduces, as int64."""
    if where is None:
        n = math.prod(shape[i] for i in axes)
        return np.full(output_shape(shape, set(axes), keepdims), n, np.int64)
    where = np.broadcast_to(where, shape)
    return np.count_nonzero(where, axis=tuple(sorted(axes)), keepdims=keepdims).astype(np.int64)


def mean(x, axes, keepdims, dtype, where=None):
    """``mean``: the sum of step 1-2 above (left-out elements +0), then

    - float ``dtype``: ``s / RN_T(count)`` (count: the selected elements;
      0 / 0 is NaN), rounded once to ``dtype``;
    - integer ``dtype``: the wrapped integer sum s, ``float64(s) /
      float64(count)``, truncated toward zero (the type's minimum where that
      is NaN or out of range).
    """
    dtype = np.dtype(dtype)
    T = _work(dtype)
    s = np.asarray(masked_reduce("ReduceSum", x, axes, keepdims, T if T.kind == "f" else dtype, where))
    count = _count(where, np.shape(x), axes, keepdims).reshape(s.shape)
    with np.errstate(all="ignore"):
        if dtype.kind in "iu":
            q = s.astype(np.float64) / count.astype(np.float64)
            info = np.iinfo(dtype)
            t = np.trunc(q)
            ok = np.isfinite(t) & (t >= float(info.min)) & (t < 2.0 ** (info.bits - (info.min < 0)))
            return np.where(ok, np.where(ok, t, 0).astype(dtype), dtype.type(info.min)).astype(dtype)
        c = count.astype(T)
        m = s / c
    return _round(m, dtype)


# --------------------------------------------------------------- var, std

def _rows(a, axes, T):
    """The rows of docs/specification.md §16.2 (as MeanVarianceNormalization,
    §8.1): kept axes first, then the reduced ones in increasing order; each
    row the reduced index tuples in row-major order."""
    axes = sorted(axes)
    kept = [i for i in range(a.ndim) if i not in axes]
    moved = np.transpose(a, kept + axes)
    n = math.prod(a.shape[i] for i in axes)
    rows = math.prod(a.shape[i] for i in kept)
    return np.array(moved, dtype=T).reshape(rows, n)


def var(x, axes, keepdims, dtype, ddof=0, where=None, mean=None, root=False):
    """``var`` (``std`` with root): per row, in T,

    1. ``s = Sum16(x)`` (left-out elements +0), ``mean = s / RN_T(count)``;
       or the given ``mean`` (broadcast against x, converted to T);
    2. ``d[j] = x[j] - mean`` (+0 where left out); ``q = Sum16(d[j] * d[j])``;
    3. ``v = q / RN_T(max(count - ddof, 0))`` (the difference taken in
       float64); ``std = sqrt(v)``;
    4. rounded once to ``dtype``, NaN canonical.
    """
    a = np.asarray(x).astype(dtype)
    T = _work(dtype)
    xr = _rows(a, axes, T)
    rows, n = xr.shape
    w = None if where is None else _rows(np.broadcast_to(where, a.shape), axes, np.bool_)
    if w is not None:
        xr = np.where(w, xr, T.type(0))
    count = np.full(rows, n, np.int64) if w is None else np.count_nonzero(w, axis=1).astype(np.int64)
    with np.errstate(all="ignore"):
        if mean is None:
            s = sum16(xr) if n else np.zeros(rows, T)
            mu = s / count.astype(T)
            d = xr - mu[:, None]
        else:
            d = xr - _rows(np.broadcast_to(np.asarray(mean), a.shape), axes, T)
        if w is not None:
            d = np.where(w, d, T.type(0))
        q = sum16(d * d) if n else np.zeros(rows, T)
        divisor = np.maximum(count - ddof, 0).astype(np.float64).astype(T)
        v = q / divisor
        if root:
            v = np.sqrt(v)
    return _round(v.reshape(output_shape(a.shape, set(axes), keepdims)), dtype)


def std(x, axes, keepdims, dtype, ddof=0, where=None, mean=None):
    return var(x, axes, keepdims, dtype, ddof, where, mean, root=True)


# --------------------------------------------------------------- logsumexp

def _sums(t):
    """The (O, C) sums of the O x R x C terms in the layout's order
    (docs/specification.md §11.2, with the blocks of §11.4)."""
    return _accumulate(t, SUM, None)


def logsumexp(a, axes, b=None, keepdims=False, return_sign=False, result=None):
    """SciPy's accurate logsumexp (docs/specification.md §16.2), a and b
    already 1-d or more and broadcast to one shape, computed in T (the
    arithmetic type of ``result``), per output:

    1. a term whose weight is 0 is left out: its x becomes -inf;
    2. ``m`` = the maximum of x, NaN if any x is NaN;
    3. ``w`` = the sum of the weights of the elements equal to m (layout
       order), or ``RN_T(their count)`` without b;
    4. the terms: +0 at the elements equal to m, ``b * exp(x - m)`` (the
       difference, the exponential and the product each rounded) elsewhere;
       ``t`` = their sum in the layout's order;
    5. ``r = t / w``; ``sign = sign(w) * sign(r + 1)``;
       ``r' = (-r) - 2`` where ``r < -1``, else r;
       ``y = (log1p(r') + log(|w|)) + m``;
    6. where y is not finite (m infinite or NaN, w zero, an overflow): the
       direct form, ``S`` = the sum of ``b * exp(x)`` (layout order),
       ``y = log(|S|)``, ``sign = sign(S)``;
    7. without return_sign, y is NaN where sign < 0;
    8. rounded once to ``result``, NaN canonical.

    An empty reduction gives -inf, sign 0.
    """
    result = np.dtype(result)
    T = _work(result)
    shape = np.shape(a)
    axes = frozenset(axes)
    oshape = output_shape(shape, axes, keepdims)
    if math.prod(shape[i] for i in axes) == 0 or math.prod(oshape) == 0:
        y = np.full(oshape, -np.inf, T)
        sign = np.zeros(oshape, T)
    else:
        x3 = arranged(np.asarray(a).astype(T), axes, T)
        O, R, C = x3.shape
        b3 = None if b is None else arranged(np.asarray(b).astype(T), axes, T)
        with np.errstate(all="ignore"):
            if b3 is not None:
                x3 = np.where(b3 == 0, T.type(-np.inf), x3)                     # 1
            m = _accumulate(x3, MAX_NAN, None)                                   # 2
            at_max = x3 == m[:, None, :]
            if b3 is None:
                w = np.count_nonzero(at_max, axis=1).astype(T)                   # 3
            else:
                w = _sums(np.where(at_max, b3, T.type(0)))
            center = np.where(np.isfinite(m), m, T.type(0))
            d = x3 - center[:, None, :]                                          # 4
            e = _exp(d)
            if b3 is not None:
                e = e * b3
            e = np.where(at_max, T.type(0), e)
            t = _sums(e)
            r = t / w                                                            # 5
            sign = np.sign(r + T.type(1))
            if b3 is not None:
                sign = np.sign(w) * sign
            r2 = np.where(r < -1, (-r) - T.type(2), r)
            lw = _log(np.abs(w))
            y = (_log1p(r2) + lw) + m
            bad = ~np.isfinite(y)                                                # 6
            if bad.any():
                e = _exp(x3)
                if b3 is not None:
                    e = e * b3
                s = _sums(e)
                y = np.where(bad, _log(np.abs(s)), y)
                sign = np.where(bad, np.sign(s), sign)
            if not return_sign:                                                  # 7
                y = np.where(sign < 0, T.type(np.nan), y)
        y = y.reshape(oshape)
        sign = sign.reshape(oshape)
    y = _round(y, result)
    return (y, _round(sign, result)) if return_sign else y

