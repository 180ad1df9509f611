"""ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
ReduceL2, ReduceSumSquare, ReduceLogSum and ReduceLogSumExp, every opset.

Axes are an attribute before ReduceSum-13 / the others' opset 18 and the
optional int64 second input from then on (seed spec, "Reductions"). The
arithmetic is ``normops.reference._reduce.evaluate`` with the kernels'
accumulation (normops/_kernels/reduce.pxi).
"""
import numpy as np

from . import _config, _isa
from ._errors import InvalidInputError, UnsupportedError
from ._registry import OpDef, register
from ._validate import array_input, compute_dtype, flag_attribute, int_attribute, is_float_dtype, plain_float
from .reference import _reduce as _spec
from .reference._sum16 import canonical_nan

_INTS = tuple(np.dtype(t) for t in ("int32", "int64", "uint32", "uint64"))
_SMALL_INTS = tuple(np.dtype(t) for t in ("int8", "uint8"))

# op_type -> (since_versions, the version taking axes as an input)
_VERSIONS = {op: ((1, 11, 13, 18), 18) for op in _spec.KINDS if op.startswith("Reduce")}
_VERSIONS["ReduceSum"] = ((1, 11, 13), 13)
_VERSIONS["ReduceMax"] = _VERSIONS["ReduceMin"] = ((1, 11, 12, 13, 18, 20), 18)


class _Plan:
    __slots__ = ("kind", "X", "axes", "keepdims")


def _attributes_for(op_type):
    axes_input = _VERSIONS[op_type][1]

    def attributes(version):
        if version < axes_input:
            return {"axes": None, "keepdims": 1}
        return {"keepdims": 1, "noop_with_empty_axes": 0}
    return attributes


def _axes_values(name, argument, axes):
    """A list of ints from the attribute or the input (any integer array)."""
    if argument == "input 'axes'":
        a = array_input(name, "axes", axes)
        if a.dtype.kind not in "iu" or a.ndim > 1:
            raise InvalidInputError(
                f"{name}: input 'axes' must be a 1-D int64 tensor, got dtype {a.dtype} and shape {a.shape}")
        return [int(v) for v in a.reshape(-1)]
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, (bool, np.bool_)):
        axes = [axes]
    try:
        return [int_attribute(name, "axes", v) for v in axes]
    except TypeError:
        raise InvalidInputError(f"{name}: attribute 'axes' must be a list of integers, not {axes!r}") from None


def normalize_axes(name, argument, values, ndim, data="data"):
    """The axis set in [0, ndim): out-of-range and repeated axes refused
    (data: the input's name in the messages)."""
    seen = set()
    for v in values:
        if not -ndim <= v < ndim:
            valid = f"valid: {-ndim}..{ndim - 1}" if ndim else "it has no axes"
            raise InvalidInputError(
                f"{name}: {argument} holds axis {v}, out of range for input '{data}' of rank {ndim} ({valid})")
        a = v + ndim if v < 0 else v
        if a in seen:
            raise InvalidInputError(f"{name}: {argument} repeats axis {v} ({list(values)})")
        seen.add(a)
    return frozenset(seen)


_ALL_AXES = tuple(frozenset(range(n)) for n in range(65))  # NumPy arrays have at most 64 axes
ONE_AXIS = tuple(frozenset((n,)) for n in range(64))


def all_axes(ndim):
    """frozenset(range(ndim)), from a table."""
    return _ALL_AXES[ndim] if ndim < len(_ALL_AXES) else frozenset(range(ndim))


def check_dtype(name, dtype, version):
    """Float types, and the integer types ONNX allows (bool: not served)."""
    if is_float_dtype(dtype):
        return
    if dtype.kind == "b":
        raise UnsupportedError(f"{name}: input 'data' of dtype bool is not served")
    if dtype in _INTS or (dtype in _SMALL_INTS and name in ("ReduceMax", "ReduceMin") and version >= 12):
        return
    raise InvalidInputError(f"{name}: input 'data' has dtype {dtype}, which {name} does not take at opset {version}")


def _bind(op, version, inputs, attributes):
    name = op.op_type
    X = array_input(name, "data", inputs[0])
    check_dtype(name, X.dtype, version)
    plan = _Plan()
    plan.kind = name
    plan.X = X
    plan.keepdims = flag_attribute(name, "keepdims", attributes["keepdims"])
    if version < _VERSIONS[name][1]:
        if inputs[1] is not None:
            raise InvalidInputError(f"{name}: takes axes as an attribute at opset {version}, not as input 'axes'")
        values = None if attributes["axes"] is None else _axes_values(name, "attribute 'axes'", attributes["axes"])
        noop = 0
        argument = "attribute 'axes'"
    else:
        noop = flag_attribute(name, "noop_with_empty_axes", attributes["noop_with_empty_axes"])
        values = None if inputs[1] is None else _axes_values(name, "input 'axes'", inputs[1])
        argument = "input 'axes'"
    if not values:  # absent or empty: every axis, or none with noop_with_empty_axes
        plan.axes = frozenset() if noop else frozenset(range(X.ndim))
    else:
        plan.axes = normalize_axes(name, argument, values, X.ndim)
    return plan


