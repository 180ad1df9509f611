"""normops.dask: the bits of the in-memory call for every chunking, with
the threaded scheduler and with a distributed LocalCluster."""
import subprocess
import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import normops  # noqa: E402
import normops.dask as nd  # noqa: E402
from normops import InvalidInputError, UnsupportedError  # noqa: E402
from normops._spec import BLOCK_TERMS, LONG_TERMS  # noqa: E402

from bits import assert_same_bits, same_bits  # noqa: E402


RNG = np.random.default_rng(11)
X = (RNG.standard_normal((37, 6, 45)) * 4).astype(np.float32)
X[3, 2, 7] = np.nan
X[5, 1, :] = 0
W = RNG.standard_normal((6, 45)).astype(np.float32)
B = RNG.standard_normal(45).astype(np.float32)
CHUNKINGS = [(37, 6, 45), (5, 4, 9), (1, 1, 45), (16, 6, 1)]


def calls():
    """(name, dask call, in-memory call) for every served operator."""
    w0 = W[0]
    return [
        ("ln axis -1", lambda m, x: m.layer_normalization(x, B[:45], B, epsilon=1e-3)),
        ("ln axis 1", lambda m, x: m.layer_normalization(x, W, B, axis=1)),
        ("ln axis 0", lambda m, x: m.layer_normalization(x, W, axis=0)),
        ("rms float64 scale", lambda m, x: m.rms_normalization(x, w0.astype(np.float64))),
        ("sln", lambda m, x: m.simplified_layer_normalization(x, W, axis=-2)),
        ("softmax None", lambda m, x: m.softmax(x)),
        ("softmax 1", lambda m, x: m.softmax(x, axis=1)),
        ("log_softmax (0, 2)", lambda m, x: m.log_softmax(x, axis=(2, 0))),
        ("softmax fast", lambda m, x: m.softmax(x, axis=-1, mode="fast")),
        ("ops.softmax opset 11", lambda m, x: m.ops.softmax(x, opset=11)),
        ("ops.softmax", lambda m, x: m.ops.softmax(x, axis=0)),
        ("ops.log_softmax", lambda m, x: m.ops.log_softmax(x)),
        ("hardmax opset 1", lambda m, x: m.hardmax(x, opset=1, axis=2)),
        ("hardmax axis 1", lambda m, x: m.hardmax(x, axis=1)),
        ("sigmoid", lambda m, x: m.sigmoid(x)),
        ("exp32", lambda m, x: m.exp32(x)),
        ("log32", lambda m, x: m.log32(x)),
    ]


@pytest.mark.parametrize("chunks", CHUNKINGS)
@pytest.mark.parametrize("name,call", calls(), ids=[c[0] for c in calls()])
def test_bits_of_the_in_memory_call_threaded(name, call, chunks):
    lazy = call(nd, da.from_array(X, chunks=chunks))
    assert isinstance(lazy, da.Array)
    want = call(normops, X)
    assert lazy.dtype == want.dtype and lazy.shape == want.shape
    got = lazy.compute(scheduler="threads")
    assert same_bits(got, want), name


def test_float64_and_integer_input():
    x = RNG.standard_normal((20, 33))
    got = nd.layer_normalization(da.from_array(x, chunks=(3, 5)), np.ones(33), n_threads=1).compute()
    assert same_bits(got, normops.layer_normalization(x, np.ones(33)))
    ints = np.arange(60).reshape(6, 10)
    assert same_bits(nd.softmax(da.from_array(ints, chunks=4), axis=1).compute(), normops.softmax(ints, axis=1))
    assert same_bits(nd.softmax(np.float32(2.0)).compute(), normops.softmax(np.float32(2.0)))
    assert same_bits(nd.sigmoid(x).compute(), normops.sigmoid(x))  # array-likes are wrapped


