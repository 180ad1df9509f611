"""normops' own exp and log: exp32/log32 correctly rounded (against the x86
long-double reference and mpmath), bit-identical at every ISA level and
thread count; exp64/log64 within one ulp; the fast exp within its bound;
the public API. The exhaustive check of all 2^32 inputs is
``python -m normops verify-transcendentals`` (minutes, not run here)."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import normops
import normops._isa as isa
from normops import InvalidInputError
from normops_tools import verify_transcendentals as vt

mpmath = pytest.importorskip("mpmath")

ROOT = Path(__file__).resolve().parents[1]
LEVELS = isa.available_levels()
FUNCTIONS = ("exp", "log")
HAVE_REFERENCE = isa.kernels.has_long_double_reference()
needs_reference = pytest.mark.skipif(not HAVE_REFERENCE, reason="no x86 long-double reference in this build")

# Inputs every array loop must get right in any lane: those closest to a
# float32 midpoint (HARD) and where exp32's float32 quick path comes closest
# to a wrong result (tests/data/exp_log_edges.json says how each was found).
_EDGES = json.loads((Path(__file__).resolve().parent / "data" / "exp_log_edges.json").read_text())
HARD = {f: _EDGES["hardest"][f] for f in ("exp", "log")}
EDGE = {"exp": HARD["exp"] + _EDGES["exp_float32_quick_path"]["inputs"] + _EDGES["exp_float32_quick_path_avx2"]["inputs"],
        "log": HARD["log"]}

F32_MAX = np.finfo(np.float32).max
NAN32 = 0x7FC00000
NAN64 = 0x7FF8000000000000
# Documented bound of the fast exp (docs/transcendentals.md): at most one
# float32 step from the correctly rounded exp32 (at most 1.22 ulp of e^x at
# any level), measured on every input.
FAST_MAX_STEPS = 1


def f32(values):
    return np.array([float.fromhex(v) if isinstance(v, str) else v for v in values], np.float32)


KERNEL = {"exp": "exp32_into", "log": "log32_into", "exp_fast": "exp32_fast_into"}


def run32(module, function, x, scalar=False, n_threads=1):
    y = np.empty_like(x)
    getattr(module, KERNEL[function])(x, y, n_threads, scalar)
    return y.view(np.uint32)


def correct(function, x):
    return np.array([vt.correctly_rounded(function, v) for v in x], np.uint32)


def random_patterns(n, seed):
    return np.random.default_rng(seed).integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)


@pytest.fixture(autouse=True)
def ieee_subnormals():
    # flush-to-zero / denormals-are-zero (set by some -ffast-math library)
    # would change subnormal results: say so instead of failing obscurely
    assert isa.routes.mxcsr() & 0x8040 == 0, "FTZ/DAZ is set in this process: subnormal results are flushed"


# ------------------------------------------------------------- exactness

@needs_reference
@pytest.mark.parametrize("function", FUNCTIONS)
def test_random_patterns_match_the_long_double_reference(function):
    x = random_patterns(1 << 20, seed=11 if function == "exp" else 12).view(np.float32)
    ref = np.empty(x.size, np.uint32)
    near = np.empty(x.size, np.uint8)
    flagged, closest, _ = getattr(isa.kernels, f"{function}32_reference_into")(x, ref, near, 2)
    assert flagged == int(near.sum())
    assert 0 <= closest < 0.5
    for level in LEVELS:
        got = run32(isa.load(level), function, x, n_threads=2)
        trusted = near == 0
        assert np.array_equal(got[trusted], ref[trusted]), level
        for i in np.nonzero(~trusted)[0]:
            assert got[i] == vt.correctly_rounded(function, x[i])


@pytest.mark.parametrize("function", FUNCTIONS)
def test_hardest_inputs_are_correctly_rounded(function):
    x = f32(HARD[function])
    for text, value in zip(HARD[function], x):
        assert float(value) == float.fromhex(text)  # the list holds float32 values
    want = correct(function, x)
    for level in LEVELS:
        for scalar in (False, True):
            assert np.array_equal(run32(isa.load(level), function, x, scalar), want), (level, scalar)
    public = normops.exp32 if function == "exp" else normops.log32
    assert np.array_equal(public(x).view(np.uint32), want)
    # they are as hard as documented: close to a midpoint, yet decided
    distances = np.log2([vt.midpoint_distance(function, v) for v in x])
    hardest, loosest = (-28.6, -26.9) if function == "exp" else (-34.0, -31.0)
    assert distances.min() < hardest and distances.max() < loosest


@needs_reference
@pytest.mark.parametrize("function", FUNCTIONS)
def test_reference_flags_inputs_near_a_midpoint(function):
    # a coarse threshold flags some inputs; mpmath confirms the kernels there
    x = random_patterns(1 << 16, seed=5).view(np.float32)
    ref = np.empty(x.size, np.uint32)
    near = np.empty(x.size, np.uint8)
    flagged, closest, pattern = getattr(isa.kernels, f"{function}32_reference_into")(x, ref, near, 1, 10)
    assert flagged > 0 and flagged == int(near.sum())
    assert pattern in x.view(np.uint32)
    got = run32(isa.kernels, function, x)
    for i in np.nonzero(near)[0]:
        assert vt.midpoint_distance(function, x[i]) < 2.0 ** -9
        assert got[i] == vt.correctly_rounded(function, x[i]) == ref[i]


def _boundaries_exp():
    """float32 inputs around every place where exp32's result changes regime."""
    mp = mpmath
    with mp.workprec(100):
        points = [mp.log(mp.mpf(2) ** 128 - mp.mpf(2) ** 103),  # overflow threshold
                  mp.log(mp.mpf(2) ** -126), mp.log(mp.mpf(2) ** -149),
                  mp.log(mp.mpf(2) ** -150), mp.log(mp.mpf(3) * mp.mpf(2) ** -150)]
    xs = []
    for p in points:
        centre = np.float32(float(p)).view(np.int32)
        xs.extend((centre + np.arange(-3, 4, dtype=np.int32)).view(np.float32))
    return np.array(xs, np.float32)


