"""The benchmark's figures, drawn with matplotlib (Agg) from a results.json.

- ``perf_vs_ort.png``: the headline, one group of bars per operator family:
  ONNX Runtime time / normops time (log scale, a line at 1x), exact and
  fast, 1 and 2 threads; the geometric mean over the family's float32
  cases, from the interleaved measurements.
- ``perf_vs_numpy.png``: the same against NumPy/SciPy for normops'
  NumPy/SciPy-style functions, one bar per input size and thread count.
- ``perf_<family>.png``: input elements per ns against the row width (or
  the input size) for the families measured at several sizes, with every
  runtime and the copy limit (the measured copy bandwidth); families
  measured at one size only have their bar in the headline.

`write_figures(results, directory)` writes them all and returns, per file,
the texts drawn in it (the test checks that every operator appears).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

__all__ = ["write_figures", "curve_families", "headline_rows", "short_label", "family_file",
           "HEADLINE", "NUMPY_CHART"]

HEADLINE = "perf_vs_ort.png"
NUMPY_CHART = "perf_vs_numpy.png"
#: figure size in inches at DPI: the headline is 1000 x 600 pixels
DPI = 100
FONT = 10

_COLORS = {  # runtime -> line colour in the throughput figures
    "normops-exact": "#1f5fa8", "normops-fast": "#e07b00", "onnxruntime": "#3a9a3a",
    "onnxruntime-iobinding": "#8fcf8f", "numpy": "#8c5fb0", "scipy": "#8c5fb0", "torch": "#c0392b",
}
_NAMES = {"normops-exact": "normops exact", "normops-fast": "normops fast",
          "onnxruntime": "ONNX Runtime", "onnxruntime-iobinding": "ONNX Runtime (io binding)",
          "numpy": "NumPy", "scipy": "SciPy", "torch": "torch"}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def _quiet(rows):
    return [r for r in rows if r.get("state", "quiet") == "quiet"]


def headline_rows(rows) -> dict:
    """{family: {(mode, threads): geomean of ORT/normops}} over the quiet
    float32 rows of the operator and session cases, in the rows' order."""
    out: dict = {}
    for r in _quiet(rows):
        if r.get("group", "operator") not in ("operator", "session") or r["dtype"] != "float32":
            continue
        fam = r.get("family") or r["op_type"]
        for mode in ("exact", "fast"):
            v = r.get(f"ort_over_{mode}")
            if v:
                out.setdefault(fam, {}).setdefault((mode, r["threads"]), []).append(v)
    return {fam: {k: _geomean(v) for k, v in d.items()} for fam, d in out.items()}


def _log_axis(ax, values, headroom=2.0):
    """Log y axis around `values` and 1x, ticks labelled 2x, 1/2x..., a
    black line at 1x; `headroom` leaves space above the bars for the legend."""
    from matplotlib.ticker import FixedLocator, NullLocator

    vals = [v for v in values if v]
    lo, hi = min(vals + [1.0]) / 1.25, max(vals + [1.0]) * headroom
    ax.set_yscale("log")
    ax.set_ylim(lo, hi)
    powers = [2.0 ** k for k in range(-6, 9)]
    ticks = [t for t in powers if lo <= t <= hi]
    if len(ticks) < 4:  # a narrow range: halfway ticks too
        ticks = sorted(t for t in powers + [1.5 * p for p in powers] if lo <= t <= hi)
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_yticklabels([f"{t:.3g}x" for t in ticks])
    ax.axhline(1.0, color="black", lw=1.2, zorder=3)
    ax.grid(True, axis="y", alpha=0.3)


