"""Softmax, LogSoftmax, Hardmax: bit for bit against the executable
specification, every opset layout, special rows, dtypes, threads and ISA
levels; the fast flavour close to exact; the SciPy-style functions like
scipy.special."""
import json
from pathlib import Path

import numpy as np
import pytest

import normops
import normops._isa as isa
from normops import InvalidInputError, UnsupportedError
from normops._spec import ROW_CHUNK_ELEMENTS

from bits import assert_same_bits

try:
    import ml_dtypes

    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # optional
    BF16 = None

OPS = ["Softmax", "LogSoftmax", "Hardmax"]


def check(op, x, attrs, opset, **kw):
    got = normops.run(op, [x], attrs, opset=opset, **kw)[0]
    want = normops.reference.run(op, [x], attrs, opset=opset)[0]
    assert_same_bits(got, want)
    return got


def special_rows(rng, rows, cols, dtype):
    x = (rng.standard_normal((rows, cols)) * 10.0 ** rng.integers(-2, 3, (rows, 1))).astype(np.float64)
    specials = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30, -1e30]
    mask = rng.random(x.shape) < 0.03
    x[mask] = rng.choice(specials, mask.sum())
    if rows >= 6:
        x[0] = -np.inf                      # only -inf: NaN row
        x[1, :] = 2.0                       # all equal: ties
        x[2, cols // 2] = np.nan
        x[3, -1] = np.inf
        x[4, 0] = -np.inf                   # one -inf in a normal row
        x[5] = -0.0
    with np.errstate(over="ignore"):
        return x.astype(dtype)


@pytest.mark.parametrize("cols", [1, 2, 7, 15, 16, 17, 33, 100, 1000, 4097])
@pytest.mark.parametrize("op", OPS)
def test_rows_match_the_specification(op, cols):
    rng = np.random.default_rng([cols, OPS.index(op)])
    for dtype in (np.float32, np.float64):
        x = special_rows(rng, 9, cols, dtype)
        for opset in (1, 11, 13):
            check(op, x, {"axis": -1 if opset == 13 else 1}, opset)


@pytest.mark.parametrize("opset", [1, 11, 13])
@pytest.mark.parametrize("op", OPS)
def test_every_axis_of_every_opset(op, opset):
    rng = np.random.default_rng(opset)
    x = rng.standard_normal((3, 4, 5, 6)).astype(np.float32)
    for axis in range(-4, 4):
        got = check(op, x, {"axis": axis}, opset)
        assert got.shape == x.shape
        if op == "Softmax" and opset >= 13:  # along the axis
            np.testing.assert_allclose(got.sum(axis=axis), 1, rtol=1e-5)
        if op == "Softmax" and opset < 13:  # flattened at the axis
            np.testing.assert_allclose(got.reshape(int(np.prod(x.shape[:axis % 4])), -1).sum(1), 1, rtol=1e-5)


def test_default_axis_follows_the_opset():
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    flat = normops.run("Softmax", [x], opset=11)[0]      # flatten at 1
    last = normops.run("Softmax", [x], opset=13)[0]      # along -1
    np.testing.assert_allclose(flat.reshape(2, -1).sum(1), 1, rtol=1e-6)
    np.testing.assert_allclose(last.sum(-1), 1, rtol=1e-6)
    assert normops.ops.softmax(x, opset=11).tobytes() == flat.tobytes()
    assert normops.ops.softmax(x).tobytes() == last.tobytes()


def test_row_rules():
    x = np.array([[1, np.nan, 2], [1, np.inf, 2], [-np.inf] * 3, [0, -np.inf, 0]], np.float32)
    s = normops.run("Softmax", [x])[0]
    ls = normops.run("LogSoftmax", [x])[0]
    h = normops.run("Hardmax", [x])[0]
    for y in (s, ls):
        assert (y[:3].view(np.uint32) == 0x7FC00000).all()  # canonical NaN rows
    assert s[3].tolist() == [0.5, 0.0, 0.5]
    assert ls[3, 1] == -np.inf and np.isfinite(ls[3, [0, 2]]).all()
    assert h.tolist() == [[0, 0, 0], [0, 1, 0], [1, 0, 0], [1, 0, 0]]


@pytest.mark.parametrize("op", OPS)
def test_narrow_dtypes_are_rounded_once(op):
    rng = np.random.default_rng(7)
    dtypes = [np.dtype(np.float16)] + ([BF16] if BF16 is not None else [])
    for dtype in dtypes:
        x = special_rows(rng, 8, 37, dtype)
        got = normops.run(op, [x])[0]
        assert got.dtype == dtype
        wide = normops.run(op, [x.astype(np.float32)])[0]
        with np.errstate(over="ignore"):
            assert_same_bits(got, wide.astype(dtype))
        assert_same_bits(got, normops.reference.run(op, [x])[0])


@pytest.mark.parametrize("op", OPS)
def test_threads_and_isa_levels_do_not_change_bits(op):
    x = special_rows(np.random.default_rng(3), 300, 333, np.float32)  # many chunks
    ref = normops.run(op, [x], n_threads=1)[0]
    old = isa.routes.set_threads_always(True)
    try:
        for level in isa.available_levels():
            with isa.use(level):
                for t in (1, 2, 3, 8):
                    assert_same_bits(normops.run(op, [x], n_threads=t)[0], ref)
    finally:
        isa.routes.set_threads_always(old)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_fast_is_close_to_exact(op):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((64, 500)) * 5).astype(np.float32)
    exact = normops.run(op, [x], mode="exact")[0]
    fast = normops.run(op, [x], mode="fast")[0]
    if op == "Softmax":
        np.testing.assert_allclose(fast, exact, rtol=2e-6, atol=0)
    else:
        np.testing.assert_allclose(fast, exact, rtol=1e-6, atol=1e-6)
    h = normops.run("Hardmax", [x], mode="fast")[0]
    assert h.tobytes() == normops.run("Hardmax", [x])[0].tobytes()