def test_exp32_special_values():
    x = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 89.0, -104.0, 88.72283, 88.72284, 1e30, -1e30,
                  F32_MAX, -F32_MAX, 1e-45, -1e-45, 2.0 ** -30, -(2.0 ** -30)], np.float32)
    x = np.concatenate([x, np.array([0x7F800001, 0xFFC12345, 0x7FBFFFFF], np.uint32).view(np.float32)])
    want = np.array([NAN32, NAN32, 0x7F800000, 0, 0x3F800000, 0x3F800000, 0x7F800000, 0,
                     np.float32(3.4027e38).view(np.uint32), 0x7F800000, 0x7F800000, 0,
                     0x7F800000, 0, 0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000,
                     NAN32, NAN32, NAN32], np.uint32)
    want[8] = vt.correctly_rounded("exp", x[8])
    assert np.float32(want[8].view(np.float32)) < np.inf
    for level in LEVELS:
        for scalar in (False, True):
            assert np.array_equal(run32(isa.load(level), "exp", x, scalar), want), (level, scalar)
    edges = _boundaries_exp()
    got = run32(isa.kernels, "exp", edges)
    assert np.array_equal(got, correct("exp", edges))
    assert 0x7F800000 in got and 0 in got and 1 in got  # inf, +0, 2^-149
    assert np.any((got > 1) & (got < 0x00800000)) and np.any((got >= 0x00800000) & (got < 0x7F800000))


def test_log32_special_values():
    x = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, -1e-45, F32_MAX, 1e-45,
                  np.float32(1.1754944e-38), 2.0, 0.5], np.float32)
    x = np.concatenate([x, np.array([0x7F800001, 0xFFC12345], np.uint32).view(np.float32)])
    want = np.array([NAN32, NAN32, 0x7F800000, NAN32, 0xFF800000, 0xFF800000, 0, NAN32, NAN32, 0, 0,
                     0, 0, 0, NAN32, NAN32], np.uint32)
    for i in (9, 10, 11, 12, 13):
        want[i] = vt.correctly_rounded("log", x[i])
    for level in LEVELS:
        for scalar in (False, True):
            assert np.array_equal(run32(isa.load(level), "log", x, scalar), want), (level, scalar)


