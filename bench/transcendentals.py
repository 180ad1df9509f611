#!/usr/bin/env python
"""Throughput of normops' own exp and log per ISA build, against NumPy.

    python bench/transcendentals.py [--n 65536] [--threads 1] [--repeat 200]

Prints ns per element (median over repeats) of exp32, log32, the fast
exp32, exp64 and log64 on contiguous arrays, for every ISA build this CPU
runs, and of numpy.exp / numpy.log on the same float32 and float64 arrays.
Inputs: exp on uniform [-80, 80], log on e^that (every path of the
kernels is branch-free, so the values matter little). --cpu-time times
with the calling thread's CPU time instead of the wall clock (one thread
only): on a shared, busy machine that leaves out the time spent waiting
for a core.
"""
import argparse
import statistics
import time

import numpy as np

import normops._isa as isa


CLOCK = time.perf_counter_ns


def median_ns(fn, n, repeat):
    fn()  # warm up
    times = []
    for _ in range(repeat):
        t = CLOCK()
        fn()
        times.append(CLOCK() - t)
    return statistics.median(times) / n


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 16, help="elements per call (default 65536)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--cpu-time", action="store_true", help="time with the thread's CPU time (threads must be 1)")
    args = parser.parse_args(argv)
    if args.cpu_time:
        if args.threads != 1:
            parser.error("--cpu-time measures one thread: use --threads 1")
        global CLOCK
        CLOCK = time.thread_time_ns
    rng = np.random.default_rng(0)
    x32 = rng.uniform(-80, 80, args.n).astype(np.float32)
    l32 = np.exp(x32)
    x64 = x32.astype(np.float64)
    l64 = l32.astype(np.float64)
    y32 = np.empty_like(x32)
    y64 = np.empty_like(x64)
    cases = [("exp32", "exp32_into", x32, y32), ("log32", "log32_into", l32, y32),
             ("exp32_fast", "exp32_fast_into", x32, y32),
             ("exp64", "exp64_into", x64, y64), ("log64", "log64_into", l64, y64)]
    levels = isa.available_levels()
    clock = "thread CPU time" if args.cpu_time else "wall clock"
    print(f"n = {args.n}, threads = {args.threads}, median of {args.repeat} ({clock}); ns per element")
    print(f"{'function':<12}" + "".join(f"{level:>10}" for level in levels) + f"{'numpy':>10}")
    numpy_fn = {"exp32": lambda: np.exp(x32, out=y32), "log32": lambda: np.log(l32, out=y32),
                "exp32_fast": lambda: np.exp(x32, out=y32),
                "exp64": lambda: np.exp(x64, out=y64), "log64": lambda: np.log(l64, out=y64)}
    for name, entry, x, y in cases:
        row = f"{name:<12}"
        for level in levels:
            kernel = getattr(isa.load(level), entry)
            row += f"{median_ns(lambda: kernel(x, y, args.threads), args.n, args.repeat):10.3f}"
        row += f"{median_ns(numpy_fn[name], args.n, args.repeat):10.3f}"
        print(row)


if __name__ == "__main__":
    main()
