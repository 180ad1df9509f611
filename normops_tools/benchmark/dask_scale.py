"""``python -m normops bench --dask``: normops.dask's exact reductions at
scale on a ``distributed.LocalCluster`` (worker processes).

A float32 array (default 2^24 x 64, 4 GiB) is generated chunk by chunk by
dask from each element's position (a gather from a fixed random table), so every chunking holds the
same values and no process ever holds the whole array. For sum over axis 0
and over all axes, max and logsumexp over axis 0, argmax and cumsum along
axis 0 it reports:

- the bits against the in-memory normops call, on a smaller array that fits
  in memory (2^21 x 16 by default), computed on the cluster from a
  misaligned chunking;
- chunking invariance on the large array: three chunkings, identical bits
  (cumsum through a digest of its whole output that does not depend on the
  chunking);
- wall time, normops.dask against dask.array's own reduction on the same
  chunks (the same generation in both, runs interleaved, the ratio of the
  medians), and each worker's peak resident memory during the run.

Long runs: wrap it in ``flock /work/coord/bigmem.lock nice -n 10`` on a
shared machine.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import threading
import time

import numpy as np

_MIX1, _MIX2, _GOLDEN = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB), np.uint64(0x9E3779B97F4A7C15)
_PIECE = 1 << 16  # rows generated at a time (bounds the uint64 temporaries)


def _mix(z):
    """splitmix64's finaliser, element-wise on a uint64 array (in place)."""
    z ^= z >> np.uint64(30)
    z *= _MIX1
    z ^= z >> np.uint64(27)
    z *= _MIX2
    z ^= z >> np.uint64(31)
    return z


#: rows of the table the values repeat from (prime: the period meets the
#: 2^16-term blocks at every offset)
_PERIOD = 65521
_TABLES = {}


def _table(ncols, seed):
    """(_PERIOD, ncols) float32 standard normal values, made once per process."""
    t = _TABLES.get((ncols, seed))
    if t is None:
        t = _TABLES[(ncols, seed)] = np.random.default_rng(seed).standard_normal((_PERIOD, ncols), np.float32)
    return t


