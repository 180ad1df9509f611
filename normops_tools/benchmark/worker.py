"""One benchmark process: one runtime, one thread count, some cases.

Run as ``python -m normops_tools.benchmark.worker`` with a JSON spec on stdin::

    {"runtime": "onnxruntime", "threads": 2, "seed": 0,
     "warmup": 50, "repeat": 1000, "budget": 0.3, "min_samples": 5,
     "jobs": [{"case": "LayerNormalization_32x896", "dtype": "float32"}]}

It prints one JSON object on stdout: the runtime's versions, and per job the
median and quartiles of the per-call time in nanoseconds, the number of
samples, the calls per sample, and the largest absolute difference from a
float64 evaluation of the case (a sanity check that every runtime computes
the same thing), or the reason the job was skipped.

The parent sets OMP_NUM_THREADS (and friends) to the thread count in this
process's environment before it starts.
"""

from __future__ import annotations

import gc
import json
import math
import os
import sys
import time
import traceback

import numpy as np

from normops_tools.cases import get_case
from .runtimes import CaseUnsupported, RuntimeUnavailable, get_runtime, output_array, prepare

#: Calls faster than this are timed in batches, so the clock's own cost
#: (tens of ns) stays below 1% of a sample; slower calls are timed one by
#: one, so that a p90 is a per-call tail.
BATCH_TARGET_NS = 10_000
#: How long a batch of such short calls lasts. Interleaved, the first call
#: of a batch follows another runtime's calls and runs with cold caches and
#: branch predictors (about 2 µs more on a 1 µs call here); in a 10 µs
#: batch that would be a fifth of every figure, which measures the switch
#: between libraries rather than the call.
SHORT_BATCH_NS = 50_000


def measure(fn, *, warmup: int, repeat: int, budget: float, min_samples: int = 5) -> dict:
    """Time `fn()`: warm-up, then samples until `repeat` or `budget`.

    Warm-up runs `warmup` calls, stopping early once a quarter of the budget
    is spent (at least 2 calls). A sample is one call, or a batch of calls
    when one call takes under `BATCH_TARGET_NS`, divided by the batch size.
    Sampling stops after `repeat` samples or when the budget is spent, and
    never before `min_samples`. The garbage collector is off while timing.
    """
    clock = time.perf_counter_ns
    budget_ns = int(budget * 1e9)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = clock()
        n = 0
        while n < max(2, warmup):
            fn()
            n += 1
            if n >= 2 and clock() - start > budget_ns // 4:
                break
        inner = _batch_size(fn)
        samples = []
        deadline = clock() + budget_ns
        if inner == 1:
            while len(samples) < repeat:
                t0 = clock()
                fn()
                t1 = clock()
                samples.append(t1 - t0)
                if t1 > deadline and len(samples) >= min_samples:
                    break
        else:
            rng = range(inner)
            while len(samples) < repeat:
                t0 = clock()
                for _ in rng:
                    fn()
                t1 = clock()
                samples.append((t1 - t0) / inner)
                if t1 > deadline and len(samples) >= min_samples:
                    break
    finally:
        if gc_was_enabled:
            gc.enable()
    arr = np.asarray(samples, dtype=np.float64)
    q1, med, q3 = np.percentile(arr, [25, 50, 75])
    return {
        "median_ns": float(med),
        "q1_ns": float(q1),
        "q3_ns": float(q3),
        "min_ns": float(arr.min()),
        "samples": int(arr.size),
        "inner": inner,
        "warmup_calls": n,
    }


def _check(case, inputs, runtime, result, ref=None) -> float | None:
    """Largest |runtime - float64 NumPy| over the output (NaN-aware)."""
    if case.numpy_fn is None:
        return None
    try:
        got = output_array(runtime, case, result).astype(np.float64)
        if ref is None:
            ref = case.numpy_fn(inputs, case.attributes, acc=np.float64)
        if got.shape != ref.shape:
            return float("inf")
        diff = np.abs(got - ref)
        return float(np.nanmax(diff)) if diff.size else 0.0
    except Exception:
        return None