def _bars(ax, labels, series, bottom=1.0, rotation=55):
    """Grouped bars from `bottom` (1x) up or down to each value:
    series = [(legend, colour, hatch, [value per label])]."""
    n = len(series)
    width = 0.8 / n
    for i, (name, color, hatch, vals) in enumerate(series):
        xs = [j + (i - (n - 1) / 2) * width for j in range(len(labels))]
        hs = [(v - bottom) if v else 0 for v in vals]
        ax.bar(xs, hs, width, bottom=bottom, color=color, hatch=hatch, edgecolor="white",
               linewidth=0.4, label=name, zorder=2)
        for x, v in zip(xs, vals):
            if not v:  # not measured: say so rather than leave a gap
                ax.text(x, bottom, "n/a", rotation=90, ha="center", va="bottom", fontsize=FONT,
                        color="#777777")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=rotation, ha="right" if rotation else "center",
                       rotation_mode="anchor", fontsize=FONT)
    ax.set_xlim(-0.6, len(labels) - 0.4)


def _category(family: str) -> int:
    """Normalisations, softmax and activations, index and scan, reductions,
    models: the order of the headline's groups."""
    if family.endswith("Normalization"):
        return 0
    if family in ("Softmax", "LogSoftmax", "Hardmax", "Sigmoid", "Gelu", "BiasGelu"):
        return 1
    if family in ("ArgMax", "ArgMin", "CumSum", "CumProd"):
        return 2
    if family.startswith("Reduce"):
        return 3
    return 4


def short_label(family: str) -> str:
    """A family's label under its bars (LayerNormalization -> LayerNorm)."""
    return family.replace("Normalization", "Norm")


def draw_headline(data, plt):
    rows, meta = data["rows"], data["meta"]
    table = headline_rows(rows)
    if not table:
        return None
    fams = sorted(table, key=_category)  # stable: the rows' order within a category
    threads = sorted({t for d in table.values() for _, t in d})
    shades = {"exact": ("#1f5fa8", "#7fb0e6"), "fast": ("#e07b00", "#f5bd72")}
    series = []
    for mode in ("exact", "fast"):
        for i, t in enumerate(threads):
            vals = [table[f].get((mode, t)) for f in fams]
            if any(vals):
                series.append((f"{mode}, {t} thread{'s' if t > 1 else ''}",
                               shades[mode][min(i, 1)], None, vals))
    fig, ax = plt.subplots(figsize=(1000 / DPI, 600 / DPI), dpi=DPI)
    _bars(ax, [short_label(f) for f in fams], series)
    for i in range(1, len(fams)):  # a thin line between categories
        if _category(fams[i]) != _category(fams[i - 1]):
            ax.axvline(i - 0.5, color="#999999", lw=0.8, ls=":")
    _log_axis(ax, [v for s in series for v in s[3]])
    ort = meta.get("versions", {}).get("onnxruntime", "")
    ax.set_title(f"normops speed-up over ONNX Runtime {ort} (ORT time / normops time; "
                 "above 1x normops is faster)", fontsize=FONT + 1)
    ax.set_ylabel("speed-up, log scale (geomean over sizes)", fontsize=FONT)
    ax.tick_params(axis="y", labelsize=FONT)
    ax.legend(fontsize=FONT, ncol=len(series), loc="upper left", frameon=True)
    foot = _footer(fig, meta, "float32; per family the geometric mean over its cases; normops and "
                   "ONNX Runtime calls interleaved in one process")
    fig.tight_layout(rect=(0, foot, 1, 1))
    return fig


def _footer(fig, meta, what) -> float:
    """A small grey note at the bottom of `fig` (what is plotted, machine,
    load, date); returns the figure fraction it takes."""
    import textwrap

    m = meta.get("machine", {})
    load = meta.get("loadavg_start")
    text = (f"{what}. {m.get('logical_cpus', '?')}-CPU {m.get('isa_level', '')} machine, "
            f"kernels {m.get('normops_isa', '?')}, load average {load[0] if load else '?'} at the start, "
            f"{str(meta.get('started', ''))[:16].replace('T', ' ')}.")
    lines = textwrap.wrap(text, 125)
    fig.text(0.005, 0.005, "\n".join(lines), fontsize=FONT, color="#555555", va="bottom")
    return 0.01 + 0.033 * len(lines)


