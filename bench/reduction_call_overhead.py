"""Per-call wall time of the reductions: the direct route, the general path
and NumPy, interleaved in one process at 1 thread (medians).

    python bench/reduction_call_overhead.py                # (1024, 4096) and (64, 64) float32
    python bench/reduction_call_overhead.py --shape 4194304 --rounds 40

The four variants of a call run back to back, their order rotating from
round to round (what runs just before a call moves its time by a few
percent).

The general path is timed by switching the direct route off between calls
(``plain_float`` refusing every array), so both run the same kernels on the
same data. On a shape under 16 MiB, 32 MiB are touched before each call, so
that its Python steps run from the L3 as they do after a large call. The
"kernel" column is the accumulation kernel alone into a preallocated
output (reductions only). Wall-clock on a shared machine: noisy; compare
columns of one run.
"""
import argparse
import time

import numpy as np

import normops
from normops import _isa, arg_reduce, numpy_reductions, reduction
from normops.reference import _reduce as spec

_MODULES = (reduction, numpy_reductions, arg_reduce)
_PLAIN_FLOAT = reduction.plain_float


def _route(direct):
    for module in _MODULES:
        module.plain_float = _PLAIN_FLOAT if direct else (lambda x: False)


def _kernel(a, axes, op):
    """The accumulation kernel alone (None when the layout needs a copy)."""
    perm, O, R, C, _ = spec.geometry(a.shape, frozenset(axes), False)
    if perm is not None:
        return None
    out = np.empty((O, C), a.dtype)
    return lambda: _isa.kernels.reduce_accumulate(a, out, O, R, C, op, None, 1)


def cases(a):
    nd = a.ndim
    ax0 = np.array([0])
    return [
        ("sum(a, axis=0)", lambda: normops.sum(a, axis=0), lambda: np.sum(a, axis=0), _kernel(a, [0], spec.SUM)),
        ("sum(a)", lambda: normops.sum(a), lambda: np.sum(a), _kernel(a, range(nd), spec.SUM)),
        ("max(a, axis=0)", lambda: normops.max(a, axis=0), lambda: np.max(a, axis=0),
         _kernel(a, [0], spec.MAX_NAN)),
        ("argmax(a, axis=-1)", lambda: normops.argmax(a, axis=-1), lambda: np.argmax(a, axis=-1), None),
        ("reduce_sum(a, [0])", lambda: normops.reduce_sum(a, ax0), lambda: np.sum(a, axis=0, keepdims=True),
         _kernel(a, [0], spec.SUM)),
        ("reduce_log_sum_exp(a)", lambda: normops.reduce_log_sum_exp(a), None, None),
    ]


def measure(shape, rounds, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    flush = None if a.nbytes >= 16 << 20 else np.ones(8 << 20, np.float32)
    times = {}
    with normops.config(n_threads=1):
        for r in range(rounds):
            for name, call, numpy_call, kernel in cases(a):
                variants = [("general", call), ("direct", call), ("numpy", numpy_call), ("kernel", kernel)]
                for column, f in variants[r % 4:] + variants[:r % 4]:  # each takes each place in turn
                    if f is None:
                        continue
                    _route(column != "general")
                    if flush is not None:
                        flush += 1.0
                    t0 = time.perf_counter_ns()
                    f()
                    times.setdefault((name, column), []).append((time.perf_counter_ns() - t0) / 1e3)
    _route(True)
    return {key: float(np.median(v)) for key, v in times.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", action="append", help="e.g. 1024x4096 (repeatable)")
    parser.add_argument("--rounds", type=int, default=0, help="interleaved rounds (default: 30 large, 300 small)")
    args = parser.parse_args(argv)
    shapes = args.shape or ["1024x4096", "64x64"]
    columns = ("general", "direct", "numpy", "kernel")
    for text in shapes:
        shape = tuple(int(s) for s in text.split("x"))
        large = np.prod(shape) * 4 >= 16 << 20
        rounds = args.rounds or (30 if large else 300)
        medians = measure(shape, rounds)
        print(f"float32 {shape}, 1 thread, medians of {rounds} interleaved calls, µs")
        print(f"{'call':24s}" + "".join(f"{c:>10s}" for c in columns))
        for name, *_ in cases(np.zeros(shape, np.float32)):
            print(f"{name:24s}" + "".join(
                f"{medians[(name, c)]:10.1f}" if (name, c) in medians else f"{'-':>10s}" for c in columns))
        print()


if __name__ == "__main__":
    main()
