"""Per-call wall time of the reductions on one thread, interleaved in one
process (medians), float32:

1. every ONNX-named reduction function (``normops.ops.reduce_*``,
   ``arg_max``/``arg_min``, ``cum_sum``/``cum_prod``) on a small input
   (default 4x8; the target is at most 1.5 µs);
2. the NumPy/SciPy-style functions against the NumPy/SciPy function they
   mirror, same arguments, at each shape (the ratio NumPy time / normops
   time: at least 1 means normops is at least as fast).

    python bench/reduction_call_overhead.py
    python bench/reduction_call_overhead.py --shape 4x8 --shape 1024x4096 --rounds 41

The calls of a section run round-robin, their order rotating from round to
round (what runs just before a call moves its time by a few percent). A
sample is the mean of a batch of calls lasting about 50 µs (one call above
that); each figure is the median of the samples. Wall-clock on a shared
machine: compare columns of one run, and give the load (``uptime``).
"""
import argparse
import os
import time

import numpy as np

import normops
import normops.ops as ops

try:
    from scipy.special import logsumexp as scipy_logsumexp
except ImportError:  # optional: the logsumexp row is left out
    scipy_logsumexp = None


def named_calls(x):
    """(label, call) of every ONNX-named reduction function on x."""
    p = np.abs(x) + np.float32(0.5)  # positive: ReduceLogSum
    return [
        ("reduce_sum(x, [1])", lambda: ops.reduce_sum(x, [1])),
        ("reduce_mean(x, [1])", lambda: ops.reduce_mean(x, [1])),
        ("reduce_max(x, [1])", lambda: ops.reduce_max(x, [1])),
        ("reduce_min(x, [0])", lambda: ops.reduce_min(x, [0])),
        ("reduce_prod(x, [1])", lambda: ops.reduce_prod(x, [1])),
        ("reduce_l1(x, [1])", lambda: ops.reduce_l1(x, [1])),
        ("reduce_l2(x, [1])", lambda: ops.reduce_l2(x, [1])),
        ("reduce_sum_square(x, [1])", lambda: ops.reduce_sum_square(x, [1])),
        ("reduce_log_sum(p, [1])", lambda: ops.reduce_log_sum(p, [1])),
        ("reduce_log_sum_exp(x, [1])", lambda: ops.reduce_log_sum_exp(x, [1])),
        ("reduce_sum(x)", lambda: ops.reduce_sum(x)),
        ("arg_max(x, axis=1)", lambda: ops.arg_max(x, axis=1)),
        ("arg_min(x)", lambda: ops.arg_min(x)),
        ("cum_sum(x, 1)", lambda: ops.cum_sum(x, 1)),
        ("cum_prod(x, 0)", lambda: ops.cum_prod(x, 0)),
    ]


def numpy_pairs(x, axis):
    """(label, normops call, NumPy/SciPy call) on x along ``axis``."""
    q = np.float32(1) + x * np.float32(1e-3)  # products that neither overflow nor underflow
    pairs = [
        ("sum", lambda: normops.sum(x, axis=axis), lambda: np.sum(x, axis=axis)),
        ("mean", lambda: normops.mean(x, axis=axis), lambda: np.mean(x, axis=axis)),
        ("max", lambda: normops.max(x, axis=axis), lambda: np.max(x, axis=axis)),
        ("min", lambda: normops.min(x, axis=axis), lambda: np.min(x, axis=axis)),
        ("prod", lambda: normops.prod(q, axis=axis), lambda: np.prod(q, axis=axis)),
        ("argmax", lambda: normops.argmax(x, axis=axis), lambda: np.argmax(x, axis=axis)),
        ("argmin", lambda: normops.argmin(x, axis=axis), lambda: np.argmin(x, axis=axis)),
        ("cumsum", lambda: normops.cumsum(x, axis=axis), lambda: np.cumsum(x, axis=axis)),
        ("cumprod", lambda: normops.cumprod(q, axis=axis), lambda: np.cumprod(q, axis=axis)),
    ]
    if scipy_logsumexp is not None:
        pairs.append(("logsumexp", lambda: normops.logsumexp(x, axis=axis),
                      lambda: scipy_logsumexp(x, axis=axis)))
    return pairs


def _batch(call):
    """Calls per sample: about 50 µs of them (at least one)."""
    call()
    t0 = time.perf_counter_ns()
    call()
    once = max(time.perf_counter_ns() - t0, 1)
    return max(1, min(1000, 50_000 // once))


def interleaved(calls, rounds):
    """Median µs per call of each (key, call), round-robin, rotating."""
    batches = {key: _batch(call) for key, call in calls}
    samples = {key: [] for key, _ in calls}
    for r in range(rounds):
        k = r % len(calls)
        for key, call in calls[k:] + calls[:k]:
            n = batches[key]
            t0 = time.perf_counter_ns()
            for _ in range(n):
                call()
            samples[key].append((time.perf_counter_ns() - t0) / n / 1e3)
    return {key: float(np.median(v)) for key, v in samples.items()}


def _shape(text):
    return tuple(int(s) for s in text.split("x"))


def _axis(text):
    return None if text == "None" else int(text)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--named-shape", default="4x8", help="input of the ONNX-named calls (default 4x8)")
    parser.add_argument("--shape", action="append", help="NumPy-style shapes (repeatable; default 4x8, "
                        "64x64, 256x1024, 1024x4096)")
    parser.add_argument("--axis", action="append", help="axes (repeatable; default None, 0, -1)")
    parser.add_argument("--rounds", type=int, default=41, help="interleaved rounds (default 41)")
    parser.add_argument("--skip-named", action="store_true")
    args = parser.parse_args(argv)
    shapes = [_shape(s) for s in (args.shape or ["4x8", "64x64", "256x1024", "1024x4096"])]
    axes = [_axis(a) for a in (args.axis or ["None", "0", "-1"])]
    rng = np.random.default_rng(0)
    print(f"normops {normops.__version__}, numpy {np.__version__}, load {os.getloadavg()[0]:.2f}, 1 thread")
    with normops.config(n_threads=1):
        if not args.skip_named:
            shape = _shape(args.named_shape)
            x = rng.standard_normal(shape).astype(np.float32)
            medians = interleaved(named_calls(x), args.rounds)
            print(f"\nONNX-named functions, float32 {shape}: median µs per call of {args.rounds} interleaved rounds")
            for key, value in medians.items():
                print(f"  {key:28s} {value:8.2f}")
        for shape in shapes:
            x = rng.standard_normal(shape).astype(np.float32)
            rounds = args.rounds if x.size < 1 << 20 else max(11, args.rounds // 3)
            print(f"\nNumPy-style, float32 {shape}: median µs per call ({rounds} interleaved rounds); "
                  f"ratio = NumPy / normops (>= 1: normops at least as fast)")
            print(f"  {'function':10s} {'axis':>5s} {'normops':>10s} {'NumPy':>10s} {'ratio':>7s}")
            for axis in axes:
                calls = []
                for name, ours, theirs in numpy_pairs(x, axis):
                    calls += [((name, "normops"), ours), ((name, "numpy"), theirs)]
                medians = interleaved(calls, rounds)
                for name, _, _ in numpy_pairs(x, axis):
                    a, b = medians[(name, "normops")], medians[(name, "numpy")]
                    print(f"  {name:10s} {str(axis):>5s} {a:10.2f} {b:10.2f} {b / a:7.2f}")


if __name__ == "__main__":
    main()
