"""ArgMax and ArgMin: bit for bit against the executable specification
and a literal sequential scan, every dtype, layout, thread count and ISA
level (including the long blocks); the NumPy-style argmax / argmin
against NumPy; errors; the ONNX node cases."""
import numpy as np
import pytest

import normops
import normops._isa as isa
from normops import InvalidInputError, UnsupportedError
from normops._spec import BLOCK_TERMS, LONG_TERMS

from axis_data import BF16, FLOATS, INTS, data, same_everywhere
from bits import assert_same_bits

ARG_OPS = ["ArgMax", "ArgMin"]


def scan(seq, is_min, last, nan_wins=False):
    """The rule, literally: a later element replaces the winner when strictly
    better (better or equal with last); NaN compares false."""
    seq = [float(v) if np.asarray(v).dtype.kind == "f" or seq.dtype.name == "bfloat16" else int(v) for v in seq]
    if nan_wins:
        for i, v in enumerate(seq):
            if v != v:
                return i
    best = 0
    for i in range(1, len(seq)):
        a, b = seq[i], seq[best]
        if (a < b if is_min else a > b) or (last and a == b):
            best = i
    return best


def arg_check(op, x, attrs, opset=13, **kw):
    got = normops.run(op, [x], attrs, opset=opset, **kw)[0]
    want = normops.reference.run(op, [x], attrs, opset=opset)[0]
    assert got.dtype == np.int64
    assert_same_bits(got, want)
    return got


# ------------------------------------------------------------ ArgMax/ArgMin

@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=str)
@pytest.mark.parametrize("op", ARG_OPS)
def test_arg_random_shapes_match_the_specification(op, dtype):
    rng = np.random.default_rng([ARG_OPS.index(op), (FLOATS + INTS).index(dtype)])
    for _ in range(12):
        shape = tuple(int(d) for d in rng.integers(1, 7, rng.integers(1, 5)))
        x = data(rng, shape, dtype)
        axis = int(rng.integers(-x.ndim, x.ndim))
        attrs = {"axis": axis, "keepdims": int(rng.integers(0, 2)),
                 "select_last_index": int(rng.integers(0, 2))}
        got = arg_check(op, x, attrs)
        # against the literal scan
        moved = np.moveaxis(x, axis, -1).reshape(-1, x.shape[axis])
        want = [scan(row, op == "ArgMin", attrs["select_last_index"]) for row in moved]
        assert got.reshape(-1).tolist() == want


@pytest.mark.parametrize("n", [1, 2, 15, 16, 17, 63, 64, 65, 2047, 2048, 2049, 4100, 8191, 8193, 20000])
def test_arg_rows_around_vector_and_sub_block_edges(n):
    rng = np.random.default_rng(n)
    for dtype in (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int8), np.dtype(np.uint16)):
        x = data(rng, (5, n), dtype, specials=False)
        if dtype.kind == "f":
            x[1, rng.integers(0, n, 3)] = np.nan
            x[2, 0] = np.nan                       # a leading NaN wins
            x[3] = -np.inf                         # only -inf ...
            x[3, rng.integers(0, n, n // 2 + 1)] = np.nan   # ... and NaN: the tie with NaN blocks
        for op in ARG_OPS:
            for last in (0, 1):
                attrs = {"axis": 1, "keepdims": 0, "select_last_index": last}
                got = arg_check(op, x, attrs)
                assert got.tolist() == [scan(r, op == "ArgMin", last) for r in x]
                for level in isa.available_levels():  # other vector widths, other tails
                    with isa.use(level):
                        assert_same_bits(normops.run(op, [x], attrs)[0], got)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16], ids=str)
def test_narrow_integers_across_super_blocks(dtype):
    """Narrow integers count groups in their own lane width: long rows are
    cut into super-blocks (at most 127 groups for 8-bit lanes), combined in
    order. Winners and ties placed in different super-blocks, every ISA."""
    rng = np.random.default_rng(13)
    info = np.iinfo(dtype)
    n = 150_000
    rows = np.stack([rng.integers(info.min + 1, info.max, n, dtype=dtype, endpoint=False) for _ in range(6)])
    rows[0, [40_000, 120_000]] = info.max            # ties far apart
    rows[1, [5, 149_999]] = info.max                 # first and last element
    rows[2, 70_000] = info.max
    rows[3] = info.min                               # all equal: first / last index
    rows[4, 33_000:] = info.max                      # long run of ties
    rows[5, [100, 140_000]] = info.min               # ArgMin ties
    for level in isa.available_levels():
        with isa.use(level):
            for op in ARG_OPS:
                for last in (0, 1):
                    got = normops.run(op, [rows], {"axis": 1, "keepdims": 0, "select_last_index": last})[0]
                    m = rows.min(1) if op == "ArgMin" else rows.max(1)
                    hit = rows == m[:, None]
                    want = (n - 1 - np.argmax(hit[:, ::-1], 1)) if last else np.argmax(hit, 1)
                    assert got.tolist() == want.tolist(), (level, op, last)


