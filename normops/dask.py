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
``prod``, ``logsumexp``) give the in-memory call's bits: sequences shorter
than 2^20 terms with the reduced axes whole; longer ones in chunks aligned
on the spec's 2^16-term blocks, reduced to block results on the workers and
combined in block order (docs/specification.md §11.4). ``split_every=`` asks for a tree
combine instead. ``argmax``/``argmin`` combine the chunks' first winners,
``cumsum``/``cumprod`` carry the running value from chunk to chunk; both
keep the in-memory bits (docs/dask.md).

``normops.dask.ops`` has the ONNX-named functions as ``normops.ops``: the
row-wise ones above, ``sigmoid``, the ten ``reduce_*`` (the in-memory
bits; the block-aligned route for long ReduceSum/Mean/Prod/LogSumExp of
floats, the reduced axes whole otherwise), ``arg_max``/``arg_min`` and
``cum_sum``/``cum_prod`` (the axis made whole).
"""
import builtins
import functools
import math
import operator
import types

import numpy as np

try:
    import dask.array as da
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("normops.dask needs dask[array]: pip install 'normops[dask]'") from exc

from . import _config, _isa, activation as _activation, normalization as _normalization, reduction as _reduction_ops
from . import arg_reduce as _argreduce, cumulative as _cumulative_ops, numpy_style as _reductions
from . import transcendental as _transcendental
from .softmax import HARDMAX, LOG_SOFTMAX, SOFTMAX, scipy_log_softmax, scipy_softmax
from .softmax import hardmax as _hardmax, log_softmax as _ops_log_softmax, softmax as _ops_softmax
from ._errors import InvalidInputError, UnsupportedError
from ._spec import BLOCK_TERMS, LONG_TERMS
from ._validate import axes_argument, axis_attribute

__all__ = [
    "layer_normalization", "rms_normalization", "simplified_layer_normalization",
    "softmax", "log_softmax", "hardmax", "sigmoid", "exp32", "log32", "ops",
    "mean", "amax", "amin", "prod", "logsumexp", "argmax", "argmin", "cumsum", "cumprod",  # sum, max, min: not in * (builtins)
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


def _sizes_known(name, X, axes, what="the input"):
    """Refuse axes of X whose size dask does not know (NaN chunks)."""
    unknown = [ax for ax in axes if np.isnan(X.shape[ax])]
    if unknown:
        raise UnsupportedError(f"{name}: the size of axis {unknown[0]} of {what} is unknown (NaN chunks); "
                               f"call compute_chunk_sizes() on the input first")


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

# docs/specification.md §11.4: when an output's sequence has at least LONG_TERMS
# terms (normops._spec), it is reduced in blocks of BLOCK_TERMS terms whose
# results are combined in block order. The blocks depend only on positions in
# the sequence, so chunks that start on block boundaries can be reduced apart.


def _layout_safe(X, axes):
    """X with the reduced axes whole, and no kept axis of extent > 1 cut into
    chunks of one: a block must reduce each output's sequence in the same
    layout as the whole array (an extent-1 axis is dropped from the
    geometry, which could turn the column layout into the row layout)."""
    return _no_single_kept(_whole_along(X, axes), axes)


def _no_single_kept(X, axes):
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


class _Long(types.SimpleNamespace):
    """The blocked route of a reduction over ``axes`` whose sequences are
    long (docs/specification.md §11.4). Chunks run along ``split`` (the first reduced
    axis of extent > 1); the other reduced axes are whole, so a chunk holds
    a contiguous stretch of every output's sequence, ``per_unit`` terms per
    index of ``split``. A boundary at a multiple of ``unit`` along
    ``split`` is a block boundary. ``order`` lists the axes in sequence
    order: the kept axes before the last reduced one (``n_lead`` of them),
    the reduced axes (``n_red``), then the kept axes after it, which are the
    column layout's side-by-side outputs (``column``: some has extent > 1)."""


