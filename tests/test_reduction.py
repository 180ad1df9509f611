"""The Reduce* family, the NumPy-style reductions and logsumexp.

Kernels (``normops.run``) against the executable specification
(``normops.reference.run``) bit for bit through unsigned-integer views, across
shapes, axis sets, keepdims, dtypes, thread counts, ISA builds and the
long-reduction blocks; the rules of docs/specification.md §11 checked on hand-made
inputs; the NumPy-style functions against NumPy and SciPy.
"""
import numpy as np
import pytest

import normops
import normops._isa
import normops.reference
from normops import InvalidInputError, UnsupportedError
from normops.reference import _reduction as spec
from normops.reference import sum16
from normops._spec import BLOCK_TERMS, LONG_TERMS

from bits import assert_same_bits, bits

try:
    import ml_dtypes

    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # optional dependency
    BF16 = None

OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
       "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"]
FLOATS = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16)] + ([BF16] if BF16 else [])
RNG = np.random.default_rng(20261129)


def run(op, x, axes=None, opset=None, **kw):
    inputs = [x] if axes is None else [x, np.array(axes, dtype=np.int64)]
    attrs = {k: v for k, v in kw.items() if k in ("keepdims", "noop_with_empty_axes")}
    return normops.run(op, inputs, attrs, opset=opset, n_threads=kw.get("n_threads"))[0]


def ref(op, x, axes=None, opset=None, **kw):
    inputs = [x] if axes is None else [x, np.array(axes, dtype=np.int64)]
    attrs = {k: v for k, v in kw.items() if k in ("keepdims", "noop_with_empty_axes")}
    return normops.reference.run(op, inputs, attrs, opset=opset)[0]


def data(shape, dtype, positive=False):
    x = RNG.standard_normal(shape).astype(np.float32)
    if positive:
        x = np.abs(x) + np.float32(0.25)
    x.ravel()[::11] = -0.0
    return x.astype(dtype)


SHAPES_AXES = [
    ((37,), [0]), ((5, 300, 7), [1]), ((5, 300, 7), [0, 2]), ((5, 300, 7), [-1]), ((5, 300, 7), []),
    ((3, 1, 40, 1, 5), [0, 2]), ((3, 1, 40, 1, 5), [1, 3]), ((4, 6, 5, 3), [0, 2]), ((4, 6, 5, 3), [1, 3]),
    ((2, 513, 3), [0, 1]), ((64, 260), [0]), ((9, 17, 33), [2, 0, 1]), ((1, 1), [0]),
]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("op", OPS)
def test_kernels_match_the_reference(op, dtype):
    for shape, axes in SHAPES_AXES:
        x = data(shape, dtype, positive=op == "ReduceLogSum")
        for keepdims in (0, 1):
            got = run(op, x, axes, keepdims=keepdims)
            assert_same_bits(got, ref(op, x, axes, keepdims=keepdims), f"{op} {shape} {axes} {keepdims}")
            assert got.dtype == x.dtype


@pytest.mark.parametrize("op", OPS)
def test_thread_counts_and_isa_builds_give_the_same_bits(op):
    # row layout, column layout with an outer run, and the long-reduction
    # blocks of docs/specification.md §11.4 in both layouts
    cases = [((64, 4096), [1]), ((32, 300, 600), [1]), ((LONG_TERMS + 77,), [0]), ((LONG_TERMS + 3, 3), [0])]
    for shape, axes in cases:
        x = data(shape, np.float32, positive=op == "ReduceLogSum")
        want = ref(op, x, axes)
        for level in normops._isa.available_levels():
            with normops._isa.use(level):
                for n in (1, 2, 3, 8):
                    assert_same_bits(run(op, x, axes, n_threads=n), want, f"{op} {shape} {level} {n} threads")


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_column_spans_chunk_boundaries_and_few_rows(dtype):
    # The column kernel accumulates up to 16 KiB of neighbouring outputs of
    # one thread together (reduction.h, NORMOPS_SPAN_BYTES), so a wide row is
    # cut into several spans, a chunk run may start in the middle of a row,
    # and 1-3 rows are left after the groups of four. Each output must keep
    # its own sequential order through all of that.
    cases = [((7, 9000), [0]),       # 36 tiles, last of 40: spans 16+16+4 (float32), 2 chunks
             ((3, 40000), [0]),      # 157 tiles in 4 chunks of 42 tiles: runs start mid-span
             ((2, 5, 4100), [1]),    # outer run; a 4-wide tile alone in the last span
             ((2, 1, 2100), [1])]    # one row (the extent-1 axis is dropped): identity + x
    ints = np.dtype(dtype).kind == "i"
    for shape, axes in cases:
        if ints:
            x = RNG.integers(-1000, 1000, size=shape, dtype=dtype)
            x.ravel()[::7] = np.iinfo(dtype).max  # sums and products wrap
        else:
            x = data(shape, dtype)
            x.ravel()[5::997] = np.nan
            x[(0,) * (len(shape) - 1)][3] = np.nan  # a NaN first in one sequence
        for op in OPS:
            want = ref(op, x, axes)
            for level in normops._isa.available_levels():
                with normops._isa.use(level):
                    for n in (1, 2, 3, 5, 8):
                        assert_same_bits(run(op, x, axes, n_threads=n), want, f"{op} {shape} {level} {n}")


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_special_values_on_every_build_and_thread_count(dtype):
    # sparse NaN, +-inf and -0 (a NaN first in some sequences), both layouts
    x = data((96, 700), np.float32)
    x.ravel()[3::1997] = np.nan
    x.ravel()[11::2503] = np.inf
    x.ravel()[17::3001] = -np.inf
    x[5, 0] = x[0, 9] = np.nan
    x = x.astype(dtype)
    for op in OPS:
        for axes in ([1], [0]):
            want = ref(op, x, axes)
            for level in normops._isa.available_levels():
                with normops._isa.use(level):
                    for n in (1, 2, 3):
                        assert_same_bits(run(op, x, axes, n_threads=n), want, f"{op} {axes} {level} {n}")


