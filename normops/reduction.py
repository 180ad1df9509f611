"""ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
ReduceL2, ReduceSumSquare, ReduceLogSum and ReduceLogSumExp, every opset.

Axes are an attribute before ReduceSum-13 / the others' opset 18 and the
optional int64 second input from then on (docs/specification.md §11.1). The
float arithmetic, accumulation and finishing step, is the kernels'
(normops/_kernels/reduction.pxi, ``reduce_finish``); this module lays the data
out as docs/specification.md §11.2 says, and finishes the integer reductions.
normops/reference/_reduction.py is the independent executable specification
the tests compare with.
"""
import numpy as np

from . import _config, _isa
from ._errors import InvalidInputError, UnsupportedError
from ._registry import OpDef, register
from ._validate import (
    array_input, compute_dtype, contiguous, flag_attribute, int_attribute, is_float_dtype, rounded_to,
)

_INTS = tuple(np.dtype(t) for t in ("int32", "int64", "uint32", "uint64"))
_SMALL_INTS = tuple(np.dtype(t) for t in ("int8", "uint8"))
_FLOAT64 = np.dtype(np.float64)

# The kernels' accumulations and finishing steps (their numbers: kernel_codes.h).
SUM, SUM_ABS, SUM_SQUARE, SUM_EXP, PROD, MAX, MIN, MAX_NAN, MIN_NAN, SUM_EXP_FAST = (
    _isa.routes.REDUCE_OPS[name] for name in (
        "SUM", "SUM_ABS", "SUM_SQUARE", "SUM_EXP", "PROD", "MAX", "MIN", "MAX_NAN", "MIN_NAN", "SUM_EXP_FAST"))
FINISH_NONE, FINISH_MEAN, FINISH_SQRT, FINISH_LOG, FINISH_LOGSUMEXP, FINISH_NAN_FIRST = (
    _isa.routes.FINISHING_STEPS[name] for name in ("NONE", "MEAN", "SQRT", "LOG", "LOGSUMEXP", "NAN_FIRST"))

#: kind -> (accumulation, finishing): the ONNX operators, and NumPy's max
#: and min (any NaN wins; the ONNX ones scan past NaN unless it is first).
KINDS = {
    "ReduceSum": (SUM, FINISH_NONE), "ReduceMean": (SUM, FINISH_MEAN), "ReduceL1": (SUM_ABS, FINISH_NONE),
    "ReduceL2": (SUM_SQUARE, FINISH_SQRT), "ReduceSumSquare": (SUM_SQUARE, FINISH_NONE),
    "ReduceLogSum": (SUM, FINISH_LOG), "ReduceLogSumExp": (SUM_EXP, FINISH_LOGSUMEXP),
    "ReduceProd": (PROD, FINISH_NONE), "ReduceMax": (MAX, FINISH_NAN_FIRST), "ReduceMin": (MIN, FINISH_NAN_FIRST),
    "numpy.max": (MAX_NAN, FINISH_NONE), "numpy.min": (MIN_NAN, FINISH_NONE),
}

# SUM_EXP_FAST: ReduceLogSumExp's terms by the fast exponential, the one
# reduction whose flavours differ (float32 work; float64 has one exponential).


def fast_accumulation(op):
    """The fast flavour's accumulation for the exact one ``op`` (they differ
    only for the sum of exponentials)."""
    return SUM_EXP_FAST if op == SUM_EXP else op


def accumulation_for(kind, mode):
    """The kernels' accumulation of ``kind`` in the flavour ``mode`` (None:
    the configured one; already checked)."""
    op = KINDS[kind][0]
    fast = fast_accumulation(op)
    if fast != op and _config.resolve_mode(mode, kind) == "fast":
        return fast
    return op


# op_type -> (since_versions, the version taking axes as an input)
_VERSIONS = {op: ((1, 11, 13, 18), 18) for op in KINDS if op.startswith("Reduce")}
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


# ------------------------------------------------------------------ layout