def _long_plan(shape, axes):
    """The ``_Long`` of a reduction of ``shape`` over ``axes``, or None when
    the sequences are shorter than LONG_TERMS or one block unit already
    covers the whole split axis (the whole-axis route then serves)."""
    live = [i for i in sorted(axes) if shape[i] != 1]
    if not live or 0 in shape or math.prod(shape[i] for i in live) < LONG_TERMS:
        return None
    per_unit = math.prod(shape[i] for i in live[1:])
    unit = BLOCK_TERMS // math.gcd(per_unit, BLOCK_TERMS)
    if unit >= shape[live[0]]:
        return None
    lead = [i for i in range(len(shape)) if i not in axes and i < live[-1]]
    trail = [i for i in range(len(shape)) if i not in axes and i > live[-1]]
    return _Long(split=live[0], per_unit=per_unit, unit=unit, axes=axes,
                 order=tuple(lead + sorted(axes) + trail), n_lead=len(lead), n_red=len(axes),
                 column=any(shape[i] > 1 for i in trail))


def _on_block_boundaries(chunks, unit):
    """Chunk sizes whose boundaries are those of ``chunks`` moved to the
    nearest multiple of ``unit`` (boundaries that meet are merged)."""
    n, at, bounds = builtins.sum(chunks), 0, [0]
    for c in chunks[:-1]:
        at += c
        b = builtins.min((at + unit // 2) // unit * unit, n)
        if b > bounds[-1]:
            bounds.append(b)
    if bounds[-1] < n:
        bounds.append(n)
    return tuple(b - a for a, b in zip(bounds, bounds[1:]))


def _aligned(X, plan):
    """X rechunked for the blocked route: chunk boundaries along the split
    axis on block boundaries, the other reduced axes whole, and no kept axis
    cut into chunks of one (``_layout_safe``)."""
    change = {a: -1 for a in plan.axes if a != plan.split and len(X.chunks[a]) > 1}
    along = _on_block_boundaries(X.chunks[plan.split], plan.unit)
    if along != X.chunks[plan.split]:
        change[plan.split] = along
    return _no_single_kept(X.rechunk(change) if change else X, plan.axes)


def _sequences(x, plan):
    """The block x as O x R x C: outputs, the terms of their sequences (in
    sequence order), and the column layout's outputs side by side (C = 1 in
    the row layout)."""
    t = np.transpose(x, plan.order)
    O = math.prod(t.shape[:plan.n_lead])
    R = math.prod(t.shape[plan.n_lead:plan.n_lead + plan.n_red])
    return t.reshape(O, R, t.size // (O * R) if O * R else 0)


def _block_results(x3, function, n_threads, mode):
    """(O, nb, C) results of the BLOCK_TERMS-term blocks of the O x R x C
    sequences x3, each block reduced by ``function`` as the whole array's
    layout reduces it: normops computes a (O, k, BLOCK_TERMS, C) array over
    axis 2 in the column layout when C > 1 (sequentially per output) and in
    the row layout when C = 1 (Sum16), as the in-memory kernel does a block."""
    O, R, C = x3.shape
    full = R // BLOCK_TERMS
    parts = []
    if full:
        head = x3[:, :full * BLOCK_TERMS].reshape(O, full, BLOCK_TERMS, C)
        parts.append(function(head, axis=2, n_threads=n_threads, mode=mode))
    if R > full * BLOCK_TERMS:
        parts.append(function(x3[:, full * BLOCK_TERMS:], axis=1, keepdims=True, n_threads=n_threads, mode=mode))
    return np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]


def _exp_terms(d, n_threads, mode):
    """normops' exponential of the float32 or float64 array d (the
    ReduceLogSumExp terms), in place: the flavour's, as the in-memory
    kernel takes them (float32: exp32, or the fast exponential in the fast
    flavour; float64: exp64 in both)."""
    threads = _config.resolve_threads(n_threads, "logsumexp")
    if d.dtype == np.float32:
        exp = _isa.kernels.exp32_fast_into if mode == "fast" else _isa.kernels.exp32_into
        exp(d.reshape(-1), d.reshape(-1), threads)
        return d
    _isa.kernels.exp64_into(d.reshape(-1), d.reshape(-1), threads)
    return d


def _log_of(s, n_threads):
    """normops' logarithm of the float32 or float64 array s."""
    if s.dtype == np.float32:
        return _transcendental.log32(s, n_threads=n_threads)
    out = np.empty_like(s)
    _isa.kernels.log64_into(s.reshape(-1), out.reshape(-1), _config.resolve_threads(n_threads, "logsumexp"))
    return out


def _log1p_of(r, n_threads):
    """normops' log1p of the float32 or float64 array r."""
    out = np.empty_like(r)
    kernel = _isa.kernels.log1p32_into if r.dtype == np.float32 else _isa.kernels.log1p64_into
    kernel(np.ascontiguousarray(r).reshape(-1), out.reshape(-1), _config.resolve_threads(n_threads, "logsumexp"))
    return out


def _center(m):
    """The maxima the exponential's arguments are taken from (0 where the
    maximum is not finite: the result is then the maximum itself)."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(m), m, m.dtype.type(0))


def _chunk_blocks(block, *maxima, plan, function, work, n_threads, mode, skip_max=False):
    """The block results of one chunk, in the chunk's axes: the number of
    its blocks along the split axis, 1 along the other reduced axes. With
    ``maxima`` (logsumexp), the terms are exp(x - m), the difference
    rounded before the exponential (with ``skip_max``, SciPy's form, +0 at
    the elements equal to the maximum)."""
    x3 = _sequences(block.astype(work, copy=False), plan)
    if maxima:
        with np.errstate(all="ignore"):
            e = _exp_terms(x3 - _sequences(_center(maxima[0]), plan), n_threads, mode)
            if skip_max:  # docs/specification.md §16.2: the terms of the elements equal to the maximum are +0
                e = np.where(x3 == _sequences(maxima[0], plan), work.type(0), e)
            x3 = e
    r = _block_results(x3, function, n_threads, mode)
    shape = [block.shape[a] for a in plan.order]
    for k in range(plan.n_lead, plan.n_lead + plan.n_red):
        shape[k] = r.shape[1] if plan.order[k] == plan.split else 1
    return r.reshape(shape).transpose(np.argsort(plan.order))


def _canonical(y):
    """y with every NaN the canonical quiet NaN (docs/specification.md §4.5)."""
    if y.dtype.kind == "f" and np.isnan(y).any():
        y = np.where(np.isnan(y), y.dtype.type(np.nan), y)
    return y


def _combine_blocks(partials, *extra, plan, function, finishing, count, out_dtype, n_threads, mode):
    """One output chunk from the block results of its outputs (along the
    split axis, in block order): Sum16 for sums, sequential for products,
    the earliest winner for max/min, then the kind's finishing step
    (logsumexp: ``extra`` holds the maxima and how many elements equal
    them)."""
    q = np.ascontiguousarray(np.moveaxis(partials, plan.split, -1))
    # the block results are the last axis of q: normops reduces it in the row layout
    y = np.moveaxis(np.asarray(function(q, axis=-1, keepdims=True, n_threads=n_threads, mode=mode)), -1, plan.split)
    with np.errstate(all="ignore"):
        if finishing == "mean":  # the count rounded to the arithmetic type, as the in-memory mean
            y = y / y.dtype.type(count)
        elif finishing == "onnx_logsumexp":  # an infinite or NaN maximum is the result
            m = extra[0]
            y = np.where(np.isfinite(m), m + _log_of(y, n_threads), m)
        elif finishing == "logsumexp":  # docs/specification.md §16.2, without weights
            m, at_max = extra
            w = at_max.astype(y.dtype)
            lse = (_log1p_of(y / w, n_threads) + _log_of(w, n_threads)) + m
            y = np.where(np.isfinite(m), lse, m)  # the direct form gives m itself there
        y = _canonical(y)
        return y if y.dtype == out_dtype else y.astype(out_dtype)


def _long_reduce(X, plan, block_function, combine_function, finishing, work, out_dtype, n_threads, mode,
                 maxima=None, at_max=None):
    """The blocked route: block results on the workers, one combine per
    output chunk, all in the graph (X is ``_aligned``). Keeps the dims.
    ``maxima`` (logsumexp): the maxima the terms are centred on; ``at_max``
    (SciPy's form): how many elements equal them."""
    s = plan.split
    counts = tuple(-(-c * plan.per_unit // BLOCK_TERMS) for c in X.chunks[s])
    chunks = tuple(counts if a == s else (1,) if a in plan.axes else X.chunks[a] for a in range(X.ndim))
    extra = () if maxima is None else (maxima,)
    P = da.map_blocks(functools.partial(_chunk_blocks, plan=plan, function=block_function, work=work,
                                        n_threads=n_threads, mode=mode, skip_max=at_max is not None),
                      X, *extra, chunks=chunks, dtype=work, meta=np.empty((0,) * X.ndim, work))
    if at_max is not None:
        extra = (maxima, at_max)
    P = P.rechunk({s: -1})
    out_chunks = tuple((1,) if a in plan.axes else X.chunks[a] for a in range(X.ndim))
    count = math.prod(X.shape[a] for a in plan.axes)
    return da.map_blocks(functools.partial(_combine_blocks, plan=plan, function=combine_function,
                                           finishing=finishing, count=count, out_dtype=out_dtype,
                                           n_threads=n_threads, mode=mode),
                         P, *extra, chunks=out_chunks, dtype=out_dtype, meta=np.empty((0,) * X.ndim, out_dtype))


def _narrow_float(dtype):
    return (dtype.kind == "f" and dtype.itemsize == 2) or dtype.name == "bfloat16"


#: name -> (function of a block and of the combine, finishing); logsumexp
#: sums the exponential terms after a max.
_LONG_KINDS = {
    "sum": (_reductions.sum, None),
    "mean": (_reductions.sum, "mean"),
    "prod": (_reductions.prod, None),
    "max": (_reductions.max, None),
    "min": (_reductions.min, None),
    "logsumexp": (_reductions.sum, "logsumexp"),
    "ReduceLogSumExp": (_reductions.sum, "onnx_logsumexp"),
}


def _long_route(name, a, axes, plan, out_dtype, dtype, n_threads, mode):
    """The blocked route of ``name``; None when the aligned chunking leaves
    the split axis in one chunk (the whole-axis route is then as cheap)."""
    X = _aligned(a, plan)
    if X.numblocks[plan.split] == 1:
        return None
    function, finishing = _LONG_KINDS[name]
    if name in ("max", "min"):  # exact in the input's own type
        return _long_reduce(X, plan, function, function, None, a.dtype, out_dtype, n_threads, mode)
    # float16/bfloat16 are computed in float32 and rounded once, as in memory;
    # integers wrap around in 64 bits (the same bits once cast back)
    work = np.dtype(np.float32) if _narrow_float(out_dtype) else out_dtype
    if work.kind in "iu":
        work = np.dtype(np.int64 if work.kind == "i" else np.uint64)
    if dtype is not None:  # NumPy's dtype= converts the input first
        X = X.astype(dtype)
    X = X.astype(work)
    maxima = counts = None
    if name == "ReduceLogSumExp":
        maxima = _long_reduce(X, plan, _reductions.max, _reductions.max, None, work, work, n_threads, mode)
    if name == "logsumexp":
        maxima = _long_reduce(X, plan, _reductions.max, _reductions.max, None, work, work, n_threads, mode)
        # how many elements equal each maximum (an integer count: any order gives it)
        counts = (X == maxima).sum(axis=tuple(plan.axes), keepdims=True, dtype=np.int64)
        counts = counts.rechunk(maxima.chunks)
    return _long_reduce(X, plan, function, function, finishing, work, out_dtype, n_threads, mode, maxima,
                        counts)


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
    _sizes_known(name, a, range(a.ndim))
    plan = _long_plan(a.shape, frozenset(axes))
    out = None
    if plan is not None:
        out = _long_route(name, a, axes, plan, probe.dtype, kwargs.get("dtype"), kwargs["n_threads"],
                          kwargs["mode"])
    if out is None:
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


# ------------------------------------------------- arg-reductions, cumulative

def _tuple_layer(X, function, outputs, chunks):
    """One task per block of X computing a tuple, then one dask array per
    element of it (``outputs``: their dtypes), sharing those tasks."""
    both = X.map_blocks(function, chunks=chunks, dtype=outputs[0], meta=np.empty((0,) * X.ndim, outputs[0]))
    return [both.map_blocks(operator.getitem, k, chunks=chunks, dtype=d, meta=np.empty((0,) * X.ndim, d))
            for k, d in enumerate(outputs)]


def _chunk_winner(block, function, axis, n_threads, block_info=None):
    """The chunk's winner of the scan, as (value, index in the whole array):
    along ``axis`` (keeping it, extent 1), or over all of the chunk (axis
    None; the index is then the flat index in the whole array, and a
    chunk's first winner in its own row-major order is also the earliest
    in the whole array's)."""
    start = [s for s, _ in block_info[0]["array-location"]]
    if axis is None:
        i = function(block, n_threads=n_threads)
        value = block.reshape(-1)[i]
        at = [int(k) + s for k, s in zip(np.unravel_index(i, block.shape), start)]
        flat = np.ravel_multi_index(at, block_info[0]["shape"]) if at else 0
        return np.full((1,) * block.ndim, value, block.dtype), np.full((1,) * block.ndim, flat, np.intp)
    i = function(block, axis=axis, keepdims=True, n_threads=n_threads)
    return np.take_along_axis(block, i, axis), i + start[axis]


def _earliest_winner(values, indices, function, axis, keepdims):
    """The scan's result from the chunks' winners: the first best of the
    winners in sequence order (NaN: the first NaN), as one scan gives."""
    if axis is None:
        order = np.argsort(indices.reshape(-1), kind="stable")
        i = indices.reshape(-1)[order][function(values.reshape(-1)[order])]
        return np.full((1,) * values.ndim if keepdims else (), i, np.intp)
    w = function(values, axis=axis, keepdims=True)
    i = np.take_along_axis(indices, w, axis)
    return i if keepdims else i.squeeze(axis)


def _arg(name, function, a, axis, out, keepdims, n_threads):
    _no_out(name, out)
    a = _dask_input(name, a, "a")
    _sizes_known(name, a, range(a.ndim))
    # validates (an empty sequence raises here, as in memory)
    probe = np.asarray(function(np.zeros(tuple(builtins.min(n, 1) for n in a.shape), a.dtype), axis=axis,
                                keepdims=keepdims))
    if axis is not None:
        axis = axis_attribute(name, "axis", axis, a.ndim, "a")
        if a.shape[axis] == 0:
            function(np.zeros(a.shape, a.dtype), axis=axis)  # raises, naming the problem
    elif a.size == 0:
        function(np.zeros(a.shape, a.dtype))
    if a.ndim == 0:
        return a.map_blocks(lambda b: np.asarray(function(b)), dtype=probe.dtype, meta=np.empty((), probe.dtype))
    winners = tuple((1,) * len(c) if axis is None or ax == axis else c for ax, c in enumerate(a.chunks))
    V, I = _tuple_layer(a, functools.partial(_chunk_winner, function=function, axis=axis, n_threads=n_threads),
                        (a.dtype, probe.dtype), winners)
    whole = dict.fromkeys(range(a.ndim) if axis is None else (axis,), -1)
    V, I = V.rechunk(whole), I.rechunk(whole)
    if axis is None:
        chunks = ((1,),) * a.ndim if keepdims else ()
    else:
        chunks = tuple((1,) if ax == axis else c for ax, c in enumerate(a.chunks) if keepdims or ax != axis)
    return da.map_blocks(functools.partial(_earliest_winner, function=function, axis=axis, keepdims=keepdims),
                         V, I, chunks=chunks, dtype=probe.dtype, drop_axis=[] if keepdims else (
                             list(range(a.ndim)) if axis is None else [axis]),
                         meta=np.empty((0,) * len(chunks), probe.dtype))


def argmax(a, axis=None, out=None, *, keepdims=False, n_threads=None):
    """``normops.argmax`` on a dask array: each chunk's first winner, then
    the earliest winner among the chunks, which is the in-memory scan's
    index for every chunking (``out`` is not served)."""
    return _arg("argmax", _argreduce.argmax, a, axis, out, keepdims, n_threads)


def argmin(a, axis=None, out=None, *, keepdims=False, n_threads=None):
    """``normops.argmin`` on a dask array (see ``argmax``)."""
    return _arg("argmin", _argreduce.argmin, a, axis, out, keepdims, n_threads)


def _along(axis, ndim, index):
    return (slice(None),) * axis + (index,) + (slice(None),) * (ndim - axis - 1)


def _cumulate_chunk(block, carry, function, axis, n_threads):
    """The chunk's running values, starting from ``carry`` (the running
    value before the chunk, extent 1 along ``axis``; None for the first
    chunk): the carry is put in front and dropped from the result, so every
    output is ``previous op x`` in the sequential order."""
    if carry is None:
        return function(block, axis=axis, n_threads=n_threads)
    y = function(np.concatenate([carry, block], axis=axis), axis=axis, n_threads=n_threads)
    return y[_along(axis, y.ndim, slice(1, None))]


def _carry_after(y, carry, axis):
    """The running value after a chunk (its last output; the carry itself
    through a chunk of no elements)."""
    if y.shape[axis] == 0:
        return carry
    return y[_along(axis, y.ndim, slice(-1, None))].copy()


def _cumulative(name, function, a, axis, dtype, out, n_threads):
    _no_out(name, out)
    a = _dask_input(name, a, "a")
    probe = np.asarray(function(np.zeros((1,) * a.ndim, a.dtype), axis=axis, dtype=dtype))  # validates
    if axis is None or a.ndim == 0:
        a, axis = a.reshape(-1), 0
    else:
        axis = axis_attribute(name, "axis", axis, a.ndim, "a")
    _sizes_known(name, a, (axis,))
    out_dtype = probe.dtype
    # the arithmetic type: float16/bfloat16 keep a float32 running value and
    # round each output once, narrow integers wrap the same in 64 bits
    if _narrow_float(out_dtype):
        X = a.astype(out_dtype).astype(np.float32)
    elif out_dtype.kind in "iu":
        wide = np.dtype(np.int64 if out_dtype.kind == "i" else np.uint64)
        X = (a.astype(out_dtype) if out_dtype.itemsize >= 4 else a).astype(wide)
    else:
        X = a.astype(out_dtype)
    step = functools.partial(_cumulate_chunk, function=function, axis=axis, n_threads=n_threads)
    token = tokenize(X, name, axis, n_threads)
    run, carried = f"normops-{name}-{token}", f"normops-{name}-carry-{token}"
    graph = {}
    for index in np.ndindex(*X.numblocks):
        j = index[axis]
        before = (carried,) + index[:axis] + (j - 1,) + index[axis + 1:] if j else None
        graph[(run,) + index] = (step, (X.name,) + index, before)
        graph[(carried,) + index] = (_carry_after, (run,) + index, before, axis)
    layer = HighLevelGraph.from_collections(run, graph, dependencies=[X])
    Y = da.Array(layer, run, X.chunks, dtype=X.dtype, meta=np.empty((0,) * X.ndim, X.dtype))
    return Y if Y.dtype == out_dtype else Y.astype(out_dtype)


def cumsum(a, axis=None, dtype=None, out=None, *, n_threads=None):
    """``normops.cumsum`` on a dask array: each chunk along ``axis`` starts
    from the running value after the chunks before it, so the sums run in
    the in-memory sequential order (a chain of tasks along the axis; the
    other axes' chunks run in parallel). ``out`` is not served."""
    return _cumulative("cumsum", _cumulative_ops.cumsum, a, axis, dtype, out, n_threads)


def cumprod(a, axis=None, dtype=None, out=None, *, n_threads=None):
    """``normops.cumulative.cumprod`` on a dask array (see ``cumsum``)."""
    return _cumulative("cumprod", _cumulative_ops.cumprod, a, axis, dtype, out, n_threads)


# ------------------------------------------- ONNX-named reductions and scans
#
# The ONNX-named functions give their in-memory call's bits too. Each block
# runs the in-memory function with the reduced axes (or the scanned axis)
# whole; ReduceSum, ReduceMean, ReduceProd and ReduceLogSumExp of floats,
# whose arithmetic is that of sum, mean, prod and logsumexp, take the
# block-aligned route on sequences of 2^20 terms or more instead. ArgMax,
# ArgMin, ReduceMax and ReduceMin keep their axes whole: their NaN rule
# ("NaN only when first") does not combine from chunks, since a chunk that
# starts with NaN would report it. CumSum and CumProd (any direction,
# exclusive or not) scan the whole axis per block.

#: ONNX reductions of floats whose arithmetic is that of a NumPy-style one
#: (the same accumulation and finishing): the long sequences' blocked route.
_ONNX_LONG = {"ReduceSum": "sum", "ReduceMean": "mean", "ReduceProd": "prod",
              "ReduceLogSumExp": "ReduceLogSumExp"}


def _onnx_reduction(op_type, function, data, axes, keepdims, noop_with_empty_axes, opset, mode, n_threads):
    data = _dask_input(op_type, data, "data")
    axes = _small_param(op_type, "axes", axes)
    mode = _config.resolve_mode(mode, op_type)
    call = functools.partial(function, axes=axes, noop_with_empty_axes=noop_with_empty_axes, opset=opset,
                             mode=mode, n_threads=n_threads)
    sample = np.zeros((1,) * data.ndim, data.dtype)
    probe = np.asarray(call(sample, keepdims=keepdims))  # checks every argument; the output dtype
    reduced = tuple(sorted(_reduction_ops.reduced_axes(op_type, sample, axes, keepdims, noop_with_empty_axes,
                                                       opset)))
    _sizes_known(op_type, data, reduced, "input 'data'")
    out = None
    plan = _long_plan(data.shape, frozenset(reduced)) if op_type in _ONNX_LONG else None
    if plan is not None and data.dtype.kind == "f" and probe.dtype == data.dtype:
        out = _long_route(_ONNX_LONG[op_type], data, reduced, plan, probe.dtype, None, n_threads, mode)
    if out is None:
        X = _layout_safe(data, reduced)
        chunks = tuple((1,) if ax in reduced else X.chunks[ax] for ax in range(X.ndim))
        out = X.map_blocks(call, keepdims=1, chunks=chunks, dtype=probe.dtype,
                           meta=np.empty((0,) * X.ndim, probe.dtype))
    return out if keepdims else out.squeeze(axis=reduced)


def _onnx_reduction_function(op_type, function):
    name = function.__name__

    def reduce(data, axes=None, *, keepdims=1, noop_with_empty_axes=0, opset=None, mode=None, n_threads=None):
        return _onnx_reduction(op_type, function, data, axes, keepdims, noop_with_empty_axes, opset, mode,
                               n_threads)
    reduce.__name__ = name
    reduce.__qualname__ = "ops." + name
    reduce.__doc__ = (f"``normops.ops.{name}`` on a dask array: the in-memory bits. The reduced axes are made "
                      f"whole, except where ReduceSum, ReduceMean, ReduceProd and ReduceLogSumExp of floats "
                      f"take the block-aligned route (sequences of 2^20 terms or more).")
    return reduce


def _onnx_arg(op_type, function, data, axis, keepdims, select_last_index, opset, mode, n_threads):
    data = _dask_input(op_type, data, "data")
    mode = _config.resolve_mode(mode, op_type)
    call = functools.partial(function, select_last_index=select_last_index, opset=opset, mode=mode,
                             n_threads=n_threads)
    call(np.zeros((1,) * data.ndim, data.dtype), axis=axis, keepdims=keepdims)  # checks every argument
    ax = axis_attribute(op_type, "axis", axis, data.ndim, "data")
    _sizes_known(op_type, data, (ax,), "input 'data'")
    X = _whole_along(data, (ax,))
    chunks = tuple((1,) if a == ax else X.chunks[a] for a in range(X.ndim))
    out = X.map_blocks(call, axis=ax, keepdims=1, chunks=chunks, dtype=np.int64,
                       meta=np.empty((0,) * X.ndim, np.int64))
    return out if keepdims else out.squeeze(axis=ax)


def _arg_max(data, *, axis=0, keepdims=1, select_last_index=0, opset=None, mode=None, n_threads=None):
    """``normops.ops.arg_max`` on a dask array: the axis made whole, the
    in-memory index."""
    return _onnx_arg("ArgMax", _argreduce.arg_max, data, axis, keepdims, select_last_index, opset, mode, n_threads)


def _arg_min(data, *, axis=0, keepdims=1, select_last_index=0, opset=None, mode=None, n_threads=None):
    """``normops.ops.arg_min`` on a dask array (see ``arg_max``)."""
    return _onnx_arg("ArgMin", _argreduce.arg_min, data, axis, keepdims, select_last_index, opset, mode, n_threads)


def _onnx_scan(op_type, function, x, axis, exclusive, reverse, opset, mode, n_threads):
    x = _dask_input(op_type, x, "x")
    axis = _small_param(op_type, "axis", axis)
    mode = _config.resolve_mode(mode, op_type)
    call = functools.partial(function, axis=axis, exclusive=exclusive, reverse=reverse, opset=opset, mode=mode,
                             n_threads=n_threads)
    probe = np.asarray(call(np.zeros((1,) * x.ndim, x.dtype)))  # checks every argument
    ax = axis_attribute(op_type, "axis", int(np.asarray(axis).reshape(-1)[0]), x.ndim, "x")
    _sizes_known(op_type, x, (ax,), "input 'x'")
    X = _whole_along(x, (ax,))
    return X.map_blocks(call, dtype=probe.dtype, meta=np.empty((0,) * X.ndim, probe.dtype))


def _cum_sum(x, axis, *, exclusive=0, reverse=0, opset=None, mode=None, n_threads=None):
    """``normops.ops.cum_sum`` on a dask array: the axis made whole (any
    direction, exclusive or not), the in-memory bits."""
    return _onnx_scan("CumSum", _cumulative_ops.cum_sum, x, axis, exclusive, reverse, opset, mode, n_threads)


def _cum_prod(x, axis, *, exclusive=0, reverse=0, opset=None, mode=None, n_threads=None):
    """``normops.ops.cum_prod`` on a dask array (see ``cum_sum``)."""
    return _onnx_scan("CumProd", _cumulative_ops.cum_prod, x, axis, exclusive, reverse, opset, mode, n_threads)


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
    arg_max=_arg_max,
    arg_min=_arg_min,
    cum_sum=_cum_sum,
    cum_prod=_cum_prod,
    **{f.__name__: _onnx_reduction_function(op_type, f) for op_type, f in _reduction_ops.NAMED.items()},
)
for _f, _n in ((_onnx_softmax, "softmax"), (_onnx_log_softmax, "log_softmax"), (_arg_max, "arg_max"),
               (_arg_min, "arg_min"), (_cum_sum, "cum_sum"), (_cum_prod, "cum_prod")):
    _f.__name__ = _n
    _f.__qualname__ = "ops." + _n
del _f, _n
