"""Checks of the executable specification itself (normops/reference).

The kernels are compared with the reference model bit for bit elsewhere;
these tests make sure the model computes what the spec says, by comparing it
with hand-worked values and with a deliberately naive scalar implementation
of the same order of operations (one Python loop per spec step).
"""

import math

import numpy as np
import pytest

from normops.reference._normalization import (
    layer_normalization,
    rms_normalization,
    row_normalize,
    simplified_layer_normalization,
)
from normops.reference._sum16 import canonical_nan, sum16

from bits import assert_same_bits, bits

try:
    import ml_dtypes

    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # optional dependency
    ml_dtypes = None
    BF16 = None


# --------------------------------------------------------------------------
# Scalar model: one rounded operation at a time, NumPy scalars of the dtype.
# --------------------------------------------------------------------------

def scalar_sum16(row, dtype):
    t = np.dtype(dtype).type
    p = [t(0.0)] * 16
    for j, v in enumerate(row):
        p[j % 16] = t(p[j % 16] + t(v))
    a = [t(p[i] + p[i + 8]) for i in range(8)]
    b = [t(a[i] + a[i + 4]) for i in range(4)]
    c = [t(b[i] + b[i + 2]) for i in range(2)]
    return t(c[0] + c[1])


def scalar_row(row, scale, bias, eps, center, dtype):
    t = np.dtype(dtype).type
    n = t(len(row))
    e = t(np.float32(eps))
    xs = [t(v) for v in row]
    mean = t(scalar_sum16(xs, dtype) / n) if center else t(0.0)
    d = [t(v - mean) for v in xs] if center else xs
    v = t(scalar_sum16([t(q * q) for q in d], dtype) / n)
    inv = t(t(1.0) / t(np.sqrt(t(v + e))))
    y = []
    for j, q in enumerate(d):
        r = t(t(q * inv) * t(scale[j]))
        if bias is not None:
            r = t(r + t(bias[j]))
        y.append(r)
    return np.array(y, dtype=dtype), mean, inv


# --------------------------------------------------------------------------
# sum16
# --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum16_matches_scalar_loop(dtype):
    rng = np.random.default_rng(1)
    with np.errstate(all="ignore"):
        for n in list(range(0, 40)) + [63, 64, 65, 100, 257]:
            x = (rng.standard_normal((3, n)) * 10.0 ** rng.integers(-3, 4, (3, n)))
            x = x.astype(dtype)
            got = sum16(x)
            assert got.dtype == dtype and got.shape == (3,)
            want = np.array([scalar_sum16(r, dtype) for r in x], dtype=dtype)
            assert_same_bits(got, want)


def test_sum16_leading_shape_and_dtype():
    x = np.arange(2 * 3 * 20, dtype=np.float32).reshape(2, 3, 20)
    got = sum16(x)
    assert got.shape == (2, 3) and got.dtype == np.float32
    assert_same_bits(got, x.sum(axis=-1, dtype=np.float64).astype(np.float32))


def test_sum16_rejects_other_dtypes():
    with pytest.raises(TypeError):
        sum16(np.ones(4, dtype=np.int32))


def _naive(row):
    acc = row.dtype.type(0)
    for v in row:
        acc = row.dtype.type(acc + v)
    return acc


def test_sum16_differs_from_left_to_right():
    big = np.float32(2.0**24)  # 2**24 + 1 is not representable in float32
    x = np.array([big, 1, 0, 1], dtype=np.float32)
    # Left to right: each +1 is rounded away (ties to even).
    assert _naive(x) == big
    # Sum16: the ones sit in partials 1 and 3, meet in the tree (b[1]+b[3]
    # = 2) and only then meet 2**24, exactly.
    assert sum16(x) == big + np.float32(2)
    assert_same_bits(sum16(x[None, :])[0], scalar_sum16(x, np.float32))


BIG = 2.0**24  # 2**24 + 1 is not a float32: a lone 1 added to it is lost

# (length, {index: value}, expected sum) worked out by hand.
PLACEMENT_CASES = [
    # Terms 16 and 32 go to partial 0 and are lost one at a time.
    (33, {0: BIG, 16: 1, 32: 1}, BIG),
    # In partials 1 and 3 they meet first (c[1] = b[1] + b[3] = 2) and survive.
    (33, {0: BIG, 1: 1, 3: 1}, BIG + 2),
    # a[0] = P[0] + P[8] loses the 1, then b[0] = a[0] + a[4] loses the other.
    (16, {0: BIG, 8: 1, 4: 1}, BIG),
    # a[1] = P[1] + P[9] = 2 survives.
    (16, {0: BIG, 1: 1, 9: 1}, BIG + 2),
    # a[2] = P[2] + P[10] = 2 reaches P[0] only at c[0] = b[0] + b[2].
    (16, {0: BIG, 2: 1, 10: 1}, BIG + 2),
]


