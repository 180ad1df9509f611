"""Exactness of LayerNormalization, RMSNormalization and
SimplifiedLayerNormalization.

Every comparison is bit for bit through unsigned-integer views: the kernels
(``normops.run``) against the executable specification
(``normops.reference.run``), across shapes, axes, broadcast parameters,
special values, dtypes, thread counts and ISA builds.
"""

import os
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import normops
import normops._isa
import normops.reference
from normops import InvalidInputError, UnsupportedError
from normops._spec import ROW_CHUNK_ELEMENTS

from bits import UINT, assert_same_bits, bits

try:
    import ml_dtypes

    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # optional dependency
    ml_dtypes = None
    BF16 = None

ROOT = Path(__file__).resolve().parents[1]

LN, RMS, SLN = "LayerNormalization", "RMSNormalization", "SimplifiedLayerNormalization"
OPSET = {LN: 17, RMS: 23, SLN: 1}
N_OUT = {LN: 3, RMS: 1, SLN: 2}
SCALE_NAME = {LN: "Scale", RMS: "scale", SLN: "scale"}
NAMED = {
    LN: lambda *a, **k: normops.layer_normalization(*a, **k),
    RMS: lambda *a, **k: normops.rms_normalization(*a, **k),
    SLN: lambda *a, **k: normops.simplified_layer_normalization(*a, **k),
}
OPS = [LN, RMS, SLN]

FLOAT_DTYPES = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16)]
if BF16 is not None:
    FLOAT_DTYPES.append(BF16)


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

def assert_outputs_equal(got, want, label=""):
    assert isinstance(got, (list, tuple)), type(got)
    assert len(got) == len(want), f"{label}: {len(got)} outputs, want {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        assert_same_bits(g, w, f"{label} output {k}")


def finfo(dtype):
    if dtype.name == "bfloat16":
        return ml_dtypes.finfo(dtype)
    return np.finfo(dtype)


def special_pool(dtype):
    fi = finfo(dtype)
    big = float(fi.max)
    sub = float(fi.smallest_subnormal)
    return np.array(
        [np.nan, np.inf, -np.inf, -0.0, 0.0, big, -big, big / 3, float(fi.tiny),
         sub, -sub, 7 * sub, 1e30 if dtype.itemsize >= 4 else 6e4],
        dtype=np.float64,
    )


def make_x(rng, shape, dtype, special=False):
    """Random data of varied magnitude; with ``special``, sprinkled with
    NaN, infinities, signed zeros, subnormals and huge values, and some
    whole rows (along the last axis) of one kind."""
    with np.errstate(all="ignore"):
        mag = 10.0 ** rng.integers(-3, 4, size=shape[:-1] + (1,) if shape else ())
        x = rng.standard_normal(shape) * mag + rng.standard_normal(shape[:-1] + (1,) if shape else ())
        if special and x.size:
            pool = special_pool(dtype)
            mask = rng.random(shape) < 0.04
            x[mask] = rng.choice(pool, size=int(mask.sum()))
            flat = x.reshape(-1, shape[-1]) if len(shape) > 1 else x.reshape(1, -1)
            nrows = flat.shape[0]
            kinds = [
                np.full(shape[-1], -0.0),
                np.full(shape[-1], float(finfo(dtype).smallest_subnormal)) * (1 + np.arange(shape[-1]) % 3),
                np.full(shape[-1], 2.5),
                np.full(shape[-1], float(finfo(dtype).max)) * np.where(np.arange(shape[-1]) % 2, 0.75, 1.0),
                np.full(shape[-1], float(finfo(dtype).tiny)),
            ]
            for r, kind in zip(rng.permutation(nrows)[: len(kinds)], kinds):
                flat[r] = kind
        x = x.astype(dtype)
        if special and x.size:
            _nan_payloads(rng, x)
        return x


#: NaNs with a sign bit or a payload, per item size: the kernels must not
#: let them through (every NaN result is the canonical one).
NAN_PAYLOADS = {
    2: [0xFE00, 0x7E01, 0xFFFF, 0x7FC1, 0xFFC0],  # float16 and bfloat16 patterns
    4: [0xFFC00000, 0x7FC00001, 0xFFFFFFFF, 0x7FD23456],
    8: [0xFFF8000000000000, 0x7FF8000000000001, 0xFFFFFFFFFFFFFFFF],
}


def _nan_payloads(rng, x):
    """Give some of the NaNs already in ``x`` another bit pattern."""
    u = x.reshape(-1).view(UINT[x.dtype.itemsize])
    pats = np.array(NAN_PAYLOADS[x.dtype.itemsize], dtype=u.dtype)
    pats = pats[np.isnan(pats.view(x.dtype))]
    where = np.flatnonzero(np.isnan(x.reshape(-1)))
    chosen = where[rng.random(where.size) < 0.5]
    u[chosen] = rng.choice(pats, size=chosen.size)


