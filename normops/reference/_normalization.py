"""Executable specification of LayerNormalization, RMSNormalization and
SimplifiedLayerNormalization (exact flavour).

Pure NumPy, one rounded operation per line, so that each line can be checked
against the spec step it implements:

* docs/specification.md §6.3, steps 1-4 (the row arithmetic), §6.2
  (Scale/B broadcasting) and §6.4 (the shape of Mean/InvStdDev);
* §3, the canonical sum (every sum below is ``sum16``);
* §4 (canonical NaN, float16/bfloat16 widened to float32, float64 computed
  in float64, statistics always float32);
* §6.5 (SimplifiedLayerNormalization: no centring, ``y = (x * inv) *
  scale`` rounded to the scale's dtype).

The functions take inputs that ``OpDef.bind`` has already validated: the
axis is in ``[0, ndim)``, Scale and B broadcast to the normalized shape.
Chunking and threads are absent on purpose: one row never depends on
another, so the chunk layout cannot change any bit, and this model computes
every row in one go.
"""

import numpy as np

from ._sum16 import canonical_nan, sum16

__all__ = [
    "row_normalize",
    "layer_normalization",
    "rms_normalization",
    "simplified_layer_normalization",
]


def _native(dtype):
    """The same dtype in native byte order (results are always native)."""
    return np.dtype(dtype).newbyteorder("=")


def _is_narrow_float(dtype):
    """float16 and bfloat16: computed in float32 (docs/specification.md §4.2)."""
    return dtype == np.float16 or dtype.name == "bfloat16"


def _compute_dtype(dtype):
    """The dtype the arithmetic runs in for an input of ``dtype``.

    docs/specification.md §4.1: float32 and float64 natively; float16 and bfloat16 are
    widened to float32 (the widening is exact).
    """
    dtype = _native(dtype)
    if dtype == np.float32 or _is_narrow_float(dtype):
        return np.dtype(np.float32)
    if dtype == np.float64:
        return np.dtype(np.float64)
    raise TypeError(f"no exact normalisation model for dtype {dtype}")


def row_normalize(x2d, scale1d, bias1d, epsilon, center):
    """Normalise each row of ``x2d``; the row arithmetic shared by all three.

    ``x2d`` is ``(rows, cols)`` float32 or float64; ``scale1d`` and
    ``bias1d`` (or ``None``) have length ``cols`` and the same dtype.
    ``center=False`` is the RMS form (RMSNormalization and
    SimplifiedLayerNormalization): the mean is taken as 0 and the centring
    subtraction disappears.

    Returns ``(y, mean, inv)``: ``y`` in ``x2d``'s dtype, ``mean`` and
    ``inv`` as float32 vectors of length ``rows``; every NaN canonical.
    """
    x = np.asarray(x2d)
    dt = _native(x.dtype)
    x = np.ascontiguousarray(x, dtype=dt)
    if dt not in (np.float32, np.float64):
        raise TypeError(f"row_normalize works on float32 or float64, not {dt}")
    if x.ndim != 2:
        raise ValueError("row_normalize expects a 2-D (rows, cols) array")
    rows, cols = x.shape
    scale = np.asarray(scale1d, dtype=dt).reshape(cols)
    bias = None if bias1d is None else np.asarray(bias1d, dtype=dt).reshape(cols)

    # docs/specification.md §6.3: n is cols converted to the compute type
    # (for float64 inputs the same order in float64, §4.1).
    n = dt.type(cols)
    # ONNX stores epsilon as a float32 attribute; its value is that float32,
    # converted exactly to the compute type.
    eps = dt.type(np.float32(epsilon))
    one = dt.type(1)

    with np.errstate(all="ignore"):  # inf/NaN are results here, not errors
        return _row_arith(x, scale, bias, n, eps, one, center)


def _row_arith(x, scale, bias, n, eps, one, center):
    """Steps 1-4 of docs/specification.md §6.3 on a contiguous (rows, cols) array."""
    dt = x.dtype
    rows = x.shape[0]
    if center:
        # Step 1: mean = Sum16(x) / n.
        mean = sum16(x) / n
        # Step 2: the difference is one rounded operation ...
        d = x - mean[:, None]
    else:
        # Step 1, RMS form: mean = 0, never computed; x - 0 is x.
        mean = np.zeros(rows, dtype=dt)
        d = x
    # Step 2: ... the square is another, then v = Sum16(d*d) / n.
    sq = d * d
    v = sum16(sq) / n
    # Step 3: inv = 1 / sqrt(v + epsilon): add, sqrt, divide, each rounded.
    ve = v + eps
    root = np.sqrt(ve)
    inv = one / root
    # Step 4: y = (((x - mean) * inv) * scale) + bias, four rounded steps
    # (three when B is absent, or in the RMS form where x - mean is x).
    y = d * inv[:, None]
    y = y * scale[None, :]
    if bias is not None:
        y = y + bias[None, :]

    # docs/specification.md §4.3: statistics are float32; a float64
    # statistic is rounded once.  §4.5: canonical NaN everywhere.
    mean32 = canonical_nan(mean.astype(np.float32))
    inv32 = canonical_nan(inv.astype(np.float32))
    return canonical_nan(y), mean32, inv32