def test_full_output_statistics():
    lazy = nd.layer_normalization(da.from_array(X, chunks=(5, 2, 9)), W, B, axis=1, full_output=True)
    want = normops.layer_normalization(X, W, B, axis=1, full_output=True)
    assert len(lazy) == 3
    for got, w in zip(dask.compute(*lazy, scheduler="threads"), want):
        assert same_bits(got, w)
    assert lazy[1].chunks == ((5,) * 7 + (2,), (1,), (1,))
    sln = nd.simplified_layer_normalization(da.from_array(X, chunks=7), W[0], full_output=True)
    assert all(same_bits(g.compute(), w) for g, w in
               zip(sln, normops.simplified_layer_normalization(X, W[0], full_output=True)))
    assert len(nd.rms_normalization(X, W[0], full_output=True)) == 1
    assert len(nd.ops.softmax(X, full_output=True)) == 1


def test_full_output_is_one_kernel_call_per_block(monkeypatch):
    import normops.normalization as normalization

    real = normalization.layer_normalization
    calls = []

    def counting(*args, **kwargs):
        calls.append(args[0].shape)
        return real(*args, **kwargs)

    monkeypatch.setattr(normalization, "layer_normalization", counting)
    lazy = nd.layer_normalization(da.from_array(X, chunks=(10, 6, 45)), W, B, axis=1, full_output=True)
    calls.clear()  # the zero-size probe made when the graph was built
    got = dask.compute(*lazy, scheduler="threads")
    assert sorted(calls) == [(7, 6, 45)] + [(10, 6, 45)] * 3  # 4 blocks, once each
    assert all(same_bits(g, w) for g, w in zip(got, real(X, W, B, axis=1, full_output=True)))


def test_rechunks_only_the_normalised_axes():
    x = da.from_array(X, chunks=(5, 2, 9))
    assert nd.layer_normalization(x, W, B, axis=1).chunks == ((5,) * 7 + (2,), (6,), (45,))
    assert nd.ops.softmax(x, axis=1).chunks == ((5,) * 7 + (2,), (6,), (9,) * 5)
    assert nd.sigmoid(x).chunks == x.chunks


def test_mode_is_taken_when_the_graph_is_built():
    x = da.from_array(X, chunks=(5, 6, 45))
    with normops.config(mode="fast"):
        lazy = nd.softmax(x, axis=-1)
    assert same_bits(lazy.compute(scheduler="threads"), normops.softmax(X, axis=-1, mode="fast"))
    assert not same_bits(normops.softmax(X, axis=-1, mode="fast"), normops.softmax(X, axis=-1))


def test_errors_at_graph_construction():
    x = da.from_array(X, chunks=5)
    with pytest.raises(InvalidInputError, match="'Scale'"):
        nd.layer_normalization(x, W[:, :4], axis=1)
    with pytest.raises(InvalidInputError, match="axis"):
        nd.rms_normalization(x, W, axis=3)
    with pytest.raises(InvalidInputError, match="repeats"):
        nd.softmax(x, axis=(0, -3))
    with pytest.raises(InvalidInputError, match="float32"):
        nd.exp32(x.astype(np.float64))
    with pytest.raises(UnsupportedError, match="'out'"):
        nd.log32(x, out=np.empty_like(X))
    with pytest.raises(UnsupportedError, match="opset"):
        nd.hardmax(x, opset=0)
    with pytest.raises(InvalidInputError, match="rank"):
        nd.layer_normalization(da.zeros(()), W)
    with pytest.raises(InvalidInputError, match="mode"):
        nd.sigmoid(x, mode="slow")
    rows = x[x[:, 0, 0] > 0]  # unknown row counts: fine along kept axes, not along normalised ones
    want = X[X[:, 0, 0] > 0]
    assert same_bits(nd.layer_normalization(rows, W, axis=1).compute(), normops.layer_normalization(want, W, axis=1))
    with pytest.raises(UnsupportedError, match="compute_chunk_sizes"):
        nd.softmax(rows, axis=0)


