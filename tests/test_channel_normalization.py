"""InstanceNormalization, GroupNormalization and BatchNormalization: the
kernels against the executable specification bit for bit (integer views),
across dtypes, special values, thread counts and ISA builds; the layouts
against a plain float64 NumPy formula; errors and legacy opsets."""

import numpy as np
import pytest

import normops
import normops._isa
import normops.reference
from normops import InvalidInputError, UnsupportedError

from test_normalization import BF16, assert_outputs_equal, make_x

IN, GN, BN = "InstanceNormalization", "GroupNormalization", "BatchNormalization"
DTYPES = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16)] + ([BF16] if BF16 is not None else [])


def make_case(op, rng, shape, dtype, special=False, opset=None, groups=1, training=0):
    """(inputs, attributes, opset) of one call."""
    x = make_x(rng, shape, dtype, special)
    C = shape[1]

    def vec(n, positive=False):
        v = rng.standard_normal(n) * 2
        return (np.abs(v) if positive else v).astype(dtype)

    if op == IN:
        return [x, vec(C), vec(C)], {}, opset or 22
    if op == GN:
        opset = opset or 21
        n = C if opset >= 21 else groups
        return [x, vec(n), vec(n)], {"num_groups": groups}, opset
    opset = opset or 15
    # opsets 7 and 9: training_mode=1 is normops's name for the node declaring its training outputs
    attrs = {"training_mode": training} if opset >= 7 else {"is_test": 1 - training}
    attrs["momentum"] = 0.75
    return [x, vec(C), vec(C), vec(C), vec(C, True)], attrs, opset