def test_arg_nan_and_special_rules():
    nan, inf = np.nan, np.inf
    x = np.array([[nan, 1, 5, 5], [1, nan, 5, 5], [nan, nan, nan, nan], [-0.0, 0.0, -0.0, -1],
                  [-inf, nan, -inf, nan], [inf, inf, nan, 1]], np.float32)
    amax = normops.ops.arg_max(x, axis=1, keepdims=0)
    amax_last = normops.ops.arg_max(x, axis=1, keepdims=0, select_last_index=1)
    amin = normops.ops.arg_min(x, axis=1, keepdims=0)
    assert amax.tolist() == [0, 2, 0, 0, 0, 0]
    assert amax_last.tolist() == [0, 3, 0, 2, 2, 1]
    assert amin.tolist() == [0, 0, 0, 3, 0, 3]
    # NumPy's rule in the NumPy-style functions: the first NaN wins
    assert normops.argmax(x, axis=1).tolist() == np.argmax(x, axis=1).tolist() == [0, 1, 0, 0, 1, 2]
    assert normops.argmin(x, axis=1).tolist() == np.argmin(x, axis=1).tolist()


def test_arg_shapes_defaults_and_empty_axis():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert normops.ops.arg_max(x).shape == (1, 3, 4)             # axis 0, keepdims 1
    assert normops.run("ArgMax", [x])[0].shape == (1, 3, 4)
    assert normops.ops.arg_min(x, axis=-1, keepdims=0).shape == (2, 3)
    assert (normops.ops.arg_max(x, axis=2) == 3).all()
    e = np.zeros((3, 0, 2), np.float32)
    for keepdims, shape in ((1, (3, 1, 2)), (0, (3, 2))):
        y = normops.ops.arg_max(e, axis=1, keepdims=keepdims)
        assert y.shape == shape and y.dtype == np.int64 and (y == 0).all()
        assert_same_bits(y, normops.reference.run("ArgMax", [e], {"axis": 1, "keepdims": keepdims})[0])
    assert normops.ops.arg_min(e, axis=0).shape == (1, 0, 2)


def test_arg_opsets_and_select_last_index():
    x = np.array([[1, 3, 3, 0]], np.int32)
    for opset in (1, 11):
        assert normops.ops.arg_max(x, axis=1, opset=opset).tolist() == [[1]]
        with pytest.raises(InvalidInputError, match="ArgMax.*select_last_index"):
            normops.ops.arg_max(x, axis=1, select_last_index=1, opset=opset)
    for opset in (12, 13, None):
        assert normops.ops.arg_max(x, axis=1, select_last_index=1, opset=opset).tolist() == [[2]]
    with pytest.raises(UnsupportedError):
        normops.ops.arg_max(x, opset=0)


def test_arg_layouts_and_inputs_untouched():
    rng = np.random.default_rng(3)
    x = data(rng, (6, 7, 8), np.dtype(np.float32))
    before = x.tobytes()
    for axis in range(3):
        want = normops.ops.arg_max(x, axis=axis)
        for variant in (x[:, ::-1][:, ::-1], np.asfortranarray(x), x.astype(">f4")):
            assert_same_bits(normops.ops.arg_max(variant, axis=axis), want)
    assert x.tobytes() == before


