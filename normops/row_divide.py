"""MeanVarianceNormalization (opsets 9, 13) and LpNormalization (1, 22).

Both divide each row by one statistic of the row, with the machinery of
LayerNormalization (docs/specification.md §8). The row's axes are moved last in a
scratch copy when they are not already last, as Softmax does; the
arithmetic is in docs/exactness.md and in the executable specification
(normops/reference/_row_divide.py).
"""
import numpy as np

from ._errors import InvalidInputError
from ._registry import OpDef, register
from ._validate import (
    at_least_rank, axis_attribute, compute_dtype, contiguous, float_input, int_attribute, kernel_storage,
    product, rounded_to,
)
from . import _isa
from ._transpose import inverse, moved_axes
from .reference import _row_divide as _reference_rowdivide

# the statistic a row is divided by (the kernels' numbers)
_DIVIDE_BY_STD, _DIVIDE_BY_L1, _DIVIDE_BY_L2 = (_isa.routes.ROW_DIVISORS[k] for k in ("STD", "L1", "L2"))


class _Plan:
    __slots__ = ("op", "X", "row_axes", "kind", "p")


def _axes_attribute(name, axes, ndim):
    """MeanVarianceNormalization's ``axes``: ints in [-ndim, ndim), no
    repeats, any order; empty means every axis (ONNX's ReduceMean rule,
    which the operator's function body uses)."""
    if isinstance(axes, (str, bytes)) or not hasattr(axes, "__iter__"):
        raise InvalidInputError(f"{name}: attribute 'axes' must be a list of integers, not {axes!r}")
    normalized = [axis_attribute(name, "axes", a, ndim) for a in axes]
    if len(set(normalized)) != len(normalized):
        raise InvalidInputError(f"{name}: attribute 'axes' repeats an axis: {list(axes)!r}")
    return sorted(normalized) if normalized else list(range(ndim))


def _bind(op, version, inputs, attributes):
    name = op.op_type
    plan = _Plan()
    plan.op = op
    X = float_input(name, op.inputs[0], inputs[0])
    at_least_rank(name, op.inputs[0], X, 1)
    plan.X = X
    if name == "MeanVarianceNormalization":
        plan.row_axes = _axes_attribute(name, attributes["axes"], X.ndim)
        plan.kind = _DIVIDE_BY_STD
        plan.p = None
    else:
        plan.row_axes = [axis_attribute(name, "axis", attributes["axis"], X.ndim, op.inputs[0])]
        plan.p = int_attribute(name, "p", attributes["p"])
        if plan.p not in (1, 2):
            raise InvalidInputError(f"{name}: attribute 'p'={plan.p} is not allowed (ONNX: 1 or 2)")
        plan.kind = _DIVIDE_BY_L1 if plan.p == 1 else _DIVIDE_BY_L2
    return plan


def _order(plan):
    """The transpose that moves the row's axes last (None: already last)."""
    ndim = plan.X.ndim
    kept = [a for a in range(ndim) if a not in plan.row_axes]
    front = kept + plan.row_axes
    return None if front == list(range(ndim)) else front


def _columns(plan, n_threads):
    """LpNormalization along an axis that is not last: the columns of the
    (outer, n, inner) view normalised where they are, instead of in a moved
    copy (same bits); float16/bfloat16 widened exactly to float32 first and
    rounded once at the end, as the row code does. None for MVN."""
    X = plan.X
    if plan.kind == _DIVIDE_BY_STD or not X.size:
        return None
    axis = plan.row_axes[0]
    ct = compute_dtype(X.dtype)
    x = contiguous(X, ct)
    y = np.empty(x.shape, ct)
    _isa.kernels.lp_columns(x, y, product(X.shape[:axis]), X.shape[axis], product(X.shape[axis + 1:]),
                            plan.kind, n_threads)
    return [rounded_to(y, X.dtype)]


