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


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


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
