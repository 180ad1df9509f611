"""CumSum and CumProd: bit for bit against the executable specification
and NumPy's sequential sums and products, every dtype, layout, thread
count and ISA level; special values and wrap-around; the column chunks
of long lines over a short outer extent (docs/performance-analysis.md,
"Kernel techniques", "Column chunks for long lines"); the NumPy-style
cumsum / cumprod against NumPy; errors; the ONNX node cases."""
import numpy as np
import pytest

import normops
import normops._isa as isa
from normops import InvalidInputError, UnsupportedError

from axis_data import BF16, CUM_INTS, FLOATS, data, same_everywhere
from bits import assert_same_bits


# ------------------------------------------------------------------ CumSum

def cum_check(x, axis, exclusive=0, reverse=0, opset=14, **kw):
    attrs = {"exclusive": exclusive, "reverse": reverse}
    got = normops.run("CumSum", [x, np.int64(axis)], attrs, opset=opset, **kw)[0]
    want = normops.reference.run("CumSum", [x, np.int64(axis)], attrs, opset=opset)[0]
    assert_same_bits(got, want)
    return got


@pytest.mark.parametrize("dtype", FLOATS + CUM_INTS, ids=str)
def test_cumsum_random_shapes_match_the_specification(dtype):
    rng = np.random.default_rng((FLOATS + CUM_INTS).index(dtype))
    for _ in range(16):
        shape = tuple(int(d) for d in rng.integers(1, 9, rng.integers(1, 5)))
        x = data(rng, shape, dtype)
        axis = int(rng.integers(-x.ndim, x.ndim))
        got = cum_check(x, axis, int(rng.integers(0, 2)), int(rng.integers(0, 2)))
        assert got.dtype == dtype and got.shape == x.shape


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint32, np.uint64])
def test_cumsum_equals_numpy_sequential_sums(dtype):
    """NumPy's add.accumulate is sequential too: the same bits (floats
    without NaN; NumPy keeps NaN payloads, normops canonicalises them)."""
    rng = np.random.default_rng(5)
    x = data(rng, (7, 300, 5), np.dtype(dtype), specials=False)
    if np.dtype(dtype).kind == "f":
        x = x * np.asarray(1e7, dtype)  # rounding in every addition
    for axis in range(3):
        assert_same_bits(normops.ops.cum_sum(x, axis), np.cumsum(x, axis=axis, dtype=dtype))
        rev = np.flip(np.cumsum(np.flip(x, axis), axis=axis, dtype=dtype), axis)
        assert_same_bits(normops.ops.cum_sum(x, axis, reverse=1), rev)


def test_cumsum_rules():
    x = np.array([-0.0, 1.0, np.nan, 2.0], np.float32)
    inc = normops.ops.cum_sum(x, 0)
    assert np.signbit(inc[0]) and inc[1] == 1.0
    assert (inc[2:].view(np.uint32) == 0x7FC00000).all()     # canonical NaN from there on
    exc = normops.ops.cum_sum(x, 0, exclusive=1)
    assert exc[0] == 0 and not np.signbit(exc[0]) and not np.signbit(exc[1])  # 0 + -0 = +0
    assert exc[2] == 1.0 and exc[3:].view(np.uint32)[0] == 0x7FC00000
    assert normops.ops.cum_sum(x, 0, exclusive=1, reverse=1)[3] == 0
    big = np.array([np.inf, -np.inf, 1], np.float64)
    assert (normops.ops.cum_sum(big, 0)[1:].view(np.uint64) == 0x7FF8000000000000).all()
    i = np.array([2**31 - 1, 1, 5], np.int32)                   # wraps around
    assert normops.ops.cum_sum(i, 0).tolist() == [2**31 - 1, -2**31, -2**31 + 5]
    u = np.array([2**64 - 1, 2], np.uint64)
    assert normops.ops.cum_sum(u, np.int32(0), exclusive=1).tolist() == [0, 2**64 - 1]


@pytest.mark.parametrize("dtype", [np.float16] + ([BF16] if BF16 is not None else []), ids=str)
def test_cumsum_narrow_types_round_each_output_once(dtype):
    x = (np.random.default_rng(6).standard_normal((5, 400)) * 10).astype(dtype)
    got = normops.ops.cum_sum(x, 1)
    wide = normops.ops.cum_sum(x.astype(np.float32), 1)
    with np.errstate(over="ignore"):
        assert_same_bits(got, wide.astype(dtype))
    with pytest.raises(InvalidInputError, match="CumSum.*opset 14"):
        normops.ops.cum_sum(x, 1, opset=11)


