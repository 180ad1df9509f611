"""CumSum (opsets 11, 14), CumProd (opset 26) and the NumPy-style
``cumsum`` and ``cumprod``.

Each line along the axis is summed (CumSum) or multiplied (CumProd, the
same machinery) sequentially in the direction of accumulation
(docs/specification.md §13): inclusive ``y[0] = x[0]``,
``y[i] = y[i-1] op x[i]``; exclusive ``y[0]`` = 0 (sum) or 1 (product),
``y[i] = y[i-1] op x[i-1]``; ``reverse`` runs from the last element.
Integers wrap around (modulo 2^k); float16 and bfloat16 are widened exactly
to float32, accumulated in float32 and each output rounded once
(§4.2). Every NaN result is the canonical quiet NaN.
"""
import numpy as np

from . import _config, _isa
from ._errors import InvalidInputError, UnsupportedError
from ._registry import OpDef, register
from ._validate import (
    array_input, at_least_rank, axis_attribute, axis_in_range, contiguous, flag_attribute, rounded_to, zero_d_axis,
)
from .arg_reduce import geometry

_FLOAT32 = np.dtype(np.float32)
#: signed integers are summed as their unsigned view (the same bits mod 2^k)
_UNSIGNED = {np.dtype(np.int32): np.dtype(np.uint32), np.dtype(np.int64): np.dtype(np.uint64)}


def _kernel_dtype(dtype):
    """(arithmetic dtype, view the kernel gets) or None when not computed."""
    if dtype.kind == "f" and dtype.itemsize in (4, 8):
        return dtype, dtype
    if (dtype.kind == "f" and dtype.itemsize == 2) or dtype.name == "bfloat16":
        return _FLOAT32, _FLOAT32
    if dtype.kind in "iu" and dtype.itemsize in (4, 8):
        return dtype, _UNSIGNED.get(dtype, dtype)
    return None


def run_kernel(x, axis, exclusive, reverse, n_threads, multiply=False):
    """The cumulative sum (product when ``multiply``) of ``x`` (a served
    dtype) along ``axis``, in x's dtype (float16/bfloat16 rounded once from
    float32)."""
    arithmetic, view = _kernel_dtype(x.dtype)
    outer, n, inner = geometry(x.shape, axis)
    xk = contiguous(x, arithmetic).view(view)
    y = np.empty(x.shape, view)
    if y.size:
        _isa.kernels.cumulate(xk, y, outer, n, inner, multiply, exclusive, reverse, n_threads)
    return rounded_to(y.view(arithmetic), x.dtype)


# ------------------------------------------------------------------ ONNX

class _Plan:
    __slots__ = ("X", "axis", "exclusive", "reverse", "multiply")


def _axis_input(name, value, ndim):
    axis = array_input(name, "axis", value)
    if axis.dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise InvalidInputError(f"{name}: input 'axis' has dtype {axis.dtype}; it must be int32 or int64")
    if axis.ndim > 1 or axis.size != 1:
        raise InvalidInputError(
            f"{name}: input 'axis' must be a 0-d (or one-element) tensor, got shape {axis.shape}")
    return axis_in_range(name, "input 'axis'", int(axis.reshape(-1)[0]), ndim, "x")


def _bind(op, version, inputs, attributes):
    name = op.op_type
    X = array_input(name, "x", inputs[0])
    if X.dtype.kind == "b":
        raise UnsupportedError(f"{name}: input 'x' is bool, which {name} does not take (not served)")
    narrow = X.dtype.kind == "f" and X.dtype.itemsize == 2 or X.dtype.name == "bfloat16"
    if _kernel_dtype(X.dtype) is None or (narrow and version < 14):
        raise InvalidInputError(
            f"{name}: input 'x' has dtype {X.dtype}; {name}-{version} takes float32, float64, "
            f"{'float16, bfloat16, ' if version >= 14 else ''}int32, int64, uint32 or uint64"
            + ("" if version >= 14 or not narrow else " (float16 and bfloat16 from opset 14)"))
    at_least_rank(name, "x", X, 1)
    plan = _Plan()
    plan.X = X
    plan.axis = _axis_input(name, inputs[1], X.ndim)
    plan.exclusive = flag_attribute(name, "exclusive", attributes["exclusive"])
    plan.reverse = flag_attribute(name, "reverse", attributes["reverse"])
    plan.multiply = name == "CumProd"
    return plan


