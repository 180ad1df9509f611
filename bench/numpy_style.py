"""normops' var, std, where=/initial= reductions and SciPy-style logsumexp
against NumPy's and SciPy's, interleaved in one process (per-call medians
in microseconds, and NumPy's or SciPy's time over normops'; above 1 means
normops is faster).

    python bench/numpy_style.py                       # every case, 1 and 2 threads
    python bench/numpy_style.py --only var --threads 1 --rounds 100

The variants of a case alternate within every round (call_path.py's
``interleaved``), float32, the call as a user writes it. Wall-clock on a
shared machine: name the CPU, its load and the date with the figures.
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from call_path import interleaved  # noqa: E402

import normops  # noqa: E402

SHAPES = [(4, 8), (32, 256), (64, 1024), (256, 1024)]


def cases(shape, axis):
    import scipy.special as sp

    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    mask = rng.random(shape) < 0.7
    b = (rng.random(shape) - 0.2).astype(np.float32)
    yield "var", lambda n: normops.var(x, axis=axis, n_threads=n), lambda: np.var(x, axis=axis)
    yield "std ddof=1", lambda n: normops.std(x, axis=axis, ddof=1, n_threads=n), lambda: np.std(x, axis=axis, ddof=1)
    yield ("var where",lambda n: normops.var(x, axis=axis, where=mask, n_threads=n),
                        lambda: np.var(x, axis=axis, where=mask))
    yield ("sum where initial",lambda n: normops.sum(x, axis=axis, where=mask, initial=1.0, n_threads=n),
                                lambda: np.sum(x, axis=axis, where=mask, initial=1.0))
    yield ("max where initial",lambda n: normops.max(x, axis=axis, where=mask, initial=-5.0, n_threads=n),
                                lambda: np.max(x, axis=axis, where=mask, initial=-5.0))
    yield ("mean where",lambda n: normops.mean(x, axis=axis, where=mask, n_threads=n),
                         lambda: np.mean(x, axis=axis, where=mask))
    yield "logsumexp", lambda n: normops.logsumexp(x, axis=axis, n_threads=n), lambda: sp.logsumexp(x, axis=axis)
    yield ("logsumexp b sign",lambda n: normops.logsumexp(x, axis=axis, b=b, return_sign=True, n_threads=n),
                               lambda: sp.logsumexp(x, axis=axis, b=b, return_sign=True))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="substring of the case names to run")
    parser.add_argument("--threads", default="1,2", help="normops' thread counts (default 1,2)")
    parser.add_argument("--rounds", type=int, default=60)
    args = parser.parse_args(argv)
    threads = [int(t) for t in args.threads.split(",")]
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()[0]:.2f}, "
          f"numpy {np.__version__}, normops ISA {normops._isa.kernels.ISA_LEVEL}")
    print("| case | shape | axis | threads | normops us | NumPy/SciPy us | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    warnings.simplefilter("ignore")
    for shape in SHAPES:
        for axis in (-1, 0):
            for name, ours, theirs in cases(shape, axis):
                if args.only and args.only not in name:
                    continue
                for n in threads:
                    t = interleaved({"normops": lambda: ours(n), "peer": theirs}, args.rounds)
                    print(f"| {name} | {shape[0]}x{shape[1]} | {axis} | {n} | {t['normops']:.2f} | "
                          f"{t['peer']:.2f} | {t['peer'] / t['normops']:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