def _as_vector(param, norm_shape, dtype):
    """Expand Scale or B to one value per normalized element.

    docs/specification.md §6.2: the parameter
    broadcasts to the normalized dimensions right-aligned (missing leading
    dimensions are ones); a smaller parameter is expanded to the full
    normalized extent.  Leading dimensions of extent 1 beyond the normalized
    rank carry no data and are dropped first.
    """
    p = np.asarray(param)
    while p.ndim > len(norm_shape):
        if p.shape[0] != 1:
            raise ValueError(
                f"parameter of shape {np.shape(param)} does not broadcast to "
                f"the normalized shape {tuple(norm_shape)}"
            )
        p = p[0]
    # Widening float16/bfloat16 to float32 is exact (docs/specification.md §4.2).
    p = p.astype(dtype)
    cols = int(np.prod(norm_shape, dtype=np.int64))
    return np.ascontiguousarray(np.broadcast_to(p, tuple(norm_shape))).reshape(cols)


def _stat_shape(shape, axis):
    """Shape of Mean / InvStdDev / inv_std_var: the normalized dimensions
    become ones (docs/specification.md §6.4)."""
    return tuple(shape[:axis]) + (1,) * (len(shape) - axis)


def _normalize(X, scale, bias, axis, epsilon, center, compute_dtype, out_dtype):
    """View X as rows x cols, run ``row_normalize``, restore the shapes."""
    X = np.asarray(X)
    shape = X.shape
    norm_shape = shape[axis:]
    rows = int(np.prod(shape[:axis], dtype=np.int64))
    cols = int(np.prod(norm_shape, dtype=np.int64))

    # docs/specification.md §15.2: work on our own native-order copy, never on the input.
    x2d = np.ascontiguousarray(X.astype(compute_dtype)).reshape(rows, cols)
    s = _as_vector(scale, norm_shape, compute_dtype)
    b = None if bias is None else _as_vector(bias, norm_shape, compute_dtype)

    y, mean, inv = row_normalize(x2d, s, b, epsilon, center)

    # docs/specification.md §4.3: each result is rounded once to the output dtype (a
    # no-op for float32/float64), then its NaNs made canonical for that
    # dtype.
    with np.errstate(over="ignore"):  # overflow to inf is the rounded result
        y = canonical_nan(y.astype(out_dtype).reshape(shape))
    stat_shape = _stat_shape(shape, axis)
    return y, mean.reshape(stat_shape), inv.reshape(stat_shape)


def layer_normalization(X, Scale, B, axis, epsilon):
    """LayerNormalization (opset 17) -> ``(Y, Mean, InvStdDev)``.

    docs/specification.md §6.3 steps 1-4 with centring; Y has X's dtype,
    Mean and InvStdDev are float32 (§4.3).
    """
    X = np.asarray(X)
    cdt = _compute_dtype(X.dtype)
    return _normalize(X, Scale, B, axis, epsilon, True, cdt, _native(X.dtype))


def _rms_form(X, scale, axis, epsilon):
    """The RMS form shared by RMSNormalization and SimplifiedLayerNormalization.

    X and scale may have different dtypes (ONNX types T and V).  Each is
    widened exactly: to float64 if either of them is float64 (float32 to
    float64 is exact, so nothing is rounded before the arithmetic), else to
    float32 (docs/specification.md §4.1).  Y is rounded once to the
    *scale's* dtype (ONNX: Y has type V; §6.5).
    """
    X = np.asarray(X)
    scale = np.asarray(scale)
    xdt, sdt = _compute_dtype(X.dtype), _compute_dtype(scale.dtype)
    cdt = np.dtype(np.float64) if np.float64 in (xdt, sdt) else np.dtype(np.float32)
    return _normalize(X, scale, None, axis, epsilon, False, cdt, _native(scale.dtype))


def rms_normalization(X, scale, axis, epsilon):
    """RMSNormalization (opset 23) -> ``(Y,)``.

    docs/specification.md §6.3 in the RMS form (mean = 0, v = mean of squares,
    no bias); Y has the scale's dtype (ONNX type V), see ``_rms_form``.
    """
    y, _mean, _inv = _rms_form(X, scale, axis, epsilon)
    return (y,)


def simplified_layer_normalization(X, scale, axis, epsilon):
    """SimplifiedLayerNormalization (default domain, since 1)
    -> ``(Y, inv_std_var)``.

    docs/specification.md §6.3-§6.5: the same arithmetic as RMSNormalization,
    ``y = (x * inv) * scale`` with X and scale widened (float16 and float32
    mix freely) and Y rounded once to the scale's dtype; inv_std_var is the
    float32 ``inv`` of step 3.
    """
    y, _mean, inv = _rms_form(X, scale, axis, epsilon)
    return (y, inv)
