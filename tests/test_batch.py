"""normops.map_batch / imap_batch: order, bits equal to serial calls,
laziness, errors, configuration in the workers, progress bar."""
import itertools
import sys
import threading
import time

import numpy as np
import pytest

import normops
from normops import InvalidInputError, UnsupportedError

from bits import same_bits


def arrays(n=12, seed=0):
    rng = np.random.default_rng(seed)
    # different shapes and dtypes, some above the serial threshold
    return [rng.standard_normal((int(rng.integers(1, 90)), 512), dtype=np.float32).astype(
        np.float64 if i % 3 == 0 else np.float32) for i in range(n)]


@pytest.mark.parametrize("workers", [1, 2, 4])
def test_results_are_the_serial_bits_in_order(workers):
    xs = arrays()
    cases = [
        (normops.layer_normalization, (np.ones(512),), {"epsilon": 1e-3}),
        (normops.softmax, (), {"axis": -1}),
        (normops.ops.log_softmax, (), {}),
        (normops.sigmoid, (), {}),
        (normops.rms_normalization, (np.linspace(0, 1, 512),), {}),
    ]
    for func, args, kwargs in cases:
        serial = [func(x.astype(np.float64) if func is normops.layer_normalization else x, *args, **kwargs)
                  for x in xs]
        xs_in = [x.astype(np.float64) for x in xs] if func is normops.layer_normalization else xs
        got = normops.map_batch(func, xs_in, *args, max_workers=workers, **kwargs)
        assert len(got) == len(serial)
        assert all(same_bits(a, b) for a, b in zip(got, serial)), func.__name__
        lazy = list(normops.imap_batch(func, iter(xs_in), *args, max_workers=workers, n_threads=2, **kwargs))
        assert all(same_bits(a, b) for a, b in zip(lazy, serial)), func.__name__


def test_workers_really_run_in_parallel_threads():
    seen = set()
    barrier = threading.Barrier(2, timeout=10)

    def func(x):
        seen.add(threading.get_ident())
        barrier.wait()  # deadlocks (times out) unless two calls run at once
        return normops.exp32(x)

    xs = [np.full(8, i, np.float32) for i in range(4)]
    out = normops.map_batch(func, xs, max_workers=2)
    assert len(seen) == 2 and threading.get_ident() not in seen
    assert all(same_bits(o, normops.exp32(x)) for o, x in zip(out, xs))


def test_imap_is_lazy_and_bounded():
    taken = []

    def source():
        for i in itertools.count():
            taken.append(i)
            yield np.full(4, i, np.float32)

    gen = normops.imap_batch(normops.sigmoid, source(), max_workers=2)
    assert taken == []  # nothing before the first result is asked for
    first = [next(gen) for _ in range(3)]
    assert len(taken) <= 3 + 2 * 2  # at most 2 * max_workers ahead
    assert same_bits(first[2], normops.sigmoid(np.full(4, 2, np.float32)))
    gen.close()


def test_worker_uses_callers_mode_and_given_n_threads():
    seen = []

    def probe(x):
        seen.append(normops.get_config())
        return x

    with normops.config(mode="fast", n_threads=3):
        normops.map_batch(probe, [1, 2], max_workers=2)
        normops.map_batch(probe, [1], max_workers=1, n_threads=None)
    assert [c["mode"] for c in seen] == ["fast"] * 3
    assert sorted(c["n_threads"] for c in seen) == [1, 1, 3]
    x = np.random.default_rng(1).standard_normal((8, 64), dtype=np.float32)
    with normops.config(mode="fast"):
        fast = normops.map_batch(normops.softmax, [x], axis=-1)[0]
    assert same_bits(fast, normops.softmax(x, axis=-1, mode="fast"))
    # a lazy generator keeps the flavour and thread count of its creation,
    # even when it is consumed after the config block has ended
    seen.clear()
    with normops.config(mode="fast", n_threads=3):
        lazy = normops.imap_batch(probe, [1, 2], max_workers=2, n_threads=None)
        lazy_softmax = normops.imap_batch(normops.softmax, [x, x], axis=-1, max_workers=2)
    assert normops.get_config()["mode"] == "exact"
    list(lazy)
    assert [(c["mode"], c["n_threads"]) for c in seen] == [("fast", 3)] * 2
    for y in lazy_softmax:
        assert same_bits(y, fast)


