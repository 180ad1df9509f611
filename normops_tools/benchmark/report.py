"""Reports of a benchmark run: JSON, CSV, Markdown, a terminal table, the
figures (`normops_tools.benchmark.figures`), and the docs/performance.md page.

Everything here works from the `BenchResults` of `bench()` or from the
results.json it writes, so a page can be re-rendered without re-measuring::

    python -m normops_tools.benchmark.report results.json --page docs/performance.md

(the figures are written next to the page, ``--figures DIR`` elsewhere).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
from pathlib import Path

from .._markdown import table, table_head, table_row

__all__ = [
    "columns",
    "write_outputs",
    "write_json",
    "write_csv",
    "markdown_table",
    "terminal_table",
    "overhead_line",
    "separate_meta",
    "render_results_md",
    "render_page",
    "load",
    "main",
]

RUNTIME_LABELS = {
    "normops-exact": "exact",
    "normops-fast": "fast",
    "onnxruntime": "ORT",
    "onnxruntime-iobinding": "ORT-iob",
    "numpy": "numpy",
    "torch": "torch",
    "scipy": "scipy",
    "normops-run": "run",
    "normops-named": "named",
}


def _key(rt: str) -> str:
    return rt.replace("-", "_")


def _label(rt: str) -> str:
    return RUNTIME_LABELS.get(rt, rt)


def _has_bw(meta: dict) -> bool:
    return bool(meta.get("bandwidth"))


def columns(runtimes, bandwidth: bool = False, interleave: bool = False) -> list[str]:
    """Every column of a result row, in CSV order."""
    cols = ["case", "op_type", "opset", "shape", "axis", "width", "elements",
            "dtype", "threads", "bytes_moved"]
    if interleave:
        cols[1:1] = ["family", "group", "state"]
    if bandwidth:
        cols.append("copy_limit_us")
    for rt in runtimes:
        k = _key(rt)
        cols += [f"{k}_us", f"{k}_elem_per_ns", f"{k}_samples", f"{k}_max_abs_diff",
                 f"{k}_rounds_us"]
        if interleave:
            cols.append(f"{k}_p90_us")
        if bandwidth:
            cols.append(f"{k}_copy_frac")
    if interleave:
        from .runner import INTERLEAVE_RATIOS

        return cols + [c for *_, c in INTERLEAVE_RATIOS] + ["run_minus_named_us"]
    cols += ["ort_over_exact", "ort_over_fast"]
    if "onnxruntime-iobinding" in runtimes:
        cols += ["ort_iob_over_exact", "ort_iob_over_fast"]
    return cols


def _interleaved(meta) -> bool:
    return meta.get("mode") == "interleave"


def separate_meta(meta) -> dict:
    """A meta for the tables of the separate-process rows of an
    interleaved run (``meta["separate"]``)."""
    sep = meta["separate"]
    return dict(meta, mode="separate", runtimes=sep["runtimes"], settings=sep["settings"])


# ---------------------------------------------------------------------------
# Files


def _as_dict(results) -> dict:
    if hasattr(results, "to_dict"):
        return results.to_dict()
    return results


def load(path) -> dict:
    with open(path) as f:
        return json.load(f)


def write_json(results, path) -> None:
    with open(path, "w") as f:
        json.dump(_as_dict(results), f, indent=1, default=str)
        f.write("\n")


def write_csv(results, path) -> None:
    data = _as_dict(results)
    meta = data["meta"]
    cols = columns(meta["runtimes"], _has_bw(meta), _interleaved(meta))
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for row in data["rows"]:
            out = []
            for c in cols:
                v = row.get(c)
                if isinstance(v, list):
                    v = ";".join(f"{x:.4g}" for x in v)
                elif isinstance(v, float):
                    v = f"{v:.6g}"
                out.append("" if v is None else v)
            w.writerow(out)


def write_outputs(results, out) -> dict:
    """results.json, results.csv, results.md and (with matplotlib) the
    figures in directory `out`; returns {kind or figure name: path}."""
    from .figures import write_figures

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    data = _as_dict(results)
    paths = {"json": out / "results.json", "csv": out / "results.csv", "md": out / "results.md"}
    write_json(data, paths["json"])
    write_csv(data, paths["csv"])
    figures = list(write_figures(data, out))
    if not figures:
        data["meta"].setdefault("notes", []).append("figures not drawn: matplotlib is not installed")
    paths["md"].write_text(render_results_md(data, figures))
    paths.update({name: out / name for name in figures})
    return paths


# ---------------------------------------------------------------------------
# Tables


def _fmt_us(v):
    if v is None:
        return "-"
    return f"{v:.3g}" if v < 10 else f"{v:.1f}" if v < 1000 else f"{v:,.0f}"


def _fmt_num(v, digits=3):
    return "-" if v is None else f"{v:.{digits}g}"


def _fmt_ratio(v):
    return "-" if v is None else f"{v:.2f}x"


def _fmt_frac(v):
    return "-" if v is None else f"{100 * v:.0f}%"


def _table_spec(meta):
    """(header, function(row) -> cell) pairs shared by every table."""
    rts = meta["runtimes"]
    spec = [("case", lambda r: r["case"]), ("dtype", lambda r: r["dtype"]),
            ("T", lambda r: str(r["threads"]))]
    for rt in rts:
        spec.append((f"{_label(rt)} µs", lambda r, k=_key(rt): _fmt_us(r.get(f"{k}_us"))))
    for rt in ("normops-exact", "normops-fast", "onnxruntime"):
        if rt in rts:
            spec.append((f"{_label(rt)} el/ns",
                         lambda r, k=_key(rt): _fmt_num(r.get(f"{k}_elem_per_ns"))))
    for ort_rt, prefix in (("onnxruntime", "ort"), ("onnxruntime-iobinding", "ort_iob")):
        if ort_rt in rts:
            for mode in ("exact", "fast"):
                if f"normops-{mode}" in rts:
                    spec.append((f"{_label(ort_rt)}/{mode}",
                                 lambda r, k=f"{prefix}_over_{mode}": _fmt_ratio(r.get(k))))
    if _interleaved(meta):
        for col, head in (("numpy_over_exact", "numpy/exact"), ("scipy_over_exact", "scipy/exact"),
                          ("named_over_run", "named/run")):
            spec.append((head, lambda r, k=col: _fmt_ratio(r.get(k))))
        spec.append(("run-named µs", lambda r: _fmt_num(r.get("run_minus_named_us"), 2)))
    if _has_bw(meta):
        for rt in ("normops-exact", "onnxruntime"):
            if rt in rts:
                spec.append((f"{_label(rt)} %copy",
                             lambda r, k=_key(rt): _fmt_frac(r.get(f"{k}_copy_frac"))))
    return spec


def _used_spec(rows, meta):
    """The table's columns, without those empty in every row."""
    spec = _table_spec(meta)
    return spec[:3] + [(h, f) for h, f in spec[3:] if any(f(r) != "-" for r in rows)]


