"""NumPy-style reductions (``normops.sum``, ``mean``, ``max``/``amax``,
``min``/``amin``, ``prod``, ``var``, ``std``) and SciPy's ``logsumexp``,
computed by normops' kernels in the exact order of docs/specification.md
§16.2.

Signatures, defaults and result dtypes are NumPy's (SciPy's for
``logsumexp``), ``where=`` and ``initial=`` included. Complex and object
input raise ``UnsupportedError``; no argument is ever ignored. ``max`` and
``min`` follow NumPy: any NaN gives NaN (the ONNX operators follow the scan
rule of docs/specification.md §11.6 instead). ``logsumexp`` takes SciPy's
accurate form (the maxima separated, ``log1p`` of the other terms), not
ReduceLogSumExp's formula.
"""
import math
import operator

import numpy as np

from . import _config, _isa
from ._errors import InvalidInputError, UnsupportedError
from ._transpose import moved_axes
from ._validate import array_input, compute_dtype, is_float_dtype, rounded_to, truth_argument, zero_d_axis
from .reduction import (
    KINDS, MAX_NAN, ONE_AXIS, SUM, SUM_EXP, SUM_EXP_FAST, _arranged, _truncated, accumulation_for, all_axes,
    arrangement, normalize_axes, reduce, resolve,
)


_FLOAT32 = np.dtype(np.float32)
_FLOAT64 = np.dtype(np.float64)


class _NoValueType:
    """Marks an argument the caller did not pass (NumPy's ``np._NoValue``)."""

    def __repr__(self):
        return "<no value>"


_NoValue = _NoValueType()


def _axes(name, axis, ndim):
    if axis is None:
        return all_axes(ndim)
    if type(axis) is int and -ndim <= axis < ndim:  # the common case, without the general checks
        return ONE_AXIS[axis + ndim if axis < 0 else axis]
    if ndim == 0 and name not in ("mean", "var", "std") and not isinstance(axis, tuple):
        # (numpy.mean, var and std refuse it: they count the elements along the axis)
        zero_d_axis(name, axis, "a")
        return all_axes(0)
    values = axis if isinstance(axis, tuple) else (axis,)
    ints = []
    for v in values:
        if isinstance(v, (bool, np.bool_)):
            raise InvalidInputError(f"{name}: argument 'axis' must hold integers, not {axis!r}")
        try:
            ints.append(operator.index(v))
        except TypeError:
            raise InvalidInputError(f"{name}: argument 'axis' must be None, an int or a tuple of ints, "
                                    f"not {axis!r}") from None
    return normalize_axes(name, "argument 'axis'", ints, ndim, "a")


def _direct(name, kind, a, axis, keepdims, mode, n_threads):
    """The direct route (the kernels' ``reduce_direct``) of a call whose
    other arguments are their defaults: keepdims a bool, axis None, an int
    or a tuple of ints, mode and n_threads passing by type. Returns None to
    send the call down the general path (which alone raises errors)."""
    if keepdims is False or keepdims is True:
        settings = _isa.routes.direct_settings(mode, n_threads)
        if settings is not None:
            return _isa.kernels.reduce_direct(a, axis, keepdims, accumulation_for(kind, mode),
                                              KINDS[kind][1], settings[0], False, True)
    return None


def _where_direct(kind, a, axis, keepdims, initial, where, mode, n_threads, mean=False):
    """The kernels' route for where= / initial= (reduce_where_direct) of a
    call whose other arguments are the common ones: keepdims a bool,
    initial absent or a Python float, where absent or an ndarray. None to
    send the call down the general path (the same bits; it alone raises)."""
    if (keepdims is False or keepdims is True) and (initial is _NoValue or type(initial) is float) and (
            where is _NoValue or type(where) is np.ndarray):
        settings = _isa.routes.direct_settings(mode, n_threads)
        if settings is not None:
            return _isa.kernels.reduce_where_direct(a, None if where is _NoValue else where, axis, keepdims,
                                                    KINDS[kind][0], settings[0], initial is not _NoValue,
                                                    0.0 if initial is _NoValue else initial, mean)
    return None


