"""Throughput of ``normops.map_batch`` at 1 and 2 workers, and of calls
made from several Python threads at once (the thread budget).

Each case is a batch of medium arrays (256 x 1024 float32, 1 MiB each, a
size where one call is worth a thread) run through ``normops.map_batch``
with ``n_threads=1`` per call; the workers of the pool run the kernels at
the same time because the kernels release the GIL. The figure is the best
of `repeats` runs after a warm-up run, in input elements per ns, and the
speedup of each worker count over 1 worker. The results of every run are
compared bit for bit with those of 1 worker.

``measure_pool`` measures the thread budget (docs/design.md, "Thread budget"): P Python threads,
one persistent pool each, calling LayerNormalization 1024x4096 at the
default thread count, against the same calls made one after another by one
thread; and the same with ``n_threads=1`` for reference. The ratio of the
throughputs should be at least 1: calls from several threads lose nothing
to oversubscription.

Runs in the benchmark's own process (``python -m normops bench --batch``);
``tools/thread_tail.py --pool`` runs ``measure_pool`` on two kernel builds.
"""

from __future__ import annotations

import time

import numpy as np

__all__ = ["measure_batch", "measure_pool", "batch_lines", "pool_lines", "METHOD", "POOL_METHOD"]

METHOD = (
    "normops.map_batch over {arrays} float32 arrays of {rows}x{cols} (n_threads=1 per call), "
    "best of {repeats} runs after a warm-up, worker counts interleaved, in the benchmark's "
    "process; results compared bit for bit with 1 worker."
)


POOL_METHOD = (
    "{calls} LayerNormalization {rows}x{cols} float32 calls shared by P Python threads "
    "(one persistent, warmed-up ThreadPoolExecutor per P), against the same calls made one "
    "after another by one thread at the default thread count ({threads}); the median time of "
    "{rounds} rounds, the variants' order rotated every round (the first calls after a change "
    "of pool are slower for a few ms); in the benchmark's process."
)


def _cases(cols):
    import normops

    scale, bias = np.ones(cols, np.float32), np.zeros(cols, np.float32)
    return [
        ("LayerNormalization", normops.layer_normalization, (scale, bias), {}),
        ("Softmax", normops.softmax, (), {"axis": -1}),
    ]


def measure_batch(workers=(1, 2), arrays: int = 32, rows: int = 256, cols: int = 1024,
                  repeats: int = 5) -> dict:
    """Batch throughput per operator and worker count.

    Returns ``{"method": str, "workers": [int], "cases": {op: {"el_per_ns":
    {w: float}, "speedup": {w: float}, "identical": bool}}}``.
    """
    import normops

    rng = np.random.default_rng(0)
    batch = [rng.standard_normal((rows, cols), dtype=np.float32) for _ in range(arrays)]
    elements = arrays * rows * cols
    workers = sorted(set(int(w) for w in workers) | {1})
    out = {}
    for op, func, args, kwargs in _cases(cols):
        def run(w):
            return normops.map_batch(func, batch, *args, max_workers=w, n_threads=1, **kwargs)

        results = {w: run(w) for w in workers}  # warm-up, and the bits to compare
        best = dict.fromkeys(workers, float("inf"))
        for _ in range(repeats):
            for w in workers:  # interleaved, so a change of load hits every count alike
                t0 = time.perf_counter()
                run(w)
                best[w] = min(best[w], time.perf_counter() - t0)
        rates = {w: elements / best[w] / 1e9 for w in workers}
        identical = all(np.array_equal(a.view(np.uint32), b.view(np.uint32))
                        for w in workers for a, b in zip(results[1], results[w]))
        out[op] = {"el_per_ns": rates, "speedup": {w: rates[w] / rates[1] for w in workers},
                   "identical": identical}
    return {"method": METHOD.format(arrays=arrays, rows=rows, cols=cols, repeats=repeats),
            "workers": workers, "cases": out}