def run_spec(spec: dict) -> dict:
    runtime = get_runtime(spec["runtime"])
    threads = int(spec.get("threads", 1))
    out = {
        "runtime": runtime.name,
        "threads": threads,
        "pid": os.getpid(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "versions": {},
        "skipped": None,
        "results": [],
    }
    try:
        runtime.setup(threads)
    except RuntimeUnavailable as exc:
        out["skipped"] = str(exc)
        return out
    out["versions"] = runtime.versions()
    out["versions"]["python"] = sys.version.split()[0]
    out["versions"]["numpy"] = np.__version__
    for job in spec["jobs"]:
        case = get_case(job["case"])
        dtype = job["dtype"]
        res = {"case": case.name, "dtype": dtype, "error": None}
        try:
            inputs = case.inputs(dtype, int(spec.get("seed", 0)))
            fn = prepare(runtime, case, inputs, threads)
            first = fn()
            if spec.get("check", True):
                res["max_abs_diff"] = _check(case, inputs, runtime, first)
            del first
            res.update(measure(
                fn,
                warmup=int(spec.get("warmup", 50)),
                repeat=int(spec.get("repeat", 1000)),
                budget=float(spec.get("budget", 0.3)),
                min_samples=int(spec.get("min_samples", 5)),
            ))
        except (CaseUnsupported, RuntimeUnavailable) as exc:
            res["error"] = str(exc)
        except NotImplementedError as exc:  # e.g. normops.UnsupportedError
            res["error"] = f"{type(exc).__name__}: {exc}"
        except Exception as exc:
            res["error"] = f"{type(exc).__name__}: {exc}"
            traceback.print_exc(file=sys.stderr)
        out["results"].append(res)
    return out


def _batch_size(fn) -> int:
    """Calls per sample: 1 from BATCH_TARGET_NS a call, else enough that a
    sample lasts SHORT_BATCH_NS (the time per call estimated from a burst of
    three)."""
    clock = time.perf_counter_ns
    t0 = clock()
    fn()
    fn()
    fn()
    est = max(1, (clock() - t0) // 3)
    return 1 if est >= BATCH_TARGET_NS else int(math.ceil(SHORT_BATCH_NS / est))


def _stats(samples) -> dict:
    arr = np.asarray(samples, dtype=np.float64)
    q1, med, q3, p90 = np.percentile(arr, [25, 50, 75, 90])
    return {"median_ns": float(med), "q1_ns": float(q1), "q3_ns": float(q3), "p90_ns": float(p90),
            "min_ns": float(arr.min()), "samples": int(arr.size)}


def interleave(calls: dict, *, warmup: int, repeat: int, budget: float, min_samples: int = 5) -> dict:
    """Time the zero-argument callables of `calls` ({name: fn}) alternately.

    Each gets its warm-up (`warmup` calls, at most a quarter of its share
    of the budget) and its batch size (1, or enough calls that a sample
    lasts `SHORT_BATCH_NS`). Then rounds: one sample of each callable per
    round, A B C, B C A, C A B ... (the order rotates so that none always
    follows the same one), until every callable has `repeat` samples or the
    `budget` seconds are spent with at least `min_samples` each. The
    garbage collector is off while timing. Returns {name: statistics in
    ns (median, quartiles, p90, min), samples, inner}.
    """
    clock = time.perf_counter_ns
    names = list(calls)
    budget_ns = int(budget * 1e9)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        inner = {}
        for name in names:
            fn = calls[name]
            start, n = clock(), 0
            while n < max(2, warmup):
                fn()
                n += 1
                if n >= 2 and clock() - start > budget_ns // (4 * len(names)):
                    break
            inner[name] = _batch_size(fn)
        samples = {name: [] for name in names}
        deadline = clock() + budget_ns
        rnd = 0
        while True:
            k = rnd % len(names)
            for name in names[k:] + names[:k]:
                fn, m = calls[name], inner[name]
                if m == 1:
                    t0 = clock()
                    fn()
                    t1 = clock()
                    samples[name].append(t1 - t0)
                else:
                    t0 = clock()
                    for _ in range(m):
                        fn()
                    t1 = clock()
                    samples[name].append((t1 - t0) / m)
            rnd += 1
            if rnd >= repeat or (rnd >= min_samples and clock() > deadline):
                break
    finally:
        if gc_was_enabled:
            gc.enable()
    return {name: dict(_stats(samples[name]), inner=inner[name]) for name in names}


def run_interleaved(spec: dict) -> dict:
    """Every runtime of ``spec["runtimes"]`` in this one process, each job's
    calls alternated between them (see `interleave`)."""
    threads = int(spec.get("threads", 1))
    out = {"mode": "interleave", "runtimes": [], "threads": threads, "pid": os.getpid(),
           "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"), "versions": {}, "skipped": {},
           "results": []}
    runtimes = []
    for name in spec["runtimes"]:
        rt = get_runtime(name)
        try:
            rt.setup(threads)
        except RuntimeUnavailable as exc:
            out["skipped"][name] = str(exc)
            continue
        if hasattr(rt, "spinning"):
            rt.spinning = bool(spec.get("spinning", False))
        out["versions"].update(rt.versions())
        runtimes.append(rt)
    out["runtimes"] = [rt.name for rt in runtimes]
    out["versions"]["python"] = sys.version.split()[0]
    out["versions"]["numpy"] = np.__version__
    for job in spec["jobs"]:
        case = get_case(job["case"])
        dtype = job["dtype"]
        res = {"case": case.name, "dtype": dtype, "runtimes": {}}
        try:
            inputs = case.inputs(dtype, int(spec.get("seed", 0)))
            ref = None
            if spec.get("check", True) and case.numpy_fn is not None:
                ref = case.numpy_fn(inputs, case.attributes, acc=np.float64)
        except Exception as exc:
            res["error"] = f"{type(exc).__name__}: {exc}"
            out["results"].append(res)
            continue
        calls = {}
        for rt in runtimes:
            entry = res["runtimes"][rt.name] = {"error": None}
            try:
                fn = prepare(rt, case, inputs, threads)
                first = fn()
                if ref is not None:
                    entry["max_abs_diff"] = _check(case, inputs, rt, first, ref)
                del first
                calls[rt.name] = fn
            except CaseUnsupported as exc:
                entry["error"] = str(exc)
                entry["unsupported"] = True
            except Exception as exc:
                entry["error"] = f"{type(exc).__name__}: {exc}"
                traceback.print_exc(file=sys.stderr)
        if calls:
            try:
                timed = interleave(
                    calls, warmup=int(spec.get("warmup", 50)), repeat=int(spec.get("repeat", 1000)),
                    budget=float(spec.get("budget", 0.3)), min_samples=int(spec.get("min_samples", 5)))
                for name, stats in timed.items():
                    res["runtimes"][name].update(stats)
            except Exception as exc:
                for name in calls:
                    res["runtimes"][name]["error"] = f"{type(exc).__name__}: {exc}"
                traceback.print_exc(file=sys.stderr)
        del calls, inputs, ref
        gc.collect()
        out["results"].append(res)
    return out


def main() -> int:
    # Anything a library prints on stdout (C or Python) goes to stderr; the
    # only thing on the real stdout is the result.
    result_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    spec = json.load(sys.stdin)
    out = run_interleaved(spec) if spec.get("interleave") else run_spec(spec)
    with os.fdopen(result_fd, "w") as f:
        json.dump(out, f)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
