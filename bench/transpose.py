"""The front layer's "move axes" copy: NumPy's transposing copy against the
blocked kernel (normops._transpose.moved_axes), alone and inside
LpNormalization along axis 0, against NumPy's textbook expression.

Wall-clock medians of interleaved runs in one process (the copy is memory
bound, so CPU time would hide stalls); "numpy path" is normops with the
kernel switched off (every copy then takes NumPy's route, as before the
kernel existed). On a shared machine the numbers are noisy.

    python bench/transpose.py [--repeats 41] [--threads 1 2]
"""
import argparse
import time

import numpy as np

import normops
from normops import _transpose

MOVES = [  # (shape, perm)
    ((1024, 1024), (1, 0)),
    ((1000, 1000), (1, 0)),
    ((4096, 256), (1, 0)),
    ((32, 1024, 128), (0, 2, 1)),
]


def _median_ms(samples):
    return 1e3 * float(np.median(samples))


def _interleaved(fns, repeats):
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return {name: _median_ms(v) for name, v in times.items()}


def _numpy_path(fn):
    def run():
        old = _transpose.KERNEL_MIN_ELEMENTS
        _transpose.KERNEL_MIN_ELEMENTS = float("inf")
        try:
            return fn()
        finally:
            _transpose.KERNEL_MIN_ELEMENTS = old
    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=41)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    for n in args.threads:
        print(f"--- n_threads={n} (wall-clock medians of {args.repeats} interleaved runs, ms)")
        for shape, perm in MOVES:
            x = rng.standard_normal(shape).astype(np.float32)
            r = _interleaved({
                "numpy": lambda: np.ascontiguousarray(np.transpose(x, perm)),
                "kernel": lambda: _transpose.moved_axes(x, perm, None, n),
            }, args.repeats)
            print(f"move {shape} float32 perm {perm}: numpy {r['numpy']:.3f}  kernel {r['kernel']:.3f}")
        x = rng.standard_normal((1024, 1024)).astype(np.float32)
        r = _interleaved({
            "textbook": lambda: x / np.abs(x).sum(axis=0, keepdims=True),
            "numpy path": _numpy_path(lambda: normops.lp_normalization(x, axis=0, p=1, n_threads=n)),
            "kernel": lambda: normops.lp_normalization(x, axis=0, p=1, n_threads=n),
        }, args.repeats)
        print("lp_normalization (1024, 1024) float32 axis=0 p=1: "
              + "  ".join(f"{k} {v:.3f}" for k, v in r.items()))


if __name__ == "__main__":
    main()