def draw_numpy(data, plt):
    rows, meta = data["rows"], data["meta"]
    sel = [r for r in _quiet(rows) if r.get("group") == "numpy-style"]
    if not sel:
        return None
    fams = list(dict.fromkeys(r["family"] for r in sel))
    shapes = sorted({r["shape"] for r in sel}, key=lambda sh: math.prod(_dims(sh)))  # light = small
    threads = sorted({r["threads"] for r in sel})
    greens = ["#b8e0b0", "#5fb35a", "#1f6f2a", "#0b3d12"]
    series = []
    for i, shape in enumerate(shapes):
        for j, t in enumerate(threads):
            vals = []
            for f in fams:
                r = next((r for r in sel if r["family"] == f and r["shape"] == shape
                          and r["threads"] == t), None)
                vals.append(None if r is None else (r.get("numpy_over_exact") or r.get("scipy_over_exact")))
            if any(vals):
                series.append((f"{shape}, {t} thread{'s' if t > 1 else ''}",
                               greens[min(i, len(greens) - 1)] if j == 0 else greens[min(i, len(greens) - 1)],
                               None if j == 0 else "///", vals))
    if not series:  # NumPy and SciPy were not among the runtimes
        return None
    fig, ax = plt.subplots(figsize=(1000 / DPI, 600 / DPI), dpi=DPI)
    from normops_tools.cases.measured import SCIPY_STYLE

    names = [f.replace("normops.", "") for f in fams]
    _bars(ax, [f"{n} vs {'scipy' if n in SCIPY_STYLE else 'numpy'}" for n in names], series,
          rotation=35)
    ax.set_xlabel("normops.<function> against the NumPy or SciPy function it mirrors", fontsize=FONT)
    _log_axis(ax, [v for s in series for v in s[3]])
    ax.set_title("normops' NumPy/SciPy-style functions (exact): speed-up over NumPy / "
                 "scipy.special, same arguments", fontsize=FONT + 1)
    ax.set_ylabel("NumPy (or SciPy) time / normops time, log", fontsize=FONT)
    ax.tick_params(axis="y", labelsize=FONT)
    ax.legend(fontsize=FONT, ncol=min(len(series), 3), loc="upper left", title="input, threads",
              title_fontsize=FONT)
    foot = _footer(fig, meta, "float32; logsumexp, softmax and log_softmax against scipy.special, "
                   "the others against numpy; calls interleaved in one process")
    fig.tight_layout(rect=(0, foot, 1, 1))
    return fig


def _dims(shape: str):
    return [int(d) for d in shape.split("x")]


def curve_families(rows) -> dict:
    """{family: (x kind, {series label: [rows]})} for the families worth a
    curve: several row widths at one row count ("width"), else several
    input sizes ("elements"). Quiet float32 operator rows only."""
    fams: dict = {}
    for r in _quiet(rows):
        if r.get("group", "operator") == "operator" and r["dtype"] == "float32":
            fams.setdefault(r.get("family") or r["op_type"], []).append(r)
    out = {}
    for fam, rs in fams.items():
        by_rows: dict = {}
        for r in rs:
            d = _dims(r["shape"])
            if len(d) == 2 and r["width"] == d[1]:
                by_rows.setdefault(d[0], []).append(r)
        series = {f"{n} rows": v for n, v in sorted(by_rows.items(), reverse=True)
                  if len({r["width"] for r in v}) >= 3}
        if series:
            out[fam] = ("width", series)
        elif len({r["elements"] for r in rs}) >= 3:
            out[fam] = ("elements", {"": rs})
    return out


