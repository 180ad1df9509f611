"""Tail latency of 1- and 2-thread calls, two kernel builds interleaved.

    python tools/thread_tail.py OLD_DIR NEW_DIR [--busy-core] [--rounds N]
    python tools/thread_tail.py OLD_DIR NEW_DIR --pool 2,4

OLD_DIR and NEW_DIR each hold an isa_<level>.*.so (for example main's
prebuilt kernels and this tree's). Both are loaded into one process and
swapped in as ``normops._isa.kernels`` in turn: rounds of (old, new) x
(1, 2 threads), a block of calls each, so that the machine's slow and fast
minutes fall on every variant alike. Per-call times give the median and the
90th percentile of each variant. ``--busy-core`` starts a process spinning
on one core for the run (and stops it). The targets (docs/performance-analysis.md,
"Threads before the measured team model", "Waiting threads"): busy, p90 at 2 threads <= 1.25x p90 at 1 thread;
quiet, new medians no slower than old.

``--pool`` measures the thread budget instead, with each build in turn
(normops_tools.benchmark.batch.measure_pool, which the performance page runs on
the loaded build): P Python threads (one persistent, warmed-up pool each)
calling LayerNormalization 1024x4096 at the default thread count, against
the same calls made one after another; the same with n_threads=1 for
reference. The throughput ratio should be at least 1 (no loss from
oversubscription).
"""
import argparse
import glob
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import time

import numpy as np

import normops
from normops import _isa


def load(directory, level, alias):
    path, = glob.glob(os.path.join(directory, f"isa_{level}.*.so"))
    loader = importlib.machinery.ExtensionFileLoader(f"{alias}.isa_{level}", path)
    spec = importlib.util.spec_from_file_location(f"{alias}.isa_{level}", path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[f"{alias}.isa_{level}"] = module
    loader.exec_module(module)
    return _isa.routes.KernelBuild(module)  # (a build of this table layout: another is refused)


def cases():
    rng = np.random.default_rng(19)
    x = rng.standard_normal((1024, 4096), dtype=np.float32)
    w = rng.standard_normal(4096, dtype=np.float32)
    b = rng.standard_normal(4096, dtype=np.float32)
    s = rng.standard_normal((256, 1024), dtype=np.float32)
    return {
        "LayerNormalization 1024x4096": lambda t: normops.layer_normalization(x, w, b, n_threads=t),
        "Softmax fast 256x1024": lambda t: normops.softmax(s, axis=-1, mode="fast", n_threads=t),
        "ReduceSum 1024x4096 axis 1": lambda t: normops.reduce_sum(x, np.array([1]), n_threads=t),
    }


def pool_rounds(builds, pools, rounds, calls):
    """The thread budget's throughput (normops_tools.benchmark.batch.measure_pool)
    with each build in turn."""
    from normops_tools.benchmark.batch import measure_pool, pool_lines

    for line in pool_lines(measure_pool(pools, rounds=rounds, calls=calls, builds=builds)):
        print("  " + line)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--level", default=_isa.current_level())
    parser.add_argument("--busy-core", action="store_true")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--calls", type=int, default=None,
                        help="calls per round (default 20; with --pool, 80)")
    parser.add_argument("--pool", help="comma-separated Python thread counts")
    args = parser.parse_args()
    builds = {"old": load(args.old, args.level, "normops_old"), "new": load(args.new, args.level, "normops_new")}
    if args.pool:
        print(f"load before: {os.getloadavg()[0]:.2f}; level {args.level}; default threads "
              f"{normops.get_num_threads()}")
        pool_rounds(builds, [int(p) for p in args.pool.split(",")], args.rounds, args.calls or 80)
        print(f"load after: {os.getloadavg()[0]:.2f}")
        return
    busy = None
    if args.busy_core:
        busy = subprocess.Popen([sys.executable, "-c", "while 1: pass"])
        time.sleep(1.0)
    try:
        print(f"load before: {os.getloadavg()[0]:.2f}; busy core: {args.busy_core}; level {args.level}")
        for name, call in cases().items():
            times = {(v, t): [] for v in builds for t in (1, 2)}
            for v in builds:  # warm up
                _isa.switch_to(builds[v])
                for t in (1, 2):
                    for _ in range(5):
                        call(t)
            for _ in range(args.rounds):
                for v in builds:
                    _isa.switch_to(builds[v])
                    for t in (1, 2):
                        sample = times[(v, t)]
                        for _ in range(args.calls or 20):
                            start = time.perf_counter()
                            call(t)
                            sample.append(time.perf_counter() - start)
            print(name)
            for v in builds:
                p = {t: (np.median(times[(v, t)]) * 1e3, np.percentile(times[(v, t)], 90) * 1e3) for t in (1, 2)}
                print(f"  {v}: 1 thread median {p[1][0]:.3f} p90 {p[1][1]:.3f} ms; 2 threads median "
                      f"{p[2][0]:.3f} p90 {p[2][1]:.3f} ms; p90 2/1 = {p[2][1] / p[1][1]:.2f}")
            for t in (1, 2):
                ratio = np.median(times[("new", t)]) / np.median(times[("old", t)])
                print(f"  median new/old at {t} thread(s): {ratio:.3f}")
        print(f"load after: {os.getloadavg()[0]:.2f}")
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()


if __name__ == "__main__":
    main()