@pytest.mark.parametrize("shape,axis", [((300, 333), 1), ((300, 333), 0), ((40, 50, 60), 1), ((5, 9), 1),
                                        ((70001,), 0)])
def test_cumsum_threads_and_isa_levels(shape, axis):
    rng = np.random.default_rng(7)
    for dtype in (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int64)):
        x = data(rng, shape, dtype)
        for exclusive, reverse in ((0, 0), (1, 1)):
            same_everywhere("CumSum", [x, np.int64(axis)], {"exclusive": exclusive, "reverse": reverse})


def test_cumsum_axis_input():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = np.cumsum(x, axis=1)
    for axis in (np.int32(1), np.int64(-1), np.array([1], np.int64), 1):
        assert_same_bits(normops.ops.cum_sum(x, axis), want)
    for bad in (np.float32(1), np.array([0, 1], np.int64), np.array([[1]], np.int32), np.uint8(1)):
        with pytest.raises(InvalidInputError, match="CumSum.*'axis'"):
            normops.ops.cum_sum(x, bad)
    for bad in (2, -3):
        with pytest.raises(InvalidInputError, match="CumSum.*'axis'=.*out of range"):
            normops.ops.cum_sum(x, np.int64(bad))
    with pytest.raises(InvalidInputError, match="CumSum.*'axis'.*required"):
        normops.run("CumSum", [x])
    e = np.zeros((0, 3), np.float32)
    assert normops.ops.cum_sum(e, 0).shape == (0, 3)
    assert normops.ops.cum_sum(np.zeros((2, 0)), 1).shape == (2, 0)


# ------------------------------------------------------------ NumPy style

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.int32, np.uint8, np.uint32, np.int64,
                                   np.uint64, np.bool_])
def test_numpy_style_cumsum_equals_numpy(dtype):
    rng = np.random.default_rng(10)
    x = data(rng, (3, 4, 50), np.dtype(dtype), specials=False) if dtype is not np.bool_ else rng.random((3, 4, 50)) < .5
    for axis in (None, 0, 2, -2):
        want = np.cumsum(x, axis=axis)
        assert_same_bits(normops.cumsum(x, axis=axis), want)
    for dt in (np.float64, np.int16, np.uint8):
        with np.errstate(over="ignore", invalid="ignore"):
            assert_same_bits(normops.cumsum(x, 2, dtype=dt), np.cumsum(x, 2, dtype=dt))
    out = np.empty(x.shape, np.float64)
    assert normops.cumsum(x, 1, out=out) is out
    assert_same_bits(out, np.cumsum(x, 1, out=np.empty(x.shape, np.float64)))
    assert_same_bits(normops.cumsum(x[0, 0, 0]), np.cumsum(x[0, 0, 0]))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_numpy_style_cumulative_into_out_of_another_dtype(name):
    # with out= and no dtype=, NumPy works in the common type of its default
    # and out's dtype, then casts into out (float64 into an int64 out adds
    # 0.5s in float64; float64 into a float32 out keeps float64 partials)
    rng = np.random.default_rng(11)
    inputs = [np.array([0.5, 0.5, 0.5, 1.5, 2.5]), np.array([1e8, 1, -1e8, 3, 0.25]),
              np.array([1e8, 1, -1e8, 3, 0.25], np.float32), np.array([2 ** 62, 2 ** 62, 5, 1, 2], np.int64),
              np.array([100, 100, 100, -7, 3], np.int8), np.array([True, True, False, True, True]),
              (rng.standard_normal(5) * 3).astype(np.float32), np.array([2 ** 63, 5, 1, 2, 3], np.uint64)]
    for x in inputs:
        for out_dtype in (np.int64, np.int8, np.uint8, np.float32, np.float64, np.float16, np.bool_):
            with np.errstate(over="ignore", invalid="ignore"):
                want = getattr(np, name)(x, out=np.empty(x.shape, out_dtype))
                out = np.empty(x.shape, out_dtype)
                got = getattr(normops, name)(x, out=out)
            assert got is out
            assert_same_bits(got, want)