def test_long_reduction_is_the_sum16_of_block_sums():
    # docs/specification.md §11.4, written out independently of the model's padding
    n = LONG_TERMS + 1000
    x = data((n,), np.float32)
    blocks = np.array([sum16(x[i:i + BLOCK_TERMS]) for i in range(0, n, BLOCK_TERMS)], np.float32)
    assert_same_bits(run("ReduceSum", x, [0], keepdims=0), sum16(blocks))
    # column layout: blocks sequential per output (NumPy's cumsum is sequential), then Sum16
    x2 = data((n, 2), np.float32)
    block_sums = np.stack([np.cumsum(x2[i:i + BLOCK_TERMS], axis=0, dtype=np.float32)[-1]
                           for i in range(0, n, BLOCK_TERMS)], 1)
    assert_same_bits(run("ReduceSum", x2, [0], keepdims=0), sum16(block_sums))


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceProd", "ReduceMin", "ReduceLogSumExp"])
def test_long_rows_with_a_short_block_after_full_ones(op):
    # 18 full blocks and a short one: the kernels reduce full blocks side by
    # side and the short one on its own
    x = data((2, LONG_TERMS + 2 * BLOCK_TERMS + 5), np.float32)
    if op == "ReduceProd":
        x = (np.float32(1) + x * np.float32(1e-3)).astype(np.float32)
    want = ref(op, x, [1])
    for n in (1, 3):
        assert_same_bits(run(op, x, [1], n_threads=n), want, f"{op} {n} threads")


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_products_side_by_side_keep_each_sequential_order(dtype):
    # the kernels multiply up to 16 rows / blocks side by side (a register
    # transposition per step); each must still be the plain sequential product.
    # Row counts around 16, row lengths with and without a tail, specials.
    def sequential(x):
        p = np.ones(x.shape[0], dtype)
        with np.errstate(all="ignore"):
            for j in range(x.shape[1]):
                p = p * x[:, j]
        return spec.canonical_nan(p) if np.isnan(p).any() else p
    for rows, n in [(1, 5), (3, 16), (15, 33), (16, 64), (17, 250), (40, 129), (33, 1000)]:
        x = (np.float32(1) + data((rows, n), np.float32) * np.float32(0.2)).astype(dtype)
        x[rows // 2, n // 3] = np.nan
        x[rows - 1, n - 1] = np.inf
        x[0, 0] = -0.0
        x[rows // 3, :] = np.float32(8)  # overflows to inf
        want = sequential(x)
        for level in normops._isa.available_levels():
            with normops._isa.use(level):
                for threads in (1, 2, 3, 8):
                    assert_same_bits(run("ReduceProd", x, [1], keepdims=0, n_threads=threads), want,
                                     f"{rows}x{n} {level} {threads}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_long_products_are_block_products_multiplied_in_order(dtype):
    # docs/specification.md §11.4 written out: 20 full blocks of 2^16 and a short one,
    # each a sequential product, then multiplied in block order. Zeros,
    # -0, inf and NaN land in some blocks.
    n = 20 * BLOCK_TERMS + 4097
    x = (np.float32(1) + data((n,), np.float32) * np.float32(1e-3)).astype(dtype)
    blocks = [x[i:i + BLOCK_TERMS] for i in range(0, n, BLOCK_TERMS)]
    with np.errstate(all="ignore"):
        def block_product(b):
            return np.cumprod(b, dtype=dtype)[-1]  # cumprod is sequential
        for case in ("plain", "zero", "inf", "nan"):
            y = x.copy()
            if case == "zero":
                y[3 * BLOCK_TERMS + 5] = -0.0
            elif case == "inf":
                y[7 * BLOCK_TERMS + 100] = np.inf
                y[n - 3] = -np.inf
            elif case == "nan":
                y[19 * BLOCK_TERMS + 9] = np.nan
            parts = [block_product(y[i:i + BLOCK_TERMS]) for i in range(0, n, BLOCK_TERMS)]
            want = np.cumprod(np.array(parts, dtype), dtype=dtype)[-1:]
            if np.isnan(want).any():
                want = spec.canonical_nan(want)
            want = want.reshape(())
            assert len(parts) == len(blocks) == 21
            for level in normops._isa.available_levels():
                with normops._isa.use(level):
                    for threads in (1, 2, 3, 8):
                        assert_same_bits(run("ReduceProd", y, [0], keepdims=0, n_threads=threads), want,
                                         f"{case} {level} {threads}")


def test_long_integer_products_wrap_around():
    # blocks in both layouts; wrap-around products have one value whatever the
    # order (odd factors, so the products never wrap to 0)
    x = RNG.integers(-5, 5, size=LONG_TERMS + 333, dtype=np.int64) * 2 + 1
    for dtype in ("int32", "uint32", "int64", "uint64"):
        y = x.astype(dtype)
        want = np.multiply.reduce(y, dtype=y.dtype)
        for threads in (1, 3):
            assert run("ReduceProd", y, [0], keepdims=0, n_threads=threads) == want
        y2 = np.stack([y, y[::-1]], 1)
        assert (run("ReduceProd", y2, [0], keepdims=0, n_threads=2) == np.multiply.reduce(y2, axis=0, dtype=y2.dtype)).all()


def test_column_layout_is_sequential_and_row_layout_is_sum16():
    big, one = np.float32(1e8), np.float32(1)
    col = np.array([[big, big], [one, one], [-big, -big]], np.float32)   # reduce axis 0: column layout
    assert_same_bits(run("ReduceSum", col, [0], keepdims=0), np.array([0, 0], np.float32))  # (1e8 + 1) - 1e8
    # row layout: three terms in three partials, folded: (1e8 + -1e8) + 1
    assert_same_bits(run("ReduceSum", col.T.copy(), [1], keepdims=0), np.array([1, 1], np.float32))


def test_products_are_sequential_in_both_layouts():
    x = np.array([3e38, 10, 0.0], np.float32)  # (3e38 * 10) overflows before the 0: inf * 0 = NaN
    assert np.isnan(run("ReduceProd", x, [0], keepdims=0))
    assert np.isnan(run("ReduceProd", np.stack([x, x], 1), [0], keepdims=0)).all()


def test_geometry_drops_ones_and_merges_runs():
    perm, O, R, C = spec.arrange((2, 1, 3, 4, 5), {0, 3})
    assert (O, R, C) == (3, 8, 5) and perm == [1, 2, 0, 3, 4]
    assert spec.arrange((6, 7), {1})[1:] == (6, 7, 1)          # row layout
    assert spec.arrange((6, 1, 7), {0, 1})[1:] == (1, 6, 7)    # column layout
    assert spec.arrange((1, 1), {0})[1:] == (1, 1, 1)


def test_production_layout_is_the_specification_s():
    # normops/reduction.py's own layout (remembered per call) against the
    # executable spec's arrange/output_shape, on hand-picked and random shapes
    from normops import reduction

    cases = [(shape, frozenset(a % len(shape) for a in axes)) for shape, axes in
             SHAPES_AXES + [((4, 5), [0]), ((4, 5), [1]), ((7,), [])]]
    for _ in range(300):
        shape = tuple(int(n) for n in RNG.choice([1, 1, 2, 3, 0], size=RNG.integers(0, 6)))
        cases.append((shape, frozenset(i for i in range(len(shape)) if RNG.random() < 0.5)))
    for shape, axes in cases:
        for keepdims in (False, True):
            for _ in range(2):  # computed, then remembered
                perm, O, R, C, out_shape = reduction.arrangement(shape, axes, keepdims)
                want = spec.arrange(shape, axes)
                assert list(perm or range(len(shape))) == list(want[0]) and (O, R, C) == want[1:], (shape, axes)
                assert out_shape == spec.output_shape(shape, axes, keepdims)
    x = data((6, 5), np.float32)
    for axis in (0, 1, -1, -2, None, (0, 1)):  # the NumPy-style fast route for one int axis
        assert_same_bits(normops.sum(x, axis=axis), normops.reference.run(
            "ReduceSum", [x] + ([] if axis is None else [np.array(axis, np.int64).reshape(-1)]),
            {"keepdims": 0})[0].astype(np.float32).reshape(np.sum(x, axis=axis).shape))
    with pytest.raises(InvalidInputError, match="sum.*axis 2.*out of range"):
        normops.sum(x, axis=2)
    with pytest.raises(InvalidInputError, match="sum.*axis.*integers"):
        normops.sum(x, axis=True)


# ------------------------------------------------------------ special values

@pytest.mark.parametrize("axis,transpose", [(1, False), (0, True)])
def test_max_min_scan_rule(axis, transpose):
    def reduce(op, row):
        row = np.array(row, np.float32)
        x = np.stack([row, row], 1) if transpose else row[None, :]
        return run(op, np.ascontiguousarray(x), [axis], keepdims=0)
    nan = np.nan
    assert np.isnan(reduce("ReduceMax", [nan, 1, 2])).all()            # NaN first wins
    assert (reduce("ReduceMax", [1, nan, 2]) == 2).all()              # NaN later is ignored
    assert (reduce("ReduceMin", [1, nan, -2]) == -2).all()
    zeros = [-1.0] * 37 + [-0.0] + [-3.0] * 20 + [0.0] + [-1.0] * 40
    assert (bits(reduce("ReduceMax", zeros)) == 0x80000000).all()     # the first zero wins the tie
    assert (bits(reduce("ReduceMax", [0.0, -0.0])) == 0).all()
    assert (bits(reduce("ReduceMin", [0.0, -0.0, 1.0])) == 0).all()
    assert (bits(reduce("ReduceMin", [-0.0, 0.0, 1.0])) == 0x80000000).all()


def test_max_min_rows_side_by_side_keep_the_scan_rule():
    # the row layout scans four rows at a time: zero ties, NaN and tails per row
    zeros = [-1.0] * 37 + [-0.0] + [-3.0] * 20 + [0.0] + [-1.0] * 41
    rows = [zeros, zeros[::-1], [0.0, -0.0] * 50, [-0.0, 0.0] * 50, [np.nan] + [2.0] * 99,
            [1.0] * 50 + [np.nan] + [3.0] * 49, [np.nan] * 100]
    x = np.array(rows, np.float32)
    want_max = [0x80000000, 0, 0, 0x80000000, 0x7FC00000, 0x40400000, 0x7FC00000]
    for dtype in (np.float32, np.float64):
        for threads in (1, 2):
            got = run("ReduceMax", x.astype(dtype), [1], keepdims=0, n_threads=threads).astype(np.float32)
            assert bits(got).tolist() == want_max
            got = run("ReduceMin", x.astype(dtype)[:4], [1], keepdims=0, n_threads=threads).astype(np.float32)
            assert bits(got).tolist() == bits(np.array([-3.0, -3.0, 0.0, -0.0], np.float32)).tolist()


def test_nan_results_are_canonical_and_log_sum_exp_rules():
    payload = np.array([0x7FC01234], np.uint32).view(np.float32)[0]
    x = np.array([[1, payload, 3], [1, 2, np.inf], [-np.inf, -np.inf, -np.inf], [1, 2, 3]], np.float32)
    y = run("ReduceLogSumExp", x, [1], keepdims=0)
    assert bits(y)[0] == 0x7FC00000
    assert y[1] == np.inf and y[2] == -np.inf
    assert abs(y[3] - np.log(np.exp(np.arange(1, 4.0)).sum())) < 1e-6
    assert bits(run("ReduceSum", x, [1], keepdims=0))[0] == 0x7FC00000
    assert bits(run("ReduceSum", x.astype(np.float64), [1], keepdims=0))[0] == 0x7FF8000000000000
    assert bits(run("ReduceSum", x.astype(np.float16), [1], keepdims=0))[0] == 0x7E00


def test_sum_of_negative_zeros_is_positive_zero():
    x = np.full((3, 40), -0.0, np.float32)
    assert (bits(run("ReduceSum", x, [1])) == 0).all() and (bits(run("ReduceSum", x, [0])) == 0).all()


@pytest.mark.parametrize("op,value", [
    ("ReduceSum", 0), ("ReduceMean", 0), ("ReduceProd", 1), ("ReduceMax", -np.inf), ("ReduceMin", np.inf),
    ("ReduceL1", 0), ("ReduceL2", 0), ("ReduceSumSquare", 0), ("ReduceLogSum", -np.inf),
    ("ReduceLogSumExp", -np.inf)])
def test_empty_reductions(op, value):
    x = np.zeros((2, 0, 3), np.float32)
    y = run(op, x, [1])
    assert y.shape == (2, 1, 3) and (y == value).all()
    assert run(op, x, [0]).shape == (1, 0, 3)


def test_noop_with_empty_axes_applies_the_term():
    x = np.array([[-2.0, 3.0], [0.5, -0.25]], np.float32)
    for op, f in [("ReduceSumSquare", lambda v: v * v), ("ReduceL1", np.abs), ("ReduceL2", np.abs),
                  ("ReduceSum", lambda v: v), ("ReduceMax", lambda v: v), ("ReduceProd", lambda v: v)]:
        assert_same_bits(run(op, x, [], noop_with_empty_axes=1), f(x), op)
    y = run("ReduceLogSum", np.abs(x), [], noop_with_empty_axes=1)
    assert np.allclose(y, np.log(np.abs(x)), rtol=1e-6)
    assert run("ReduceSum", x, [], noop_with_empty_axes=0).shape == (1, 1)
    assert run("ReduceSum", x, None, noop_with_empty_axes=1).shape == (2, 2)


# ------------------------------------------------------------------ opsets

@pytest.mark.parametrize("op", OPS)
def test_every_opset_reads_axes_where_it_is_defined(op):
    x = data((3, 4, 5), np.float32, positive=True)
    want = ref(op, x, [-1], keepdims=0)
    change = 13 if op == "ReduceSum" else 18
    for opset in (1, 11, 13, 18, 20, normops.MAX_OPSET):
        if opset < change:
            got = normops.run(op, [x], {"axes": [-1], "keepdims": 0}, opset=opset)[0]
            with pytest.raises(InvalidInputError, match=f"{op}.*axes"):
                normops.run(op, [x, np.array([1])], opset=opset)
        else:
            got = run(op, x, [-1], opset=opset, keepdims=0)
            with pytest.raises(InvalidInputError, match=f"{op}.*axes"):
                normops.run(op, [x], {"axes": [1]}, opset=opset)
        assert_same_bits(got, want, f"{op} opset {opset}")
    named = getattr(normops.ops, {"ReduceSumSquare": "reduce_sum_square", "ReduceLogSum": "reduce_log_sum",
                                  "ReduceLogSumExp": "reduce_log_sum_exp"}.get(op, "reduce_" + op[6:].lower()))
    assert_same_bits(named(x, [-1], keepdims=0), want)
    assert_same_bits(named(x, [-1], keepdims=0, opset=11), want)


# ------------------------------------------------------------------ integers

@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "uint32", "uint64"])
def test_integer_kernels_match_the_reference(dtype):
    ops = ["ReduceMax", "ReduceMin"] if np.dtype(dtype).itemsize == 1 else OPS
    info = np.iinfo(dtype)
    for shape, axes in SHAPES_AXES + [((LONG_TERMS + 77,), [0]), ((64, 4096), [0])]:
        x = RNG.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
        if np.prod(shape) < 10 ** 5:
            x.ravel()[::5] = RNG.integers(-3, 4, size=x.ravel()[::5].shape).astype(dtype)  # small values too
        for op in ops:
            want = ref(op, x, axes, keepdims=0)
            for level in normops._isa.available_levels()[-1:] if x.size < 10 ** 5 else normops._isa.available_levels():
                with normops._isa.use(level):
                    for n in ((1, 3) if x.size > 10 ** 5 else (2,)):
                        assert_same_bits(run(op, x, axes, keepdims=0, n_threads=n), want,
                                         f"{op} {shape} {axes} {level} {n}")


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "uint64"])
def test_integer_sums_and_products_wrap(dtype):
    info = np.iinfo(dtype)
    x = np.array([[info.max, 1, 2], [info.max, info.max, 3]], dtype)
    width = 1 << info.bits

    def wrap(v):
        v %= width
        return v - width if info.min < 0 and v > info.max else v
    rows = [[int(v) for v in r] for r in x]
    assert run("ReduceSum", x, [1], keepdims=0).tolist() == [wrap(sum(r)) for r in rows]
    assert run("ReduceSumSquare", x, [1], keepdims=0).tolist() == [wrap(sum(v * v for v in r)) for r in rows]
    prods = [wrap(r[0] * r[1] * r[2]) for r in rows]
    assert run("ReduceProd", x, [1], keepdims=0).tolist() == prods
    assert run("ReduceMax", x, [0], keepdims=0).tolist() == [max(c) for c in zip(*rows)]
    assert run("ReduceSum", x, [1]).dtype == np.dtype(dtype)