def test_distributed_local_cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        x = da.from_array(X, chunks=(4, 3, 45))
        ln, sm, sg, stats, total = client.compute([nd.layer_normalization(x, W, B, axis=1, n_threads=1),
                                                   nd.log_softmax(x, axis=(0, 2), n_threads=1),
                                                   nd.sigmoid(x),
                                                   nd.layer_normalization(x, W[0], axis=-1, full_output=True)[1],
                                                   nd.sum(x, axis=(0, 2), n_threads=1)],
                                                  sync=True)
    assert same_bits(total, normops.sum(X, axis=(0, 2)))
    assert same_bits(ln, normops.layer_normalization(X, W, B, axis=1))
    assert same_bits(sm, normops.log_softmax(X, axis=(0, 2)))
    assert same_bits(sg, normops.sigmoid(X))
    assert same_bits(stats, normops.layer_normalization(X, W[0], full_output=True)[1])


def test_import_normops_imports_no_optional_dependency():
    code = ("import sys, normops, normops.batch; "
            "print([m for m in ('sklearn', 'dask', 'distributed', 'tqdm', 'pandas') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------- reductions

REDUCTIONS = ["sum", "mean", "max", "min", "prod", "logsumexp"]
REDUCE_CHUNKS = [(50, 1, 13), (301, 7, 65), (1, 3, 64), (100, 2, 1)]


@pytest.mark.parametrize("chunks", REDUCE_CHUNKS)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_give_the_in_memory_bits(name, chunks):
    x = np.random.default_rng(len(name)).standard_normal((301, 7, 65)).astype(np.float32)
    x[3, 2, 5] = np.nan if name in ("max", "min") else x[3, 2, 5]
    X = da.from_array(x, chunks=chunks)
    f, g = getattr(nd, name), getattr(normops, name)
    for axis in (None, 0, 1, 2, (0, 2), (1, 2), -1):
        for keepdims in (False, True):
            got = np.asarray(f(X, axis=axis, keepdims=keepdims).compute(scheduler="threads"))
            want = np.asarray(g(x, axis=axis, keepdims=keepdims))
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.tobytes() == want.tobytes(), (axis, keepdims)


def test_reductions_of_integers_and_the_layout_guard():
    xi = np.random.default_rng(2).integers(-1000, 1000, (300, 40)).astype(np.int32)
    Xi = da.from_array(xi, chunks=(7, 1))  # chunks of one along the kept axis
    for axis in (0, 1, None):
        for name in ("sum", "prod", "max", "mean"):
            got = np.asarray(getattr(nd, name)(Xi, axis=axis).compute())
            want = np.asarray(getattr(normops, name)(xi, axis=axis))
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (name, axis)
    # a float column layout whose kept axis is cut into ones would become a
    # row layout (Sum16) inside a block: the guard merges those chunks
    x = np.random.default_rng(3).standard_normal((5000, 3)).astype(np.float32)
    got = nd.sum(da.from_array(x, chunks=(1000, 1)), axis=0).compute()
    assert got.tobytes() == normops.sum(x, axis=0).tobytes()


def test_tree_combine_is_deterministic_and_close():
    x = np.random.default_rng(4).standard_normal((400, 30)).astype(np.float32)
    X = da.from_array(x, chunks=(25, 30))
    t1 = nd.sum(X, axis=0, split_every=3).compute(scheduler="threads")
    t2 = nd.sum(X, axis=0, split_every=3).compute(scheduler="sync")
    assert t1.tobytes() == t2.tobytes()
    np.testing.assert_allclose(t1, x.astype(np.float64).sum(0), rtol=0, atol=1e-4)
    # max does not depend on the order: the tree gives the in-memory bits
    assert nd.max(X, axis=0, split_every=2).compute().tobytes() == normops.max(x, axis=0).tobytes()
    lse = nd.logsumexp(X, axis=0, split_every=2).compute()
    np.testing.assert_allclose(lse, normops.logsumexp(x, axis=0), rtol=1e-6)
    with pytest.raises(UnsupportedError, match="mean"):
        nd.mean(X, axis=0, split_every=2)


def test_reduction_errors_at_graph_construction():
    X = da.zeros((4, 5), chunks=2, dtype=np.float32)
    with pytest.raises(InvalidInputError):
        nd.sum(X, axis=2)
    with pytest.raises(InvalidInputError):
        nd.sum(X, axis=(0, 0))
    with pytest.raises(UnsupportedError):
        nd.sum(da.zeros(3, chunks=1, dtype=np.complex64))


# ------------------------------------------- long reductions: the blocked route

def long_data(shape, dtype, near_one=False, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.9995, 1.0005, shape) if near_one else rng.standard_normal(shape) * 3
    return x.astype(dtype)


# (shape, axis, chunkings): aligned, misaligned, chunks of one, larger than the array
LONG_CASES = [
    ((LONG_TERMS + 12345,), 0, [(BLOCK_TERMS,), (3 * BLOCK_TERMS,), (100_003,), (1 << 22,)]),
    ((LONG_TERMS + 3 * BLOCK_TERMS + 7, 5), 0, [(2 * BLOCK_TERMS, 5), (100_003, 2), (99_999, 1), (1 << 22, 5)]),
    ((3, LONG_TERMS + 5), 1, [(1, 300_000), (2, BLOCK_TERMS), (3, 1 << 21)]),
    ((17, 3, BLOCK_TERMS), (0, 2), [(1, 3, BLOCK_TERMS), (5, 2, 1000), (20, 3, BLOCK_TERMS)]),  # unit 1: chunks of one
    ((4097, 3, 256), (0, 2), [(1000, 2, 128), (300, 3, 256)]),                                  # row layout, unit 256
    ((2053, 512, 3), (0, 1), [(100, 512, 3), (700, 100, 2)]),                                   # column layout, unit 128
    ((LONG_TERMS // 3 + 11, 3), None, [(50_000, 3), (50_000, 2), (1 << 20, 3)]),                # all axes
]


def long_params():
    for shape, axis, chunkings in LONG_CASES:
        for chunks in chunkings:
            yield pytest.param(shape, axis, chunks, id=f"{shape}-{axis}-{chunks}")


@pytest.mark.parametrize("shape,axis,chunks", list(long_params()))
def test_long_reductions_give_the_in_memory_bits(shape, axis, chunks):
    x = long_data(shape, np.float32)
    x.reshape(-1)[12345] = np.nan if shape[0] > 4000 else x.reshape(-1)[12345]  # NaN in max/min only below
    clean = np.where(np.isnan(x), np.float32(1.5), x)
    near = long_data(shape, np.float32, near_one=True)
    for name in REDUCTIONS:
        data = x if name in ("max", "min") else near if name == "prod" else clean
        X = da.from_array(data, chunks=chunks)
        lazy = getattr(nd, name)(X, axis=axis)
        assert_same_bits(lazy.compute(scheduler="threads"), getattr(normops, name)(data, axis=axis), (name, chunks))


def test_long_route_keeps_chunks_and_aligns_them():
    x = da.zeros((LONG_TERMS + 3 * BLOCK_TERMS + 7, 5), chunks=(100_003, 2), dtype=np.float32)
    plan = nd._long_plan(x.shape, frozenset({0}))
    assert (plan.split, plan.unit, plan.column) == (0, BLOCK_TERMS, True)
    aligned = nd._aligned(x, plan)
    assert aligned.chunks[1] == (2, 3)  # the kept axis: its chunk of one merged (the layout guard)
    assert max(aligned.chunks[0]) < x.shape[0]  # never the whole axis
    assert all(c % BLOCK_TERMS == 0 for c in aligned.chunks[0][:-1])
    # only the boundaries move: 100003 * k rounded to the nearest block boundary
    assert nd._on_block_boundaries((100_003,) * 3, BLOCK_TERMS) == (131072, 65536, 103401)
    assert nd._on_block_boundaries((1,) * 5, 1) == (1,) * 5
    assert nd._on_block_boundaries((10, 10), 64) == (20,)
    # all axes of a C-ordered array: the trailing axes are made whole, the first is cut
    y = da.zeros((LONG_TERMS // 3 + 11, 3), chunks=(50_000, 2), dtype=np.float32)
    plan = nd._long_plan(y.shape, frozenset({0, 1}))
    assert (plan.split, plan.per_unit, plan.unit, plan.column) == (0, 3, BLOCK_TERMS, False)
    assert nd._aligned(y, plan).chunks[1] == (3,)
    # short sequences, or one unit as long as the axis: the whole-axis route
    assert nd._long_plan((LONG_TERMS - 1, 4), frozenset({0})) is None
    assert nd._long_plan((1000, 1001), frozenset({0, 1})) is None  # 1001 terms per row: unit 2^16 rows


@pytest.mark.parametrize("dtype", ["float16", "float64", "int32", "uint8", "bool", "bfloat16"])
def test_long_reductions_of_every_dtype(dtype):
    if dtype == "bfloat16":
        ml_dtypes = pytest.importorskip("ml_dtypes")
        dtype = ml_dtypes.bfloat16
    dtype = np.dtype(dtype)
    shape = (LONG_TERMS + 777, 3)
    if dtype.kind in "iub":
        x = np.random.default_rng(5).integers(0, 2 if dtype.kind == "b" else 100, shape).astype(dtype)
    else:
        x = long_data(shape, dtype)
    for name in REDUCTIONS:
        for axis in (0, None):
            if dtype.kind == "b" and name in ("logsumexp", "mean"):
                continue
            data = long_data(shape, dtype, near_one=True) if name == "prod" and dtype.kind == "f" else x
            X = da.from_array(data, chunks=(150_001, 2))
            want = getattr(normops, name)(data, axis=axis)
            assert_same_bits(getattr(nd, name)(X, axis=axis).compute(scheduler="threads"), want, (name, axis))
    X = da.from_array(x, chunks=(150_001, 2))
    if dtype.kind == "f":
        assert_same_bits(nd.sum(X, axis=0, dtype=np.float64).compute(), normops.sum(x, axis=0, dtype=np.float64),
                         "dtype=")
        assert_same_bits(nd.mean(X, axis=0, keepdims=True).compute(), normops.mean(x, axis=0, keepdims=True),
                         "keepdims")


def test_long_reductions_of_special_values():
    x = long_data((LONG_TERMS + 99, 2), np.float32)
    x[5000, 0] = np.inf
    x[700_000, 0] = -np.inf  # inf - inf: NaN in the sum of column 0
    x[3, 1] = np.inf         # +inf maximum: logsumexp gives it as it is
    y = x.copy()
    y[900_000, 1] = np.nan
    for data in (x, y):
        X = da.from_array(data, chunks=(200_000, 2))
        for name in REDUCTIONS:
            assert_same_bits(getattr(nd, name)(X, axis=0).compute(), getattr(normops, name)(data, axis=0), name)
    z = np.zeros(LONG_TERMS + 5, np.float32)
    z[::2] = -0.0
    for name in ("max", "min", "sum", "prod"):  # signed zeros: the earliest winner, +0 sums
        assert_same_bits(getattr(nd, name)(da.from_array(z, chunks=70_000)).compute(), getattr(normops, name)(z), name)


# ------------------------------------------------------------ arg-reductions

@pytest.mark.parametrize("chunks", [(7, 5), (1, 1), (50, 40), (100, 3)])
def test_argmax_argmin_give_the_in_memory_index(chunks):
    rng = np.random.default_rng(8)
    x = rng.integers(-3, 4, (50, 40)).astype(np.float32)  # many ties
    x[10, 4] = x[20, 4] = np.nan
    x[7, :] = 3
    if chunks == (1, 1):  # a chunk per element: a small corner keeps the graph small
        x = x[:9, :5]
    X = da.from_array(x, chunks=chunks)
    for name in ("argmax", "argmin"):
        for axis in (None, 0, 1, -1):
            for keepdims in (False, True):
                want = getattr(normops, name)(x, axis=axis, keepdims=keepdims)
                got = getattr(nd, name)(X, axis=axis, keepdims=keepdims).compute(scheduler="threads")
                assert_same_bits(got, want, (name, axis, keepdims))
    for dtype in (np.float16, np.int8, np.bool_, np.float64):
        y = (x > 0).astype(dtype) if dtype is np.bool_ else np.nan_to_num(x).astype(dtype)
        for axis in (None, 1):
            assert_same_bits(nd.argmax(da.from_array(y, chunks=chunks), axis=axis).compute(),
                             normops.argmax(y, axis=axis), (dtype, axis))


def test_argmax_of_a_long_sequence_and_errors():
    x = long_data(LONG_TERMS + 3, np.float32)
    x[[5, 800_000]] = 50.0
    assert_same_bits(nd.argmax(da.from_array(x, chunks=100_000)).compute(), normops.argmax(x), "first of ties")
    assert_same_bits(nd.argmin(da.from_array(x, chunks=1 << 21)).compute(), normops.argmin(x), "one chunk")
    with pytest.raises(InvalidInputError, match="empty"):
        nd.argmax(da.zeros((0, 3), chunks=2), axis=0)
    with pytest.raises(InvalidInputError, match="axis"):
        nd.argmax(da.zeros((4, 3), chunks=2), axis=2)
    with pytest.raises(UnsupportedError, match="'out'"):
        nd.argmin(da.zeros(4, chunks=2), out=np.zeros((), np.intp))


# ---------------------------------------------------------------- cumulative

@pytest.mark.parametrize("chunks", [(9, 4), (1, 1), (64, 64), (100, 100), ((0, 30, 0, 34), (10, 2))])
def test_cumsum_cumprod_give_the_in_memory_bits(chunks):
    rng = np.random.default_rng(9)
    x = (rng.standard_normal((64, 12)) * 1e3).astype(np.float32)
    x[5, 3] = np.nan
    p = rng.uniform(0.5, 1.5, (64, 12)).astype(np.float32)
    if chunks == (1, 1):  # a chunk per element: a small corner keeps the graph small
        x, p = x[:9, :5], p[:9, :5]
    for name, data in (("cumsum", x), ("cumprod", p)):
        X = da.from_array(data, chunks=chunks)
        f = getattr(normops.cumulative, name)
        for axis in (0, 1, -1, None):
            assert_same_bits(getattr(nd, name)(X, axis=axis).compute(scheduler="threads"), f(data, axis=axis),
                             (name, axis))
    X = da.from_array(x, chunks=chunks)
    for dtype in (np.float16, np.float64, np.int8):
        assert_same_bits(nd.cumsum(X, axis=0, dtype=dtype).compute(), normops.cumsum(x, axis=0, dtype=dtype), dtype)
    for dtype in (np.float16, np.int32, np.bool_, np.uint16):
        y = (x > 0) if dtype is np.bool_ else np.nan_to_num(x).astype(dtype)
        assert_same_bits(nd.cumsum(da.from_array(y, chunks=chunks), axis=0).compute(), normops.cumsum(y, axis=0), dtype)


def test_cumsum_of_a_long_axis_is_a_chain_of_carries():
    x = long_data((LONG_TERMS + 11, 2), np.float32)
    X = da.from_array(x, chunks=(100_000, 1))
    assert_same_bits(nd.cumsum(X, axis=0).compute(), normops.cumsum(x, axis=0), "long")
    with pytest.raises(UnsupportedError, match="'out'"):
        nd.cumsum(X, out=np.zeros(3))
    with pytest.raises(InvalidInputError, match="axis"):
        nd.cumsum(X, axis=2)


def test_long_routes_on_a_local_cluster():
    distributed = pytest.importorskip("distributed")
    x = long_data((LONG_TERMS + 4321, 3), np.float32)
    X = da.from_array(x, chunks=(123_457, 2))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        s, s_all, lse, mx, am, cs = client.compute(
            [nd.sum(X, axis=0, n_threads=1), nd.sum(X, n_threads=1), nd.logsumexp(X, axis=0, n_threads=1),
             nd.max(X, axis=0), nd.argmax(X, axis=0), nd.cumsum(X, axis=0, n_threads=1)], sync=True)
    assert_same_bits(s, normops.sum(x, axis=0), "sum")
    assert_same_bits(s_all, normops.sum(x), "sum of all")
    assert_same_bits(lse, normops.logsumexp(x, axis=0), "logsumexp")
    assert_same_bits(mx, normops.max(x, axis=0), "max")
    assert_same_bits(am, normops.argmax(x, axis=0), "argmax")
    assert_same_bits(cs, normops.cumsum(x, axis=0), "cumsum")


# ------------------------------------------------ ONNX-named reductions, scans

ONNX_REDUCTIONS = normops.reduction.__all__


@pytest.mark.parametrize("chunks", [(50, 3, 13), (301, 1, 65), (7, 7, 64)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_onnx_reductions_give_the_in_memory_bits(chunks, dtype):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((301, 7, 65)) * (4 if dtype == np.int32 else 1)).astype(dtype)
    if dtype != np.int32:
        x[3, 2, 5], x[0, 0, 0], x[9, 1, 2] = np.nan, np.nan, -np.inf  # a NaN first in some sequences
    X = da.from_array(x, chunks=chunks)
    for name in ONNX_REDUCTIONS:
        f, g = getattr(nd.ops, name), getattr(normops.ops, name)
        for axes in (None, [0], [1], [2], [0, 2], [-1], np.array([1, 2])):
            for keepdims in (0, 1):
                try:
                    want = np.asarray(g(x, axes, keepdims=keepdims))
                except (InvalidInputError, UnsupportedError) as exc:  # not served for this dtype
                    with pytest.raises(type(exc)):
                        f(X, axes, keepdims=keepdims)
                    continue
                got = np.asarray(f(X, axes, keepdims=keepdims).compute(scheduler="threads"))
                assert_same_bits(got, want, (name, axes, keepdims))
        # the opset where axes were an attribute, and noop_with_empty_axes
        want = np.asarray(g(x, [1], keepdims=0, opset=11))
        assert_same_bits(f(X, [1], keepdims=0, opset=11).compute(), want, (name, "opset 11"))
        want = np.asarray(g(x, [], noop_with_empty_axes=1))
        assert_same_bits(f(X, [], noop_with_empty_axes=1).compute(), want, (name, "noop"))


@pytest.mark.parametrize("name", ["reduce_sum", "reduce_mean", "reduce_prod", "reduce_log_sum_exp"])
def test_onnx_long_reductions_take_the_block_route(name, results_of):
    taken = results_of(nd, "_long_route")
    data = long_data((LONG_TERMS + 3 * BLOCK_TERMS + 7, 5), np.float32, near_one=name == "reduce_prod")
    data[12345, 1] = np.nan
    for chunks, axes in (((100_003, 2), [0]), ((2 * BLOCK_TERMS, 5), np.array([0, 1]))):
        X = da.from_array(data, chunks=chunks)
        got = getattr(nd.ops, name)(X, axes, keepdims=0)
        assert_same_bits(got.compute(scheduler="threads"), getattr(normops.ops, name)(data, axes, keepdims=0), chunks)
    assert taken == [True, True]
    # ReduceMax's rule (NaN only when first) does not combine from blocks: whole axes
    got = nd.ops.reduce_max(da.from_array(data, chunks=(100_003, 5)), [0])
    assert_same_bits(got.compute(), normops.ops.reduce_max(data, [0]), "ReduceMax")
    assert taken == [True, True]


def test_long_logsumexp_fast_takes_the_fast_exponential():
    # a term whose fast exponential differs from exp32, repeated so that the
    # difference reaches the result (the sum near 2, its log below 1)
    d = -np.random.default_rng(0).uniform(14.3, 14.7, 4096).astype(np.float32)
    exact, fast = np.empty_like(d), np.empty_like(d)
    normops._isa.kernels.exp32_into(d, exact)
    normops._isa.kernels.exp32_fast_into(d, fast)
    for v in d[exact != fast]:
        x = np.full(1 << 21, v, np.float32)
        x[0] = 0
        if normops.logsumexp(x, mode="fast") != normops.logsumexp(x, mode="exact"):
            break
    else:
        pytest.fail("no term found whose flavours differ in the result")
    X = da.from_array(x, chunks=(100_003,))
    for mode in ("exact", "fast"):
        assert_same_bits(nd.logsumexp(X, mode=mode).compute(), normops.logsumexp(x, mode=mode), mode)
        assert_same_bits(nd.ops.reduce_log_sum_exp(X, [0], mode=mode).compute(),
                         normops.ops.reduce_log_sum_exp(x, [0], mode=mode), mode)


def test_onnx_arg_reductions_and_scans_give_the_in_memory_bits():
    x = np.random.default_rng(3).standard_normal((64, 9, 33)).astype(np.float32)
    x[0, 0, 0] = np.nan  # first along every axis
    x[5, 3, 7] = np.nan  # never first: never wins
    x[10, :, 4] = x[11, :, 4] = 9.0  # ties: first or last index
    for chunks in ((7, 9, 33), (64, 2, 5), (1, 1, 33)):
        X = da.from_array(x, chunks=chunks)
        for f, g in ((nd.ops.arg_max, normops.ops.arg_max), (nd.ops.arg_min, normops.ops.arg_min)):
            for axis in (0, 1, -1):
                for keepdims in (0, 1):
                    for last in (0, 1):
                        got = f(X, axis=axis, keepdims=keepdims, select_last_index=last)
                        assert_same_bits(got.compute(), g(x, axis=axis, keepdims=keepdims, select_last_index=last),
                                         (chunks, axis, keepdims, last))
        for f, g in ((nd.ops.cum_sum, normops.ops.cum_sum), (nd.ops.cum_prod, normops.ops.cum_prod)):
            for axis in (0, np.array(1), np.array([-1], np.int32)):
                for exclusive in (0, 1):
                    for reverse in (0, 1):
                        got = f(X, axis, exclusive=exclusive, reverse=reverse)
                        assert_same_bits(got.compute(), g(x, axis, exclusive=exclusive, reverse=reverse),
                                         (chunks, axis, exclusive, reverse))
    assert nd.ops.arg_max.__name__ == "arg_max" and nd.ops.reduce_l2.__qualname__ == "ops.reduce_l2"


def test_onnx_reduction_errors_at_graph_construction():
    X = da.zeros((20, 6), chunks=(5, 3), dtype=np.float32)
    cases = [
        (lambda: nd.ops.reduce_sum(X, [2]), "ReduceSum", "axes"),
        (lambda: nd.ops.reduce_l2(X, [0], keepdims=2), "ReduceL2", "keepdims"),
        (lambda: nd.ops.reduce_max(X, [0], opset=11, noop_with_empty_axes=1), "ReduceMax", "noop_with_empty_axes"),
        (lambda: nd.ops.reduce_mean(X, [0], mode="slow"), "ReduceMean", "mode"),
        (lambda: nd.ops.arg_max(X, axis=2), "ArgMax", "axis"),
        (lambda: nd.ops.arg_min(X, axis=0, select_last_index=2), "ArgMin", "select_last_index"),
        (lambda: nd.ops.cum_sum(X, 5), "CumSum", "axis"),
        (lambda: nd.ops.cum_prod(X, 0, exclusive=3), "CumProd", "exclusive"),
        (lambda: nd.ops.reduce_sum(da.zeros((4,), chunks=2, dtype=np.complex64), [0]), "ReduceSum", "dtype"),
    ]
    for build, op_type, word in cases:
        with pytest.raises((InvalidInputError, UnsupportedError)) as info:
            build()  # raised while the graph is built, before any compute()
        assert str(info.value).startswith(op_type) and word in str(info.value), str(info.value)