def _arrangement(shape, axes, keepdims):
    """``(perm, O, R, C, out_shape)`` of a reduction of ``shape`` over the
    axis set ``axes`` (docs/specification.md §11.2): extent-1 axes go first
    and count for nothing; the kept axes after the last reduced one stay
    last, side by side (C, the column layout when C > 1); the other kept
    axes (O) come before the reduced ones (R), each group in its order.
    The data transposed by perm is then O x R x C, every output's terms in
    row-major order along R. perm is None when it is the identity."""
    ones = [i for i, n in enumerate(shape) if n == 1]
    rest = [i for i, n in enumerate(shape) if n != 1]
    inner = []
    while rest and rest[-1] not in axes:
        inner.insert(0, rest.pop())
    outer = [i for i in rest if i not in axes]
    reduced = [i for i in rest if i in axes]
    perm = tuple(ones + outer + reduced + inner)
    O, R, C = (int(np.prod([shape[i] for i in group], dtype=np.int64)) for group in (outer, reduced, inner))
    if keepdims:
        out_shape = tuple(1 if i in axes else n for i, n in enumerate(shape))
    else:
        out_shape = tuple(n for i, n in enumerate(shape) if i not in axes)
    return (None if perm == tuple(range(len(shape))) else perm), O, R, C, out_shape


_ARRANGEMENTS = {}


def arrangement(shape, axes, keepdims):
    """``_arrangement``, remembered per (shape, axes, keepdims)."""
    key = (shape, axes, keepdims)
    found = _ARRANGEMENTS.get(key)
    if found is None:
        found = _arrangement(shape, axes, keepdims)
        if len(_ARRANGEMENTS) >= 1024:
            _ARRANGEMENTS.clear()
        _ARRANGEMENTS[key] = found
    return found


def _arranged(x, perm, O, R, C, dtype):
    """x as the contiguous O x R x C array of its arrangement, in ``dtype``."""
    return contiguous(x if perm is None else x.transpose(perm), dtype).reshape(O, R, C)


# ------------------------------------------------------------------ floats

def _empty_float(op, finishing):
    """The result of an empty reduction: the accumulation's identity,
    finished (log 0 = -inf; the mean of nothing is 0 by ReduceMean)."""
    if finishing in (FINISH_LOG, FINISH_LOGSUMEXP) or op in (MAX, MAX_NAN):
        return -np.inf
    if op in (MIN, MIN_NAN):
        return np.inf
    return 1.0 if op == PROD else 0.0


def _reduce_float(op, finishing, X, axes, keepdims, n_threads):
    perm, O, R, C, out_shape = arrangement(X.shape, axes, keepdims)
    work = compute_dtype(X.dtype)  # float16/bfloat16 widened exactly to float32
    if O * C == 0 or R == 0:
        y = np.full(out_shape, _empty_float(op, finishing), work)
    else:
        y = np.empty(out_shape, work)
        _isa.kernels.reduce_finish(_arranged(X, perm, O, R, C, work), y, O, R, C, op, finishing, n_threads)
    return rounded_to(y, X.dtype)  # one rounding; a canonical NaN stays canonical


# ---------------------------------------------------------------- integers
# Wrap-around sums and products are associative and commutative modulo
# 2^bits and max/min pick a value, so the kernels' lane orders give the
# same bits as any other. The finishing steps follow ONNX Runtime: the mean
# truncates toward zero, L2 is the truncated float64 square root (0 when
# the sum wrapped negative), ReduceLogSum the truncated log64 of the sum,
# ReduceLogSumExp the maximum m plus the truncated float64
# log(sum(exp(x - m))); a non-finite or out-of-range float64 result gives
# the type's minimum (what x86's conversion gives).

def _log64(v, n_threads):
    out = np.empty_like(v)
    _isa.kernels.log64_into(v.reshape(-1), out.reshape(-1), n_threads)
    return out


def _truncated(v, dtype):
    """float64 ``v`` truncated toward zero to the integer ``dtype``; the
    type's minimum where it is NaN, infinite or out of range."""
    info = np.iinfo(dtype)
    t = np.trunc(v)
    fits = (t >= float(info.min)) & (t < 2.0 ** (info.bits - (info.min < 0)))  # False for NaN
    out = np.full(v.shape, info.min, dtype)
    out[fits] = t[fits].astype(dtype)
    return out