def _refuse(name, **arguments):
    for argument, value in arguments.items():
        if value is not _NoValue:
            raise UnsupportedError(f"{name}: argument {argument!r} is not served")


def _input(name, a, argument="a"):
    a = array_input(name, argument, a)
    if a.dtype.kind == "c":
        raise UnsupportedError(f"{name}: complex input {argument!r} ({a.dtype}) is not served "
                               f"(normops computes real values only)")
    if not (is_float_dtype(a.dtype) or a.dtype.kind in "iub"):
        raise UnsupportedError(f"{name}: input {argument!r} of dtype {a.dtype} is not served")
    return a


def _default_sum_dtype(dtype):
    """NumPy's accumulator for sum/prod: small integers and bool widen to the
    platform integer (int64 / uint64 on 64-bit Linux)."""
    if dtype.kind == "b" or (dtype.kind == "i" and dtype.itemsize < 8):
        return np.dtype(np.int64)
    if dtype.kind == "u" and dtype.itemsize < 8:
        return np.dtype(np.uint64)
    return dtype


def _dtype_argument(name, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "c" or not (is_float_dtype(dtype) or dtype.kind in "iu"):
        raise UnsupportedError(f"{name}: argument 'dtype'={dtype} is not served")
    return dtype


def _keepdims(name, keepdims):
    """NumPy's rule for its reductions' keepdims: an integer (True and
    False included) read by operator.index, so 1.5, "x", None or
    numpy.True_ are refused, and so is a value outside C int's range, as
    NumPy's OverflowError). NumPy's own "not given" marker means the
    default. (logsumexp reads it as SciPy does, truth_argument, first.)"""
    if keepdims is np._NoValue:
        return False
    try:
        value = operator.index(keepdims)
    except TypeError:
        value = None
    if value is None or not -2**31 <= value < 2**31:
        raise InvalidInputError(f"{name}: argument 'keepdims' must be a bool or an integer of C int's "
                                f"range, not {keepdims!r}")
    return bool(value)


def _finish(name, y, out):
    if out is None:
        return y[()] if y.ndim == 0 else y
    if not isinstance(out, np.ndarray):
        raise InvalidInputError(f"{name}: argument 'out' must be an ndarray")
    if out.shape != y.shape:
        raise InvalidInputError(f"{name}: argument 'out' has shape {out.shape}, the result {y.shape}")
    try:
        np.copyto(out, y, casting="same_kind")
    except TypeError as exc:
        raise InvalidInputError(f"{name}: argument 'out': {exc}") from None
    return out


def _run(name, kind, a, axis, keepdims, mode, n_threads):
    keepdims = _keepdims(name, keepdims)
    n_threads = resolve(name, mode, n_threads)
    axes = _axes(name, axis, a.ndim)
    if a.dtype.kind in "iu" and (a.dtype.itemsize == 2 or (a.dtype.itemsize == 1 and kind not in (
            "numpy.max", "numpy.min"))):
        # types the kernels do not hold: wrap-around arithmetic in 64 bits,
        # then wrapped to the type, gives the same bits (and max/min the same value)
        wide = np.int64 if a.dtype.kind == "i" else np.uint64
        y = reduce(kind, a.astype(wide), axes, keepdims, n_threads)
        return y.astype(a.dtype)
    return reduce(kind, a, axes, keepdims, n_threads, mode)


def _reduced(name, kind, x, axis, keepdims, mode, n_threads):
    """``_run`` as an array, through the kernels' direct route where it
    applies (a plain float32/float64 array and arguments of the usual
    types: the same bits, tests/test_reduction_direct.py)."""
    if keepdims is False or keepdims is True:
        settings = _isa.routes.direct_settings(mode, n_threads)
        if settings is not None:
            y = _isa.kernels.reduce_direct(x, axis, keepdims, accumulation_for(kind, mode), KINDS[kind][1],
                                           settings[0], False, False)
            if y is not None:
                return y
    return np.asarray(_run(name, kind, x, axis, keepdims, mode, n_threads))


# ------------------------------------------------------------ where=, initial=
# docs/specification.md §16.2: an element that ``where`` leaves out is
# replaced by the operation's identity, in place, so every other element
# keeps its position in the sequence (and its Sum16 partial); ``initial``
# then joins the reduction's result by one more step of the operation.

def _where(name, where, shape):
    """``where`` as a bool array broadcast to ``shape``; None when it selects
    every element (a 0-d True)."""
    if type(where) is np.ndarray and where.dtype == np.bool_ and where.shape == shape:
        return where  # the common call
    try:
        w = np.asarray(where)
    except Exception as exc:  # noqa: BLE001 - any conversion failure
        raise InvalidInputError(f"{name}: argument 'where' is not an array: {exc}") from None
    if w.dtype != np.bool_:
        raise InvalidInputError(f"{name}: argument 'where' must hold bools (a boolean array, list or scalar), "
                                f"not {w.dtype}")
    if w.ndim == 0 and w:
        return None
    try:
        return np.broadcast_to(w, shape)
    except ValueError:
        raise InvalidInputError(f"{name}: argument 'where' of shape {w.shape} does not broadcast to input 'a' "
                                f"of shape {shape}") from None


def _initial(name, initial, dtype):
    """``initial`` in the accumulation ``dtype``, converted as NumPy converts
    it (a cast; a Python integer outside an integer type is refused)."""
    if type(initial) is float and (dtype == _FLOAT64 or (dtype == _FLOAT32 and abs(initial) < 3e38)):
        return dtype.type(initial)  # the common call (float32 rounds, as NumPy's cast)
    if isinstance(initial, (complex, np.complexfloating)):
        raise UnsupportedError(f"{name}: a complex argument 'initial' is not served")
    try:
        value = np.asarray(initial)
    except Exception:  # noqa: BLE001
        value = None
    if value is None or value.ndim != 0 or value.dtype.kind not in "biuf":
        raise InvalidInputError(f"{name}: argument 'initial' must be a real scalar, not {initial!r}")
    if dtype.kind in "iu" and isinstance(initial, int) and not isinstance(initial, bool):
        info = np.iinfo(dtype)
        if not info.min <= initial <= info.max:
            raise InvalidInputError(f"{name}: argument 'initial'={initial} is out of range for {dtype}")
    with np.errstate(all="ignore"):
        return value.astype(dtype)[()]


def _has_initial(initial):
    return initial is not _NoValue and initial is not None  # NumPy: None means none


def _canonical(y):
    """y (an ndarray) with every NaN the canonical quiet NaN (docs/specification.md §4.5)."""
    if y.dtype.kind == "f":
        nan = np.isnan(y)
        if nan.any():
            y = np.where(nan, y.dtype.type(np.nan), y)
    return y


def _masked_sum_or_prod(name, kind, a, dtype, axis, keepdims, initial, where, mode, n_threads):
    """sum / prod with ``where`` or ``initial`` (docs/specification.md §16.2)."""
    w = None if where is _NoValue else _where(name, where, a.shape)
    if where is not _NoValue and initial is None:
        raise InvalidInputError(f"{name}: argument 'where' needs an 'initial' other than None, as in NumPy")
    x = a.astype(dtype, copy=False)
    if w is None and not _has_initial(initial):
        return _run(name, kind, x, axis, keepdims, mode, n_threads)
    work = compute_dtype(dtype) if is_float_dtype(dtype) else dtype  # float16: float32, exactly
    x = x.astype(work, copy=False)
    identity = work.type(1 if kind == "ReduceProd" else 0)
    if w is not None:
        x = np.where(w, x, identity)
    y = _reduced(name, kind, x, axis, keepdims, mode, n_threads)
    if _has_initial(initial):
        init = work.type(_initial(name, initial, dtype))
        with np.errstate(all="ignore"):  # integers wrap around, as NumPy's
            y = np.asarray((np.multiply if kind == "ReduceProd" else np.add)(init, y, dtype=work))
    return rounded_to(_canonical(y), dtype)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue, *,
        mode=None, n_threads=None):
    """``numpy.sum`` by normops' kernels: the canonical Sum16 in the row
    layout, sequential per output in the column layout (see ReduceSum);
    ``where`` replaces the elements it leaves out by +0, ``initial`` is
    added to the result (docs/specification.md §16.2)."""
    if dtype is None and out is None and initial is _NoValue and where is _NoValue:
        y = _direct("sum", "ReduceSum", a, axis, keepdims, mode, n_threads)  # the plain call: no further Python call
        if y is not None:
            return y
    return _sum_or_prod("sum", "ReduceSum", a, axis, dtype, out, keepdims, initial, where, mode, n_threads)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue, *,
         mode=None, n_threads=None):
    """``numpy.prod`` by normops' kernels (sequential products); ``where``
    replaces the elements it leaves out by 1, the result is multiplied by
    ``initial`` (docs/specification.md §16.2)."""
    if dtype is None and out is None and initial is _NoValue and where is _NoValue:
        y = _direct("prod", "ReduceProd", a, axis, keepdims, mode, n_threads)  # the plain call: no further Python call
        if y is not None:
            return y
    return _sum_or_prod("prod", "ReduceProd", a, axis, dtype, out, keepdims, initial, where, mode, n_threads)