def test_numpy_style_cumsum_errors_and_float16():
    with pytest.raises(UnsupportedError, match="cumsum.*complex"):
        normops.cumsum(np.ones(3, np.complex128))
    with pytest.raises(UnsupportedError, match="cumsum.*bool"):
        normops.cumsum(np.ones(3), dtype=bool)
    with pytest.raises(InvalidInputError, match="cumsum.*'out'"):
        normops.cumsum(np.ones(3), out=np.empty(4))
    with pytest.raises(InvalidInputError, match="cumsum.*axis"):
        normops.cumsum(np.ones((2, 3)), axis=2)
    h = np.full(3000, 0.1, np.float16)
    got = normops.cumsum(h)
    assert got.dtype == np.float16
    assert_same_bits(got, np.cumsum(h.astype(np.float32)).astype(np.float16))  # one rounding per output


# ----------------------------------------------------------------- errors

def test_onnx_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(UnsupportedError, match="CumSum.*bool"):
        normops.ops.cum_sum(x > 0, 0)
    with pytest.raises(InvalidInputError, match="CumSum.*'x'.*int8"):
        normops.ops.cum_sum(x.astype(np.int8), 0)
    with pytest.raises(InvalidInputError, match="CumSum.*exclusive"):
        normops.ops.cum_sum(x, 0, exclusive=3)


def test_modes_agree_and_reference_rejects_fast():
    x = data(np.random.default_rng(12), (30, 40), np.dtype(np.float32))
    assert_same_bits(normops.ops.cum_sum(x, 1, mode="fast"), normops.ops.cum_sum(x, 1))
    with pytest.raises(UnsupportedError):
        normops.reference.run("CumSum", [x, np.int64(0)], mode="fast")


def test_every_onnx_cumsum_node_case_is_served_and_passes():
    conformance = pytest.importorskip("normops_tools.conformance")
    pytest.importorskip("onnx")
    cases = [c for c in conformance.discover("^test_cumsum_") if "_expanded" not in c.name]
    assert len(cases) >= 7 and all(c.op_type == "CumSum" for c in cases)
    assert [c.name for c in cases if not c.served] == []
    for case in cases:
        for mode in conformance.MODES:
            outcome = conformance.run_case(case, mode)
            assert outcome.status == conformance.PASSED, (case.name, mode, outcome.message)


# ------------------------------------------------------------------ CumProd

def prod_check(x, axis, exclusive=0, reverse=0, **kw):
    attrs = {"exclusive": exclusive, "reverse": reverse}
    got = normops.run("CumProd", [x, np.int64(axis)], attrs, **kw)[0]
    want = normops.reference.run("CumProd", [x, np.int64(axis)], attrs)[0]
    assert_same_bits(got, want)
    return got


def literal_cumprod(line, exclusive, reverse, dtype):
    """The rule written out for one line of Python floats/ints: running
    product in accumulation order (exclusive: starting with 1)."""
    order = list(range(len(line)))[::-1] if reverse else list(range(len(line)))
    out = [None] * len(line)
    acc = dtype.type(1)
    with np.errstate(all="ignore"):
        for k, i in enumerate(order):
            if exclusive:
                out[i] = acc
                acc = dtype.type(acc * line[i])
            else:
                acc = line[i] if k == 0 else dtype.type(acc * line[i])
                out[i] = acc
    return np.array(out, dtype)


@pytest.mark.parametrize("dtype", FLOATS + CUM_INTS, ids=str)
def test_cumprod_random_shapes_match_the_specification(dtype):
    rng = np.random.default_rng((FLOATS + CUM_INTS).index(dtype) + 100)
    for _ in range(16):
        shape = tuple(int(d) for d in rng.integers(1, 9, rng.integers(1, 5)))
        x = data(rng, shape, dtype)
        axis = int(rng.integers(-x.ndim, x.ndim))
        got = prod_check(x, axis, int(rng.integers(0, 2)), int(rng.integers(0, 2)))
        assert got.dtype == dtype and got.shape == x.shape


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint32, np.uint64])
def test_cumprod_equals_numpy_sequential_products(dtype):
    """NumPy's multiply.accumulate is sequential: the same bits (floats
    without NaN), including integer wrap-around and float overflow."""
    rng = np.random.default_rng(21)
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        x = (1 + rng.standard_normal((7, 300, 5)) * 0.3).astype(dtype)  # rounding in every product
        x[3, 100:, 2] = 1e30  # overflow to inf along some lines
    else:
        x = data(rng, (7, 300, 5), dtype, specials=False)
    for axis in range(3):
        with np.errstate(over="ignore"):
            assert_same_bits(normops.ops.cum_prod(x, axis), np.cumprod(x, axis=axis, dtype=dtype))
            rev = np.flip(np.cumprod(np.flip(x, axis), axis=axis, dtype=dtype), axis)
        assert_same_bits(normops.ops.cum_prod(x, axis, reverse=1), rev)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint32])