CASES = [
    (IN, (2, 3, 5), {}), (IN, (3, 4, 17, 3), {}), (IN, (1, 2, 1), {}), (IN, (2, 5, 40, 41), {}),
    (GN, (2, 4, 7), {"groups": 2}), (GN, (3, 6, 5, 3), {"groups": 3}), (GN, (2, 6, 4), {"groups": 1}),
    (GN, (2, 6, 9, 9), {"groups": 2, "opset": 18}), (GN, (4, 8), {"groups": 4}),
    (BN, (3, 4), {}), (BN, (2, 5, 7, 3), {}), (BN, (2, 3, 130), {"opset": 9}),
    (BN, (3, 4, 6), {"training": 1}), (BN, (2, 3, 17, 5), {"training": 1}), (BN, (7, 2), {"training": 1}),
    (BN, (2, 3, 17, 5), {"training": 1, "opset": 9}), (BN, (7, 2), {"training": 1, "opset": 7}),
    (BN, (3, 4, 6), {"training": 1, "opset": 6}), (BN, (2, 3, 5), {"training": 1, "opset": 1}),
    (BN, (3, 4, 6), {"opset": 6}),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op,shape,kw", CASES)
def test_kernels_equal_reference(op, shape, kw, dtype):
    rng = np.random.default_rng([len(shape), sum(shape), dtype.itemsize])
    for special in (False, True):
        inputs, attrs, opset = make_case(op, rng, shape, dtype, special, **kw)
        want = normops.reference.run(op, inputs, attrs, opset=opset)
        for n in (1, 2, 3):
            got = normops.run(op, inputs, attrs, opset=opset, n_threads=n)
            assert_outputs_equal(got, want, f"{op} {shape} {dtype} special={special} n={n}")


@pytest.mark.parametrize("op,shape,kw", [
    (IN, (4, 16, 128), {}), (IN, (2, 3, 70, 300), {}), (GN, (4, 32, 16, 16), {"groups": 8}),
    (GN, (2, 8, 3000), {"groups": 2, "opset": 18}), (BN, (4, 32, 16, 16), {}),
    (BN, (3, 5, 40000), {"training": 1}), (BN, (3, 5, 40000), {"training": 1, "opset": 9}),
])
def test_threads_and_isa_levels(op, shape, kw):
    rng = np.random.default_rng([7, len(shape)])
    for dtype in (np.dtype(np.float32), np.dtype(np.float16)):
        inputs, attrs, opset = make_case(op, rng, shape, dtype, True, **kw)
        want = normops.reference.run(op, inputs, attrs, opset=opset)
        for level in normops._isa.available_levels():
            with normops._isa.use(level):
                for n in (1, 2, 4):
                    got = normops.run(op, inputs, attrs, opset=opset, n_threads=n)
                    assert_outputs_equal(got, want, f"{op} {shape} {level} n={n}")


def _plain(x, mean, var, scale, bias, eps=float(np.float32(1e-5))):  # ONNX stores float32
    return (x - mean) / np.sqrt(var + eps) * scale + bias


def test_layouts_match_the_textbook_formula():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 6, 4, 5))
    s, b = rng.standard_normal(6), rng.standard_normal(6)
    c = (slice(None), None, None)
    # instance: statistics per (n, c) plane
    m, v = x.mean(axis=(2, 3), keepdims=True), x.var(axis=(2, 3), keepdims=True)
    np.testing.assert_allclose(normops.instance_normalization(x, s, b), _plain(x, m, v, s[c], b[c]),
                               rtol=1e-12, atol=1e-12)
    # group 21: statistics per (n, g) block, parameters per channel
    g = x.reshape(3, 2, 3, 4, 5)
    m = np.repeat(g.mean(axis=(2, 3, 4)), 3, axis=1)[:, :, None, None]
    v = np.repeat(g.var(axis=(2, 3, 4)), 3, axis=1)[:, :, None, None]
    np.testing.assert_allclose(normops.group_normalization(x, s, b, num_groups=2),
                               _plain(x, m, v, s[c], b[c]), rtol=1e-12, atol=1e-12)
    # group 18: parameters per group
    sg, bg = s[:2], b[:2]
    want = _plain(x, m, v, np.repeat(sg, 3)[c], np.repeat(bg, 3)[c])
    np.testing.assert_allclose(normops.group_normalization(x, sg, bg, num_groups=2, opset=18), want,
                               rtol=1e-12, atol=1e-12)
    # batch: given statistics; training: batch statistics and running ones
    mean, var = rng.standard_normal(6), rng.random(6)
    np.testing.assert_allclose(normops.batch_normalization(x, s, b, mean, var),
                               _plain(x, mean[c], var[c], s[c], b[c]), rtol=1e-12, atol=1e-12)
    y, rm, rv = normops.batch_normalization(x, s, b, mean, var, training_mode=1, momentum=0.5,
                                            full_output=True)
    bm, bv = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    np.testing.assert_allclose(y, _plain(x, bm[c], bv[c], s[c], b[c]), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rm, mean * 0.5 + bm * 0.5, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(rv, var * 0.5 + bv * 0.5, rtol=1e-12, atol=1e-15)


def test_named_functions_equal_run_and_fast_mode():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 4, 9)).astype(np.float32)
    s, b, m, v = (rng.random(4).astype(np.float32) for _ in range(4))
    pairs = [
        (normops.instance_normalization(x, s, b, epsilon=1e-3),
         normops.run(IN, [x, s, b], {"epsilon": 1e-3})),
        (normops.group_normalization(x, s, b, num_groups=2, mode="fast"),
         normops.run(GN, [x, s, b], {"num_groups": 2})),
        (normops.ops.batch_normalization(x, s, b, m, v, training_mode=1, full_output=True),
         normops.run(BN, [x, s, b, m, v], {"training_mode": 1})),
        (normops.batch_normalization(x, s, b, m, v, opset=7),
         normops.run(BN, [x, s, b, m, v], {}, opset=7)),
        (normops.batch_normalization(x, s, b, m, v, opset=1, full_output=True),
         normops.run(BN, [x, s, b, m, v], {"is_test": 1}, opset=1)),
    ]
    for got, want in pairs:
        assert_outputs_equal(got if isinstance(got, tuple) else [got], want)
    assert len(normops.run(BN, [x, s, b, m, v], {})) == 1  # inference: Y only


def test_inputs_not_modified_and_layouts():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4, 6, 5))
    s, b, m, v = (rng.random(4) for _ in range(4))
    keep = [a.copy() for a in (x, s, b, m, v)]
    xt = np.asfortranarray(x)
    big = x.astype(">f8")
    for args, kw in [((s, b), {}), ((s, b), {"num_groups": 2}), ((s, b, m, v), {"training_mode": 1})]:
        fn = {0: normops.instance_normalization, 1: normops.group_normalization,
              2: normops.batch_normalization}[len(kw) and (1 if "num_groups" in kw else 2)]
        want = fn(x, *args, **kw)
        for other in (xt, big, x[:, :, ::1, :]):
            assert_outputs_equal([fn(other, *args, **kw)], [want])
    for a, k in zip((x, s, b, m, v), keep):
        assert np.array_equal(a, k)


def test_empty_inputs():
    s = np.ones(3, np.float32)
    for shape in [(0, 3, 4), (2, 3, 0)]:
        x = np.zeros(shape, np.float32)
        assert normops.instance_normalization(x, s, s).shape == shape
        assert normops.group_normalization(x, s, s, num_groups=3).shape == shape
        assert normops.batch_normalization(x, s, s, s, s).shape == shape
        with pytest.raises(InvalidInputError, match="training_mode"):
            normops.batch_normalization(x, s, s, s, s, training_mode=1)


