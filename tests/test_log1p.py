"""normops' own log1p (docs/specification.md §5.1, §5.2;
docs/transcendentals.md, "log1p32 and log1p64"): log1p32 correctly
rounded (against the x86 long-double reference and mpmath; all 2^32
inputs are proven by ``python -m normops verify-transcendentals
--function log1p``), the same bits at every ISA level, in the vector and
the one-at-a-time loops and at every thread count; log1p64 below one ulp
on a large sample against mpmath; special values; the public log1p32."""
import numpy as np
import pytest

import normops
import normops._isa as isa
from normops import InvalidInputError
from normops_tools import verify_transcendentals as vt

mpmath = pytest.importorskip("mpmath")

LEVELS = isa.available_levels()
HAVE_REFERENCE = isa.kernels.has_long_double_reference()
needs_reference = pytest.mark.skipif(not HAVE_REFERENCE, reason="no x86 long-double reference in this build")


def log1p32(module, x, scalar=False, n_threads=1):
    y = np.empty_like(x)
    module.log1p32_into(x, y, n_threads, scalar)
    return y.view(np.uint32)


def correct(x):
    return np.array([vt.correctly_rounded("log1p", v) for v in x], np.uint32)


def interesting32(rng, n):
    """Random float32 inputs where log1p's regimes meet: near 0 (both
    signs, down to subnormals), around the branch at 2^-7, near -1, near
    powers of two, large ones."""
    parts = [
        rng.uniform(-1, 1, n),
        np.exp(rng.uniform(np.log(1e-45), np.log(1e-2), n)) * rng.choice([-1, 1], n),
        2.0 ** -7 * (1 + rng.uniform(-0.01, 0.01, n)) * rng.choice([-1, 1], n),
        -1 + np.exp(rng.uniform(np.log(6e-8), np.log(0.5), n)),
        np.exp(rng.uniform(0, np.log(3.4e38), n)),
        2.0 ** rng.integers(-20, 60, n) * (1 + rng.uniform(-1e-6, 1e-6, n)) - 1,
    ]
    return np.concatenate(parts).astype(np.float32)


@needs_reference
def test_random_patterns_match_the_long_double_reference():
    rng = np.random.default_rng(13)
    x = np.concatenate([rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32).view(np.float32),
                        interesting32(rng, 1 << 15)])
    ref = np.empty(x.size, np.uint32)
    near = np.empty(x.size, np.uint8)
    flagged, closest, _ = isa.kernels.log1p32_reference_into(x, ref, near, 2)
    assert flagged == int(near.sum()) and 0 <= closest < 0.5
    for level in LEVELS:
        got = log1p32(isa.load(level), x, n_threads=2)
        trusted = near == 0
        differ = np.nonzero(got[trusted] != ref[trusted])[0]
        for i in np.nonzero(trusted)[0][differ][:20]:  # the reference errs by 2^-40 ulp: mpmath decides
            assert got[i] == vt.correctly_rounded("log1p", x[i]), (level, float(x[i]).hex())
        assert differ.size < 20
        for i in np.nonzero(~trusted)[0]:
            assert got[i] == vt.correctly_rounded("log1p", x[i])


def test_samples_against_mpmath_at_every_level_and_loop():
    x = interesting32(np.random.default_rng(14), 300)
    want = correct(x)
    for level in LEVELS:
        for scalar in (False, True):
            assert np.array_equal(log1p32(isa.load(level), x, scalar), want), (level, scalar)
    assert np.array_equal(normops.log1p32(x).view(np.uint32), want)


def test_log1p32_special_values():
    x = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, -1.5, -np.finfo(np.float32).max, 1.0,
                  np.finfo(np.float32).max, 1e-45, -1e-45, 2.0 ** -7, -(2.0 ** -7), np.nextafter(-1, 0)],
                 np.float32)
    want = correct(x)
    for level in LEVELS:
        for scalar in (False, True):
            got = log1p32(isa.load(level), x, scalar)
            assert np.array_equal(got, want), (level, scalar)
    assert want[0] == want[1] == want[3] == want[7] == want[8] == 0x7FC00000
    assert want[4] == 0 and want[5] == 0x80000000 and want[6] == 0xFF800000