def test_integer_mean_truncates_and_l1_of_the_minimum_wraps():
    x = np.array([[-7, 0], [7, 0], [-8, 1]], np.int32)
    assert run("ReduceMean", x, [1], keepdims=0).tolist() == [-3, 3, -3]
    m = np.iinfo(np.int32).min
    assert run("ReduceL1", np.array([m], np.int32), [0], keepdims=0).tolist() == m
    assert run("ReduceL2", np.array([3, 4], np.int64), [0], keepdims=0).tolist() == 5
    assert run("ReduceMax", np.array([-3, 5, 2], np.int8), [0], keepdims=0).tolist() == 5
    assert run("ReduceMean", np.zeros((0, 2), np.int64), [0], keepdims=0).tolist() == [0, 0]


def test_integer_logarithms_truncate_like_onnx_runtime():
    # hand-checked against ONNX Runtime 1.31.1 (innermost axis)
    x = np.array([[1, 2, 3], [4, 5, 100], [0, 0, 0], [-5, -7, -6]], np.int32)
    # log(6) = 1.79, log(109) = 4.69, log(0) = -inf (the type's minimum), log(-18) = NaN (minimum)
    assert run("ReduceLogSum", x, [1], keepdims=0).tolist() == [1, 4, -2 ** 31, -2 ** 31]
    # m + trunc(log(sum(exp(x - m)))): 3 + trunc(0.41), 100 + 0, 0 + trunc(log 3), -5 + trunc(0.41)
    assert run("ReduceLogSumExp", x, [1], keepdims=0).tolist() == [3, 100, 1, -5]
    assert run("ReduceLogSumExp", np.zeros((2, 0), np.int64), [1], keepdims=0).tolist() == [-2 ** 63] * 2


