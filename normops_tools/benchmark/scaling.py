"""1 thread against 2, per case: back to back and after idle time, under
both OpenMP wait policies (``python -m normops bench --scaling``).

What a user of a 2-core machine sees at ``n_threads=2`` (or the default
thread count) against ``n_threads=1``:

- **back to back**: rounds of ``calls`` calls at 1 thread then ``calls``
  at 2 (the order swapped every round), every call timed; the medians and
  their ratio 2T/1T;
- **after idle**: ``time.sleep(gap)`` before every call, calls at 1 thread
  and at the default thread count alternating; p50 and p90 of each and
  their ratios.

- **against ONNX Runtime** (under ``PASSIVE`` only, where neither side's
  threads spin, ONNX Runtime's sessions with ``allow_spinning`` 0):
  normops and ONNX Runtime at 1 and at 2 threads in the same process, the
  four calls rotated every round; ONNX Runtime's median over normops' at
  each thread count, and how far the 2-thread ratio falls below the
  1-thread one.

The wait policy is read by OpenMP once per process, so each policy runs
in a process of its own (``OMP_WAIT_POLICY`` unset, i.e. libgomp's
default, and ``PASSIVE``); the figures normops learned there (its thread
costs) are reported with them. The cases are built with the benchmark's
own case factories (normops_tools.cases.measured) and called through its
runtimes. Targets (docs/design.md, "Threads"): back to back 2T/1T at most
1.05 on every case, and at most 1/1.7 where one call takes 1 ms or more at
1 thread; after idle, p50 and p90 ratios at most 1.25; against ONNX
Runtime, no case's ratio more than 10% lower at 2 threads than at 1.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time

import numpy as np

POLICIES = {"default": None, "passive": "PASSIVE"}
#: the policy under which normops is also timed against ONNX Runtime: both
#: sides' threads sleep when idle (ONNX Runtime's allow_spinning 0)
SPINNING_OFF = "passive"
#: how far normops' ratio to ONNX Runtime may fall from 1 thread to 2
ORT_FALL_LIMIT = 0.10
GAPS_S = (0.02, 0.1, 0.3)
METHOD = ("each wait policy in its own process; back to back: {rounds} rounds of {calls} calls at 1 thread "
          "and {calls} at 2 (order swapped every round), every call timed, medians; after idle: "
          "time.sleep(gap) before every call, 1 thread and the default thread count alternating, "
          "{idle_calls} calls each, p50 and p90; against ONNX Runtime (under PASSIVE, its sessions with "
          "allow_spinning 0): normops and ONNX Runtime at 1 and 2 threads in the same process, the four "
          "calls rotated each round, {rounds} rounds of {calls} calls each, ratios of medians.")


def cases(quick=False):
    """name -> (benchmark Case, normops mode, in_idle_set), built with the
    benchmark's own case factories (normops_tools.cases.measured)."""
    from normops_tools.cases.measured import normalization_case, reduce_case, sigmoid_case, softmax_case

    out = {}
    shapes = ((32, 1024), (32, 4096), (256, 1024), (1024, 4096))
    if quick:
        shapes = ((32, 1024), (256, 1024))
    for rows, cols in shapes:
        label = f"{rows}x{cols}"
        idle = (rows, cols) in ((256, 1024), (1024, 4096))
        for mode in ("exact", "fast"):
            out[f"Softmax {mode} {label}"] = (softmax_case("Softmax", (rows, cols)), mode, idle)
            out[f"LogSoftmax {mode} {label}"] = (softmax_case("LogSoftmax", (rows, cols)), mode,
                                                 idle and mode == "exact")
        out[f"LayerNormalization {label}"] = (normalization_case("LayerNormalization", (rows, cols)), "exact",
                                              idle)
        out[f"RMSNormalization {label}"] = (normalization_case("RMSNormalization", (rows, cols)), "exact", False)
        out[f"ReduceSum {label} axis 1"] = (reduce_case("ReduceSum", (rows, cols), (1,)), "exact", idle)
    for n in ((65536, 1 << 20) if not quick else (65536,)):
        for mode in ("exact", "fast"):
            out[f"Sigmoid {mode} {n}"] = (sigmoid_case(n), mode, n == 1 << 20 and mode == "exact")
    return out


