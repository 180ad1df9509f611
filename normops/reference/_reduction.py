"""Executable specification of the Reduce* family (docs/specification.md
§11; §4 for the types).

``reduce(kind, x, axes, keepdims)`` is the whole operator: geometry, the
accumulation (``accumulate``) and the finishing step, as
``normops.reference.run`` computes it. The production code
(``normops/reduction.py`` and the kernels) is written independently of it
and never calls it; the tests compare the two bit for bit.

Arithmetic stays in the data's float dtype (one rounded NumPy operation per
step); exp and log are normops' own (see ``_transcendental``).
"""
import math

import numpy as np

from .._spec import BLOCK_TERMS, LONG_TERMS  # plain numbers: docs/specification.md §11.4
from ._transcendental import exp as _exp
from ._transcendental import log as _log
from ._sum16 import canonical_nan, sum16

# Accumulations (the kernels' op codes, reduction.h).
SUM, SUM_ABS, SUM_SQUARE, SUM_EXP, PROD, MAX, MIN, MAX_NAN, MIN_NAN = range(9)

# docs/specification.md §11.4: sequences of at least LONG_TERMS terms go in blocks
# of BLOCK_TERMS (normops/_spec.py, the numbers the kernels' spec_constants.h holds).

#: kind -> (accumulation, finishing). The ONNX operators, plus NumPy's max
#: and min, where any NaN wins.
KINDS = {
    "ReduceSum": (SUM, None),
    "ReduceMean": (SUM, "mean"),
    "ReduceL1": (SUM_ABS, None),
    "ReduceL2": (SUM_SQUARE, "sqrt"),
    "ReduceSumSquare": (SUM_SQUARE, None),
    "ReduceLogSum": (SUM, "log"),
    "ReduceLogSumExp": (SUM_EXP, "logsumexp"),
    "ReduceProd": (PROD, None),
    "ReduceMax": (MAX, "nan_first"),
    "ReduceMin": (MIN, "nan_first"),
    "numpy.max": (MAX_NAN, None),
    "numpy.min": (MIN_NAN, None),
}


def identity(op, dtype):
    """The value an accumulation starts from (and an empty one gives)."""
    big = dtype.kind in "iu" and np.iinfo(dtype)
    if op == PROD:
        return dtype.type(1)
    if op in (MAX, MAX_NAN):
        return dtype.type(big.min if big else -np.inf)
    if op in (MIN, MIN_NAN):
        return dtype.type(big.max if big else np.inf)
    return dtype.type(0)


# ------------------------------------------------------------------ geometry

def arrange(shape, axes):
    """The layout of a reduction of ``shape`` over the axis set ``axes``.

    Extent-1 dimensions are dropped and neighbouring kept or reduced
    dimensions merged into runs. Returns ``(perm, O, R, C)``: the data
    transposed by ``perm`` is ``O x R x C`` with the reduced tuples in
    row-major order along R. C > 1 is the column layout (the last run is
    kept: its C outputs side by side), C == 1 the row layout (the last run is
    reduced). Moving the other kept runs in front keeps the order of every
    output's sequence, so it changes no bit.
    """
    runs = []  # [reduced?, axes]
    for i, n in enumerate(shape):
        if n == 1:
            continue
        reduced = i in axes
        if runs and runs[-1][0] == reduced:
            runs[-1][1].append(i)
        else:
            runs.append([reduced, [i]])
    ones = [i for i, n in enumerate(shape) if n == 1]
    last = runs.pop()[1] if runs and not runs[-1][0] else []  # column layout's inner outputs
    kept = [i for r, ax in runs if not r for i in ax]
    reduced = [i for r, ax in runs if r for i in ax]

    def extent(ax):
        return math.prod(shape[i] for i in ax)

    return ones + kept + reduced + last, extent(kept), extent(reduced), extent(last)


def output_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


# -------------------------------------------------------------- the whole op

def reduce(kind, x, axes, keepdims):
    """The reduction ``kind`` of the checked array x over the axis set
    ``axes``: floats in float32 (float64 for float64 input), integers
    wrapping around (``evaluate_integer``)."""
    if x.dtype.kind in "iu":
        return evaluate_integer(kind, x, axes, keepdims, accumulate)
    dtype = np.dtype(np.float64 if x.dtype == np.float64 else np.float32)
    return evaluate(kind, x, axes, keepdims, accumulate, dtype)