def test_log32_subnormals_and_neighbours_of_one():
    subnormal = np.arange(1, 1 << 23, 163_841, dtype=np.uint32).view(np.float32)
    ones = (np.float32(1).view(np.int32) + np.arange(-300, 301, dtype=np.int32)).view(np.float32)
    powers = np.ldexp(np.float32(1), np.arange(-149, 128)).astype(np.float32)
    for x in (subnormal, ones, powers):
        want = correct("log", x)
        for level in LEVELS:
            assert np.array_equal(run32(isa.load(level), "log", x), want), level


def test_exp32_near_zero():
    # exp(x) for tiny x is 1 or its neighbours; the midpoint 1 - 2^-25 case included
    small = np.ldexp(np.float32(1), np.arange(-149, -10)).astype(np.float32)
    x = np.concatenate([small, -small, small * np.float32(1.5), -small * np.float32(1.5)])
    want = correct("exp", x)
    for level in LEVELS:
        assert np.array_equal(run32(isa.load(level), "exp", x), want), level


# ------------------------------------------------------ bit-identity

@pytest.mark.parametrize("function", FUNCTIONS + ("exp_fast",))
def test_every_level_and_the_scalar_loop_agree(function):
    x = random_patterns(1 << 18, seed=3).view(np.float32)
    x = np.concatenate([x, np.float32(np.random.default_rng(4).uniform(-110, 95, 1 << 16))])
    results = {}
    for level in LEVELS:
        module = isa.load(level)
        vector = run32(module, function, x)
        scalar = run32(module, function, x, scalar=True)
        assert np.array_equal(vector, scalar), level
        results[level] = vector
    if function != "exp_fast":  # the fast flavour may differ between levels (docs/specification.md §2.3)
        first = results[LEVELS[0]]
        for level in LEVELS[1:]:
            assert np.array_equal(results[level], first), level


@pytest.mark.parametrize("function", FUNCTIONS)
def test_quick_paths_equal_the_careful_path(function):
    # the array loops (quick path per ISA level, its rounding test, masked
    # or copied tails, the careful path for flagged vectors) against the
    # one-element-at-a-time careful path, at every level, in place too
    rng = np.random.default_rng(40)
    hard = f32(EDGE[function])
    if function == "exp":
        special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 88.72284, -87.33655, -103.97209, -87.3, -104.0]
        values = rng.uniform(-110, 95, 1 << 17)
    else:
        special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 1e-45, 1.1754942e-38, 0.75, 1.5, 0.96875]
        values = np.exp(rng.uniform(-100, 88, 1 << 17))
    sample = np.concatenate([random_patterns(1 << 19, seed=41).view(np.float32), values.astype(np.float32),
                             np.float32(special), hard])
    rng.shuffle(sample)
    for level in LEVELS:
        module = isa.load(level)
        assert np.array_equal(run32(module, function, sample), run32(module, function, sample, scalar=True)), level
        for length in range(41):
            for start in (0, 3, 16 * 1000 + 5):  # tails at several offsets of the buffer
                x = sample[start:start + length].copy()
                if length:
                    x[rng.integers(0, length)] = hard[length % hard.size]  # a hard element somewhere
                want = run32(module, function, x, scalar=True)
                assert np.array_equal(run32(module, function, x), want), (level, length, start)
                inplace = x.copy()
                getattr(module, KERNEL[function])(inplace, inplace, 1, False)
                assert np.array_equal(inplace.view(np.uint32), want), (level, length, start)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_hard_inputs_in_every_lane(function):
    # each of the hardest inputs and the quick paths' edges at every position
    # of a 16-lane vector and of the tails, among easy neighbours, at every
    # level: correctly rounded
    hard = f32(EDGE[function])
    want = correct(function, hard)
    easy = np.float32(0.5 if function == "exp" else 3.0)
    easy_bits = correct(function, [easy])[0]
    for level in LEVELS:
        module = isa.load(level)
        for length in (1, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33):
            for lane in range(length):
                x = np.full(length, easy, np.float32)
                for value, bits in zip(hard, want):
                    x[lane] = value
                    got = run32(module, function, x)
                    assert got[lane] == bits, (level, length, lane, float(value).hex())
                    assert np.all(got[np.arange(length) != lane] == easy_bits)