def _long_sequence(rng, dtype, n):
    x = data(rng, (n,), dtype, specials=False)
    if dtype.kind == "f":
        x[rng.integers(0, n, 50)] = np.nan
    top = np.iinfo(dtype).max if dtype.kind in "iu" else np.inf
    x[[70_000, 700_000, n - 3]] = top          # ties in different blocks
    return x


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.int16)], ids=str)
def test_long_sequences_threads_and_isa_levels(dtype):
    """At least 2^20 terms: blocks of 2^16 on several threads, combined; the
    index is the one sequential scan gives."""
    rng = np.random.default_rng(9)
    n = LONG_TERMS + 4321
    x = _long_sequence(rng, dtype, n)
    for op in ARG_OPS:
        for last in (0, 1):
            attrs = {"axis": 0, "select_last_index": last}
            want = normops.reference.run(op, [x], attrs)[0]
            if op == "ArgMax":
                assert want.tolist() == [n - 3 if last else 70_000]
            for level in isa.available_levels():
                with isa.use(level):
                    for t in (1, 2, 3, 8):
                        assert_same_bits(normops.run(op, [x], attrs, n_threads=t)[0], want)
    # two long rows, and NumPy's NaN rule across blocks
    x2 = np.stack([x, x[::-1]])
    assert_same_bits(normops.ops.arg_min(x2, axis=1, n_threads=3),
                     normops.reference.run("ArgMin", [x2], {"axis": 1})[0])
    if dtype.kind == "f":
        for t in (1, 2, 3):
            assert normops.argmax(x, n_threads=t) == np.argmax(x)
            assert normops.argmin(x2, axis=1, n_threads=t).tolist() == np.argmin(x2, axis=1).tolist()
        x[0] = np.nan
        assert normops.ops.arg_max(x, n_threads=2).tolist() == [0]


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int16)], ids=str)
def test_long_columns_in_blocks(dtype):
    """A long axis that is not the last (column layout): blocks of 2^16 rows
    per tile, combined keeping the earliest winner; the index is the one
    sequential scan gives, on every thread count."""
    rng = np.random.default_rng(11)
    n = LONG_TERMS + 777
    cols = [_long_sequence(rng, dtype, n) for _ in range(3)]
    if dtype.kind == "f":
        cols[1][0] = np.nan                       # a NaN first: index 0
        cols[2][:BLOCK_TERMS] = 0                          # block 0 without NaN or a winner,
        cols[2][BLOCK_TERMS] = np.nan                      # a NaN leading block 1, the first inf after it
        cols[2][BLOCK_TERMS + 9] = np.inf
        cols[2][5 * BLOCK_TERMS:6 * BLOCK_TERMS] = np.nan  # and a block of NaN only
    x = np.stack(cols, 1)
    for op in ARG_OPS:
        for last in (0, 1):
            attrs = {"axis": 0, "select_last_index": last}
            want = normops.reference.run(op, [x], attrs)[0]
            if op == "ArgMax" and last == 0 and dtype.kind == "f":
                assert want.ravel().tolist() == [70_000, 0, BLOCK_TERMS + 9]
            for level in isa.available_levels():
                with isa.use(level):
                    for t in (1, 2, 3, 8):
                        assert_same_bits(normops.run(op, [x], attrs, n_threads=t)[0], want)
    if dtype.kind == "f":
        for t in (1, 3):  # NumPy's rule: the first NaN wins, across blocks too
            assert normops.argmax(x, axis=0, n_threads=t).tolist() == np.argmax(x, axis=0).tolist()
            assert normops.argmin(x[:, ::-1], axis=0, n_threads=t).tolist() == \
                np.argmin(x[:, ::-1], axis=0).tolist()


@pytest.mark.parametrize("shape,axis", [((300, 333), 1), ((300, 333), 0), ((40, 50, 60), 1), ((3, 70000), 1)])
def test_arg_threads_and_isa_levels(shape, axis):
    rng = np.random.default_rng(4)
    for dtype in (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.uint8)):
        x = data(rng, shape, dtype)
        for op in ARG_OPS:
            same_everywhere(op, [x], {"axis": axis, "select_last_index": 1})