def evaluate(kind, x, axes, keepdims, accumulate, dtype):
    """The reduction ``kind`` of the native array ``x`` over the axis set
    ``axes`` (ints in [0, ndim)), computed in the float ``dtype`` (float32
    or float64), rounded once to x's dtype. ``accumulate(x3, op, center)``
    returns the (O, C) accumulations of the O x R x C array x3 (R >= 1)."""
    op, finishing = KINDS[kind]
    x3, out_shape = _arranged(x, axes, keepdims, dtype)
    O, R, C = x3.shape
    m = None
    if O * C == 0 or R == 0:  # no outputs, or empty reductions
        raw = np.full((O, C), identity(op, dtype), dtype)
        if op == SUM_EXP:
            m = np.full((O, C), -np.inf, dtype)
    else:
        raw, m = accumulated(x3, op, accumulate)
    y = raw if finishing is None else finish(finishing, raw, x3, R, m)
    y = y.reshape(out_shape)
    if np.isnan(y).any():
        y = canonical_nan(y)
    if y.dtype == x.dtype:
        return y
    with np.errstate(over="ignore"):
        return y.astype(x.dtype)


def accumulated(x3, op, accumulate):
    """``(raw, m)`` of the non-empty O x R x C array x3: the (O, C)
    accumulations, and for SUM_EXP the maxima m the terms are centred on
    (None for the other ops)."""
    if op != SUM_EXP:
        return accumulate(x3, op, None), None
    m = accumulate(x3, MAX_NAN, None)   # NaN if any element is NaN
    with np.errstate(invalid="ignore"):
        center = np.where(np.isfinite(m), m, x3.dtype.type(0))
    return accumulate(x3, SUM_EXP, center), m


def arranged(x, axes, dtype):
    """x as the contiguous O x R x C array of ``arrange``, in ``dtype``."""
    return _arranged(x, frozenset(axes), False, dtype)[0]


def _arranged(x, axes, keepdims, dtype):
    """``arranged`` and the output shape."""
    perm, O, R, C = arrange(x.shape, frozenset(axes))
    x3 = np.transpose(x, perm)
    if not (x3.dtype == dtype and x3.flags.c_contiguous and x3.flags.aligned):
        x3 = np.array(x3, dtype=dtype, order="C")
    return x3.reshape(O, R, C), output_shape(x.shape, axes, keepdims)


def finish(finishing, raw, x3, count, m):
    """The per-output step after the accumulation (docs/specification.md
    §11.5), one rounded operation each."""
    dtype = raw.dtype
    with np.errstate(all="ignore"):
        if finishing == "mean":  # count rounded to the arithmetic type; empty gives 0
            return raw / dtype.type(count) if count else np.zeros_like(raw)
        if finishing == "sqrt":
            return np.sqrt(raw)
        if finishing == "log":
            return _log(raw)
        if finishing == "logsumexp":  # +-inf and NaN maxima are the result
            return np.where(np.isfinite(m), m + _log(raw), m)
        if finishing == "nan_first" and count:  # a NaN first element wins the scan
            return np.where(np.isnan(x3[:, 0, :]), dtype.type(np.nan), raw)
    return raw


# ------------------------------------------------------------ the accumulation

def _terms(x3, op, center):
    with np.errstate(all="ignore"):
        if op == SUM_ABS:
            return np.abs(x3)
        if op == SUM_SQUARE:
            return x3 * x3
        if op == SUM_EXP:
            return _exp(x3 - center[:, None, :])  # the difference rounded before exp
    return x3


def _step(acc, t, op):
    """One sequential step acc (op) t, element-wise."""
    if op == PROD:
        return acc * t
    if op == MAX:
        return np.where(t > acc, t, acc)
    if op == MIN:
        return np.where(t < acc, t, acc)
    if op == MAX_NAN:
        return np.where((t > acc) | np.isnan(t), t, acc)
    if op == MIN_NAN:
        return np.where((t < acc) | np.isnan(t), t, acc)
    return acc + t


def _sequential(t, op):
    """op over axis -2 of t (..., R, C), in order from the identity."""
    acc = np.full(t.shape[:-2] + t.shape[-1:], identity(op, t.dtype), t.dtype)
    with np.errstate(all="ignore"):
        for r in range(t.shape[-2]):
            acc = _step(acc, t[..., r, :], op)
    return acc


def _layout_reduce(t, op, row_layout):
    """One sequence per output along axis -2: Sum16 for sums in the row
    layout, sequential otherwise."""
    if row_layout and op in (SUM, SUM_ABS, SUM_SQUARE, SUM_EXP):
        return sum16(np.swapaxes(t, -1, -2))
    return _sequential(t, op)