def values(rows, cols, ncols, seed=0):
    """The float32 values at ``rows`` x ``cols`` (ranges) of an array with
    ``ncols`` columns: row r is row r mod _PERIOD of a fixed random table,
    shifted by (r // _PERIOD) / 1024 (so the array does not repeat). They
    depend on the position only, and cost a gather to make."""
    r = np.arange(rows.start, rows.stop)
    out = np.take(_table(ncols, seed)[:, cols.start:cols.stop], r % _PERIOD, axis=0)
    out += (r // _PERIOD).astype(np.float32)[:, None] * np.float32(2.0 ** -10)
    return out


def _block(block_info=None, seed=0):
    (r0, r1), (c0, c1) = block_info[None]["array-location"]
    return values(range(r0, r1), range(c0, c1), block_info[None]["shape"][1], seed)


def generated(shape, chunks, seed=0):
    """The dask array of ``values``, made chunk by chunk."""
    import dask.array as da

    return da.map_blocks(_block, seed=seed, chunks=da.core.normalize_chunks(chunks, shape),
                         dtype=np.float32, meta=np.empty((0, 0), np.float32))


def _digest_block(y, block_info=None):
    """Sum over the block of (bits + 1) * weight(flat position), modulo 2^64:
    added over blocks, a digest of the whole array whatever its chunking."""
    (r0, r1), (c0, c1) = block_info[0]["array-location"]
    ncols = block_info[0]["shape"][1]
    bits = y.view(np.uint32 if y.itemsize == 4 else np.uint64).astype(np.uint64)
    total = np.uint64(0)
    with np.errstate(over="ignore"):
        for p in range(0, r1 - r0, _PIECE):
            r = np.arange(r0 + p, min(r0 + p + _PIECE, r1), dtype=np.uint64)
            w = _mix((r[:, None] * np.uint64(ncols) + np.arange(c0, c1, dtype=np.uint64)) * _GOLDEN) | np.uint64(1)
            total += np.add.reduce(((bits[p:p + len(r)] + np.uint64(1)) * w).reshape(-1), dtype=np.uint64)
    return np.full((1, 1), total, np.uint64)


def digest(Y):
    """The chunking-independent digest of a 2-D dask array (lazy, a uint64)."""
    import dask.array as da

    parts = Y.map_blocks(_digest_block, chunks=((1,) * Y.numblocks[0], (1,) * Y.numblocks[1]), dtype=np.uint64,
                         meta=np.empty((0, 0), np.uint64))
    return da.sum(parts, dtype=np.uint64)


def digest_of(y):
    """``digest`` of an in-memory 2-D array."""
    return _digest_block(y, [{"array-location": [(0, y.shape[0]), (0, y.shape[1])], "shape": y.shape}])[0, 0]


# ------------------------------------------------------------- operations

def _dask_logsumexp(X):
    import dask.array as da

    m = X.max(axis=0, keepdims=True)
    return (m + da.log(da.exp(X - m).sum(axis=0, keepdims=True)))[0]


def operations():
    """(name, normops.dask call, dask.array call, in-memory normops call);
    cumsum's calls end in the digest (its output is as large as the input)."""
    import dask.array as da

    import normops
    import normops.dask as nd

    return [
        ("sum, axis 0", lambda X: nd.sum(X, axis=0, n_threads=1), lambda X: da.sum(X, axis=0),
         lambda x: normops.sum(x, axis=0)),
        ("sum, all axes", lambda X: nd.sum(X, n_threads=1), lambda X: da.sum(X), lambda x: normops.sum(x)),
        ("max, axis 0", lambda X: nd.max(X, axis=0, n_threads=1), lambda X: da.max(X, axis=0),
         lambda x: normops.max(x, axis=0)),
        ("logsumexp, axis 0", lambda X: nd.logsumexp(X, axis=0, n_threads=1), _dask_logsumexp,
         lambda x: normops.logsumexp(x, axis=0)),
        ("argmax, axis 0", lambda X: nd.argmax(X, axis=0, n_threads=1), lambda X: da.argmax(X, axis=0),
         lambda x: normops.argmax(x, axis=0)),
        ("cumsum, axis 0", lambda X: digest(nd.cumsum(X, axis=0, n_threads=1)),
         lambda X: digest(da.cumsum(X, axis=0)), lambda x: digest_of(normops.cumsum(x, axis=0))),
    ]


# ---------------------------------------------------------- worker memory

_PEAK = {"rss": 0, "thread": None}


def _watch():
    import psutil

    me = psutil.Process()
    while True:
        rss = me.memory_info().rss
        if rss > _PEAK["rss"]:
            _PEAK["rss"] = rss
        time.sleep(0.02)


def _reset_peak():
    """(on a worker) start the sampler once; the peak restarts from now."""
    import psutil

    _PEAK["rss"] = psutil.Process().memory_info().rss
    if _PEAK["thread"] is None:
        _PEAK["thread"] = threading.Thread(target=_watch, daemon=True)
        _PEAK["thread"].start()
    return _PEAK["rss"]


def _read_peak():
    return _PEAK["rss"]


def _timed(client, lazy):
    """(result, seconds, the workers' peak RSS in bytes) of one compute."""
    client.run(_reset_peak)
    t0 = time.perf_counter()
    result = client.compute(lazy, sync=True)
    seconds = time.perf_counter() - t0
    peaks = client.run(_read_peak)
    return np.asarray(result), seconds, sorted(peaks.values())


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# ------------------------------------------------------------------- run

def run(rows=1 << 24, cols=64, check_rows=1 << 21, check_cols=16, reps=3, workers=2, memory_limit="8GiB",
        select=None, out=print):
    """The whole measurement; prints markdown lines through ``out`` and
    returns the records."""
    import dask
    from distributed import Client, LocalCluster

    ops = [op for op in operations() if select is None or re.search(select, op[0])]
    gib = rows * cols * 4 / 2 ** 30
    chunkings = [(1 << 18, cols // 2), (300_000, cols), (123_457, 3 * cols // 8)]
    records = {"rows": rows, "cols": cols, "ops": {}}
    dask.config.set({"distributed.worker.daemon": False})
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, memory_limit=memory_limit,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        out(f"LocalCluster: {workers} worker processes x 1 thread, memory_limit {memory_limit}; "
            f"load before: {os.getloadavg()[0]:.1f}")
        # 1. the in-memory bits, on an array that fits in memory
        x = values(range(check_rows), range(check_cols), check_cols)
        Xs = generated((check_rows, check_cols), (100_003, check_cols // 2 + 1))
        out(f"\nin-memory check: {check_rows} x {check_cols} float32 ({x.nbytes / 2 ** 20:.0f} MiB), "
            f"chunks (100003, {check_cols // 2 + 1})")
        for name, ours, _, memory in ops:
            got = np.asarray(client.compute(ours(Xs), sync=True))
            ok = _same(got, memory(x))
            records["ops"].setdefault(name, {})["in_memory_bits"] = ok
            out(f"- {name}: {'bits equal' if ok else 'BITS DIFFER'}")
        del x
        # 2. the large array: timings on the first chunking, interleaved
        out(f"\nlarge: {rows} x {cols} float32 ({gib:.2f} GiB), generated by the workers")
        for name, ours, theirs, _ in ops:
            rec = records["ops"][name]
            # the sum over all axes is served with chunks spanning the trailing
            # axis (others are joined first): give it those
            first = (chunkings[0][0], cols) if name == "sum, all axes" else chunkings[0]
            X = generated((rows, cols), first)
            chunk_mib = first[0] * first[1] * 4 / 2 ** 20
            times = {"normops": [], "dask": []}
            peaks = {"normops": 0, "dask": 0}
            for rep in range(reps):
                order = (("normops", ours), ("dask", theirs))
                for who, call in (order if rep % 2 == 0 else order[::-1]):
                    result, seconds, peak = _timed(client, call(X))
                    times[who].append(seconds)
                    peaks[who] = max(peaks[who], peak[-1])
                    if who == "normops":
                        rec.setdefault("large", []).append(result)
            a, b = statistics.median(times["normops"]), statistics.median(times["dask"])
            rec.update(normops_s=a, dask_s=b, ratio=a / b, peak_normops=peaks["normops"], peak_dask=peaks["dask"])
            out(f"- {name}: normops.dask {a:.1f} s, dask.array {b:.1f} s (medians of {reps}), ratio {a / b:.2f}; "
                f"peak RSS per worker {peaks['normops'] / 2 ** 20:.0f} MiB (dask.array "
                f"{peaks['dask'] / 2 ** 20:.0f} MiB; chunks {first}, {chunk_mib:.0f} MiB); "
                f"load {os.getloadavg()[0]:.1f}")
        # 3. chunking invariance on the large array
        out(f"\nchunking invariance: chunks {', '.join(str(c) for c in chunkings)}")
        for name, ours, _, _ in ops:
            rec = records["ops"][name]
            results = [rec["large"][0]]
            for chunks in chunkings[1:]:
                result, seconds, peak = _timed(client, ours(generated((rows, cols), chunks)))
                results.append(result)
                rec.setdefault("other_chunkings_s", []).append(seconds)
            same = all(_same(results[0], r) for r in results[1:] + rec["large"][1:])
            rec["invariant"] = same
            out(f"- {name}: {'identical bits' if same else 'BITS DIFFER'} over the three chunkings "
                f"({', '.join(f'{s:.1f} s' for s in rec['other_chunkings_s'])} for the other two)")
            del rec["large"]
    out(f"\nload after: {os.getloadavg()[0]:.1f}")
    return records


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m normops bench --dask",
                                description="normops.dask's exact reductions on a LocalCluster at scale")
    p.add_argument("--rows", type=int, default=1 << 24, help="rows of the large array (default 2^24)")
    p.add_argument("--cols", type=int, default=64, help="columns of the large array (default 64: 4 GiB)")
    p.add_argument("--check-rows", type=int, default=1 << 21, help="rows of the in-memory check (default 2^21)")
    p.add_argument("--reps", type=int, default=3, help="timed runs per side (default 3)")
    p.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--memory-limit", default="8GiB", help="per worker (default 8GiB)")
    p.add_argument("--ops", metavar="REGEX", default=None, help="only the operations whose name matches")
    args = p.parse_args(argv)
    records = run(args.rows, args.cols, args.check_rows, reps=args.reps, workers=args.workers,
                  memory_limit=args.memory_limit, select=args.ops, out=lambda line: print(line, flush=True))
    ok = all(r.get("in_memory_bits") and r.get("invariant") for r in records["ops"].values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
