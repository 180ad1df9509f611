"""ArgMax and ArgMin (opsets 1, 11, 12, 13) and the NumPy-style
``argmax`` / ``argmin``.

The rule is a sequential scan from index 0: a later element wins when it is
strictly better (or better or equal with ``select_last_index``); NaN never
wins unless it is the first element (docs/specification.md §12). The
NumPy-style functions keep NumPy's own NaN rule instead: the first NaN wins.
The input is seen as outer x n x inner, n being the extent of the axis.
"""
import numpy as np

from . import _config, _isa
from ._errors import InvalidInputError, UnsupportedError
from ._registry import OpDef, register
from ._validate import (
    array_input, at_least_rank, axis_attribute, contiguous, flag_attribute, product, truth_argument, zero_d_axis,
)

_FLOAT32 = np.dtype(np.float32)
_INT64 = np.dtype(np.int64)
_INTP = np.dtype(np.intp)


def kernel_dtype(dtype):
    """The dtype the kernel scans: float16/bfloat16 widened exactly to
    float32 (the comparisons are the same); others as they are. None when
    the kernel has no such type."""
    if dtype.kind == "f" and dtype.itemsize in (4, 8):
        return dtype
    if (dtype.kind == "f" and dtype.itemsize == 2) or dtype.name == "bfloat16":
        return _FLOAT32
    if dtype.kind in "iu" and dtype.itemsize in (1, 2, 4, 8):
        return dtype
    return None


def geometry(shape, axis):
    """(outer, n, inner) of ``shape`` around ``axis``."""
    return product(shape[:axis]), shape[axis], product(shape[axis + 1:])


def reduced_shape(shape, axis, keepdims):
    shape = list(shape)
    if keepdims:
        shape[axis] = 1
    else:
        del shape[axis]
    return tuple(shape)


def run_kernel(x, shape, axis, is_min, last, find_nan, n_threads):
    """Indices (int64, outer x inner) of the scan of ``x`` along ``axis``."""
    outer, n, inner = geometry(shape, axis)
    x = contiguous(x, kernel_dtype(x.dtype))
    out = np.empty(outer * inner, _INT64)
    if out.size:
        _isa.kernels.arg_reduce(x, out, outer, n, inner, is_min, last, find_nan, n_threads)
    return out


# ------------------------------------------------------------------ ONNX

class _Plan:
    __slots__ = ("op", "X", "axis", "keepdims", "last", "is_min")


def _bind(op, version, inputs, attributes):
    name = op.op_type
    X = array_input(name, "data", inputs[0])
    if X.dtype.kind == "b":
        raise UnsupportedError(f"{name}: input 'data' is bool, which {name} does not take (not served)")
    if kernel_dtype(X.dtype) is None or (X.dtype.name == "bfloat16" and version < 13):
        raise InvalidInputError(
            f"{name}: input 'data' has dtype {X.dtype}; {name}-{version} takes float16, float32, float64, "
            f"{'bfloat16, ' if version >= 13 else ''}int8..int64 or uint8..uint64")
    at_least_rank(name, "data", X, 1)
    plan = _Plan()
    plan.op = op
    plan.X = X
    plan.axis = axis_attribute(name, "axis", attributes["axis"], X.ndim, "data")
    plan.keepdims = flag_attribute(name, "keepdims", attributes["keepdims"])
    plan.last = flag_attribute(name, "select_last_index", attributes.get("select_last_index", 0))
    plan.is_min = name == "ArgMin"
    return plan


def _compute(plan, mode, n_threads, all_outputs):
    out = run_kernel(plan.X, plan.X.shape, plan.axis, plan.is_min, plan.last, False, n_threads)
    return [out.reshape(reduced_shape(plan.X.shape, plan.axis, plan.keepdims))]


def _reference(plan):
    from .reference import _arg_reduce as _reference_arg_reduce  # the executable specification, for reference.run only

    out = _reference_arg_reduce.arg_reduce(plan.X, plan.axis, plan.is_min, plan.last, nan_wins=False)
    return [out.reshape(reduced_shape(plan.X.shape, plan.axis, plan.keepdims))]


def _attributes(version):
    attrs = {"axis": 0, "keepdims": 1}
    if version >= 12:
        attrs["select_last_index"] = 0
    return attrs


def _plain_attributes(axis, keepdims, last):
    """axis an int, keepdims and select_last_index 0 or 1 as ints: what the
    direct routes take as they are (select_last_index 1 from opset 12 only:
    the caller checks the version)."""
    return (type(axis) is int and type(keepdims) is int and 0 <= keepdims <= 1 and type(last) is int
            and 0 <= last <= 1)


def _try_direct(op, data, axis, keepdims, select_last_index, opset, mode, n_threads):
    """The direct route (the kernels' ``arg_direct``; None when it does not
    apply: the general path then runs and checks everything)."""
    if ((opset is None or (type(opset) is int and opset in op._version_cache))
            and _plain_attributes(axis, keepdims, select_last_index)
            and (select_last_index == 0 or op.version_for(opset) >= 12)):
        settings = _isa.routes.direct_settings(mode, n_threads)
        if settings is not None:
            return _isa.kernels.arg_direct(data, axis, keepdims, op is ARG_MIN, select_last_index, False,
                                           settings[0], False)
    return None


def _direct(op, version, attributes, n_declared):
    """The straight call of the kernel for these attributes (OpDef's
    direct): the named functions' direct route with the attributes fixed."""
    axis, keepdims, last = attributes["axis"], attributes["keepdims"], attributes.get("select_last_index", 0)
    if not (_plain_attributes(axis, keepdims, last) and (last == 0 or version >= 12)):
        return None
    is_min = op is ARG_MIN

    def direct(kernels, threads, fast, data):
        y = kernels.arg_direct(data, axis, keepdims, is_min, last, False, threads, False)
        return None if y is None else (y,)

    return direct


