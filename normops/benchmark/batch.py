"""Throughput of ``normops.map_batch`` at 1 and 2 workers.

Each case is a batch of medium arrays (256 x 1024 float32, 1 MiB each, a
size where one call is worth a thread) run through ``normops.map_batch``
with ``n_threads=1`` per call; the workers of the pool run the kernels at
the same time because the kernels release the GIL. The figure is the best
of `repeats` runs after a warm-up run, in input elements per ns, and the
speedup of each worker count over 1 worker. The results of every run are
compared bit for bit with those of 1 worker.

Runs in the benchmark's own process (``python -m normops bench --batch``).
"""

from __future__ import annotations

import time

import numpy as np

__all__ = ["measure_batch", "batch_lines", "METHOD"]

METHOD = (
    "normops.map_batch over {arrays} float32 arrays of {rows}x{cols} (n_threads=1 per call), "
    "best of {repeats} runs after a warm-up, worker counts interleaved, in the benchmark's "
    "process; results compared bit for bit with 1 worker."
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
    return lines