@pytest.mark.parametrize("function", ("exp64", "log64"))
def test_float64_levels_agree(function):
    rng = np.random.default_rng(9)
    x = np.concatenate([rng.integers(0, 1 << 64, 1 << 16, dtype=np.uint64).view(np.float64),
                        rng.uniform(-750, 720, 1 << 14)])
    results = []
    for level in LEVELS:
        module = isa.load(level)
        y = np.empty_like(x)
        getattr(module, f"{function}_into")(x, y)
        ys = np.empty_like(x)
        getattr(module, f"{function}_into")(x, ys, 1, True)
        assert np.array_equal(y.view(np.uint64), ys.view(np.uint64)), level
        results.append(y.view(np.uint64))
    for other in results[1:]:
        assert np.array_equal(other, results[0])


@pytest.mark.parametrize("function", FUNCTIONS + ("exp_fast",))
def test_thread_count_does_not_change_a_bit(function):
    x = random_patterns(300_001, seed=21).view(np.float32)
    one = run32(isa.kernels, function, x, n_threads=1)
    for n in (2, 3, 8):
        assert np.array_equal(run32(isa.kernels, function, x, n_threads=n), one), n
    if function != "exp_fast":
        public = normops.exp32 if function == "exp" else normops.log32
        for n in (1, 2, 5):
            assert np.array_equal(public(x, n_threads=n).view(np.uint32), one)
        with normops.config(n_threads=3):
            assert np.array_equal(public(x).view(np.uint32), one)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_ranges_walk_the_patterns(function):
    start, count, stride = 0x3F7FFF00, 70_000, 3
    patterns = (start + stride * np.arange(count, dtype=np.uint64)).astype(np.uint32)
    out = np.empty(count, np.uint32)
    getattr(isa.kernels, f"{function}32_range")(start, count, out, stride, 2)
    assert np.array_equal(out, run32(isa.kernels, function, patterns.view(np.float32)))
    top = np.empty(16, np.uint32)
    getattr(isa.kernels, f"{function}32_range")(0xFFFFFFF0, 16, top)  # the last patterns: NaN
    assert np.all(top == NAN32)
    with pytest.raises(ValueError, match="2\\^32"):
        getattr(isa.kernels, f"{function}32_range")(0xFFFFFFF0, 17, np.empty(17, np.uint32))
    with pytest.raises(ValueError, match="2\\^32"):  # no wrap-around of start + i*stride
        getattr(isa.kernels, f"{function}32_range")(0, 2, np.empty(2, np.uint32), 1 << 63)
    if HAVE_REFERENCE:
        ref, near = np.empty(count, np.uint32), np.empty(count, np.uint8)
        getattr(isa.kernels, f"{function}32_reference_range")(start, count, ref, near, stride, 2)
        assert np.array_equal(ref[near == 0], out[near == 0])


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63, reason="needs x86 long double")
@pytest.mark.parametrize("function", FUNCTIONS)
def test_pairs_before_the_final_rounding(function):
    # the margin of the construction: the hardest inputs need 2^-52.7 (exp)
    # and 2^-58 (log) relative error; measured 2^-58.6 and 2^-60.9
    rng = np.random.default_rng(51)
    if function == "exp":
        x = np.concatenate([rng.uniform(-104, 89, 1 << 17), rng.uniform(-1, 1, 1 << 15)]).astype(np.float32)
    else:
        x = np.concatenate([random_patterns(1 << 17, 52).view(np.float32),
                            (1 + rng.uniform(-2.0 ** -6, 2.0 ** -6, 1 << 15)).astype(np.float32)])
        x = x[(x > 0) & np.isfinite(x) & (x != 1)]
    hi, lo = np.empty(x.size), np.empty(x.size)
    getattr(isa.kernels, f"{function}32_pair_into")(x, hi, lo)
    wide = x.astype(np.longdouble)
    exact = np.exp(wide) if function == "exp" else np.log(wide)
    rel = np.abs((hi.astype(np.longdouble) + lo.astype(np.longdouble) - exact) / exact)
    assert np.all(np.abs(lo) <= np.spacing(np.abs(hi)) / 2)
    assert float(rel.max()) < (2.0 ** -58 if function == "exp" else 2.0 ** -60)