def test_cumprod_equals_the_rule_written_out(dtype):
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(22)
    x = data(rng, (6, 37), dtype, specials=dtype.kind == "f")
    for exclusive in (0, 1):
        for reverse in (0, 1):
            got = normops.ops.cum_prod(x, 1, exclusive=exclusive, reverse=reverse)
            for r in range(x.shape[0]):
                want = literal_cumprod(list(x[r]), exclusive, reverse, dtype)
                if dtype.kind == "f":
                    want = normops.reference.canonical_nan(want)
                assert_same_bits(got[r], want)


def test_cumprod_rules():
    x = np.array([-0.0, 2.0, np.inf, 3.0], np.float32)
    inc = normops.ops.cum_prod(x, 0)
    assert np.signbit(inc[0]) and np.signbit(inc[1]) and inc[1] == 0   # -0 * 2 = -0
    assert (inc[2:].view(np.uint32) == 0x7FC00000).all()             # -0 * inf: canonical NaN from there on
    exc = normops.ops.cum_prod(x, 0, exclusive=1)
    assert exc[0] == 1 and np.signbit(exc[1]) and np.signbit(exc[2])  # starts with 1, then -0
    assert exc[3].view(np.uint32) == 0x7FC00000
    rexc = normops.ops.cum_prod(x, 0, exclusive=1, reverse=1)
    assert rexc.tolist() == [np.inf, np.inf, 3, 1]                     # 1, 3, 3 * inf, inf * 2
    nan = np.array([2.0, np.nan, 0.0, 5.0], np.float64)
    assert (normops.ops.cum_prod(nan, 0)[1:].view(np.uint64) == 0x7FF8000000000000).all()  # NaN * 0 is NaN
    big = np.array([1e30, 1e30, -1.0, 0.0], np.float32)
    got = normops.ops.cum_prod(big, 0)
    assert got[1] == np.inf and got[2] == -np.inf and got[3].view(np.uint32) == 0x7FC00000
    tiny = np.array([1e-30, 1e-10, 1e-10], np.float32)                 # subnormal, then underflow to +0
    got = normops.ops.cum_prod(tiny, 0)
    assert got[1] == np.float32(np.float32(1e-30) * np.float32(1e-10)) and 0 < got[1] < np.finfo(np.float32).tiny
    assert got[2] == 0 and not np.signbit(got[2])
    i = np.array([2**16, 2**15, 3, -1], np.int32)                       # wraps around modulo 2^32
    assert normops.ops.cum_prod(i, 0).tolist() == [2**16, -2**31, -2**31, -2**31]
    i = np.array([65537, 65537, 7], np.int32)
    assert normops.ops.cum_prod(i, 0).tolist() == [65537, 131073, 917511]  # 65537^2 = 2^32 + 131073
    u = np.array([2**63, 2, 5], np.uint64)
    assert normops.ops.cum_prod(u, np.int32(0)).tolist() == [2**63, 0, 0]
    assert normops.ops.cum_prod(u, 0, exclusive=1).tolist() == [1, 2**63, 0]
    assert normops.ops.cum_prod(np.array([-3, 5], np.int64), 0, reverse=1).tolist() == [-15, 5]


@pytest.mark.parametrize("dtype", [np.float16] + ([BF16] if BF16 is not None else []), ids=str)
def test_cumprod_narrow_types_round_each_output_once(dtype):
    x = (1 + np.random.default_rng(23).standard_normal((5, 400)) * 0.2).astype(dtype)
    got = normops.ops.cum_prod(x, 1)
    wide = normops.ops.cum_prod(x.astype(np.float32), 1)
    with np.errstate(over="ignore", under="ignore"):
        assert_same_bits(got, wide.astype(dtype))
    assert got.dtype == dtype


@pytest.mark.parametrize("shape,axis", [((300, 333), 1), ((300, 333), 0), ((40, 50, 60), 1), ((5, 9), 1),
                                        ((70001,), 0)])