# ------------------------------------------------------------------ errors

def test_bad_input_is_refused_by_name():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(InvalidInputError, match="ReduceSum.*axes.*repeats"):
        run("ReduceSum", x, [1, -1])
    with pytest.raises(InvalidInputError, match="ReduceMean.*axes.*out of range"):
        run("ReduceMean", x, [2])
    with pytest.raises(InvalidInputError, match="ReduceL1.*axes.*out of range"):
        normops.run("ReduceL1", [x], {"axes": [-3]}, opset=13)
    with pytest.raises(UnsupportedError, match="ReduceMax.*bool"):
        run("ReduceMax", x > 0, [0])
    with pytest.raises(InvalidInputError, match="ReduceSum.*int16"):
        run("ReduceSum", x.astype(np.int16), [0])
    with pytest.raises(InvalidInputError, match="ReduceMax.*int8"):
        normops.run("ReduceMax", [x.astype(np.int8)], opset=11)
    with pytest.raises(InvalidInputError, match="ReduceSum.*axes"):
        normops.run("ReduceSum", [x, np.array([0.5])])
    with pytest.raises(InvalidInputError, match="keepdims"):
        run("ReduceSum", x, [0], keepdims=2)
    with pytest.raises(InvalidInputError, match="ReduceSum.*axes"):
        normops.reduce_sum(x, [1.5])
    assert normops.reduce_sum(x, []).shape == (1, 1)


