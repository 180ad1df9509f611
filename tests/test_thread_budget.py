"""The process-wide thread budget (docs/specification.md §14.4): calls from several
Python threads together use at most the usable cores unless a call asks for
its count explicitly. Deterministic: the budget is held by hand, never
raced for."""
import concurrent.futures
import os
import subprocess
import sys

import numpy as np
import pytest

import normops
from normops import _config, _isa

routes = _isa.routes


@pytest.fixture(autouse=True)
def _budget_returns_to_zero():
    assert routes.threads_in_use() == 0
    yield
    assert routes.threads_in_use() == 0


@pytest.mark.parametrize("team, in_use, cores, granted", [
    (2, 0, 2, 2),    # alone: the whole team
    (8, 0, 2, 8),    # alone, even above the cores (OMP_NUM_THREADS=8 asked for it)
    (2, 1, 2, 1),    # one core taken: what is left
    (2, 2, 2, 1),    # nothing left: still one thread, the caller's
    (2, 5, 2, 1),    # oversubscribed by explicit requests: one
    (4, 1, 8, 4),    # enough left: the whole team
    (4, 6, 8, 2),
])
def test_grant_rule(team, in_use, cores, granted):
    assert routes.budget_grant(team, in_use, cores) == granted


def test_take_and_release_count_every_loop():
    cores = routes.usable_cores()
    first = routes.take_threads(cores, 0)  # budgeted, nothing else running
    assert first == cores
    assert routes.take_threads(2, 0) == 1  # budgeted, no core free
    assert routes.take_threads(3, 3) == 3  # explicit: granted as asked
    assert routes.take_threads(2, -2) == 1  # a configured count is budgeted
    assert routes.threads_in_use() == cores + 1 + 3 + 1
    for taken in (first, 1, 3, 1):
        routes.release_threads(taken)


def test_one_budget_for_every_isa_build():
    # threads the routes module takes are counted by every build loaded
    taken = routes.take_threads(2, 5)
    try:
        for level in _isa.available_levels():
            assert routes.threads_in_use(_isa.load(level)) == 2
    finally:
        routes.release_threads(taken)
    assert all(routes.threads_in_use(_isa.load(level)) == 0 for level in _isa.available_levels())


def test_configured_counts_reach_the_kernels_as_budgeted():
    assert _config.kernel_threads(None, "t") == 0  # OpenMP's count, budgeted
    assert _config.kernel_threads(3, "t") == 3  # per call: explicit
    with normops.config(n_threads=3):
        assert _config.kernel_threads(None, "t") == -3
        assert _config.kernel_threads(2, "t") == 2
        assert normops.get_num_threads() == 3


def test_concurrent_calls_leave_the_budget_balanced():
    """Calls of every threading route from a thread pool, each with the
    bits of a serial call; afterwards no thread is left counted (the
    fixture checks)."""
    x = np.random.default_rng(0).standard_normal((256, 2048), dtype=np.float32)
    w = np.ones(2048, np.float32)
    calls = [
        lambda: normops.layer_normalization(x, w),
        lambda: normops.softmax(x, axis=-1),
        lambda: normops.reduce_sum(x, np.array([1])),
        lambda: normops.reduce_sum(x, np.array([0])),
        lambda: normops.argmax(x, axis=0),
        lambda: normops.cumsum(x, axis=1),
        lambda: normops.lp_normalization(x, axis=0),
    ]
    expected = [call() for call in calls]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: calls[i % len(calls)](), range(4 * len(calls))))
    for i, y in enumerate(results):
        np.testing.assert_array_equal(y.view(np.uint8), expected[i % len(calls)].view(np.uint8))


def _os_threads_after_call(n_threads, hold):
    """OS threads of a fresh process after one LayerNormalization call,
    with `hold` threads of the budget taken beforehand (as other calls
    would)."""
    code = (
        "import os, numpy as np, normops\n"
        "from normops import _isa\n"
        f"_isa.routes.take_threads({hold}, 1) if {hold} else None\n"
        "x = np.ones((512, 1024), np.float32); w = np.ones(1024, np.float32)\n"
        "start = len(os.listdir('/proc/self/task'))\n"
        f"normops.layer_normalization(x, w, n_threads={n_threads})\n"
        "print(len(os.listdir('/proc/self/task')) - start)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=dict(os.environ, OMP_NUM_THREADS="2", PYTHONPATH=os.pathsep.join(sys.path),
                                  # figures under which the call is worth a team on any machine
                                  NORMOPS_THREAD_COSTS="rows=1,wake_us=1"))
    return int(out.stdout)


def test_a_full_budget_keeps_a_default_call_on_its_own_thread():
    if not normops.show_config(print_out=False)["openmp"] or routes.usable_cores() < 2:
        pytest.skip("needs OpenMP and two cores")
    cores = routes.usable_cores()
    assert _os_threads_after_call(None, 0) == 1  # alone: one OpenMP worker joins
    assert _os_threads_after_call(None, cores) == 0  # every core taken: none
    assert _os_threads_after_call(2, cores) == 1  # an explicit count still gets its team


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_a_team_of_one_takes_the_rows_as_one_range(dtype):
    """With every core held, a default call's loop is granted one thread
    and runs its rows as one range instead of chunk by chunk (the row
    pipelines of Softmax and the normalisations cross chunk borders then):
    the bits of the same call at n_threads=1 and of the chunked team."""
    if routes.usable_cores() < 2:
        pytest.skip("needs two cores")
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((96, 1024)) * 4).astype(dtype)  # 16 rows a chunk: 6 chunks
    x[7, 3], x[48, :] = np.nan, -np.inf  # special rows inside a chunk and at the start of one
    w, b = rng.standard_normal(1024).astype(dtype), rng.standard_normal(1024).astype(dtype)
    calls = {
        "LayerNormalization": lambda t, m: normops.layer_normalization(x, w, b, n_threads=t, mode=m),
        "RMSNormalization": lambda t, m: normops.ops.rms_normalization(x, w, n_threads=t, mode=m),
        "Softmax": lambda t, m: normops.ops.softmax(x, axis=-1, n_threads=t, mode=m),
        "LogSoftmax": lambda t, m: normops.ops.log_softmax(x, axis=-1, n_threads=t, mode=m),
    }
    bits = np.uint16 if dtype == np.float16 else np.uint32
    old = routes.set_threads_always(True)
    try:
        for name, call in calls.items():
            for mode in ("exact", "fast"):
                serial, team = call(1, mode), call(2, mode)
                held = routes.take_threads(routes.usable_cores(), 1)
                try:
                    alone = call(None, mode)
                finally:
                    routes.release_threads(held)
                for y in (team, alone):
                    np.testing.assert_array_equal(y.view(bits), serial.view(bits), err_msg=f"{name} {mode}")
    finally:
        routes.set_threads_always(old)