def draw_curve(data, fam, kind, series, plt):
    meta = data["meta"]
    runtimes = [rt for rt in meta["runtimes"] if rt in _COLORS]
    threads = sorted({r["threads"] for rs in series.values() for r in rs})
    fig, axes = plt.subplots(1, len(threads), figsize=(1000 / DPI, 450 / DPI), dpi=DPI,
                             squeeze=False, sharey=True)
    styles = ["-", "--", ":", "-."]
    bw = meta.get("bandwidth") or {}
    top = 0.0
    for ax, t in zip(axes[0], threads):
        for rt in runtimes:
            k = rt.replace("-", "_")
            for i, (label, rs) in enumerate(series.items()):
                pts = sorted((r["width"] if kind == "width" else r["elements"], r[f"{k}_elem_per_ns"])
                             for r in rs if r["threads"] == t and r.get(f"{k}_elem_per_ns"))
                if not pts:
                    continue
                top = max(top, max(p[1] for p in pts))
                name = _NAMES[rt] + (f", {label}" if label and len(series) > 1 else "")
                ax.plot([p[0] for p in pts], [p[1] for p in pts], styles[i % len(styles)], marker="o",
                        ms=3.5, lw=1.5, color=_COLORS[rt], label=name)
        copy = (bw.get("copy_gbs") or {})
        gbs = copy.get(t, copy.get(str(t)))
        if gbs:
            limit = gbs / 8  # float32: 4 bytes read + 4 written per element; GB/s = bytes/ns
            top = max(top, limit)
            ax.axhline(limit, color="black", ls=(0, (4, 3)), lw=1.2,
                       label="copy limit (main-memory copy bandwidth)")
            ax.annotate(f"copy limit, {gbs:.1f} GB/s", (0.01, limit), xycoords=("axes fraction", "data"),
                        xytext=(0, 3), textcoords="offset points", fontsize=FONT,
                        bbox={"fc": "white", "ec": "none", "alpha": 0.8, "pad": 1})
        if kind != "width":
            ax.set_xscale("log")
        ax.set_title(f"{t} thread{'s' if t > 1 else ''}", fontsize=FONT + 1)
        ax.set_xlabel("row width (elements normalised together)" if kind == "width"
                      else "input elements", fontsize=FONT)
        ax.tick_params(labelsize=FONT)
        ax.grid(True, which="major", alpha=0.3)
        if kind == "width":
            widths = sorted({r["width"] for rs in series.values() for r in rs})
            ax.set_xticks(widths)
            ax.set_xticklabels([str(w) for w in widths], rotation=45)
            ax.set_xlim(0, max(widths) * 1.05)
    axes[0][0].set_ylabel("input elements per ns (higher is faster)", fontsize=FONT)
    axes[0][0].set_ylim(0, top * 1.12 if top else 1)
    handles, labels = axes[0][0].get_legend_handles_labels()
    only = next(iter(series)) if len(series) == 1 else ""
    fig.suptitle(f"{fam} throughput, float32{', ' + only if only else ''} "
                 "(median of interleaved calls)", fontsize=FONT + 1)
    fig.legend(handles, labels, fontsize=FONT, loc="lower center",
               ncol=min(3, max(1, len(labels))), frameon=False)
    rows_of_legend = math.ceil(len(labels) / 3)
    fig.tight_layout(rect=(0, 0.06 + 0.045 * rows_of_legend, 1, 1))
    return fig


def family_file(family: str) -> str:
    """perf_<family>.png, the family in lower case letters and digits."""
    return "perf_" + re.sub(r"[^a-z0-9]+", "", family.lower()) + ".png"


def _texts(fig) -> list[str]:
    from matplotlib.text import Text

    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


def write_figures(results, directory) -> dict:
    """Draw every figure into `directory`; returns {file name: texts drawn}.
    Returns {} when matplotlib is not installed."""
    try:
        plt = _pyplot()
    except ImportError:
        return {}
    data = results.to_dict() if hasattr(results, "to_dict") else results
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    figs = [(HEADLINE, draw_headline(data, plt)), (NUMPY_CHART, draw_numpy(data, plt))]
    for fam, (kind, series) in curve_families(data["rows"]).items():
        figs.append((family_file(fam), draw_curve(data, fam, kind, series, plt)))
    if data["meta"].get("scaling"):
        from .scaling import FIGURE, draw

        figs.append((FIGURE, draw(data["meta"]["scaling"], plt)))
    out = {}
    with plt.rc_context({"font.size": FONT}):
        for name, fig in figs:
            if fig is None:
                continue
            fig.savefig(directory / name, dpi=DPI)
            out[name] = _texts(fig)
            plt.close(fig)
    return out