def measure_pool(pools=(2, 4), rounds: int = 15, calls: int = 80, rows: int = 1024,
                 cols: int = 4096, builds=None) -> dict:
    """Throughput of calls from P Python threads against the same calls
    made serially, at the default thread count and at ``n_threads=1``.

    The pools are created once and warmed up: a thread's first call pays
    for its new malloc arena (a fresh output faulted in, 45-120 ms measured
    for 16 MiB) and its OpenMP team, which a pool made anew for every round
    would measure instead of the calls. A round's first calls cost more
    than the rest: the first thread to call takes both cores (nothing else
    runs yet), and the next one's call then shares them with its team;
    with 10 calls per thread that cost 3-10% of the round, with 40 about 1%
    (measured 3 December 2026), so a round has 80 calls by default: a pool
    kept busy, not a short burst. ``builds`` maps a label to a
    kernel build (``normops._isa.load``, or ``routes.KernelBuild`` of
    another build's module) switched in for its variants
    (tools/thread_tail.py compares two builds); by default the loaded one.

    Returns ``{"method": str, "pools": [P], "builds": {label: {"serial_ms":
    float, "default": {P: ratio}, "one_thread": {P: ratio}}}}``: ratio =
    serial time per call / time per call from P threads (above 1: faster;
    P threads make calls // P calls each).
    """
    import concurrent.futures

    import normops
    from normops import _isa

    rng = np.random.default_rng(19)
    x = rng.standard_normal((rows, cols), dtype=np.float32)
    w = rng.standard_normal(cols, dtype=np.float32)
    pools = sorted(set(int(p) for p in pools) - {1})
    if not pools or calls < max(pools):
        raise ValueError(f"measure_pool needs a pool of 2 or more threads and at least as many calls "
                         f"({calls} calls for pools {pools})")
    builds = builds or {"current": _isa.kernels}
    loaded = _isa.kernels

    def run(args):
        count, n_threads = args
        for _ in range(count):
            normops.layer_normalization(x, w, n_threads=n_threads)

    executors = {p: concurrent.futures.ThreadPoolExecutor(p) for p in (1, *pools)}
    variants = [(p, t) for p in (1, *pools) for t in (None, 1)]
    units = [(v, p, t) for v in builds for p, t in variants]
    times = {u: [] for u in units}
    try:
        for v, p, t in units:  # warm-up: every pool thread's first calls
            _isa.switch_to(builds[v])
            list(executors[p].map(run, [(3, t)] * p))
        for r in range(rounds):
            k = r % len(units)
            for v, p, t in units[k:] + units[:k]:
                _isa.switch_to(builds[v])
                start = time.perf_counter()
                list(executors[p].map(run, [(calls // p, t)] * p))
                times[(v, p, t)].append(time.perf_counter() - start)
    finally:
        _isa.switch_to(loaded)
        for executor in executors.values():
            executor.shutdown()

    def ratio(serial, v, p, t):  # per call: P threads make calls // P calls each
        return serial / calls / (float(np.median(times[(v, p, t)])) / (calls // p * p))

    out = {}
    for v in builds:
        serial = float(np.median(times[(v, 1, None)]))
        out[v] = {"serial_ms": serial * 1e3,
                  "default": {p: ratio(serial, v, p, None) for p in pools},
                  "one_thread": {p: ratio(serial, v, p, 1) for p in (1, *pools)}}
    method = POOL_METHOD.format(calls=calls, rows=rows, cols=cols,
                                threads=normops.get_num_threads(), rounds=rounds)
    return {"method": method, "pools": pools, "builds": out}


def pool_lines(pool) -> list[str]:
    """Report lines for a ``measure_pool`` result."""
    lines = []
    for v, r in pool["builds"].items():
        label = "" if len(pool["builds"]) == 1 else f" ({v})"
        # (thread counts are string keys once read back from results.json)
        default, ones = ({int(p): x for p, x in r[k].items()} for k in ("default", "one_thread"))
        default = ", ".join(f"{p} Python threads {default[p]:.2f}x" for p in sorted(default))
        ones = ", ".join(f"{p} {ones[p]:.2f}x" for p in sorted(ones))
        lines.append(f"calls from Python threads{label}: serial {r['serial_ms']:.1f} ms; throughput "
                     f"against serial at the default thread count: {default}; with n_threads=1 "
                     f"from 1, 2, ... threads: {ones}")
    lines.append("Python threads method: " + pool["method"])
    return lines


def batch_lines(meta) -> list[str]:
    """Report lines for ``meta["batch"]`` (none when it was not measured)."""
    b = meta.get("batch")
    if not b:
        return []
    lines = []
    for op, r in b["cases"].items():
        parts = [f"{w} worker(s) {r['el_per_ns'][w]:.3f} el/ns (x{r['speedup'][w]:.2f})"
                 for w in sorted(r["el_per_ns"], key=int)]
        lines.append(f"map_batch {op}: " + ", ".join(parts)
                     + ("" if r["identical"] else " -- RESULTS DIFFER"))
    lines.append("map_batch method: " + b["method"])
    if b.get("pool"):
        lines += pool_lines(b["pool"])
    return lines
