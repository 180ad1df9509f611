"""LayerNormalization, RMSNormalization and SimplifiedLayerNormalization.

All three normalise the rows of X viewed as rows x cols, cols being the
product of the dimensions from ``axis`` on (docs/specification.md §6).
"""
import numpy as np

from . import _isa
from ._errors import InvalidInputError
from ._registry import OpDef, register
from ._validate import (
    at_least_rank, axis_attribute, broadcast_to_suffix, compute_dtype, contiguous,
    float_attribute, float_input, int_attribute, kernel_storage, product, rounded_to,
    stash_type_attribute, unsupported,
)
from .reference import _normalization as _reference_norms

_FLOAT32 = np.dtype(np.float32)


class _Family:
    """What distinguishes the three operators."""

    def __init__(self, center, has_bias, stats, y_follows_scale, one_param_type):
        self.center = center                  # subtract the mean (LayerNormalization)
        self.has_bias = has_bias              # a B input
        self.stats = stats                    # statistics outputs: "mean", "inv"
        self.y_follows_scale = y_follows_scale  # Y has the scale's dtype (type V)
        self.one_param_type = one_param_type  # X, Scale, B share one type T
        # for the kernels' route in C (named.pxi, row_normalize_named)
        self.flags = (center, one_param_type, y_follows_scale, 2 if "mean" in stats else 1 if stats else 0)


_LN = _Family(True, True, ("mean", "inv"), False, True)
_RMS = _Family(False, False, (), True, False)
_SLN = _Family(False, False, ("inv",), True, False)
_FAMILY = {"LayerNormalization": _LN, "RMSNormalization": _RMS, "SimplifiedLayerNormalization": _SLN}


class _Plan:
    __slots__ = ("op", "family", "X", "scale", "bias", "axis", "epsilon", "rows", "cols",
                 "y_dtype", "compute_dtype", "stats_shape")


def _bind(op, version, inputs, attributes):
    name = op.op_type
    family = _FAMILY[name]
    plan = _Plan()
    plan.op = op
    plan.family = family
    X = float_input(name, op.inputs[0], inputs[0])
    scale = float_input(name, op.inputs[1], inputs[1])
    bias = inputs[2] if family.has_bias else None
    if bias is not None:
        bias = float_input(name, op.inputs[2], bias)
    at_least_rank(name, op.inputs[0], X, 1)
    axis = axis_attribute(name, "axis", attributes["axis"], X.ndim)
    plan.epsilon = float_attribute(name, "epsilon", attributes["epsilon"])
    stash_type_attribute(name, attributes["stash_type"])
    if "keep_dims" in attributes:
        keep_dims = int_attribute(name, "keep_dims", attributes["keep_dims"])
        if keep_dims != 1:
            raise unsupported(name, f"attribute 'keep_dims'={keep_dims} is not served (only 1)")

    if family.one_param_type:
        for pname, p in ((op.inputs[1], scale), (op.inputs[2], bias)):
            if p is not None and p.dtype != X.dtype:
                raise _type_mismatch(name, pname, p, X)
    suffix = X.shape[axis:]
    plan.cols = product(suffix)
    if plan.cols == 0:
        raise _invalid(name, f"input {op.inputs[0]!r} of shape {X.shape} has an empty normalized "
                             f"shape {suffix} (axis={axis})")
    plan.rows = product(X.shape[:axis])
    plan.X = X
    plan.axis = axis
    plan.scale = broadcast_to_suffix(name, op.inputs[1], scale, suffix)
    plan.bias = None if bias is None else broadcast_to_suffix(name, op.inputs[2], bias, suffix)
    plan.compute_dtype = compute_dtype(X.dtype, scale.dtype)
    plan.y_dtype = scale.dtype if family.y_follows_scale else X.dtype
    plan.stats_shape = X.shape[:axis] + (1,) * (X.ndim - axis)
    return plan


def _invalid(name, message):
    return InvalidInputError(f"{name}: {message}")


