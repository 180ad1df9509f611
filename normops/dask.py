"""normops' operators on dask arrays, under the top-level names.

Needs dask[array] (``pip install "normops[dask]"``); ``import normops``
does not import this module.

Row-wise operators (the LayerNormalization family, softmax, log_softmax,
hardmax and ``ops.softmax``/``ops.log_softmax``) first rechunk X so that
the axes one output depends on are whole (one chunk along each), then run
the in-memory function on every block with ``map_blocks``. Each row is
computed by one call of the same kernel on the same values, and the exact
flavour never depends on how rows are grouped into calls, so the result is
bit-identical to the in-memory call on the computed array, for every
chunking, scheduler and worker. Element-wise operators (sigmoid, exp32,
log32) keep the chunks as they are.

Arguments are checked when the graph is built (an invalid axis, a Scale
that does not broadcast... raise at once, not at ``compute()``): the
in-memory function is run once on a zero-size block of the output's
layout. The flavour (``mode=None``) is resolved at that moment too, so the
graph computes what the caller's ``normops.config`` said when it was
built, on whatever thread or worker runs it. ``n_threads`` is passed to
every block call; with dask's thread pool (one block per core) pass
``n_threads=1`` to avoid oversubscription (docs/batch.md explains why).

Reductions (``sum``, ``mean``, ``max``/``amax``, ``min``/``amin``,
``prod``, ``logsumexp``) rechunk so the reduced axes are whole and give the
in-memory call's bits; ``split_every=`` asks for a tree combine instead
(docs/dask.md).
"""
import builtins
import operator
import types

import numpy as np

try:
    import dask.array as da
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("normops.dask needs dask[array]: pip install 'normops[dask]'") from exc

from . import _config, activation as _activation, normalization as _normalization
from . import numpy_reductions as _reductions
from . import transcendental as _transcendental
from .softmax import HARDMAX, LOG_SOFTMAX, SOFTMAX, scipy_log_softmax, scipy_softmax
from .softmax import hardmax as _hardmax, log_softmax as _ops_log_softmax, softmax as _ops_softmax
from ._errors import InvalidInputError, UnsupportedError
from ._validate import axes_argument, axis_attribute

__all__ = [
    "layer_normalization", "rms_normalization", "simplified_layer_normalization",
    "softmax", "log_softmax", "hardmax", "sigmoid", "exp32", "log32", "ops",
    "mean", "amax", "amin", "prod", "logsumexp",  # sum, max, min: not in * (builtins)
]


def _dask_input(name, value, arg):
    """A dask array (array-likes are wrapped with da.asarray, one chunk)."""
    if isinstance(value, da.Array):
        return value
    try:
        return da.asarray(value)
    except Exception:
        raise InvalidInputError(f"{name}: input {arg!r} must be a dask array or an array-like, "
                                f"not {type(value).__name__}") from None


def _small_param(name, arg, value):
    """Scale/B: small NumPy arrays shipped with every block. A dask array
    is computed here, once."""
    if value is None:
        return None
    if isinstance(value, da.Array):
        return value.compute()
    return value


def _probe_shape(shape, whole):
    """The shape of a zero-size block: every kept axis 0, the whole ones as
    they are; a leading axis of 0 is added when no axis is kept (then the
    whole axes shift by one). Returns (shape, shift)."""
    if len(whole) == len(shape):
        return (0,) + tuple(shape), 1
    return tuple(s if i in whole else 0 for i, s in enumerate(shape)), 0


def _whole_along(X, whole):
    """X rechunked so every axis of ``whole`` is one chunk."""
    if all(len(X.chunks[a]) == 1 for a in whole):
        return X
    return X.rechunk({a: -1 for a in whole})


def _rowwise(name, X, whole, call):
    """``call(block, shift)`` on every block of X rechunked along ``whole``;
    ``call(probe, shift)`` first validates and gives the output dtype."""
    unknown = [a for a in whole if np.isnan(X.shape[a])]
    if unknown:
        raise UnsupportedError(f"{name}: the size of axis {unknown[0]} of the input is unknown (NaN chunks) and "
                               f"the operator needs it whole; call compute_chunk_sizes() on the input first")
    shape, shift = _probe_shape(X.shape, whole)
    probe = call(np.zeros(shape, X.dtype), shift)
    X = _whole_along(X, whole)
    return X.map_blocks(call, 0, dtype=probe.dtype, meta=np.empty((0,) * X.ndim, probe.dtype))


# ------------------------------------------------ LayerNormalization family

_STATS = {"layer_normalization": 2, "rms_normalization": 0, "simplified_layer_normalization": 1}
_OP_TYPES = {"layer_normalization": "LayerNormalization", "rms_normalization": "RMSNormalization",
             "simplified_layer_normalization": "SimplifiedLayerNormalization"}