def test_inputs_are_not_modified_and_any_layout_is_accepted():
    base = data((6, 8, 10), np.float32)
    x = base[:, ::2, ::-1]
    keep = x.copy()
    swapped = x.astype(x.dtype.newbyteorder(">"))
    for op in ("ReduceSum", "ReduceMax", "ReduceLogSumExp"):
        want = ref(op, np.ascontiguousarray(x), [0, 2])
        assert_same_bits(run(op, x, [0, 2]), want, op)
        assert_same_bits(run(op, swapped, [0, 2]), want, op)
    assert_same_bits(x, keep)
    assert run("ReduceSum", np.float32(2.5), None).shape == ()


def test_every_reduce_node_case_is_served():
    conformance = pytest.importorskip("normops_tools.conformance")
    pytest.importorskip("onnx")
    cases = [c for c in conformance.discover(r"^test_reduce_") if "_expanded" not in c.name]
    assert len(cases) > 80
    assert [c.name for c in cases if not c.served] == []
    for case in cases:
        for mode in conformance.MODES:
            outcome = conformance.run_case(case, mode)
            if "bool" in case.name:
                assert outcome.status == conformance.NOT_SERVED
            else:
                assert outcome.status == conformance.PASSED, (case.name, outcome.message)


# ------------------------------------------------------------ NumPy style