def test_bad_inputs():
    x = np.ones((2, 4, 3), np.float32)
    s = np.ones(4, np.float32)
    with pytest.raises(InvalidInputError, match="num_groups"):
        normops.group_normalization(x, s, s, num_groups=3)
    with pytest.raises(InvalidInputError, match="num_groups"):
        normops.run(GN, [x, s, s], {})
    with pytest.raises(InvalidInputError, match="'scale'"):
        normops.group_normalization(x, s, s, num_groups=2, opset=18)  # needs 2 values
    with pytest.raises(InvalidInputError, match="stash_type"):
        normops.group_normalization(x, s, s, num_groups=2, stash_type=7)
    s2 = s[:2]
    for stash_type in (10, 7, "x"):  # opset 18 has no stash_type: only the default passes
        with pytest.raises(InvalidInputError, match="GroupNormalization.*'stash_type'.*opset 21"):
            normops.group_normalization(x, s2, s2, num_groups=2, opset=18, stash_type=stash_type)
    assert normops.group_normalization(x, s2, s2, num_groups=2, opset=18, stash_type=np.int64(1)).shape == x.shape
    for opset, p in ((18, s2), (21, s)):  # ONNX's one type T for X, scale and bias, as InstanceNormalization
        for scale, bias in ((p.astype(np.float64), p), (p, p.astype(np.float16))):
            with pytest.raises(InvalidInputError, match="GroupNormalization.*dtype.*one type"):
                normops.group_normalization(x, scale, bias, num_groups=2, opset=opset)
            with pytest.raises(InvalidInputError, match="GroupNormalization.*dtype.*one type"):
                normops.run(GN, [x, scale, bias], {"num_groups": 2}, opset=opset)
    with pytest.raises(InvalidInputError, match="InstanceNormalization.*rank"):
        normops.instance_normalization(x[0], s, s)
    with pytest.raises(InvalidInputError, match="'B'"):
        normops.instance_normalization(x, s, s[:3])
    with pytest.raises(InvalidInputError, match="dtype"):
        normops.instance_normalization(x, s.astype(np.float64), s)
    with pytest.raises(InvalidInputError, match="'input_var'"):
        normops.batch_normalization(x, s, s, s, s[:2])
    with pytest.raises(InvalidInputError, match="training_mode"):
        normops.batch_normalization(x, s, s, s, s, training_mode=2)
    with pytest.raises(InvalidInputError, match="int32"):
        normops.batch_normalization(x.astype(np.int32), s, s, s, s)
    for opset in (1, 6, 7):
        with pytest.raises(UnsupportedError, match="BatchNormalization: opset .*'spatial'=0"):
            normops.run(BN, [x, s, s, s, s], {"spatial": 0}, opset=opset)
    with pytest.raises(InvalidInputError, match="BatchNormalization.*'is_test'.*opsets 1 and 6"):
        normops.batch_normalization(x, s, s, s, s, is_test=1, opset=9)
    with pytest.raises(InvalidInputError, match="BatchNormalization.*'is_test'.*opsets 1 and 6"):
        normops.batch_normalization(x, s, s, s, s, is_test=0)
    with pytest.raises(InvalidInputError, match="BatchNormalization.*training_mode=1 contradicts is_test=1"):
        normops.batch_normalization(x, s, s, s, s, training_mode=1, is_test=1, opset=6)
    with pytest.raises(InvalidInputError, match="BatchNormalization.*'is_test' must be 0 or 1"):
        normops.run(BN, [x, s, s, s, s], {"is_test": 2}, opset=6)
    with pytest.raises(InvalidInputError, match="BatchNormalization.*unknown attribute 'training_mode'"):
        normops.run(BN, [x, s, s, s, s], {"training_mode": 1}, opset=6)
    with pytest.raises(InvalidInputError, match="is_test=0.*at least one element"):
        normops.run(BN, [x[:0], s, s, s, s], {}, opset=6)