def _empty_integer(op, finishing, dtype):
    info = np.iinfo(dtype)
    if finishing in (FINISH_LOG, FINISH_LOGSUMEXP) or op in (MAX, MAX_NAN):
        return info.min
    if op in (MIN, MIN_NAN):
        return info.max
    return 1 if op == PROD else 0


def _reduce_integer(op, finishing, X, axes, keepdims, n_threads):
    dtype = X.dtype
    perm, O, R, C, out_shape = arrangement(X.shape, axes, keepdims)
    if O * C == 0 or R == 0:
        return np.full(out_shape, _empty_integer(op, finishing, dtype), dtype)
    # 8-bit max/min (the only 8-bit reductions) on 32-bit lanes: the same values
    lanes = dtype if dtype.itemsize >= 4 else np.dtype(np.int32 if dtype.kind == "i" else np.uint32)
    x3 = _arranged(X, perm, O, R, C, lanes)
    kernels = _isa.kernels
    y = np.empty((O, C), lanes)
    kernels.reduce_accumulate(x3, y, O, R, C, MAX if op == SUM_EXP else op, None, n_threads)
    y = y.astype(dtype, copy=False)
    with np.errstate(all="ignore"):
        if op == SUM_EXP:
            d = x3.astype(np.float64) - y.astype(np.float64)[:, None, :]  # <= 0, exactly 0 at the maximum
            s = np.empty((O, C), np.float64)
            kernels.reduce_accumulate(d, s, O, R, C, SUM_EXP, np.zeros((O, C), np.float64), n_threads)
            y = y + _truncated(_log64(s, n_threads), dtype)  # wraps around
        elif finishing == FINISH_MEAN:
            count = dtype.type(R)
            y = (y - np.fmod(y, count)) // count  # the quotient truncated toward zero, exactly
        elif finishing == FINISH_SQRT:
            r = np.sqrt(y.astype(np.float64))
            y = np.where(r >= 0, np.trunc(r), 0).astype(dtype)
        elif finishing == FINISH_LOG:
            y = _truncated(_log64(y.astype(np.float64), n_threads), dtype)
    return y.reshape(out_shape)


def reduce(kind, X, axes, keepdims, n_threads, mode="exact"):
    """``kind`` of the checked array X over the axis set ``axes`` in the
    flavour ``mode``."""
    op, finishing = KINDS[kind]
    if is_float_dtype(X.dtype):
        return _reduce_float(accumulation_for(kind, mode), finishing, X, axes, keepdims, n_threads)
    return _reduce_integer(op, finishing, X, axes, keepdims, n_threads)


# ------------------------------------------------------------ direct route
# The common call (a plain float32/float64 array, arguments of the usual
# types) goes in one kernel call (reduce_direct: the layout, accumulation
# and finishing, with no copy); the kernel returns None for anything else,
# and the general path, the only place errors come from, then checks and
# computes it (only the same checks run before, so errors and their order
# do not change).

def _compute(plan, mode, n_threads, all_outputs):
    return [reduce(plan.kind, plan.X, plan.axes, plan.keepdims, n_threads, mode)]


def _reference(plan):
    from .reference import _reduction as spec  # the executable specification, for reference.run only

    return [spec.reduce(plan.kind, plan.X, plan.axes, plan.keepdims)]


def _try_direct(op, data, axes, keepdims, noop_with_empty_axes, opset, mode, n_threads):
    """The direct route of a call with the axes as an input (None when it
    does not apply; the general path then runs and checks everything)."""
    if (type(keepdims) is int and 0 <= keepdims <= 1
            and type(noop_with_empty_axes) is int and noop_with_empty_axes == 0
            and (opset is None or (type(opset) is int and opset in op._version_cache
                                   and op.version_for(opset) >= _VERSIONS[op.op_type][1]))):
        settings = _isa.routes.direct_settings(mode, n_threads)
        if settings is not None:
            accumulation, finishing = KINDS[op.op_type]
            return _isa.kernels.reduce_direct(data, axes, keepdims,
                                              fast_accumulation(accumulation) if settings[1] else accumulation,
                                              finishing, settings[0], True, False)
    return None