def test_cumprod_threads_and_isa_levels(shape, axis):
    rng = np.random.default_rng(24)
    for dtype in (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.uint32)):
        x = data(rng, shape, dtype)
        if dtype.kind == "f":
            x = np.where(np.abs(x) > 2, x / 2, x).astype(dtype)  # products that do not all overflow
        for exclusive, reverse in ((0, 0), (1, 1)):
            same_everywhere("CumProd", [x, np.int64(axis)], {"exclusive": exclusive, "reverse": reverse})


@pytest.mark.parametrize("op", ["CumSum", "CumProd"])
@pytest.mark.parametrize("shape,axis", [((300, 2500), 0), ((2, 150, 3000), 1), ((130, 4100), 0)])
def test_long_lines_over_a_short_outer_extent_split_by_columns(op, shape, axis):
    """These shapes have one or two column tiles of CUM_TILE lines,
    which the kernel cuts into narrower chunks for threads; every thread
    count 1..8 and ISA level gives the specification's bits."""
    rng = np.random.default_rng(25)
    for dtype in (np.dtype(np.float32), np.dtype(np.int64)):
        x = data(rng, shape, dtype)
        if op == "CumProd" and dtype.kind == "f":
            x = (1 + 0.01 * x).astype(dtype)  # rounding in every product, overflow nowhere
        for exclusive, reverse in ((0, 0), (1, 1)):
            attrs = {"exclusive": exclusive, "reverse": reverse}
            want = normops.reference.run(op, [x, np.int64(axis)], attrs)[0]
            for level in isa.available_levels():
                with isa.use(level):
                    for t in range(1, 9):
                        assert_same_bits(normops.run(op, [x, np.int64(axis)], attrs, n_threads=t)[0], want)


def test_cumprod_axis_input():
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    want = np.cumprod(x, axis=1)
    for axis in (np.int32(1), np.int64(-1), np.array([1], np.int64), 1):
        assert_same_bits(normops.ops.cum_prod(x, axis), want)
    for bad in (np.float32(1), np.array([0, 1], np.int64), np.array([[1]], np.int32), np.uint8(1)):
        with pytest.raises(InvalidInputError, match="CumProd.*'axis'"):
            normops.ops.cum_prod(x, bad)
    for bad in (2, -3):
        with pytest.raises(InvalidInputError, match="CumProd.*'axis'=.*out of range"):
            normops.ops.cum_prod(x, np.int64(bad))
    with pytest.raises(InvalidInputError, match="CumProd.*'axis'.*required"):
        normops.run("CumProd", [x])
    assert normops.ops.cum_prod(np.zeros((0, 3), np.float32), 0).shape == (0, 3)
    assert normops.ops.cum_prod(np.zeros((2, 0)), 1).shape == (2, 0)
    assert_same_bits(normops.reference.run("CumProd", [x, np.int64(0)], {"exclusive": 1})[0],
                     np.array([[1, 1, 1], [1, 2, 3]], np.float32))


def test_cumprod_errors_and_inputs_untouched():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(UnsupportedError, match="CumProd.*bool"):
        normops.ops.cum_prod(x > 0, 0)
    with pytest.raises(InvalidInputError, match="CumProd.*'x'.*int8"):
        normops.ops.cum_prod(x.astype(np.int8), 0)
    with pytest.raises(InvalidInputError, match="CumProd.*'x'.*complex"):
        normops.ops.cum_prod(x.astype(np.complex64), 0)
    with pytest.raises(InvalidInputError, match="CumProd.*exclusive"):
        normops.ops.cum_prod(x, 0, exclusive=3)
    with pytest.raises(InvalidInputError, match="CumProd.*reverse"):
        normops.ops.cum_prod(x, 0, reverse=-1)
    with pytest.raises(InvalidInputError, match="CumProd.*rank"):
        normops.ops.cum_prod(np.float32(2), 0)
    with pytest.raises(UnsupportedError, match="CumProd.*opset 25"):
        normops.ops.cum_prod(x, 0, opset=25)
    y = data(np.random.default_rng(26), (9, 40), np.dtype(np.float64))[:, ::3]  # strided
    keep = y.copy()
    assert_same_bits(normops.ops.cum_prod(y, 1), normops.reference.cum_prod(keep, 1, 0, 0))
    assert_same_bits(y, keep)
    swapped = keep.astype(keep.dtype.newbyteorder())
    assert_same_bits(normops.ops.cum_prod(swapped, 0), normops.ops.cum_prod(keep, 0))