def test_inputs_are_not_modified_and_layouts_do_not_matter():
    x = np.random.default_rng(2).standard_normal((6, 7, 8)).astype(np.float32)
    before = x.tobytes()
    for op in OPS:
        want = normops.run(op, [x], {"axis": 1})[0]
        assert x.tobytes() == before
        for variant in (x[:, ::-1][:, ::-1], np.asfortranarray(x), x.astype(">f4")):
            assert_same_bits(normops.run(op, [variant], {"axis": 1})[0], want)


def test_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(InvalidInputError, match="Softmax.*axis"):
        normops.run("Softmax", [x], {"axis": 2})
    with pytest.raises(InvalidInputError, match="LogSoftmax.*'input'.*int32"):
        normops.run("LogSoftmax", [x.astype(np.int32)])
    with pytest.raises(InvalidInputError, match="Hardmax.*rank"):
        normops.run("Hardmax", [np.float32(1)])
    with pytest.raises(UnsupportedError):
        normops.run("Softmax", [x], opset=0)
    empty = np.ones((0, 3), np.float32)
    assert normops.run("Softmax", [empty])[0].shape == (0, 3)


# ---------------------------------------------------------- SciPy style

@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_scipy_style_functions(axis, dtype):
    special = pytest.importorskip("scipy.special")
    x = (np.random.default_rng(4).standard_normal((3, 4, 5)) * 3).astype(dtype)
    for ours, theirs in ((normops.softmax, special.softmax), (normops.log_softmax, special.log_softmax)):
        got, want = ours(x, axis=axis), theirs(x, axis=axis)
        assert got.dtype == want.dtype and got.shape == want.shape
        rtol = 1e-5 if got.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


def test_scipy_style_zero_dimensional_input():
    # SciPy gives a NumPy scalar; a 0-d array takes axis None, 0, -1 or ()
    # like NumPy, and any other axis is an error, not ignored
    special = pytest.importorskip("scipy.special")
    for x in (np.array(2.0), np.float32(-3), 7):
        for ours, theirs in ((normops.softmax, special.softmax), (normops.log_softmax, special.log_softmax)):
            for axis in (None, 0, -1, ()):
                got, want = ours(x, axis=axis), theirs(x, axis=axis)
                assert type(got) is type(want) and got == want, (x, axis)
            for axis in (1, -2, (0,), "0", 1.0):
                with pytest.raises(InvalidInputError, match="axis"):
                    ours(x, axis=axis)


def test_scipy_style_matches_the_operator_bits():
    x = np.random.default_rng(5).standard_normal((4, 9)).astype(np.float32)
    assert_same_bits(normops.softmax(x, axis=1), normops.run("Softmax", [x], {"axis": 1})[0])
    assert_same_bits(normops.log_softmax(x, axis=0), normops.run("LogSoftmax", [x], {"axis": 0})[0])
    with pytest.raises(InvalidInputError, match="axis"):
        normops.softmax(x, axis=(1, 1))


@pytest.mark.parametrize("shape, axis", [((1, 1024), 0), ((5, 7), 0), ((70, 33), 0), ((3, 17, 5), 1),
                                         ((2, 40, 3), 1), ((9, 16 * 3 + 1), 0), ((4, 6, 2, 19), 2)])
def test_columns_get_the_row_bits(shape, axis):
    # along an axis that is not last, the kernel gathers columns into rows
    # and back (softmax_columns): every column must have the bits of the
    # same values computed as a row, at every level and thread count
    rng = np.random.default_rng(list(shape) + [axis])
    n = shape[axis]
    moved_shape = shape[:axis] + shape[axis + 1:] + (n,)
    for dtype in (np.float32, np.float64):
        rows = special_rows(rng, int(np.prod(moved_shape[:-1])), n, dtype).reshape(moved_shape)
        x = np.ascontiguousarray(np.moveaxis(rows, -1, axis))
        for level in isa.available_levels():
            with isa.use(level) as k:
                old = isa.routes.set_threads_always(True)  # every split threads, small as these are
                try:
                    for op, ours in (("Softmax", normops.softmax), ("LogSoftmax", normops.log_softmax)):
                        want = normops.reference.run(op, [x], {"axis": axis}, opset=13)[0]
                        fast = np.moveaxis(normops.ops.softmax(rows, mode="fast") if op == "Softmax"
                                           else normops.ops.log_softmax(rows, mode="fast"), -1, axis)
                        for threads in (1, 2, 3, 8):
                            assert_same_bits(ours(x, axis=axis, n_threads=threads), want)
                            assert_same_bits(ours(x, axis=axis, mode="fast", n_threads=threads),
                                             np.ascontiguousarray(fast))
                        assert np.array_equal(x, np.moveaxis(rows, -1, axis), equal_nan=True)  # input kept
                    outer, inner = int(np.prod(shape[:axis])), int(np.prod(shape[axis + 1:]))
                    hard = k.softmax_columns(x, outer, n, inner, 2, False, 3)
                    assert_same_bits(hard, normops.reference.run("Hardmax", [x], {"axis": axis}, opset=13)[0])
                finally:
                    isa.routes.set_threads_always(old)


def test_columns_refuse_what_they_do_not_take():
    k = isa.kernels
    x = np.ones((4, 5), np.float32)
    assert k.softmax_columns(x, 1, 4, 5, 0, False, 1) is not None
    assert k.softmax_columns(x, 1, 4, 1, 0, False, 1) is None          # inner 1: rows, not columns
    assert k.softmax_columns(x, 1, 3, 5, 0, False, 1) is None          # the sizes do not match
    assert k.softmax_columns(x.astype(np.float16), 1, 4, 5, 0, False, 1) is None
    assert k.softmax_columns(np.asfortranarray(np.ones((5, 6), np.float32)), 1, 5, 6, 0, False, 1) is None
    assert k.softmax_columns([[1.0]], 1, 1, 1, 0, False, 1) is None
    assert k.softmax_columns(x, 1, 4, 5, 3, False, 1) is None          # no such kind
    assert k.softmax_columns(x, 2 ** 40, 2 ** 40, 5, 0, False, 1) is None  # no overflow