def _special_lines(x, axis):
    """Overwrite lines of a float array along ``axis`` with the cases the
    vector scans must get right: line k (counted over the other axes) gets
    pattern k % 9: NaN first, NaN in the middle, NaN last, all NaN, -inf and
    NaN only, +inf repeated, -0/+0 ties, one value repeated, untouched."""
    lines = np.moveaxis(x, axis, -1).reshape(-1, x.shape[axis]).copy()
    n = lines.shape[1]
    for k, line in enumerate(lines):
        kind = k % 9
        if kind == 0:
            line[0] = np.nan
        elif kind == 1:
            line[n // 2] = np.nan
        elif kind == 2:
            line[-1] = np.nan
        elif kind == 3:
            line[:] = np.nan
        elif kind == 4:
            line[:] = np.where(np.arange(n) % 3 == 1, np.nan, -np.inf)
        elif kind == 5:
            line[::2] = np.inf
        elif kind == 6:
            line[:] = np.where(np.arange(n) % 2 == 0, -0.0, 0.0)
        elif kind == 7:
            line[:] = 2.5
    moved = np.moveaxis(x, axis, -1)
    return np.ascontiguousarray(np.moveaxis(lines.reshape(moved.shape), -1, axis))


def _check_axis1(x, levels, threads, literal):
    """ArgMax and ArgMin over axis 1 of x, with and without
    select_last_index: the specification's bits on the given ISA levels and
    thread counts; with literal, the specification against the literal scan
    of every line; for floats, NumPy's rule against NumPy."""
    n = x.shape[1]
    for op in ARG_OPS:
        for last in (0, 1):
            attrs = {"axis": 1, "keepdims": 0, "select_last_index": last}
            want = normops.reference.run(op, [x], attrs)[0]
            if literal:
                lines = np.moveaxis(x, 1, -1).reshape(-1, n)
                assert want.ravel().tolist() == [scan(r, op == "ArgMin", last) for r in lines]
            for level in levels:
                with isa.use(level):
                    for t in threads:
                        assert_same_bits(normops.run(op, [x], attrs, n_threads=t)[0], want)
    if x.dtype.kind == "f":
        for ours, theirs in ((normops.argmax, np.argmax), (normops.argmin, np.argmin)):
            assert ours(x, axis=1).tolist() == theirs(x, axis=1).tolist(), x.shape


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint64, np.int16], ids=str)
def test_column_tiles_every_width(dtype):
    """The column layout's vector strips: widths around each vector size
    (wide strips, narrow strips with row phases, the overlapping last strip,
    tiles too narrow for a vector, several tiles), few and many rows, with
    the special lines of _special_lines; against the specification on every
    ISA level and thread count, against the literal scan, and NumPy's rule
    against NumPy."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng([21, dtype.itemsize, dtype.kind == "f"])
    for n in (1, 2, 3, 4, 5, 9, 38):
        for inner in (1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 129, 515, 1030):
            x = data(rng, (2, n, inner), dtype, specials=dtype.kind == "f")
            if dtype.kind == "f":
                x = _special_lines(x, 1)
            levels = isa.available_levels() if inner in (4, 8, 17, 65, 515) or n == 38 \
                else [isa.current_level()]
            _check_axis1(x, levels, (1, 3), literal=inner in (9, 65))


@pytest.mark.parametrize("count", [1, 3, 4, 5, 8, 11])
def test_rows_four_side_by_side(count):
    """Rows are scanned four at a time: the special lines land in every slot
    of a group of four and in the rows left over, for row lengths around
    the vector and group sizes; every ISA level and thread count."""
    rng = np.random.default_rng(count)
    for dtype in (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int8)):
        for n in (1, 3, 16, 17, 64, 100, 4097):
            x = data(rng, (count, n), dtype, specials=False)
            if dtype.kind == "f":
                x = _special_lines(x, 1)
            _check_axis1(x, isa.available_levels(), (1, 2), literal=True)


@pytest.mark.parametrize("dtype,inner", [(np.float32, 8), (np.float64, 5), (np.float32, 21)], ids=str)
def test_long_columns_narrow_strips(dtype, inner):
    """Long columns (blocks of 2^16 rows) in tiles narrower than one native
    vector, or a little wider: narrow strips with row phases; NaN and ties
    placed in different blocks and phases."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng([inner, dtype.itemsize])
    n = LONG_TERMS + 3
    x = data(rng, (n, inner), dtype, specials=False)
    x[rng.integers(0, n, 200), rng.integers(0, inner, 200)] = np.nan
    x[0, 0] = np.nan                                   # column 0: a NaN first wins
    x[[9, 70_001, 700_002, n - 1], 1] = np.inf         # column 1: ties in different blocks and phases
    x[:, 2] = np.nan                                   # column 2: NaN only
    x[BLOCK_TERMS, 3] = np.nan                         # column 3: a NaN leading block 1,
    x[BLOCK_TERMS + 6, 3] = np.inf                     # the winner just after it
    x[:, 4] = np.where(np.arange(n) % 2 == 0, -0.0, 0.0)   # column 4: zeros of both signs
    for op in ARG_OPS:
        for last in (0, 1):
            attrs = {"axis": 0, "keepdims": 0, "select_last_index": last}
            want = normops.reference.run(op, [x], attrs)[0]
            if op == "ArgMax":
                assert want[:5].tolist() == [0, n - 1 if last else 9, 0, BLOCK_TERMS + 6, n - 1 if last else 0]
            for level in isa.available_levels():
                with isa.use(level):
                    for t in (1, 2, 3):
                        assert_same_bits(normops.run(op, [x], attrs, n_threads=t)[0], want)
    for t in (1, 2):
        assert normops.argmax(x, axis=0, n_threads=t).tolist() == np.argmax(x, axis=0).tolist()
        assert normops.argmin(x, axis=0, n_threads=t).tolist() == np.argmin(x, axis=0).tolist()


