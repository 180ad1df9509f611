"""Reports of a benchmark run: JSON, CSV, Markdown, a terminal table, the
plot, and the docs/performance.md page.

Everything here works from the `BenchResults` of `bench()` or from the
results.json it writes, so a page can be re-rendered without re-measuring::

    python -m normops.benchmark.report results.json \\
        --page docs/performance.md --plot docs/performance.png
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
from pathlib import Path

__all__ = [
    "columns",
    "write_outputs",
    "write_json",
    "write_csv",
    "markdown_table",
    "terminal_table",
    "overhead_line",
    "plot",
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
}


def _key(rt: str) -> str:
    return rt.replace("-", "_")


def _label(rt: str) -> str:
    return RUNTIME_LABELS.get(rt, rt)


def _has_bw(meta: dict) -> bool:
    return bool(meta.get("bandwidth"))


def columns(runtimes, bandwidth: bool = False) -> list[str]:
    """Every column of a result row, in CSV order."""
    cols = ["case", "op_type", "opset", "shape", "axis", "width", "elements",
            "dtype", "threads", "bytes_moved"]
    if bandwidth:
        cols.append("copy_limit_us")
    for rt in runtimes:
        k = _key(rt)
        cols += [f"{k}_us", f"{k}_elem_per_ns", f"{k}_samples", f"{k}_max_abs_diff",
                 f"{k}_rounds_us"]
        if bandwidth:
            cols.append(f"{k}_copy_frac")
    cols += ["ort_over_exact", "ort_over_fast"]
    if "onnxruntime-iobinding" in runtimes:
        cols += ["ort_iob_over_exact", "ort_iob_over_fast"]
    return cols


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
    cols = columns(meta["runtimes"], _has_bw(meta))
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
    """results.json, results.csv, results.md and (with matplotlib) plot.png
    in directory `out`; returns {kind: path or None}."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    data = _as_dict(results)
    paths = {"json": out / "results.json", "csv": out / "results.csv",
             "md": out / "results.md", "png": out / "plot.png"}
    write_json(data, paths["json"])
    write_csv(data, paths["csv"])
    made = plot(data, paths["png"])
    if not made:
        paths["png"] = None
    paths["md"].write_text(render_results_md(data, "plot.png" if made else None))
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
    if _has_bw(meta):
        for rt in ("normops-exact", "onnxruntime"):
            if rt in rts:
                spec.append((f"{_label(rt)} %copy",
                             lambda r, k=_key(rt): _fmt_frac(r.get(f"{k}_copy_frac"))))
    return spec


def markdown_table(rows, meta) -> str:
    spec = _table_spec(meta)
    lines = ["| " + " | ".join(h for h, _ in spec) + " |",
             "|" + "|".join("---" if i < 2 else "---:" for i in range(len(spec))) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(f(r) for _, f in spec) + " |")
    return "\n".join(lines)