def _direct(op, version, attributes, n_declared):
    """A model node's (and ``normops.run``'s) straight call of
    reduce_direct, from the opset taking the axes as an input; None before
    it, or for attributes only the validated path reads."""
    if version < _VERSIONS[op.op_type][1]:
        return None
    keepdims, noop = attributes["keepdims"], attributes["noop_with_empty_axes"]
    if type(keepdims) is not int or not 0 <= keepdims <= 1 or type(noop) is not int or noop != 0:
        return None
    exact, finishing = KINDS[op.op_type]
    fast = fast_accumulation(exact)

    def direct(kernels, threads, fast_flavour, data, axes=None):
        y = kernels.reduce_direct(data, axes, keepdims, fast if fast_flavour else exact, finishing,
                                  threads, True, False)
        return None if y is None else (y,)

    return direct


def _register(op_type):
    return register(OpDef(
        op_type, versions=_VERSIONS[op_type][0], inputs=("data", "axes"), n_required=1,
        outputs=("reduced",), attributes=_attributes_for(op_type), bind=_bind, compute=_compute,
        reference=_reference, direct=_direct))


OPS = {op: _register(op) for op in _VERSIONS}


def _named(op_type, data, axes, keepdims, noop_with_empty_axes, opset, mode, n_threads, full_output):
    op = OPS[op_type]
    if full_output is False:
        y = _try_direct(op, data, axes, keepdims, noop_with_empty_axes, opset, mode, n_threads)
        if y is not None:
            return y
    inputs, attributes = _node_arguments(op, data, axes, keepdims, noop_with_empty_axes, opset)
    outputs = op.call(inputs, attributes, opset, mode, n_threads)
    return tuple(outputs) if full_output else outputs[0]


def _node_arguments(op, data, axes, keepdims, noop_with_empty_axes, opset):
    """The node's (inputs, attributes) of a named call at ``opset``: axes
    an attribute before the operator's axes-input opset, an input from it."""
    version = op.version_for(opset)
    if version < _VERSIONS[op.op_type][1]:
        if noop_with_empty_axes:
            raise InvalidInputError(
                f"{op.op_type}: attribute 'noop_with_empty_axes' is not defined at opset {version}")
        return (data, None), {"axes": axes, "keepdims": keepdims}
    if axes is not None:
        axes = np.asarray(axes)
        if axes.size == 0:  # [] is float64 to NumPy
            axes = axes.astype(np.int64)
    return (data, axes), {"keepdims": keepdims, "noop_with_empty_axes": noop_with_empty_axes}


def reduced_axes(op_type, data, axes, keepdims=1, noop_with_empty_axes=0, opset=None):
    """The set of axes a named call of ``op_type`` on ``data`` (an array of
    the input's rank and dtype) reduces, checked as the call checks them
    (normops.dask plans its chunks with it)."""
    op = OPS[op_type]
    inputs, attributes = _node_arguments(op, data, axes, keepdims, noop_with_empty_axes, opset)
    return op.bind(op, op.version_for(opset), inputs, attributes).axes


#: op_type -> its named function (normops.dask wraps each)
NAMED = {}


def _make(op_type, doc):
    accumulation, finishing = KINDS[op_type]
    fast = fast_accumulation(accumulation)

    def function(data, axes=None, *, keepdims=1, noop_with_empty_axes=0, opset=None, mode=None,
                 n_threads=None, full_output=False):
        if (opset is None and full_output is False and type(keepdims) is int and 0 <= keepdims <= 1
                and type(noop_with_empty_axes) is int and noop_with_empty_axes == 0):
            # the shortest way: settings that pass by type (anything else: _named checks)
            settings = _isa.routes.direct_settings(mode, n_threads)
            if settings is not None:
                y = _isa.kernels.reduce_direct(data, axes, keepdims, fast if settings[1] else accumulation,
                                               finishing, settings[0], True, False)
                if y is not None:
                    return y
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
    NAMED[op_type] = function
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