def case_calls(case, mode, onnxruntime=False):
    """The case's zero-argument calls by thread count (None: the default
    count): normops in `mode`, and with `onnxruntime` ONNX Runtime at 1 and
    2 threads, spinning off, under the keys "ort1" and "ort2"."""
    from .runtimes import NormopsRuntime, OnnxRuntime, prepare

    inputs = case.inputs("float32", seed=0)
    normops_rt = NormopsRuntime(mode)
    normops_rt.setup(None)
    out = {t: prepare(normops_rt, case, inputs, t) for t in (1, 2, None)}
    if onnxruntime:
        ort = OnnxRuntime()
        ort.spinning = False
        ort.setup(2)
        out.update({f"ort{t}": prepare(ort, case, inputs, t) for t in (1, 2)})
    return out


def _timed(call):
    start = time.perf_counter_ns()
    call()
    return time.perf_counter_ns() - start


def _rotated(fns, rounds, calls):
    """Every call of `fns` (key -> zero-argument call) timed, in rounds of
    `calls` calls per key, the order of the keys rotated every round; the
    medians in µs by key."""
    keys = list(fns)
    times = {k: [] for k in keys}
    for _ in range(2):  # warm-up: the first calls teach normops the costs
        for k in keys:
            fns[k]()
    for r in range(rounds):
        shift = r % len(keys)
        for k in keys[shift:] + keys[:shift]:
            for _ in range(calls):
                times[k].append(_timed(fns[k]))
    return {k: float(np.median(v)) / 1e3 for k, v in times.items()}


def back_to_back(fns, rounds, calls):
    med = _rotated({1: fns[1], 2: fns[2]}, rounds, calls)
    return {"one_us": med[1], "two_us": med[2], "ratio": med[2] / med[1]}


def versus_onnxruntime(fns, rounds, calls):
    """normops and ONNX Runtime at 1 and 2 threads, the four calls rotated
    in one process: ONNX Runtime's time over normops' at each thread count,
    and how far the 2-thread ratio falls below the 1-thread one."""
    med = _rotated({k: fns[k] for k in (1, "ort1", 2, "ort2")}, rounds, calls)
    one, two = med["ort1"] / med[1], med["ort2"] / med[2]
    return {"one_us": med[1], "two_us": med[2], "ort_one_us": med["ort1"], "ort_two_us": med["ort2"],
            "ratio_one": one, "ratio_two": two, "fall": 1 - two / one}


def after_idle(fns, gap, calls):
    times = {1: [], None: []}
    for i in range(2 * calls):
        t = 1 if i % 2 == 0 else None
        time.sleep(gap)
        times[t].append(_timed(fns[t]))
    out = {}
    for t, key in ((1, "one"), (None, "default")):
        out[f"{key}_p50_us"] = float(np.percentile(times[t], 50)) / 1e3
        out[f"{key}_p90_us"] = float(np.percentile(times[t], 90)) / 1e3
    out["p50_ratio"] = out["default_p50_us"] / out["one_p50_us"]
    out["p90_ratio"] = out["default_p90_us"] / out["one_p90_us"]
    return out