#: The kernels' op for ReduceLogSumExp's terms in the fast flavour: the fast
#: exponential (float32; the one reduction whose flavours differ, and which
#: normops.reference, a model of the exact flavour, does not model).
SUM_EXP_FAST = 9


def fast_exp(kind, mode):
    """True when ``kind`` takes the fast exponential: ReduceLogSumExp in
    the fast flavour (``mode`` resolved)."""
    return mode == "fast" and kind == "ReduceLogSumExp"


def kernel_accumulate(n_threads, fast=False):
    """The kernels' accumulation, in the form ``_spec.evaluate`` takes
    (``fast``: sums of exponentials by the fast exponential)."""
    def accumulate(x3, op, center):
        if fast and op == _spec.SUM_EXP:
            op = SUM_EXP_FAST
        O, R, C = x3.shape
        out = np.empty((O, C), x3.dtype)
        _isa.kernels.reduce_accumulate(x3, out, O, R, C, op, center, n_threads)
        return out
    return accumulate


def reduce(kind, X, axes, keepdims, accumulate):
    """``kind`` of the checked array X over the axis set ``axes``."""
    if not is_float_dtype(X.dtype):
        return _spec.evaluate_integer(kind, X, axes, keepdims, accumulate)
    return _spec.evaluate(kind, X, axes, keepdims, accumulate, compute_dtype(X.dtype))


# ------------------------------------------------------------ direct route
# A call on a large array runs its Python steps from the L3 (the array's
# read has flushed L1 and L2), so each step costs several times its warm
# time. For the common case (a plain float32/float64 array, arguments of
# the usual types) the named functions check what they can by type, then
# go straight to the kernel; anything else takes the general path, which
# alone raises errors (the direct route only calls the same checks once
# everything before them is known to pass, so errors and their order do
# not change).

def has_nan(y, kernels):
    """True when the non-empty contiguous float array y holds a NaN, by the
    kernels' max with NaN winning (no NumPy ufunc on the per-call path)."""
    flag = np.empty(1, y.dtype)
    kernels.reduce_accumulate(y, flag, 1, y.size, 1, _spec.MAX_NAN, None, 1)
    v = flag[0]
    return v != v


def _moves_only_ones(shape, perm):
    """True when ``perm`` moves only extent-1 axes: x transposed by it is x's
    own data in the same order (what the general path's transpose gives)."""
    moved = [i for i in perm if shape[i] != 1]
    return moved == sorted(moved)


def direct(kind, x, axes, keepdims, n_threads, fast=False):
    """``reduce(kind, x, axes, keepdims, kernel_accumulate(n_threads, fast))`` for
    a ``plain_float`` x and a checked axis set, with the same geometry and
    steps; None when the layout needs a transposition or a reduction is
    empty (the general path then computes it)."""
    perm, O, R, C, out_shape = _spec.geometry(x.shape, axes, keepdims)
    if (perm is not None and not _moves_only_ones(x.shape, perm)) or R == 0 or O * C == 0:
        return None
    op, finishing = _spec.KINDS[kind]
    kernels = _isa.kernels
    if finishing is None and op != _spec.SUM_EXP:
        y = np.empty(out_shape, x.dtype)  # (O, C) in the output's shape
        kernels.reduce_accumulate(x, y, O, R, C, op, None, n_threads)
    else:
        x3 = x.reshape(O, R, C)
        raw, m = _spec.accumulated(x3, op, kernel_accumulate(n_threads, fast))
        y = (raw if finishing is None else _spec.finish(finishing, raw, x3, R, m)).reshape(out_shape)
    return canonical_nan(y) if has_nan(y, kernels) else y


def _direct_axes(name, axes, ndim):
    """The axis set of an ONNX ``axes`` input given as a 1-D integer ndarray
    or a list/tuple of ints in range; None for anything else. Only the
    repeated-axis error can arise, as on the general path."""
    if type(axes) is np.ndarray:
        if axes.dtype.kind not in "iu" or axes.ndim != 1:
            return None
        values = axes.tolist()
    elif type(axes) is list or type(axes) is tuple:
        for v in axes:
            if type(v) is not int or not -ndim <= v < ndim:
                return None
        values = list(axes)
    else:
        return None
    if not values:
        return all_axes(ndim)
    key = (ndim, *values)
    axis_set = _AXIS_SETS.get(key)
    if axis_set is None:  # checked once per (rank, axes); errors are never remembered
        axis_set = normalize_axes(name, "input 'axes'", values, ndim)
        if len(_AXIS_SETS) >= 1024:
            _AXIS_SETS.clear()
        _AXIS_SETS[key] = axis_set
    return axis_set


_AXIS_SETS = {}  # (rank, *axes) -> the checked axis set


def _compute(plan, mode, n_threads, all_outputs):
    return [reduce(plan.kind, plan.X, plan.axes, plan.keepdims,
                   kernel_accumulate(n_threads, fast_exp(plan.kind, mode)))]


def _reference(plan):
    return [reduce(plan.kind, plan.X, plan.axes, plan.keepdims, _spec.accumulate)]


