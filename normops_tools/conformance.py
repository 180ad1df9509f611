"""Run the ONNX backend node test cases through normops.

The ``onnx`` package ships, for every operator, small one-node models with
recorded inputs and expected outputs
(``onnx/backend/test/data/node/test_*/``). This module finds the cases whose
operator normops serves, runs them with :func:`normops.run` in the exact and
the fast flavour, compares the results the way ONNX's own backend runner does
and reports a table per operator. ``python -m normops conformance`` calls
:func:`main`; the pytest suite (``tests/test_conformance.py``) runs the same
cases one by one.

``onnx`` is an optional dependency: it is imported when a case is discovered,
not when this module is imported.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import functools
import json
import re
import sys
from pathlib import Path

import numpy as np

from ._markdown import table_head, table_row

__all__ = [
    "Case",
    "Outcome",
    "Report",
    "check_output",
    "discover",
    "main",
    "node_test_dir",
    "run_all",
    "run_case",
    "served_operators",
    "to_markdown",
    "to_text",
]

MODES = ("exact", "fast")
# ONNX's backend runner compares floats with these unless a case's data.json
# says otherwise (no node case does in onnx 1.22).
RTOL = 1e-3
ATOL = 1e-7

PASSED = "passed"
FAILED = "failed"
NOT_SERVED = "not served"

_DEFAULT_DOMAINS = ("", "ai.onnx")
_REPO_ROOT = Path(__file__).resolve().parent.parent
_COMMAND = "python -m normops conformance"
_EXPANDED = "expanded function body"


# --------------------------------------------------------------------------
# onnx, imported lazily


def _onnx():
    """Return the ``onnx`` module, or explain which extra provides it."""
    try:
        import onnx
        import onnx.helper
        import onnx.numpy_helper
    except ImportError as exc:
        raise ImportError(
            "normops_tools.conformance needs the optional 'onnx' package (onnx==1.22.0); "
            "install it with the 'test' extra: pip install 'normops[test]'"
        ) from exc
    return onnx


def node_test_dir() -> Path:
    """Directory holding the ONNX backend node test cases of the installed onnx."""
    onnx = _onnx()
    return Path(onnx.__file__).resolve().parent / "backend" / "test" / "data" / "node"


def _domain(domain: str) -> str:
    # "" and "ai.onnx" name the same (default) domain; report it as "".
    return "" if domain in _DEFAULT_DOMAINS else domain


def _domain_label(domain: str) -> str:
    return domain or "ai.onnx"


# --------------------------------------------------------------------------
# Discovery


@dataclasses.dataclass(frozen=True)
class Case:
    """One ONNX node test directory.

    ``op_type``/``domain`` name the operator the case tests: the node's for a
    one-node graph, and for an ``*_expanded*`` graph (the operator's function
    body spelled out in several nodes) the operator of the one-node case it
    expands. They are ``None`` when no operator can be named. ``opset`` is the
    model's opset for the node's domain (one-node graphs only). ``reason`` is
    ``None`` for a served case, otherwise why normops does not run it.
    """

    name: str
    path: Path
    op_type: str | None
    domain: str | None
    opset: int | None
    n_nodes: int
    reason: str | None

    @property
    def served(self) -> bool:
        return self.reason is None


def _model_opset(model, domain: str) -> int | None:
    for entry in model.opset_import:
        if _domain(entry.domain) == domain:
            return int(entry.version)
    return None


def _non_tensor_input(graph) -> str | None:
    for value in graph.input:
        if value.type.WhichOneof("value") != "tensor_type":
            return value.name
    return None


def _node_kinds(nodes, limit: int = 5) -> str:
    """The distinct operator types of ``nodes`` in order of appearance, shortened."""
    kinds = list(dict.fromkeys(n.op_type for n in nodes))
    return ", ".join(kinds[:limit]) + (", ..." if len(kinds) > limit else "")


@functools.lru_cache(maxsize=None)
def _discover_all() -> tuple[Case, ...]:
    from normops import _registry

    onnx = _onnx()
    root = node_test_dir()
    if not root.is_dir():
        raise FileNotFoundError(f"no ONNX node test data under {root}")

    models = {}
    for path in sorted(p for p in root.iterdir() if (p / "model.onnx").is_file()):
        models[path.name] = (path, onnx.load(str(path / "model.onnx"), load_external_data=False))

    cases = []
    for name, (path, model) in models.items():
        nodes = model.graph.node
        if len(nodes) == 1:
            node = nodes[0]
            domain = _domain(node.domain)
            opset = _model_opset(model, domain)
            reason = None
            if opset is None:
                reason = f"model imports no opset for domain {_domain_label(domain)}"
            elif not _registry.is_served(domain, node.op_type, opset):
                reason = f"operator {node.op_type} ({_domain_label(domain)}, opset {opset}) not served"
            else:
                bad = _non_tensor_input(model.graph)
                if bad is not None:
                    reason = f"graph input {bad!r} is not a tensor"
            cases.append(Case(name, path, node.op_type, domain, opset, 1, reason))
            continue

        # Several nodes: an expanded function body (every such case in onnx
        # 1.22 is named <one-node case>_expanded[...]); it tests the operator
        # of that one-node case, which normops runs directly instead.
        op_type = domain = None
        kinds = _node_kinds(nodes)
        if "_expanded" in name:
            base = models.get(name[: name.index("_expanded")])
            if base is not None and len(base[1].graph.node) == 1:
                op_type = base[1].graph.node[0].op_type
                domain = _domain(base[1].graph.node[0].domain)
            reason = f"{_EXPANDED} ({len(nodes)} nodes: {kinds})"
        else:
            reason = f"graph of {len(nodes)} nodes ({kinds})"
        cases.append(Case(name, path, op_type, domain, None, len(nodes), reason))
    return tuple(cases)


def discover(pattern: str | None = None) -> list[Case]:
    """Every ONNX node test case, sorted by name, optionally filtered.

    ``pattern`` is a regular expression searched in the case name
    (``re.search``).
    """
    cases = _discover_all()
    if pattern is not None:
        regex = re.compile(pattern)
        cases = tuple(c for c in cases if regex.search(c.name))
    return list(cases)


def served_operators() -> list[tuple[str, str]]:
    """The (domain, op_type) pairs normops serves at some opset, sorted."""
    from normops import _registry

    return sorted({(_domain(d), op) for d, op in _registry.served_operators()})


# --------------------------------------------------------------------------
# Loading one case


def _attribute_value(attr):
    onnx = _onnx()
    value = onnx.helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, onnx.TensorProto):
        return onnx.numpy_helper.to_array(value)
    if isinstance(value, list):
        return [
            v.decode("utf-8")
            if isinstance(v, bytes)
            else onnx.numpy_helper.to_array(v)
            if isinstance(v, onnx.TensorProto)
            else v
            for v in value
        ]
    return value


def _read_tensor(path: Path) -> np.ndarray:
    onnx = _onnx()
    tensor = onnx.TensorProto()
    tensor.ParseFromString(path.read_bytes())
    return onnx.numpy_helper.to_array(tensor)


def _tolerances(case: Case) -> tuple[float, float]:
    # ONNX's loader lets a case override the tolerances in data.json.
    file = case.path / "data.json"
    if not file.is_file():
        return RTOL, ATOL
    data = json.loads(file.read_text())
    return float(data.get("rtol", RTOL)), float(data.get("atol", ATOL))


def _load(case: Case):
    """Node, attributes and the data sets of a case.

    Each data set is ``(label, inputs, expected)``: ``inputs`` follows the
    node's inputs (``None`` for an omitted optional input) and ``expected``
    lists ``(output index, name, array)`` for every named node output the
    graph records.
    """
    onnx = _onnx()
    model = onnx.load(str(case.path / "model.onnx"), load_external_data=False)
    graph = model.graph
    node = graph.node[0]
    attributes = {a.name: _attribute_value(a) for a in node.attribute}
    initializers = {t.name: onnx.numpy_helper.to_array(t) for t in graph.initializer}
    graph_inputs = [v.name for v in graph.input if v.name not in initializers]
    graph_outputs = [v.name for v in graph.output]

    data_sets = []
    for folder in sorted(case.path.glob("test_data_set_*")):
        values = dict(initializers)
        for i, name in enumerate(graph_inputs):
            values[name] = _read_tensor(folder / f"input_{i}.pb")
        recorded = {}
        for i, name in enumerate(graph_outputs):
            file = folder / f"output_{i}.pb"
            if file.is_file():
                recorded[name] = _read_tensor(file)
        inputs = [values[name] if name else None for name in node.input]
        expected = [
            (k, name, recorded[name]) for k, name in enumerate(node.output) if name and name in recorded
        ]
        data_sets.append((folder.name, inputs, expected))
    if not data_sets:
        raise FileNotFoundError(f"{case.name}: no test_data_set_* directory")
    return node, attributes, data_sets


# --------------------------------------------------------------------------
# Comparison


def _float_view(a: np.ndarray) -> np.ndarray | None:
    """``a`` as an ndarray NumPy can compare as floats, or None for exact kinds."""
    if a.dtype.kind in "fc":
        return a
    if a.dtype.kind == "V" and a.dtype.names is None:
        # ml_dtypes floats (bfloat16, float8...) are opaque to np.testing.
        try:
            return a.astype(np.float64)
        except (TypeError, ValueError):
            return None
    return None


def _index(flat: int, shape) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def check_output(expected: np.ndarray, got, *, rtol: float = RTOL, atol: float = ATOL) -> None:
    """Raise AssertionError unless ``got`` matches ``expected``.

    Shape and dtype must be equal. Floats are compared like ONNX's backend
    runner (``np.testing.assert_allclose(got, expected, rtol, atol)``, NaN
    only where NaN is expected); integers, bool and strings exactly. The
    message names the first differing element.
    """
    if not isinstance(got, np.ndarray):
        raise AssertionError(f"got a {type(got).__name__}, not a numpy.ndarray")
    if got.shape != expected.shape:
        raise AssertionError(f"shape {got.shape}, expected {expected.shape}")
    if got.dtype != expected.dtype:
        raise AssertionError(f"dtype {got.dtype}, expected {expected.dtype}")
    if got.size == 0:
        return

    want = _float_view(expected)
    if want is not None:
        have = _float_view(got)
        try:
            np.testing.assert_allclose(have, want, rtol=rtol, atol=atol, equal_nan=True)
            return
        except AssertionError:
            pass
        with np.errstate(invalid="ignore", over="ignore"):
            bad = ~np.isclose(have, want, rtol=rtol, atol=atol, equal_nan=True)
        tolerance = f"rtol={rtol:g}, atol={atol:g}"
    else:
        try:
            np.testing.assert_array_equal(got, expected, strict=True)
            return
        except AssertionError:
            pass
        bad = np.asarray(got != expected)
        tolerance = "exact"
    flat = np.flatnonzero(bad)
    first = int(flat[0]) if flat.size else 0
    at = _index(first, expected.shape)
    raise AssertionError(
        f"{flat.size} of {expected.size} elements differ ({tolerance}); "
        f"first at index {at}: expected {expected.reshape(-1)[first]!s}, "
        f"got {got.reshape(-1)[first]!s}"
    )


def _snapshot(inputs):
    return [None if a is None else (a.dtype, a.shape, a.tobytes()) for a in inputs]


# --------------------------------------------------------------------------
# Running


@dataclasses.dataclass(frozen=True)
class Outcome:
    """Result of one case in one mode: PASSED, FAILED or NOT_SERVED."""

    case: Case
    mode: str
    status: str
    message: str = ""


def run_case(case: Case, mode: str) -> Outcome:
    """Run a case through :func:`normops.run` in ``mode`` and compare."""
    import normops

    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    if not case.served:
        return Outcome(case, mode, NOT_SERVED, case.reason)
    try:
        node, attributes, data_sets = _load(case)
        rtol, atol = _tolerances(case)
    except Exception as exc:  # noqa: BLE001 - a broken case is a failure, reported
        return Outcome(case, mode, FAILED, f"cannot load the case: {type(exc).__name__}: {exc}")

    messages = []
    for label, inputs, expected in data_sets:
        where = f"{label}: " if len(data_sets) > 1 else ""
        before = _snapshot(inputs)
        try:
            outputs = normops.run(
                case.op_type, inputs, attributes, opset=case.opset, domain=case.domain, mode=mode
            )
        except normops.UnsupportedError as exc:
            return Outcome(case, mode, NOT_SERVED, f"{where}{exc}")
        except Exception as exc:  # noqa: BLE001 - every other error is a failure
            messages.append(f"{where}{type(exc).__name__}: {exc}")
            continue
        for k, (old, new) in enumerate(zip(before, _snapshot(inputs))):
            if old != new:
                messages.append(f"{where}input {k} ({node.input[k]!r}) was modified")
        if not isinstance(outputs, (list, tuple)):
            messages.append(f"{where}run() returned a {type(outputs).__name__}, not a list of outputs")
            continue
        for k, name, want in expected:
            if k >= len(outputs):
                messages.append(f"{where}output {k} ({name!r}) missing: run() returned {len(outputs)} outputs")
                continue
            try:
                check_output(want, outputs[k], rtol=rtol, atol=atol)
            except AssertionError as exc:
                messages.append(f"{where}output {k} ({name!r}): {exc}")
    if messages:
        return Outcome(case, mode, FAILED, "\n".join(messages))
    return Outcome(case, mode, PASSED)


@dataclasses.dataclass
class Report:
    """Outcomes of a run, with the cases and modes it covered."""

    cases: list[Case]
    modes: tuple[str, ...]
    operators: list[tuple[str, str]]
    outcomes: dict[tuple[str, str], Outcome]  # (case name, mode) -> outcome
    filtered: bool = False  # only some cases: operators without one are left out

    def case_status(self, case: Case) -> str:
        statuses = {self.outcomes[case.name, m].status for m in self.modes}
        if FAILED in statuses:
            return FAILED
        if NOT_SERVED in statuses:
            return NOT_SERVED
        return PASSED

    def operator_cases(self, domain: str, op_type: str) -> list[Case]:
        return [c for c in self.cases if c.op_type == op_type and c.domain == domain]

    def listed_cases(self) -> list[Case]:
        served = set(self.operators)
        return [c for c in self.cases if (c.domain, c.op_type) in served]

    @property
    def n_failed(self) -> int:
        return sum(self.case_status(c) == FAILED for c in self.listed_cases())


def run_all(cases: list[Case] | None = None, modes=MODES, *, filtered: bool = False) -> Report:
    """Run ``cases`` (default: every case) in each of ``modes``.

    Only cases of operators normops serves at some opset are run; the others
    are recorded as not served. ``filtered`` says the cases are a selection,
    so the table leaves out served operators that have none.
    """
    if cases is None:
        cases = discover()
    modes = tuple(modes)
    operators = served_operators()
    served_ops = set(operators)
    outcomes = {}
    for case in cases:
        for mode in modes:
            if (case.domain, case.op_type) in served_ops:
                outcomes[case.name, mode] = run_case(case, mode)
            else:
                outcomes[case.name, mode] = Outcome(case, mode, NOT_SERVED, case.reason or "operator not served")
    return Report(list(cases), modes, operators, outcomes, filtered)


# --------------------------------------------------------------------------
# Reports

_HEADERS = ("operator", "domain", "opsets seen", "cases", "passed exact", "passed fast", "failed", "not served")


def _rows(report: Report) -> list[tuple[str, ...]]:
    rows = []
    totals = [0, 0, 0, 0, 0]
    for domain, op_type in report.operators:
        cases = report.operator_cases(domain, op_type)
        if not cases and report.filtered:
            continue
        opsets = sorted({c.opset for c in cases if c.opset is not None})
        passed = []
        for mode in MODES:
            if mode in report.modes:
                passed.append(sum(report.outcomes[c.name, mode].status == PASSED for c in cases))
            else:
                passed.append(None)
        failed = sum(report.case_status(c) == FAILED for c in cases)
        not_served = sum(report.case_status(c) == NOT_SERVED for c in cases)
        counts = [len(cases), *passed, failed, not_served]
        totals = [t + (n or 0) for t, n in zip(totals, counts)]
        rows.append(
            (
                op_type,
                _domain_label(domain),
                ", ".join(map(str, opsets)) or "-",
                *("-" if n is None else str(n) for n in counts),
            )
        )
    ran = [True, *(m in report.modes for m in MODES), True, True]
    rows.append(("total", "", "", *(str(t) if r else "-" for t, r in zip(totals, ran))))
    return rows


def _others_line(report: Report) -> str:
    listed = {c.name for c in report.listed_cases()}
    others = [c for c in report.cases if c.name not in listed]
    if not others:
        return f"All {len(report.cases)} node test cases belong to operators normops serves."
    ops = {(c.domain, c.op_type) for c in others if c.op_type is not None}
    return (
        f"{len(others)} of the {len(report.cases)} node test cases belong to {len(ops)} "
        f"operators that normops does not serve; they are not listed."
    )


def _failures(report: Report) -> list[tuple[Case, str, str]]:
    """(case, modes, message) per failing case; modes sharing a message merge."""
    found = []
    for case in report.listed_cases():
        by_message: dict[str, list[str]] = {}
        for mode in report.modes:
            outcome = report.outcomes[case.name, mode]
            if outcome.status == FAILED:
                by_message.setdefault(outcome.message, []).append(mode)
        for message, modes in by_message.items():
            found.append((case, ", ".join(modes), message))
    return found


def _not_served(report: Report) -> list[tuple[Case, str]]:
    found = []
    for case in report.listed_cases():
        if report.case_status(case) != NOT_SERVED:
            continue
        reasons = []
        for mode in report.modes:
            outcome = report.outcomes[case.name, mode]
            if outcome.status == NOT_SERVED and outcome.message not in reasons:
                reasons.append(outcome.message)
        found.append((case, "; ".join(reasons)))
    return found


def _summary(report: Report) -> str:
    listed = report.listed_cases()
    counts = {s: sum(report.case_status(c) == s for c in listed) for s in (PASSED, FAILED, NOT_SERVED)}
    return (
        f"{len(listed)} cases of served operators ({', '.join(report.modes)}): "
        f"{counts[PASSED]} passed, {counts[FAILED]} failed, {counts[NOT_SERVED]} not served"
    )


def to_text(report: Report, *, details: bool = True) -> str:
    """Plain-text table for the terminal."""
    rows = [_HEADERS, *_rows(report)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEADERS))]
    lines = []
    for j, row in enumerate(rows):
        cells = [c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines += ["", _others_line(report), _summary(report)]
    if details:
        failures = _failures(report)
        if failures:
            lines += ["", "Failures:"]
            for case, modes, message in failures:
                lines.append(f"  {case.name} [{modes}]")
                lines += [f"      {line}" for line in message.splitlines()]
        # Expanded function bodies are many and alike: counted, not listed.
        expanded: dict[str, int] = {}
        listed = []
        for case, reason in _not_served(report):
            if reason.startswith(_EXPANDED):
                expanded[case.op_type] = expanded.get(case.op_type, 0) + 1
            else:
                listed.append(f"  {case.name}: {reason}")
        if expanded or listed:
            lines += ["", "Not served:"]
            lines += [f"  {op}: {n} expanded function bodies" for op, n in expanded.items()]
            lines += listed
    return "\n".join(lines) + "\n"


def _command(modes, pattern) -> str:
    parts = [_COMMAND]
    if tuple(modes) != MODES:
        parts.append(f"--mode {','.join(modes)}")
    if pattern is not None:
        parts.append(f"--filter '{pattern}'")
    return " ".join(parts)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(report: Report, *, command: str = _COMMAND, date: str | None = None) -> str:
    """The Markdown page written to ``docs/conformance.md``.

    Everything but the ``Generated on`` line depends only on the cases, the
    modes and normops's results.
    """
    onnx = _onnx()
    if date is None:
        date = datetime.date.today().isoformat()
    modes = " and ".join(f"`{m}`" for m in report.modes)
    out = [
        "# ONNX conformance",
        "",
        f"Produced by `{command}`; do not edit by hand. It runs the backend node "
        f"test cases shipped with onnx {onnx.__version__} "
        "(`onnx/backend/test/data/node`) through `normops.run` in the "
        f"{modes} mode{'s' if len(report.modes) > 1 else ''}.",
        "",
        f"Generated on {date}.",
        "",
        "A case is served when its graph is a single node whose operator and opset "
        "normops serves. Outputs are compared as ONNX's backend runner compares them: "
        f"equal shape and dtype, floats with `assert_allclose(rtol={RTOL:g}, atol={ATOL:g})` "
        "(NaN only where NaN is expected), integers and booleans exactly. "
        "*Failed* counts the cases failing in at least one mode; *not served* counts "
        "the cases normops does not run (expanded function bodies, opsets or types "
        "it does not serve).",
        "",
    ] + table_head(_HEADERS, left=3)
    for row in _rows(report):
        cells = [_md_cell(c) for c in row]
        if row[0] == "total":
            cells = [f"**{c}**" if c else "" for c in cells]
        out.append(table_row(cells))
    out += ["", _others_line(report) + " " + _summary(report) + ".", ""]

    out += ["## Failures", ""]
    failures = _failures(report)
    if not failures:
        out += ["None.", ""]
    for case, modes_, message in failures:
        out += [f"- `{case.name}` ({case.op_type}, {modes_}):", "", "  ```text"]
        out += [f"  {line}" for line in message.splitlines()]
        out += ["  ```", ""]

    out += ["## Not served", ""]
    not_served = _not_served(report)
    if not not_served:
        out += ["None.", ""]
    current = None
    for case, reason in not_served:
        if case.op_type != current:
            if current is not None:
                out.append("")
            current = case.op_type
            out += [f"### {case.op_type}", ""]
        out.append(f"- `{case.name}`: {_md_cell(reason)}")
    if not_served:
        out.append("")
    return "\n".join(out)


# --------------------------------------------------------------------------
# Sections written into the page by other commands

#: (begin, end) markers of the sections other commands write into the page
#: (``python -m normops compare-ort --write-docs``); regenerating the table
#: keeps them, after it.
PRESERVED_SECTIONS = (("<!-- compare-ort:begin -->", "<!-- compare-ort:end -->"),)


def _section_span(text: str, begin: str, end: str):
    start, stop = text.find(begin), text.find(end)
    if not 0 <= start < stop:
        return None
    stop += len(end)
    if text[stop:stop + 1] == "\n":
        stop += 1
    return start, stop


def without_preserved_sections(text: str) -> str:
    """``text`` without the preserved sections (and the blank line before each)."""
    for begin, end in PRESERVED_SECTIONS:
        span = _section_span(text, begin, end)
        if span is not None:
            start, stop = span
            if start and text[start - 1] == "\n":
                start -= 1
            text = text[:start] + text[stop:]
    return text


def with_preserved_sections(markdown: str, old: str) -> str:
    """``markdown`` followed by the preserved sections of the ``old`` page."""
    for begin, end in PRESERVED_SECTIONS:
        span = _section_span(old, begin, end)
        if span is not None:
            section = old[span[0]:span[1]]
            markdown += "\n" + section + ("" if section.endswith("\n") else "\n")
    return markdown


# --------------------------------------------------------------------------
# Command line


def _default_output() -> Path | None:
    docs = _REPO_ROOT / "docs"
    if (_REPO_ROOT / "pyproject.toml").is_file() and docs.is_dir():
        return docs / "conformance.md"
    return None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=_COMMAND,
        description=(
            "Run the ONNX backend node test cases of every operator normops serves, "
            "print a table per operator and write it as Markdown."
        ),
    )
    parser.add_argument(
        "--mode",
        choices=("exact", "fast", "both"),
        default="both",
        help="flavour(s) to run (default: both)",
    )
    parser.add_argument(
        "--output",
        metavar="PATH",
        default=None,
        help=(
            "write the Markdown table to PATH (default: docs/conformance.md in a source "
            "checkout, for a full run with both modes; otherwise nothing is written)"
        ),
    )
    parser.add_argument("--filter", metavar="REGEX", default=None, help="only cases whose name matches REGEX")
    parser.add_argument("--quiet", action="store_true", help="print only the summary line")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m normops conformance``.

    Returns 0 when no served case fails, 1 when one does, 2 when onnx is
    missing.
    """
    parser = _parser()
    args = parser.parse_args(argv)
    if args.filter is not None:
        try:
            re.compile(args.filter)
        except re.error as exc:
            parser.error(f"--filter: invalid regular expression: {exc}")
    modes = MODES if args.mode == "both" else (args.mode,)

    try:
        cases = discover(args.filter)
    except ImportError as exc:
        print(f"normops conformance: {exc}", file=sys.stderr)
        return 2
    report = run_all(cases, modes, filtered=args.filter is not None)

    if args.output is not None:
        output = Path(args.output)
    elif args.filter is None and modes == MODES:
        # The checked-in page is the full table; a partial run only prints.
        output = _default_output()
    else:
        output = None

    if args.quiet:
        print(_summary(report))
    else:
        print(to_text(report), end="")
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        old = output.read_text(encoding="utf-8") if output.is_file() else ""
        markdown = to_markdown(report, command=_command(modes, args.filter))
        output.write_text(with_preserved_sections(markdown, old), encoding="utf-8")
        if not args.quiet:
            print(f"wrote {output}")
    return 1 if report.n_failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