def markdown_table(rows, meta) -> str:
    spec = _used_spec(rows, meta)
    return "\n".join(table([h for h, _ in spec], ([f(r) for _, f in spec] for r in rows), left=2))


def terminal_table(rows, meta) -> str:
    spec = _used_spec(rows, meta)
    if _interleaved(meta) and any(r.get("state") == "busy" for r in rows):
        spec.insert(3, ("load", lambda r: r.get("state", "quiet")))
    cells = [[h for h, _ in spec]] + [[f(r) for _, f in spec] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(spec))]
    out = []
    for n, line in enumerate(cells):
        out.append("  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(line, widths))))
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def overhead_line(meta) -> str | None:
    ov = meta.get("overhead")
    if not ov:
        return None
    rts = ov["runtimes"]
    head = (f"Per-call overhead ({ov['case'].replace('_', ' ')} {ov['dtype']}, "
            f"{ov['threads']} thread, median per call)")
    parts = []
    for rt in ("normops-exact", "onnxruntime", "onnxruntime-iobinding"):
        if rt in rts:
            parts.append(f"{rt} {rts[rt]['median_us']:.2f} µs")
    return head + ": " + ", ".join(parts)


def bandwidth_lines(meta) -> list[str]:
    bw = meta.get("bandwidth")
    if not bw:
        return []
    out = []
    for t in sorted(bw["copy_gbs"], key=int):
        out.append(f"bandwidth at {t} thread(s): read {bw['read_gbs'][t]:.1f} GB/s, "
                   f"copy {bw['copy_gbs'][t]:.1f} GB/s")
    out.append("bandwidth method: " + bw["method"])
    return out


def _geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def ratio_summary(rows, meta, prefix: str = "ort") -> list[dict]:
    """Per operator x dtype x threads: geometric mean, min and max of
    ORT / normops (exact and fast), and how many cases normops loses.
    `prefix` "ort_iob" summarises the io-binding path instead."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if r.get("state", "quiet") != "quiet" or r.get("group", "operator") not in ("operator", "session"):
            continue
        groups.setdefault((r.get("family") or r["op_type"], r["dtype"], r["threads"]), []).append(r)
    out = []
    for (op, dt, t), rs in groups.items():
        entry = {"op_type": op, "dtype": dt, "threads": t, "cases": len(rs)}
        for mode in ("exact", "fast"):
            vals = [r.get(f"{prefix}_over_{mode}") for r in rs if r.get(f"{prefix}_over_{mode}")]
            entry[mode] = {
                "n": len(vals),
                "geomean": _geomean(vals),
                "min": min(vals) if vals else None,
                "max": max(vals) if vals else None,
                "slower": sum(v < 1.0 for v in vals),
            }
        out.append(entry)
    return out


def ratio_table(rows, meta, prefix: str = "ort") -> str:
    ort = "ORT-iob" if prefix == "ort_iob" else "ORT"
    header = ["operator", "dtype", "T", "cases", f"{ort}/exact geomean", "min", "max", "exact slower in",
              f"{ort}/fast geomean", "min", "max"]
    rows_out = []
    for e in ratio_summary(rows, meta, prefix):
        ex, fa = e["exact"], e["fast"]
        rows_out.append([e["op_type"], e["dtype"], str(e["threads"]), str(e["cases"]),
                         _fmt_ratio(ex["geomean"]), _fmt_ratio(ex["min"]), _fmt_ratio(ex["max"]),
                         f"{ex['slower']}/{ex['n']}", _fmt_ratio(fa["geomean"]),
                         _fmt_ratio(fa["min"]), _fmt_ratio(fa["max"])])
    return "\n".join(table(header, rows_out, left=2))


# ---------------------------------------------------------------------------
# Markdown documents


def _separate_method_text(meta) -> str:
    s = meta["settings"]
    return (
        "Each runtime runs in its own process (`python -m normops_tools.benchmark.worker`), "
        "one runtime and one thread count per process, with `OMP_NUM_THREADS` set to "
        "the thread count, so ONNX Runtime's spinning thread pool or torch's OpenMP pool "
        "cannot slow another runtime down. "
        f"Each case is measured in {s['rounds']} rounds; the order of the runtimes is "
        "reversed every other round (A B C, C B A), so a slow drift of the machine "
        "affects every runtime alike. "
        f"In a process: inputs made from a fixed seed ({s['seed']}) outside timing, "
        f"up to {s['warmup']} warm-up calls (at most a quarter of the budget), then up "
        f"to {s['repeat']} samples or {s['budget']} s, each sample one call timed by "
        "`time.perf_counter_ns` (calls under 10 µs are timed in batches of about 50 µs, "
        "divided by the batch size), with the garbage collector off. "
        "A latency is the median of the per-round medians. "
        "Elements/ns = elements of X / median ns. ORT/exact = ONNX Runtime latency / "
        "normops exact latency (above 1: normops is faster). "
        "ONNX Runtime: a one-node model (X fed, the other inputs initializers), "
        "`InferenceSession` on the CPU provider with `intra_op_num_threads` = T, "
        "`inter_op_num_threads` = 1, sequential execution, timed through "
        "`sess.run(None, feeds)`" + (
            "; `ORT-iob` is the same session through `run_with_iobinding`, the input bound "
            "once as an `OrtValue`, the output allocated by ONNX Runtime on each run"
            if "onnxruntime-iobinding" in meta.get("runtimes", ()) else "") +
        ". normops: the named function with `mode=` and "
        "`n_threads=` T. NumPy: the textbook float32 expression (threads have no "
        "effect). torch: `torch.nn.functional.layer_norm` / `rms_norm` after "
        "`torch.set_num_threads(T)`."
    )


def _machine_lines(meta) -> list[str]:
    m = meta.get("machine", {})
    v = meta.get("versions", {})
    lines = [
        f"- CPU: {m.get('cpu_model')}; {m.get('logical_cpus')} logical CPUs "
        f"({m.get('usable_cpus')} usable); ISA level from the CPU flags: {m.get('isa_level')}; "
        f"normops kernel build in use (`normops.show_config()`): {m.get('normops_isa')}",
        f"- caches (per core as Linux reports them): {m.get('caches')}",
        f"- OS: {m.get('platform')}; Python {m.get('python')}",
        "- versions: " + ", ".join(f"{k} {val}" for k, val in sorted(v.items())),
        f"- load average at start / end: {meta.get('loadavg_start')} / {meta.get('loadavg_end')}",
    ]
    if meta.get("seconds"):
        lines.append("- wall time of the parts: " + ", ".join(
            f"{k} {v:.0f} s" for k, v in meta["seconds"].items()))
    return lines



def _interleave_method_text(meta) -> str:
    s = meta["settings"]
    return (
        "All runtimes run in ONE process per thread count (`python -m "
        "normops_tools.benchmark.worker`, chunks of up to 40 cases), their calls alternated: "
        "for each case, one sample of each runtime per round, the order rotating (A B C, "
        "B C A, C A B), until "
        f"{s['repeat']} rounds or {s['budget']} s per case (at least 5 rounds), after "
        f"up to {s['warmup']} warm-up calls each. Idle threads sleep on both sides: "
        "ONNX Runtime sessions have `session.intra_op.allow_spinning` = 0, and the "
        "process starts with `OMP_WAIT_POLICY=PASSIVE` (read by libgomp when it loads), "
        "so neither runtime's waiting threads steal the other's cores. A sample is one "
        "call timed by `time.perf_counter_ns`, or, for calls under 10 µs, a batch lasting "
        "about 50 µs divided by its size (the first call after another runtime's runs "
        "with cold caches; a longer batch keeps that switch from weighing on the "
        "per-call figure); each call is written out as a user writes it, "
        "`f(x, axis=1, mode=...)`, not `f(*args, **kwargs)`; the garbage collector is "
        "off while timing. A latency is "
        "the median (p50) of a runtime's samples, p90 their 90th percentile; a ratio is "
        "a ratio of medians measured side by side, so a change of the machine's speed "
        "during the run (this VM runs the same call at two speeds minutes apart) touches "
        "both sides alike. `ORT/exact` = ONNX Runtime time / normops exact time (above 1: "
        "normops is faster); `numpy/exact` and `scipy/exact` likewise. ONNX Runtime: a "
        "one-node model (X fed, the other inputs initializers) on the CPU provider, "
        "`intra_op_num_threads` = T, `inter_op_num_threads` = 1, sequential, through "
        "`sess.run(None, feeds)`. normops: the named function with `mode=` and "
        "`n_threads=` T. NumPy: the textbook float32 expression. Inputs come from a fixed "
        f"seed ({s['seed']}); every runtime's first output is compared with a float64 "
        "NumPy evaluation (`max_abs_diff` in results.json)."
    )


def _method_text(meta) -> str:
    return _interleave_method_text(meta) if _interleaved(meta) else _separate_method_text(meta)


def _figure_lines(figures, prefix: str = "") -> list[str]:
    from .figures import HEADLINE, NUMPY_CHART

    out = []
    alt = {HEADLINE: "speed-up over ONNX Runtime per operator family",
           NUMPY_CHART: "speed-up over NumPy and SciPy per function"}
    for name in figures:
        out += [f"![{alt.get(name, name[5:-4] + ' throughput')}]({prefix}{name})", ""]
    return out


def _rows_of(rows, group, state="quiet"):
    return [r for r in rows if r.get("group", "operator") == group and r.get("state", "quiet") == state]


def _us_cell(r, rt, p90=False):
    k = _key(rt)
    v = r.get(f"{k}_p90_us" if p90 else f"{k}_us")
    return _fmt_us(v)


def busy_table(rows, meta) -> str:
    """p50 / p90 per busy case, runtime and thread count, quiet and busy,
    and p90 at 2 threads over p90 at 1 thread in each state."""
    busy = [r for r in rows if r.get("state") == "busy"]
    if not busy:
        return ""
    quiet = {(r["case"], r["dtype"], r["threads"]): r for r in rows if r.get("state", "quiet") == "quiet"}
    threads = sorted({r["threads"] for r in busy})
    lines = table_head(["case", "runtime", "T", "quiet p50 µs", "quiet p90 µs", "busy p50 µs", "busy p90 µs"],
                       left=2)
    tail = []
    for case in dict.fromkeys(r["case"] for r in busy):
        for rt in ("normops-exact", "normops-fast", "onnxruntime"):
            if rt not in meta["runtimes"]:
                continue
            p90 = {}
            for t in threads:
                b = next((r for r in busy if r["case"] == case and r["threads"] == t), None)
                q = quiet.get((case, b["dtype"] if b else "float32", t))
                if b is None or b.get(f"{_key(rt)}_us") is None:
                    continue
                lines.append(table_row([case, _label(rt), str(t), _us_cell(q, rt) if q else "-",
                                        _us_cell(q, rt, True) if q else "-", _us_cell(b, rt),
                                        _us_cell(b, rt, True)]))
                p90[t] = (q.get(f"{_key(rt)}_p90_us") if q else None, b.get(f"{_key(rt)}_p90_us"))
            if 1 in p90 and 2 in p90:
                (q1, b1), (q2, b2) = p90[1], p90[2]
                tail.append([case, _label(rt), _fmt_ratio(q2 / q1) if q1 and q2 else "-",
                             _fmt_ratio(b2 / b1) if b1 and b2 else "-"])
    out = "\n".join(lines)
    if tail:
        out += ("\n\np90 at 2 threads / p90 at 1 thread (the target with a busy core: "
                "at most 1.25x):\n\n" + "\n".join(table(["case", "runtime", "quiet", "busy"], tail, left=2)))
    return out


_GROUP_TEXT = {
    "small": ("Small inputs", "The ONNX-named functions on a 4x8 float32 input, where the time "
              "is the call itself (checks, dispatch, allocation)."),
    "route": ("`normops.run` against the named function", "`normops.run(op_type, inputs, "
              "attributes)` (`run`) and the named function (`named`) on the same inputs, "
              "interleaved; `run-named µs` is the extra cost of the generic route."),
    "numpy-style": ("NumPy/SciPy-style functions", "`normops.sum/mean/.../softmax(x, axis=1)` "
                    "against the NumPy or `scipy.special` function of the same name on the same "
                    "arguments (`numpy/exact`, `scipy/exact` above 1: normops is faster)."),
    "session": ("ONNX sessions", "A 10-node model (LayerNormalization, Softmax, Sigmoid, "
                "RMSNormalization, LogSoftmax, twice) in `normops.onnx.InferenceSession` "
                "(exact, fast) and in ONNX Runtime; and whole models (`model_*`: a transformer "
                "encoder block, a convolutional block with GroupNormalization) whose other nodes "
                "(MatMul, Conv...) the session hands to ONNX Runtime, against ONNX Runtime alone "
                "on the same model (docs/onnx.md)."),
}


def _group_sections(rows, meta, level="##") -> list[str]:
    out = []
    for group, (title, text) in _GROUP_TEXT.items():
        sel = _rows_of(rows, group)
        if sel:
            out += [f"{level} {title}", "", text, "", markdown_table(sel, meta), ""]
    return out


def _busy_lines(meta) -> list[str]:
    busy = meta.get("busy")
    if not busy:
        return []
    return [f"With one core busy: a Python loop pinned to CPU {busy['cpu']} "
            "(`os.sched_setaffinity`, normal priority) runs while these cases are measured "
            "again, started and stopped by the command (`--busy-core`); the benchmark "
            "process is not pinned. A 2-thread call then has a thread waiting for the busy "
            "core's scheduler: its tail (p90) shows it.", ""]


def _separate_section(meta, level="##") -> list[str]:
    sep = meta.get("separate")
    if not sep:
        return []
    smeta = separate_meta(meta)
    out = [f"{level} One runtime per process", "",
           "The same operator cases timed the earlier way, each runtime in its own processes "
           "(not side by side), for comparison with the interleaved figures above. "
           + _separate_method_text(smeta), "",
           ratio_table(sep["rows"], smeta), "",
           "<details><summary>every case</summary>", "",
           markdown_table(sep["rows"], smeta), "", "</details>", ""]
    return out


def render_results_md(results, figures=()) -> str:
    """results.md: settings, machine, notes, overhead, the tables, figures."""
    data = _as_dict(results)
    meta, rows = data["meta"], data["rows"]
    out = ["# normops benchmark results", "",
           f"Run {meta.get('started')} to {meta.get('finished')}"
           + (" (quick: a smoke test, not a measurement)" if meta["settings"].get("quick") else ""),
           ""]
    out += _figure_lines(figures)
    out += ["## Method", "", _method_text(meta), "", "## Machine", ""]
    out += _machine_lines(meta)
    from .batch import batch_lines

    extra = [x for x in [overhead_line(meta)] + bandwidth_lines(meta) + batch_lines(meta) if x]
    if extra:
        out += ["", "## Overhead and bandwidth", ""] + [f"- {x}" for x in extra]
    if meta.get("notes"):
        out += ["", "## Notes", ""] + [f"- {n}" for n in meta["notes"]]
    out += ["", "## Ratios", "", ratio_table(rows, meta), ""]
    if meta.get("busy"):
        out += ["## One core busy", ""] + _busy_lines(meta) + [busy_table(rows, meta), ""]
    out += _group_sections(rows, meta)
    out += ["## Results", "", markdown_table(_rows_of(rows, "operator"), meta), ""]
    out += _separate_section(meta)
    return "\n".join(out)


def render_page(results, figures=(), prefix: str = "") -> str:
    """The docs/performance.md page; `figures` are file names, `prefix` their
    path relative to the page."""
    from .figures import HEADLINE, NUMPY_CHART

    data = _as_dict(results)
    meta, rows = data["meta"], data["rows"]
    m = meta.get("machine", {})
    s = meta["settings"]
    head = [f for f in (HEADLINE, NUMPY_CHART) if f in figures]
    curves = [f for f in figures if f not in head and f != "perf_scaling.png"]
    out = [
        "# Performance",
        "",
        "<!-- Generated by bench/run_all.sh (normops_tools.benchmark.report); "
        "do not edit by hand. -->",
        "",
    ]
    out += _figure_lines(head, prefix)
    out += [
        f"Measured {meta.get('started')} with `{meta.get('command') or 'python -m normops bench'}`.",
        "",
        "normops is compared with ONNX Runtime (the bar it must clear), NumPy/SciPy and "
        "torch (when installed; its CPU build, which the page uses, comes from `pip install torch "
        "--index-url https://download.pytorch.org/whl/cpu`: PyPI's Linux wheel brings CUDA). "
        "The numbers below come from one shared 2-core machine: "
        "they are medians, and differences of a few percent are noise.",
        "",
        "What limits the large cases, the profiles and what was tried is in "
        "[performance-analysis.md](performance-analysis.md) (written by hand).",
        "",
        "## Method",
        "",
        _method_text(meta),
        "",
    ]
    if s.get("quick"):
        out += ["**This page was rendered from a `--quick` run (a smoke test): its "
                "numbers are not measurements.**", ""]
    out += ["## Machine", ""] + _machine_lines(meta)
    if m.get("normops_config"):
        out += ["", "`normops.show_config()`:", "", "```", m["normops_config"], "```"]
    out += ["", "## Summary", "",
            "ONNX Runtime latency divided by normops latency per operator, dtype and "
            "thread count (geometric mean over the cases; above 1.00x normops is faster).",
            "", ratio_table(rows, meta), ""]
    if "onnxruntime-iobinding" in meta["runtimes"]:
        out += ["The same against ONNX Runtime's cheapest Python path (io binding, "
                "`ORT-iob`):", "", ratio_table(rows, meta, "ort_iob"), ""]
    ov = overhead_line(meta)
    if ov:
        out += [f"{ov}.", ""]
    if meta.get("busy"):
        out += ["## One core busy", ""] + _busy_lines(meta) + [busy_table(rows, meta), ""]
    out += _group_sections(rows, meta)
    if meta.get("bandwidth"):
        bw = meta["bandwidth"]
        out += ["## Memory bandwidth", "",
                bw["method"], "",
                *table(["threads", "read GB/s", "copy GB/s"],
                       ([str(t), f"{bw['read_gbs'][t]:.1f}", f"{bw['copy_gbs'][t]:.1f}"]
                        for t in sorted(bw["copy_gbs"], key=int)), left=0)]
        out += ["",
                "A normalisation must read X once and write Y once, as a copy does, so its "
                "memory-bound limit is the time a copy of those bytes takes at the copy "
                "bandwidth of the same thread count. The `%copy` columns give that limit "
                "divided by the measured time. Inputs that fit in the caches can go above "
                "100%: the limit is the main-memory one.", ""]
    if meta.get("batch"):
        from .batch import batch_lines

        out += ["## Batches from threads", "",
                "`normops.map_batch` at 1 and 2 workers ([batch.md](batch.md)), and calls made "
                "from several Python threads at once at the default thread count, which share "
                "the cores through the thread budget ([design.md](design.md), \"Thread budget\"; "
                "the target: at least the serial throughput):", ""]
        out += [f"- {line}" for line in batch_lines(meta)] + [""]
    if meta.get("scaling"):
        from .scaling import FIGURE, lines as scaling_lines

        out += ["## Scaling: 1 thread against 2", "",
                "How many threads a call takes comes from costs normops measures as it runs "
                "([design.md](design.md), \"Threads\"). Each case at `n_threads=1` and 2 back to back "
                "(ratio of medians, below 1: the second thread pays), and after idle gaps "
                "(`time.sleep` before every call) at 1 thread and the default count (p50 and p90 "
                "ratios). Under `OMP_WAIT_POLICY=PASSIVE` each case is also timed against ONNX Runtime "
                "at 1 and 2 threads in the same process (spinning off on both sides). Targets: back to "
                "back at most 1.05, and at most 1/1.7 = 0.59 where a call takes 1 ms or more on one "
                "thread; after idle at most 1.25; against ONNX Runtime, a 2-thread ratio at most 10% "
                "below the 1-thread one.", ""]
        if FIGURE in figures:
            out += [f"![1 thread against 2 per case, both wait policies]({prefix}{FIGURE})", ""]
        out += scaling_lines(meta["scaling"])
    if curves:
        out += ["## Throughput", "",
                "Input elements per ns for the families measured at several sizes, against "
                "the row width (or the input size), with the copy limit: the time a copy of "
                "the same bytes takes at the measured copy bandwidth. The other families "
                "have their bar in the chart at the top.", ""]
        out += _figure_lines(curves, prefix)
    out += ["## Results", "",
            "Latencies in µs (median); `el/ns` = input elements per ns; `ORT/x` = ONNX "
            "Runtime latency / normops latency.", ""]
    ops = _rows_of(rows, "operator")
    for op in dict.fromkeys(r["op_type"] for r in ops):
        out += [f"### {op}", "", markdown_table([r for r in ops if r["op_type"] == op], meta), ""]
    out += _separate_section(meta)
    if meta.get("notes"):
        out += ["## Notes", ""] + [f"- {n}" for n in meta["notes"]] + [""]
    out += ["## Reproduce", "",
            "```sh",
            "bash bench/run_all.sh          # full run, rewrites this page and its figures",
            "python -m normops bench --interleave --quick --case 'LayerNormalization_32x' --threads 1",
            "```", "",
            "See `bench/README.md` for every option.", ""]
    return "\n".join(out)


# ---------------------------------------------------------------------------


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m normops_tools.benchmark.report",
        description="Render docs/performance.md and its figures from a results.json.")
    p.add_argument("results", help="results.json written by `python -m normops bench --out`")
    p.add_argument("--page", default="docs/performance.md", help="page to write")
    p.add_argument("--figures", default=None, metavar="DIR",
                   help="directory of the figures (default: the page's directory)")
    args = p.parse_args(argv)
    from .figures import write_figures

    data = load(args.results)
    page = Path(args.page)
    page.parent.mkdir(parents=True, exist_ok=True)
    fig_dir = Path(args.figures) if args.figures else page.parent
    figures = list(write_figures(data, fig_dir))
    prefix = os.path.relpath(fig_dir, page.parent)
    prefix = "" if prefix == "." else prefix.replace(os.sep, "/") + "/"
    page.write_text(render_page(data, figures, prefix))
    print(f"wrote {page}" + (f" and {len(figures)} figures in {fig_dir}: {', '.join(figures)}"
                             if figures else " (no figures: matplotlib missing)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