def _type_mismatch(name, pname, p, X):
    return _invalid(name, f"input {pname!r} has dtype {p.dtype} but 'X' has dtype {X.dtype}; "
                          f"{name} needs one type for both")


def _expanded(param, suffix, dtype):
    """The parameter as cols contiguous values (a scratch copy when it
    broadcasts: docs/specification.md §6.2)."""
    if param.shape != suffix:
        param = np.broadcast_to(param, suffix)
    return contiguous(param, dtype)


def _compute(plan, mode, n_threads, all_outputs):
    family = plan.family
    ct = plan.compute_dtype
    X = plan.X
    suffix = X.shape[plan.axis:]
    x = contiguous(X, kernel_storage(X.dtype, ct))
    y = np.empty(X.shape, kernel_storage(plan.y_dtype, ct))
    scale = _expanded(plan.scale, suffix, kernel_storage(plan.scale.dtype, ct))
    bias = None if plan.bias is None else _expanded(plan.bias, suffix, kernel_storage(plan.bias.dtype, ct))
    want_stats = all_outputs and family.stats
    mean = np.empty(plan.stats_shape, _FLOAT32) if want_stats and "mean" in family.stats else None
    inv = np.empty(plan.stats_shape, _FLOAT32) if want_stats else None
    _isa.kernels.row_normalize(x, scale, bias, y, mean, inv, plan.rows, plan.cols,
                               plan.epsilon, family.center, n_threads)
    y = rounded_to(y, plan.y_dtype)
    if not want_stats:
        return [y]
    return [y] + [mean if s == "mean" else inv for s in family.stats]


def _reference(plan):
    name = plan.op.op_type
    if name == "LayerNormalization":
        return list(_reference_norms.layer_normalization(plan.X, plan.scale, plan.bias, plan.axis, plan.epsilon))
    if name == "RMSNormalization":
        return list(_reference_norms.rms_normalization(plan.X, plan.scale, plan.axis, plan.epsilon))
    return list(_reference_norms.simplified_layer_normalization(plan.X, plan.scale, plan.axis, plan.epsilon))


def _direct(op, version, attributes, n_declared):
    """The straight call of the kernel for these attributes (OpDef's direct)."""
    family = _FAMILY[op.op_type]
    axis, epsilon = attributes["axis"], attributes["epsilon"]
    stash_type, keep_dims = attributes["stash_type"], attributes.get("keep_dims", 1)
    if not (type(axis) is int and type(epsilon) is float and type(stash_type) is int
            and stash_type in _isa.routes.FLOAT32_STASH_TYPES and type(keep_dims) is int and keep_dims == 1):
        return None
    center, one_type, follows = family.center, family.one_param_type, family.y_follows_scale
    want_stats = n_declared > 1 and bool(family.stats)
    want_mean = want_stats and "mean" in family.stats

    def direct(kernels, threads, fast, X, scale, bias=None):
        # (Y, Mean, InvStdDev), the statistics None unless asked for
        return kernels.row_normalize_nd(X, scale, bias, axis, epsilon, center, one_type, follows,
                                        threads, want_mean, want_stats)

    if center or not want_stats:
        return direct

    def direct_inv(kernels, threads, fast, X, scale, bias=None):  # SimplifiedLayerNormalization: (Y, inv)
        result = direct(kernels, threads, fast, X, scale)
        return None if result is None else (result[0], result[2])

    return direct_inv


_COMMON_ATTRIBUTES = {"axis": -1, "epsilon": 1e-5, "stash_type": 1}

LAYER_NORMALIZATION = register(OpDef(
    "LayerNormalization", versions=(17,), inputs=("X", "Scale", "B"), n_required=2,
    outputs=("Y", "Mean", "InvStdDev"), attributes=_COMMON_ATTRIBUTES,
    bind=_bind, compute=_compute, reference=_reference, direct=_direct))

