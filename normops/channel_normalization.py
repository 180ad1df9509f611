"""InstanceNormalization, GroupNormalization and BatchNormalization.

All three run the row normalisation kernel (``_kernels/normalization.pxi``) with
a ``RowParams`` layout (docs/specification.md §7):

* InstanceNormalization: a row is one (n, c) plane; scalar scale[c], B[c].
* GroupNormalization: a row is one (n, g) block of C / G channels; scalar
  scale[g], bias[g] (opset 18) or scale[c], bias[c] per channel segment of
  the block (opset 21).
* BatchNormalization, inference: the (n, c) planes with the given mean[c]
  and inv[c] = 1 / sqrt(var[c] + epsilon): steps 1-3 skipped, step 4 as
  always. Training: X is moved to a (C, N * spatial) scratch so that a row
  is channel c's elements in row-major order, normalised as a row with its
  batch statistics, and moved back. The legacy training forms (opsets 1-9:
  is_test=0, or the node declaring its extra outputs) run the same
  computation and add saved_mean (the batch mean) and saved_var (the inv
  that normalised Y, as ONNX Runtime and cuDNN store it).
"""
import numpy as np

from . import _config, _isa
from ._errors import InvalidInputError
from ._registry import OpDef, register
from ._validate import (
    at_least_rank, compute_dtype, contiguous, flag_attribute, float_attribute, float_input,
    int_attribute, kernel_storage, product, rounded_to, stash_type_attribute, unsupported,
)
from .reference import _channel_normalization as _reference


class _Plan:
    __slots__ = ("op", "version", "X", "scale", "bias", "mean", "var", "epsilon", "momentum",
                 "training", "num_groups", "compute_dtype")


def _invalid(name, message):
    return InvalidInputError(f"{name}: {message}")


def _channel_vector(name, pname, p, count, what):
    if p.shape != (count,):
        raise _invalid(name, f"input {pname!r} has shape {p.shape}; expected ({count},) ({what})")
    return p


def _common(op, inputs, rank):
    name = op.op_type
    X = float_input(name, op.inputs[0], inputs[0])
    at_least_rank(name, op.inputs[0], X, rank)
    params = [float_input(name, pname, p) for pname, p in zip(op.inputs[1:], inputs[1:])]
    return name, X, params


def _one_type(op, X, params):
    """InstanceNormalization and GroupNormalization give all three inputs
    ONNX's one type T."""
    for pname, p in zip(op.inputs[1:], params):
        if p.dtype != X.dtype:
            raise _invalid(op.op_type, f"input {pname!r} has dtype {p.dtype} but {op.inputs[0]!r} has "
                                       f"dtype {X.dtype}; {op.op_type} needs one type for all three")


def _bind_instance(op, version, inputs, attributes):
    name, X, (scale, bias) = _common(op, inputs, 3)
    _one_type(op, X, (scale, bias))
    for pname, p in zip(op.inputs[1:], (scale, bias)):
        _channel_vector(name, pname, p, X.shape[1], "one value per channel")
    plan = _new_plan(op, version, X, scale, bias, attributes)
    return plan  # opset 1's consumed_inputs is a legacy attribute with no effect


def _bind_group(op, version, inputs, attributes):
    name, X, (scale, bias) = _common(op, inputs, 2)
    _one_type(op, X, (scale, bias))
    if attributes["num_groups"] is None:
        raise _invalid(name, "attribute 'num_groups' is required")
    groups = int_attribute(name, "num_groups", attributes["num_groups"])
    channels = X.shape[1]
    if groups < 1 or channels % groups:
        raise _invalid(name, f"attribute 'num_groups'={groups} must be positive and divide the "
                             f"{channels} channels of input 'X'")
    if "stash_type" in attributes:
        stash_type_attribute(name, attributes["stash_type"])
    per_channel = version >= 21
    for pname, p in zip(op.inputs[1:], (scale, bias)):
        _channel_vector(name, pname, p, channels if per_channel else groups,
                        "one value per channel" if per_channel else "one value per group (opset 18)")
    plan = _new_plan(op, version, X, scale, bias, attributes)
    plan.num_groups = groups
    return plan


