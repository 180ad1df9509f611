"""Gelu and com.microsoft BiasGelu: bit for bit against the executable
specification (special values, dtypes, threads, ISA levels), the fast
flavour within its bound, and normops' own erf32/tanh32: error bound on a
large sample, special values, the same bits at every level."""
import numpy as np
import pytest

import normops
import normops._isa as isa
from normops import InvalidInputError, UnsupportedError

from bits import assert_same_bits

try:
    import ml_dtypes

    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # optional
    BF16 = None

SPECIALS = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-40, -3e-39, 1.1754944e-38,
            3.4e38, -3.4e38, 1e20, -1e20, 3.92, -3.92, 9.02, -9.02, 5.0, -5.0, 10.0, -10.0, 1e-8, -1e-8]


def sample(rng, shape, dtype):
    x = rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 2, shape)
    flat = x.reshape(-1)
    k = min(flat.size, len(SPECIALS))
    flat[rng.choice(flat.size, k, replace=False)] = SPECIALS[:k]
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def dtypes():
    return [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16)] + ([BF16] if BF16 else [])


def run_both(op, inputs, attrs=None, **kw):
    domain = "com.microsoft" if op == "BiasGelu" else ""
    got = normops.run(op, inputs, attrs, domain=domain, **kw)[0]
    want = normops.reference.run(op, inputs, attrs, domain=domain)[0]
    assert_same_bits(got, want)
    return got


# ------------------------------------------------------------------ Gelu

@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("shape", [(1,), (7,), (33, 17), (3, 5, 1001), ()])
def test_gelu_matches_the_specification(approximate, shape):
    rng = np.random.default_rng([len(shape), approximate == "tanh"])
    for dtype in dtypes():
        x = sample(rng, shape, dtype)
        before = x.copy()
        got = run_both("Gelu", [x], {"approximate": approximate})
        assert got.dtype == x.dtype and got.shape == x.shape
        assert_same_bits(x, before)  # the input is not modified


def test_gelu_special_values():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, 3e38, -3e38, -10.0], np.float32)
    for approximate in ("none", "tanh"):
        for mode in ("exact", "fast"):
            y = normops.gelu(x, approximate=approximate, mode=mode)
            u = y.view(np.uint32)
            assert u[0] == 0x7FC00000 and u[2] == 0x7FC00000  # NaN, and -inf * 0: canonical NaN
            assert y[1] == np.inf and u[3] == 0 and u[4] == 0x80000000
            assert y[6] == np.float32(3e38) and u[7] == 0x80000000 and u[8] == 0x80000000
            assert y[5] == np.float32(1e-45) * np.float32(0.5) * np.float32(1)  # 0.5 x, rounded (to 0)


def test_gelu_float64_and_narrow_types_are_rounded_once():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(5000).astype(np.float16)
    y = normops.gelu(x)
    assert_same_bits(y, normops.gelu(x.astype(np.float32)).astype(np.float16))
    x64 = rng.standard_normal(5000) * 3
    from scipy.special import erf
    want = 0.5 * x64 * (1 + erf(x64 / np.sqrt(2)))
    # 1 + erf cancels for negative x in both: compare relative to 0.5 |x|
    assert np.all(np.abs(normops.gelu(x64) - want) <= 2.0 ** -50 * np.abs(x64))


@pytest.mark.parametrize("op", ["Gelu", "BiasGelu"])
@pytest.mark.parametrize("mode", ["exact", "fast"])
def test_threads_and_levels_do_not_change_bits(op, mode):
    rng = np.random.default_rng(7)
    x = sample(rng, (300, 333), np.float32)
    inputs = [x] if op == "Gelu" else [x, sample(rng, (333,), np.float32)]
    attr_sets = [{"approximate": "none"}, {"approximate": "tanh"}] if op == "Gelu" else [None]
    domain = "com.microsoft" if op == "BiasGelu" else ""
    ref = {}
    for level in isa.available_levels():
        with isa.use(level):
            old = isa.routes.set_threads_always(True)
            try:
                for k, attrs in enumerate(attr_sets):
                    base = normops.run(op, inputs, attrs, domain=domain, mode=mode, n_threads=1)[0]
                    for t in (2, 3, 8):
                        assert_same_bits(normops.run(op, inputs, attrs, domain=domain, mode=mode, n_threads=t)[0], base)
                    if mode == "exact":  # exact: the same bits at every level
                        ref.setdefault(k, base)
                        assert_same_bits(base, ref[k])
            finally:
                isa.routes.set_threads_always(old)


