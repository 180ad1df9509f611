"""Gelu (opset 20, ``approximate`` "none" and "tanh") and com.microsoft
BiasGelu (since 1): ``Gelu(A + B)``, B the bias of A's last dimension.

Exact flavour: normops' own erf32/tanh32 (float64 erf64/tanh64 for float64)
and the order of operations of docs/exactness.md ("Gelu"); fast flavour:
float32 approximations (about 2 ulp, docs/transcendentals.md). float16 and
bfloat16 are widened to float32 and the result rounded once.
"""
import numpy as np

from . import _isa
from ._errors import InvalidInputError
from ._registry import OpDef, register
from ._validate import compute_dtype, contiguous, float_input, rounded_to
from .reference import _gelu as _reference_gelu

APPROXIMATIONS = ("none", "tanh")


class _Plan:
    __slots__ = ("X", "B", "tanh", "compute_dtype")


def _approximate(op, value):
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if value not in APPROXIMATIONS:
        raise InvalidInputError(f"{op}: attribute 'approximate' must be 'none' or 'tanh', not {value!r}")
    return value == "tanh"


def _bind_gelu(op, version, inputs, attributes):
    plan = _Plan()
    plan.X = float_input(op.op_type, "X", inputs[0])
    plan.B = None
    plan.tanh = _approximate(op.op_type, attributes["approximate"])
    plan.compute_dtype = compute_dtype(plan.X.dtype)
    return plan


def _bind_bias_gelu(op, version, inputs, attributes):
    plan = _Plan()
    name = op.op_type
    plan.X = float_input(name, "A", inputs[0])
    plan.B = float_input(name, "B", inputs[1])
    if plan.B.dtype != plan.X.dtype:
        raise InvalidInputError(f"{name}: input 'B' has dtype {plan.B.dtype}; it must be {plan.X.dtype} like 'A'")
    if plan.X.ndim < 1:
        raise InvalidInputError(f"{name}: input 'A' must have rank >= 1, got a 0-d array")
    if plan.B.ndim != 1 or plan.B.shape[0] != plan.X.shape[-1]:
        raise InvalidInputError(
            f"{name}: input 'B' has shape {tuple(plan.B.shape)}; it must be 1-D with the size of the last "
            f"dimension of 'A' ({plan.X.shape[-1]})")
    plan.tanh = False
    plan.compute_dtype = compute_dtype(plan.X.dtype)
    return plan


def _compute(plan, mode, n_threads, all_outputs):
    x = contiguous(plan.X, plan.compute_dtype)
    y = np.empty(x.shape, plan.compute_dtype)
    if x.size:
        b = None if plan.B is None else contiguous(plan.B, plan.compute_dtype)
        _isa.kernels.gelu_flat(x, b, y, plan.tanh, mode == "fast", n_threads)
    return [rounded_to(y, plan.X.dtype)]


def _reference(plan):
    x = contiguous(plan.X, plan.compute_dtype)
    b = None if plan.B is None else contiguous(plan.B, plan.compute_dtype)
    return [rounded_to(_reference_gelu.gelu(x, b, plan.tanh), plan.X.dtype)]


def _direct(op, version, attributes, n_declared):
    """The straight call of the kernel for these attributes (OpDef's
    direct): the routes' gelu_settled, which takes a plain float array and
    a bias of its dtype and last extent, and declines anything else."""
    approximate = attributes.get("approximate", "none")
    if isinstance(approximate, bytes):
        approximate = approximate.decode("utf-8", "replace")
    if type(approximate) is not str or approximate not in APPROXIMATIONS:
        return None
    tanh = approximate == "tanh"

    def direct(kernels, threads, fast, X, B=None):
        y = _isa.routes.gelu_settled(X, B, tanh, fast, threads)
        return None if y is None else (y,)

    return direct


GELU = register(OpDef(
    "Gelu", versions=(20,), inputs=("X",), n_required=1, outputs=("Y",),
    attributes={"approximate": "none"}, bind=_bind_gelu, compute=_compute, reference=_reference,
    direct=_direct))

BIAS_GELU = register(OpDef(
    "BiasGelu", versions=(1,), inputs=("A", "B"), n_required=2, outputs=("C",),
    attributes={}, bind=_bind_bias_gelu, compute=_compute, reference=_reference, domain="com.microsoft",
    direct=_direct))


def gelu(X, *, approximate="none", opset=None, mode=None, n_threads=None, full_output=False):
    """ONNX Gelu (opset 20): ``0.5 * X * (1 + erf(X / sqrt(2)))``, or with
    ``approximate="tanh"`` ``0.5 * X * (1 + tanh(sqrt(2/pi) * (X + 0.044715 X^3)))``,
    element-wise, in the order of docs/exactness.md."""
    if full_output is False and type(approximate) is str and approximate in APPROXIMATIONS:
        y = _isa.routes.gelu_named(GELU, X, None, approximate == "tanh", opset, mode, n_threads)
        if y is not None:
            return y
    outputs = GELU.call((X,), {"approximate": approximate}, opset, mode, n_threads, full_output)
    return tuple(outputs) if full_output else outputs[0]


def bias_gelu(A, B, *, opset=None, mode=None, n_threads=None, full_output=False):
    """com.microsoft BiasGelu: Gelu (``approximate="none"``) of ``A + B``,
    the 1-D bias B of A's last dimension added (and rounded) first."""
    if full_output is False and B is not None:
        y = _isa.routes.gelu_named(BIAS_GELU, A, B, False, opset, mode, n_threads)
        if y is not None:
            return y
    outputs = BIAS_GELU.call((A, B), {}, opset, mode, n_threads, full_output)
    return tuple(outputs) if full_output else outputs[0]