def _compute(plan, mode, n_threads, all_outputs):
    X = plan.X
    storage = kernel_storage(X.dtype, compute_dtype(X.dtype))
    front = _order(plan)
    if front is not None:
        outputs = _columns(plan, n_threads)
        if outputs is not None:
            return outputs
    x = contiguous(X, storage) if front is None else moved_axes(X, front, storage, n_threads)
    y = np.empty(x.shape, storage)
    if x.size:
        cols = product(X.shape[a] for a in plan.row_axes)
        _isa.kernels.row_divide(x, y, x.size // cols, cols, plan.kind, n_threads)
    if front is not None:
        y = moved_axes(y, inverse(front), None, n_threads)
    return [rounded_to(y, X.dtype)]


def _reference(plan):
    if plan.kind == _DIVIDE_BY_STD:
        return list(_reference_rowdivide.mean_variance_normalization(plan.X, plan.row_axes))
    return list(_reference_rowdivide.lp_normalization(plan.X, plan.row_axes[0], plan.p))


def _direct(op, version, attributes, n_declared):
    """The straight call of the kernel for these attributes (OpDef's
    direct): MeanVarianceNormalization over trailing axes, LpNormalization
    along the last axis with p 1 or 2 (the routes' row_divide_settled and
    lp_settled decline anything else)."""
    if op is LP_NORMALIZATION:
        axis, p = attributes["axis"], attributes["p"]
        if type(axis) is not int or type(p) is not int:
            return None

        def direct(kernels, threads, fast, X):
            y = _isa.routes.lp_settled(X, axis, p, threads)
            return None if y is None else (y,)

        return direct
    axes = attributes["axes"]
    if type(axes) not in (tuple, list):
        return None
    axes = tuple(axes)

    def direct(kernels, threads, fast, X):
        k = _trailing(axes, X.ndim) if type(X) is np.ndarray else 0
        y = _isa.routes.row_divide_settled(X, k, _DIVIDE_BY_STD, threads) if k else None
        return None if y is None else (y,)

    return direct


MEAN_VARIANCE_NORMALIZATION = register(OpDef(
    "MeanVarianceNormalization", versions=(9, 13), inputs=("X",), n_required=1, outputs=("Y",),
    attributes={"axes": (0, 2, 3)}, bind=_bind, compute=_compute, reference=_reference, direct=_direct))

LP_NORMALIZATION = register(OpDef(
    "LpNormalization", versions=(1, 22), inputs=("input",), n_required=1, outputs=("output",),
    attributes={"axis": -1, "p": 2}, bind=_bind, compute=_compute, reference=_reference, direct=_direct))


def _trailing(axes, ndim):
    """How many trailing axes ``axes`` names exactly (0: not a trailing
    set of plain ints, or anything to validate)."""
    if type(axes) not in (tuple, list) or not axes or len(axes) > ndim:
        return 0
    seen = set()
    for a in axes:
        if type(a) is not int or not -ndim <= a < ndim:
            return 0
        seen.add(a % ndim)
    k = len(axes)
    return k if seen == set(range(ndim - k, ndim)) else 0


def _named(op, X, attributes, opset, mode, n_threads, full_output):
    outputs = op.call((X,), attributes, opset, mode, n_threads, full_output)
    return tuple(outputs) if full_output else outputs[0]


def mean_variance_normalization(X, *, axes=(0, 2, 3), opset=None, mode=None, n_threads=None,
                                full_output=False):
    """ONNX MeanVarianceNormalization (opsets 9, 13):
    ``Y = (X - mean) / sqrt(mean((X - mean)^2))`` over ``axes``, with no
    epsilon (as ONNX's formula and ONNX Runtime's kernel: a constant slice
    gives NaN). ``axes`` may be negative and in any order, not repeated;
    empty means every axis. Returns Y, or ``(Y,)`` with ``full_output=True``.
    """
    if not full_output and type(X) is np.ndarray and X.ndim >= 1:
        k = _trailing(axes, X.ndim)
        y = (_isa.routes.row_divide_named(MEAN_VARIANCE_NORMALIZATION, X, k, _DIVIDE_BY_STD, opset, mode, n_threads)
             if k else None)
        if y is not None:
            return y
    return _named(MEAN_VARIANCE_NORMALIZATION, X, {"axes": axes}, opset, mode, n_threads, full_output)


def lp_normalization(input, *, axis=-1, p=2, opset=None, mode=None, n_threads=None, full_output=False):
    """ONNX LpNormalization (opsets 1, 22): ``input / norm`` along ``axis``,
    the norm being the sum of ``|x|`` (p=1) or the square root of the sum of
    squares (p=2); a slice whose norm is 0 gives zeros (as ONNX Runtime).
    Returns the output, or ``(output,)`` with ``full_output=True``.
    """
    y = None if full_output else _isa.routes.lp_named(LP_NORMALIZATION, input, axis, p, opset, mode, n_threads)
    if y is not None:
        return y
    return _named(LP_NORMALIZATION, input, {"axis": axis, "p": p}, opset, mode, n_threads, full_output)