def fast_bound_ok(x, fast, exact):
    # docs/transcendentals.md: the fast erf/tanh are within 2.5 float32 ulps,
    # i.e. 2.5 * 2^-24 absolute below 1, which (0.5 x) carries into the
    # result, plus the roundings of 1 + g and of the product
    x = x.astype(np.float64)
    finite = np.isfinite(exact)
    bound = np.abs(x) * (1.5 * 2.0 ** -24) + np.abs(exact.astype(np.float64)) * 2.0 ** -22 + 2.0 ** -149
    with np.errstate(invalid="ignore"):
        err = np.abs(fast.astype(np.float64) - exact.astype(np.float64))
    assert np.all(err[finite] <= bound[finite]), np.max(err[finite] / bound[finite])
    assert_same_bits(fast[~finite], exact[~finite])


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_fast_is_within_its_bound(approximate):
    rng = np.random.default_rng(11)
    x = np.concatenate([(rng.standard_normal(1 << 17) * 4).astype(np.float32),
                        np.array(SPECIALS, np.float32)])
    exact = normops.gelu(x, approximate=approximate)
    for level in isa.available_levels():
        with isa.use(level):
            fast_bound_ok(x, normops.gelu(x, approximate=approximate, mode="fast"), exact)
    # float64 has one flavour
    x64 = x.astype(np.float64)
    assert_same_bits(normops.gelu(x64, approximate=approximate, mode="fast"),
                     normops.gelu(x64, approximate=approximate))


def test_gelu_errors():
    x = np.ones(4, np.float32)
    with pytest.raises(InvalidInputError, match="Gelu: attribute 'approximate'"):
        normops.gelu(x, approximate="erf")
    with pytest.raises(InvalidInputError, match="Gelu: input 'X' has dtype int32"):
        normops.gelu(np.ones(3, np.int32))
    with pytest.raises(UnsupportedError, match="Gelu: not defined at opset 19"):
        normops.gelu(x, opset=19)
    y = normops.run("Gelu", [x], {"approximate": b"tanh"})[0]
    assert_same_bits(y, normops.gelu(x, approximate="tanh"))
    # bytes, as ONNX protos hold strings, in the named function too
    z = np.linspace(-4, 4, 37, dtype=np.float32)
    assert_same_bits(normops.gelu(z, approximate=b"tanh"), normops.gelu(z, approximate="tanh"))
    assert_same_bits(normops.gelu(z, approximate=b"none"), normops.gelu(z))
    with pytest.raises(InvalidInputError, match="Gelu: attribute 'approximate'"):
        normops.gelu(z, approximate=b"erf")


# -------------------------------------------------------------- BiasGelu

@pytest.mark.parametrize("shape", [(5,), (4, 17), (2, 3, 1000), (9, 16385), (1, 1)])
def test_bias_gelu_matches_the_specification(shape):
    rng = np.random.default_rng(len(shape) + shape[-1])
    for dtype in dtypes():
        a, b = sample(rng, shape, dtype), sample(rng, shape[-1:], dtype)
        got = run_both("BiasGelu", [a, b])
        # Gelu of the rounded sum
        with np.errstate(over="ignore", invalid="ignore"):
            s = (a.astype(np.float32) + b.astype(np.float32)) if dtype != np.float64 else a + b
            if dtype in (np.float32, np.float64):
                assert_same_bits(got, normops.gelu(s))
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.array([0.5, -1, 2, -3], np.float32)
    assert_same_bits(normops.bias_gelu(a, b), normops.gelu(a + b))


def test_bias_gelu_errors():
    a = np.ones((3, 4), np.float32)
    with pytest.raises(InvalidInputError, match="BiasGelu: input 'B' has shape \\(3,\\)"):
        normops.bias_gelu(a, np.ones(3, np.float32))
    with pytest.raises(InvalidInputError, match="BiasGelu: input 'B' has shape \\(1, 4\\)"):
        normops.bias_gelu(a, np.ones((1, 4), np.float32))
    with pytest.raises(InvalidInputError, match="BiasGelu: input 'B' has dtype float64"):
        normops.bias_gelu(a, np.ones(4))
    with pytest.raises(InvalidInputError, match="BiasGelu: input 'A' must have rank >= 1"):
        normops.bias_gelu(np.float32(1), np.ones(1, np.float32))
    with pytest.raises(InvalidInputError, match="BiasGelu: input 'B' is required"):
        normops.run("BiasGelu", [a], domain="com.microsoft")
    with pytest.raises(UnsupportedError, match="BiasGelu"):
        normops.run("BiasGelu", [a, np.ones(4, np.float32)])  # not in the default domain