# ---------------------------------------------------------- float64

def _ulp_errors64(function, x, y):
    errors = []
    with mpmath.workprec(128):
        for xi, yi in zip(x.tolist(), y.tolist()):
            exact = (mpmath.exp if function == "exp64" else mpmath.log)(mpmath.mpf(xi))
            _, e = mpmath.frexp(abs(exact))
            ulp = mpmath.mpf(2) ** max(e - 53, -1074)
            errors.append(float(abs(mpmath.mpf(yi) - exact) / ulp))
    return np.array(errors)


def test_exp64_within_one_ulp():
    rng = np.random.default_rng(31)
    x = np.concatenate([rng.uniform(-745.1, 709.7, 1500), rng.uniform(-745.1, -708.4, 300),
                        np.sign(rng.uniform(-1, 1, 1500)) * 2.0 ** rng.uniform(-60, 9.4, 1500)])
    y = np.empty_like(x)
    isa.kernels.exp64_into(x, y)
    errors = _ulp_errors64("exp64", x, y)
    assert errors.max() < 0.76  # 0.5 + ~2^-6 for normal results, 0.75 + ~2^-8 for subnormal ones
    assert errors[np.abs(y) >= 2.0 ** -1022].max() < 0.52


def test_log64_within_one_ulp():
    rng = np.random.default_rng(32)
    x = np.concatenate([rng.integers(1, 0x7FF0000000000000, 1500, dtype=np.uint64).view(np.float64),
                        1.0 + rng.uniform(-2.0 ** -7, 2.0 ** -7, 1500),
                        rng.integers(1, 1 << 52, 300, dtype=np.uint64).view(np.float64)])
    y = np.empty_like(x)
    isa.kernels.log64_into(x, y)
    assert _ulp_errors64("log64", x, y).max() < 0.52


def test_float64_special_values():
    tiny = np.array([5e-324], np.float64)
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 710.0, 709.78, -746.0, -745.0, 5e-324, 1e308])
    e = np.empty_like(x)
    g = np.empty_like(x)
    isa.kernels.exp64_into(x, e)
    isa.kernels.log64_into(x, g)
    eb, gb = e.view(np.uint64), g.view(np.uint64)
    assert eb[0] == NAN64 and e[1] == np.inf and eb[2] == 0 and e[3] == 1 and e[4] == 1
    assert e[7] == np.inf and np.isfinite(e[8]) and eb[9] == 0 and e[10] == tiny[0]
    assert e[11] == 1.0 and e[5] == np.float64(np.e)
    assert gb[0] == NAN64 and g[1] == np.inf and gb[2] == NAN64 and g[3] == -np.inf and g[4] == -np.inf
    assert gb[5] == 0 and gb[6] == NAN64
    assert g[11] == np.float64(float(mpmath.log(mpmath.mpf(5e-324))))
    assert abs(g[12] - float(mpmath.log(mpmath.mpf(1e308)))) <= np.spacing(g[12])


# ---------------------------------------------------------- fast exp

def test_fast_exp_within_its_bound():
    rng = np.random.default_rng(41)
    x = np.concatenate([rng.uniform(-104, 89, 1 << 20).astype(np.float32),
                        random_patterns(1 << 16, seed=42).view(np.float32),
                        _boundaries_exp()])
    for level in LEVELS:
        module = isa.load(level)
        fast = run32(module, "exp_fast", x).astype(np.int64)
        exact = run32(module, "exp", x).astype(np.int64)
        nan = np.isnan(x)
        assert np.all(fast[nan] == NAN32)
        steps = np.abs(fast - exact)[~nan]
        assert steps.max() <= FAST_MAX_STEPS, level