def _sum_or_prod(name, op_type, a, axis, dtype, out, keepdims, initial, where, mode, n_threads):
    """sum and prod past their plain-array route: where=/initial= in one
    kernel call where it serves, else the general path."""
    if dtype is None and out is None and (initial is not _NoValue or where is not _NoValue):
        y = _where_direct(op_type, a, axis, keepdims, initial, where, mode, n_threads)
        if y is not None:
            return y
    a = _input(name, a)
    dtype = _default_sum_dtype(a.dtype) if dtype is None else _dtype_argument(name, dtype)
    return _finish(name, _masked_sum_or_prod(name, op_type, a, dtype, axis, keepdims, initial, where, mode,
                                             n_threads), out)


def _count(w, shape, axis, keepdims, name):
    """The number of elements each output reduces: all of them, or those
    ``w`` selects (an int64 array of the output's shape)."""
    axes = tuple(sorted(_axes(name, axis, len(shape))))
    if w is None:
        return np.int64(math.prod(shape[i] for i in axes))
    return np.asarray(np.count_nonzero(w, axis=axes, keepdims=keepdims), np.int64)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=_NoValue, mode=None, n_threads=None):
    """``numpy.mean`` by normops' kernels: the sum divided by the count.
    Integer and bool input is computed in float64, as NumPy does; float16
    in float32 and rounded once. ``where`` selects the elements, and the
    count is theirs; an integer ``dtype`` sums in that type and truncates
    the float64 quotient (docs/specification.md §16.2)."""
    if dtype is None and out is None:
        if where is _NoValue:
            y = _direct("mean", "ReduceMean", a, axis, keepdims, mode, n_threads)
        else:
            y = _where_direct("ReduceSum", a, axis, keepdims, _NoValue, where, mode, n_threads, mean=True)
        if y is not None:
            return y
    a = _input("mean", a)
    if dtype is None:
        dtype = a.dtype if is_float_dtype(a.dtype) else np.dtype(np.float64)
    else:
        dtype = _dtype_argument("mean", dtype)
    w = None if where is _NoValue else _where("mean", where, a.shape)
    if w is None and is_float_dtype(dtype):
        y = _run("mean", "ReduceMean", a.astype(dtype, copy=False), axis, keepdims, mode, n_threads)
        if a.size == 0 and y.size:  # NumPy: the mean of nothing is NaN (ReduceMean gives 0)
            y = np.full_like(y, np.nan)
        return _finish("mean", y, out)
    keepdims = _keepdims("mean", keepdims)
    work = compute_dtype(dtype) if is_float_dtype(dtype) else dtype
    x = a.astype(dtype, copy=False).astype(work, copy=False)
    if w is not None:
        x = np.where(w, x, work.type(0))
    s = _reduced("mean", "ReduceSum", x, axis, keepdims, mode, n_threads)
    count = _count(w, a.shape, axis, keepdims, "mean")
    with np.errstate(all="ignore"):
        if dtype.kind in "iu":  # NumPy: the wrapped sum over the count in float64, then cast
            y = _truncated(np.asarray(s.astype(np.float64) / count.astype(np.float64)), dtype)
        else:
            y = rounded_to(_canonical(np.asarray(s / count.astype(work))), dtype)
    return _finish("mean", y.reshape(s.shape), out)


