"""One core kept busy by another process, for ``python -m normops bench --busy-core``.

A multi-threaded call is only as fast as its slowest thread: when another
process (a notebook's other kernel, a dask worker, a build) keeps one core
busy, a thread of ours that lands there waits for the scheduler. The busy
process here is a Python loop pinned to one core with
``os.sched_setaffinity`` at normal priority, the way such a neighbour
behaves; the benchmark process itself is not pinned.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time

__all__ = ["busy_core", "BUSY_LOOP"]

#: the busy process: pin itself to one core, then spin; it also ends by
#: itself when its parent is gone (killed without running its cleanup)
BUSY_LOOP = (
    "import os, sys\n"
    "cpu, parent = int(sys.argv[1]), os.getppid()\n"
    "if hasattr(os, 'sched_setaffinity'):\n"
    "    os.sched_setaffinity(0, {cpu})\n"
    "sys.stdout.write('ready\\n'); sys.stdout.flush()\n"
    "while os.getppid() == parent:\n"
    "    for _ in range(1000000):\n"
    "        pass\n"
)


def _last_cpu() -> int:
    try:
        return max(os.sched_getaffinity(0))
    except AttributeError:  # not Linux: no pinning, the loop still loads a core
        return 0


@contextlib.contextmanager
def busy_core(cpu: int | None = None, python: str | None = None):
    """Run a process spinning on core `cpu` (default: the last usable one)
    for the duration of the ``with`` block; it is killed on the way out,
    whatever ends the block (an exception, Ctrl-C). Yields
    ``{"cpu": cpu, "pid": pid}``."""
    cpu = _last_cpu() if cpu is None else int(cpu)
    proc = subprocess.Popen([python or sys.executable, "-c", BUSY_LOOP, str(cpu)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
    try:
        proc.stdout.readline()  # pinned and spinning from here on
        time.sleep(0.05)
        yield {"cpu": cpu, "pid": proc.pid}
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