def measure(quick=False, rounds=15, calls=5, idle_calls=20, gaps=GAPS_S, case=None, onnxruntime=False):
    """Every case in this process (its wait policy), as a dict; with
    `onnxruntime`, also against ONNX Runtime at 1 and 2 threads."""
    import re

    import normops
    from normops import _threads

    results = {"cases": {}, "wait_policy": os.environ.get("OMP_WAIT_POLICY", "") or "default"}
    chosen = {k: v for k, v in cases(quick).items() if case is None or re.search(case, k)}
    for name, (bench_case, mode, idle) in chosen.items():
        fns = case_calls(bench_case, mode, onnxruntime)
        entry = {"back_to_back": back_to_back(fns, rounds, calls)}
        if onnxruntime:
            entry["onnxruntime"] = versus_onnxruntime(fns, rounds, calls)
        if idle:
            entry["after_idle"] = {str(g): after_idle(fns, g, idle_calls) for g in gaps}
        results["cases"][name] = entry
    results["thread_costs"] = _threads.figures()
    results["default_threads"] = normops.get_num_threads()
    return results


def run_policies(quick=False, case=None, rounds=15, calls=5, idle_calls=20, python=sys.executable):
    """measure() under each wait policy, each in a new process."""
    out = {"method": METHOD.format(rounds=rounds, calls=calls, idle_calls=idle_calls), "policies": {},
           "load_start": os.getloadavg()[0]}
    for label, policy in POLICIES.items():
        env = dict(os.environ)
        env.pop("OMP_WAIT_POLICY", None)
        if policy:
            env["OMP_WAIT_POLICY"] = policy
        argv = [python, "-m", "normops_tools.benchmark.scaling", "--worker", "--rounds", str(rounds),
                "--calls", str(calls), "--idle-calls", str(idle_calls)]
        if quick:
            argv.append("--quick")
        if label == SPINNING_OFF and importlib.util.find_spec("onnxruntime") is not None:
            argv.append("--onnxruntime")
        if case:
            argv += ["--case", case]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
        out["policies"][label] = json.loads(done.stdout)
    out["load_end"] = os.getloadavg()[0]
    return out


def lines(scaling):
    """Markdown: the method, one table per wait policy, and the verdict."""
    from normops_tools._markdown import table

    out = [f"Method: {scaling['method']} Load average {scaling['load_start']:.2f} at start, "
           f"{scaling['load_end']:.2f} at end.", ""]
    for label, res in scaling["policies"].items():
        out.append(f"**Wait policy: {label}** (OMP_WAIT_POLICY={'unset' if label == 'default' else label.upper()};"
                   f" default thread count {res['default_threads']})")
        out.append("")
        rows = []
        for name, entry in res["cases"].items():
            b = entry["back_to_back"]
            idle = entry.get("after_idle", {})
            idle_cells = [f"{idle[g]['p50_ratio']:.2f} / {idle[g]['p90_ratio']:.2f}" if g in idle else ""
                          for g in map(str, GAPS_S)]
            rows.append([name, f"{b['one_us']:.1f}", f"{b['two_us']:.1f}", f"{b['ratio']:.2f}"] + idle_cells)
        out += table(["case", "1T µs", "2T µs", "2T/1T"] + [f"idle {int(g * 1000)} ms p50 / p90" for g in GAPS_S],
                     rows)
        out.append("")
        ort_rows = [[name, f"{o['one_us']:.1f}", f"{o['ort_one_us']:.1f}", f"{o['ratio_one']:.2f}",
                     f"{o['two_us']:.1f}", f"{o['ort_two_us']:.1f}", f"{o['ratio_two']:.2f}", f"{100 * o['fall']:+.0f}%"]
                    for name, o in ((n, e["onnxruntime"]) for n, e in res["cases"].items() if "onnxruntime" in e)]
        if ort_rows:
            out += ["Against ONNX Runtime in the same process (fall: how far the 2-thread ratio lies below the "
                    f"1-thread one; target at most {100 * ORT_FALL_LIMIT:.0f}%):", ""]
            out += table(["case", "normops 1T µs", "ORT 1T µs", "ORT/normops 1T", "normops 2T µs", "ORT 2T µs",
                          "ORT/normops 2T", "fall"], ort_rows)
            out.append("")
        out += verdict_lines(res)
        out.append("")
    return out