def _bind_batch(op, version, inputs, attributes):
    name, X, (scale, bias, mean, var) = _common(op, inputs, 2)
    channels = X.shape[1]
    for pname, p in zip(op.inputs[1:], (scale, bias, mean, var)):
        _channel_vector(name, pname, p, channels, "one value per channel")
    reason = _batch_legacy_reason(version, attributes)
    if reason is not None:
        raise unsupported(name, reason)
    plan = _new_plan(op, version, X, scale, bias, attributes)
    plan.mean, plan.var = mean, var
    plan.momentum = float_attribute(name, "momentum", attributes["momentum"])
    plan.training = _batch_training(version, attributes)
    if plan.training and X.size == 0:
        raise _invalid(name, f"training mode ({_training_spelling(version)}) needs at least one element "
                             f"per channel in input 'X' (shape {X.shape})")
    plan.compute_dtype = compute_dtype(X.dtype, scale.dtype, bias.dtype, mean.dtype, var.dtype)
    return plan


def _batch_legacy_reason(version, attributes):
    """Why a BatchNormalization node of a legacy form is not served (None: served)."""
    name = "BatchNormalization"
    if "spatial" in attributes and int_attribute(name, "spatial", attributes["spatial"]) != 1:
        return (f"opset {version}: attribute 'spatial'={attributes['spatial']} (statistics and "
                f"parameters per element) is not served, only spatial=1")
    return None


def _training_spelling(version):
    return "is_test=0" if version < 7 else "training_mode=1"


def _batch_training(version, attributes):
    """Training mode? Opsets 1 and 6 say it with is_test=0 (their default);
    7 and 9 with the node's extra outputs, which a model node conveys
    through ``_batch_node_attributes`` and a call as training_mode=1 (a
    normops-side attribute there); 14 on with training_mode=1."""
    name = "BatchNormalization"
    if version < 7:
        return not flag_attribute(name, "is_test", attributes["is_test"])
    return bool(flag_attribute(name, "training_mode", attributes["training_mode"]))


_LEGACY_OUTPUTS = ("Y", "mean", "var", "saved_mean", "saved_var")


def _declared_outputs(outputs):
    return [(k, o) for k, o in enumerate(outputs) if o and k > 0]


def _batch_node_attributes(version, attributes, outputs):
    """Opsets 7 and 9 have no attribute for training: ONNX trains when the
    node declares any of mean, var, saved_mean, saved_var (empty names are
    absent outputs). The session passes that on as training_mode."""
    if 7 <= version < 14:
        attributes = dict(attributes)
        attributes["training_mode"] = 1 if _declared_outputs(outputs) else 0
    return attributes


def _check_batch_node(version, attributes, outputs):
    """Load-time check of a model's BatchNormalization node.

    Before opset 14 the node trains with is_test=0 (opsets 1, 6) or when it
    declares outputs beyond Y (7, 9); spatial=0 is not served. At 1 and 6,
    extra outputs with is_test=1 are invalid, as from 14 on the running
    statistics without training_mode=1 are (ONNX: those outputs exist in
    training mode only).
    """
    name = "BatchNormalization"
    declared = _declared_outputs(outputs)
    if version < 14:
        reason = _batch_legacy_reason(version, attributes)
        if reason is None and version < 7 and declared and flag_attribute(name, "is_test", attributes["is_test"]):
            k, output = declared[0]
            raise _invalid(name, f"output {output!r} ({_LEGACY_OUTPUTS[k] if k < 5 else k}) is declared, "
                                 f"but with is_test=1 the operator produces Y only")
        return reason
    if declared and not flag_attribute(name, "training_mode", attributes.get("training_mode", 0)):
        k, output = declared[0]
        raise _invalid(name, f"output {output!r} ({BATCH_NORMALIZATION.outputs[k] if k < 3 else k}) is "
                             f"declared, but with training_mode=0 the operator produces Y only")
    return None


def _new_plan(op, version, X, scale, bias, attributes):
    plan = _Plan()
    plan.op, plan.version, plan.X, plan.scale, plan.bias = op, version, X, scale, bias
    plan.epsilon = float_attribute(op.op_type, "epsilon", attributes["epsilon"])
    plan.compute_dtype = compute_dtype(X.dtype, scale.dtype, bias.dtype)
    plan.training = False
    return plan


