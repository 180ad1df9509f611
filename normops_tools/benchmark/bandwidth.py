"""This machine's memory bandwidth, measured with NumPy alone.

The memory-bound limit of a normalisation is the time a copy of its data
would take: it must read X once and write Y once, which is what a copy
does. So the limit of a case is ``bytes_moved / copy bandwidth``, and the
report gives each case's ``limit time / measured time`` (1.0 = as fast as a
copy of the same bytes from and to main memory).

Method (no normops code involved):

- arrays of `size_mib` MiB (default 512, twice the 260 MiB last-level cache
  this kind of host reports), allocated and written once before timing so
  no page fault is timed;
- read: ``np.maximum.reduce`` over a float32 array. NumPy vectorises it
  and it runs several times faster in cache than from memory, so from
  memory it measures reading. (``np.add.reduce`` is not used: its pairwise
  summation is compute-bound here, well under the read rate.)
- copy: ``np.copyto(dst, src)`` between two float32 arrays (a memcpy);
  bytes = read + write = ``2 * src.nbytes``;
- T threads: the arrays are cut into T contiguous parts and T Python
  threads each run the same NumPy call on their part (NumPy releases the
  GIL inside these loops), timed from the common start to the last finish;
- each figure is the best of `repeats` runs after one warm-up run (the
  attainable rate, as STREAM reports), in GB/s (1e9 bytes per second).
"""

from __future__ import annotations

import threading
import time

import numpy as np

__all__ = ["measure_bandwidth", "METHOD"]

METHOD = (
    "NumPy only, no normops code: read = np.maximum.reduce over a float32 "
    "array, copy = np.copyto between two float32 arrays (bytes = read + "
    "write); arrays of {size_mib} MiB, pre-touched; T threads run the same "
    "call on T contiguous parts (NumPy releases the GIL); best of {repeats} "
    "runs after a warm-up, in GB/s."
)


def _parallel(fn, parts: int) -> float:
    """Wall time of fn(0..parts-1) run in `parts` threads started together."""
    if parts == 1:
        t0 = time.perf_counter()
        fn(0)
        return time.perf_counter() - t0
    barrier = threading.Barrier(parts + 1)
    done = []

    def body(i):
        barrier.wait()
        fn(i)
        done.append(time.perf_counter())

    threads = [threading.Thread(target=body, args=(i,)) for i in range(parts)]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    return max(done) - t0


def measure_bandwidth(threads=(1, 2), size_mib: int = 512, repeats: int = 5) -> dict:
    """Read and copy bandwidth in GB/s for each thread count.

    Returns ``{"method": str, "size_mib": int, "read_gbs": {T: float},
    "copy_gbs": {T: float}}`` (keys are ints).
    """
    n = size_mib * 2**20 // 4
    src = np.empty(n, dtype=np.float32)
    src.fill(1.0)
    dst = np.empty_like(src)
    dst.fill(0.0)
    read, copy = {}, {}
    for t in sorted(set(int(x) for x in threads)):
        bounds = [(i * n // t, (i + 1) * n // t) for i in range(t)]

        def do_read(i, b=bounds):
            np.maximum.reduce(src[b[i][0]:b[i][1]])

        def do_copy(i, b=bounds):
            lo, hi = b[i]
            np.copyto(dst[lo:hi], src[lo:hi])

        for fn, store, nbytes in ((do_read, read, src.nbytes), (do_copy, copy, 2 * src.nbytes)):
            _parallel(fn, t)  # warm-up
            best = min(_parallel(fn, t) for _ in range(repeats))
            store[t] = nbytes / best / 1e9
    return {
        "method": METHOD.format(size_mib=size_mib, repeats=repeats),
        "size_mib": size_mib,
        "read_gbs": read,
        "copy_gbs": copy,
    }


def copy_limit_fraction(bytes_moved: int, median_ns: float, copy_gbs: float) -> float:
    """limit time / measured time, the limit being a copy of the same bytes."""
    return (bytes_moved / copy_gbs) / median_ns  # GB/s == bytes/ns