def _norm(name, function, X, params, axis, kwargs, full_output):
    op_type = _OP_TYPES[name]
    X = _dask_input(op_type, X, "X")
    if X.ndim == 0:
        # the in-memory function names the problem
        function(np.zeros((), X.dtype), *params, axis=axis, **kwargs)
    ax = axis_attribute(op_type, "axis", axis, X.ndim)
    whole = tuple(range(ax, X.ndim))
    kwargs["mode"] = _config.resolve_mode(kwargs.get("mode"), op_type)

    def call(block, shift, full=False):
        return function(block, *params, axis=ax + shift, full_output=full, **kwargs)

    Y = _rowwise(op_type, X, whole, call)
    if not full_output:
        return Y
    # one kernel call per block gives all the outputs: a graph layer whose
    # blocks are tuples, then one layer per output picking its element
    Xw = _whole_along(X, whole)
    both = Xw.map_blocks(call, 0, True, dtype=Y.dtype, meta=np.empty((0,) * X.ndim, Y.dtype))
    stats_chunks = Xw.chunks[:ax] + ((1,),) * (X.ndim - ax)  # one value per row
    outputs = []
    for k in range(_STATS[name] + 1):
        dtype = Y.dtype if k == 0 else np.dtype(np.float32)
        outputs.append(both.map_blocks(operator.getitem, k, chunks=Xw.chunks if k == 0 else stats_chunks,
                                       dtype=dtype, meta=np.empty((0,) * X.ndim, dtype)))
    return tuple(outputs)


def layer_normalization(X, Scale, B=None, *, axis=-1, epsilon=1e-05, stash_type=1,
                        opset=None, mode=None, n_threads=None, full_output=False):
    """``normops.layer_normalization`` on a dask array X (Scale and B are
    small arrays sent with every block). The axes from ``axis`` on are
    rechunked whole; the result has X's other chunks. With
    ``full_output=True`` every output is a dask array, all computed by
    one kernel call per block."""
    params = (_small_param("layer_normalization", "Scale", Scale), _small_param("layer_normalization", "B", B))
    return _norm("layer_normalization", _normalization.layer_normalization, X, params, axis,
                 dict(epsilon=epsilon, stash_type=stash_type, opset=opset, mode=mode, n_threads=n_threads),
                 full_output)


def rms_normalization(X, scale, *, axis=-1, epsilon=1e-05, stash_type=1,
                      opset=None, mode=None, n_threads=None, full_output=False):
    """``normops.rms_normalization`` on a dask array X."""
    params = (_small_param("rms_normalization", "scale", scale),)
    return _norm("rms_normalization", _normalization.rms_normalization, X, params, axis,
                 dict(epsilon=epsilon, stash_type=stash_type, opset=opset, mode=mode, n_threads=n_threads),
                 full_output)


def simplified_layer_normalization(X, scale, *, axis=-1, epsilon=1e-05, stash_type=1, keep_dims=1,
                                   opset=None, mode=None, n_threads=None, full_output=False):
    """``normops.simplified_layer_normalization`` on a dask array X."""
    params = (_small_param("simplified_layer_normalization", "scale", scale),)
    return _norm("simplified_layer_normalization", _normalization.simplified_layer_normalization, X, params,
                 axis, dict(epsilon=epsilon, stash_type=stash_type, keep_dims=keep_dims, opset=opset,
                            mode=mode, n_threads=n_threads), full_output)


# ---------------------------------------------------------- softmax family

def _scipy_style(name, function, x, axis, mode, n_threads):
    x = _dask_input(name, x, "x")
    if x.dtype.kind in "iub":  # SciPy computes integers in float64
        x = x.astype(np.float64)
    axes = axes_argument(name, x.ndim, axis, "x")  # (a 0-d x takes axis None, 0, -1 or ())
    mode = _config.resolve_mode(mode, name)

    def call(block, shift):
        return function(block, axis=tuple(a + shift for a in axes) if axes else None,
                        mode=mode, n_threads=n_threads)

    if x.ndim == 0:
        return x.map_blocks(lambda b: function(b, mode=mode, n_threads=n_threads),
                            dtype=call(np.zeros((), x.dtype), 0).dtype)
    return _rowwise(name, x, axes, call)


def softmax(x, axis=None, *, mode=None, n_threads=None):
    """``normops.softmax`` (``scipy.special.softmax``'s signature) on a dask
    array. ``axis=None`` is every element: the whole array becomes one
    chunk, so give the axis the rows run along for large arrays."""
    return _scipy_style("softmax", scipy_softmax, x, axis, mode, n_threads)