def _extreme(name, kind, a, axis, out, keepdims, initial, where, mode, n_threads):
    if out is None:
        if initial is _NoValue and where is _NoValue:
            y = _direct(name, kind, a, axis, keepdims, mode, n_threads)
        elif type(initial) is float:  # (where= without initial: the general path refuses it)
            y = _where_direct(kind, a, axis, keepdims, initial, where, mode, n_threads)
        else:
            y = None
        if y is not None:
            return y
    a = _input(name, a)
    if not _has_initial(initial):
        if where is not _NoValue:
            raise InvalidInputError(f"{name}: argument 'where' needs an 'initial' (a {name}imum has no "
                                    f"identity), as in NumPy")
        if a.size == 0 and (axis is None or any(a.shape[i] == 0 for i in _axes(name, axis, a.ndim))):
            raise InvalidInputError(f"{name}: zero-size array to a reduction with no identity")
        y = _run(name, kind, a.view(np.uint8) if a.dtype.kind == "b" else a, axis, keepdims, mode, n_threads)
        return _finish(name, y.view(np.bool_) if a.dtype.kind == "b" else y, out)
    x = a.view(np.uint8) if a.dtype.kind == "b" else a
    larger = name == "max"
    if is_float_dtype(x.dtype):
        identity = x.dtype.type(-np.inf if larger else np.inf)
    else:
        info = np.iinfo(x.dtype)
        identity = x.dtype.type(info.min if larger else info.max)
    if where is not _NoValue:
        w = _where(name, where, a.shape)
        if w is not None:
            x = np.where(w, x, identity)
    y = _reduced(name, kind, x, axis, keepdims, mode, n_threads)
    init = _initial(name, initial, x.dtype)
    # one more step of the scan, initial first: a later value wins only if
    # it is strictly beyond, or NaN (any NaN wins)
    with np.errstate(invalid="ignore"):
        take = (y > init) if larger else (y < init)
        if y.dtype.kind == "f" and init == init:
            take |= y != y  # a NaN result wins over a number
    y = _canonical(np.where(take, y, init))
    return _finish(name, y.view(np.bool_) if a.dtype.kind == "b" else y, out)