@pytest.mark.parametrize("n,placed,expected", PLACEMENT_CASES)
def test_sum16_partials_and_folding_tree(n, placed, expected):
    x = np.zeros(n, dtype=np.float32)
    for index, value in placed.items():
        x[index] = value
    assert sum16(x) == np.float32(expected)


def test_sum16_float32_stays_float32():
    # 1 + 2**-30 is 1 in float32 but not in float64: promotion would show.
    x = np.zeros(17, dtype=np.float32)
    x[0], x[16] = 1, 2.0**-30
    assert sum16(x) == np.float32(1)
    assert sum16(x.astype(np.float64)) == 1 + 2.0**-30


def test_sum16_signed_zero():
    neg = np.full((2, 35), -0.0, dtype=np.float32)
    # Partials start at +0, and +0 + -0 = +0.
    assert_same_bits(sum16(neg), np.zeros(2, dtype=np.float32))
    assert bits(sum16(np.zeros((1, 0), dtype=np.float64)))[0] == 0


def test_sum16_specials():
    x = np.array([[1, np.inf, 2], [np.inf, -np.inf, 0], [np.nan, 1, 1]],
                 dtype=np.float32)
    got = sum16(x)
    assert got[0] == np.inf
    assert np.isnan(got[1]) and np.isnan(got[2])
    big = np.finfo(np.float32).max
    # Overflow to inf in one partial.
    y = np.zeros(17, dtype=np.float32)
    y[0], y[16] = big, big
    assert sum16(y) == np.inf
    # The same two terms in different partials also meet in the tree.
    y = np.zeros(17, dtype=np.float32)
    y[0], y[1] = big, -big
    assert sum16(y) == 0


# --------------------------------------------------------------------------
# canonical NaN
# --------------------------------------------------------------------------

NAN_CASES = [
    (np.float32, np.uint32, 0x7FC00000, [0xFFC00000, 0x7F800001, 0xFFFFFFFF, 0x7FC12345]),
    (np.float64, np.uint64, 0x7FF8000000000000,
     [0xFFF8000000000000, 0x7FF0000000000001, 0x7FF8DEADBEEF0000]),
    (np.float16, np.uint16, 0x7E00, [0xFE00, 0x7C01, 0x7FFF, 0xFE01]),
]
if BF16 is not None:
    NAN_CASES.append((BF16, np.uint16, 0x7FC0, [0xFFC0, 0x7F81, 0x7FFF]))