def log_softmax(x, axis=None, *, mode=None, n_threads=None):
    """``normops.log_softmax`` on a dask array (see ``softmax``)."""
    return _scipy_style("log_softmax", scipy_log_softmax, x, axis, mode, n_threads)


def _onnx_rows(op, function, input, axis, opset, mode, n_threads, full_output):
    """ONNX Softmax/LogSoftmax/Hardmax: up to opset 12 the rows are X
    flattened at ``axis`` (the axes from ``axis`` on are whole), from 13
    they run along ``axis``."""
    name = op.op_type
    X = _dask_input(name, input, "input")
    version = op.version_for(opset)
    if X.ndim == 0:
        function(np.zeros((), X.dtype), axis=axis, opset=opset)  # raises, naming the problem
    default = 1 if version < 13 else -1
    ax = axis_attribute(name, "axis", default if axis is None else axis, X.ndim, "input")
    whole = tuple(range(ax, X.ndim)) if version < 13 else (ax,)
    mode = _config.resolve_mode(mode, name)

    def call(block, shift):
        return function(block, axis=ax + shift, opset=opset, mode=mode, n_threads=n_threads)

    Y = _rowwise(name, X, whole, call)
    return (Y,) if full_output else Y


def hardmax(input, *, axis=None, opset=None, mode=None, n_threads=None, full_output=False):
    """``normops.hardmax`` (ONNX Hardmax) on a dask array."""
    return _onnx_rows(HARDMAX, _hardmax, input, axis, opset, mode, n_threads, full_output)


def _onnx_softmax(input, *, axis=None, opset=None, mode=None, n_threads=None, full_output=False):
    """``normops.ops.softmax`` (ONNX Softmax) on a dask array."""
    return _onnx_rows(SOFTMAX, _ops_softmax, input, axis, opset, mode, n_threads, full_output)


def _onnx_log_softmax(input, *, axis=None, opset=None, mode=None, n_threads=None, full_output=False):
    """``normops.ops.log_softmax`` (ONNX LogSoftmax) on a dask array."""
    return _onnx_rows(LOG_SOFTMAX, _ops_log_softmax, input, axis, opset, mode, n_threads,
                      full_output)


# ------------------------------------------------------------ element-wise

def _elementwise(name, arg, function, x, **kwargs):
    x = _dask_input(name, x, arg)
    dtype = function(np.zeros((0,) * builtins.max(x.ndim, 1), x.dtype), **kwargs).dtype  # validates
    return x.map_blocks(function, dtype=dtype, meta=np.empty((0,) * x.ndim, dtype), **kwargs)


def sigmoid(X, *, opset=None, mode=None, n_threads=None, full_output=False):
    """``normops.sigmoid`` on a dask array (element-wise: chunks unchanged)."""
    mode = _config.resolve_mode(mode, "sigmoid")
    Y = _elementwise("sigmoid", "X", _activation.sigmoid, X, opset=opset, mode=mode, n_threads=n_threads)
    return (Y,) if full_output else Y


def _no_out(name, out):
    if out is not None:
        raise UnsupportedError(f"{name}: argument 'out' is not served on dask arrays (dask arrays are immutable)")


def exp32(x, out=None, *, n_threads=None):
    """``normops.exp32`` on a float32 dask array (``out`` is not served)."""
    _no_out("exp32", out)
    return _elementwise("exp32", "x", _transcendental.exp32, x, n_threads=n_threads)


def log32(x, out=None, *, n_threads=None):
    """``normops.log32`` on a float32 dask array (``out`` is not served)."""
    _no_out("log32", out)
    return _elementwise("log32", "x", _transcendental.log32, x, n_threads=n_threads)


# ------------------------------------------------------------ reductions



def _layout_safe(X, axes):
    """X with the reduced axes whole, and no kept axis of extent > 1 cut into
    chunks of one: a block must reduce each output's sequence in the same
    layout as the whole array (an extent-1 axis is dropped from the
    geometry, which could turn the column layout into the row layout)."""
    X = _whole_along(X, axes)
    thin = {a: _without_single(X.chunks[a]) for a in range(X.ndim)
            if a not in axes and X.shape[a] > 1 and 1 in X.chunks[a]}
    return X.rechunk(thin) if thin else X


def _without_single(chunks):
    """The chunk sizes of an axis with every chunk of one merged into a
    neighbour (the axis is longer than one)."""
    merged, carry = [], 0
    for c in chunks:
        c += carry
        carry = 0
        if c > 1:
            merged.append(c)
        elif merged:
            merged[-1] += c
        else:
            carry = c
    return tuple(merged)


