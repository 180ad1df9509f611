"""Softmax, LogSoftmax and Hardmax (opsets 1, 11, 13).

Up to opset 12 the input is flattened to rows x cols at ``axis``; from
opset 13 the operator works along ``axis`` of the original shape. When that
axis is not last, a C-contiguous float32/float64 input goes to the kernel
that gathers columns into rows (``softmax_columns``); any other input has
the axis moved to the end in a scratch copy (docs/specification.md §9).
"""
import numpy as np

from . import _config, _isa
from ._transpose import inverse, moved_axes
from ._registry import OpDef, register
from ._validate import (
    array_input, at_least_rank, axes_argument, axis_attribute, compute_dtype, contiguous, float_input,
    kernel_storage, product, rounded_to,
)
from .reference import _softmax as _reference_softmax

_KINDS = {"Softmax": 0, "LogSoftmax": 1, "Hardmax": 2}


class _Plan:
    __slots__ = ("op", "X", "version", "axis", "rows", "cols", "moved", "compute_dtype")


def _bind(op, version, inputs, attributes):
    name = op.op_type
    X = float_input(name, "input", inputs[0])
    at_least_rank(name, "input", X, 1)
    plan = _Plan()
    plan.op = op
    plan.X = X
    plan.version = version
    plan.axis = axis_attribute(name, "axis", attributes["axis"], X.ndim, "input")
    if version < 13:  # flattened to 2-D at axis
        plan.rows, plan.cols = product(X.shape[:plan.axis]), product(X.shape[plan.axis:])
        plan.moved = False
    else:  # along axis
        plan.rows, plan.cols = product(X.shape) // max(X.shape[plan.axis], 1), X.shape[plan.axis]
        plan.moved = plan.axis != X.ndim - 1
    plan.compute_dtype = compute_dtype(X.dtype)
    return plan


def rows_view(X, axis, moved, dtype, n_threads=None):
    """X as contiguous rows of ``dtype`` (the axis moved last in a scratch
    copy when ``moved``: by the kernels' blocked copy when ``n_threads`` is
    given, by NumPy alone for the executable specification)."""
    if moved and n_threads is not None:
        return moved_axes(X, _last(X.ndim, axis), dtype, n_threads)
    if moved:
        X = np.moveaxis(X, axis, -1)
    return contiguous(X, dtype)


def _last(ndim, axis):
    """The permutation of np.moveaxis(x, axis, -1)."""
    return [a for a in range(ndim) if a != axis] + [axis]


def _run_rows(x, rows, cols, kind, mode, n_threads):
    """The kernel over the contiguous rows of x (any shape whose last
    ``cols`` elements form a row)."""
    y = _isa.routes.empty_placed(x)
    if x.size:
        _isa.kernels.softmax_rows(x, y, rows, cols, kind, mode == "fast", n_threads)
    return y


def _compute(plan, mode, n_threads, all_outputs):
    # float16/bfloat16 rows go to the kernel as they are: it widens and
    # rounds back itself (docs/specification.md §4.2)
    x = rows_view(plan.X, plan.axis, plan.moved, kernel_storage(plan.X.dtype, plan.compute_dtype), n_threads)
    y = _run_rows(x, plan.rows, plan.cols, _KINDS[plan.op.op_type], mode, n_threads)
    return [_restore(y, plan, n_threads)]


def _restore(y, plan, n_threads=None):
    """Back to X's layout and dtype (one rounding for float16/bfloat16); the
    copy as in ``rows_view``."""
    if plan.moved and n_threads is not None:
        y = moved_axes(y, inverse(_last(y.ndim, plan.axis)), None, n_threads)
    elif plan.moved:
        y = np.ascontiguousarray(np.moveaxis(y, -1, plan.axis))
    return rounded_to(y, plan.X.dtype)


def _reference(plan):
    x = rows_view(plan.X, plan.axis, plan.moved, plan.compute_dtype)
    y = _reference_softmax.rows(x.reshape(plan.rows, plan.cols), plan.op.op_type)
    return [_restore(y.reshape(x.shape), plan)]


def _attributes(version):
    return {"axis": 1 if version < 13 else -1}


def _register(op_type):
    return register(OpDef(
        op_type, versions=(1, 11, 13), inputs=("input",), n_required=1, outputs=("output",),
        attributes=_attributes, bind=_bind, compute=_compute, reference=_reference, direct=_direct))


def _direct(op, version, attributes, n_declared):
    """The straight call of the kernel for these attributes (OpDef's direct)."""
    axis = attributes["axis"]
    if type(axis) is not int:
        return None
    kind = _KINDS[op.op_type]

    def direct(kernels, threads, fast, x):
        y = kernels.softmax_direct(x, axis, version, kind, fast, threads)
        return None if y is None else (y,)

    return direct