@pytest.mark.parametrize("dtype,utype,canon,payloads", NAN_CASES,
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_canonical_nan(dtype, utype, canon, payloads):
    keep = np.array([1.5, -0.0, 0.0, np.inf, -np.inf], dtype=dtype)
    raw = np.concatenate([np.array(payloads, dtype=utype).view(dtype), keep])
    before = bits(raw).copy()
    out = canonical_nan(raw)
    assert out.dtype == np.dtype(dtype)
    assert_same_bits(raw, before.view(dtype))  # input untouched
    ob = bits(out)
    assert (ob[: len(payloads)] == canon).all()
    assert_same_bits(out[len(payloads):], keep)  # -0 and inf keep their bits


def test_canonical_nan_byteswapped_input():
    raw = np.array([0xFFC00001, 0x3F800000], dtype=np.uint32).view(np.float32)
    out = canonical_nan(raw.astype(">f4"))
    assert out.dtype.isnative
    assert list(bits(out)) == [0x7FC00000, 0x3F800000]


# --------------------------------------------------------------------------
# row arithmetic
# --------------------------------------------------------------------------

def test_row_normalize_hand_worked():
    x = np.array([[1, 2, 3, 4]], dtype=np.float32)
    s = np.ones(4, dtype=np.float32)
    y, mean, inv = row_normalize(x, s, None, 0.0, center=True)
    # mean 10/4 = 2.5; squares 2.25, .25, .25, 2.25 -> v = 5/4 = 1.25.
    assert mean[0] == np.float32(2.5)
    assert inv[0] == np.float32(1) / np.sqrt(np.float32(1.25))
    assert_same_bits(y[0], np.array([-1.5, -0.5, 0.5, 1.5], dtype=np.float32) * inv[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("center", [True, False])
@pytest.mark.parametrize("with_bias", [True, False])
def test_row_normalize_matches_scalar_model(dtype, center, with_bias):
    rng = np.random.default_rng(7)
    for cols in (1, 3, 16, 17, 40):
        x = (rng.standard_normal((3, cols)) * 4 + 1).astype(dtype)
        x[2] = np.array([1e-3] * cols, dtype=dtype)  # constant row
        s = rng.standard_normal(cols).astype(dtype)
        b = rng.standard_normal(cols).astype(dtype) if with_bias else None
        y, mean, inv = row_normalize(x, s, b, 1e-5, center)
        assert y.dtype == dtype and mean.dtype == np.float32 == inv.dtype
        for r in range(3):
            wy, wm, wi = scalar_row(x[r], s, b, 1e-5, center, dtype)
            assert_same_bits(y[r], wy)
            assert_same_bits(mean[r], np.float32(wm))
            assert_same_bits(inv[r], np.float32(wi))


def test_epsilon_is_read_as_float32():
    # RMS of a constant row c: inv = 1/sqrt(c*c + eps).  In float64 the
    # float32 value of 1e-5 and the float64 one give different bits.
    c = 1e-3
    x = np.full((1, 4), c)
    y, _, _ = row_normalize(x, np.ones(4), None, 1e-5, center=False)
    e32 = float(np.float32(1e-5))
    assert y[0, 0] == c * (1.0 / math.sqrt(c * c + e32))
    assert y[0, 0] != c * (1.0 / math.sqrt(c * c + 1e-5))


def test_float64_statistics_rounded_once():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 33))
    y, mean, inv = row_normalize(x, np.ones(33), None, 1e-5, center=True)
    for r in range(5):
        _, wm, wi = scalar_row(x[r], np.ones(33), None, 1e-5, True, np.float64)
        assert mean[r] == np.float32(wm) and inv[r] == np.float32(wi)


def test_signed_zero_rows():
    x = np.full((1, 5), -0.0, dtype=np.float32)
    s = np.ones(5, dtype=np.float32)
    # mean = +0/5 = +0, x - mean = -0, (-0 * inv) * 1 = -0.
    y, mean, _ = row_normalize(x, s, None, 1e-5, center=True)
    assert (bits(y) == 0x80000000).all()
    assert bits(mean)[0] == 0
    # Adding a +0 bias gives +0 (round to nearest: -0 + +0 = +0).
    y, _, _ = row_normalize(x, s, np.zeros(5, np.float32), 1e-5, center=True)
    assert (bits(y) == 0).all()


def test_nan_and_inf_rows_are_canonical():
    x = np.array([[1, 2, np.nan, 4], [1, np.inf, 2, 3], [0, 0, 0, 0]],
                 dtype=np.float32)
    x[0, 2] = np.array([0xFFC0BEEF], dtype=np.uint32).view(np.float32)[0]
    s = np.ones(4, dtype=np.float32)
    y, mean, inv = row_normalize(x, s, None, 0.0, center=True)
    # NaN row and inf row (inf - inf in step 2) are NaN throughout; the
    # constant row with epsilon 0 gives 0 * inf = NaN.
    assert (bits(y) == 0x7FC00000).all()
    assert bits(mean)[0] == 0x7FC00000 and mean[1] == np.inf and mean[2] == 0
    assert bits(inv)[0] == 0x7FC00000 and bits(inv)[1] == 0x7FC00000
    assert inv[2] == np.inf


def test_subnormals_are_not_flushed():
    tiny = np.finfo(np.float32).smallest_subnormal
    x = np.array([[tiny, 3 * tiny, tiny, 3 * tiny]], dtype=np.float32)
    y, mean, _ = row_normalize(x, np.ones(4, np.float32), None, 1e-5, True)
    assert mean[0] == 2 * tiny
    assert (y != 0).all()


# --------------------------------------------------------------------------
# operator wrappers
# --------------------------------------------------------------------------

def test_layer_normalization_shapes_and_broadcast():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((4, 3, 5)).astype(np.float32)
    full = rng.standard_normal((3, 5)).astype(np.float32)
    bias = rng.standard_normal((1, 5)).astype(np.float32)
    y, m, i = layer_normalization(x, full, bias, 1, 1e-5)
    assert y.shape == x.shape and m.shape == (4, 1, 1) == i.shape
    assert m.dtype == np.float32 == i.dtype
    want, wm, wi = row_normalize(x.reshape(4, 15), full.reshape(15),
                                 np.tile(bias.reshape(5), 3), 1e-5, True)
    assert_same_bits(y, want.reshape(x.shape))
    assert_same_bits(m, wm.reshape(4, 1, 1))
    # Scale (3, 1): one value per middle index, repeated along the last dim.
    col = rng.standard_normal((3, 1)).astype(np.float32)
    y2, _, _ = layer_normalization(x, col, None, 1, 1e-5)
    want2, _, _ = row_normalize(x.reshape(4, 15), np.repeat(col[:, 0], 5),
                                None, 1e-5, True)
    assert_same_bits(y2, want2.reshape(x.shape))
    # Extra leading ones are dropped: (1, 1, 5) is the same as (5,).
    y3 = layer_normalization(x, full[None], bias[None], 1, 1e-5)[0]
    assert_same_bits(y3, y)


@pytest.mark.parametrize("narrow", ["float16", "bfloat16"])
def test_narrow_types_widen_then_round_once(narrow):
    if narrow == "bfloat16" and BF16 is None:
        pytest.skip("ml_dtypes not installed")
    dt = np.dtype(np.float16) if narrow == "float16" else BF16
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 21)).astype(dt)
    s = rng.standard_normal(21).astype(dt)
    b = rng.standard_normal(21).astype(dt)
    y, m, i = layer_normalization(x, s, b, 1, 1e-5)
    wy, wm, wi = layer_normalization(x.astype(np.float32), s.astype(np.float32),
                                     b.astype(np.float32), 1, 1e-5)
    assert y.dtype == dt and m.dtype == np.float32
    assert_same_bits(y, wy.astype(dt))
    assert_same_bits(m, wm)
    assert_same_bits(i, wi)
    (yr,) = rms_normalization(x, s, 1, 1e-5)
    assert_same_bits(yr, rms_normalization(x.astype(np.float32), s.astype(np.float32),
                                      1, 1e-5)[0].astype(dt))