def max(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue, *, mode=None,
        n_threads=None):
    """``numpy.max`` by normops' kernels: any NaN gives NaN, as in NumPy;
    ``where`` needs ``initial``, as in NumPy (docs/specification.md §16.2)."""
    return _extreme("max", "numpy.max", a, axis, out, keepdims, initial, where, mode, n_threads)


def min(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue, *, mode=None,
        n_threads=None):
    """``numpy.min`` by normops' kernels: any NaN gives NaN, as in NumPy;
    ``where`` needs ``initial``, as in NumPy (docs/specification.md §16.2)."""
    return _extreme("min", "numpy.min", a, axis, out, keepdims, initial, where, mode, n_threads)


amax = max
amin = min


# --------------------------------------------------------------- var, std

def _ddof(name, ddof, correction):
    if correction is not _NoValue:
        if not (isinstance(ddof, (int, np.integer)) and ddof == 0):
            raise InvalidInputError(f"{name}: arguments 'ddof' and 'correction' cannot both be given "
                                    f"('correction' is another name for 'ddof')")
        ddof, argument = correction, "correction"
    else:
        argument = "ddof"
    if isinstance(ddof, (bool, np.bool_, int, np.integer)):
        return int(ddof)
    if isinstance(ddof, (float, np.floating)):
        return float(ddof)
    raise InvalidInputError(f"{name}: argument {argument!r} must be a real number, not {ddof!r}")