NP_ARGS = [dict(), dict(axis=0), dict(axis=-1), dict(axis=(0, 2)), dict(axis=1, keepdims=True),
           dict(axis=None, keepdims=True)]


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod", "amax", "amin"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int64", "uint8", "int16", "bool"])
def test_numpy_style_matches_numpy(name, dtype):
    x = (RNG.standard_normal((3, 4, 5)) * (1 if "float" in dtype else 4)).astype(np.float32)
    x = (x > 0) if dtype == "bool" else x.astype(dtype)
    if name == "prod" and "float" in dtype:
        x = (np.abs(x) + 0.5).astype(dtype)
    for kw in NP_ARGS:
        with np.errstate(over="ignore"):  # float16 products may overflow to inf, on both sides
            want = getattr(np, name)(x, **kw)
        got = getattr(normops, name)(x, **kw)
        assert type(got) is type(want) and np.shape(got) == np.shape(want), (name, kw, type(got), type(want))
        assert np.asarray(got).dtype == np.asarray(want).dtype, (name, kw)
        rtol = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-13}.get(dtype, 0)
        scale = float(np.abs(x.astype(np.float64)).sum())  # cancellation: error relative to sum |x|
        np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=rtol,
                                   atol=rtol * scale if name in ("sum", "mean") else 0)