def test_named_functions_direct_route_gives_the_general_paths_bits(results_of):
    """normops.gelu / bias_gelu and normops.run take a direct route for
    plain float arrays; it must give the general path's bits (OpDef.call,
    the path the reference comparisons above also check), and anything else
    must fall back to the general path."""
    import importlib
    gelu_module = importlib.import_module("normops.gelu")  # (normops.gelu is the function)
    rng = np.random.default_rng(11)
    # a first call settles each operator's opset (its version cache): the
    # direct route takes the calls from then on, whatever ran before
    x, b = sample(rng, (2, 3), np.float32), sample(rng, (3,), np.float32)
    normops.gelu(x), normops.bias_gelu(x, b)
    normops.run("Gelu", [x]), normops.run("BiasGelu", [x, b], domain="com.microsoft")
    routes = normops._isa.routes
    taken = results_of(routes, "gelu_named")  # the named functions' route
    kept = results_of(routes, "gelu_settled")  # normops.run's kept direct function
    for dtype in (np.float32, np.float64):
        for shape in [(0,), (1,), (37,), (5, 33), (2, 3, 1001)]:
            x = sample(rng, shape, dtype)
            b = sample(rng, shape[-1:], dtype)
            for mode in (None, "exact", "fast"):
                for n_threads in (None, 1, 3):
                    for approximate in ("none", "tanh"):
                        kw = dict(mode=mode, n_threads=n_threads)
                        del taken[:]
                        y = normops.gelu(x, approximate=approximate, **kw)
                        assert taken == [True]
                        general = gelu_module.GELU.call((x,), {"approximate": approximate}, None, mode, n_threads)
                        assert_same_bits(y, general[0])
                        del kept[:]  # normops.run takes the straight route too
                        assert_same_bits(normops.run("Gelu", [x], {"approximate": approximate.encode()}, **kw)[0], y)
                        assert kept == [True]
                    del taken[:]
                    y = normops.bias_gelu(x, b, **kw)
                    assert taken == [True]
                    assert_same_bits(y, gelu_module.BIAS_GELU.call((x, b), {}, None, mode, n_threads)[0])
                    del kept[:]
                    assert_same_bits(normops.run("BiasGelu", [x, b], domain="com.microsoft", **kw)[0], y)
                    assert kept == [True]
    x = sample(rng, (6, 8), np.float32)
    # other inputs fall back (and still give the general path's bits)
    with np.errstate(over="ignore"):
        half = x.astype(np.float16)
    for other in (x[:, ::2], half, x.tolist()):
        del taken[:]
        y = normops.gelu(other)
        assert taken in ([], [False])
        assert_same_bits(y, normops.run("Gelu", [other])[0])
    reversed_bias = x[0][::-1]  # not contiguous
    del taken[:]
    y = normops.bias_gelu(x, reversed_bias)
    assert taken == [False]
    assert_same_bits(y, normops.run("BiasGelu", [x, reversed_bias.copy()], domain="com.microsoft")[0])
    with pytest.raises(InvalidInputError, match="n_threads"):
        normops.gelu(x, n_threads=0)
    with pytest.raises(InvalidInputError, match="mode"):
        normops.gelu(x, mode="quick")
    with pytest.raises(InvalidInputError, match="BiasGelu: input 'B' has dtype float64"):
        normops.bias_gelu(x, np.ones(8))


# ------------------------------------------------------- erf32 and tanh32

def ulp_error(y, ref):
    ulp = np.ldexp(1.0, np.maximum(np.frexp(np.abs(ref))[1] - 24, -149))
    return np.abs(y.astype(np.float64) - ref) / ulp