def make_param(rng, shape, dtype, special=False):
    p = rng.standard_normal(shape) * 2
    if special and p.size:
        pool = special_pool(dtype)
        mask = rng.random(shape) < 0.05
        p[mask] = rng.choice(pool, size=int(mask.sum()))
    with np.errstate(all="ignore"):
        p = np.asarray(p).astype(dtype)
    if special and p.size:
        _nan_payloads(rng, p)
    return p


def make_inputs(op, rng, shape, axis, dtype, *, scale_shape=None, bias_shape="same",
                special=False, scale_dtype=None):
    """Inputs in ONNX order for ``op`` (B only for LayerNormalization)."""
    x = make_x(rng, shape, dtype, special)
    norm = shape[axis:] if shape else ()
    sshape = norm if scale_shape is None else scale_shape
    s = make_param(rng, sshape, scale_dtype or dtype, special)
    if op == LN and bias_shape is not None:
        bshape = sshape if bias_shape == "same" else bias_shape
        return [x, s, make_param(rng, bshape, dtype, special)]
    return [x, s]


def run_both(op, inputs, attributes, **kw):
    got = normops.run(op, inputs, attributes, opset=OPSET[op], **kw)
    want = normops.reference.run(op, inputs, attributes, opset=OPSET[op])
    return got, want


def check(op, inputs, attributes, label="", **kw):
    got, want = run_both(op, inputs, attributes, **kw)
    assert len(want) == N_OUT[op]
    assert_outputs_equal(got, want, f"{op} {label}")
    return got


def expected_stat_shape(shape, axis):
    return tuple(shape[:axis]) + (1,) * (len(shape) - axis)


def snapshot(arrays):
    return [(a.tobytes(), a.shape, a.strides, a.dtype) for a in arrays if a is not None]


# --------------------------------------------------------------------------
# kernels == executable spec
# --------------------------------------------------------------------------

WIDTHS = [1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 100, 255, 257, 1000, 4095, 4096, 4097, 5000]


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.float64)], ids=str)
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("op", OPS)
def test_random_widths(op, width, dtype):
    rng = np.random.default_rng([width, OPSET[op], dtype.itemsize])
    rows = int(rng.integers(1, 301)) if width <= 1000 else int(rng.integers(1, 40))
    inputs = make_inputs(op, rng, (rows, width), 1, dtype)
    check(op, inputs, {"axis": -1, "epsilon": float(rng.choice([1e-5, 1e-12, 0.25]))},
          f"rows={rows} width={width}")


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.float64)], ids=str)
@pytest.mark.parametrize("op", OPS)
def test_every_small_width(op, dtype):
    """Every vector tail: widths 1..70 and rows 1..9."""
    rng = np.random.default_rng(OPSET[op] * 100 + dtype.itemsize)
    for width in range(1, 71):
        rows = 1 + width % 9
        inputs = make_inputs(op, rng, (rows, width), 1, dtype)
        check(op, inputs, {"axis": 1}, f"width={width}")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("width", [1, 5, 16, 17, 33, 300, 4097])
@pytest.mark.parametrize("op", OPS)
def test_special_values(op, width, dtype):
    rng = np.random.default_rng([width, 7, dtype.itemsize, OPSET[op]])
    rows = 40 if width < 1000 else 8
    inputs = make_inputs(op, rng, (rows, width), 1, dtype, special=True)
    for eps in (1e-5, 0.0):
        check(op, inputs, {"axis": -1, "epsilon": eps}, f"special width={width} eps={eps}")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("op", OPS)
def test_dtypes(op, dtype):
    rng = np.random.default_rng([dtype.itemsize, OPSET[op], 3])
    for shape, axis in [((37, 129), 1), ((5, 6, 7), 1), ((300, 33), -1)]:
        inputs = make_inputs(op, rng, shape, axis, dtype)
        got = check(op, inputs, {"axis": axis}, f"{shape} axis={axis}")
        ydtype = dtype if op == LN else inputs[1].dtype  # RMS forms: Y has scale's type
        assert got[0].dtype == ydtype
        for stat in got[1:]:
            assert stat.dtype == np.float32
            assert stat.shape == expected_stat_shape(shape, axis % len(shape))


MIXED = [(np.float16, np.float32), (np.float32, np.float16), (np.float16, np.float16),
         (np.float32, np.float32)]
RMS_MIXED = MIXED + [(np.float64, np.float32), (np.float32, np.float64), (np.float16, np.float64),
                     (np.float64, np.float16), (np.float64, np.float64)]