def _register(op_type):
    return register(OpDef(
        op_type, versions=(1, 11, 12, 13), inputs=("data",), n_required=1, outputs=("reduced",),
        attributes=_attributes, bind=_bind, compute=_compute, reference=_reference, direct=_direct))


ARG_MAX = _register("ArgMax")
ARG_MIN = _register("ArgMin")


def _named(op, data, axis, keepdims, select_last_index, opset, mode, n_threads, full_output):
    if (opset is None and mode is None and n_threads is None and full_output is False  # every default
            and type(axis) is int and type(keepdims) is int and 0 <= keepdims <= 1
            and type(select_last_index) is int and 0 <= select_last_index <= 1):
        y = _isa.kernels.arg_direct(data, axis, keepdims, op is ARG_MIN, select_last_index, False,
                                    _config.kernel_threads(None, op.op_type), False)
        if y is not None:
            return y
    elif full_output is False:
        y = _try_direct(op, data, axis, keepdims, select_last_index, opset, mode, n_threads)
        if y is not None:
            return y
    attributes = {"axis": axis, "keepdims": keepdims}
    if op.version_for(opset) >= 12 or select_last_index != 0:  # refused before opset 12
        attributes["select_last_index"] = select_last_index
    outputs = op.call((data,), op.fill_attributes(op.version_for(opset), attributes),
                      opset, mode, n_threads, full_output)
    return tuple(outputs) if full_output else outputs[0]


def arg_max(data, *, axis=0, keepdims=1, select_last_index=0, opset=None, mode=None, n_threads=None,
            full_output=False):
    """ONNX ArgMax (opsets 1, 11, 12, 13): int64 index of the first maximum
    along ``axis`` (the last one with ``select_last_index=1``, from opset
    12). NaN never wins unless it is the first element. Both flavours give
    the same result. NumPy's ``argmax`` is ``normops.argmax``."""
    return _named(ARG_MAX, data, axis, keepdims, select_last_index, opset, mode, n_threads, full_output)


def arg_min(data, *, axis=0, keepdims=1, select_last_index=0, opset=None, mode=None, n_threads=None,
            full_output=False):
    """ONNX ArgMin (opsets 1, 11, 12, 13); see ``arg_max``."""
    return _named(ARG_MIN, data, axis, keepdims, select_last_index, opset, mode, n_threads, full_output)


# ----------------------------------------------------------- NumPy style

def _numpy_style(name, a, axis, out, keepdims, is_min, n_threads):
    if out is None and _INTP is _INT64 and (keepdims is False or keepdims is True):
        settings = _isa.routes.direct_settings(None, n_threads)
        if settings is not None:  # the direct route (None: not applicable)
            index = _isa.kernels.arg_direct(a, axis, keepdims, is_min, False, True, settings[0], True)
            if index is not None:
                return index
    a = array_input(name, "a", a)
    if a.dtype.kind == "b":
        a = a.view(np.uint8)  # False < True, as NumPy compares them
    if kernel_dtype(a.dtype) is None:
        raise UnsupportedError(f"{name}: input 'a' has dtype {a.dtype}, which normops does not serve "
                               f"(floating, integer and bool arrays only)")
    # any truth value; NumPy's "not given" marker is the default
    keepdims = False if keepdims is np._NoValue else truth_argument(name, "keepdims", keepdims)
    n_threads = _config.kernel_threads(n_threads, name)
    ndim = a.ndim
    if axis is None or ndim == 0:
        if axis is not None:
            zero_d_axis(name, axis, "a")
        flat = a.reshape(-1)
        shape = (1,) * ndim if keepdims else ()
        if flat.size == 0:
            raise InvalidInputError(f"{name}: attempt to get {name} of an empty sequence")
        index = run_kernel(flat, flat.shape, 0, is_min, False, True, n_threads)
        result = index.reshape(shape).astype(_INTP, copy=False)
        result = result if shape else _INTP.type(result[()])
    else:
        axis = axis_attribute(name, "axis", axis, ndim, "a")
        if a.shape[axis] == 0:
            raise InvalidInputError(f"{name}: attempt to get {name} of an empty sequence")
        index = run_kernel(a, a.shape, axis, is_min, False, True, n_threads)
        result = index.reshape(reduced_shape(a.shape, axis, keepdims)).astype(_INTP, copy=False)
        result = result if result.ndim else _INTP.type(result[()])
    if out is None:
        return result
    if not isinstance(out, np.ndarray) or out.dtype != _INTP or out.shape != np.shape(result):
        raise InvalidInputError(f"{name}: argument 'out' must be an ndarray of dtype {_INTP} and shape "
                                f"{np.shape(result)}")
    out[...] = result
    return out


def argmax(a, axis=None, out=None, *, keepdims=False, n_threads=None):
    """``numpy.argmax``: indices of the maxima along ``axis`` (None: of the
    flattened array), as intp. Ties give the first index; a NaN wins as in
    NumPy (the first NaN), unlike ONNX ArgMax (``normops.ops.arg_max``),
    where NaN never wins unless it is first. float16/bfloat16 are compared
    exactly as float32; bool as False < True."""
    return _numpy_style("argmax", a, axis, out, keepdims, False, n_threads)


def argmin(a, axis=None, out=None, *, keepdims=False, n_threads=None):
    """``numpy.argmin``; see ``argmax`` (the first NaN wins here too)."""
    return _numpy_style("argmin", a, axis, out, keepdims, True, n_threads)