def _reduction(name, function, a, axis, keepdims, split_every, tree_ok, kwargs):
    a = _dask_input(name, a, "a")
    axes = axes_argument(name, a.ndim, axis, "a")
    kwargs["mode"] = _config.resolve_mode(kwargs.get("mode"), name)
    # validates the arguments and gives the result's dtype
    probe = np.asarray(function(np.zeros((1,) * a.ndim, a.dtype), axis=axes, keepdims=True, **kwargs))

    def reduce_block(block, axis=axes, keepdims=True):
        return np.asarray(function(block, axis=axis, keepdims=keepdims, **kwargs))

    if split_every is not None:
        if not tree_ok:
            raise UnsupportedError(f"{name}: split_every (a tree combine) is not served; "
                                   f"the default gives the in-memory bits")
        return da.reduction(a, reduce_block, reduce_block, axis=axes, keepdims=keepdims,
                            dtype=probe.dtype, split_every=split_every, concatenate=True,
                            meta=np.empty((0,) * (a.ndim if keepdims else a.ndim - len(axes)), probe.dtype))
    unknown = [ax for ax in range(a.ndim) if np.isnan(a.shape[ax])]
    if unknown:
        raise UnsupportedError(f"{name}: the size of axis {unknown[0]} of the input is unknown (NaN chunks); "
                               f"call compute_chunk_sizes() on the input first")
    X = _layout_safe(a, axes)
    chunks = tuple((1,) if ax in axes else X.chunks[ax] for ax in range(X.ndim))
    out = X.map_blocks(reduce_block, chunks=chunks, dtype=probe.dtype,
                       meta=np.empty((0,) * X.ndim, probe.dtype))
    return out if keepdims else out.squeeze(axis=axes)


def sum(a, axis=None, dtype=None, keepdims=False, *, split_every=None, mode=None, n_threads=None):
    """``normops.sum`` on a dask array: the in-memory bits, or a tree combine
    with ``split_every`` (deterministic for a given chunking)."""
    return _reduction("sum", _reductions.sum, a, axis, keepdims, split_every, True,
                      {"dtype": dtype, "n_threads": n_threads, "mode": mode})


def prod(a, axis=None, dtype=None, keepdims=False, *, split_every=None, mode=None, n_threads=None):
    """``normops.prod`` on a dask array (see ``sum``)."""
    return _reduction("prod", _reductions.prod, a, axis, keepdims, split_every, True,
                      {"dtype": dtype, "n_threads": n_threads, "mode": mode})


def mean(a, axis=None, dtype=None, keepdims=False, *, split_every=None, mode=None, n_threads=None):
    """``normops.mean`` on a dask array: the in-memory bits. ``split_every``
    is refused: the mean of partial means is not the mean's arithmetic."""
    return _reduction("mean", _reductions.mean, a, axis, keepdims, split_every, False,
                      {"dtype": dtype, "n_threads": n_threads, "mode": mode})


def amax(a, axis=None, keepdims=False, *, split_every=None, mode=None, n_threads=None):
    """``normops.max`` on a dask array. The maximum does not depend on the
    order, so the tree combine gives the in-memory bits as well."""
    return _reduction("max", _reductions.max, a, axis, keepdims, split_every, True,
                      {"n_threads": n_threads, "mode": mode})


def amin(a, axis=None, keepdims=False, *, split_every=None, mode=None, n_threads=None):
    """``normops.min`` on a dask array (see ``amax``)."""
    return _reduction("min", _reductions.min, a, axis, keepdims, split_every, True,
                      {"n_threads": n_threads, "mode": mode})


max = amax
min = amin


def logsumexp(a, axis=None, keepdims=False, *, split_every=None, mode=None, n_threads=None):
    """``normops.logsumexp`` on a dask array; the tree combine takes the
    logsumexp of the blocks' logsumexps."""
    return _reduction("logsumexp", _reductions.logsumexp, a, axis, keepdims, split_every, True,
                      {"n_threads": n_threads, "mode": mode})


#: The ONNX-named functions, like ``normops.ops`` (Softmax and LogSoftmax
#: with ONNX's axis rules).
ops = types.SimpleNamespace(
    layer_normalization=layer_normalization,
    rms_normalization=rms_normalization,
    simplified_layer_normalization=simplified_layer_normalization,
    softmax=_onnx_softmax,
    log_softmax=_onnx_log_softmax,
    hardmax=hardmax,
    sigmoid=sigmoid,
)
for _f, _n in ((_onnx_softmax, "softmax"), (_onnx_log_softmax, "log_softmax")):
    _f.__name__ = _n
    _f.__qualname__ = "ops." + _n
del _f, _n
