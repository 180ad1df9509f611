"""Executable specification of InstanceNormalization, GroupNormalization
and BatchNormalization (exact flavour).

* docs/specification.md §7.1-§7.2: a row is one
  (sample, channel) plane or one (sample, group) block; steps 1-4 of
  LayerNormalization with the scale and bias taken per row (Instance,
  Group-18) or per channel spread across the block (Group-21);
* §7.3, BatchNormalization: ``y = (((x - mean[c]) * inv[c]) *
  scale[c]) + B[c]`` with ``inv[c] = 1 / sqrt(var[c] + epsilon)``; in
  training mode mean and var are the batch statistics of channel c (Sum16
  over the channel's elements in row-major order, population variance in
  two passes) and the running statistics follow the ONNX formula read left
  to right: ``(input_mean * momentum) + (current_mean * (1 - momentum))``,
  every operation rounded in the arithmetic type, then rounded once to the
  statistics' dtype;
* §4: float16/bfloat16 computed in float32, canonical NaN.

Every parameter is expanded to one value per element of its row before
step 4: each element then sees exactly the scalar the kernels use.
"""
import math

import numpy as np

from ._sum16 import canonical_nan, sum16

__all__ = ["normalize_rows_params", "instance_normalization", "group_normalization",
           "batch_normalization"]


def normalize_rows_params(x2d, scale2d, bias2d, epsilon):
    """Steps 1-4 on a (rows, cols) array in the arithmetic dtype, with
    per-element parameters ``scale2d``/``bias2d`` (or None) of that shape.
    Returns ``(y, mean, var)`` (mean and var per row, arithmetic dtype)."""
    dt = x2d.dtype
    n = dt.type(x2d.shape[1])
    with np.errstate(all="ignore"):
        mean = sum16(x2d) / n                          # step 1
        d = x2d - mean[:, None]                        # step 2: difference,
        var = sum16(d * d) / n                         #   square, sum, divide
        inv = inverse_std(var, epsilon)                # step 3
        y = apply_affine(x2d, mean[:, None], inv[:, None], scale2d, bias2d)
    return y, canonical_nan(mean), canonical_nan(var)


def apply_affine(x, mean, inv, scale, bias):
    """Step 4: (((x - mean) * inv) * scale) + bias, four rounded operations
    (three without bias); NaN canonical."""
    with np.errstate(all="ignore"):
        y = ((x - mean) * inv) * scale
        if bias is not None:
            y = y + bias
    return canonical_nan(y)


def _arith(*arrays):
    """float64 if any operand is float64, else float32 (docs/specification.md §4.1)."""
    return np.dtype(np.float64) if any(a.dtype == np.float64 for a in arrays) else np.dtype(np.float32)


def _round(y, dtype):
    with np.errstate(over="ignore"):
        return canonical_nan(y.astype(dtype))


def instance_normalization(X, scale, B, epsilon):
    """Rows are the (n, c) planes; scale[c] and B[c] for the whole row."""
    dt = _arith(X, scale, B)
    N, C = X.shape[:2]
    x = X.astype(dt).reshape(N * C, math.prod(X.shape[2:]))  # (an explicit size: N or C may be 0)
    s = np.repeat(np.tile(scale.astype(dt), N)[:, None], x.shape[1], axis=1)
    b = np.repeat(np.tile(B.astype(dt), N)[:, None], x.shape[1], axis=1)
    y, _, _ = normalize_rows_params(x, s, b, epsilon)
    return (_round(y.reshape(X.shape), X.dtype),)


def group_normalization(X, scale, bias, num_groups, epsilon, per_channel):
    """Rows are the (n, g) blocks of C / num_groups channels; the parameters
    are per group (opset 18) or per channel (opset 21)."""
    dt = _arith(X, scale, bias)
    N, C = X.shape[:2]
    G = num_groups
    spatial = int(np.prod(X.shape[2:], dtype=np.int64))
    x = X.astype(dt).reshape(N * G, (C // G) * spatial)
    if per_channel:
        per_row = scale.astype(dt).reshape(G, C // G), bias.astype(dt).reshape(G, C // G)
        s, b = (np.repeat(np.tile(p, (N, 1)), spatial, axis=1) for p in per_row)
    else:
        s, b = (np.repeat(np.tile(p.astype(dt), N)[:, None], x.shape[1], axis=1) for p in (scale, bias))
    y, _, _ = normalize_rows_params(x, s, b, epsilon)
    return (_round(y.reshape(X.shape), X.dtype),)


def batch_normalization(X, scale, B, mean, var, epsilon, momentum, training, saved=False):
    """Inference: the given statistics; training: the batch statistics, and
    the running statistics as outputs 2 and 3; with ``saved`` (the legacy
    training form before opset 14) also saved_mean, the batch mean, and
    saved_var, the inv = 1 / sqrt(batch_var + epsilon) of step 3 that
    normalised Y (not a variance), each rounded once to the dtype of
    mean / var."""
    dt = _arith(X, scale, B, mean, var)
    N, C = X.shape[:2]
    x = X.astype(dt).reshape(N, C, math.prod(X.shape[2:]))
    spatial = x.shape[2]
    s, b = scale.astype(dt)[None, :, None], B.astype(dt)[None, :, None]
    if not training:
        inv = inverse_std(var.astype(dt), epsilon)
        y = apply_affine(x, mean.astype(dt)[None, :, None], inv[None, :, None], s, b)
        return (_round(y.reshape(X.shape), X.dtype),)
    # channel c's elements in row-major order: the (n, spatial) sequence
    rows = np.ascontiguousarray(x.transpose(1, 0, 2)).reshape(C, N * spatial)
    srow = np.repeat(scale.astype(dt)[:, None], N * spatial, axis=1)
    brow = np.repeat(B.astype(dt)[:, None], N * spatial, axis=1)
    y, current_mean, current_var = normalize_rows_params(rows, srow, brow, epsilon)
    y = y.reshape(C, N, spatial).transpose(1, 0, 2)
    outputs = (_round(np.ascontiguousarray(y).reshape(X.shape), X.dtype),
               running_statistic(mean, current_mean, momentum), running_statistic(var, current_var, momentum))
    if saved:
        outputs += (_round(current_mean, mean.dtype), _round(inverse_std(current_var, epsilon), var.dtype))
    return outputs


def inverse_std(var, epsilon):
    """Step 3 on given variances: 1 / sqrt(var + epsilon), each rounded in
    var's dtype (the arithmetic type)."""
    dt = var.dtype
    with np.errstate(all="ignore"):
        return canonical_nan(dt.type(1) / np.sqrt(var + dt.type(np.float32(epsilon))))


def running_statistic(given, current, momentum):
    """ONNX's running statistic, read left to right in the arithmetic type
    of ``current``: (given * momentum) + (current * (1 - momentum)), each
    operation rounded; then rounded once to ``given``'s dtype. Shared with
    the front layer (NumPy operations on C values)."""
    dt = current.dtype
    m = dt.type(np.float32(momentum))
    with np.errstate(all="ignore"):
        rest = dt.type(1) - m
        r = (given.astype(dt) * m) + (current * rest)
    return _round(canonical_nan(r), given.dtype)