def test_every_level_thread_count_and_range_agree():
    x = np.random.default_rng(15).integers(0, 1 << 32, 200_003, dtype=np.uint64).astype(np.uint32).view(
        np.float32)
    first = log1p32(isa.kernels, x)
    for level in LEVELS:
        module = isa.load(level)
        for n in (1, 2, 3, 8):
            assert np.array_equal(log1p32(module, x, n_threads=n), first), (level, n)
        out = np.empty(4099, np.uint32)
        module.log1p32_range(12345, 4099, out, 1000003, 2)
        patterns = (12345 + np.arange(4099, dtype=np.uint64) * 1000003).astype(np.uint32)
        assert np.array_equal(out, log1p32(module, patterns.view(np.float32)))


def ulp_error64(x, y):
    with mpmath.workprec(160):
        exact = mpmath.log1p(mpmath.mpf(float(x)))
        if exact == 0:
            return 0.0 if y == 0 else float("inf")
        _, e = mpmath.frexp(abs(exact))
        quantum = mpmath.ldexp(1, max(int(e) - 53, -1074))
        return float(abs(mpmath.mpf(float(y)) - exact) / quantum)


def test_log1p64_below_one_ulp_on_a_large_sample():
    """100 000 float64 inputs over every regime: at most 0.51 ulp (the
    construction's bound is 0.5 ulp plus 2^-7, docs/transcendentals.md)."""
    rng = np.random.default_rng(16)
    n = 12_500
    x = np.concatenate([
        rng.uniform(-1, 1, n), np.exp(rng.uniform(-700, -5, n)) * rng.choice([-1, 1], n),
        2.0 ** -7 * (1 + rng.uniform(-0.01, 0.01, n)) * rng.choice([-1, 1], n),
        -1 + np.exp(rng.uniform(-36, np.log(0.5), n)), np.exp(rng.uniform(0, 709, n)),
        rng.uniform(-0.5, 3, n), np.exp(rng.uniform(-745, -700, n)),
        2.0 ** rng.integers(-30, 1000, n).astype(np.float64) * (1 + rng.uniform(-1e-12, 1e-12, n)),
    ])
    y = np.empty_like(x)
    isa.kernels.log1p64_into(x, y, 2)
    worst = max(ulp_error64(a, b) for a, b in zip(x, y))
    assert worst < 0.51, worst
    for level in LEVELS:
        other = np.empty_like(x)
        isa.load(level).log1p64_into(x, other, 3, True)
        assert np.array_equal(other.view(np.uint64), y.view(np.uint64)), level


def test_log1p64_special_values():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, -2.0, 5e-324, -5e-324, 1.7976931348623157e308])
    y = np.empty_like(x)
    isa.kernels.log1p64_into(x, y, 1)
    bits = y.view(np.uint64)
    assert bits[0] == bits[2] == bits[6] == 0x7FF8000000000000
    assert y[1] == np.inf and bits[3] == 0 and bits[4] == 0x8000000000000000 and y[5] == -np.inf
    assert y[7] == 5e-324 and y[8] == -5e-324 and y[9] == pytest.approx(709.782712893384)


def test_public_log1p32_api():
    x = np.linspace(-0.9, 5, 24, dtype=np.float32).reshape(4, 6)
    out = np.empty_like(x)
    assert normops.log1p32(x, out=out) is out
    assert np.array_equal(out.view(np.uint32), correct(x.ravel()).reshape(4, 6))
    assert np.array_equal(normops.log1p32(x[:, ::2]), out[:, ::2])
    with pytest.raises(InvalidInputError, match="log1p32: input 'x' has dtype float64"):
        normops.log1p32(x.astype(np.float64))
    assert "log1p32" in normops.__all__