def test_numpy_style_zero_dimensional_axis():
    # NumPy lets a 0-d array take an int axis 0 or -1 (not a tuple); SciPy's
    # logsumexp too
    special = pytest.importorskip("scipy.special")
    for x in (np.float32(2.5), np.array(-1.0), np.array(7, np.int16)):
        for name in ("sum", "prod", "mean", "max", "min"):
            for axis in (0, -1, (), None):
                try:
                    want = getattr(np, name)(x, axis=axis)
                except ValueError:  # numpy.mean refuses axis 0 of a 0-d array
                    with pytest.raises(InvalidInputError, match=f"{name}.*axis.*'a'"):
                        getattr(normops, name)(x, axis=axis)
                    continue
                got = getattr(normops, name)(x, axis=axis)
                assert type(got) is type(want) and got == want, (name, x, axis)
            for axis in (1, -2, (0,), (-1,), (0, 0)):
                with pytest.raises(InvalidInputError, match=f"{name}.*axis.*'a'"):
                    getattr(normops, name)(x, axis=axis)
        if x.dtype.kind == "f":
            for axis in (0, -1):
                assert normops.logsumexp(x, axis=axis) == special.logsumexp(x, axis=axis)
            with pytest.raises(InvalidInputError, match="logsumexp.*axis"):
                normops.logsumexp(x, axis=1)


def test_numpy_style_arguments():
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    assert normops.sum(x, dtype=np.float64).dtype == np.float64
    assert normops.sum(np.arange(5, dtype=np.int32)).dtype == np.int64
    assert normops.prod(np.arange(1, 5, dtype=np.uint16)).dtype == np.uint64
    big = np.array([30000, 30000, 30000], np.int16)
    assert normops.sum(big, dtype=np.int16) == np.sum(big, dtype=np.int16)  # wraps like NumPy
    assert normops.prod(big.astype(np.uint8), dtype=np.uint8) == np.prod(big.astype(np.uint8), dtype=np.uint8)
    assert normops.mean(np.arange(4)) == 1.5
    assert np.isnan(normops.mean(np.zeros((0, 3)), axis=0)).all()  # NumPy's rule, not ReduceMean's
    out = np.empty(6, np.float32)
    assert normops.sum(x, axis=0, out=out) is out and np.allclose(out, x.sum(0), rtol=1e-6)
    assert np.isnan(normops.max(np.array([1.0, np.nan, 3.0])))  # NumPy's NaN rule
    assert normops.sum(x, axis=0, mode="exact", n_threads=2).shape == (6,)
    # where=, initial=, b= and return_sign= are served (tests/test_numpy_style.py); complex is not
    for call in (lambda: normops.sum(x.astype(np.complex64)), lambda: normops.max(x.astype(np.complex128)),
                 lambda: normops.logsumexp(x.astype(np.complex64)), lambda: normops.logsumexp(x, b=x + 1j),
                 lambda: normops.var(x.astype(np.complex64))):
        with pytest.raises(UnsupportedError, match="complex"):
            call()
    with pytest.raises(ValueError):
        normops.max(np.zeros((0, 3)), axis=0)
    with pytest.raises(ValueError):
        normops.sum(x, axis=(0, 0))
    with pytest.raises(ValueError):
        normops.sum(x, axis=2)


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "max", "min", "logsumexp"])
def test_keepdims_is_taken_as_numpy_and_scipy_take_it(name):
    # NumPy's reductions read keepdims with operator.index (an int or a
    # bool; 1.5, "x", None and numpy.True_ are refused); SciPy's logsumexp
    # takes any truth value. normops accepts and refuses the same values,
    # with InvalidInputError where the library raises TypeError.
    if name == "logsumexp":
        want_fn = pytest.importorskip("scipy.special").logsumexp
    else:
        want_fn = getattr(np, name)
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    for keepdims in (True, False, 0, 1, 2, np.int64(1), 1.5, "x", None, np.True_, np.ones(3), np._NoValue,
                     2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**70):
        try:
            want = np.shape(want_fn(x, axis=0, keepdims=keepdims))
        except (TypeError, ValueError, OverflowError):
            with pytest.raises(InvalidInputError, match=f"{name}: argument 'keepdims'"):
                getattr(normops, name)(x, axis=0, keepdims=keepdims)
        else:
            assert np.shape(getattr(normops, name)(x, axis=0, keepdims=keepdims)) == want, keepdims