def verdict_lines(res):
    """Which targets hold in one policy's results."""
    worst_b2b = max(res["cases"].items(), key=lambda kv: kv[1]["back_to_back"]["ratio"])
    long_cases = {k: v["back_to_back"] for k, v in res["cases"].items() if v["back_to_back"]["one_us"] >= 1000}
    idle = [(k, g, v) for k, e in res["cases"].items() for g, v in e.get("after_idle", {}).items()]
    out = [f"- back to back, worst 2T/1T: {worst_b2b[1]['back_to_back']['ratio']:.2f} ({worst_b2b[0]}; target 1.05)"]
    if long_cases:
        slowest = max(long_cases.items(), key=lambda kv: kv[1]["ratio"])
        out.append(f"- cases of 1 ms or more at 1 thread: speed-up at 2 threads {1 / slowest[1]['ratio']:.2f}x "
                   f"at least ({slowest[0]}; target 1.7x)")
    if idle:
        worst = max(idle, key=lambda kgv: max(kgv[2]["p50_ratio"], kgv[2]["p90_ratio"]))
        out.append(f"- after idle, worst p50 / p90 ratio: {worst[2]['p50_ratio']:.2f} / {worst[2]['p90_ratio']:.2f}"
                   f" ({worst[0]}, {float(worst[1]) * 1000:.0f} ms gaps; target 1.25)")
    ort = {k: e["onnxruntime"] for k, e in res["cases"].items() if "onnxruntime" in e}
    if ort:
        over = sorted((k for k, o in ort.items() if o["fall"] > ORT_FALL_LIMIT), key=lambda k: -ort[k]["fall"])
        worst_name = max(ort, key=lambda k: ort[k]["fall"])
        w = ort[worst_name]
        out.append(f"- against ONNX Runtime, {len(over)} of {len(ort)} cases fall more than "
                   f"{100 * ORT_FALL_LIMIT:.0f}% from 1 thread to 2; the most: {worst_name}, "
                   f"{w['ratio_one']:.2f}x to {w['ratio_two']:.2f}x ({100 * w['fall']:.0f}%)")
    return out


FIGURE = "perf_scaling.png"


def draw(scaling, plt):
    """Bars of the 2-thread speed-up back to back per case, one colour per
    wait policy (a figure for figures.write_figures)."""
    names = list(next(iter(scaling["policies"].values()))["cases"])
    fig, ax = plt.subplots(figsize=(10, 0.28 * len(names) + 1.5))
    height = 0.8 / len(scaling["policies"])
    for i, (label, res) in enumerate(scaling["policies"].items()):
        ratios = [1 / res["cases"][n]["back_to_back"]["ratio"] for n in names]
        ax.barh([k + i * height for k in range(len(names))], ratios, height=height, label=f"wait policy: {label}")
    ax.axvline(1 / 1.05, color="black", linewidth=0.8, linestyle="--")
    ax.axvline(1.7, color="grey", linewidth=0.8, linestyle=":")
    ax.set_yticks([k + 0.4 - height / 2 for k in range(len(names))], names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("speed-up of 2 threads over 1, back to back (dashed: 1/1.05; dotted: 1.7)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def main(argv=None):
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--worker", action="store_true", help="measure in this process and print JSON")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--case", default=None, metavar="REGEX")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--calls", type=int, default=5)
    p.add_argument("--idle-calls", type=int, default=20)
    p.add_argument("--onnxruntime", action="store_true", help="also time ONNX Runtime (with --worker)")
    p.add_argument("--out", default=None, metavar="JSON")
    args = p.parse_args(argv)
    if args.worker:
        print(json.dumps(measure(args.quick, args.rounds, args.calls, args.idle_calls, case=args.case,
                                 onnxruntime=args.onnxruntime)))
        return 0
    scaling = run_policies(args.quick, args.case, args.rounds, args.calls, args.idle_calls)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(scaling, f, indent=1)
    print("\n".join(lines(scaling)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