def test_fast_exp_special_values():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 89.0, 1e30, -104.0, -1e30, 88.7, -103.0], np.float32)
    for level in LEVELS:
        y = run32(isa.load(level), "exp_fast", x)
        assert y[0] == NAN32 and y[1] == 0x7F800000 and y[2] == 0 and y[3] == 0x3F800000
        assert y[4] == 0x3F800000 and y[5] == 0x7F800000 and y[6] == 0x7F800000 and y[7] == 0 and y[8] == 0
        assert 0 < y[9] < 0x7F800000 and 0 < y[10] < 0x00800000  # finite; subnormal


# ---------------------------------------------------------- public API

VIEWS = [lambda a: a[::2], lambda a: a.transpose(2, 0, 1), lambda a: a[:, 1, ::-1],
         lambda a: a[0, 0, 0], lambda a: a[:0], lambda a: a[..., None][:, ::3]]


@pytest.mark.parametrize("name", ("exp32", "log32"))
def test_public_api_shapes_strides_and_out(name):
    fn = getattr(normops, name)
    base = np.random.default_rng(7).uniform(0.1, 20, (6, 5, 4)).astype(np.float32)
    saved = base.copy()
    full = fn(base)
    assert full.shape == base.shape and full.dtype == np.float32
    kernel_name = "exp" if name == "exp32" else "log"
    assert np.array_equal(full.reshape(-1).view(np.uint32), run32(isa.kernels, kernel_name, base.reshape(-1)))
    for view in VIEWS:
        got = fn(view(base))
        assert isinstance(got, np.ndarray) and got.shape == view(base).shape
        assert np.array_equal(got.view(np.uint32), np.asarray(view(full)).view(np.uint32))
    assert np.array_equal(base, saved)  # the input is never modified
    # out: returned, filled, may be x itself, may be non-contiguous
    out = np.empty_like(base)
    assert fn(base, out=out) is out and np.array_equal(out.view(np.uint32), full.view(np.uint32))
    inplace = base.copy()
    assert fn(inplace, out=inplace) is inplace and np.array_equal(inplace.view(np.uint32), full.view(np.uint32))
    strided = np.empty((6, 5, 8), np.float32)[:, :, ::2]
    assert fn(base, out=strided) is strided
    assert np.array_equal(strided.view(np.uint32), full.view(np.uint32))
    flat = base.reshape(-1)
    overlapping = np.concatenate([flat, np.zeros(1, np.float32)])
    fn(overlapping[1:], out=overlapping[:-1])  # shifted overlap: as if computed before writing
    want = fn(np.concatenate([flat[1:], np.zeros(1, np.float32)]))
    assert np.array_equal(overlapping[:-1].view(np.uint32), want.view(np.uint32))
    swapped = base.astype(">f4")
    assert np.array_equal(fn(swapped).view(np.uint32), full.view(np.uint32))
    swapped_out = np.empty(base.shape, ">f4")
    fn(base, out=swapped_out)
    assert np.array_equal(swapped_out.astype(np.float32).view(np.uint32), full.view(np.uint32))


@pytest.mark.parametrize("name", ("exp32", "log32"))
def test_public_api_errors(name):
    fn = getattr(normops, name)
    x = np.ones(4, np.float32)
    for bad in (np.ones(4), np.ones(4, np.int32), np.ones(4, np.float16), [1.0, 2.0]):
        with pytest.raises(InvalidInputError, match=f"{name}: input 'x'"):
            fn(bad)
    with pytest.raises(InvalidInputError, match=f"{name}: argument 'out'.*float32"):
        fn(x, out=np.empty(4))
    with pytest.raises(InvalidInputError, match=f"{name}: argument 'out'.*shape"):
        fn(x, out=np.empty(5, np.float32))
    with pytest.raises(InvalidInputError, match=f"{name}: argument 'out'"):
        fn(x, out=[0.0] * 4)
    readonly = np.empty(4, np.float32)
    readonly.flags.writeable = False
    with pytest.raises(InvalidInputError, match="read-only"):
        fn(x, out=readonly)
    with pytest.raises(InvalidInputError, match="n_threads"):
        fn(x, n_threads=0)
    assert name in normops.__all__


