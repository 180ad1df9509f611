"""What libgomp's wait policy costs and saves: two processes, interleaved.

    python tools/wait_policy.py [--busy-core] [--rounds N] [--policies A,B]

libgomp reads ``OMP_WAIT_POLICY`` once, when it loads, so two policies
cannot share one process. This script starts one worker process per policy
(``default`` = the variable removed, libgomp's spin-then-sleep; ``active``;
``passive``) and alternates them call block by call block (A, B, A, B ...,
the order swapped every round), so that the machine's slow and fast
minutes fall on both alike. Each worker times its own calls at 1 and 2
threads; the report gives medians, 90th percentiles and the ratio of
medians between the policies. ``--busy-core`` starts a process spinning on
one core for the run (a notebook's other kernel, a build) and stops it.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

WORKER = r"""
import json, sys, time
import numpy as np
import normops
rng = np.random.default_rng(19)
x = rng.standard_normal((1024, 4096), dtype=np.float32)
w = rng.standard_normal(4096, dtype=np.float32)
b = rng.standard_normal(4096, dtype=np.float32)
s = rng.standard_normal((256, 1024), dtype=np.float32)
m = rng.standard_normal((64, 1024), dtype=np.float32)
cases = {
    "LayerNormalization 1024x4096": lambda t: normops.layer_normalization(x, w, b, n_threads=t),
    "Softmax fast 256x1024": lambda t: normops.softmax(s, axis=-1, mode="fast", n_threads=t),
    "Softmax exact 64x1024": lambda t: normops.softmax(m, axis=-1, n_threads=t),
    "ReduceSum 1024x4096 axis 1": lambda t: normops.reduce_sum(x, np.array([1]), n_threads=t),
    "LayerNormalization 64x1024": lambda t: normops.layer_normalization(m, w[:1024], b[:1024], n_threads=t),
    "sum 64x1024 axis 1": lambda t: normops.sum(m, axis=1, n_threads=t),
    "argmax 256x1024 axis 1": lambda t: normops.argmax(s, axis=1, n_threads=t),
}
print(json.dumps(sorted(cases)), flush=True)
for line in sys.stdin:
    name, threads, calls = json.loads(line)
    f = cases[name]
    times = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        f(threads)
        times.append(time.perf_counter_ns() - start)
    print(json.dumps(times), flush=True)
"""


def start_worker(policy):
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    env.pop("GOMP_SPINCOUNT", None)
    if policy != "default":
        env["OMP_WAIT_POLICY"] = policy.upper()
    proc = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=env)
    names = json.loads(proc.stdout.readline())
    return proc, names


def ask(proc, name, threads, calls):
    proc.stdin.write(json.dumps([name, threads, calls]) + "\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", default="default,passive")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--calls", type=int, default=20, help="calls per block")
    parser.add_argument("--busy-core", action="store_true")
    args = parser.parse_args(argv)
    policies = args.policies.split(",")
    workers = {p: start_worker(p) for p in policies}
    names = workers[policies[0]][1]
    busy = None
    if args.busy_core:
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    times = {(p, n, t): [] for p in policies for n in names for t in (1, 2)}
    try:
        for r in range(args.rounds):
            order = policies if r % 2 == 0 else policies[::-1]
            for name in names:
                for t in (1, 2):
                    for p in order:
                        times[(p, name, t)] += ask(workers[p][0], name, t, args.calls)[1:]  # first call warms
    finally:
        if busy is not None:
            busy.kill()
        for proc, _ in workers.values():
            proc.stdin.close()
            proc.wait()
    print(f"wait policies {', '.join(policies)}; {'one core busy' if busy else 'no busy process'}; "
          f"{args.rounds} rounds x {args.calls - 1} timed calls; load average {os.getloadavg()[0]:.2f}")
    for name in names:
        print(name)
        for t in (1, 2):
            cells = []
            for p in policies:
                a = np.array(times[(p, name, t)]) / 1e3
                cells.append(f"{p}: p50 {np.median(a):8.1f} µs p90 {np.percentile(a, 90):8.1f}")
            base = np.median(times[(policies[0], name, t)])
            ratios = ", ".join(f"{p}/{policies[0]} {np.median(times[(p, name, t)]) / base:.3f}"
                               for p in policies[1:])
            print(f"  {t} thread{'s' if t > 1 else ' '}  " + " | ".join(cells) + f"  (median {ratios})")
        for p in policies:
            p90 = {t: np.percentile(times[(p, name, t)], 90) for t in (1, 2)}
            print(f"  {p}: p90 2 threads / p90 1 thread = {p90[2] / p90[1]:.2f}")


if __name__ == "__main__":
    main()