# ------------------------------------------------- exact quotient, fast flavour

def test_exact_quotient_gives_the_bits_of_the_division():
    # exact Softmax divides through a float64 quotient (softmax_steps.h):
    # the bits must be those of one float32 division, subnormal quotients,
    # zeros and quotients near every kind of rounding boundary included
    rng = np.random.default_rng(5)
    e = np.concatenate([
        rng.random(1 << 16).astype(np.float32),
        (rng.random(1 << 14) * 2.0 ** rng.integers(-149, 1, 1 << 14)).astype(np.float32),
        np.arange(1, 1 << 12, dtype=np.float32),          # small integers: exact quotients
        np.array([0.0, 1.0, 2.0 ** -149, 2.0 ** -126, 3 * 2.0 ** -149], np.float32),
    ])
    divisors = [1.0, 3.0, 6.0, 7.0, 1.5, 1.0000001, 16777215.0, 1023.99994, 2.0 ** 24]
    divisors += [float(v) for v in (rng.random(20) * 4096 + 1).astype(np.float32)]
    # small and negative divisors: quotients that overflow, and the range
    # where every element takes the division
    divisors += [0.5, 2.0 ** -20, 2.0 ** -99, 2.0 ** -100, 2.0 ** -101, 2.0 ** -126, -3.0, -(2.0 ** -120)]
    for level in isa.available_levels():
        module = isa.load(level)
        for s in divisors:
            s = np.float32(s)
            with np.errstate(over="ignore"):
                expected = e / s
            # every start offset: the divided and the float64 halves of each
            # block, and every tail length
            for start in (0, 1, 7, 16, 17, 31):
                out = np.empty_like(e[start:])
                module.divide_float_into(e[start:], s, out)
                assert_same_bits(out, expected[start:])


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax", "Sigmoid"])
def test_fast_flavour_does_not_depend_on_threads(op):
    x = special_rows(np.random.default_rng(4), 300, 333, np.float32)
    old = isa.routes.set_threads_always(True)
    try:
        for level in isa.available_levels():
            with isa.use(level):
                ref = normops.run(op, [x], mode="fast", n_threads=1)[0]
                for t in (2, 3, 8):
                    assert_same_bits(normops.run(op, [x], mode="fast", n_threads=t)[0], ref)
    finally:
        isa.routes.set_threads_always(old)



def test_per_call_route_equals_the_full_path():
    # the named functions take a short route for contiguous float32/float64
    # input along the last axis; it must give the registry path's bits, and
    # other inputs (views, other axes, dtypes, opsets) must still work
    rng = np.random.default_rng(12)
    for dtype in (np.float32, np.float64):
        x = special_rows(rng, 12, 37, dtype)
        for op, fn in (("Softmax", normops.ops.softmax), ("LogSoftmax", normops.ops.log_softmax),
                       ("Hardmax", normops.hardmax)):
            for mode in ("exact", "fast"):
                want = normops.run(op, [x[:, ::-1].copy()[:, ::-1]], {"axis": -1}, mode=mode)[0]
                assert_same_bits(fn(x, mode=mode), want)
                assert_same_bits(fn(x, axis=1, opset=11, mode=mode), want)
                if op != "Hardmax":  # (reversed rows move the first of tied maxima)
                    assert_same_bits(fn(x[:, ::-1], mode=mode)[:, ::-1], want)  # a strided view
            assert_same_bits(fn(x.T, axis=0), normops.run(op, [x.T], {"axis": 0})[0])
        assert_same_bits(normops.softmax(x), normops.ops.softmax(x.reshape(1, -1)).reshape(x.shape))
        assert_same_bits(normops.sigmoid(x), normops.run("Sigmoid", [x])[0])
        assert_same_bits(normops.sigmoid(x[:, ::2]), normops.run("Sigmoid", [x[:, ::2].copy()])[0])
    with pytest.raises(InvalidInputError):
        normops.ops.softmax(np.ones((2, 3), np.float32), axis=2)
    with pytest.raises(InvalidInputError):
        normops.sigmoid(np.ones(3, np.float32), n_threads=-1)


# ------------------------------------- fast flavour's arithmetic, streaming

def fast_model(op, x):
    """The fast flavour's order of operations (docs/specification.md §9) around the
    kernels' own fast exponential: Softmax e * RN(1 / s), LogSoftmax
    d - log32(s), Sigmoid 1 / (1 + exp(0 - x))."""
    from normops.reference._softmax import nan_rows
    from normops.reference._sum16 import canonical_nan, sum16

    def fast_exp(a):
        out = np.empty_like(a)
        isa.kernels.exp32_fast_into(a.reshape(-1), out.reshape(-1), 1)
        return out

    with np.errstate(invalid="ignore", over="ignore"):
        if op == "Sigmoid":
            one = np.float32(1)
            return canonical_nan(one / (one + fast_exp(np.float32(0) - x)))
        d = x - x.max(axis=1, keepdims=True)
        e = fast_exp(d)
        s = sum16(e)[:, None]
        if op == "Softmax":
            y = e * (np.float32(1) / s)
        else:
            log_s = np.empty_like(s)
            isa.kernels.log32_into(s.reshape(-1), log_s.reshape(-1), 1)
            y = d - log_s
    y[nan_rows(x)] = np.nan
    return canonical_nan(y)