def test_error_names_the_item_and_keeps_its_type():
    xs = [np.ones((2, 4), np.float32), np.ones((2, 4), np.float32), np.ones((2, 3), np.float32)]
    with pytest.raises(InvalidInputError) as info:
        normops.map_batch(normops.layer_normalization, xs, np.ones(4, np.float32), max_workers=2)
    assert info.value.batch_index == 2
    assert "Scale" in str(info.value)
    if sys.version_info >= (3, 11):
        assert any("item 2" in note for note in info.value.__notes__)


def test_bad_arguments():
    with pytest.raises(InvalidInputError, match="'func'"):
        normops.map_batch(3, [])
    with pytest.raises(InvalidInputError, match="'arrays'"):
        normops.map_batch(normops.sigmoid, 5)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(InvalidInputError, match="max_workers"):
            normops.map_batch(normops.sigmoid, [], max_workers=bad)
    with pytest.raises(InvalidInputError, match="n_threads"):
        normops.imap_batch(normops.sigmoid, [], n_threads=0)
    with pytest.raises(InvalidInputError, match="progress"):
        normops.map_batch(normops.sigmoid, [np.ones(2)], progress="yes")
    assert normops.map_batch(normops.sigmoid, []) == []


def test_progress_bar(monkeypatch):
    tqdm_auto = pytest.importorskip("tqdm.auto")
    updates = []

    class FakeBar:
        def __init__(self, **kw):
            updates.append(("init", kw["total"], kw.get("leave")))

        def update(self, n):
            updates.append(("update", n))

        def close(self):
            updates.append(("close",))

    monkeypatch.setattr(tqdm_auto, "tqdm", FakeBar)
    normops.map_batch(normops.sigmoid, [np.ones(3)] * 3, progress={"leave": False})
    assert updates == [("init", 3, False)] + [("update", 1)] * 3 + [("close",)]


def test_progress_without_tqdm(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    with pytest.raises(UnsupportedError, match="tqdm"):
        normops.map_batch(normops.sigmoid, [np.ones(3)], progress=True)
    with pytest.raises(UnsupportedError, match="tqdm"):
        normops.imap_batch(normops.sigmoid, [np.ones(3)], progress=True)  # at creation, not at next()


def test_benchmark_batch_measurement_small():
    from normops_tools.benchmark import batch as bench_batch
    from normops_tools.benchmark.cli import build_parser

    got = bench_batch.measure_batch(workers=(2,), arrays=3, rows=4, cols=64, repeats=1)
    assert got["workers"] == [1, 2]
    assert set(got["cases"]) == {"LayerNormalization", "Softmax"}
    for r in got["cases"].values():
        assert r["identical"] is True and r["speedup"][1] == 1.0
        assert all(v > 0 for v in r["el_per_ns"].values())
    lines = bench_batch.batch_lines({"batch": got})
    assert lines[0].startswith("map_batch LayerNormalization: 1 worker(s)") and "2 worker(s)" in lines[0]
    assert bench_batch.batch_lines({"batch": None}) == []
    assert build_parser().parse_args(["--batch"]).batch is True


def test_benchmark_pool_measurement_small():
    from normops import _isa
    from normops_tools.benchmark import batch as bench_batch

    loaded = _isa.kernels
    got = bench_batch.measure_pool(pools=(1, 3, 2), rounds=2, calls=6, rows=16, cols=64)
    assert _isa.kernels is loaded  # the loaded build is back in place
    assert got["pools"] == [2, 3]
    (r,) = got["builds"].values()
    assert r["serial_ms"] > 0
    assert set(r["default"]) == {2, 3} and set(r["one_thread"]) == {1, 2, 3}
    assert all(v > 0 for v in list(r["default"].values()) + list(r["one_thread"].values()))
    lines = bench_batch.batch_lines({"batch": {"method": "m", "cases": {}, "pool": got}})
    assert lines[0] == "map_batch method: m"
    assert "2 Python threads" in lines[1] and "3 Python threads" in lines[1]
    assert lines[2].startswith("Python threads method: 6 LayerNormalization 16x64")
    with pytest.raises(ValueError, match="at least as many calls"):
        bench_batch.measure_pool(pools=(4,), rounds=1, calls=3, rows=4, cols=8)
    # the page is written from results.json, where the thread counts are strings
    import json
    assert bench_batch.pool_lines(json.loads(json.dumps(got))) == bench_batch.pool_lines(got)


def _python_progress_inside_calls(call):
    """Main-thread iterations that ran strictly inside the middle 80% of a
    call made by another thread. The switch interval is made huge, so a
    thread holding the GIL keeps it until it releases it itself (as the
    kernels do with ``nogil``); the main thread yields with sleep(0)."""
    call()  # warm up (page faults, first-call costs)
    spans = []
    done = threading.Event()

    def worker():
        # at least 5 calls and 0.1 s of them: a short kernel (about 1 ms)
        # gives a main thread that a loaded machine runs late enough chances
        start = time.perf_counter()
        while len(spans) < 5 or time.perf_counter() - start < 0.1:
            t0 = time.perf_counter()
            call()
            spans.append((t0, time.perf_counter()))
        done.set()

    stamps = []
    old = sys.getswitchinterval()
    sys.setswitchinterval(100.0)
    try:
        thread = threading.Thread(target=worker)
        thread.start()
        while not done.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0)
        thread.join()
    finally:
        sys.setswitchinterval(old)
    stamps = np.array(stamps)
    return sum(int(((stamps > a + 0.1 * (b - a)) & (stamps < b - 0.1 * (b - a))).sum()) for a, b in spans)