def test_cumprod_modes_agree_and_reference_rejects_fast():
    x = data(np.random.default_rng(27), (30, 40), np.dtype(np.float32))
    assert_same_bits(normops.ops.cum_prod(x, 1, mode="fast"), normops.ops.cum_prod(x, 1))
    with pytest.raises(UnsupportedError):
        normops.reference.run("CumProd", [x, np.int64(0)], mode="fast")


def test_cumsum_bits_unchanged_by_the_generalised_kernel():
    """CumSum still adds (not multiplies) and starts an exclusive line with 0."""
    x = np.array([[2.0, 3.0, 4.0]], np.float32)
    assert_same_bits(normops.ops.cum_sum(x, 1), np.array([[2, 5, 9]], np.float32))
    assert_same_bits(normops.ops.cum_sum(x, 1, exclusive=1), np.array([[0, 2, 5]], np.float32))
    assert_same_bits(normops.ops.cum_prod(x, 1), np.array([[2, 6, 24]], np.float32))
    assert_same_bits(normops.ops.cum_prod(x.T, 0, exclusive=1), np.array([[1], [2], [6]], np.float32))


# ------------------------------------------------------------ NumPy style

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.int32, np.uint8, np.uint32, np.int64,
                                   np.uint64, np.bool_])
def test_numpy_style_cumprod_equals_numpy(dtype):
    rng = np.random.default_rng(28)
    if dtype is np.bool_:
        x = rng.random((3, 4, 50)) < .7
    elif np.dtype(dtype).kind == "f":
        x = (1 + rng.standard_normal((3, 4, 50)) * 0.3).astype(dtype)
    else:
        x = data(rng, (3, 4, 50), np.dtype(dtype), specials=False)
    for axis in (None, 0, 2, -2):
        want = np.cumprod(x, axis=axis)
        got = normops.cumprod(x, axis=axis)
        assert got.shape == want.shape and got.dtype == want.dtype
        assert_same_bits(got, want)
    for dt in (np.float64, np.int16, np.uint8):
        with np.errstate(over="ignore", invalid="ignore"):
            assert_same_bits(normops.cumprod(x, 2, dtype=dt), np.cumprod(x, 2, dtype=dt))
    out = np.empty(x.shape, np.float64)
    assert normops.cumprod(x, 1, out=out) is out
    assert_same_bits(out, np.cumprod(x, 1, out=np.empty(x.shape, np.float64)))
    assert_same_bits(normops.cumprod(x[0, 0, 0]), np.cumprod(x[0, 0, 0]))
    assert_same_bits(normops.cumprod(x[0, 0, 0], axis=0), np.cumprod(x[0, 0, 0], axis=0))


def test_numpy_style_cumprod_errors_and_float16():
    with pytest.raises(UnsupportedError, match="cumprod.*complex"):
        normops.cumprod(np.ones(3, np.complex128))
    with pytest.raises(UnsupportedError, match="cumprod.*bool"):
        normops.cumprod(np.ones(3), dtype=bool)
    with pytest.raises(InvalidInputError, match="cumprod.*'out'"):
        normops.cumprod(np.ones(3), out=np.empty(4))
    with pytest.raises(InvalidInputError, match="cumprod.*axis"):
        normops.cumprod(np.ones((2, 3)), axis=2)
    h = np.full(300, 1.01, np.float16)
    got = normops.cumprod(h)
    assert got.dtype == np.float16
    assert_same_bits(got, np.cumprod(h.astype(np.float32)).astype(np.float16))  # one rounding per output


# ------------------------------------------------------------ conformance

def test_every_onnx_cumprod_node_case_is_served_and_passes():
    conformance = pytest.importorskip("normops_tools.conformance")
    pytest.importorskip("onnx")
    cases = [c for c in conformance.discover("^test_cumprod_") if "_expanded" not in c.name]
    assert len(cases) >= 7 and all(c.op_type == "CumProd" for c in cases)
    assert [c.name for c in cases if not c.served] == []
    for case in cases:
        for mode in conformance.MODES:
            outcome = conformance.run_case(case, mode)
            assert outcome.status == conformance.PASSED, (case.name, mode, outcome.message)