RMS_NORMALIZATION = register(OpDef(
    "RMSNormalization", versions=(23,), inputs=("X", "scale"), n_required=2,
    outputs=("Y",), attributes=_COMMON_ATTRIBUTES,
    bind=_bind, compute=_compute, reference=_reference, direct=_direct))

SIMPLIFIED_LAYER_NORMALIZATION = register(OpDef(
    "SimplifiedLayerNormalization", versions=(1,), inputs=("X", "scale"), n_required=2,
    outputs=("Y", "inv_std_var"), attributes=dict(_COMMON_ATTRIBUTES, keep_dims=1),
    bind=_bind, compute=_compute, reference=_reference, direct=_direct))


def _validated(op, family, X, scale, bias, axis, epsilon, stash_type, keep_dims, opset, mode, n_threads,
               full_output):
    attributes = {"axis": axis, "epsilon": epsilon, "stash_type": stash_type}
    if op is SIMPLIFIED_LAYER_NORMALIZATION:
        attributes["keep_dims"] = keep_dims
    inputs = (X, scale, bias) if family.has_bias else (X, scale)
    outputs = op.call(inputs, attributes, opset, mode, n_threads, full_output)
    return tuple(outputs) if full_output else outputs[0]


def layer_normalization(X, Scale, B=None, *, axis=-1, epsilon=1e-05, stash_type=1,
                        opset=None, mode=None, n_threads=None, full_output=False):
    """ONNX LayerNormalization (opset 17).

    Normalises X over the dimensions from ``axis`` on:
    ``Y = (X - mean) / sqrt(var + epsilon) * Scale + B``, computed in the
    exact order of the specification (docs/exactness.md). Scale and B
    broadcast to the normalised shape.

    Returns Y, or ``(Y, Mean, InvStdDev)`` with ``full_output=True`` (the
    statistics are float32, shaped like X with the normalised dimensions
    set to 1).
    """
    y = _isa.routes.row_normalize_named(LAYER_NORMALIZATION, _LN.flags, X, Scale, B, axis, epsilon, stash_type, 1,
                                         opset, mode, n_threads, full_output)
    return _validated(LAYER_NORMALIZATION, _LN, X, Scale, B, axis, epsilon, stash_type, 1,
                      opset, mode, n_threads, full_output) if y is None else y


def rms_normalization(X, scale, *, axis=-1, epsilon=1e-05, stash_type=1,
                      opset=None, mode=None, n_threads=None, full_output=False):
    """ONNX RMSNormalization (opset 23): ``Y = X / sqrt(mean(X^2) + epsilon) * scale``.

    Y has the dtype of ``scale``. Returns Y, or ``(Y,)`` with ``full_output=True``.
    """
    y = _isa.routes.row_normalize_named(RMS_NORMALIZATION, _RMS.flags, X, scale, None, axis, epsilon, stash_type, 1,
                                         opset, mode, n_threads, full_output)
    return _validated(RMS_NORMALIZATION, _RMS, X, scale, None, axis, epsilon, stash_type, 1,
                      opset, mode, n_threads, full_output) if y is None else y


def simplified_layer_normalization(X, scale, *, axis=-1, epsilon=1e-05, stash_type=1, keep_dims=1,
                                   opset=None, mode=None, n_threads=None, full_output=False):
    """ONNX Runtime's SimplifiedLayerNormalization (default domain, since 1).

    RMS normalisation with Y in the dtype of ``scale``. Returns Y, or
    ``(Y, inv_std_var)`` with ``full_output=True`` (inv_std_var is float32).
    """
    y = _isa.routes.row_normalize_named(SIMPLIFIED_LAYER_NORMALIZATION, _SLN.flags, X, scale, None, axis, epsilon,
                                         stash_type, keep_dims, opset, mode, n_threads, full_output)
    return _validated(SIMPLIFIED_LAYER_NORMALIZATION, _SLN, X, scale, None, axis, epsilon, stash_type,
                      keep_dims, opset, mode, n_threads, full_output) if y is None else y