def _run_rows(plan, x, rows, cols, period, seg_len, n_threads, given=None):
    """The kernel on x (rows x cols, any shape of that size) with the
    parameter layout (period, seg_len): Y in X's dtype."""
    ct = plan.compute_dtype
    X = plan.X
    store = kernel_storage(X.dtype, ct)
    x = contiguous(x, store)
    y = np.empty(x.shape, store)
    scale = contiguous(plan.scale, kernel_storage(plan.scale.dtype, ct))
    bias = contiguous(plan.bias, kernel_storage(plan.bias.dtype, ct))
    if x.size:
        given_mean, given_var = given if given is not None else (None, None)
        _isa.kernels.row_normalize(x, scale, bias, y, None, None, rows, cols, plan.epsilon, True,
                                   n_threads, period, seg_len, given_mean, given_var)
    return rounded_to(y, X.dtype)


def _compute(plan, mode, n_threads, all_outputs):
    X = plan.X
    N, C = X.shape[:2]
    spatial = product(X.shape[2:])
    name = plan.op.op_type
    if name == "InstanceNormalization":
        return [_run_rows(plan, X, N * C, spatial, C, spatial, n_threads)]
    if name == "GroupNormalization":
        G = plan.num_groups
        cols = (C // G) * spatial
        seg_len = spatial if plan.version >= 21 else cols
        return [_run_rows(plan, X, N * G, cols, G, seg_len, n_threads)]
    ct = plan.compute_dtype
    given = (contiguous(plan.mean, ct), contiguous(plan.var, ct))
    if not plan.training:
        return [_run_rows(plan, X, N * C, spatial, C, spatial, n_threads, given)]
    # training: the kernel gathers channel c's elements (row-major order) into row c
    store = kernel_storage(X.dtype, ct)
    x = contiguous(X, store)
    y = np.empty(X.shape, store)
    running = np.empty(C, ct), np.empty(C, ct)
    # before opset 14: saved_mean and saved_var (inv), the statistics Y used
    saved = (np.empty(C, ct), np.empty(C, ct)) if plan.version < 14 and all_outputs else (None, None)
    _isa.kernels.batch_normalization_training(
        x, contiguous(plan.scale, kernel_storage(plan.scale.dtype, ct)),
        contiguous(plan.bias, kernel_storage(plan.bias.dtype, ct)), *given, y, *running,
        N, C, spatial, plan.epsilon, plan.momentum, n_threads, *saved)
    y = rounded_to(y, X.dtype)
    if not all_outputs:
        return [y]
    outputs = [y, rounded_to(running[0], plan.mean.dtype), rounded_to(running[1], plan.var.dtype)]
    if saved[0] is not None:
        outputs += [rounded_to(saved[0], plan.mean.dtype), rounded_to(saved[1], plan.var.dtype)]
    return outputs


def _reference_outputs(plan):
    name = plan.op.op_type
    if name == "InstanceNormalization":
        return list(_reference.instance_normalization(plan.X, plan.scale, plan.bias, plan.epsilon))
    if name == "GroupNormalization":
        return list(_reference.group_normalization(plan.X, plan.scale, plan.bias, plan.num_groups,
                                                   plan.epsilon, plan.version >= 21))
    return list(_reference.batch_normalization(plan.X, plan.scale, plan.bias, plan.mean, plan.var,
                                               plan.epsilon, plan.momentum, plan.training,
                                               saved=plan.version < 14))


def _plain_group_attributes(groups, stash_type, version):
    """num_groups a positive int and stash_type an int the kernels serve as
    given (1, or from opset 21 any with float32 statistics): what the
    direct routes take as they are."""
    return (type(groups) is int and groups > 0 and type(stash_type) is int
            and (stash_type == 1 or (version >= 21 and stash_type in _FAST_STASH)))


def _plain_batch_attributes(training_mode, momentum):
    """training_mode 0 or 1 as an int and momentum a float: what the direct
    routes take as they are (from opset 14)."""
    return type(training_mode) is int and training_mode in (0, 1) and type(momentum) is float


def _direct(op, version, attributes, n_declared):
    """The straight call of the kernel for these attributes (OpDef's
    direct): the kernels' channel_normalize_nd, which declines what needs
    a conversion; None for attributes only the validated path reads."""
    epsilon = attributes["epsilon"]
    if op is BATCH_NORMALIZATION:
        if version < 14:  # legacy forms: the validated route
            return None
        training, momentum = attributes["training_mode"], attributes["momentum"]
        if not _plain_batch_attributes(training, momentum):
            return None
        momentum = momentum if training else None

        def direct(kernels, threads, fast, X, scale, B, input_mean, input_var):
            y = kernels.channel_normalize_nd(X, scale, B, input_mean, input_var, 0, True, epsilon, threads,
                                             momentum)
            return y if y is None or momentum is not None else (y,)  # training: (Y, running mean, var)

        return direct
    groups, per_channel = 0, True  # InstanceNormalization: a group per channel
    if op is GROUP_NORMALIZATION:
        groups = attributes["num_groups"]
        if not _plain_group_attributes(groups, attributes.get("stash_type", 1), version):
            return None
        per_channel = version >= 21

    def direct(kernels, threads, fast, X, scale, bias):
        if type(X) is not np.ndarray or X.ndim < 3:
            return None
        y = kernels.channel_normalize_nd(X, scale, bias, None, None, groups, per_channel, epsilon, threads)
        return None if y is None else (y,)

    return direct


_EPSILON = 1e-5

INSTANCE_NORMALIZATION = register(OpDef(
    "InstanceNormalization", versions=(1, 6, 22), inputs=("input", "scale", "B"), n_required=3,
    outputs=("output",),
    attributes=lambda v: {"epsilon": _EPSILON, "consumed_inputs": None} if v < 6 else {"epsilon": _EPSILON},
    bind=_bind_instance, compute=_compute, reference=_reference_outputs, direct=_direct))

GROUP_NORMALIZATION = register(OpDef(
    "GroupNormalization", versions=(18, 21), inputs=("X", "scale", "bias"), n_required=3,
    outputs=("Y",),
    attributes=lambda v: ({"epsilon": _EPSILON, "num_groups": None, "stash_type": 1} if v >= 21
                          else {"epsilon": _EPSILON, "num_groups": None}),
    bind=_bind_group, compute=_compute, reference=_reference_outputs, direct=_direct))


def _batch_attributes(version):
    attrs = {"epsilon": _EPSILON, "momentum": 0.9}
    if version < 9:
        attrs["spatial"] = 1
    if version < 7:
        attrs["is_test"] = 0
    if version < 6:
        attrs["consumed_inputs"] = None
    if version >= 7:
        # from 14 an ONNX attribute; at 7 and 9 normops's spelling of the
        # node declaring its training outputs (see _batch_training)
        attrs["training_mode"] = 0
    return attrs


BATCH_NORMALIZATION = register(OpDef(
    "BatchNormalization", versions=(1, 6, 7, 9, 14, 15),
    inputs=("X", "scale", "B", "input_mean", "input_var"), n_required=5,
    # saved_mean, saved_var: opsets 1-9 in training mode only
    outputs=("Y", "running_mean", "running_var", "saved_mean", "saved_var"), attributes=_batch_attributes,
    bind=_bind_batch, compute=_compute, reference=_reference_outputs, check_node=_check_batch_node,
    node_attributes=_batch_node_attributes, direct=_direct))


def _result(outputs, full_output):
    return tuple(outputs) if full_output else outputs[0]


# ------------------------------------------------- the per-call fast route
# Plain calls go straight to the kernel (``channel_normalize_nd`` checks the
# arrays in C and never raises); anything else, including every error,
# takes the validated route above.

_FAST_STASH = _isa.routes.FLOAT32_STASH_TYPES  # the same in every build


def _direct_version(op, opset, mode):
    """The version when opset and mode need no validation, else None."""
    if not (mode is None or (type(mode) is str and (mode == "exact" or mode == "fast"))):
        return None
    if opset is None or type(opset) is int:
        return op._version_cache.get(opset)
    return None


def _named_direct(op, X, scale, bias, mean, var, groups, per_channel, epsilon, n_threads):
    return _isa.kernels.channel_normalize_nd(X, scale, bias, mean, var, groups, per_channel, epsilon,
                                             _config.kernel_threads(n_threads, op.op_type))


def instance_normalization(input, scale, B, *, epsilon=1e-05, opset=None, mode=None,
                           n_threads=None, full_output=False):
    """ONNX InstanceNormalization (opsets 1, 6, 22).

    Each (sample, channel) plane of ``input`` (N, C, D1, ...) is normalised
    by its own mean and variance, then scaled by ``scale[c]`` and shifted by
    ``B[c]``, in the exact order of docs/exactness.md.
    """
    y = None
    if _direct_version(INSTANCE_NORMALIZATION, opset, mode) and type(input) is np.ndarray and input.ndim >= 3:
        y = _named_direct(INSTANCE_NORMALIZATION, input, scale, B, None, None, 0, True, epsilon, n_threads)
    if y is not None:
        return (y,) if full_output else y
    return _result(INSTANCE_NORMALIZATION.call(
        (input, scale, B), {"epsilon": epsilon}, opset, mode, n_threads, full_output), full_output)


def group_normalization(X, scale, bias, *, num_groups, epsilon=1e-05, stash_type=1, opset=None,
                        mode=None, n_threads=None, full_output=False):
    """ONNX GroupNormalization (opsets 18, 21).

    The C channels of X (N, C, D1, ...) form ``num_groups`` groups; each
    (sample, group) block is normalised by its own statistics. ``scale`` and
    ``bias`` have one value per channel (opset 21, the default) or per group
    (opset 18). ``stash_type`` is validated and ignored.
    """
    y = None
    version = _direct_version(GROUP_NORMALIZATION, opset, mode)
    if version and _plain_group_attributes(num_groups, stash_type, version):
        y = _named_direct(GROUP_NORMALIZATION, X, scale, bias, None, None, num_groups, version >= 21, epsilon,
                    n_threads)
    if y is not None:
        return (y,) if full_output else y
    attributes = {"epsilon": epsilon, "num_groups": num_groups}
    version = GROUP_NORMALIZATION.version_for(opset)
    if version >= 21:
        attributes["stash_type"] = stash_type
    elif not (isinstance(stash_type, (int, np.integer)) and not isinstance(stash_type, (bool, np.bool_))
              and stash_type == 1):
        raise InvalidInputError(f"GroupNormalization: attribute 'stash_type'={stash_type!r} exists from opset "
                                f"21; at opset {version} only its default 1 may be passed")
    return _result(GROUP_NORMALIZATION.call(
        (X, scale, bias), attributes, opset, mode, n_threads, full_output), full_output)


def batch_normalization(X, scale, B, input_mean, input_var, *, epsilon=1e-05, momentum=0.9,
                        training_mode=0, is_test=None, opset=None, mode=None, n_threads=None,
                        full_output=False):
    """ONNX BatchNormalization (opsets 1 to 15; channel axis 1).

    Inference (``training_mode=0``): ``Y = (X - mean) / sqrt(var + epsilon)
    * scale + B`` per channel with the given statistics. Training mode
    (``training_mode=1``) normalises with the batch statistics and, with
    ``full_output=True``, also returns ``(running_mean, running_var)`` after
    Y; before opset 14 (ONNX's legacy training form) also ``saved_mean``
    (the batch mean) and ``saved_var`` (``1 / sqrt(batch_var + epsilon)``).
    ``is_test`` is the opset 1/6 attribute (None: ``1 - training_mode``);
    at opsets 7 and 9 ``training_mode=1`` stands for a node declaring its
    training outputs.
    """
    y = None
    version = _direct_version(BATCH_NORMALIZATION, opset, mode)
    if (version and version >= 14 and _plain_batch_attributes(training_mode, momentum)
            and is_test is None and input_mean is not None):
        y = _isa.kernels.channel_normalize_nd(X, scale, B, input_mean, input_var, 0, True, epsilon,
                                              _config.kernel_threads(n_threads, "BatchNormalization"),
                                              momentum if training_mode else None)
    if y is not None:
        if training_mode:
            return y if full_output else y[0]
        return (y,) if full_output else y
    name = "BatchNormalization"
    version = BATCH_NORMALIZATION.version_for(opset)
    attributes = _batch_attributes(version)
    attributes.update(epsilon=epsilon, momentum=momentum)
    attributes.pop("consumed_inputs", None)
    if version >= 7:
        if is_test is not None:
            raise _invalid(name, f"attribute 'is_test' exists at opsets 1 and 6 only (opset {version}); "
                                 f"use training_mode")
        attributes["training_mode"] = training_mode
    else:
        training = flag_attribute(name, "training_mode", training_mode)
        if is_test is None:
            is_test = 1 - training
        elif training and flag_attribute(name, "is_test", is_test):
            raise _invalid(name, "training_mode=1 contradicts is_test=1; give one of them")
        attributes["is_test"] = is_test
    outputs = BATCH_NORMALIZATION.call((X, scale, B, input_mean, input_var), attributes, opset, mode,
                                       n_threads, full_output)
    return _result(outputs, full_output)