if BF16 is not None:
    RMS_MIXED += [(BF16, np.float32), (np.float32, BF16), (BF16, np.float16)]


def _name(dt):
    return np.dtype(dt).name


@pytest.mark.parametrize("op,xdt,sdt", [(SLN, x, s) for x, s in MIXED + [(np.float64, np.float64)]]
                         + [(RMS, x, s) for x, s in RMS_MIXED],
                         ids=lambda v: v if isinstance(v, str) else _name(v))
def test_mixed_x_and_scale_dtypes(op, xdt, sdt):
    """RMSNormalization and SimplifiedLayerNormalization: X (type T) and scale
    (type V) may differ; Y has the scale's type, statistics are float32."""
    rng = np.random.default_rng([np.dtype(xdt).itemsize, np.dtype(sdt).itemsize, OPSET[op]])
    for shape, special in [((50, 77), False), ((20, 4097), False), ((40, 33), True)]:
        inputs = make_inputs(op, rng, shape, 1, np.dtype(xdt), special=special,
                             scale_dtype=np.dtype(sdt))
        got = check(op, inputs, {"axis": -1}, f"X {_name(xdt)} scale {_name(sdt)} {shape}")
        assert got[0].dtype == np.dtype(sdt)
        assert all(o.dtype == np.float32 for o in got[1:])


def _random_case(rng):
    """A random call: operator, rank 1-4, axis of either sign, parameters of
    any broadcastable shape, dtype, special values, epsilon, thread count."""
    op = OPS[int(rng.integers(3))]
    rank = int(rng.integers(1, 5))
    shape = tuple(int(v) for v in rng.integers(1, 12, size=rank))
    if rng.random() < 0.3:
        shape = shape[:-1] + (int(rng.choice([1, 15, 17, 33, 255, 1031])),)
    axis = int(rng.integers(-rank, rank))
    norm = shape[axis % rank:]
    def pshape():
        p = [d if rng.random() < 0.6 else 1 for d in norm]
        cut = int(rng.integers(0, len(p) + 1))
        p = p[cut:] if rng.random() < 0.5 else p
        if rng.random() < 0.2 and len(p) < rank:
            p = [1] + p
        return tuple(p) or (1,)
    dtypes = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16)]
    if BF16 is not None:
        dtypes.append(BF16)
    dtype = dtypes[int(rng.integers(len(dtypes)))]
    sdt = dtypes[int(rng.integers(len(dtypes)))] if op != LN else dtype
    inputs = make_inputs(op, rng, shape, axis, dtype, scale_shape=pshape(),
                         bias_shape=pshape() if rng.random() < 0.8 else None,
                         special=rng.random() < 0.5, scale_dtype=sdt)
    attrs = {"axis": axis, "epsilon": float(rng.choice([1e-5, 0.0, 1e-3, 1.0]))}
    return op, inputs, attrs, int(rng.choice([1, 2, 3, 8]))


@pytest.mark.parametrize("seed", range(8))
def test_random_calls(seed):
    rng = np.random.default_rng([seed, 1234])
    for _ in range(40):
        op, inputs, attrs, n = _random_case(rng)
        label = f"{[(a.shape, a.dtype.name) for a in inputs]} {attrs} n_threads={n}"
        check(op, inputs, attrs, label, n_threads=n)


SHAPES_BY_RANK = {1: (13,), 2: (9, 21), 3: (4, 5, 19), 4: (3, 2, 5, 17)}


@pytest.mark.parametrize("rank", [1, 2, 3, 4])
@pytest.mark.parametrize("op", OPS)
def test_every_axis(op, rank):
    shape = SHAPES_BY_RANK[rank]
    rng = np.random.default_rng([rank, OPSET[op]])
    for axis in list(range(rank)) + list(range(-rank, 0)):
        inputs = make_inputs(op, rng, shape, axis, np.dtype(np.float32))
        got = check(op, inputs, {"axis": axis}, f"shape={shape} axis={axis}")
        assert got[0].shape == shape
        for stat in got[1:]:
            assert stat.shape == expected_stat_shape(shape, axis % rank)


def test_default_axis_is_last():
    rng = np.random.default_rng(4)
    for op in OPS:
        inputs = make_inputs(op, rng, (3, 4, 9), 2, np.dtype(np.float32))
        got = normops.run(op, inputs, {}, opset=OPSET[op])
        explicit = normops.run(op, inputs, {"axis": 2}, opset=OPSET[op])
        assert_outputs_equal(got, explicit, op)


PARAM_SHAPES = [(5,), (1, 5), (3, 1), (1, 1), (3, 5), (1,), (1, 3, 5), (1, 1, 1)]


