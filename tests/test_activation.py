"""Sigmoid: bit for bit against the executable specification at every
opset, dtype, thread count and ISA level; exact saturation; the fast
flavour within 4 float32 steps of exact; the vectors that skip the
exponential's range masks. (The steps Sigmoid shares with Softmax are
also tested across both in test_softmax.py.)"""
import numpy as np
import pytest

import normops
import normops._isa as isa

from bits import assert_same_bits
from test_softmax import border_vectors, special_rows


@pytest.mark.parametrize("opset", [1, 6, 13])
def test_sigmoid_matches_the_specification(opset):
    rng = np.random.default_rng(opset)
    for dtype in (np.float32, np.float64, np.float16):
        x = special_rows(rng, 40, 1001, dtype)
        got = normops.run("Sigmoid", [x], opset=opset)[0]
        assert_same_bits(got, normops.reference.run("Sigmoid", [x], opset=opset)[0])
        assert got.dtype == x.dtype


def test_sigmoid_saturates_exactly():
    x = np.array([-np.inf, -1000, -88, 0, 20, 1000, np.inf, np.nan], np.float32)
    y = normops.sigmoid(x)
    assert y[0] == 0 and y[1] == 0 and y[3] == 0.5
    assert y[4] == 1 and y[5] == 1 and y[6] == 1
    assert y[7:].view(np.uint32)[0] == 0x7FC00000
    np.testing.assert_allclose(normops.sigmoid(x[:5], mode="fast"), y[:5], rtol=1e-6)


def test_sigmoid_threads_do_not_change_bits():
    x = np.random.default_rng(8).standard_normal(200_001).astype(np.float32) * 20
    ref = normops.sigmoid(x, n_threads=1)
    for t in (2, 3, 8):
        assert_same_bits(normops.sigmoid(x, n_threads=t), ref)
    for level in isa.available_levels():
        with isa.use(level):
            assert_same_bits(normops.sigmoid(x), ref)


def test_fast_sigmoid_at_every_level():
    # within 3 * 2^-23 relative of exact (docs/transcendentals.md: the fast
    # exp's step, carried through 1 + e and 1 / v, is up to 4 float32 steps
    # of the result when the mantissas sit at opposite ends of a binade),
    # saturating like exact
    rng = np.random.default_rng(9)
    x = np.concatenate([(rng.standard_normal(1 << 16) * 30).astype(np.float32),
                        np.array([-np.inf, -1000, -104, -88, -0.0, 0.0, 20, 1000, np.inf, np.nan], np.float32)])
    exact = normops.sigmoid(x)
    for level in isa.available_levels():
        with isa.use(level):
            fast = normops.sigmoid(x, mode="fast")
        steps = np.abs(fast.view(np.uint32).astype(np.int64) - exact.view(np.uint32).astype(np.int64))
        assert steps.max() <= 4, level
        finite = exact > 0
        rel = np.abs(fast[finite].astype(np.float64) / exact[finite] - 1)
        assert rel.max() <= 3 * 2.0 ** -23, level
        assert_same_bits(fast[~finite], exact[~finite])  # +0 and NaN alike


def test_exact_sigmoid_where_vectors_skip_the_exponentials_range_masks():
    # a vector whose every -x is in [-87.3, 88] takes exp32 without its
    # range masks (AVX2): vectors on both sides of those borders
    rng = np.random.default_rng(32)
    x = border_vectors(rng, [-88.0, -88.01, -88.73, 87.29, 87.3, 87.31, 104.0, 103.9, np.nan, -np.inf, np.inf,
                             -0.0], -90, 110, (-87, 87))
    want = normops.reference.run("Sigmoid", [x])[0]
    for level in isa.available_levels():
        with isa.use(level):
            for t in (1, 2, 3):
                assert_same_bits(normops.run("Sigmoid", [x], mode="exact", n_threads=t)[0], want)