def set_stream_threshold(nbytes):
    """The streaming threshold on every level's module; returns the old ones."""
    return {level: isa.load(level).set_stream_threshold(nbytes) for level in isa.available_levels()}


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax", "Sigmoid"])
def test_fast_flavour_follows_its_order_of_operations(op):
    # bit for bit against the model at every level, with and without
    # streaming stores (threshold 0: every output streams), one and two
    # threads, short rows, rows that are not whole vectors
    rng = np.random.default_rng(13)
    old, old_serial = set_stream_threshold(0), isa.routes.set_threads_always(True)
    try:
        for cols in (1, 5, 16, 17, 31, 64, 100, 1000, 4097):
            x = special_rows(rng, 70, cols, np.float32)
            for level in isa.available_levels():
                with isa.use(level):
                    want = fast_model(op, x)
                    for stream in (0, 1 << 62):
                        set_stream_threshold(stream)
                        for t in (1, 2):
                            got = normops.run(op, [x], mode="fast", n_threads=t)[0]
                            assert_same_bits(got, want)
    finally:
        for level in old:
            isa.load(level).set_stream_threshold(old[level])
        isa.routes.set_threads_always(old_serial)


def border_rows(rng, lows, top):
    """Rows of 257 elements (their first 130 a row too) from top + low to
    top, those two values in each, one row per low and width."""
    rows = []
    for low in lows:
        for cols in (130, 257):
            row = rng.uniform(low, 0.0, cols).astype(np.float32) + np.float32(top)
            row[rng.integers(cols)] = np.float32(low) + np.float32(top)
            row[rng.integers(cols)] = np.float32(top)
            rows.append(np.resize(row, 257))
    return np.stack(rows)


def border_vectors(rng, edges, lo, hi, inside):
    """Random values in [lo, hi] with the edges together and scattered, and
    64 values in the range `inside` in a row (whole vectors in it)."""
    edges = np.array(edges, np.float32)
    x = np.concatenate([rng.uniform(lo, hi, 4099).astype(np.float32), edges,
                        rng.uniform(*inside, 64).astype(np.float32)])
    x[rng.integers(0, x.size, 40)] = rng.choice(edges, 40)
    return x


def test_fast_flavour_where_the_range_skips_the_exponentials_clamps():
    # rows whose minimum is within 86 of their maximum, and Sigmoid vectors
    # whose every -x is in (-86, 88), take the fast exponential without its
    # clamps and range test (AVX2): rows and vectors on both sides of those
    # borders, the borders themselves, NaN and -inf among them, against
    # the model (whose exponential is the whole one)
    rng = np.random.default_rng(31)
    x = border_rows(rng, (-85.99, -86.0, -86.01, -87.3, -90.0, -104.0, -20.0), 2.5)
    x[3, 7] = np.nan
    x[6, 0] = -np.inf
    x[8, :] = -np.inf
    sig = border_vectors(rng, [-88.0, -87.99, -86.0, -85.99, 85.99, 86.0, 86.01, 88.0, 89.0, np.nan, -np.inf,
                               np.inf], -90, 90, (-85, 85))
    for level in isa.available_levels():
        with isa.use(level):
            for op, arr in (("Softmax", x), ("LogSoftmax", x), ("Sigmoid", sig)):
                for cols in ((130, 257) if op != "Sigmoid" else (None,)):
                    part = arr if cols is None else np.ascontiguousarray(arr[:, :cols])
                    want = fast_model(op, part)
                    for t in (1, 2, 3):
                        assert_same_bits(normops.run(op, [part], mode="fast", n_threads=t)[0], want)


def test_fast_rows_holding_nans_with_payloads_are_the_canonical_nan():
    # the fast pass of a row within 86 of its maximum lets a NaN lane's
    # exponential be some NaN, not the canonical one (AVX2): whatever its
    # payload and sign, the row comes out as the canonical NaN, and the
    # rows after it as the model gives them
    rng = np.random.default_rng(32)
    x = (rng.standard_normal((12, 1024)) * 3).astype(np.float32)
    bits = x.view(np.uint32)
    placed = ((1, 5, 0x7FC001FF), (3, 1023, 0xFFC00F0F), (4, 0, 0x7F800123), (6, 512, 0xFFFFFFFF),
              (9, 17, 0x7FC00000))
    for row, col, pattern in placed:
        bits[row, col] = pattern
    for level in isa.available_levels():
        with isa.use(level):
            for op in ("Softmax", "LogSoftmax"):
                for cols in (1024, 257):
                    part = np.ascontiguousarray(x[:, :cols])
                    want = fast_model(op, part)
                    nan_rows = [row for row, col, _ in placed if col < cols]
                    assert np.all(want[nan_rows].view(np.uint32) == 0x7FC00000)
                    assert not np.isnan(np.delete(want, nan_rows, axis=0)).any()
                    for t in (1, 2, 3):
                        assert_same_bits(normops.run(op, [part], mode="fast", n_threads=t)[0], want)



