"""How many threads a loop takes (normops/_kernels/team.h, normops/_threads.py):
a deterministic function of measured figures, pinned here to those of
machines unlike this one; the figures learned only from calls worth
timing; the pins from set_config, config and NORMOPS_THREAD_COSTS.

The bits never depend on the thread count (the bit-for-bit tests at 1, 2,
3 and 8 threads elsewhere prove it); these tests only check the choice."""
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import normops
from normops import _isa, _threads
from normops._errors import InvalidInputError
from normops._spec import ROW_CHUNK_ELEMENTS

routes = _isa.routes


@pytest.fixture
def pinned():
    """Pin figures for one test, then unpin and forget what was learned."""
    def pin(**costs):
        normops.set_config(thread_costs=costs)
    yield pin
    normops.set_config(thread_costs=None)
    routes.forget_thread_costs()


def plan(elements, family="rows", gap_us=1, cap=2, chunk=ROW_CHUNK_ELEMENTS):
    chunks = max(1, -(-elements // chunk))
    return routes.planned_threads(cap, chunks, min(chunk, elements), elements, family, gap_us)[0]


def test_a_second_thread_only_where_it_saves_more_than_its_wake_up(pinned):
    # 1 ns per element, an awake team in 10 µs: 2 threads take
    # L + (W - L) / 2, which must be at most 85% of W: W >= 10 / 0.7 µs
    pinned(ns_per_element={"rows": 1.0}, wake_us=10)
    assert plan(14_200, chunk=1024) == 1  # W = 14.2 µs: 2 threads would take 12.1 µs, 85.2% of W
    assert plan(14_400, chunk=1024) == 2  # W = 14.4 µs: 12.2 µs, 84.7%
    assert plan(2 * ROW_CHUNK_ELEMENTS, cap=1) == 1   # one thread asked: one thread
    assert plan(ROW_CHUNK_ELEMENTS, cap=8) == 1       # one chunk: nothing to share
    # a loop of two chunks of unequal size: the busiest thread's chunk bounds it
    assert routes.planned_threads(2, 2, ROW_CHUNK_ELEMENTS, ROW_CHUNK_ELEMENTS + 100, "rows", 1)[0] == 1


def test_a_slow_wake_up_keeps_calls_after_idle_time_on_one_thread(pinned):
    # a machine whose idle team takes 6 ms to wake (a virtual machine whose
    # idle CPU the host lent away), 40 µs while it spins, and kernels 3x
    # faster than AVX2's: exact Softmax 0.2 ns per element
    pinned(ns_per_element={"softmax_exact": 0.2}, wake_us={0: 40, 1000: 6000})
    small, large = 32 * 1024, 1024 * 4096      # 6.6 µs and 839 µs on one thread
    assert plan(small, "softmax_exact", gap_us=1) == 1
    assert plan(large, "softmax_exact", gap_us=1) == 2
    for gap in (20_000, 100_000, 300_000):
        assert plan(large, "softmax_exact", gap_us=gap) == 1
    assert plan(64 * large, "softmax_exact", gap_us=100_000) == 2  # 54 ms of work pays for 6 ms
    assert plan(large, "softmax_exact", gap_us=None) == 1          # no team yet: as after idle


def test_a_size_class_first_loop_runs_alone_to_be_timed_up_to_20_ms(pinned):
    # without one timed serial loop of its own, a class's team loops tell
    # neither L nor s (not even a stall after idle time); exact Softmax's
    # prior is 0.2 ns per element
    routes.forget_thread_costs()
    assert routes.loop_threads(2, 1024, 25_000_000, "softmax_exact") == 1   # 5 ms: timed alone
    assert routes.loop_threads(2, 1024, 125_000_000, "softmax_exact") == 2  # 25 ms: a team pays anyway


def test_a_size_class_that_s_keeps_serial_takes_a_team_now_and_then(pinned, core_cache):
    # s read as 2 (no gain) once keeps every loop of its class serial, so
    # the caller's last team recedes into the past (gaps over 1 ms); in a
    # loop of calls the class still takes a team every 4th loop, to
    # measure s again
    core_cache(1 << 20)
    pinned(ns_per_element={"softmax_exact": 0.2}, wake_us=20)
    routes.forget_thread_costs()
    for _ in range(3):
        routes.learn_team_loop("softmax_exact", 1 << 20, 300, 2, 300, 60, None)
    assert routes.thread_costs()["stretch_by_size"]["softmax_exact"]["<2Mi"] == 2.0
    old = routes.set_threads_always(True)
    try:
        normops.ops.softmax(np.ones((64, 1024), np.float32), n_threads=2)  # the caller's last team
    finally:
        routes.set_threads_always(old)
    end = time.perf_counter() + 0.003
    while time.perf_counter() < end:  # 3 ms, the caller busy
        pass
    teams = [routes.loop_threads(2, 64, 1 << 20, "softmax_exact") for _ in range(8)]
    assert teams == [1, 1, 1, 2, 1, 1, 1, 2]


def test_loops_too_long_to_probe_three_times_learn_after_one():
    # a parallel loop teaches L or s only once its class's W is its own:
    # after three timed serial loops, or one where that loop took over
    # 2 ms (the class is not probed again: three would cost too much)
    assert not routes.cost_settled(0, 5000.0)
    assert not routes.cost_settled(2, 1500.0)
    assert routes.cost_settled(3, 1500.0)
    assert routes.cost_settled(1, 2700.0)
    assert not routes.cost_settled(1, 2000.0)


def test_one_stall_in_five_after_idle_time_keeps_those_calls_serial(pinned):
    # a wake-up quick four times in five and 6 ms once: between busy calls
    # the lower median decides (a team), after idle time the stall does
    # (a stall there costs a call far more than a team saves it)
    pinned(ns_per_element={"softmax_exact": 0.2})
    routes.forget_thread_costs()
    large = 1024 * 4096   # 839 µs on one thread
    for wake_us in (40, 40, 6000, 40, 40):
        routes.learn_wake_up(20_000, wake_us, idle=False)
        routes.learn_wake_up(20_000, wake_us, idle=True)
    assert routes.thread_costs()["wake_us"][16384] == 40
    assert routes.thread_costs()["wake_us_idle"][16384] == 6000
    assert plan(large, "softmax_exact", gap_us=20_000) == 2
    assert routes.planned_threads(2, 256, 16384, large, "softmax_exact", 20_000, idle=True)[0] == 1
    # five quick wake-ups in a row push the stall out: teams again
    for _ in range(5):
        routes.learn_wake_up(20_000, 40, idle=True)
    assert routes.thread_costs()["wake_us_idle"][16384] == 40
    assert routes.planned_threads(2, 256, 16384, large, "softmax_exact", 20_000, idle=True)[0] == 2


def test_the_wake_up_is_measured_from_the_first_chunk_another_thread_claims(pinned):
    # 1M-element exact Sigmoid, 380 µs on one thread. One stall (630 µs)
    # after a busy 2 ms gap; then team loops whose worker claimed its first
    # chunk 50 µs after the start: L is what they measured, whatever W and
    # the loop's time were (a W timed while the host ran slower once read
    # as L of 0 to 20 µs, or as a stall that nothing outvoted)
    elements = 1 << 20
    pinned(ns_per_element={"map_exact": 380 / elements * 1000})
    routes.forget_thread_costs()
    routes.learn_team_loop("map_exact", elements, 2_000, 2, 630, None)  # the worker claimed nothing
    assert routes.thread_costs()["wake_us"][1024] == 630
    assert plan(elements, "map_exact", gap_us=2_000, chunk=16384) == 1
    for took_us in (260, 150):   # 150 µs: faster than W allows; L is still 50
        routes.learn_team_loop("map_exact", elements, 2_000, 2, took_us, 50)
    assert routes.thread_costs()["wake_us"][1024] == 50
    assert plan(elements, "map_exact", gap_us=2_000, chunk=16384) == 2


def test_a_team_whose_end_costs_more_than_it_saves_leaves_small_loops_serial(pinned):
    # RMSNormalization 32x1024 (2 chunks) at 0.16 ns per element: W = 5.2
    # µs. Its worker claims work 1 µs after the start, so with L alone two
    # threads would take 1 + 4.2 / 2 = 3.1 µs; but its team loops took 8
    # µs: 4.9 µs at the barrier (E). With E measured, one thread.
    elements = 32 * 1024
    pinned(ns_per_element={"rows_rms": 0.16})
    routes.forget_thread_costs()
    routes.learn_team_loop("rows_rms", elements, 30, 2, 3.2, 1)
    assert routes.thread_costs()["wake_us"][16] == 1
    assert routes.thread_costs()["end_us"][16] == pytest.approx(0.08, abs=0.01)
    assert plan(elements, "rows_rms", gap_us=30) == 2
    for _ in range(3):
        routes.learn_team_loop("rows_rms", elements, 30, 2, 8, 1)
    assert routes.thread_costs()["end_us"][16] == pytest.approx(4.88, abs=0.01)
    assert plan(elements, "rows_rms", gap_us=30) == 1
    assert plan(elements, "rows_rms", gap_us=100) == 1  # a longer gap takes the nearest shorter one's E
    assert plan(16 * elements, "rows_rms", gap_us=30) == 2  # 84 µs of work pays for it


def test_a_team_that_claimed_late_keeps_its_loops_serial(pinned, core_cache):
    # exact Softmax 256x1024 (2^18 elements, beyond a 1 MiB core cache: a
    # "large" loop), 98 µs on one thread; the worker claimed work 100 µs
    # after the start three times: L = 100 µs, and one thread is quicker
    # (before L was measured, such loops taught nothing: W < 2 L tells no s).
    core_cache(1 << 20)
    pinned(ns_per_element={"softmax_exact": 98_000 / (1 << 18)})
    routes.forget_thread_costs()
    for _ in range(3):
        routes.learn_team_loop("softmax_exact", 1 << 18, 300, 2, 117, 100)
    assert routes.thread_costs()["wake_us"][256] == 100
    assert plan(1 << 18, "softmax_exact", gap_us=300, chunk=1024) == 1


@pytest.mark.parametrize("caller, stretch", [
    # the caller made 8 claims alone over 58 µs, 30 beside the worker over
    # the last 240 µs: each thread worked 7.5 / 58 : 30 / 240 = 1.03 times
    # slower together, measured in the loop, whatever W says
    ((2, 8, 30), 1.03),
    # the worker woke before the caller's fourth claim (a spinning team):
    # s inferred from W, (300 - 60) x 2 / (419 - 60) = 1.34
    ((2, 3, 36), 1.34),
    (None, 1.34),
])
def test_stretch_is_measured_in_the_loop_where_the_caller_worked_alone(pinned, core_cache, caller, stretch):
    # exact Softmax over 2^20 elements (4 MiB, beyond a 1 MiB core cache),
    # W = 0.4 ns x 2^20 = 419 µs; a team loop took 300 µs, its worker's
    # first claim 60 µs after the start
    core_cache(1 << 20)
    pinned(ns_per_element={"softmax_exact": 0.4})
    routes.forget_thread_costs()
    routes.learn_team_loop("softmax_exact", 1 << 20, 300, 2, 300, 60, caller)
    assert routes.thread_costs()["wake_us"][256] == 60
    assert routes.thread_costs()["stretch_by_size"]["softmax_exact"]["<2Mi"] == pytest.approx(stretch, abs=0.01)


def test_a_measured_stretch_keeps_a_team_that_a_drifted_w_would_have_refused(pinned, core_cache):
    # W timed while the host ran fast (0.2 ns: 210 µs) against team loops
    # of 300 µs whose worker claimed at 60 µs: inferred, s = 480 / 150 =
    # 3.2, read as 2 (no gain), and the class would stay serial; measured
    # in the loops (the caller's rate alone and beside the worker), s =
    # 1.03, and a team still pays
    core_cache(1 << 20)
    pinned(ns_per_element={"softmax_exact": 0.2})
    routes.forget_thread_costs()
    for _ in range(3):
        routes.learn_team_loop("softmax_exact", 1 << 20, 300, 2, 300, 60, None)
    assert routes.thread_costs()["stretch_by_size"]["softmax_exact"]["<2Mi"] == 2.0
    assert plan(1 << 20, "softmax_exact", gap_us=300) == 1
    routes.forget_thread_costs()
    for _ in range(3):
        routes.learn_team_loop("softmax_exact", 1 << 20, 300, 2, 300, 60, (2, 8, 30))
    assert routes.thread_costs()["stretch_by_size"]["softmax_exact"]["<2Mi"] == pytest.approx(1.03, abs=0.01)
    assert plan(1 << 20, "softmax_exact", gap_us=300, chunk=16384) == 2


def test_a_wake_up_of_several_milliseconds_everywhere(pinned):
    pinned(ns_per_element={"reduce": 0.05}, wake_us=5000)
    assert plan(4096 * 4096, "reduce") == 1       # 0.84 ms of work
    assert plan(64 * 4096 * 4096, "reduce") == 2  # 54 ms


def test_many_cores_wake_only_the_threads_the_work_pays_for(pinned):
    # 64 cores, 200 µs of work, 10 µs to wake a team and 5 µs for each
    # thread beyond the second: about sqrt(190 / 5) = 6 threads, not 64
    pinned(ns_per_element={"rows": 1.0}, wake_us=10, join_us=5)
    elements = 200_000
    n = plan(elements, cap=64, chunk=1024)
    assert 4 <= n <= 9, n
    assert plan(100 * elements, cap=64, chunk=1024) > n  # more work, more threads
    pinned(ns_per_element={"rows": 1.0}, wake_us=10, join_us=0)
    assert plan(elements, cap=64, chunk=1024) == 64  # threads that cost nothing: all of them


def test_thresholds_follow_the_figures(pinned):
    pinned(ns_per_element={"rows": 0.1}, wake_us=10)
    fast = _threads.smallest_parallel("rows", 1)
    pinned(ns_per_element={"rows": 0.4}, wake_us=10)
    slow = _threads.smallest_parallel("rows", 1)
    assert 3.5 < fast / slow < 4.5  # 4x dearer elements: a 4x lower threshold
    pinned(ns_per_element={"rows": 0.4}, wake_us=40)
    assert 3.5 < _threads.smallest_parallel("rows", 1) / slow < 4.5
    pinned(ns_per_element={"rows": 0.4}, wake_us=1e9)
    assert _threads.smallest_parallel("rows", 1, limit=1 << 30) is None


def test_threads_always_overrides_the_model(pinned):
    pinned(ns_per_element={"rows": 0.001}, wake_us=1e6)
    assert plan(2 * ROW_CHUNK_ELEMENTS) == 1
    old = routes.set_threads_always(True)
    try:
        assert plan(2 * ROW_CHUNK_ELEMENTS) == 2
        assert plan(20, chunk=8, cap=3) == 3
    finally:
        routes.set_threads_always(old)


def test_small_calls_are_neither_timed_nor_counted():
    routes.forget_thread_costs()
    x, w = np.ones((4, 8), np.float32), np.ones(8, np.float32)
    for _ in range(200):
        normops.layer_normalization(x, w, n_threads=2)
        normops.ops.softmax(x, n_threads=2)
        normops.sum(x, axis=1, n_threads=2)
    costs = routes.thread_costs()
    assert not any(costs["measured"].values())
    assert all(v is None for v in costs["wake_us"].values())


def test_the_figures_are_learned_from_calls_above_the_floor():
    if not normops.show_config(print_out=False)["openmp"] or routes.usable_cores() < 2:
        pytest.skip("needs OpenMP and two cores")
    routes.forget_thread_costs()
    # 2^17 elements: well above the 2 µs floor and, on any machine within
    # 4x of this one, below the 200 µs up to which a helped loop teaches L
    x = np.random.default_rng(0).standard_normal((256, 512), dtype=np.float32)
    w = np.ones(512, np.float32)
    want = normops.layer_normalization(x, w, n_threads=1)
    for _ in range(40):  # the first loops of a family are timed on one thread
        got = normops.layer_normalization(x, w, n_threads=2)
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    costs = routes.thread_costs()
    assert costs["measured"]["rows"] and not costs["measured"]["scan"]
    assert 0 < costs["ns_per_element"]["rows"] < 100
    # some loops ran on a team (back to back: gaps the caller spent busy)
    assert any(v is not None for v in costs["wake_us"].values())
    routes.forget_thread_costs()


def test_rms_rows_have_figures_of_their_own(pinned):
    # an uncentred row costs less than a centred one: each is timed and
    # decided by its own figure, so neither sizes the other's teams
    routes.forget_thread_costs()
    x = np.random.default_rng(0).standard_normal((256, 512), dtype=np.float32)
    w = np.ones(512, np.float32)
    for _ in range(8):
        normops.rms_normalization(x, w, n_threads=2)  # its first loops are timed on one thread
    measured = routes.thread_costs()["measured"]
    assert measured["rows_rms"] and not measured["rows"]
    routes.forget_thread_costs()
    pinned(ns_per_element={"rows": 0.3, "rows_rms": 0.1}, wake_us=10)
    elements = 60_000  # W: 18 µs centred (a team pays), 6 µs uncentred (it does not)
    assert plan(elements, "rows", chunk=1024) == 2
    assert plan(elements, "rows_rms", chunk=1024) == 1


def test_log_sum_exp_has_figures_of_its_own(pinned):
    # an exponential per element costs 5-10x a sum's: ReduceLogSumExp's
    # exp pass is timed and decided apart from the other reductions (its
    # max pass is a plain reduction), each mode apart
    routes.forget_thread_costs()
    x = np.random.default_rng(1).standard_normal((256, 1024), dtype=np.float32)
    for _ in range(8):
        normops.reduce_log_sum_exp(x, np.array([1]), n_threads=2)
    measured = routes.thread_costs()["measured"]
    assert measured["reduce_exp_exact"] and measured["reduce"] and not measured["reduce_exp_fast"]
    for _ in range(8):
        normops.reduce_log_sum_exp(x, np.array([1]), n_threads=2, mode="fast")
    assert routes.thread_costs()["measured"]["reduce_exp_fast"]
    routes.forget_thread_costs()
    pinned(ns_per_element={"reduce": 0.04, "reduce_exp_exact": 0.4}, wake_us=10)
    elements = 60_000  # W: 2.4 µs summed (no team), 24 µs through exp (a team pays)
    assert plan(elements, "reduce", chunk=1024) == 1
    assert plan(elements, "reduce_exp_exact", chunk=1024) == 2


def test_scans_along_the_last_axis_have_figures_of_their_own(pinned):
    # CumSum/CumProd along the last axis run one dependent chain a line;
    # along another axis, lines side by side in vectors: about 2x apart
    # per element, so the two layouts are timed and decided apart
    x = np.random.default_rng(2).standard_normal((512, 2048), dtype=np.float32)  # several chunks either way
    for axis, family, other in ((1, "scan_lines", "scan"), (0, "scan", "scan_lines")):
        routes.forget_thread_costs()
        for _ in range(8):
            normops.ops.cum_sum(x, np.array(axis), n_threads=2)
        measured = routes.thread_costs()["measured"]
        assert measured[family] and not measured[other]
    routes.forget_thread_costs()
    pinned(ns_per_element={"scan": 0.15, "scan_lines": 0.35}, wake_us=10)
    elements = 50_000  # W: 7.5 µs side by side (no team), 17.5 µs as chains (a team pays)
    assert plan(elements, "scan", chunk=1024) == 1
    assert plan(elements, "scan_lines", chunk=1024) == 2


def test_a_team_that_only_shares_the_memory_bus_is_not_started(pinned):
    # 4 Mi elements of a reduction at 0.05 ns (W = 210 µs), a team awake in
    # 15 µs: sharing perfectly (s = 1) two threads take 15 + 195 / 2 µs;
    # where the two contend for the caches and the memory bus so that
    # their share takes 1.8 times the ideal (as on a 2-vCPU VM with
    # spinning off), 15 + 195 * 1.8 / 2 = 190.5 µs: over 85% of W
    pinned(ns_per_element={"reduce": 0.05}, wake_us=15)
    elements = 4 << 20
    assert plan(elements, "reduce", chunk=32768) == 2
    pinned(ns_per_element={"reduce": 0.05}, wake_us=15, stretch={"reduce": 1.8})
    assert plan(elements, "reduce", chunk=32768) == 1
    assert plan(elements, "softmax_exact", chunk=32768) == 2  # another family keeps its own
    pinned(ns_per_element={"reduce": 0.05}, wake_us=15, stretch={"reduce": 1.2})
    assert plan(elements, "reduce", chunk=32768) == 2  # 132 µs


def test_large_team_loops_teach_stretch_and_small_ones_the_wake_up(pinned):
    # with L known (pinned here; else from small loops), a large loop's
    # time beyond L's share is s (inferred: W pinned far above what the
    # loop takes reads as a team sharing perfectly, s = 1, its least); only
    # its own family and size class learn it
    routes.forget_thread_costs()
    pinned(ns_per_element={"reduce": 10.0}, wake_us=0)
    x = np.ones((1024, 1024), np.float32)
    old = routes.set_threads_always(True)
    try:
        normops.sum(x, axis=1)  # the thread's first team (OpenMP may start its threads): not learned from
        normops.sum(x, axis=1)
    finally:
        routes.set_threads_always(old)
    stretch = routes.thread_costs()["stretch_by_size"]["reduce"]
    # 1 where inferred from the pinned W; where the worker woke late
    # enough for the caller to work alone a while, measured in the loop
    assert 1.0 <= stretch["<2Mi"] <= 2.0
    assert all(v is None for k, v in stretch.items() if k != "<2Mi")
    assert all(v is None for f, sizes in routes.thread_costs()["stretch_by_size"].items() if f != "reduce"
               for v in sizes.values())


@pytest.fixture
def core_cache():
    """Set one core's cache size for one test, then the machine's again."""
    yield routes.set_core_cache_bytes
    _threads.read_core_cache()


@pytest.mark.parametrize("nbytes, first", [
    (0, 1 << 18),                 # not reported: 1 MiB assumed
    (1 << 20, 1 << 18),           # 1 MiB: float32 data of 2^18 elements and more leave it
    (1280 << 10, 1 << 19),        # 1.25 MiB: 2^18 elements still fit; the next class does not
    (256 << 10, 1 << 16),
    (48 << 10, 1 << 16),          # the smallest class that tells s from L
    (1 << 40, 1 << 26),           # the largest class
])
def test_where_large_loops_begin_follows_the_core_cache(core_cache, nbytes, first):
    core_cache(nbytes)
    assert routes.thread_costs()["stretch_from_elements"] == first


def test_a_loop_larger_than_the_core_cache_teaches_stretch_and_a_smaller_one_does_not(pinned, core_cache):
    # the same 2^20-element loop (4 MiB of float32), L pinned: with a 4 MiB
    # core cache it is a large loop and teaches s; with 8 MiB its data stay
    # in the core's cache, so it is a small one (it would teach L: pinned)
    x = np.ones((1024, 1024), np.float32)
    for nbytes, learned in ((8 << 20, False), (4 << 20, True)):
        routes.forget_thread_costs()
        pinned(ns_per_element={"reduce": 10.0}, wake_us=0)
        core_cache(nbytes)
        old = routes.set_threads_always(True)
        try:
            normops.sum(x, axis=1)  # the thread's first team: not learned from
            normops.sum(x, axis=1)
        finally:
            routes.set_threads_always(old)
        assert (routes.thread_costs()["stretch_by_size"]["reduce"]["<2Mi"] is not None) == learned


def test_the_core_cache_is_read_from_the_system():
    # Linux reports it in sysfs (and glibc's sysconf); elsewhere 0 (unknown)
    size = _threads.core_cache_bytes()
    if os.path.exists("/sys/devices/system/cpu/cpu0/cache/index2/size"):
        assert size >= 64 << 10
    assert _threads.figures()["core_cache_bytes"] == size


def test_set_config_and_config_pin_and_restore(pinned):
    normops.set_config(thread_costs={"ns_per_element": {"scan": 0.5}, "wake_us": 30})
    assert normops.get_config()["thread_costs"] == {"ns_per_element": {"scan": 0.5}, "wake_us": {0.0: 30.0}}
    costs = routes.thread_costs()
    assert costs["ns_per_element"]["scan"] == 0.5 and costs["pinned"]["scan"] and costs["wake_pinned"]
    assert set(v for v in costs["wake_us"].values()) == {30.0}
    with normops.config(thread_costs={"wake_us": {0: 2, 1000: 3000}}):
        inner = routes.thread_costs()
        assert not inner["pinned"]["scan"]  # the block's pin replaces the process's
        assert inner["wake_us"][0] == 2.0 and inner["wake_us"][1024] == 3000.0 and inner["wake_us"][512] == 2.0
    assert routes.thread_costs()["ns_per_element"]["scan"] == 0.5
    normops.set_config(thread_costs=None)
    after = routes.thread_costs()
    assert not after["pinned"]["scan"] and not after["wake_pinned"]


@pytest.mark.parametrize("costs, message", [
    ({"ns_per_element": {"sort": 1}}, "ns_per_element"),
    ({"wake": 3}, "unknown keys"),
    ({"wake_us": -1}, "wake_us"),
    ({"join_us": float("nan")}, "join_us"),
    ({"stretch": {"reduce": 0.5}}, ">= 1"),
    ({"stretch": {"sort": 2}}, "stretch"),
    ("fast", "must be a dict"),
])
def test_bad_pins_are_refused(costs, message):
    with pytest.raises(InvalidInputError, match=message):
        normops.set_config(thread_costs=costs)
    assert normops.get_config()["thread_costs"] == {}


def test_the_environment_variable_pins_at_import():
    code = ("import normops; from normops import _isa; c = _isa.routes.thread_costs();"
            "print(c['ns_per_element']['rows'], c['pinned']['rows'], c['wake_us'][0], c['wake_us'][2048])")
    code += "; print(c['stretch_by_size']['reduce']['<16Mi'], c['stretch_pinned']['reduce'])"
    env = dict(os.environ, NORMOPS_THREAD_COSTS="rows=0.25,wake_us=0:4;1000:6000,stretch=reduce:1.75",
               PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["0.25", "True", "4.0", "6000.0", "1.75", "True"]
    env["NORMOPS_THREAD_COSTS"] = "rows=fast"
    bad = subprocess.run([sys.executable, "-c", "import normops"], capture_output=True, text=True, env=env)
    assert bad.returncode != 0 and "NORMOPS_THREAD_COSTS" in bad.stderr


def test_show_config_reports_the_figures_and_thresholds(pinned, capsys):
    pinned(ns_per_element={"rows": 0.2}, wake_us={0: 10, 1000: 5000})
    info = normops.show_config()
    printed = capsys.readouterr().out
    assert "rows 0.2 (pinned)" in printed and "2 threads from (elements), in a loop" in printed
    two = info["thread_costs"]["two_threads_from_elements"]
    assert two["in a loop"]["rows"] < two["after 100 ms idle"]["rows"]