def _compute(plan, mode, n_threads, all_outputs):
    return [run_kernel(plan.X, plan.axis, plan.exclusive, plan.reverse, n_threads, plan.multiply)]


def _reference(plan):
    from .reference import _cumulative as _reference_cumulative  # the executable specification, for reference.run only

    op = np.multiply if plan.multiply else np.add
    return [_reference_cumulative.cumulate(plan.X, plan.axis, plan.exclusive, plan.reverse, op)]


def _plain_flags(exclusive, reverse):
    """Both flags 0 or 1 as ints: what the direct routes take as they are."""
    return type(exclusive) is int and 0 <= exclusive <= 1 and type(reverse) is int and 0 <= reverse <= 1


def _direct(op, version, attributes, n_declared):
    """The straight call of the kernel for these attributes (OpDef's
    direct): the named functions' direct route with the flags fixed."""
    exclusive, reverse = attributes["exclusive"], attributes["reverse"]
    if not _plain_flags(exclusive, reverse):
        return None
    multiply = op is CUM_PROD

    def direct(kernels, threads, fast, x, axis):
        y = kernels.cum_direct(x, axis, exclusive, reverse, multiply, threads)
        return None if y is None else (y,)

    return direct


CUM_SUM = register(OpDef(
    "CumSum", versions=(11, 14), inputs=("x", "axis"), n_required=2, outputs=("y",),
    attributes={"exclusive": 0, "reverse": 0}, bind=_bind, compute=_compute, reference=_reference,
    direct=_direct))


def cum_sum(x, axis, *, exclusive=0, reverse=0, opset=None, mode=None, n_threads=None, full_output=False):
    """ONNX CumSum (opsets 11, 14): the cumulative sum of ``x`` along
    ``axis`` (an int32/int64 0-d tensor, or a Python int), sequential in the
    direction of accumulation. Both flavours give the same bits."""
    y = None if full_output else _isa.routes.cum_named(x, axis, exclusive, reverse, False, opset, mode, n_threads)
    if y is not None:
        return y
    outputs = CUM_SUM.call((x, axis), {"exclusive": exclusive, "reverse": reverse},
                           opset, mode, n_threads, full_output)
    return tuple(outputs) if full_output else outputs[0]


CUM_PROD = register(OpDef(
    "CumProd", versions=(26,), inputs=("x", "axis"), n_required=2, outputs=("y",),
    attributes={"exclusive": 0, "reverse": 0}, bind=_bind, compute=_compute, reference=_reference,
    direct=_direct))


def cum_prod(x, axis, *, exclusive=0, reverse=0, opset=None, mode=None, n_threads=None, full_output=False):
    """ONNX CumProd (opset 26): the cumulative product of ``x`` along
    ``axis`` (an int32/int64 0-d tensor, or a Python int), sequential in the
    direction of accumulation; an exclusive product starts with 1. Integers
    wrap around. Both flavours give the same bits."""
    y = None if full_output else _isa.routes.cum_named(x, axis, exclusive, reverse, True, opset, mode, n_threads)
    if y is not None:
        return y
    outputs = CUM_PROD.call((x, axis), {"exclusive": exclusive, "reverse": reverse},
                            opset, mode, n_threads, full_output)
    return tuple(outputs) if full_output else outputs[0]


# ----------------------------------------------------------- NumPy style

def _numpy_dtype(name, a_dtype, dtype):
    """NumPy's accumulation dtype: ``dtype`` when given; otherwise bool and
    signed integers narrower than 64 bits give int64, unsigned ones uint64,
    the others keep their dtype."""
    if dtype is None:
        if a_dtype.kind == "b" or (a_dtype.kind == "i" and a_dtype.itemsize < 8):
            return np.dtype(np.int64)
        if a_dtype.kind == "u" and a_dtype.itemsize < 8:
            return np.dtype(np.uint64)
        dtype = a_dtype
    try:
        dtype = np.dtype(dtype)
    except TypeError as exc:
        raise InvalidInputError(f"{name}: argument 'dtype' is not a dtype: {exc}") from None
    if dtype.kind in "iu" or (dtype.kind == "f" and dtype.itemsize in (2, 4, 8)) or dtype.name == "bfloat16":
        return dtype
    raise UnsupportedError(f"{name}: dtype {dtype} is not served (floating and integer types only)")