def terminal_table(rows, meta) -> str:
    spec = _table_spec(meta)
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
        groups.setdefault((r["op_type"], r["dtype"], r["threads"]), []).append(r)
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
    lines = [f"| operator | dtype | T | cases | {ort}/exact geomean | min | max | exact slower in "
             f"| {ort}/fast geomean | min | max |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for e in ratio_summary(rows, meta, prefix):
        ex, fa = e["exact"], e["fast"]
        lines.append(
            f"| {e['op_type']} | {e['dtype']} | {e['threads']} | {e['cases']} | "
            f"{_fmt_ratio(ex['geomean'])} | {_fmt_ratio(ex['min'])} | {_fmt_ratio(ex['max'])} | "
            f"{ex['slower']}/{ex['n']} | {_fmt_ratio(fa['geomean'])} | "
            f"{_fmt_ratio(fa['min'])} | {_fmt_ratio(fa['max'])} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Plot


def plot(results, path) -> bool:
    """Input elements per ns against elements of X (log x), one line per
    runtime (float16 dashed), one panel per operator and thread count.
    Returns False when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    data = _as_dict(results)
    rows, meta = data["rows"], data["meta"]
    ops = list(dict.fromkeys(r["op_type"] for r in rows))
    threads = sorted(set(r["threads"] for r in rows))
    if not ops:
        return False
    fig, axes = plt.subplots(len(ops), len(threads), squeeze=False,
                             figsize=(5.5 * len(threads), 3.6 * len(ops)))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    styles = {"float32": "-", "float16": "--", "float64": ":"}
    for i, op in enumerate(ops):
        for j, t in enumerate(threads):
            ax = axes[i][j]
            sel = [r for r in rows if r["op_type"] == op and r["threads"] == t]
            for n, rt in enumerate(meta["runtimes"]):
                k = _key(rt)
                for dt in sorted(set(r["dtype"] for r in sel), key=lambda d: (d != "float32", d)):
                    pts = sorted((r["elements"], r[f"{k}_elem_per_ns"]) for r in sel
                                 if r["dtype"] == dt and r.get(f"{k}_elem_per_ns"))
                    if pts:
                        ax.plot([p[0] for p in pts], [p[1] for p in pts],
                                styles.get(dt, "-."), marker="o", ms=3, lw=1.2, alpha=0.85,
                                color=colors[n % len(colors)],
                                label=rt if dt == "float32" else f"{rt} ({dt})")
            ax.set_xscale("log")
            ax.set_ylim(bottom=0)
            ax.set_title(f"{op}, {t} thread{'s' if t > 1 else ''}", fontsize=10)
            ax.set_xlabel("elements of X")
            ax.set_ylabel("input elements / ns")
            ax.grid(True, which="both", alpha=0.3)
            if ax.lines:
                ax.legend(fontsize=7, ncol=2 if len(ax.lines) > 6 else 1)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# ---------------------------------------------------------------------------
# Markdown documents


def _method_text(meta) -> str:
    s = meta["settings"]
    return (
        "Each runtime runs in its own process (`python -m normops.benchmark.worker`), "
        "one runtime and one thread count per process, with `OMP_NUM_THREADS` set to "
        "the thread count, so ONNX Runtime's spinning thread pool or torch's OpenMP pool "
        "cannot slow another runtime down. "
        f"Each case is measured in {s['rounds']} rounds; the order of the runtimes is "
        "reversed every other round (A B C, C B A), so a slow drift of the machine "
        "affects every runtime alike. "
        f"In a process: inputs made from a fixed seed ({s['seed']}) outside timing, "
        f"up to {s['warmup']} warm-up calls (at most a quarter of the budget), then up "
        f"to {s['repeat']} samples or {s['budget']} s, each sample one call timed by "
        "`time.perf_counter_ns` (calls under 10 µs are timed in batches, divided by "
        "the batch size), with the garbage collector off. "
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
    return lines


def render_results_md(results, plot_file: str | None = None) -> str:
    """results.md: settings, machine, notes, overhead, the table."""
    data = _as_dict(results)
    meta, rows = data["meta"], data["rows"]
    out = ["# normops benchmark results", "",
           f"Run {meta.get('started')} to {meta.get('finished')}"
           + (" (quick: a smoke test, not a measurement)" if meta["settings"].get("quick") else ""),
           "", "## Method", "", _method_text(meta), "", "## Machine", ""]
    out += _machine_lines(meta)
    from .batch import batch_lines

    extra = [x for x in [overhead_line(meta)] + bandwidth_lines(meta) + batch_lines(meta) if x]
    if extra:
        out += ["", "## Overhead and bandwidth", ""] + [f"- {x}" for x in extra]
    if meta.get("notes"):
        out += ["", "## Notes", ""] + [f"- {n}" for n in meta["notes"]]
    out += ["", "## Ratios", "", ratio_table(rows, meta), "", "## Results", "",
            markdown_table(rows, meta), ""]
    if plot_file:
        out += [f"![input elements per ns]({plot_file})", ""]
    return "\n".join(out)


def render_page(results, plot_file: str | None = "performance.png") -> str:
    """The docs/performance.md page."""
    data = _as_dict(results)
    meta, rows = data["meta"], data["rows"]
    m = meta.get("machine", {})
    s = meta["settings"]
    out = [
        "# Performance",
        "",
        "<!-- Generated by bench/run_all.sh (normops.benchmark.report); "
        "do not edit by hand. -->",
        "",
        f"Measured {meta.get('started')} with `{meta.get('command') or 'python -m normops bench'}`.",
        "",
        "normops is compared with ONNX Runtime (the bar it must clear), NumPy and "
        "torch on the normalisation nodes of transformer models. The numbers below "
        "come from one shared 2-core machine: they are medians, and differences of a "
        "few percent are noise.",
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
    if meta.get("bandwidth"):
        bw = meta["bandwidth"]
        out += ["## Memory bandwidth", "",
                bw["method"], "",
                "| threads | read GB/s | copy GB/s |", "|---:|---:|---:|"]
        for t in sorted(bw["copy_gbs"], key=int):
            out.append(f"| {t} | {bw['read_gbs'][t]:.1f} | {bw['copy_gbs'][t]:.1f} |")
        out += ["",
                "A normalisation must read X once and write Y once, as a copy does, so its "
                "memory-bound limit is the time a copy of those bytes takes at the copy "
                "bandwidth of the same thread count. The `%copy` columns give that limit "
                "divided by the measured time. Inputs that fit in the caches can go above "
                "100%: the limit is the main-memory one.", ""]
    if meta.get("batch"):
        from .batch import batch_lines

        out += ["## Batches from threads", "",
                "`normops.map_batch` at 1 and 2 workers ([batch.md](batch.md)):", ""]
        out += [f"- {line}" for line in batch_lines(meta)] + [""]
    if plot_file:
        out += ["## Throughput", "",
                "Input elements per ns against the number of elements of X (log scale); "
                "one panel per operator and thread count, one line per runtime "
                "(float16 dashed).", "", f"![input elements per ns]({plot_file})", ""]
    out += ["## Results", "",
            "Latencies in µs (median of the round medians); `el/ns` = input elements per "
            "ns; `ORT/x` = ONNX Runtime latency / normops latency.", ""]
    for op in dict.fromkeys(r["op_type"] for r in rows):
        out += [f"### {op}", "", markdown_table([r for r in rows if r["op_type"] == op], meta), ""]
    if meta.get("notes"):
        out += ["## Notes", ""] + [f"- {n}" for n in meta["notes"]] + [""]
    out += ["## Reproduce", "",
            "```sh",
            "bash bench/run_all.sh          # full run, rewrites this page",
            "python -m normops bench --quick --case 'LayerNormalization_32x' --threads 1",
            "```", "",
            "See `bench/README.md` for every option.", ""]
    return "\n".join(out)


# ---------------------------------------------------------------------------


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m normops.benchmark.report",
        description="Render docs/performance.md (and the plot) from a results.json.")
    p.add_argument("results", help="results.json written by `python -m normops bench --out`")
    p.add_argument("--page", default="docs/performance.md", help="page to write")
    p.add_argument("--plot", default="docs/performance.png",
                   help="plot to write (referenced from the page by its relative path)")
    args = p.parse_args(argv)
    data = load(args.results)
    for path in (args.page, args.plot):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    made = plot(data, args.plot)
    rel = os.path.relpath(args.plot, os.path.dirname(os.path.abspath(args.page))) if made else None
    Path(args.page).write_text(render_page(data, rel))
    print(f"wrote {args.page}" + (f" and {args.plot}" if made else " (no plot: matplotlib missing)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
