"""The report of a run (text and the Markdown section of
docs/conformance.md) and the command line, ``python -m normops
compare-ort``."""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from pathlib import Path

import numpy as np

from .._markdown import table
from normops_tools.cases.randomized import GENERATORS, _versions, make_cases
from .comparison import DOCUMENTED, FAIL, MODES, NEAR_FLOAT64, NOT_SERVED, ORT_FAILS, PASS, _ORDER, _onnx
from .differences import DOCUMENTED_DIFFERENCES, NAN_DIFFERENCES, OPEN_DISAGREEMENTS
from .runner import run_case


BEGIN = "<!-- compare-ort:begin -->"
END = "<!-- compare-ort:end -->"
_COMMAND = "python -m normops compare-ort"


@dataclasses.dataclass
class Report:
    seed: int
    per_op: int
    results: list
    without_generator: list  # served (domain, op_type) with no generator
    waiting: list  # generators whose operator is not served

    @property
    def n_failed(self) -> int:
        return sum(r.status == FAIL for r in self.results)


def run(seed=0, per_op=10, pattern=None, modes=MODES, progress=None) -> Report:
    """Generate and run the cases of every served operator matching ``pattern``."""
    from normops import _registry

    regex = re.compile(pattern) if pattern is not None else None
    served = [(d, op) for d, op in _registry.served_operators()]
    selected = [k for k in served if regex is None or regex.search(k[1])]
    without = [k for k in selected if k not in GENERATORS]
    waiting = sorted(k for k, gen in GENERATORS.items()
                     if _versions(gen) is None and (regex is None or regex.search(k[1])))
    results = []
    for key in selected:
        gen = GENERATORS.get(key)
        if gen is None:
            continue
        for case in make_cases(gen, seed, per_op):
            results.append(run_case(case, modes))
            if progress is not None:
                progress(results[-1])
    return Report(seed, per_op, results, without, waiting)


# --------------------------------------------------------------------------
# Reports

_HEADERS = ("operator", "opset", "dtype", "cases", "pass", "documented", "ORT does not run",
            "not served", "failures", "worst scaled error of passes")


def _groups(report: Report):
    groups = {}
    for r in report.results:
        c = r.case
        groups.setdefault((c.domain, c.op_type, c.version, c.types), []).append(r)
    return groups


def _fmt_err(results) -> str:
    compared = [r.error for r in results if r.status == PASS]
    if not compared:
        return "-"
    worst = max(compared)
    return "inf" if worst == np.inf else ("0" if worst == 0 else f"{worst:.2g}")


def _rows(report: Report):
    rows = []
    for (domain, op_type, version, dtype), results in _groups(report).items():
        counts = [sum(r.status == s for r in results) for s in (PASS, DOCUMENTED, ORT_FAILS, NOT_SERVED, FAIL)]
        name = op_type if domain in ("", "ai.onnx") else f"{domain}::{op_type}"
        opset = str(version) if results[0].case.opset == version else f"{version} (model {results[0].case.opset})"
        rows.append((name, opset, dtype, str(len(results)), *map(str, counts), _fmt_err(results)))
    return rows


def _ort_reasons(report: Report):
    """(op, opset, dtype) -> (error type, first message) for ORT refusals."""
    found = {}
    for r in report.results:
        if r.status == ORT_FAILS:
            c = r.case
            found.setdefault((c.op_type, c.version, c.types), (r.category, r.message))
    return found


def _summary(report: Report) -> str:
    counts = {s: sum(r.status == s for r in report.results) for s in _ORDER}
    return (f"{len(report.results)} cases (seed {report.seed}, {report.per_op} per operator, opset and dtype; "
            f"flavours exact and fast): {counts[PASS]} pass, {counts[DOCUMENTED]} documented differences, "
            f"{counts[ORT_FAILS]} ORT does not run, {counts[NOT_SERVED]} not served by normops, "
            f"{counts[FAIL]} failures")


def to_text(report: Report) -> str:
    rows = [_HEADERS, *_rows(report)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEADERS))]
    lines = []
    for j, row in enumerate(rows):
        lines.append("  ".join(c.ljust(w) if i < 3 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(row, widths))).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines += ["", _summary(report)]
    for d, op in report.without_generator:
        lines.append(f"NO GENERATOR: {op} ({d or 'ai.onnx'}) is served but compare-ort has no generator for it")
    if report.waiting:
        lines.append("Generators waiting for their operator to be served: "
                     + ", ".join(op for _, op in report.waiting))
    documented = {}
    for r in report.results:
        if r.status == DOCUMENTED:
            documented[r.category] = documented.get(r.category, 0) + 1
    if documented:
        lines += ["", "Documented differences (reasons: docs/conformance.md):"]
        lines += [f"  {name}: {n}" for name, n in documented.items()]
    failures = [r for r in report.results if r.status == FAIL]
    if failures:
        lines += ["", "Failures:"]
        for r in failures:
            lines.append(f"  {r.case.label}" + (f"  [open: {r.category}]" if r.category else ""))
            lines += [f"      {m}" for m in r.message.splitlines()]
    return "\n".join(lines) + "\n"


