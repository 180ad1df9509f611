"""Markdown tables, written one way by every generated page (the
performance page, the conformance page and the ONNX Runtime comparison)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def table_row(cells: Iterable[str]) -> str:
    """One table line: ``| a | b |``."""
    return "| " + " | ".join(cells) + " |"


def table_head(header: Sequence[str], *, left: int = 1) -> list[str]:
    """The header line and the alignment line: the first ``left`` columns
    (labels) aligned left, the others (figures) right."""
    return [table_row(header), table_row("---" if i < left else "---:" for i in range(len(header)))]


def table(header: Sequence[str], rows: Iterable[Sequence[str]], *, left: int = 1) -> list[str]:
    """The lines of a whole table; every row has one cell per column."""
    lines = table_head(header, left=left)
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"a table row has {len(row)} cells for {len(header)} columns")
        lines.append(table_row(row))
    return lines