# ------------------------------------------------------------ NumPy style

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.uint16, np.int64, np.bool_])
def test_numpy_style_argmax_argmin_equal_numpy(dtype):
    rng = np.random.default_rng(8)
    x = data(rng, (4, 5, 6), np.dtype(dtype)) if dtype is not np.bool_ else rng.random((4, 5, 6)) < 0.2
    for ours, theirs in ((normops.argmax, np.argmax), (normops.argmin, np.argmin)):
        for axis in (None, 0, 1, -1):
            for keepdims in (False, True, np._NoValue):  # NumPy's "not given" marker is its default
                got, want = ours(x, axis=axis, keepdims=keepdims), theirs(x, axis=axis, keepdims=keepdims)
                assert type(got) is type(want)
                assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype
                assert np.array_equal(got, want), (axis, keepdims)
        out = np.empty((4, 6), np.intp)
        assert ours(x, 1, out) is out and np.array_equal(out, theirs(x, 1))
    assert normops.argmax(np.float32(3)) == 0 and normops.argmax(np.float32(3), axis=0) == 0
    for ours, theirs in ((normops.argmax, np.argmax), (normops.argmin, np.argmin)):
        # a 0-d result is a NumPy scalar, through both routes (float32 takes the direct one)
        for v in (x[:, 0, 0], x[:, 0, 0].astype(np.float32), np.float32(3), [1, 5, 2]):
            for axis in (None, 0, -1):
                got, want = ours(v, axis=axis), theirs(v, axis=axis)
                assert type(got) is type(want) and got == want, (v, axis)
    assert normops.argmin(x, axis=1, keepdims=1).shape == np.argmin(x, axis=1, keepdims=1).shape


def test_numpy_style_arg_errors():
    x = np.zeros((2, 0), np.float32)
    with pytest.raises(InvalidInputError, match="argmax.*empty"):
        normops.argmax(x, axis=1)
    with pytest.raises(InvalidInputError, match="argmin.*empty"):
        normops.argmin(x)
    assert normops.argmax(np.zeros((0, 3)), axis=1).shape == (0,)
    with pytest.raises(UnsupportedError, match="argmax.*complex"):
        normops.argmax(np.ones(3, np.complex64))
    with pytest.raises(UnsupportedError, match="argmin.*object"):
        normops.argmin(np.array([1, None], dtype=object))
    with pytest.raises(InvalidInputError, match="argmax.*'out'"):
        normops.argmax(np.ones((2, 3)), axis=1, out=np.empty(2, np.int32))
    with pytest.raises(InvalidInputError, match="argmax.*axis"):
        normops.argmax(np.ones((2, 3)), axis=2)


# ----------------------------------------------------------------- errors

def test_onnx_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(UnsupportedError, match="ArgMax.*bool"):
        normops.ops.arg_max(x > 0)
    with pytest.raises(InvalidInputError, match="ArgMin.*'data'.*complex"):
        normops.ops.arg_min(x.astype(np.complex64))
    with pytest.raises(InvalidInputError, match="ArgMax.*axis"):
        normops.ops.arg_max(x, axis=2)
    with pytest.raises(InvalidInputError, match="ArgMax.*rank"):
        normops.ops.arg_max(np.float32(1))
    with pytest.raises(InvalidInputError, match="ArgMin.*keepdims"):
        normops.ops.arg_min(x, keepdims=2)
    if BF16 is not None:
        with pytest.raises(InvalidInputError, match="ArgMax.*bfloat16.*ArgMax-12 takes"):
            normops.ops.arg_max(x.astype(BF16), opset=12)
        assert normops.ops.arg_max(x.astype(BF16), opset=13).shape == (1, 3)


def test_modes_agree():
    x = data(np.random.default_rng(12), (30, 40), np.dtype(np.float32))
    assert_same_bits(normops.ops.arg_max(x, axis=1, mode="fast"), normops.ops.arg_max(x, axis=1, mode="exact"))


# ------------------------------------------------------------ conformance

@pytest.mark.parametrize("prefix,op_type", [("test_argmax_", "ArgMax"), ("test_argmin_", "ArgMin")])
def test_every_onnx_node_case_is_served_and_passes(prefix, op_type):
    conformance = pytest.importorskip("normops_tools.conformance")
    pytest.importorskip("onnx")
    cases = [c for c in conformance.discover(f"^{prefix}") if "_expanded" not in c.name]
    assert len(cases) >= 7 and all(c.op_type == op_type for c in cases)
    assert [c.name for c in cases if not c.served] == []
    for case in cases:
        for mode in conformance.MODES:
            outcome = conformance.run_case(case, mode)
            assert outcome.status == conformance.PASSED, (case.name, mode, outcome.message)