def to_markdown(report: Report, command: str = _COMMAND) -> str:
    """The generated section of docs/conformance.md, markers included."""
    onnx, ort = _onnx()
    out = [
        BEGIN,
        "## Differential comparison with ONNX Runtime",
        "",
        f"Produced by `{command}`; do not edit by hand (`python -m normops conformance` "
        "keeps this section as it is).",
        "",
        f"Randomized one-node cases for every operator normops serves, at every served version "
        f"(the model stamped with that opset), run in ONNX Runtime {ort.__version__} "
        f"(CPU execution provider, one thread; models built with onnx {onnx.__version__}) and "
        "in normops in the `exact` and `fast` flavours. Cases have rank 1 to 5, odd widths, "
        "random axes and axis subsets (negative ones where the opset allows them), keepdims "
        "and other attribute variations valid at the opset, and every third case injects "
        "special values (NaN, ±inf, -0, subnormals, large values) into the first input. "
        "Every candidate dtype the ONNX schema of that version allows is tried (a dtype "
        "in parentheses is another input's, e.g. a float32 scale); what ONNX Runtime or "
        "normops does not take is counted, not failed. ONNX Runtime's Python API takes no "
        "bfloat16 arrays, so its bfloat16 inputs and outputs pass through exact Casts "
        "from and to float32 in the model.",
        "",
        "Error measure: per output, `max|a - b| / max(1, max|b|)` over the elements where both "
        "are finite (`a` normops, `b` ONNX Runtime, in float64); non-finite elements must be "
        "identical (NaN at the same positions, the same infinities; +0 equals -0). Bound: `1e-4` for "
        "float32 and float64, `4 * eps` of the type for float16 (3.9e-3) and bfloat16 "
        "(3.1e-2); integer outputs exactly. Shapes and dtypes must be equal. A case counts "
        "as its worst flavour. *documented* counts cases whose disagreement falls in a "
        "documented difference (below, each with its reason); they are not failures. A numeric failure on "
        "finite inputs also gives both sides' scaled error from the float64 result "
        "(normops exact on the inputs widened to float64).",
        "",
    ] + table(_HEADERS, _rows(report), left=3)
    out += ["", _summary(report) + ".", ""]
    if report.without_generator:
        out += ["Served operators without a generator (not compared): "
                + ", ".join(f"{op} ({d or 'ai.onnx'})" for d, op in report.without_generator) + ".", ""]
    if report.waiting:
        out += ["Generators ready for operators not served yet: "
                + ", ".join(op for _, op in report.waiting) + ".", ""]
    out += ["### Documented differences", "",
            "Disagreements whose cause is established; they are not failures. The NaN rules "
            "of ReduceMax/ReduceMin and ArgMax/ArgMin apply to any case with NaN in its input; "
            "every other rule checks its evidence on each case (a control run with the "
            "triggering values replaced, the exact product, ONNX Runtime at double precision, "
            "the float64 result, a NumPy model of ONNX Runtime's fused form, or the exact "
            "result with the conditioning measured), and a case whose evidence does not hold "
            "stays a failure.",
            ""]
    for name, (ops, reason) in NAN_DIFFERENCES.items():
        seen = sum(r.status == DOCUMENTED and r.category == name for r in report.results)
        out.append(f"- **{name}** ({seen} cases in this run): {reason}")
    for name, doc in DOCUMENTED_DIFFERENCES.items():
        seen = sum(r.status == DOCUMENTED and r.category == name for r in report.results)
        out.append(f"- **{name}** ({seen} cases in this run; when: {doc.condition}): {doc.reason} "
                   f"Spec: {doc.spec}.")
    shown = [r for r in report.results if r.status == DOCUMENTED and r.category in DOCUMENTED_DIFFERENCES]
    if shown:
        out += ["", "The cases of this run under the rules checked case by case:", ""]
    for r in shown:
        out += [f"- `{r.case.label}` ({r.category}):", "", "  ```text"]
        out += [f"  {m}" for m in r.message.splitlines()]
        out += ["  ```", ""]
    out += ["", "### Failures", ""]
    failures = [r for r in report.results if r.status == FAIL]
    if not failures:
        out += ["None.", ""]
    else:
        out += ["Disagreements with ONNX Runtime the spec does not document. Those of a known "
                "kind are grouped under it (they are still failures until the spec decides).", ""]
    groups = {}
    for r in failures:
        groups.setdefault(r.category, []).append(r)
    descriptions = {name: text for name, (_, _, text) in OPEN_DISAGREEMENTS.items()}
    descriptions[NEAR_FLOAT64] = (
        "For every output that disagrees numerically, each flavour of normops is within the "
        "bound of the float64 result (normops exact on the inputs widened to float64, itself "
        "checked against ONNX Runtime in float64 to 1e-9): the disagreement is ONNX Runtime's "
        "error or the conditioning of the data, not normops's.")
    for name in [*(n for n in descriptions if n in groups), *([""] if "" in groups else [])]:
        found = groups[name]
        if name:
            out += [f"#### {name} ({len(found)} cases)", "", descriptions[name], ""]
        else:
            out += [f"#### Other ({len(found)} cases)", ""]
        for r in found:
            out += [f"- `{r.case.label}`:", "", "  ```text"]
            out += [f"  {m}" for m in r.message.splitlines()]
            out += ["  ```", ""]
    out += ["### Where ONNX Runtime does not run", ""]
    reasons = _ort_reasons(report)
    if not reasons:
        out += ["None.", ""]
    for (op, version, dtype), (kind, msg) in sorted(reasons.items()):
        out.append(f"- {op}-{version} {dtype}: {kind}: {msg.replace('|', '/')}")
    out += ["", END]
    return "\n".join(out) + "\n"