def _rows_sums16(x, center, n_threads):
    """Sum16 of each row of the C-contiguous (rows, n) float array x, or of
    its squared deviations from center[r] (kernel row_sums16)."""
    rows, n = x.shape
    out = np.empty(rows, x.dtype)
    if n == 0:
        out[...] = 0
    elif rows:
        _isa.kernels.row_sums16(x, out, rows, n, center, n_threads)
    return out


def _variance(name, a, axis, dtype, out, ddof, keepdims, where, mean, correction, mode, n_threads, root):
    if (dtype is None and out is None and mean is _NoValue and correction is _NoValue
            and (type(ddof) is int or type(ddof) is float) and (keepdims is False or keepdims is True)
            and (where is _NoValue or type(where) is np.ndarray)):
        # the kernels' route (variance_direct): the same bits; None sends the call on
        settings = _isa.routes.direct_settings(mode, n_threads)
        if settings is not None:
            y = _isa.kernels.variance_direct(a, None if where is _NoValue else where, axis, keepdims, ddof, root,
                                             settings[0])
            if y is not None:
                return y
    a = _input(name, a)
    keepdims = _keepdims(name, keepdims)
    n_threads = resolve(name, mode, n_threads)
    ddof = _ddof(name, ddof, correction)
    if dtype is None:
        dtype = a.dtype if is_float_dtype(a.dtype) else np.dtype(np.float64)
    else:
        dtype = _dtype_argument(name, dtype)
        if not is_float_dtype(dtype):
            raise UnsupportedError(f"{name}: integer argument 'dtype'={dtype} is not served")
    work = compute_dtype(dtype)
    axes = sorted(_axes(name, axis, a.ndim))
    kept = [i for i in range(a.ndim) if i not in axes]
    perm = tuple(kept + axes)
    rows = math.prod(a.shape[i] for i in kept)
    n = math.prod(a.shape[i] for i in axes)
    out_shape = tuple(1 if i in axes else a.shape[i] for i in range(a.ndim)) if keepdims else tuple(
        a.shape[i] for i in kept)
    # docs/specification.md §16.2: the reduced axes (in increasing order) form each row, as in
    # MeanVarianceNormalization
    x = moved_axes(a.astype(dtype, copy=False), perm, work, n_threads).reshape(rows, n)
    w = None if where is _NoValue else _where(name, where, a.shape)
    with np.errstate(all="ignore"):
        if w is None and mean is _NoValue:  # the common call: the count is n for every row
            m = _rows_sums16(x, None, n_threads) / work.type(n)
            v = _rows_sums16(x, m, n_threads) / work.type(float(n - ddof if n > ddof else 0))
        else:
            v = _variance_general(name, a, x, w, mean, perm, rows, n, ddof, work, n_threads)
        if root:
            v = np.sqrt(v)
        if np.isnan(v).any():
            v = _canonical(v)
    return _finish(name, rounded_to(v, dtype).reshape(out_shape), out)