def _numpy_cumulative(name, a, axis, dtype, out, n_threads, multiply):
    """``numpy.cumsum`` / ``numpy.cumprod`` (``multiply``) on the kernels."""
    a = array_input(name, "a", a)
    if not (a.dtype.kind in "biu" or _kernel_dtype(a.dtype) is not None):
        raise UnsupportedError(f"{name}: input 'a' has dtype {a.dtype}, which normops does not serve "
                               f"(floating, integer and bool arrays only)")
    given = dtype
    dtype = _numpy_dtype(name, a.dtype, dtype)
    if given is None and isinstance(out, np.ndarray) and out.dtype != dtype:
        # NumPy accumulates in the common type of its default and out's
        # dtype (float64 input into an int64 out adds in float64), then casts
        try:
            common = np.result_type(dtype, out.dtype)
        except TypeError:  # e.g. types without a promotion rule
            common = out.dtype
        dtype = _numpy_dtype(name, a.dtype, common)
    n_threads = _config.kernel_threads(n_threads, name)
    if axis is None or a.ndim == 0:
        if axis is not None:
            zero_d_axis(name, axis, "a")
        a, axis = a.reshape(-1), 0
    else:
        axis = axis_attribute(name, "axis", axis, a.ndim, "a")
    # narrow integers wrap the same way when summed or multiplied in 64 bits
    # and cast back (2^k divides 2^64)
    work = dtype if _kernel_dtype(dtype) is not None else np.dtype(np.int64 if dtype.kind == "i" else np.uint64)
    with np.errstate(invalid="ignore", over="ignore"):
        x = a.astype(work, copy=False)
    y = run_kernel(x, axis, False, False, n_threads, multiply)
    if work != dtype:
        y = y.astype(dtype)
    if out is None:
        return y
    if not isinstance(out, np.ndarray) or out.shape != y.shape:
        raise InvalidInputError(f"{name}: argument 'out' must be an ndarray of shape {y.shape}")
    out[...] = y
    return out


def _numpy_direct(name, a, axis, dtype, out, n_threads, multiply):
    """The direct route of ``cumsum``/``cumprod`` (None: not applicable)."""
    if dtype is None and out is None and (axis is None or type(axis) is int):
        settings = _isa.routes.direct_settings(None, n_threads)
        if settings is not None:
            return _isa.kernels.cum_direct(a, axis, False, False, multiply, settings[0])
    return None


def cumsum(a, axis=None, dtype=None, out=None, *, n_threads=None):
    """``numpy.cumsum``: the cumulative sum along ``axis`` (None: of the
    flattened array), with NumPy's result dtype (bool and small integers
    give int64 / uint64; ``dtype`` when given; with ``out`` and no
    ``dtype``, the sums run in the common type of that default and
    ``out``'s dtype and are cast into ``out``, as in NumPy). Floats
    are added sequentially like NumPy, so float32/float64 results equal
    NumPy's; float16/bfloat16 keep a float32 running sum and round each
    output once (NumPy rounds every partial sum to float16). Integer sums
    wrap around. Complex, object and other dtypes raise UnsupportedError."""
    y = _numpy_direct("cumsum", a, axis, dtype, out, n_threads, False)
    return _numpy_cumulative("cumsum", a, axis, dtype, out, n_threads, False) if y is None else y


def cumprod(a, axis=None, dtype=None, out=None, *, n_threads=None):
    """``numpy.cumprod``: the cumulative product along ``axis`` (None: of
    the flattened array), with NumPy's result dtype and its rule for
    ``dtype`` and ``out`` (see ``cumsum``). Floats
    are multiplied sequentially like NumPy, so float32/float64 results equal
    NumPy's (NaN payloads aside); float16/bfloat16 keep a float32 running
    product and round each output once (NumPy rounds every partial product
    to float16). Integer products wrap around. Complex, object and other
    dtypes raise UnsupportedError."""
    y = _numpy_direct("cumprod", a, axis, dtype, out, n_threads, True)
    return _numpy_cumulative("cumprod", a, axis, dtype, out, n_threads, True) if y is None else y
