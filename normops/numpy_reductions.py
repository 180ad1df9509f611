"""NumPy-style reductions (``normops.sum``, ``mean``, ``max``/``amax``,
``min``/``amin``, ``prod``) and SciPy's ``logsumexp``, computed by the
Reduce* kernels in their exact order.

Signatures, defaults and result dtypes are NumPy's (SciPy's for
``logsumexp``). Arguments normops does not serve (``where=``, ``initial=``,
``b=``, ``return_sign=True``, complex input) raise ``UnsupportedError``;
they are never ignored. ``max`` and ``min`` follow NumPy: any NaN gives
NaN (the ONNX operators follow the scan rule of docs/specification.md §11.6
instead).
"""
import operator

import numpy as np

from . import _config, _isa
from ._errors import InvalidInputError, UnsupportedError
from ._validate import array_input, is_float_dtype, truth_argument, zero_d_axis
from .reduction import KINDS, ONE_AXIS, accumulation_for, all_axes, normalize_axes, reduce, resolve


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
    if ndim == 0 and name != "mean" and not isinstance(axis, tuple):
        # (numpy.mean refuses it: it counts the elements along the axis)
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
        settings = _isa.kernels.direct_settings(mode, n_threads)
        if settings is not None:
            return _isa.kernels.reduce_direct(a, axis, keepdims, accumulation_for(kind, mode),
                                              KINDS[kind][1], settings[0], False, True)
    return None


def _refuse(name, **arguments):
    for argument, value in arguments.items():
        if value is not _NoValue:
            raise UnsupportedError(f"{name}: argument {argument!r} is not served")


def _input(name, a):
    a = array_input(name, "a", a)
    if a.dtype.kind == "c":
        raise UnsupportedError(f"{name}: complex input 'a' ({a.dtype}) is not served")
    if not (is_float_dtype(a.dtype) or a.dtype.kind in "iub"):
        raise UnsupportedError(f"{name}: input 'a' of dtype {a.dtype} is not served")
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


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue, *,
        mode=None, n_threads=None):
    """``numpy.sum`` by normops' kernels: the canonical Sum16 in the row
    layout, sequential per output in the column layout (see ReduceSum)."""
    if dtype is None and out is None and initial is _NoValue and where is _NoValue:
        y = _direct("sum", "ReduceSum", a, axis, keepdims, mode, n_threads)
        if y is not None:
            return y
    _refuse("sum", initial=initial, where=where)
    a = _input("sum", a)
    dtype = _default_sum_dtype(a.dtype) if dtype is None else _dtype_argument("sum", dtype)
    return _finish("sum", _run("sum", "ReduceSum", a.astype(dtype, copy=False), axis, keepdims, mode,
                               n_threads), out)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue, *,
         mode=None, n_threads=None):
    """``numpy.prod`` by normops' kernels (sequential products)."""
    if dtype is None and out is None and initial is _NoValue and where is _NoValue:
        y = _direct("prod", "ReduceProd", a, axis, keepdims, mode, n_threads)
        if y is not None:
            return y
    _refuse("prod", initial=initial, where=where)
    a = _input("prod", a)
    dtype = _default_sum_dtype(a.dtype) if dtype is None else _dtype_argument("prod", dtype)
    return _finish("prod", _run("prod", "ReduceProd", a.astype(dtype, copy=False), axis, keepdims, mode,
                                n_threads), out)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=_NoValue, mode=None, n_threads=None):
    """``numpy.mean`` by normops' kernels: the sum divided by the count.
    Integer and bool input is computed in float64, as NumPy does; float16
    in float32 and rounded once."""
    if dtype is None and out is None and where is _NoValue:
        y = _direct("mean", "ReduceMean", a, axis, keepdims, mode, n_threads)
        if y is not None:
            return y
    _refuse("mean", where=where)
    a = _input("mean", a)
    if dtype is None:
        dtype = a.dtype if is_float_dtype(a.dtype) else np.dtype(np.float64)
    else:
        dtype = _dtype_argument("mean", dtype)
        if not is_float_dtype(dtype):
            raise UnsupportedError(f"mean: integer argument 'dtype'={dtype} is not served")
    y = _run("mean", "ReduceMean", a.astype(dtype, copy=False), axis, keepdims, mode, n_threads)
    if a.size == 0 and y.size:  # NumPy: the mean of nothing is NaN (ReduceMean gives 0)
        y = np.full_like(y, np.nan)
    return _finish("mean", y, out)


def _extreme(name, kind, a, axis, out, keepdims, initial, where, mode, n_threads):
    if out is None and initial is _NoValue and where is _NoValue:
        y = _direct(name, kind, a, axis, keepdims, mode, n_threads)
        if y is not None:
            return y
    _refuse(name, initial=initial, where=where)
    a = _input(name, a)
    if a.size == 0 and (axis is None or any(a.shape[i] == 0 for i in _axes(name, axis, a.ndim))):
        raise InvalidInputError(f"{name}: zero-size array to a reduction with no identity")
    y = _run(name, kind, a.view(np.uint8) if a.dtype.kind == "b" else a, axis, keepdims, mode, n_threads)
    return _finish(name, y.view(np.bool_) if a.dtype.kind == "b" else y, out)


def max(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue, *, mode=None,
        n_threads=None):
    """``numpy.max`` by normops' kernels: any NaN gives NaN, as in NumPy."""
    return _extreme("max", "numpy.max", a, axis, out, keepdims, initial, where, mode, n_threads)


def min(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue, *, mode=None,
        n_threads=None):
    """``numpy.min`` by normops' kernels: any NaN gives NaN, as in NumPy."""
    return _extreme("min", "numpy.min", a, axis, out, keepdims, initial, where, mode, n_threads)


amax = max
amin = min


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, *, mode=None, n_threads=None):
    """``scipy.special.logsumexp`` by the ReduceLogSumExp kernels:
    m + log(sum(exp(x - m))), m the maximum (NaN if any element is NaN;
    an infinite m is the result). Integer input is computed in float64.
    ``b`` and ``return_sign=True`` are not served."""
    if (a.ndim if type(a) is np.ndarray else np.ndim(a)) == 0:
        # SciPy takes a 0-d input as 1-d: keepdims, or axis=(), keeps that axis
        y = _logsumexp(a, axis, b, keepdims, return_sign, mode, n_threads)
        if (isinstance(axis, tuple) and not axis) or truth_argument("logsumexp", "keepdims", keepdims):
            return np.reshape(y, (1,))
        return y
    return _logsumexp(a, axis, b, keepdims, return_sign, mode, n_threads)


def _logsumexp(a, axis, b, keepdims, return_sign, mode, n_threads):
    if b is None and return_sign is False:
        y = _direct("logsumexp", "ReduceLogSumExp", a, axis, keepdims, mode, n_threads)
        if y is not None:
            return y
    if b is not None:
        raise UnsupportedError("logsumexp: argument 'b' (scale factors) is not served")
    if return_sign:
        raise UnsupportedError("logsumexp: argument 'return_sign=True' is not served")
    a = _input("logsumexp", a)
    if not is_float_dtype(a.dtype):
        a = a.astype(np.float64)
    keepdims = truth_argument("logsumexp", "keepdims", keepdims)  # SciPy: any truth value
    return _finish("logsumexp", _run("logsumexp", "ReduceLogSumExp", a, axis, keepdims, mode, n_threads),
                   None)