def replace_section(page: str, section: str) -> str:
    """``page`` with its compare-ort section replaced by ``section`` (appended if absent)."""
    start, stop = page.find(BEGIN), page.find(END)
    if start >= 0 and stop > start:
        return page[:start] + section.rstrip("\n") + page[stop + len(END):]
    # The layout python -m normops conformance keeps: the page, a blank line, the section.
    return page + ("\n" if page else "") + section


def extract_section(page: str) -> str | None:
    """The compare-ort section of ``page``, markers included, or None."""
    start, stop = page.find(BEGIN), page.find(END)
    if start >= 0 and stop > start:
        return page[start:stop + len(END)] + "\n"
    return None


def _default_page() -> Path | None:
    from normops_tools import conformance

    return conformance._default_output()


# --------------------------------------------------------------------------
# Command line


def _integer(minimum: int, what: str):
    """An argparse type: an int not below ``minimum``."""

    def parse(text):
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(f"expected a {what} integer, got {text!r}")
        return value

    return parse


def _regex(text):
    try:
        re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"invalid regular expression: {exc}") from None
    return text


def _parser():
    p = argparse.ArgumentParser(
        prog=_COMMAND,
        description="Compare every served operator with ONNX Runtime on randomized one-node cases.")
    p.add_argument("--seed", type=_integer(0, "non-negative"), default=0, help="random seed (default 0)")
    p.add_argument("--cases-per-op", type=_integer(1, "positive"), default=None, metavar="K",
                   help="cases per operator, opset and dtype (default 10; 3 with --quick)")
    p.add_argument("--op", metavar="REGEX", type=_regex, default=None, help="only operators whose name matches REGEX")
    p.add_argument("--quick", action="store_true", help="3 cases per operator, opset and dtype")
    p.add_argument("--write-docs", action="store_true",
                   help="write the results into docs/conformance.md (its compare-ort section)")
    p.add_argument("--output", metavar="PATH", default=None,
                   help="page to write with --write-docs (default: docs/conformance.md)")
    p.add_argument("--quiet", action="store_true", help="print only the summary")
    return p


def main(argv=None) -> int:
    """0: no failure; 1: a failure; 2: bad usage or onnx/onnxruntime missing."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.output is not None and not args.write_docs:
        parser.error("--output needs --write-docs")
    if args.quick and args.cases_per_op is not None:
        parser.error("--quick and --cases-per-op are exclusive")
    per_op = args.cases_per_op or (3 if args.quick else 10)
    try:
        _onnx()
    except ImportError as exc:
        print(f"normops compare-ort: {exc}", file=sys.stderr)
        return 2
    report = run(args.seed, per_op, args.op)
    if not report.results and not report.without_generator:
        waiting = ", ".join(op for _, op in report.waiting)
        hint = f" (generators waiting for these to be served: {waiting})" if waiting else ""
        print(f"normops compare-ort: no served operator matches --op {args.op!r}{hint}", file=sys.stderr)
        return 2
    print(_summary(report) if args.quiet else to_text(report), end="\n" if args.quiet else "")
    if args.write_docs:
        page = Path(args.output) if args.output else _default_page()
        if page is None:
            print("normops compare-ort: no docs/ directory here; pass --output PATH", file=sys.stderr)
            return 2
        parts = [_COMMAND, f"--seed {args.seed}", f"--cases-per-op {per_op}"]
        if args.op:
            parts.append(f"--op '{args.op}'")
        parts.append("--write-docs")
        text = page.read_text(encoding="utf-8") if page.is_file() else ""
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(replace_section(text, to_markdown(report, " ".join(parts))), encoding="utf-8")
        if not args.quiet:
            print(f"wrote {page}")
    return 1 if report.n_failed else 0


if __name__ == "__main__":
    sys.exit(main())
