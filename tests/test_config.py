"""Configuration: flavour and threads per call, per block (thread-local)
and process-wide; OpenMP / threadpoolctl / OMP_NUM_THREADS precedence."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import normops
from normops import InvalidInputError

DEFAULT_CACHE = 64 << 20  # bytes (docs/usage.md)


@pytest.fixture(autouse=True)
def _restore_config():
    saved = normops.get_config()
    yield
    normops.set_config(**saved)


def test_defaults():
    cfg = normops.get_config()
    assert cfg == {"mode": "exact", "n_threads": None, "output_cache_bytes": DEFAULT_CACHE, "thread_costs": {}}
    assert normops.get_num_threads() >= 1


def test_set_config_is_process_wide():
    normops.set_config(n_threads=1, mode="fast")
    seen = {}
    t = threading.Thread(target=lambda: seen.update(normops.get_config()))
    t.start()
    t.join()
    assert seen == {"mode": "fast", "n_threads": 1, "output_cache_bytes": DEFAULT_CACHE, "thread_costs": {}}
    normops.set_config(n_threads=None)
    assert normops.get_config()["n_threads"] is None
    assert normops.get_config()["mode"] == "fast"  # an omitted argument stays


def test_set_num_threads():
    normops.set_num_threads(1)
    assert normops.get_num_threads() == 1
    normops.set_num_threads(None)
    assert normops.get_num_threads() == normops._isa.routes.max_threads()


def test_context_is_local_to_the_thread_and_nests():
    other = {}
    inside = threading.Event()
    release = threading.Event()

    def worker():
        inside.wait()
        other.update(normops.get_config())
        release.set()

    t = threading.Thread(target=worker)
    t.start()
    with normops.config(n_threads=1, mode="fast") as cfg:
        assert cfg == {"mode": "fast", "n_threads": 1, "output_cache_bytes": DEFAULT_CACHE, "thread_costs": {}}
        with normops.config(n_threads=2):
            assert normops.get_config() == {"mode": "fast", "n_threads": 2, "output_cache_bytes": DEFAULT_CACHE, "thread_costs": {}}
        assert normops.get_config() == {"mode": "fast", "n_threads": 1, "output_cache_bytes": DEFAULT_CACHE, "thread_costs": {}}
        inside.set()
        release.wait()
    t.join()
    assert other == {"mode": "exact", "n_threads": None, "output_cache_bytes": DEFAULT_CACHE, "thread_costs": {}}
    assert normops.get_config() == {"mode": "exact", "n_threads": None, "output_cache_bytes": DEFAULT_CACHE, "thread_costs": {}}


def test_context_restores_after_an_exception():
    with pytest.raises(RuntimeError):
        with normops.config(mode="fast"):
            raise RuntimeError("boom")
    assert normops.get_config()["mode"] == "exact"


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True, 10**12])
def test_bad_thread_counts(bad):
    with pytest.raises(InvalidInputError, match="n_threads"):
        normops.set_config(n_threads=bad)
    with pytest.raises(InvalidInputError, match="n_threads"):
        with normops.config(n_threads=bad):
            pass
    x = np.ones((2, 3), np.float32)
    with pytest.raises(InvalidInputError, match="LayerNormalization.*n_threads"):
        normops.layer_normalization(x, x[0], n_threads=bad)


@pytest.mark.parametrize("bad", ["EXACT", "precise", None.__class__, 1])
def test_bad_modes(bad):
    with pytest.raises(InvalidInputError, match="mode"):
        normops.set_config(mode=bad)
    x = np.ones((2, 3), np.float32)
    with pytest.raises(InvalidInputError, match="LayerNormalization.*mode"):
        normops.run("LayerNormalization", [x, x[0]], mode=bad)


def test_threadpoolctl_sees_and_limits_normops_openmp():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    if not normops.show_config(print_out=False)["openmp"]:
        pytest.skip("serial build")
    info = threadpoolctl.threadpool_info()
    assert any(lib["user_api"] == "openmp" for lib in info), info
    with threadpoolctl.threadpool_limits(limits=1, user_api="openmp"):
        assert normops.get_num_threads() == 1
        # a per-call or configured count still wins over the limit
        with normops.config(n_threads=2):
            assert normops.get_num_threads() == 2


def _child_threads(env_extra):
    env = dict(os.environ, **env_extra)
    out = subprocess.run([sys.executable, "-c", "import normops; print(normops.get_num_threads())"],
                         capture_output=True, text=True, env=env, check=True)
    return int(out.stdout)


def test_omp_num_threads_is_respected():
    if not normops.show_config(print_out=False)["openmp"]:
        pytest.skip("serial build")
    assert _child_threads({"OMP_NUM_THREADS": "1"}) == 1
    assert _child_threads({"OMP_NUM_THREADS": "3"}) == 3


def test_failed_settings_change_nothing():
    before = normops.get_config()
    with pytest.raises(InvalidInputError):
        with normops.config(mode="fast", n_threads=0):
            pass
    assert normops.get_config() == before
    with pytest.raises(InvalidInputError):
        normops.set_config(mode="fast", n_threads=0)
    assert normops.get_config() == before


def test_per_call_thread_count_reaches_openmp():
    """Count the OS threads of a fresh process: a call limited to 1 thread
    starts no OpenMP worker; a per-call n_threads=2 inside the same limit
    starts one."""
    if not normops.show_config(print_out=False)["openmp"]:
        pytest.skip("serial build")
    code = (
        "import os, numpy as np, normops\n"
        "count = lambda: len(os.listdir('/proc/self/task'))\n"
        "x = np.ones((512, 1024), np.float32); w = np.ones(1024, np.float32)\n"
        "start = count()\n"
        "with normops.config(n_threads=1):\n"
        "    normops.layer_normalization(x, w)\n"
        "    one = count()\n"
        "    normops.layer_normalization(x, w, n_threads=2)\n"
        "    two = count()\n"
        "print(start, one, two)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, OMP_NUM_THREADS="2",
                                  # figures under which the call is worth a team on any machine
                                  NORMOPS_THREAD_COSTS="rows=1,wake_us=1"))
    if out.returncode != 0 or not os.path.isdir("/proc/self/task"):
        pytest.skip("cannot count threads here: " + out.stderr[-200:])
    start, one, two = map(int, out.stdout.split())
    assert one == start
    assert two > one


# every direct route resolves the flavour and thread count from the
# configuration when the call leaves them out (the kernels' direct_settings, route.pxi)
DIRECT_ROUTES = {
    "ops.softmax": lambda x, **k: normops.ops.softmax(x, **k),
    "ops.log_softmax": lambda x, **k: normops.ops.log_softmax(x, **k),
    "ops.sigmoid": lambda x, **k: normops.ops.sigmoid(x, **k),
    "softmax (SciPy style)": lambda x, **k: normops.softmax(x, axis=-1, **k),
    "run Softmax": lambda x, **k: normops.run("Softmax", [x], **k)[0],
    "run Sigmoid": lambda x, **k: normops.run("Sigmoid", [x], **k)[0],
    "run LogSoftmax": lambda x, **k: normops.run("LogSoftmax", [x], **k)[0],
}


@pytest.mark.parametrize("route", sorted(DIRECT_ROUTES))
def test_direct_routes_follow_the_configuration(route):
    call = DIRECT_ROUTES[route]
    # unscaled: at 0.5 x, AVX2's fast LogSoftmax (since 3 December 2026) gives the exact bits
    x = np.random.default_rng(5).standard_normal((64, 257)).astype(np.float32)
    exact, fast = call(x, mode="exact", n_threads=1), call(x, mode="fast", n_threads=1)
    assert not np.array_equal(exact.view(np.uint32), fast.view(np.uint32))  # the flavours tell apart
    for _ in range(2):  # the second call takes any route the first one kept
        assert np.array_equal(call(x).view(np.uint32), exact.view(np.uint32))
        with normops.config(mode="fast"):
            assert np.array_equal(call(x).view(np.uint32), fast.view(np.uint32))
            assert np.array_equal(call(x, n_threads=3).view(np.uint32), fast.view(np.uint32))
            assert np.array_equal(call(x, mode="exact").view(np.uint32), exact.view(np.uint32))
        with normops.config(n_threads=2):
            assert np.array_equal(call(x).view(np.uint32), exact.view(np.uint32))
        normops.set_config(mode="fast", n_threads=2)
        assert np.array_equal(call(x).view(np.uint32), fast.view(np.uint32))
        normops.set_config(mode="exact", n_threads=None)
    for bad in ({"mode": "slow"}, {"mode": 1}, {"n_threads": 0}, {"n_threads": 1.0}, {"n_threads": True}):
        with pytest.raises(InvalidInputError, match="mode|n_threads"):
            call(x, **bad)