def _variance_general(name, a, x, w, mean, perm, rows, n, ddof, work, n_threads):
    """The variances of _variance with ``where`` or ``mean=`` (in T, per row)."""
    if w is not None:
        w = np.ascontiguousarray(np.transpose(w, perm)).reshape(rows, n)
        x = np.where(w, x, work.type(0))
        count = np.count_nonzero(w, axis=1).astype(np.int64)
    else:
        count = np.full(rows, n, np.int64)
    if mean is not _NoValue:  # the caller's mean, broadcast against a, in the arithmetic type
        given = _input(name, mean, "mean")
        try:
            given = np.broadcast_to(given, a.shape)
        except ValueError:
            raise InvalidInputError(f"{name}: argument 'mean' of shape {given.shape} does not broadcast "
                                    f"to input 'a' of shape {a.shape}") from None
        d = x - moved_axes(given, perm, work, n_threads).reshape(rows, n)
        if w is not None:
            d = np.where(w, d, work.type(0))
        q = _rows_sums16(np.ascontiguousarray(d), np.zeros(rows, work), n_threads)
    else:
        m = _rows_sums16(x, None, n_threads) / count.astype(work)
        d = np.where(w, x - m[:, None], work.type(0))  # a left-out element's deviation is +0
        q = _rows_sums16(d, np.zeros(rows, work), n_threads)
    return q / np.maximum(count - ddof, 0).astype(np.float64).astype(work)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NoValue, mean=_NoValue,
        correction=_NoValue, mode=None, n_threads=None):
    """``numpy.var``, exact: a two-pass variance on Sum16, the way the
    normalisations compute theirs (docs/specification.md §16.2): each
    output's elements (the reduced axes, in increasing order, row-major)
    give ``mean = Sum16(x) / n``, then ``Sum16((x - mean) * (x - mean)) /
    max(n - ddof, 0)``. Integer and bool input in float64, float16 in
    float32 rounded once; ``where``, ``mean`` and ``correction`` as in
    NumPy."""
    return _variance("var", a, axis, dtype, out, ddof, keepdims, where, mean, correction, mode, n_threads, False)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NoValue, mean=_NoValue,
        correction=_NoValue, mode=None, n_threads=None):
    """``numpy.std``: the square root of ``var`` (docs/specification.md §16.2)."""
    return _variance("std", a, axis, dtype, out, ddof, keepdims, where, mean, correction, mode, n_threads, True)


# --------------------------------------------------------------- logsumexp

def _map_into(kernel, x, n_threads):
    x = np.ascontiguousarray(x)
    y = np.empty_like(x)
    if x.size:
        kernel(x.reshape(-1), y.reshape(-1), n_threads)
    return y


def _log(x, n_threads):
    k = _isa.kernels
    return _map_into(k.log32_into if x.dtype == np.float32 else k.log64_into, x, n_threads)


def _log1p(x, n_threads):
    k = _isa.kernels
    return _map_into(k.log1p32_into if x.dtype == np.float32 else k.log1p64_into, x, n_threads)


def _exp_in_place(d, fast, n_threads):
    k = _isa.kernels
    if d.dtype == np.float32:
        (k.exp32_fast_into if fast else k.exp32_into)(d.reshape(-1), d.reshape(-1), n_threads)
    else:
        k.exp64_into(d.reshape(-1), d.reshape(-1), n_threads)
    return d


def _sums(e, O, R, C, n_threads):
    """The (O, C) sums of the O x R x C terms e in the layout's order
    (docs/specification.md §11.2, §11.4)."""
    t = np.empty((O, C), e.dtype)
    _isa.kernels.reduce_accumulate(np.ascontiguousarray(e), t, O, R, C, SUM, None, n_threads)
    return t


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, *, mode=None, n_threads=None):
    """``scipy.special.logsumexp`` for real input, exact, in SciPy's
    accurate form (docs/specification.md §16.2): with m the maximum of the
    elements whose weight is not zero, and w the sum of the weights at the
    elements equal to m (their count without ``b``), the other terms
    ``b * exp(x - m)`` are summed in the layout's order and the result is
    ``log1p(t / w) + log|w| + m``; where that is not finite, SciPy's direct
    form ``log|sum(b * exp(x))|``. ``b`` broadcasts against ``a`` (zeros
    and negative weights included); ``return_sign=True`` returns the sign
    too. Integer input in float64; float16 in float32, rounded once.
    Complex input raises UnsupportedError."""
    name = "logsumexp"
    a = _input(name, a)
    keepdims = truth_argument(name, "keepdims", keepdims)  # SciPy: any truth value
    return_sign = truth_argument(name, "return_sign", return_sign)
    fast = _config.resolve_mode(mode, name) == "fast"
    n_threads = _config.kernel_threads(n_threads, name)
    result = a.dtype
    if b is not None:
        b = _input(name, b, "b")
        try:
            result = np.result_type(a.dtype, b.dtype)
        except TypeError:
            raise InvalidInputError(f"{name}: inputs 'a' ({a.dtype}) and 'b' ({b.dtype}) have no common "
                                    f"type") from None
    if not is_float_dtype(result):  # integers and bool, as SciPy
        result = np.dtype(np.float64)
    work = compute_dtype(result)
    # SciPy takes a 0-d input (and weight) as 1-d
    a = a.reshape(1) if a.ndim == 0 else a
    shape = a.shape
    if b is not None:
        b = b.reshape(1) if b.ndim == 0 else b
        try:
            shape = np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            raise InvalidInputError(f"{name}: argument 'b' of shape {b.shape} does not broadcast against "
                                    f"input 'a' of shape {a.shape}") from None
    axes = _axes(name, axis, len(shape))
    perm, O, R, C, out_shape = arrangement(shape, axes, keepdims)
    if O * C == 0 or R == 0:  # the sum of no term: log 0, sign 0
        y = np.full(out_shape, -np.inf, work)
        sign = np.zeros(out_shape, work)
    else:
        y, sign = _logsumexp_terms(a, b, shape, perm, O, R, C, work, return_sign, fast, n_threads)
        y, sign = y.reshape(out_shape), sign.reshape(out_shape)
    y = rounded_to(_canonical(y), result)
    if not return_sign:
        return y[()] if y.ndim == 0 else y
    sign = rounded_to(_canonical(sign), result)
    return (y[()] if y.ndim == 0 else y), (sign[()] if sign.ndim == 0 else sign)


