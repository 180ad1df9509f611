"""`python -m normops bench`: the command-line face of `bench()`."""

from __future__ import annotations

import argparse
import os
import re
import sys

from .runner import DEFAULTS, QUICK, bench
from .runtimes import DEFAULT_RUNTIMES, INTERLEAVE_RUNTIMES, RUNTIMES


def build_parser(prog: str = "python -m normops bench") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description=(
            "Time normops' normalisation operators against ONNX Runtime, NumPy and "
            "torch, each runtime in its own processes, and report median latencies, "
            "input elements per ns and the ONNX Runtime / normops ratios."
        ),
    )
    p.add_argument("--case", metavar="REGEX", default=None,
                   help="cases whose name matches REGEX (re.search); see --list")
    p.add_argument("--dtype", default=None, help="comma-separated dtypes, e.g. float32,float16")
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    p.add_argument("--runtimes", default=None,
                   help=f"comma-separated, from: {', '.join(RUNTIMES)} (default: "
                        f"{','.join(DEFAULT_RUNTIMES)}; with --interleave also "
                        f"{','.join(r for r in INTERLEAVE_RUNTIMES if r not in DEFAULT_RUNTIMES)})")
    p.add_argument("--repeat", type=int, default=None,
                   help=f"most samples per case and process (default {DEFAULTS['repeat']}, "
                        f"quick {QUICK['repeat']})")
    p.add_argument("--warmup", type=int, default=None,
                   help=f"warm-up calls (default {DEFAULTS['warmup']}, quick {QUICK['warmup']})")
    p.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                   help=f"sampling time per case in each process (default {DEFAULTS['budget']}, "
                        f"quick {QUICK['budget']})")
    p.add_argument("--rounds", type=int, default=None,
                   help="processes per runtime and case, order reversed every other round "
                        f"(default {DEFAULTS['rounds']})")
    p.add_argument("--per-process", choices=("case", "all"), default=None,
                   help="one case per worker process (default) or all cases of a thread "
                        "count in one process (the --quick default)")
    p.add_argument("--quick", action="store_true",
                   help="tiny budget, few processes: a smoke test, not a measurement")
    p.add_argument("--bandwidth", action="store_true",
                   help="measure this machine's read/copy bandwidth and report each case's "
                        "fraction of the copy limit")
    p.add_argument("--scaling", action="store_true",
                   help="also measure 1 thread against 2 per case, back to back and after idle gaps, "
                        "under both OpenMP wait policies, and under PASSIVE against ONNX Runtime at 1 and 2 "
                        "threads (normops_tools.benchmark.scaling)")
    p.add_argument("--batch", action="store_true",
                   help="also measure normops.map_batch throughput at 1 and 2 workers, and "
                        "calls from 2 and 4 Python threads against serial calls")
    p.add_argument("--seed", type=int, default=0, help="seed of the input data (default 0)")
    p.add_argument("--no-overhead", action="store_true",
                   help="skip the 1x8 LayerNormalization per-call overhead probe")
    p.add_argument("--interleave", action="store_true",
                   help="every runtime in one process per thread count, calls alternated "
                        "A, B, A, B with idle threads sleeping on both sides (ONNX Runtime "
                        "allow_spinning=0, OMP_WAIT_POLICY=PASSIVE); ratios of the medians; "
                        "p50 and p90 per case; the default runtimes gain scipy, "
                        "normops-run and normops-named (the SciPy-style and normops.run "
                        "cases)")
    p.add_argument("--busy-core", nargs="?", const=True, default=None, metavar="REGEX",
                   help="with --interleave: measure the selected cases matching REGEX again "
                        "while another process spins on one core (started and stopped by "
                        "the command); default REGEX: the three busy-core cases "
                        "(LayerNormalization 1024x4096, Softmax 256x1024, ReduceSum "
                        "1024x4096 axis -1)")
    p.add_argument("--separate", action="store_true",
                   help="with --interleave: also time the operator cases one runtime per "
                        "process (exact, fast, ONNX Runtime), the page's second table")
    p.add_argument("--out", metavar="DIR", default=None,
                   help="write results.json, results.csv, results.md and the figures "
                        "(perf_*.png) in DIR")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    return p


def _list_cases(args) -> int:
    from normops_tools.cases import select_cases

    try:
        pairs = select_cases(args.case, args.dtype.split(",") if args.dtype else None)
    except (ValueError, TypeError, re.error) as exc:
        print(f"normops bench: error: {exc}", file=sys.stderr)
        return 2
    for case, dt in pairs:
        print(f"{case.name:<44} {dt:<8} {case.op_type} opset {case.opset} "
              f"shape {case.shape_str} axis {case.attributes.get('axis')}")
    print(f"{len(pairs)} case x dtype pairs", file=sys.stderr)
    return 0 if pairs else 1


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--dask" in argv:  # normops.dask at scale, with its own options (dask_scale.py)
        from .dask_scale import main as dask_main
        return dask_main([a for a in argv if a != "--dask"])
    args = build_parser().parse_args(argv)
    if args.list:
        return _list_cases(args)
    from .batch import batch_lines
    from .report import bandwidth_lines, overhead_line, terminal_table

    try:
        results = bench(
            cases=args.case,
            dtypes=args.dtype,
            threads=args.threads,
            runtimes=args.runtimes,
            repeat=args.repeat,
            warmup=args.warmup,
            budget=args.budget,
            quick=args.quick,
            bandwidth=args.bandwidth,
            rounds=args.rounds,
            per_process=args.per_process,
            seed=args.seed,
            overhead=not args.no_overhead,
            progress=not args.no_progress,
            out=args.out,
            batch=args.batch,
            scaling=args.scaling,
            interleave=args.interleave,
            busy_core=args.busy_core,
            separate=args.separate,
        )
    except (ValueError, KeyError, TypeError, re.error) as exc:  # bad argument
        print(f"normops bench: error: {exc}", file=sys.stderr)
        return 2
    meta = results.meta
    print(terminal_table(results, meta))
    if meta.get("separate"):
        from .report import separate_meta

        print("\nOne runtime per process:")
        print(terminal_table(meta["separate"]["rows"], separate_meta(meta)))
    print()
    for line in [overhead_line(meta)] + bandwidth_lines(meta) + batch_lines(meta):
        if line:
            print(line)
    for note in meta["notes"]:
        print(f"note: {note}")
    if args.out:
        written = [os.path.basename(p) for p in meta.get("outputs", {}).values() if p]
        print(f"wrote {', '.join(written)} in {args.out}")
    measured = any(v is not None for r in results for k, v in r.items() if k.endswith("_us")
                   and not k.endswith("_rounds_us") and k not in ("copy_limit_us", "run_minus_named_us"))
    return 0 if measured else 1
