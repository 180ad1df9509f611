"""Where a second thread starts to pay: 1 and 2 threads, call by call.

    python bench/thread_threshold.py            # row and reduction cases
    python bench/thread_threshold.py --costly   # the exponential kernels, teams forced on

Each case is called at 1 and 2 threads alternately in one process (40
rounds x 3 calls, the order swapped every round); the report gives the
medians and 2T/1T (below 1: the second thread pays). With --costly every
loop takes its whole team (``set_threads_always``), so the table shows
the raw cost of a team; without it, what the measured team model
(docs/design.md, "Threads") chooses. ``python -m normops bench --scaling``
measures the same question on the page's cases under both wait policies.
"""
import argparse
import os
import time

import numpy as np

import normops
from normops import _isa


def plain_cases(rng):
    cases = {}
    for rows in (32, 64, 96, 128, 256):
        x = rng.standard_normal((rows, 1024), dtype=np.float32)
        w = np.ones(1024, np.float32)
        cases[f"LayerNormalization {rows}x1024"] = lambda t, x=x, w=w: normops.layer_normalization(x, w, n_threads=t)
        for name in ("sum", "max", "argmax", "cumsum"):
            fn = getattr(normops, name)
            cases[f"{name} {rows}x1024 axis 1"] = lambda t, x=x, fn=fn: fn(x, axis=1, n_threads=t)
    return cases


def costly_cases(rng):
    cases = {}
    for shape in ((17, 1024), (20, 1024), (24, 1024), (32, 1024), (48, 1024),
                  (66, 256), (80, 256), (96, 256), (128, 256)):
        x = rng.standard_normal(shape, dtype=np.float32)
        label = "x".join(map(str, shape))
        for mode in ("exact", "fast"):
            cases[f"Softmax {mode} {label}"] = lambda t, x=x, m=mode: normops.ops.softmax(x, mode=m, n_threads=t)
        cases[f"Sigmoid exact {label}"] = lambda t, x=x: normops.sigmoid(x, n_threads=t)
    return cases


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--costly", action="store_true", help="the exponential kernels, serial threshold 0")
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(1)
    if args.costly:
        _isa.routes.set_threads_always(True)
    cases = costly_cases(rng) if args.costly else plain_cases(rng)
    times = {(k, t): [] for k in cases for t in (1, 2)}
    for r in range(args.rounds):
        for name, f in cases.items():
            for t in ((1, 2) if r % 2 else (2, 1)):
                for _ in range(3):
                    start = time.perf_counter_ns()
                    f(t)
                    times[(name, t)].append(time.perf_counter_ns() - start)
    print(f"{args.rounds} rounds x 3 calls per thread count; load average {os.getloadavg()[0]:.2f}")
    for name in cases:
        one, two = (np.median(times[(name, t)]) / 1e3 for t in (1, 2))
        print(f"{name:34s} 1T {one:8.1f} µs  2T {two:8.1f} µs  2T/1T {two / one:.2f}")


if __name__ == "__main__":
    main()
