"""Softmax's and LogSoftmax's last pass inside the next row's pass (the
division, the product by the reciprocal, the difference), on and off.

    python bench/softmax_divide_in_pass.py [--threads 1,2] [--rounds 60] [--modes exact,fast]
                                           [--ops Softmax,LogSoftmax]

Each case is called with the division in the pass (softmax_steps.h, 1c)
and as a pass of its own, alternately in one process (the order swapped
every round, a few calls per sample); the report gives the medians and
on/off (below 1: the last pass inside the next is faster). The bits are the
same either way (tests/test_softmax.py). Results:
docs/performance-analysis.md, "The exact Softmax's division inside the
next row's pass".
"""
import argparse
import statistics
import time

import numpy as np

import normops
from normops import _isa

SHAPES = ((32, 1024), (256, 256), (256, 384), (256, 512), (1024, 896), (1024, 1024), (1024, 2048), (32, 4096), (1024, 4096))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--modes", default="exact")
    parser.add_argument("--ops", default="Softmax")
    args = parser.parse_args()
    mod = _isa.load(_isa.current_level())
    rng = np.random.default_rng(0)
    print(f"level {_isa.current_level()}; median µs per call, {args.rounds} rounds")
    print(f"{'op':<10} {'case':<11} {'mode':<6} {'T':>2} {'in pass':>9} {'own pass':>9} {'in/own':>7}")
    for t, op, mode, (rows, cols) in ((t, o, m, s) for t in (int(v) for v in args.threads.split(","))
                                      for o in args.ops.split(",") for m in args.modes.split(",")
                                      for s in SHAPES):
        fn = normops.ops.softmax if op == "Softmax" else normops.ops.log_softmax
        x = rng.standard_normal((rows, cols), dtype=np.float32)
        calls = max(1, 2_000_000 // x.size)
        times = {True: [], False: []}
        for r in range(args.rounds):
            for on in ((True, False) if r % 2 == 0 else (False, True)):
                mod.set_softmax_divide_in_pass(on)
                t0 = time.perf_counter()
                for _ in range(calls):
                    fn(x, axis=-1, mode=mode, n_threads=t)
                times[on].append((time.perf_counter() - t0) / calls * 1e6)
        mod.set_softmax_divide_in_pass(True)
        a, b = statistics.median(times[True]), statistics.median(times[False])
        print(f"{op:<10} {f'{rows}x{cols}':<11} {mode:<6} {t:>2} {a:>9.1f} {b:>9.1f} {a / b:>6.2f}x")


if __name__ == "__main__":
    main()