def test_logsumexp_matches_scipy():
    special = pytest.importorskip("scipy.special")
    x = (RNG.standard_normal((5, 7, 3)) * 10).astype(np.float32)
    for kw in (dict(), dict(axis=1), dict(axis=(0, 2), keepdims=True), dict(axis=-1)):
        want = special.logsumexp(x, **kw)
        got = normops.logsumexp(x, **kw)
        assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert normops.logsumexp(np.arange(4)).dtype == np.float64
    # SciPy takes a 0-d input as 1-d: keepdims=True or axis=() keep that axis
    for axis in (None, 0, -1, ()):
        for keepdims in (False, True):
            want = special.logsumexp(np.float32(1.5), axis=axis, keepdims=keepdims)
            got = normops.logsumexp(np.float32(1.5), axis=axis, keepdims=keepdims)
            assert np.shape(got) == np.shape(want), (axis, keepdims)
            np.testing.assert_allclose(got, want, rtol=1e-6)
    assert normops.logsumexp(np.array([-np.inf, -np.inf])) == -np.inf


def test_star_import_does_not_shadow_builtins():
    namespace = {}
    exec("from normops import *", namespace)
    assert "sum" not in namespace and "max" not in namespace and "min" not in namespace
    assert {"mean", "amax", "amin", "prod", "logsumexp", "reduce_sum"} <= set(namespace)
    assert all(hasattr(normops, name) for name in normops.__all__)


# ------------------------------------------------------------ ONNX Runtime

def _ort_reduce(op, x, axes, attributes, opset):
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import helper, numpy_helper

    names = ["x"] + ([] if axes is None else ["axes"])
    inits = [] if axes is None else [numpy_helper.from_array(np.array(axes, np.int64), "axes")]
    tensor_type = helper.np_dtype_to_tensor_dtype(x.dtype)
    graph = helper.make_graph(
        [helper.make_node(op, names, ["y"], **attributes)], "g",
        [helper.make_tensor_value_info("x", tensor_type, x.shape)],
        [helper.make_tensor_value_info("y", tensor_type, None)], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("op", OPS)
def test_agrees_with_onnx_runtime(op, dtype):
    if op == "ReduceLogSumExp" and "int" in dtype:
        pytest.skip("ONNX Runtime's integer ReduceLogSumExp depends on its code path (probed: it "
                    "truncates different intermediates for innermost and other axes); normops "
                    "documents its own rule, tested in test_integer_logarithms_truncate_like_onnx_runtime")
    for shape, axes, noop, keepdims in [((3, 4, 5), [1], 0, 1), ((3, 4, 5), [0, 2], 0, 0),
                                        ((3, 4, 5), [], 1, 1), ((3, 4, 5), None, 0, 0),
                                        ((3, 4, 5), None, 1, 1), ((2, 0, 3), [1], 0, 1)]:
        x = RNG.standard_normal(shape) * 3
        if op == "ReduceLogSum" and "float" in dtype:
            x = np.abs(x) + 0.5
        x = x.astype(dtype)
        attributes = {"keepdims": keepdims, "noop_with_empty_axes": noop}
        want = _ort_reduce(op, x, axes, attributes, 18)
        got = normops.run(op, [x] + ([] if axes is None else [np.array(axes, np.int64)]), attributes, opset=18)[0]
        assert got.shape == want.shape and got.dtype == want.dtype, (shape, axes, noop)
        if "int" in dtype:
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