@pytest.mark.parametrize("name", ["layer_normalization", "softmax", "sigmoid", "exp32", "gelu", "lp_normalization",
                                  "reduce_sum", "cum_sum", "arg_max", "control"])
def test_kernels_release_the_gil(name):
    """The main thread keeps running Python code while another thread is
    inside a kernel call on a large array (calls on fewer than 500 elements
    keep the GIL, as NumPy's loops do); a C call that keeps the GIL (the
    control) lets it run never."""
    x = np.random.default_rng(5).standard_normal((2048, 2048), dtype=np.float32)
    calls = {
        "layer_normalization": lambda: normops.layer_normalization(x, np.ones(2048, np.float32), n_threads=1),
        "softmax": lambda: normops.softmax(x, axis=-1, n_threads=1),
        "sigmoid": lambda: normops.sigmoid(x, n_threads=1),
        "exp32": lambda: normops.exp32(x, n_threads=1),
        "gelu": lambda: normops.ops.gelu(x, n_threads=1),
        "lp_normalization": lambda: normops.ops.lp_normalization(x, n_threads=1),
        "reduce_sum": lambda: normops.ops.reduce_sum(x, np.array([1]), n_threads=1),
        "cum_sum": lambda: normops.ops.cum_sum(x, 1, n_threads=1),
        "arg_max": lambda: normops.ops.arg_max(x, axis=1, n_threads=1),
        "control": lambda: sum(range(1_000_000)),
    }
    inside = _python_progress_inside_calls(calls[name])
    if name == "control":
        assert inside == 0
    else:
        assert inside > 0, f"{name} held the GIL"


def test_bench_batch_in_results_and_page(tmp_path):
    from normops_tools.benchmark import report, runner

    res = runner.bench(cases="^LayerNormalization_32x64$", dtypes="float32", threads=1,
                       runtimes="normops-exact", quick=True, overhead=False, batch=True, out=tmp_path)
    assert res.meta["batch"]["workers"] == [1, 2]
    loaded = report.load(tmp_path / "results.json")  # int keys become strings in JSON
    page = report.render_page(loaded)
    assert "## Batches from threads" in page and "map_batch Softmax: 1 worker(s)" in page
    assert "map_batch LayerNormalization" in (tmp_path / "results.md").read_text()