def test_legacy_attributes():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    s = rng.random(3).astype(np.float32)
    want = normops.run(IN, [x, s, s], {}, opset=6)
    assert_outputs_equal(normops.run(IN, [x, s, s], {"consumed_inputs": [0]}, opset=1), want)
    want = normops.run(BN, [x, s, s, s, s], {}, opset=9)
    got = normops.run(BN, [x, s, s, s, s], {"consumed_inputs": [0], "is_test": 1, "spatial": 1}, opset=1)
    assert_outputs_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_legacy_training_outputs(dtype):
    """Opsets 1-9 in training mode: Y and the running statistics are the
    opset-15 training node's; saved_mean is the batch mean and saved_var the
    inverse standard deviation, exactly the values step 4 used for Y."""
    rng = np.random.default_rng(21)
    x = (rng.standard_normal((4, 3, 6, 5)) * 4 + 2).astype(dtype)
    s, b, m = (rng.standard_normal(3).astype(dtype) for _ in range(3))
    v = (rng.random(3) + 0.5).astype(dtype)
    new = normops.batch_normalization(x, s, b, m, v, training_mode=1, momentum=0.6, full_output=True)
    for opset, kw in ((9, {"training_mode": 1}), (7, {"training_mode": 1}), (6, {"is_test": 0}),
                      (6, {"training_mode": 1}), (1, {"training_mode": 1})):
        got = normops.batch_normalization(x, s, b, m, v, momentum=0.6, opset=opset, full_output=True, **kw)
        assert len(got) == 5 and all(a.dtype == np.dtype(dtype) for a in got)
        assert_outputs_equal(got[:3], new, f"opset {opset} {kw}")
        assert_outputs_equal([normops.batch_normalization(x, s, b, m, v, momentum=0.6, opset=opset, **kw)],
                             new[:1])
    _, _, _, saved_mean, saved_var = got
    wide = x.astype(np.float64)
    np.testing.assert_allclose(saved_mean, wide.mean(axis=(0, 2, 3)), rtol=1e-3 if dtype == np.float16 else 1e-5)
    np.testing.assert_allclose(saved_var, 1 / np.sqrt(wide.var(axis=(0, 2, 3)) + np.float32(1e-5)),
                               rtol=1e-3 if dtype == np.float16 else 1e-5)
    if dtype != np.float16:  # Y is step 4 applied with exactly these two values
        c = (None, slice(None), None, None)
        y = (((x - saved_mean[c]) * saved_var[c]) * s[c]) + b[c]
        assert_outputs_equal([y], new[:1])
    # bit for bit with the reference at every thread count, five outputs
    x9 = (rng.standard_normal((4, 9, 60, 40)) * 3).astype(dtype)  # a chunk per channel: 9 chunks
    params = [rng.standard_normal(9).astype(dtype) for _ in range(3)] + [(rng.random(9) + 0.1).astype(dtype)]
    for opset, attrs in ((9, {"training_mode": 1}), (6, {"is_test": 0})):
        want = normops.reference.run(BN, [x9, *params], {"momentum": 0.6, **attrs}, opset=opset)
        assert len(want) == 5
        for n in range(1, 9):
            got = normops.run(BN, [x9, *params], {"momentum": 0.6, **attrs}, opset=opset, n_threads=n)
            assert_outputs_equal(got, want, f"opset {opset} n={n}")
    # is_test=1 (the default through the function) is inference at opsets 1 and 6
    for opset in (1, 6):
        assert_outputs_equal([normops.batch_normalization(x, s, b, m, v, opset=opset)],
                             [normops.batch_normalization(x, s, b, m, v, opset=9)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_direct_route_equals_reference(dtype):
    """The named functions' per-call route (plain contiguous arrays)."""
    rng = np.random.default_rng(11)
    for shape in [(2, 4, 33), (3, 8, 5, 7), (64, 8), (2, 16, 300)]:
        x = make_x(rng, shape, np.dtype(dtype), special=True)
        C = shape[1]
        s, b, m = (rng.standard_normal(C).astype(dtype) for _ in range(3))
        v = rng.random(C).astype(dtype)
        for n in (1, 2):
            if len(shape) >= 3:
                got = normops.instance_normalization(x, s, b, n_threads=n, epsilon=0.01)
                assert_outputs_equal([got], normops.reference.run(IN, [x, s, b], {"epsilon": 0.01}))
            got = normops.group_normalization(x, s, b, num_groups=4, n_threads=n)
            assert_outputs_equal([got], normops.reference.run(GN, [x, s, b], {"num_groups": 4}))
            got = normops.group_normalization(x, s[:2], b[:2], num_groups=2, opset=18, n_threads=n)
            assert_outputs_equal([got], normops.reference.run(GN, [x, s[:2], b[:2]], {"num_groups": 2}, opset=18))
            got = normops.batch_normalization(x, s, b, m, v, n_threads=n, full_output=True)
            assert_outputs_equal(got, normops.reference.run(BN, [x, s, b, m, v], {}))
            got = normops.batch_normalization(x, s, b, m, v, n_threads=n, training_mode=1, momentum=0.3,
                                              full_output=True)
            assert_outputs_equal(got, normops.reference.run(BN, [x, s, b, m, v],
                                                            {"training_mode": 1, "momentum": 0.3}))
            got = normops.batch_normalization(x, s, b, m, v, n_threads=n, training_mode=1)
            assert_outputs_equal([got], normops.reference.run(BN, [x, s, b, m, v], {"training_mode": 1})[:1])