def test_narrow_nan_is_canonical_after_rounding():
    x = np.array([[1, np.nan, 2]], dtype=np.float16)
    y, _, _ = layer_normalization(x, np.ones(3, np.float16), None, 1, 1e-5)
    assert (bits(y) == 0x7E00).all()
    if BF16 is not None:
        y = rms_normalization(x.astype(BF16), np.ones(3, BF16), 1, 1e-5)[0]
        assert (bits(y) == 0x7FC0).all()


def test_simplified_output_has_scale_dtype():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((3, 10)).astype(np.float16)
    s32 = rng.standard_normal(10).astype(np.float32)
    y, inv = simplified_layer_normalization(x, s32, 1, 1e-5)
    assert y.dtype == np.float32 and inv.dtype == np.float32 and inv.shape == (3, 1)
    wy, _, wi = row_normalize(x.astype(np.float32), s32, None, 1e-5, False)
    assert_same_bits(y, wy)
    assert_same_bits(inv[:, 0], wi)
    y16, _ = simplified_layer_normalization(x.astype(np.float32),
                                            s32.astype(np.float16), 1, 1e-5)
    assert y16.dtype == np.float16
    wy16, _, _ = row_normalize(x.astype(np.float32), s32.astype(np.float16)
                               .astype(np.float32), None, 1e-5, False)
    assert_same_bits(y16, wy16.astype(np.float16))
    # RMSNormalization and SimplifiedLayerNormalization share the arithmetic.
    assert_same_bits(y, rms_normalization(x.astype(np.float32), s32, 1, 1e-5)[0])


def test_byteswapped_inputs_give_native_results():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 9)).astype(np.float32)
    s = rng.standard_normal(9).astype(np.float32)
    want = layer_normalization(x, s, s, 1, 1e-5)
    got = layer_normalization(x.astype(">f4"), s.astype(">f4"), s.astype(">f4"),
                              1, 1e-5)
    for g, w in zip(got, want):
        assert g.dtype.isnative
        assert_same_bits(g, w)


def test_empty_rows():
    x = np.zeros((2, 0, 7), dtype=np.float32)
    y, m, i = layer_normalization(x, np.ones(7, np.float32), None, 2, 1e-5)
    assert y.shape == (2, 0, 7) and m.shape == (2, 0, 1) == i.shape


def test_rms_forms_follow_scale_dtype_and_widest_input():
    rng = np.random.default_rng(13)
    x = rng.standard_normal((4, 19))
    s16 = rng.standard_normal(19).astype(np.float16)
    # float64 X with a float16 scale: computed in float64, Y rounded once to
    # float16 (ONNX type V).
    (y,) = rms_normalization(x, s16, 1, 1e-5)
    assert y.dtype == np.float16
    wy, _, _ = row_normalize(x, s16.astype(np.float64), None, 1e-5, False)
    assert_same_bits(y, wy.astype(np.float16))
    y2, inv = simplified_layer_normalization(x.astype(np.float32), s16, 1, 1e-5)
    wy2, _, winv = row_normalize(x.astype(np.float32), s16.astype(np.float32), None,
                                 1e-5, False)
    assert_same_bits(y2, wy2.astype(np.float16))
    assert_same_bits(inv[:, 0], winv)