@pytest.mark.parametrize("scale_shape", PARAM_SHAPES, ids=str)
@pytest.mark.parametrize("op", OPS)
def test_broadcast_scale(op, scale_shape):
    rng = np.random.default_rng(len(scale_shape) * 10 + sum(scale_shape))
    inputs = make_inputs(op, rng, (6, 3, 5), 1, np.dtype(np.float32),
                         scale_shape=scale_shape, bias_shape=(3, 1))
    check(op, inputs, {"axis": 1}, f"Scale {scale_shape}")
    # The broadcast must equal an explicitly expanded parameter.
    expanded = [inputs[0]] + [np.ascontiguousarray(np.broadcast_to(
        p.reshape(p.shape[-2:] if p.ndim > 2 else p.shape), (3, 5))) for p in inputs[1:]]
    assert_outputs_equal(normops.run(op, inputs, {"axis": 1}, opset=OPSET[op]),
                         normops.run(op, expanded, {"axis": 1}, opset=OPSET[op]), "expanded")


@pytest.mark.parametrize("bias_shape", PARAM_SHAPES, ids=str)
def test_broadcast_bias(bias_shape):
    rng = np.random.default_rng(99 + sum(bias_shape))
    inputs = make_inputs(LN, rng, (4, 3, 5), 1, np.dtype(np.float64),
                         scale_shape=(5,), bias_shape=bias_shape)
    check(LN, inputs, {"axis": -2}, f"B {bias_shape}")


@pytest.mark.parametrize("op", OPS)
def test_epsilon_is_float32(op):
    """ONNX stores epsilon as a float32: 1e-5 means float32(1e-5) even in a
    float64 computation.  RMS of a constant row c is c / sqrt(c*c + eps)."""
    c = 1e-3
    x = np.full((2, 8), c)
    x[1] = -c
    s = np.ones(8)
    inputs = [x, s, np.zeros(8)] if op == LN else [x, s]
    y = normops.run(op, inputs, {"epsilon": 1e-5}, opset=OPSET[op])[0]
    e32 = float(np.float32(1e-5))
    if op == LN:  # centred: every x - mean is 0, y is +0
        assert (bits(y) == 0).all()
        inv = normops.run(op, inputs, {"epsilon": 1e-5}, opset=17)[2]
        assert (inv == np.float32(1 / np.sqrt(e32))).all()
        return
    want = c * (1.0 / np.sqrt(c * c + e32))
    assert y[0, 0] == want and y[1, 0] == -want
    assert y[0, 0] != c * (1.0 / np.sqrt(c * c + 1e-5))


def test_layer_normalization_without_bias():
    rng = np.random.default_rng(8)
    inputs = make_inputs(LN, rng, (30, 47), 1, np.dtype(np.float32), bias_shape=None)
    assert len(inputs) == 2
    got = check(LN, inputs, {"axis": 1})
    # Without B the last addition is skipped, so -0 stays -0.
    x = np.full((2, 7), -0.0, np.float32)
    y = normops.layer_normalization(x, np.ones(7, np.float32))
    assert (bits(y) == 0x80000000).all()
    assert got[0].shape == (30, 47)


# --------------------------------------------------------------------------
# threads and ISA builds
# --------------------------------------------------------------------------

THREAD_SHAPES = [(2000, 64), (300, 4097), (37, 16385), (1500, 33), (3, 5000)]


@pytest.mark.parametrize("shape", THREAD_SHAPES, ids=str)
@pytest.mark.parametrize("op", OPS)
def test_thread_count_invariance(op, shape):
    dtype = np.dtype(np.float32) if shape[1] != 33 else np.dtype(np.float16)
    rng = np.random.default_rng([shape[0], shape[1], OPSET[op]])
    inputs = make_inputs(op, rng, shape, 1, dtype, special=shape == (1500, 33))
    want = normops.reference.run(op, inputs, {"axis": -1}, opset=OPSET[op])
    for n in (1, 2, 3, 8):
        got = normops.run(op, inputs, {"axis": -1}, opset=OPSET[op], n_threads=n)
        assert_outputs_equal(got, want, f"{op} {shape} n_threads={n}")


def test_thread_count_invariance_float64():
    rng = np.random.default_rng(64)
    inputs = make_inputs(LN, rng, (600, 1000), 1, np.dtype(np.float64), special=True)
    want = normops.reference.run(LN, inputs, {"axis": 1}, opset=17)
    for n in (1, 2, 3, 8):
        assert_outputs_equal(normops.run(LN, inputs, {"axis": 1}, opset=17, n_threads=n),
                             want, f"float64 n_threads={n}")