@pytest.mark.parametrize("name", ["erf", "tanh"])
def test_erf_tanh_error_bounds(name):
    special = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.uniform(-10, 10, 1 << 19), np.exp(rng.uniform(-103, 2.3, 1 << 18)),
                        -np.exp(rng.uniform(-103, 2.3, 1 << 17))]).astype(np.float32)
    ref = (special.erf if name == "erf" else np.tanh)(x.astype(np.float64))
    y, f = np.empty_like(x), np.empty_like(x)
    getattr(isa.kernels, f"{name}32_into")(x, y)
    # faithful, at most 0.77 ulp (erf and tanh) measured over every
    # input (docs/transcendentals.md); the float64 references are ~2^-28 ulp off
    assert ulp_error(y, ref).max() < (0.78 if name == "erf" else TANH_MAX)
    for level in isa.available_levels():
        module = isa.load(level)
        z = np.empty_like(x)
        getattr(module, f"{name}32_into")(x, z, 2)
        assert_same_bits(z, y)
        getattr(module, f"{name}32_into")(x, z, 1, True)  # the one-at-a-time loop
        assert_same_bits(z, y)
        getattr(module, f"{name}32_fast_into")(x, f)
        assert ulp_error(f, ref).max() <= 2.5, level
    # float64: against mpmath on a sample (scipy's own erf is 2-3 ulp off at times)
    mpmath = pytest.importorskip("mpmath")
    x64 = np.concatenate([rng.uniform(-7, 7, 3000), np.exp(rng.uniform(-50, 3, 1000))])
    y64 = np.empty_like(x64)
    getattr(isa.kernels, f"{name}64_into")(x64, y64)
    with mpmath.workprec(120):
        f = getattr(mpmath, name)
        err = [abs(mpmath.mpf(float(y)) - f(mpmath.mpf(float(v)))) / np.spacing(abs(float(f(mpmath.mpf(float(v))))))
               for v, y in zip(x64, y64)]
    assert max(err) <= 1.5


#: the fast erf's largest error at AVX2 over every input (docs/transcendentals.md)
FAST_ERF_AVX2_MAX = 1.7201


def test_fast_erf_at_interval_edges_saturation_and_subnormals():
    """The fast erf around every interval edge of both constructions (32
    intervals of width 1/8; AVX2's 8 of width 1/2, edges at k/2 + 1/4),
    around the saturation and across the subnormals: within 2.5 ulp at every
    level, within its measured maximum at AVX2 (its own construction); the
    one-element loop gives the vector loop's bits."""
    special = pytest.importorskip("scipy.special")
    edges = np.concatenate([np.arange(33) / 8, np.arange(9) / 2 + 0.25, [3.9192, 3.93]]).astype(np.float32)
    pats = (edges.view(np.int32)[:, None] + np.arange(-400, 401)[None, :]).ravel()
    x = pats[pats >= 0].astype(np.int32).view(np.float32)
    x = np.concatenate([x, -x, np.ldexp(np.float32(1.5), -np.arange(1, 149)).astype(np.float32)])
    ref = special.erf(x.astype(np.float64))
    for level in isa.available_levels():
        module = isa.load(level)
        f, g = np.empty_like(x), np.empty_like(x)
        module.erf32_fast_into(x, f)
        module.erf32_fast_into(x, g, 1, True)
        assert_same_bits(g, f)
        assert ulp_error(f, ref).max() <= (FAST_ERF_AVX2_MAX if level == "avx2" else 2.5), level


def test_fast_erf_gelu_is_the_formula_on_the_levels_fast_erf():
    """The fast erf Gelu is (0.5 v) (1 + erf32_fast(v RN(1/sqrt 2))) in that
    order on the level's own fast erf (AVX-512 documents that it takes the
    exact erf32 instead); at AVX2 it is not the exact Gelu."""
    rng = np.random.default_rng(23)
    v = np.concatenate([sample(rng, (4099,), np.float32), np.array(SPECIALS, np.float32)])
    for level in isa.available_levels():
        module = isa.load(level)
        y = np.empty_like(v)
        module.gelu_flat(v, None, y, False, True, 1)
        exact = np.empty_like(v)
        module.gelu_flat(v, None, exact, False, False, 1)
        if level == "avx512":
            assert_same_bits(y, exact)
            continue
        g = np.empty_like(v)
        module.erf32_fast_into(v * np.float32(0.70710678118654752440), g)
        with np.errstate(invalid="ignore", over="ignore"):
            want = (np.float32(0.5) * v) * (np.float32(1) + g)
        want[np.isnan(want)] = np.float32(np.nan)
        assert_same_bits(y, want)
        if level == "avx2":
            assert (y.view(np.uint32) != exact.view(np.uint32)).any()


