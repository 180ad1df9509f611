"""Sigmoid (opsets 1, 6, 13): y = 1 / (1 + exp(-x)), with normops' own
exponential (docs/specification.md §10.1): exp32 in the exact flavour, the fast
exponential in the fast one; both operations rounded."""

from . import _isa
from ._registry import OpDef, register
from ._validate import compute_dtype, contiguous, float_input, kernel_storage, rounded_to
from .reference import _activation as _reference_activation


class _Plan:
    __slots__ = ("X", "compute_dtype")


def _bind(op, version, inputs, attributes):
    plan = _Plan()
    plan.X = float_input(op.op_type, "X", inputs[0])
    plan.compute_dtype = compute_dtype(plan.X.dtype)
    return plan  # opset 1's consumed_inputs is a legacy attribute with no effect


def _compute(plan, mode, n_threads, all_outputs):
    # float16/bfloat16 as they are: the kernel widens and rounds back
    x = contiguous(plan.X, kernel_storage(plan.X.dtype, plan.compute_dtype))
    y = _isa.routes.empty_placed(x)
    if x.size:
        _isa.kernels.sigmoid_flat(x, y, mode == "fast", n_threads)
    return [rounded_to(y, plan.X.dtype)]


def _reference(plan):
    x = contiguous(plan.X, plan.compute_dtype)
    return [rounded_to(_reference_activation.sigmoid(x), plan.X.dtype)]


def _direct(op, version, attributes, n_declared):
    """The straight call of the kernel for these attributes (OpDef's direct)."""
    if version < 6:
        return None  # consumed_inputs: the validated route

    def direct(kernels, threads, fast, X):
        y = kernels.sigmoid_direct(X, fast, threads)
        return None if y is None else (y,)

    return direct


SIGMOID = register(OpDef(
    "Sigmoid", versions=(1, 6, 13), inputs=("X",), n_required=1, outputs=("Y",),
    attributes=lambda version: {"consumed_inputs": None} if version < 6 else {},
    bind=_bind, compute=_compute, reference=_reference, direct=_direct))


def sigmoid(X, *, opset=None, mode=None, n_threads=None, full_output=False):
    """ONNX Sigmoid: ``1 / (1 + exp(-X))`` element-wise; exactly 1 where
    exp(-X) underflows, +0 where it overflows."""
    y = None if full_output else _isa.routes.sigmoid_named(SIGMOID, X, opset, mode, n_threads)
    if y is not None:
        return y  # the route in C (the kernels' named.pxi)
    outputs = SIGMOID.call((X,), {}, opset, mode, n_threads, full_output)
    return tuple(outputs) if full_output else outputs[0]