@pytest.fixture
def parallel_even_when_small():
    """Make every kernel build take its parallel path down to tiny inputs
    (the serial threshold is a speed choice; results must not care)."""
    old = normops._isa.routes.set_threads_always(True)
    try:
        yield
    finally:
        normops._isa.routes.set_threads_always(old)


@pytest.mark.parametrize("op", OPS)
def test_small_inputs_on_the_parallel_path(op, parallel_even_when_small):
    rng = np.random.default_rng([OPSET[op], 77])
    for shape in [(2, 1), (9, 3), (5, ROW_CHUNK_ELEMENTS), (3, ROW_CHUNK_ELEMENTS + 1), (300, 57), (17, 1000),
                  (1025, 16)]:
        dtype = np.dtype(rng.choice([np.float32, np.float64, np.float16]))
        inputs = make_inputs(op, rng, shape, 1, dtype, special=True)
        want = normops.reference.run(op, inputs, {"axis": 1}, opset=OPSET[op])
        for level in normops._isa.available_levels():
            with normops._isa.use(level):
                for n in (1, 2, 3, 8):
                    got = normops.run(op, inputs, {"axis": 1}, opset=OPSET[op], n_threads=n)
                    assert_outputs_equal(got, want, f"{shape} {dtype} {level} n_threads={n}")