SOFTMAX = _register("Softmax")
LOG_SOFTMAX = _register("LogSoftmax")
HARDMAX = _register("Hardmax")


def _named(op, input, axis, opset, mode, n_threads, full_output):
    """The validated path of the named functions, whose first step is the
    kernels' softmax_named (the route in C)."""
    version = op.version_for(opset)
    attributes = {"axis": _attributes(version)["axis"] if axis is None else axis}
    outputs = op.call((input,), attributes, opset, mode, n_threads, full_output)
    return tuple(outputs) if full_output else outputs[0]


def softmax(input, *, axis=None, opset=None, mode=None, n_threads=None, full_output=False):
    """ONNX Softmax (opsets 1, 11, 13); ``axis=None`` is the opset's default
    (1 up to opset 12, -1 from 13). The NumPy/SciPy-style function is
    ``normops.softmax(x, axis=None)``; this one is ``normops.ops.softmax``."""
    y = None if full_output else _isa.routes.softmax_named(SOFTMAX, input, axis, opset, mode, n_threads, 0)
    return _named(SOFTMAX, input, axis, opset, mode, n_threads, full_output) if y is None else y


def log_softmax(input, *, axis=None, opset=None, mode=None, n_threads=None, full_output=False):
    """ONNX LogSoftmax (opsets 1, 11, 13); see ``softmax``."""
    y = None if full_output else _isa.routes.softmax_named(LOG_SOFTMAX, input, axis, opset, mode, n_threads, 1)
    return _named(LOG_SOFTMAX, input, axis, opset, mode, n_threads, full_output) if y is None else y


def hardmax(input, *, axis=None, opset=None, mode=None, n_threads=None, full_output=False):
    """ONNX Hardmax (opsets 1, 11, 13): 1 at the first maximum along the
    axis (or of each flattened row up to opset 12), 0 elsewhere; a row
    holding NaN is all 0."""
    y = None if full_output else _isa.routes.softmax_named(HARDMAX, input, axis, opset, mode, n_threads, 2)
    return _named(HARDMAX, input, axis, opset, mode, n_threads, full_output) if y is None else y


# ---------------------------------------------------------- SciPy style



def _scipy_style(name, kind, x, axis, mode, n_threads):
    """scipy.special.softmax / log_softmax semantics: axis None (every
    element), an int or a tuple of ints; integer input is computed in
    float64 like SciPy; float dtypes are kept."""
    if type(x) is np.ndarray and x.ndim and x.size:  # the named functions' direct route
        kernels = _isa.kernels
        settings = _isa.routes.direct_settings(mode, n_threads)
        if settings is not None and (axis is None or type(axis) is int):
            threads, fast = settings
            y = (kernels.softmax_last_axis(x, x.size, kind, fast, threads) if axis is None  # one row
                 else kernels.softmax_direct(x, axis, 13, kind, fast, threads))  # along the axis, as from opset 13
            if y is not None:
                return y
    x = array_input(name, "x", x)
    if x.dtype.kind in "iub":
        x = x.astype(np.float64)
    x = float_input(name, "x", x)
    mode = _config.resolve_mode(mode, name)
    n_threads = _config.kernel_threads(n_threads, name)
    axes = axes_argument(name, x.ndim, axis, "x")
    kept = [a for a in range(x.ndim) if a not in axes]
    front = kept + list(axes)
    moved = moved_axes(x, front, kernel_storage(x.dtype, compute_dtype(x.dtype)), n_threads)
    rows, cols = product(moved.shape[:len(kept)]), product(moved.shape[len(kept):])
    y = _run_rows(moved, rows, cols, kind, mode, n_threads)
    y = rounded_to(moved_axes(y, inverse(front), None, n_threads), x.dtype)
    return y[()] if y.ndim == 0 else y  # a 0-d input gives a scalar, as in SciPy


def scipy_softmax(x, axis=None, *, mode=None, n_threads=None):
    """``scipy.special.softmax(x, axis=None)``, computed by normops' exact
    (or fast) Softmax kernel: exp(x - max) / sum over ``axis`` (None: every
    element; an int or a tuple of ints)."""
    return _scipy_style("softmax", 0, x, axis, mode, n_threads)


def scipy_log_softmax(x, axis=None, *, mode=None, n_threads=None):
    """``scipy.special.log_softmax(x, axis=None)`` by normops' kernels:
    x - max - log(sum(exp(x - max))). A row holding NaN or +inf is NaN
    throughout (docs/specification.md §9.2; SciPy gives -inf beside an +inf)."""
    return _scipy_style("log_softmax", 1, x, axis, mode, n_threads)