def accumulate(x3, op, center):
    """The reference accumulation: (O, C) results of op over axis 1 of x3."""
    O, R, C = x3.shape
    if x3.dtype.kind in "iu":
        return _integer_accumulate(x3, op)
    t = _terms(x3, op, center)
    row_layout = C == 1
    if R < LONG_TERMS:
        return _layout_reduce(t, op, row_layout)
    # docs/specification.md §11.4: blocks of BLOCK_TERMS, each reduced as the layout
    # says, then combined in block order. Padding the last block with the
    # identity changes no bit: sums from +0 are never -0, so adding +0 to
    # them is exact; x * 1, and max/min against -inf/+inf, change nothing.
    nb = -(-R // BLOCK_TERMS)
    combine = op if op in (PROD, MAX, MIN, MAX_NAN, MIN_NAN) else SUM
    padded = np.full((O, nb * BLOCK_TERMS, C), identity(combine, x3.dtype), x3.dtype)
    padded[:, :R] = t
    blocks = _layout_reduce(padded.reshape(O, nb, BLOCK_TERMS, C), op if op != SUM_EXP else SUM, row_layout)
    return _layout_reduce(blocks, combine, True)  # (O, nb, C): nb along axis -2


# ------------------------------------------------------------------ integers

def _integer_accumulate(x3, op):
    """Integer accumulations. Wrap-around addition and multiplication are
    associative and commutative modulo 2^bits, and max/min pick a value, so
    every order gives the same bits: NumPy's reductions in the input's type
    are the specification (|x| and x * x wrap too)."""
    with np.errstate(all="ignore"):
        if op == SUM_ABS:
            return np.add.reduce(np.abs(x3), axis=1, dtype=x3.dtype)
        if op == SUM_SQUARE:
            return np.add.reduce(x3 * x3, axis=1, dtype=x3.dtype)
        ufunc = {PROD: np.multiply, MAX: np.maximum, MAX_NAN: np.maximum, MIN: np.minimum,
                 MIN_NAN: np.minimum}.get(op, np.add)
        return ufunc.reduce(x3, axis=1, dtype=x3.dtype)


def evaluate_integer(kind, x, axes, keepdims, accumulate):
    """Integer reductions: the accumulation wraps around (see
    ``_integer_accumulate``); an empty max/min gives the type's
    minimum/maximum. Mean divides truncating toward zero (an empty mean is
    0); L2 is the float64 square root of the wrapped sum of squares,
    truncated (0 when the sum wrapped negative); ReduceLogSum is log64 of
    the wrapped sum truncated toward zero (``to_integer``); ReduceLogSumExp
    is the integer maximum m plus the truncated float64
    log(sum(exp(x - m))), the float64 part by the float64 operator's steps,
    as ONNX Runtime computes it (an empty one gives the type's minimum)."""
    op, finishing = KINDS[kind]
    dtype = x.dtype
    x3, out_shape = _arranged(x, axes, keepdims, dtype)
    O, R, C = x3.shape
    empty = O * C == 0 or R == 0
    if empty and op == SUM_EXP:
        return np.full(out_shape, np.iinfo(dtype).min, dtype)
    if dtype.itemsize < 4:  # 8-bit max/min: computed on 32-bit lanes, the same values
        x3 = x3.astype(np.int32 if dtype.kind == "i" else np.uint32)
    if op == SUM_EXP:  # m + trunc(log(sum(exp(x - m)))), m the integer maximum
        m = accumulate(x3, MAX, None).astype(dtype)
        d = x3.astype(np.float64) - m.astype(np.float64)[:, None, :]  # max(d) = 0
        log_s = _log(accumulate(d, SUM_EXP, np.zeros(m.shape, np.float64)))
        with np.errstate(over="ignore"):
            return (m + to_integer(log_s, dtype)).reshape(out_shape)
    y = np.full((O, C), identity(op, dtype), dtype) if empty else accumulate(x3, op, None).astype(dtype)
    with np.errstate(all="ignore"):
        if finishing == "mean" and R == 0:
            y = np.zeros_like(y)
        elif finishing == "mean":
            n = dtype.type(R)
            q = y // n  # floor; truncate toward zero instead
            y = np.where((q * n != y) & (y < 0), q + dtype.type(1), q).astype(dtype)
        elif finishing == "sqrt":
            r = np.sqrt(y.astype(np.float64))
            y = np.where(np.isnan(r), 0, np.trunc(r)).astype(dtype)
        elif finishing == "log":
            y = to_integer(_log(y.astype(np.float64)), dtype)
    return y.reshape(out_shape)


def to_integer(v, dtype):
    """float64 ``v`` truncated toward zero to the integer ``dtype``; a
    non-finite or out-of-range value gives the type's minimum (what the x86
    conversion ONNX Runtime uses returns for signed types)."""
    info = np.iinfo(dtype)
    with np.errstate(invalid="ignore"):
        t = np.trunc(v)
        ok = np.isfinite(t) & (t >= float(info.min)) & (t < 2.0 ** (info.bits - (info.min < 0)))
    return np.where(ok, np.where(ok, t, 0).astype(dtype), dtype.type(info.min)).astype(dtype)