def _cpu_flags():
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def test_available_levels_cover_this_cpu():
    levels = normops._isa.available_levels()
    assert levels, "no runnable kernel build"
    if platform.machine().lower() in ("x86_64", "amd64"):
        assert "baseline" in levels
        flags = _cpu_flags()
        if {"avx2", "fma", "bmi2"} <= flags:
            assert "avx2" in levels, levels
        if {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"} <= flags:
            assert "avx512" in levels, levels
    for level in levels:
        assert normops._isa.load(level) is not None


ISA_CASES = [
    (LN, (300, 4097), np.float32, True),
    (LN, (1000, 67), np.float64, True),
    (RMS, (257, 1031), np.float32, True),
    (RMS, (64, 200), np.float16, True),
    (SLN, (129, 4095), np.float32, True),
    (SLN, (90, 31), np.float16, False),
]


@pytest.mark.parametrize("op,shape,dtype,special", ISA_CASES, ids=str)
def test_isa_levels_in_process(op, shape, dtype, special):
    rng = np.random.default_rng([shape[0], shape[1], 5])
    inputs = make_inputs(op, rng, shape, 1, np.dtype(dtype), special=special)
    want = normops.reference.run(op, inputs, {"axis": 1}, opset=OPSET[op])
    for level in normops._isa.available_levels():
        with normops._isa.use(level):
            # The switch must really reach the kernels the calls use.
            assert normops._isa.kernels is normops._isa.load(level)
            for n in (1, 3):
                got = normops.run(op, inputs, {"axis": 1}, opset=OPSET[op], n_threads=n)
                assert_outputs_equal(got, want, f"{op} level={level} n_threads={n}")


SUBPROCESS_CASE = textwrap.dedent("""
    import hashlib, sys
    import numpy as np
    import normops, normops._isa
    level = sys.argv[1]
    assert normops._isa.kernels is normops._isa.load(level), "NORMOPS_ISA not honoured"
    rng = np.random.default_rng(2024)
    x = rng.standard_normal((211, 1543)).astype(np.float32)
    x[3, 7] = np.nan; x[5, :] = -0.0; x[9, 100] = np.inf
    s = rng.standard_normal(1543).astype(np.float32)
    b = rng.standard_normal(1543).astype(np.float32)
    h = hashlib.sha256()
    for op, ins, opset in [("LayerNormalization", [x, s, b], 17),
                           ("RMSNormalization", [x, s], 23),
                           ("SimplifiedLayerNormalization", [x.astype(np.float16), s], 1)]:
        for out in {runner}(op, ins, {{"axis": -1}}, opset=opset):
            h.update(np.ascontiguousarray(out).tobytes())
    print(h.hexdigest())
""")


def _run_python(code, args=(), env_extra=None):
    env = dict(os.environ)
    env.pop("NORMOPS_ISA", None)
    env.update(env_extra or {})
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_isa_levels_in_subprocesses():
    levels = normops._isa.available_levels()
    ref = _run_python(SUBPROCESS_CASE.format(runner="normops.reference.run"),
                      [normops._isa.available_levels()[-1]])
    assert ref.returncode == 0, ref.stderr
    digests = {}
    for level in levels:
        proc = _run_python(SUBPROCESS_CASE.format(runner="normops.run"), [level],
                           {"NORMOPS_ISA": level})
        assert proc.returncode == 0, f"NORMOPS_ISA={level}: {proc.stderr}"
        digests[level] = proc.stdout.strip()
    assert set(digests.values()) == {ref.stdout.strip()}, digests


def test_bogus_isa_is_a_clear_error():
    code = ("import numpy as np, normops\n"
            "normops.layer_normalization(np.ones((2, 3), np.float32), np.ones(3, np.float32))\n")
    proc = _run_python(code, env_extra={"NORMOPS_ISA": "bogus"})
    assert proc.returncode == 1, (proc.returncode, proc.stderr)  # an exception, not a crash
    assert "NORMOPS_ISA" in proc.stderr
    assert "Traceback" in proc.stderr


# --------------------------------------------------------------------------
# named functions, modes, configuration
# --------------------------------------------------------------------------

@pytest.mark.parametrize("op", OPS)
def test_named_function_equals_run(op):
    rng = np.random.default_rng([OPSET[op], 42])
    inputs = make_inputs(op, rng, (7, 3, 11), 1, np.dtype(np.float32))
    attrs = {"axis": -2, "epsilon": 1e-3}
    want = normops.run(op, inputs, attrs, opset=OPSET[op])
    y = NAMED[op](*inputs, **attrs)
    assert isinstance(y, np.ndarray)
    assert_same_bits(y, want[0], "first output")
    full = NAMED[op](*inputs, **attrs, full_output=True)
    assert isinstance(full, tuple) and len(full) == N_OUT[op]
    assert_outputs_equal(full, want, "full_output")
    # opset None means the newest: the same node for these operators.
    assert_outputs_equal(normops.run(op, inputs, attrs), want, "opset=None")
    if op == LN:
        assert_outputs_equal(normops.run(op, inputs, attrs, opset=23), want, "opset 23")


@pytest.mark.parametrize("op", OPS)
def test_fast_mode_is_exact_for_normalisations(op):
    rng = np.random.default_rng([OPSET[op], 43])
    inputs = make_inputs(op, rng, (50, 301), 1, np.dtype(np.float32), special=True)
    exact = normops.run(op, inputs, {"axis": 1}, opset=OPSET[op], mode="exact")
    fast = normops.run(op, inputs, {"axis": 1}, opset=OPSET[op], mode="fast")
    assert_outputs_equal(fast, exact, "fast vs exact")
    assert_outputs_equal(NAMED[op](*inputs, axis=1, mode="fast", full_output=True),
                         exact, "named fast")


def test_config_context_manager():
    rng = np.random.default_rng(44)
    inputs = make_inputs(LN, rng, (2000, 64), 1, np.dtype(np.float32))
    want = normops.reference.run(LN, inputs, {"axis": -1}, opset=17)
    before = normops.get_config()
    with normops.config(n_threads=3, mode="fast"):
        cfg = normops.get_config()
        assert cfg["n_threads"] == 3 and cfg["mode"] == "fast"
        got = normops.layer_normalization(*inputs, full_output=True)
    assert normops.get_config() == before
    assert_outputs_equal(got, want, "config(n_threads=3, mode='fast')")
    with normops.config(n_threads=1):
        assert_outputs_equal(normops.run(LN, inputs, {}), want, "config(n_threads=1)")


# --------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------

def _expect(exc, op, words, fn):
    with pytest.raises(exc) as info:
        fn()
    msg = str(info.value)
    assert op in msg, msg
    assert any(w in msg for w in words), f"{words} not in: {msg}"
    return msg


F32 = np.float32


@pytest.mark.parametrize("op", OPS)
def test_bad_inputs(op):
    sname = SCALE_NAME[op]
    x = np.ones((3, 4), F32)
    s = np.ones(4, F32)
    opset = OPSET[op]

    def run(inputs, attrs=None, **kw):
        return lambda: normops.run(op, inputs, attrs or {}, opset=opset, **kw)

    # Scale of a rank X cannot have, and one that does not broadcast.
    _expect(InvalidInputError, op, [sname], run([x, np.ones((2, 3, 4), F32)]))
    _expect(InvalidInputError, op, [sname], run([x, np.ones(3, F32)]))
    _expect(InvalidInputError, op, [sname], run([x, np.ones((3, 4), F32)], {"axis": -1}))
    _expect(InvalidInputError, op, [sname],
            lambda: NAMED[op](x, np.ones((2, 4), F32), axis=-1))
    # Axis out of range, both signs.
    for axis in (2, -3, 100):
        _expect(InvalidInputError, op, ["axis"], run([x, s], {"axis": axis}))
    # Non-floating and 0-d X.
    _expect(InvalidInputError, op, ["'X'", "X"], run([x.astype(np.int32), s]))
    _expect(InvalidInputError, op, ["'X'", "X"], run([np.float32(1.0), np.ones((), F32)]))
    # A normalized dimension of extent 0.
    _expect(InvalidInputError, op, ["X", "axis", "normalized"],
            run([np.ones((3, 0), F32), np.ones(0, F32)]))
    _expect(InvalidInputError, op, ["X", "axis", "normalized"],
            run([np.ones((3, 0, 2), F32), np.ones((0, 2), F32)], {"axis": 1}))
    # Unknown attribute, opset too low, bad mode.
    _expect(InvalidInputError, op, ["bogus_attr"], run([x, s], {"bogus_attr": 1}))
    _expect(InvalidInputError, op, ["mode"], run([x, s], mode="turbo"))
    _expect(InvalidInputError, op, ["mode"], lambda: NAMED[op](x, s, mode="turbo"))
    if opset > 1:
        _expect(UnsupportedError, op, [str(opset - 1), "opset"],
                lambda: normops.run(op, [x, s], {}, opset=opset - 1))
        _expect(UnsupportedError, op, [str(opset - 1), "opset"],
                lambda: NAMED[op](x, s, opset=opset - 1))
    else:
        with pytest.raises((UnsupportedError, InvalidInputError)):
            normops.run(op, [x, s], {}, opset=0)


def test_more_bad_arguments():
    x = np.ones((3, 4), F32)
    s = np.ones(4, F32)
    _expect(InvalidInputError, RMS, ["'scale'"], lambda: normops.run(RMS, [x], {}, opset=23))
    _expect(InvalidInputError, RMS, ["'scale'"], lambda: normops.run(RMS, [x, None], {}, opset=23))
    _expect(InvalidInputError, RMS, ["input"], lambda: normops.run(RMS, [x, s, s], {}, opset=23))
    _expect(InvalidInputError, LN, ["n_threads"], lambda: normops.run(LN, [x, s], {}, n_threads=0))
    _expect(InvalidInputError, LN, ["'Scale'"],  # X, Scale and B share one type T
            lambda: normops.run(LN, [x.astype(np.float16), s], {}, opset=17))
    _expect(InvalidInputError, LN, ["epsilon"], lambda: normops.run(LN, [x, s], {"epsilon": "1e-5"}))
    _expect(InvalidInputError, LN, ["axis"], lambda: normops.run(LN, [x, s], {"axis": 1.5}))
    _expect(InvalidInputError, LN, ["stash_type"], lambda: normops.run(LN, [x, s], {"stash_type": 7}))
    _expect(UnsupportedError, SLN, ["keep_dims"], lambda: normops.run(SLN, [x, s], {"keep_dims": 0}))


def test_optional_bias_and_scalar_scale():
    rng = np.random.default_rng(12)
    x, s = make_inputs(RMS, rng, (20, 9), 1, np.dtype(np.float32))
    assert_outputs_equal(normops.run(LN, [x, s, None], {}, opset=17),
                         normops.run(LN, [x, s], {}, opset=17), "B=None")
    # A 0-d Scale broadcasts like any other (right-aligned, ONNX rules).
    two = np.float32(2.0)
    for op in OPS:
        check(op, [x, np.asarray(two)], {}, "0-d scale")
        assert_outputs_equal(normops.run(op, [x, np.asarray(two)], {}, opset=OPSET[op]),
                             normops.run(op, [x, np.full(9, two)], {}, opset=OPSET[op]), op)


def test_bad_bias():
    x = np.ones((3, 4), F32)
    s = np.ones(4, F32)
    _expect(InvalidInputError, LN, ["'B'"],
            lambda: normops.run(LN, [x, s, np.ones(5, F32)], {}, opset=17))
    _expect(InvalidInputError, LN, ["'B'"],
            lambda: normops.layer_normalization(x, s, np.ones((2, 4), F32)))


def test_bad_config_mode():
    with pytest.raises(InvalidInputError, match="mode"):
        with normops.config(mode="turbo"):
            pass


# --------------------------------------------------------------------------
# inputs untouched, any layout, empty inputs
# --------------------------------------------------------------------------

@pytest.mark.parametrize("op", OPS)
def test_inputs_are_not_modified(op):
    rng = np.random.default_rng([OPSET[op], 50])
    for dtype, shape in [(np.float32, (300, 257)), (np.float16, (40, 33)), (np.float64, (9, 1))]:
        base = make_inputs(op, rng, shape, 1, np.dtype(dtype), special=True)
        x = base[0]
        variants = [base,
                    [x[:, ::-1]] + base[1:],
                    [x.astype(x.dtype.newbyteorder(">"))] + base[1:],
                    [p.astype(p.dtype.newbyteorder(">")) for p in base]]
        before = [snapshot(v) for v in variants]
        for inputs in variants:
            for n in (1, 2):
                normops.run(op, inputs, {"axis": 1}, opset=OPSET[op], n_threads=n)
            NAMED[op](*inputs, axis=1, full_output=True)
            normops.reference.run(op, inputs, {"axis": 1}, opset=OPSET[op])
        assert [snapshot(v) for v in variants] == before


def _unaligned_copy(a):
    raw = np.zeros(a.nbytes + 1, np.uint8)
    raw[1:] = np.ascontiguousarray(a).view(np.uint8).reshape(-1)
    out = np.ndarray(a.shape, dtype=a.dtype, buffer=raw.data, offset=1)
    assert not out.flags.aligned or a.dtype.itemsize == 1
    return out


def _layouts(a):
    """Equal-valued views of ``a`` with other memory layouts."""
    yield "fortran", np.asfortranarray(a)
    if a.ndim >= 1 and a.size:
        base = np.empty(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        base[..., ::2] = a
        yield "stride2", base[..., ::2]
        yield "reversed", np.ascontiguousarray(a[..., ::-1])[..., ::-1]
    if a.dtype.itemsize > 1 and a.dtype.kind == "f":
        yield "byteswapped", a.astype(a.dtype.newbyteorder(">"))
    if a.ndim >= 2:
        yield "transposed-copy", np.ascontiguousarray(a.T).T
    # Misaligned by one byte inside a bigger buffer, and read-only.
    yield "unaligned", _unaligned_copy(a)
    ro = a.copy()
    ro.flags.writeable = False
    yield "read-only", ro


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=str)
@pytest.mark.parametrize("op", OPS)
def test_any_layout_gives_same_bits(op, dtype):
    rng = np.random.default_rng([OPSET[op], 51, np.dtype(dtype).itemsize])
    inputs = make_inputs(op, rng, (64, 3, 101), 1, np.dtype(dtype), special=True)
    want = normops.run(op, inputs, {"axis": 1}, opset=OPSET[op])
    assert_outputs_equal(want, normops.reference.run(op, inputs, {"axis": 1}, opset=OPSET[op]),
                         "contiguous")
    for k in range(len(inputs)):
        for name, view in _layouts(inputs[k]):
            assert np.array_equal(bits(view), bits(inputs[k]))  # same values
            changed = list(inputs)
            changed[k] = view
            for n in (1, 2):
                got = normops.run(op, changed, {"axis": 1}, opset=OPSET[op], n_threads=n)
                assert_outputs_equal(got, want, f"input {k} {name} n_threads={n}")
    # X reversed along the normalized axis, a strided sub-block of X, and
    # one row repeated through a zero stride.
    big = make_x(rng, (128, 3, 202), np.dtype(dtype))
    for view in (big[::2, :, ::2], big[:, :, ::-1][:64, :, :101],
                 np.broadcast_to(big[0, :, :101], (64, 3, 101))):
        copy = np.ascontiguousarray(view)
        got = normops.run(op, [view] + inputs[1:], {"axis": 1}, opset=OPSET[op])
        ref = normops.run(op, [copy] + inputs[1:], {"axis": 1}, opset=OPSET[op])
        assert_outputs_equal(got, ref, "strided X")


@pytest.mark.parametrize("op", OPS)
def test_outputs_are_native_and_fresh(op):
    rng = np.random.default_rng([OPSET[op], 52])
    inputs = make_inputs(op, rng, (5, 8), 1, np.dtype(np.float32))
    inputs = [p.astype(">f4") for p in inputs]
    outs = normops.run(op, inputs, {"axis": 1}, opset=OPSET[op])
    for o in outs:
        assert o.dtype.isnative and o.flags.c_contiguous
        assert not any(np.shares_memory(o, p) for p in inputs)


@pytest.mark.parametrize("shape,axis", [((0, 5), 1), ((0, 5), -1), ((2, 0, 7), 2),
                                         ((0, 3, 4), 1), ((3, 0, 2, 2), -2)], ids=str)
@pytest.mark.parametrize("op", OPS)
def test_empty_rows(op, shape, axis):
    rng = np.random.default_rng(0)
    inputs = make_inputs(op, rng, shape, axis, np.dtype(np.float32))
    got = check(op, inputs, {"axis": axis}, f"empty {shape}")
    assert got[0].shape == shape and got[0].dtype == np.float32
    for stat in got[1:]:
        assert stat.shape == expected_stat_shape(shape, axis % len(shape))
        assert stat.dtype == np.float32
    full = NAMED[op](*inputs, axis=axis, full_output=True)
    assert [o.shape for o in full] == [o.shape for o in got]