def _try_direct(op, data, axes, keepdims, noop_with_empty_axes, opset, mode, n_threads):
    """The direct route of a call with the axes as an input (None when it
    does not apply; the general path then runs and checks everything)."""
    op_type = op.op_type
    if (plain_float(data) and type(keepdims) is int and 0 <= keepdims <= 1
            and type(noop_with_empty_axes) is int and noop_with_empty_axes == 0
            and (opset is None or (type(opset) is int and opset in op._version_cache))
            and op.version_for(opset) >= _VERSIONS[op_type][1]):
        n = _config.direct_threads(mode, n_threads, op_type)
        if n is not None:
            axis_set = all_axes(data.ndim) if axes is None else _direct_axes(op_type, axes, data.ndim)
            if axis_set is not None:
                return direct(op_type, data, axis_set, keepdims, n,
                              op_type == "ReduceLogSumExp" and fast_exp(op_type, _config.resolve_mode(mode, op_type)))
    return None


def _run_fast(op, inputs, attributes, version, mode, n_threads):
    """``normops.run`` (and ONNX sessions): the named functions' direct route."""
    if version >= _VERSIONS[op.op_type][1]:
        y = _try_direct(op, inputs[0], inputs[1], attributes["keepdims"], attributes["noop_with_empty_axes"],
                        version, mode, n_threads)
        if y is not None:
            return [y]
    return op.call(inputs, attributes, version, mode, n_threads)


def _register(op_type):
    return register(OpDef(
        op_type, versions=_VERSIONS[op_type][0], inputs=("data", "axes"), n_required=1,
        outputs=("reduced",), attributes=_attributes_for(op_type), bind=_bind, compute=_compute,
        reference=_reference, run_fast=_run_fast))


OPS = {op: _register(op) for op in _VERSIONS}


def _named(op_type, data, axes, keepdims, noop_with_empty_axes, opset, mode, n_threads, full_output):
    op = OPS[op_type]
    if full_output is False:
        y = _try_direct(op, data, axes, keepdims, noop_with_empty_axes, opset, mode, n_threads)
        if y is not None:
            return y
    version = op.version_for(opset)
    if version < _VERSIONS[op_type][1]:
        inputs = (data, None)
        attributes = {"axes": axes, "keepdims": keepdims}
        if noop_with_empty_axes:
            raise InvalidInputError(
                f"{op_type}: attribute 'noop_with_empty_axes' is not defined at opset {version}")
    else:
        if axes is not None:
            axes = np.asarray(axes)
            if axes.size == 0:  # [] is float64 to NumPy
                axes = axes.astype(np.int64)
        inputs = (data, axes)
        attributes = {"keepdims": keepdims, "noop_with_empty_axes": noop_with_empty_axes}
    outputs = op.call(inputs, attributes, opset, mode, n_threads)
    return tuple(outputs) if full_output else outputs[0]


def _make(op_type, doc):
    def function(data, axes=None, *, keepdims=1, noop_with_empty_axes=0, opset=None, mode=None,
                 n_threads=None, full_output=False):
        return _named(op_type, data, axes, keepdims, noop_with_empty_axes, opset, mode, n_threads,
                      full_output)
    snake = "reduce_" + {"L1": "l1", "L2": "l2", "SumSquare": "sum_square", "LogSum": "log_sum",
                         "LogSumExp": "log_sum_exp"}.get(op_type[6:], op_type[6:].lower())
    function.__name__ = function.__qualname__ = snake
    function.__doc__ = (
        f"ONNX {op_type} (opsets {', '.join(map(str, _VERSIONS[op_type][0]))}): {doc}\n\n"
        f"``axes`` (None: every axis, or none with ``noop_with_empty_axes=1``) is the\n"
        f"attribute before opset {_VERSIONS[op_type][1]} and the second input from it on;\n"
        f"negative axes count from the end.")
    return function


reduce_sum = _make("ReduceSum", "the sum (canonical Sum16 or sequential, by layout).")
reduce_mean = _make("ReduceMean", "the sum divided by the count.")
reduce_max = _make("ReduceMax", "the maximum of a sequential scan (NaN only when first).")
reduce_min = _make("ReduceMin", "the minimum of a sequential scan (NaN only when first).")
reduce_prod = _make("ReduceProd", "the sequential product.")
reduce_l1 = _make("ReduceL1", "the sum of absolute values.")
reduce_l2 = _make("ReduceL2", "the square root of the sum of squares.")
reduce_sum_square = _make("ReduceSumSquare", "the sum of squares.")
reduce_log_sum = _make("ReduceLogSum", "the logarithm of the sum.")
reduce_log_sum_exp = _make("ReduceLogSumExp", "m + log(sum(exp(x - m))), m the maximum.")

__all__ = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_l1",
           "reduce_l2", "reduce_sum_square", "reduce_log_sum", "reduce_log_sum_exp"]


def resolve(name, mode, n_threads):
    """The mode check and thread count of a call (NumPy-style functions)."""
    _config.resolve_mode(mode, name)
    return _config.kernel_threads(n_threads, name)