def test_reference_run_uses_this_model():
    """normops.reference.run validates, then calls the functions above with
    the axis made non-negative and the parameters as given."""
    import normops.reference

    rng = np.random.default_rng(21)
    x = rng.standard_normal((3, 4, 6)).astype(np.float32)
    s = rng.standard_normal((1, 6)).astype(np.float32)
    b = rng.standard_normal((4, 1)).astype(np.float32)
    got = normops.reference.run("LayerNormalization", [x, s, b], {"axis": -2, "epsilon": 0.5},
                                opset=17)
    for g, w in zip(got, layer_normalization(x, s, b, 1, 0.5)):
        assert_same_bits(g, w)
    got = normops.reference.run("SimplifiedLayerNormalization", [x, s[0]], {}, opset=1)
    for g, w in zip(got, simplified_layer_normalization(x, s[0], 2, 1e-5)):
        assert_same_bits(g, w)


# ------------------------------------ found by a differential fuzz (stop 13)

def _scan_index(row, is_min, last):
    """The specification's scan, one element at a time: a NaN compares
    false, so it never replaces the best and is kept only when first."""
    best, index = row[0], 0
    for j in range(1, len(row)):
        v = row[j]
        better = (v < best) if is_min else (v > best)
        if better or (last and v == best):
            best, index = v, j
    return index


@pytest.mark.parametrize("dtype, pattern", [(np.float32, 0x7FA00000), (np.float32, 0xFF800001),
                                            (np.float64, 0x7FF0000000000001), (np.float16, 0x7D01)])
def test_arg_reduce_with_signalling_nan(dtype, pattern):
    # IEEE maxNum turns a signalling NaN into NaN, so the reference once
    # lost the best value on such rows; both sides must follow the scan
    import normops
    snan = np.array([pattern], {2: np.uint16, 4: np.uint32, 8: np.uint64}[np.dtype(dtype).itemsize]).view(dtype)[0]
    rng = np.random.default_rng(21)
    rows = [np.array([1.0, snan], dtype), np.array([1.0, snan, 0.5], dtype), np.array([snan, 2.0, 3.0], dtype),
            np.array([3.0, snan, 1.0, 3.0], dtype)]
    for _ in range(20):
        row = rng.integers(-3, 4, 9).astype(dtype)
        row[rng.random(9) < 0.3] = snan
        rows.append(row)
    for row in rows:
        for op, is_min in (("ArgMax", False), ("ArgMin", True)):
            for last in (0, 1):
                want = _scan_index(row.astype(np.float64) if dtype is np.float16 else row, is_min, last)
                attributes = {"axis": 0, "keepdims": 0, "select_last_index": last}
                assert int(normops.reference.run(op, [row], attributes, opset=13)[0]) == want, (op, row, last)
                assert int(normops.run(op, [row], attributes, opset=13)[0]) == want, (op, row, last)


def test_reference_takes_empty_inputs_like_the_kernels():
    # reshape(n, -1) cannot infer a size when n is 0: the reference raised
    # a raw ValueError where the kernels return the empty result
    import normops
    p, none = np.ones(3, np.float32), np.ones(0, np.float32)
    cases = [("CumSum", [np.zeros((0, 3), np.float32), np.array(0)], {}, 14),
             ("CumSum", [np.zeros((3, 0), np.float32), np.array(1)], {}, 14),
             ("CumProd", [np.zeros((0,), np.int64), np.array(0)], {}, 26),
             ("InstanceNormalization", [np.zeros((0, 3, 4), np.float32), p, p], {}, 22),
             ("InstanceNormalization", [np.zeros((2, 0, 4), np.float32), none, none], {}, 22),
             ("BatchNormalization", [np.zeros((0, 3), np.float32)] + [p] * 4, {}, 15),
             ("BatchNormalization", [np.zeros((2, 0, 3), np.float32)] + [none] * 4, {}, 15)]
    for op, inputs, attributes, opset in cases:
        want = normops.run(op, inputs, attributes, opset=opset)
        got = normops.reference.run(op, inputs, attributes, opset=opset)
        assert [(a.dtype, a.shape) for a in got] == [(a.dtype, a.shape) for a in want], op
        assert want[0].shape == inputs[0].shape