def _logsumexp_terms(a, b, shape, perm, O, R, C, work, return_sign, fast, n_threads):
    """(result, sign), each (O, C), of the non-empty arrangement (docs/specification.md §16.2)."""
    x3 = _arranged(np.broadcast_to(a, shape), perm, O, R, C, work)
    b3 = None
    if b is not None:
        b3 = _arranged(np.broadcast_to(b, shape), perm, O, R, C, work)
        zero = b3 == 0
        if zero.any():  # a zero weight leaves its term out, whatever x is
            x3 = np.where(zero, work.type(-np.inf), x3)
    k = _isa.kernels
    m = np.empty((O, C), work)
    k.reduce_accumulate(x3, m, O, R, C, MAX_NAN, None, n_threads)
    with np.errstate(all="ignore"):
        finite = np.isfinite(m)
        center = np.where(finite, m, work.type(0))
        at_max = x3 == m[:, None, :]
        if b3 is None:
            # the terms exp(x - m) of the elements below the maximum: those at it are -inf, exp gives +0
            t = np.empty((O, C), work)
            k.reduce_accumulate(np.where(at_max, work.type(-np.inf), x3), t, O, R, C,
                                SUM_EXP_FAST if fast else SUM_EXP, center, n_threads)
            w = np.count_nonzero(at_max, axis=1).astype(work)  # RN_T(count)
            r = t / w
            sign = np.sign(r + 1)
            y = (_log1p(np.where(r < -1, (-r) - 2, r), n_threads) + _log(w, n_threads)) + m
        else:
            e = _exp_in_place(x3 - center[:, None, :], fast, n_threads)
            np.multiply(e, b3, out=e)
            e[at_max] = 0
            t = _sums(e, O, R, C, n_threads)
            w = _sums(np.where(at_max, b3, work.type(0)), O, R, C, n_threads)
            r = t / w
            sign = np.sign(w) * np.sign(r + 1)
            y = (_log1p(np.where(r < -1, (-r) - 2, r), n_threads) + _log(np.abs(w), n_threads)) + m
        bad = ~np.isfinite(y)
        if bad.any():  # SciPy's rule: the direct form where the accurate one is not finite
            e = _exp_in_place(np.array(x3), fast, n_threads)
            if b3 is not None:
                np.multiply(e, b3, out=e)
            s = _sums(e, O, R, C, n_threads)
            y = np.where(bad, _log(np.abs(s), n_threads), y)
            sign = np.where(bad, np.sign(s), sign)
        if not return_sign:
            y = np.where(sign < 0, work.type(np.nan), y)
    return y, sign