# ------------------------------------------------------- tooling

def test_quick_verification_passes(capsys):
    assert vt.main(["--quick", "--near-bits", "14"]) == 0
    printed = capsys.readouterr().out
    for name in ("exp32", "log32", "log1p32", "erf32", "tanh32"):
        assert f"{name}: OK" in printed, name
    assert printed.count("equals the recorded digest") == 5  # the sample's digests are recorded too


def test_verification_without_the_reference_checks_the_digest(monkeypatch, capsys):
    load = isa.load

    class NoReference:
        def __init__(self, module):
            self.module = module

        def __getattr__(self, name):
            return getattr(self.module, name)

        def has_long_double_reference(self):
            return False

    monkeypatch.setattr(isa, "load", lambda level: NoReference(load(level)))
    assert vt.main(["--quick", "--function", "log"]) == 0
    printed = capsys.readouterr().out
    assert "no x86 long-double reference" in printed and "equals the recorded digest" in printed
    assert vt.main(["--stride", "65537", "--function", "log"]) == 1  # nothing to compare with
    assert "UNVERIFIED" in capsys.readouterr().out


def test_tables_header_is_reproducible():
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_transcendental_tables.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr



def test_verification_catches_a_wrong_result(monkeypatch):
    # a build that returns one wrong bit pattern must fail the check
    real = isa.load(LEVELS[-1])
    bad = 0x3F800001  # exp32(1 + 2^-23)

    class Broken:
        def __getattr__(self, name):
            return getattr(real, name)

        def exp32_range(self, start, count, out, stride=1, n_threads=1):
            real.exp32_range(start, count, out, stride, n_threads)
            i, rem = divmod(bad - start, stride)
            if rem == 0 and 0 <= i < count:
                out[i] ^= 1

    load = isa.load
    monkeypatch.setattr(isa, "load", lambda level: Broken() if level == "broken" else load(level))
    quiet = lambda text: None  # noqa: E731
    assert vt.check_function("exp", ["broken"], stride=(1 << 16) + 1, report=quiet).ok  # bad not sampled
    alone = vt.check_function("exp", ["broken"], stride=bad, report=quiet)  # patterns 0, bad, 2 bad, ...
    assert not alone.ok and alone.n_wrong == 1 and alone.wrong[0][0] == bad
    beside = vt.check_function("exp", [LEVELS[0], "broken"], stride=bad, report=quiet)
    assert not beside.ok and beside.n_wrong == 0 and beside.n_level_mismatches == 1


@pytest.mark.parametrize("function", ["erf", "tanh"])
def test_faithful_verification_catches_a_result_beyond_one_ulp(monkeypatch, function):
    # erf32 / tanh32 two float32 steps off at one input must fail the check
    real = isa.load(LEVELS[-1])
    bad = 0x3F000000  # f(0.5)

    class Broken:
        def __getattr__(self, name):
            if name == f"{function}32_into":
                def broken(x, out, n_threads=1, scalar=False):
                    getattr(real, name)(x, out, n_threads, scalar)
                    hit = x.view(np.uint32) == bad
                    out.view(np.uint32)[hit] ^= 2
                return broken
            return getattr(real, name)

    load = isa.load
    monkeypatch.setattr(isa, "load", lambda level: Broken() if level == "broken" else load(level))
    quiet = lambda text: None  # noqa: E731
    check = vt.check_faithful
    assert check(function, ["broken"], stride=(1 << 16) + 1, report=quiet).ok  # bad not sampled
    alone = check(function, ["broken"], stride=bad, report=quiet)  # patterns 0, bad, 2 bad, ...
    assert not alone.ok and alone.n_wrong == 1 and alone.wrong[0][0] == bad
    beside = check(function, [LEVELS[0], "broken"], stride=bad, report=quiet)
    assert not beside.ok and beside.n_level_mismatches == 1