@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax", "Sigmoid"])
def test_streaming_stores_do_not_change_bits(op):
    # outputs that start anywhere within a 64-byte line, widths that are
    # not whole vectors, sizes on both sides of the default threshold, both
    # flavours
    rng = np.random.default_rng(14)
    kind = {"Softmax": 0, "LogSoftmax": 1}.get(op)
    boundary = 1 << 21  # bytes; outputs from this size stream, smaller ones do not
    for rows, cols in ((3, 1), (5, 33), (40, 1000), (boundary // 4 // 1000, 1000), (boundary // 4 // 1000 + 1, 1000)):
        x = special_rows(rng, rows, cols, np.float32)
        for level in isa.available_levels():
            mod = isa.load(level)
            for mode in ("exact", "fast"):
                with isa.use(level):
                    want = normops.run(op, [x], mode=mode, n_threads=1)[0]
                for stream in (0, 1 << 62, boundary):
                    old, old_serial = mod.set_stream_threshold(stream), isa.routes.set_threads_always(True)
                    try:
                        for offset in (0, 1, 3, 15):
                            buf = np.full(x.size + 16, 7, np.float32)
                            y = buf[offset:offset + x.size]
                            for t in (1, 2, 3):
                                if kind is None:
                                    mod.sigmoid_flat(x.reshape(-1), y, mode == "fast", t)
                                else:
                                    mod.softmax_rows(x.reshape(-1), y, rows, cols, kind, mode == "fast", t)
                                assert_same_bits(y.reshape(x.shape), want)
                                assert (buf[:offset] == 7).all() and (buf[offset + x.size:] == 7).all()
                    finally:
                        mod.set_stream_threshold(old)
                        isa.routes.set_threads_always(old_serial)


@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("kind", [0, 1])
def test_last_pass_in_the_next_rows_pass(kind, fast):
    # Softmax and LogSoftmax finish each row (exact Softmax: divide it;
    # fast: multiply it by RN(1 / s); LogSoftmax: subtract log32(s)) inside
    # the next row's pass (every case at AVX2, the exact Softmax at
    # AVX-512; elsewhere the row is finished on its own): against the
    # row's own last pass and the specification (or the fast model), with
    # the rows that make no pass (+-inf maximum) or a NaN sum next to
    # ordinary ones, first and last, widths past the short-row cut-off with
    # tails, 1..8 threads
    rng = np.random.default_rng(23)
    for level in isa.available_levels():
        mod = isa.load(level)
        for rows, cols in ((1, 129), (2, 130), (7, 200), (9, 257), (12, 1024), (5, 4099)):
            x = special_rows(rng, rows, cols, np.float32)
            x[-1, 3] = np.inf                   # the last row makes no pass
            if rows > 7:
                x[6] = -np.inf                  # no pass, after and before ordinary rows
                x[7, 0] = np.nan                # a NaN sum right after it
            old = mod.set_softmax_divide_in_pass(False)
            try:
                want = np.empty_like(x)
                mod.softmax_rows(x.reshape(-1), want, rows, cols, kind, fast, 1)
            finally:
                mod.set_softmax_divide_in_pass(old)
            op = OPS[kind]
            with isa.use(level):
                assert_same_bits(want, fast_model(op, x) if fast else normops.reference.run(op, [x])[0])
            for t in (1, 2, 3, 8):
                got = np.empty_like(x)
                mod.softmax_rows(x.reshape(-1), got, rows, cols, kind, fast, t)
                assert_same_bits(got, want)
                y = x.copy()  # y may be x
                mod.softmax_rows(y.reshape(-1), y.reshape(-1), rows, cols, kind, fast, t)
                assert_same_bits(y, want)


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("kind", [0, 1])
def test_short_rows_sixteen_at_a_time_match_row_at_a_time(kind, fast):
    # the sixteen-row folds of short rows (AVX-512, both flavours; the
    # other levels go row by row either way) against the row-at-a-time code:
    # group sizes that are not 16, widths up to and past the cut-off,
    # special values (NaN, +-inf rows, all -inf), 1..8 threads
    rng = np.random.default_rng(15)
    for level in isa.available_levels():
        mod = isa.load(level)
        for rows, cols in ((1, 1), (15, 7), (16, 16), (17, 64), (33, 100), (70, 127), (40, 128), (20, 129)):
            x = special_rows(rng, rows, cols, np.float32)
            x[rows // 2] = -np.inf
            old = mod.set_softmax_short_rows(False)
            try:
                want = np.empty_like(x)
                mod.softmax_rows(x.reshape(-1), want, rows, cols, kind, fast, 1)
            finally:
                mod.set_softmax_short_rows(old)
            assert np.isnan(want[rows // 2]).all()
            if not fast:
                assert_same_bits(want, normops.reference.run(("Softmax", "LogSoftmax")[kind], [x])[0])
            for t in range(1, 9):
                got = np.empty_like(x)
                mod.softmax_rows(x.reshape(-1), got, rows, cols, kind, fast, t)
                assert_same_bits(got, want)
                y = x.copy()  # y may be x
                mod.softmax_rows(y.reshape(-1), y.reshape(-1), rows, cols, kind, fast, t)
                assert_same_bits(y, want)


NARROW = [np.dtype(np.float16)] + ([BF16] if BF16 is not None else [])


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax", "Hardmax", "Sigmoid"])
def test_exact_flavour_at_every_level_and_thread_count(op):
    # the exact flavour's one pass for exp32 and Sum16 (pieces of 512, the
    # next row's maximum alongside), sixteen short rows at a time, the
    # quotient by vectors, and float16/bfloat16 widened and rounded inside
    # the kernels: the specification's bits at every level, widths at the
    # edges of vectors, short rows and pieces, both routes (normops.run,
    # the named function); then 1..8 threads over nine chunks
    rng = np.random.default_rng(21)
    named = {"Softmax": normops.ops.softmax, "LogSoftmax": normops.ops.log_softmax,
             "Hardmax": normops.ops.hardmax, "Sigmoid": normops.sigmoid}[op]
    dtypes = [np.dtype(np.float32), np.dtype(np.float64)] + NARROW
    old = isa.routes.set_threads_always(True)
    try:
        for cols, chunks, threads in ([(c, 2, (1, 2)) for c in (1, 7, 16, 17, 64, 127, 128, 129, 511, 512, 513, 1040)]
                                      + [(c, 9, range(1, 9)) for c in (17, 600)]):
            rows = ROW_CHUNK_ELEMENTS // cols * (chunks - 1) + 5
            for dtype in dtypes if chunks == 2 else dtypes[::2]:
                x = special_rows(rng, rows, cols, dtype)
                want = normops.reference.run(op, [x])[0]
                assert want.dtype == dtype
                for level in isa.available_levels():
                    with isa.use(level):
                        for t in threads:
                            assert_same_bits(normops.run(op, [x], mode="exact", n_threads=t)[0], want)
                        assert_same_bits(named(x, mode="exact", n_threads=2), want)
    finally:
        isa.routes.set_threads_always(old)


def test_exact_flavour_at_the_exponential_edges():
    # rows whose differences from the maximum are exp32's hardest inputs and
    # its float32 quick path's edges (test_transcendentals.py), in every
    # lane, at every level: the specification's bits through the fused
    # exponential-and-sum pass, for Softmax and LogSoftmax
    edges = json.loads((Path(__file__).resolve().parent / "data" / "exp_log_edges.json").read_text())
    values = (edges["hardest"]["exp"] + edges["exp_float32_quick_path"]["inputs"]
              + edges["exp_float32_quick_path_avx2"]["inputs"])
    edges = np.array([float.fromhex(v) for v in values], np.float32)
    edges = edges[edges < 0]
    # 16, 33: the short rows' folds; 129: the row pass (AVX-512: with the
    # maximum and minimum carried from the row before), at a few lanes
    for cols, lanes in ((16, range(16)), (33, range(33)), (129, (0, 1, 15, 16, 127, 128))):
        x = np.zeros((edges.size * len(lanes), cols), np.float32)
        for i, value in enumerate(edges):
            for k, lane in enumerate(lanes):
                x[i * len(lanes) + k, lane] = value
        for op in ("Softmax", "LogSoftmax"):
            want = normops.reference.run(op, [x])[0]
            for level in isa.available_levels():
                with isa.use(level):
                    assert_same_bits(normops.run(op, [x], mode="exact", n_threads=1)[0], want)


def test_exact_rows_whose_range_skips_the_exponentials_range_test():
    # a row whose minimum is within 87.3 of its maximum takes exp32 without
    # its range masks (AVX-512): rows on both sides of that border, the
    # border itself, subnormal and +0 results next to them, NaN and -inf
    # in them, one after another (the minimum comes from the row before)
    rng = np.random.default_rng(24)
    x = border_rows(rng, (-87.29, -87.3, -87.31, -87.4, -90.0, -103.9, -104.0, -104.1, -150.0, -20.0), 3.5)
    x[5, 7] = np.nan
    x[9, 0] = -np.inf
    x[12, :] = -np.inf
    for cols in (130, 257):
        part = np.ascontiguousarray(x[:, :cols])
        for op in ("Softmax", "LogSoftmax"):
            want = normops.reference.run(op, [part])[0]
            for level in isa.available_levels():
                with isa.use(level):
                    for t in (1, 2, 3):
                        assert_same_bits(normops.run(op, [part], mode="exact", n_threads=t)[0], want)


def test_kernels_take_narrow_storage_and_round_once():
    # float16/bfloat16 arrays straight into the kernels: each element
    # widened exactly, the float32 algorithm, each result rounded once
    rng = np.random.default_rng(22)
    for dtype in NARROW:
        x = special_rows(rng, 40, 100, dtype)
        wide = x.astype(np.float32)
        for level in isa.available_levels():
            mod = isa.load(level)
            for fast in (False, True):
                for kind in (0, 1, 2):
                    want = np.empty_like(wide)
                    mod.softmax_rows(wide.reshape(-1), want.reshape(-1), 40, 100, kind, fast, 1)
                    got = np.empty_like(x)
                    mod.softmax_rows(x.reshape(-1), got.reshape(-1), 40, 100, kind, fast, 3)
                    with np.errstate(over="ignore"):
                        assert_same_bits(got, want.astype(dtype))
                want = np.empty_like(wide)
                mod.sigmoid_flat(wide.reshape(-1), want.reshape(-1), fast, 1)
                got = np.empty_like(x)
                mod.sigmoid_flat(x.reshape(-1), got.reshape(-1), fast, 2)
                assert_same_bits(got, want.astype(dtype))
        with pytest.raises(TypeError):
            isa.kernels.softmax_rows(x.reshape(-1), np.empty(x.size, np.float32), 40, 100, 0, False, 1)


# ------------------------------------------------- ReduceLogSumExp flavours

def logsumexp_fast_model(x):
    """The fast flavour of ReduceLogSumExp over the rows of a finite 2-D
    float32 x: m + log32(Sum16(fast exp(x - m)))."""
    from normops.reference._sum16 import sum16

    m = x.max(axis=1)
    d = x - m[:, None]
    e = np.empty_like(d)
    isa.kernels.exp32_fast_into(d.reshape(-1), e.reshape(-1), 1)
    s = sum16(e)
    log_s = np.empty_like(s)
    isa.kernels.log32_into(s, log_s, 1)
    return m + log_s


def test_reduce_log_sum_exp_exact_at_every_level_and_thread_count():
    rng = np.random.default_rng(23)
    old = isa.routes.set_threads_always(True)
    try:
        for shape, axes in (((300, 333), [-1]), ((333, 300), [0]), ((7, 40, 130), [1]), ((5, 1000), [1])):
            for dtype in [np.dtype(np.float32), np.dtype(np.float64)] + NARROW:
                x = special_rows(rng, shape[0], int(np.prod(shape[1:])), dtype).reshape(shape)
                want = normops.reference.run("ReduceLogSumExp", [x, np.array(axes)], {"keepdims": 0})[0]
                for level in isa.available_levels():
                    with isa.use(level):
                        for t in (1, 2, 3, 8):
                            got = normops.reduce_log_sum_exp(x, axes, keepdims=0, mode="exact", n_threads=t)
                            assert_same_bits(got, want)
    finally:
        isa.routes.set_threads_always(old)


def test_reduce_log_sum_exp_fast_uses_the_fast_exponential():
    # bit for bit against its order of operations around the kernels' fast
    # exponential (row layout), within a float64 oracle's bound in every
    # layout (rows, columns, blocks of a long reduction), different from
    # exact somewhere, float64 the same in both flavours
    rng = np.random.default_rng(24)
    x = (rng.standard_normal((200, 777)) * 4).astype(np.float32)
    differs = False
    for level in isa.available_levels():
        with isa.use(level):
            want = logsumexp_fast_model(x)
            for t in (1, 2):
                assert_same_bits(normops.reduce_log_sum_exp(x, [1], keepdims=0, mode="fast", n_threads=t), want)
                assert_same_bits(normops.run("ReduceLogSumExp", [x, np.array([1])], {"keepdims": 0}, mode="fast",
                                      n_threads=t)[0], want)
            exact = normops.reduce_log_sum_exp(x, [1], keepdims=0, mode="exact")
            differs |= exact.tobytes() != want.tobytes()
            for a, axes in ((x, [1]), (x, [0]), (x.reshape(20, 10, 777), [1]),
                            ((rng.standard_normal(1 << 20) * 3).astype(np.float32), [0])):
                got = normops.reduce_log_sum_exp(a, axes, keepdims=0, mode="fast").astype(np.float64)
                a64 = a.astype(np.float64)
                m = a64.max(axis=axes[0], keepdims=True)
                oracle = np.squeeze(m, axis=axes[0]) + np.log(np.exp(a64 - m).sum(axis=axes[0]))
                n = a.shape[axes[0]]
                # each term within 2^-22 relative, the float32 sum within
                # about (n / 16 + 4) roundings; then log32 and the addition
                bound = (2.0 ** -22 + (n / 16 + 4) * 2.0 ** -24) + 2 * np.spacing(np.abs(oracle).astype(np.float32))
                assert (np.abs(got - oracle) <= bound).all(), level
            x64 = x.astype(np.float64)
            assert_same_bits(normops.reduce_log_sum_exp(x64, [1], keepdims=0, mode="fast"),
                             normops.reduce_log_sum_exp(x64, [1], keepdims=0, mode="exact"))
    assert differs


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_row_groups_do_not_change_bits(op):
    # rows go through in groups (sums, then the scalars, then the last
    # passes; LogSoftmax keeps x - max in y meanwhile): any group budget,
    # from one row to sixteen, gives the specification's bits at every level
    rng = np.random.default_rng(16)
    log_softmax = op == "LogSoftmax"
    for level in isa.available_levels():
        mod = isa.load(level)
        for cols in (3, 129, 1000, 1024, 4097):
            for dtype in (np.float32, np.float64):
                x = special_rows(rng, 37, cols, dtype)
                for mode in ("exact", "fast"):
                    if mode == "exact":
                        want = normops.reference.run(op, [x], {"axis": -1})[0]
                    elif dtype == np.float32:
                        with isa.use(level):
                            want = fast_model(op, x)
                    else:  # float64 fast: the default grouping's bits
                        with isa.use(level):
                            want = normops.run(op, [x], {"axis": -1}, mode=mode, n_threads=1)[0]
                    for budget in (0, 1024, 4096, 1 << 20):
                        old = mod.set_softmax_group_elements(budget, log_softmax)
                        try:
                            with isa.use(level):
                                got = normops.run(op, [x], {"axis": -1}, mode=mode, n_threads=1)[0]
                        finally:
                            mod.set_softmax_group_elements(old, log_softmax)
                        assert_same_bits(got, want)


def test_kernel_entry_refuses_shapes_that_overflow_and_takes_y_as_x():
    # the kernels' entry points check sizes without wrapping around, and
    # Hardmax finds the maximum before clearing y, so y may be x
    empty = np.empty(0, np.float32)
    for level in isa.available_levels():
        mod = isa.load(level)
        with pytest.raises(ValueError, match="too large"):
            mod.softmax_rows(empty, empty.copy(), 1 << 62, 4, 0, False, 1)
        with pytest.raises(ValueError, match="too large"):
            mod.row_divide(empty, empty.copy(), 1 << 62, 4, 1, 1)
        with pytest.raises(ValueError, match="too large"):
            mod.lp_columns(empty, empty.copy(), 1 << 31, 1 << 31, 1 << 31, 1, 1)
        with pytest.raises(ValueError, match="too large"):
            mod.row_normalize(empty, np.ones(4, np.float32), None, empty.copy(), None, None, 1 << 62, 4,
                              1e-5, True, 1)
        one = np.ones(1 << 20, np.float32)
        with pytest.raises(ValueError, match="too large"):
            mod.batch_normalization_training(empty, one, one, one, one, empty.copy(), one.copy(), one.copy(),
                                             1 << 22, 1 << 20, 1 << 22, 1e-5, 0.9, 1)
        for kind in (0, 1, 2):
            mod.softmax_rows(empty, empty.copy(), 0, 1 << 40, kind, False, 1)  # no rows: nothing to do
        x = special_rows(np.random.default_rng(17), 9, 33, np.float32)
        for kind in (0, 1, 2):
            want = np.empty_like(x)
            mod.softmax_rows(x.reshape(-1), want.reshape(-1), 9, 33, kind, False, 1)
            y = x.copy()
            mod.softmax_rows(y.reshape(-1), y.reshape(-1), 9, 33, kind, False, 1)
            assert_same_bits(y, want)


def test_placed_outputs_are_ordinary_arrays_in_the_right_place():
    # Softmax's fresh outputs of 128 KiB or more come from normops' NumPy
    # allocation handler (placed_alloc.h): on a 64-byte line, 3 KiB past
    # the input's line modulo 4096; smaller ones from NumPy's own
    import pickle

    from numpy._core.multiarray import get_handler_name

    rng = np.random.default_rng(16)
    default = get_handler_name()
    for level in isa.available_levels():
        mod = isa.load(level)
        for rows, cols in ((32, 1024), (9, 4097), (8, 4096)):
            # inputs at every offset in a line, all of them 128 KiB or more
            buf = rng.standard_normal(rows * cols + 16).astype(np.float32)
            for offset in (0, 1, 4, 13):
                x = buf[offset:offset + rows * cols].reshape(rows, cols)
                y = mod.softmax_last_axis(x, cols, 0, True, 1)
                assert get_handler_name(y) == "normops_placed" and get_handler_name() == default
                assert y.flags.owndata and y.base is None and y.flags.c_contiguous and y.flags.writeable
                assert y.ctypes.data % 64 == 0
                assert (y.ctypes.data - (x.ctypes.data & ~63)) % 4096 == 3072
                with isa.use(level):
                    assert_same_bits(y, normops.run("Softmax", [x], mode="fast", n_threads=1)[0])
                assert_same_bits(pickle.loads(pickle.dumps(y)), y)
                # growing goes through the handler's realloc: the data moves, kept
                kept = y.copy()
                y.resize((rows + 5, cols), refcheck=False)
                assert_same_bits(y[:rows], kept)
                assert (y[rows:] == 0).all() and y.ctypes.data % 64 == 0
                y.resize((1, 3), refcheck=False)
                assert_same_bits(y.reshape(-1), kept.reshape(-1)[:3])
        for small in (np.ones((2, 8), np.float32), np.ones((32767,), np.float32), np.ones((4096, 4), np.float64)[1:]):
            assert get_handler_name(mod.softmax_last_axis(small, 4 if small.ndim == 2 else 1, 0, False, 1)) == default
        assert get_handler_name(mod.softmax_last_axis(np.ones(32768, np.float32), 1, 0, False, 1)) == "normops_placed"
        for dtype in (np.float32, np.float64, np.int32):
            a = np.zeros((256, 129), dtype)
            e = isa.routes.empty_placed(a)
            assert e.shape == a.shape and e.dtype == a.dtype and e.flags.c_contiguous and e.flags.owndata
            assert get_handler_name(e) == ("normops_placed" if dtype != np.int32 else default)
        # a failed allocation leaves NumPy's handler in place
        with pytest.raises(MemoryError):
            isa.routes.empty_placed(np.broadcast_to(np.float32(0), (2 ** 42,)))
        assert get_handler_name() == default
        with pytest.raises(TypeError):
            isa.routes.empty_placed([1.0])


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax", "Hardmax"])
def test_placing_outputs_does_not_change_bits(op):
    # every output placed (threshold 1 byte) or none, both flavours, both
    # routes (the named function's direct one and normops.run), 1-3 threads
    rng = np.random.default_rng(17)
    for level in isa.available_levels():
        mod = isa.load(level)
        for rows, cols in ((1, 1), (5, 33), (70, 64), (9, 1000), (4, 4097)):
            x = special_rows(rng, rows, cols, np.float32 if cols % 2 else np.float64)
            function = getattr(normops.ops, {"Softmax": "softmax", "LogSoftmax": "log_softmax"}.get(op, "hardmax"))
            for mode in ("exact", "fast"):
                with isa.use(level):
                    outputs = []
                    for place_from in (1, 1 << 62):
                        old = isa.routes.set_place_from_bytes(place_from)
                        try:
                            for t in (1, 2, 3):
                                outputs.append(function(x, axis=-1, mode=mode, n_threads=t))
                                outputs.append(normops.run(op, [x], mode=mode, n_threads=t)[0])
                        finally:
                            isa.routes.set_place_from_bytes(old)
                for got in outputs[1:]:
                    assert_same_bits(got, outputs[0])


# ------------------------------------- named, run and session along a middle axis

@pytest.mark.parametrize("op", OPS)
def test_every_route_along_an_axis_that_is_not_last_equals_the_specification(op):
    # from opset 13 the named function, normops.run and a session node send
    # a C-contiguous float32/float64 input along a middle axis to the
    # column kernel (softmax_columns); every route must give the
    # specification's bits, at every level and thread count
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper as h
    from normops.onnx import InferenceSession

    fn = getattr(normops.ops, {"Softmax": "softmax", "LogSoftmax": "log_softmax", "Hardmax": "hardmax"}[op])
    rng = np.random.default_rng(OPS.index(op) + 40)
    cases = [((37, 5, 19), 1), ((37, 5, 19), 0), ((6, 33, 1), 1), ((300, 20), 0), ((3, 4, 5, 6), -3),
             ((2, 700, 40), 1), ((1024, 20), 0), ((3, 512, 17), 1)]
    old = isa.routes.set_threads_always(True)
    try:
        for shape, axis in cases:
            for dtype in (np.float32, np.float64):
                x = special_rows(rng, int(np.prod(shape[:-1])), shape[-1], dtype).reshape(shape)
                before = x.tobytes()
                want = normops.reference.run(op, [x], {"axis": axis}, opset=13)[0]
                model = h.make_model(h.make_graph(
                    [h.make_node(op, ["x"], ["y"], axis=axis)], "g",
                    [h.make_tensor_value_info("x", TensorProto.FLOAT if dtype == np.float32 else TensorProto.DOUBLE,
                                              shape)],
                    [h.make_tensor_value_info("y", TensorProto.FLOAT if dtype == np.float32 else TensorProto.DOUBLE,
                                              shape)]), opset_imports=[h.make_opsetid("", 13)])
                session = InferenceSession(model.SerializeToString())
                for level in isa.available_levels():
                    with isa.use(level):
                        for t in (1, 2, 3, 8):
                            assert_same_bits(fn(x, axis=axis, n_threads=t), want)
                            assert_same_bits(normops.run(op, [x], {"axis": axis}, opset=13, n_threads=t)[0], want)
                        assert_same_bits(session.run(None, {"x": x})[0], want)
                assert x.tobytes() == before
    finally:
        isa.routes.set_threads_always(old)