@pytest.mark.parametrize("name", ["erf", "tanh"])
def test_erf_tanh_special_values(name):
    x = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-40, 100, -100], np.float32)
    tiny = 1.1283791670955126 if name == "erf" else 1.0
    for fn in (f"{name}32_into", f"{name}32_fast_into"):
        y = np.empty_like(x)
        getattr(isa.kernels, fn)(x, y)
        u = y.view(np.uint32)
        assert u[0] == u[1] == 0x7FC00000
        assert y[2] == 1 and y[3] == -1 and y[9] == 1 and y[10] == -1
        assert u[4] == 0 and u[5] == 0x80000000
        assert y[6] == np.float32(1e-45 * tiny) and y[7] == -y[6]
        assert y[8] == np.float32(np.float64(np.float32(1e-40)) * tiny)
    x64 = x.astype(np.float64)
    y64 = np.empty_like(x64)
    getattr(isa.kernels, f"{name}64_into")(x64, y64)
    assert y64.view(np.uint64)[0] == 0x7FF8000000000000 and y64[2] == 1 and y64[3] == -1 and y64[9] == 1


def test_erf_tanh_tables_are_reproducible():
    import subprocess
    import sys
    from pathlib import Path
    tool = Path(__file__).resolve().parents[1] / "tools" / "gen_erf_tanh_tables.py"
    result = subprocess.run([sys.executable, str(tool), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_poly32_tables_are_reproducible():
    import subprocess
    import sys
    from pathlib import Path
    tool = Path(__file__).resolve().parents[1] / "tools" / "gen_poly32_tables.py"
    result = subprocess.run([sys.executable, str(tool), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("name", ["erf", "tanh"])
def test_poly32_h_row_marks_the_zone(name):
    """The AVX-512 erf32/tanh32 pick B (a on the intervals where k < ZONE,
    H elsewhere) with vfixupimmps on the class of H: that needs H = +0
    exactly on the zone's intervals and a positive normal H below 1 on
    every other one."""
    f = poly32_model(name)
    width = np.spacing(f.SHIFT)  # a + SHIFT rounds a to a multiple of the width
    k = np.minimum(np.arange(32, dtype=np.float32) * width, f.KMAX)
    zone = k < f.ZONE
    h = f.TABLE[0]
    assert zone.any() and not zone.all()
    assert np.all(h[zone].view(np.uint32) == 0)
    rest = h[~zone]
    assert np.all((rest > np.float32(2.0) ** -126) & (rest < 1))


#: tanh32's largest error over every input (docs/transcendentals.md), rounded up
TANH_MAX = 0.78


def poly32_model(name):
    from normops.reference import _poly32
    return getattr(_poly32, f"{name}32")


#: (width of an interval, float32 saturation) of erf32 / tanh32
POLY32 = {"erf": (1 / 8, "0x1.f5a88ap+1"), "tanh": (1 / 4, "0x1.205966p+3")}


def poly32_inputs(name, rng):
    """Random patterns over the whole float32 range, the interval
    boundaries k w +- w / 2 and their neighbours, the clamp, KMAX, the
    saturation, tiny and special values, both signs."""
    model = poly32_model(name)
    width, saturation = POLY32[name]
    sat = np.float32(float.fromhex(saturation))
    patterns = rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32).view(np.float32)
    uniform = rng.uniform(0, float(model.CLAMP) * 1.07, 1 << 19).astype(np.float32)
    edges = np.arange(0, 2 * float(model.CLAMP) / width + 3, dtype=np.float32) * np.float32(width / 2)
    near = np.concatenate([edges, np.nextafter(edges, np.float32(-1)), np.nextafter(edges, np.float32(99))])
    specials = np.array([model.CLAMP, np.nextafter(model.CLAMP, np.float32(0)), model.KMAX,
                         np.nextafter(model.KMAX, np.float32(0)), np.nextafter(model.KMAX, np.float32(99)), sat,
                         np.nextafter(sat, np.float32(0)), 1e-45, 1e-40, 1.1754942e-38, 1.1754944e-38,
                         float.fromhex("0x1.c49474p-125"), 3.4e38, np.inf, np.nan, 0.0], np.float32)
    pos = np.concatenate([patterns, uniform, near, specials])
    return np.concatenate([pos, -pos, np.uint32([0x7FC00001, 0xFFFFFFFF]).view(np.float32)])


@pytest.mark.parametrize("name", ["erf", "tanh"])
def test_poly32_kernel_is_the_specification(name):
    # the NumPy model reproduces every level, thread count and loop form
    x = poly32_inputs(name, np.random.default_rng(19))
    want = poly32_model(name)(x)
    for level in isa.available_levels():
        module = isa.load(level)
        for threads, scalar in ((1, False), (3, False), (1, True)):
            y = np.empty_like(x)
            getattr(module, f"{name}32_into")(x, y, threads, scalar)
            assert_same_bits(y, want)


@pytest.mark.parametrize("name", ["erf", "tanh"])
def test_poly32_specification_special_values(name):
    model = poly32_model(name)
    sat = float.fromhex(POLY32[name][1])
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, model.CLAMP, sat * 1.02, -100.0, sat, 1e-40],
                 np.float32)
    y = model(x)
    u = y.view(np.uint32)
    assert u[0] == 0x7FC00000 and y[1] == 1 and y[2] == -1 and u[3] == 0 and u[4] == 0x80000000
    # erf: 1.128 * 2^-149 rounds to 2^-149; tanh(x) = x on subnormals
    assert y[5] == np.float32(1e-45) and y[6] == -y[5]
    assert y[7] == 1 and y[8] == 1 and y[9] == -1
    # f rounds to 1 from the saturation on: erf32 gives 1 there, tanh32 (faithful) 1 or
    # 1 - 2^-24 for the few inputs up to 0x1.20596cp+3
    assert y[10] == 1 if name == "erf" else y[10] in (1, np.nextafter(np.float32(1), np.float32(0)))
    tiny = 1.1283791670955126 if name == "erf" else 1.0
    assert y[11] == np.float32(np.float64(np.float32(1e-40)) * tiny)


@pytest.mark.parametrize("name, bound", [("erf", 0.78), ("tanh", TANH_MAX)])
def test_poly32_is_faithful_near_its_hardest_inputs(name, bound):
    # mpmath on the inputs with the largest errors (docs/transcendentals.md)
    # and on the interval boundaries
    mpmath = pytest.importorskip("mpmath")
    model = poly32_model(name)
    width, saturation = POLY32[name]
    edges = np.arange(1, 2 * float(model.CLAMP) / width + 2, dtype=np.float32) * np.float32(width / 2)
    hard = {"erf": ["0x1.c49474p-125", "0x1.87103ep-125"], "tanh": TANH_HARDEST}[name]
    x = np.concatenate([np.float32([float.fromhex(h) for h in hard] + [1e-45, 1e-38, float.fromhex(saturation)]),
                        edges, np.nextafter(edges, np.float32(0)), np.nextafter(edges, np.float32(99))])
    y = model(x)
    f = getattr(mpmath, name)
    with mpmath.workprec(100):
        for v, w in zip(x, y):
            e = f(mpmath.mpf(float(v)))
            _, exponent = mpmath.frexp(e)
            err = abs(mpmath.mpf(float(w)) - e) / mpmath.ldexp(1, max(exponent - 24, -149))
            assert err < bound, (float(v).hex(), float(err))


#: the inputs of tanh32's largest errors over every input (verify-transcendentals)
TANH_HARDEST = ["0x1.bb436ap-1"]


@pytest.mark.parametrize("bias", [False, True])
def test_outputs_at_every_alignment_give_the_same_bits(bias):
    # the AVX-512 loops peel a masked head up to the output's 64-byte
    # boundary: inputs and outputs that start anywhere in a cache line,
    # lengths around one vector and the head, at every level and flavour
    rng = np.random.default_rng(17)
    cols = 37
    for level in isa.available_levels():
        mod = isa.load(level)
        for n in (1, 15, 16, 17, 31, 33, 200, 1111):
            if bias:
                n = n * cols
            xbuf = sample(rng, (n + 16,), np.float32)
            b = sample(rng, (cols,), np.float32) if bias else None
            for tanh in (False, True):
                for fast in (False, True):
                    want = np.empty(n, np.float32)
                    mod.gelu_flat(np.ascontiguousarray(xbuf[:n]), b, want, tanh, fast, 1)
                    for xoff, yoff in ((0, 1), (3, 3), (5, 9), (15, 0)):
                        xs = np.empty(n + 16, np.float32)[xoff:xoff + n]  # the same values, shifted
                        xs[...] = xbuf[:n]
                        ybuf = np.full(n + 16, 7, np.float32)
                        y = ybuf[yoff:yoff + n]
                        mod.gelu_flat(xs, b, y, tanh, fast, 1)
                        assert_same_bits(y, want)
                        assert (ybuf[:yoff] == 7).all() and (ybuf[yoff + n:] == 7).all()
