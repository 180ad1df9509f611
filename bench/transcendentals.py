#!/usr/bin/env python
"""Throughput of normops' own exp and log per ISA build, against NumPy.

    python bench/transcendentals.py [--n 65536] [--threads 1] [--repeat 200]
                                    [--cpu-time] [--against DIR]

Prints ns per element (median over repeats) of exp32, log32, the fast
exp32, exp64 and log64 on contiguous arrays, for every ISA build this CPU
runs, and of numpy.exp / numpy.log on the same float32 and float64 arrays.
The calls of one row (every build and NumPy) are interleaved, A, B, C, A,
B, C, ..., so that a change of the machine's speed during the run (this
VM's is large) affects them alike.
Inputs: exp on uniform [-80, 80], log on e^that (every path of the
kernels is branch-free, so the values matter little). --cpu-time times
with the calling thread's CPU time instead of the wall clock (one thread
only): on a shared, busy machine that leaves out the time spent waiting
for a core. --against DIR adds the same functions from another build's
kernel modules (the isa_*.so files in DIR, e.g. a copy of main's
normops/_kernels), interleaved with this build's: old against new in one
process.
"""
import argparse
import glob
import importlib.machinery
import importlib.util
import statistics
import time

import numpy as np

import normops._isa as isa


CLOCK = time.perf_counter_ns


def load_other_build(directory, level):
    """The kernel build of ISA level `level` from another build's files
    (of the same table layout), its module under a name of its own (its
    init function keeps the file's name)."""
    paths = glob.glob(f"{directory}/isa_{level}.cpython-*.so") + glob.glob(f"{directory}/isa_{level}.*.pyd")
    if not paths:
        raise SystemExit(f"--against: no isa_{level} module in {directory}")
    name = f"against.isa_{level}"
    loader = importlib.machinery.ExtensionFileLoader(name, paths[0])
    spec = importlib.util.spec_from_file_location(name, paths[0], loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return isa.routes.KernelBuild(module)


def interleaved_median_ns(fns, n, repeat):
    """Median ns per element of each callable, the calls alternated."""
    for fn in fns:
        fn()  # warm up
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, spent in zip(fns, times):
            t = CLOCK()
            fn()
            spent.append(CLOCK() - t)
    return [statistics.median(spent) / n for spent in times]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 16, help="elements per call (default 65536)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--cpu-time", action="store_true", help="time with the thread's CPU time (threads must be 1)")
    parser.add_argument("--against", metavar="DIR", help="also time another build's kernel modules found in DIR")
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
    modules = [(level, isa.load(level)) for level in levels]
    if args.against:
        modules += [(f"{level}*", load_other_build(args.against, level)) for level in levels]
    clock = "thread CPU time" if args.cpu_time else "wall clock"
    print(f"n = {args.n}, threads = {args.threads}, median of {args.repeat} ({clock}); ns per element"
          + (f"; * = the build in {args.against}" if args.against else ""))
    print(f"{'function':<12}" + "".join(f"{label:>10}" for label, _ in modules) + f"{'numpy':>10}")
    numpy_fn = {"exp32": lambda: np.exp(x32, out=y32), "log32": lambda: np.log(l32, out=y32),
                "exp32_fast": lambda: np.exp(x32, out=y32),
                "exp64": lambda: np.exp(x64, out=y64), "log64": lambda: np.log(l64, out=y64)}
    for name, entry, x, y in cases:
        kernels = [getattr(module, entry) for _, module in modules]
        fns = [lambda kernel=kernel, x=x, y=y: kernel(x, y, args.threads) for kernel in kernels] + [numpy_fn[name]]
        print(f"{name:<12}" + "".join(f"{t:10.3f}" for t in interleaved_median_ns(fns, args.n, args.repeat)))


if __name__ == "__main__":
    main()
