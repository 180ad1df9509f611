"""The specification's chunk, tile and long-sequence numbers live in one
place per language, and the places agree: normops/_kernels/spec_constants.h
(the kernels), normops/_spec.py (dask, the executable specification, the
tests) and the text of docs/specification.md. No other source defines them.
Pure Python: reads files and imports normops._spec only."""
import ast
import re
from pathlib import Path

import pytest

from normops import _spec

ROOT = Path(__file__).resolve().parents[1]
HEADER = ROOT / "normops" / "_kernels" / "spec_constants.h"
SPEC = (ROOT / "docs" / "specification.md").read_text(encoding="utf-8")
NAMES = ("ROW_CHUNK_ELEMENTS", "REDUCE_CHUNK_ELEMENTS", "REDUCE_TILE", "LONG_TERMS", "BLOCK_TERMS")


def _integer(expression):
    """The value of an integer expression of literals, <<, *, + and
    parentheses (what the header writes), refusing anything else."""
    def value(node):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.LShift, ast.Mult, ast.Add)):
            left, right = value(node.left), value(node.right)
            return left << right if isinstance(node.op, ast.LShift) else (
                left * right if isinstance(node.op, ast.Mult) else left + right)
        raise ValueError(f"not a plain integer expression: {expression!r}")
    return value(ast.parse(expression, mode="eval").body)


def header_constants(text=None):
    """NAME (without NORMOPS_) -> value of every #define of spec_constants.h."""
    text = HEADER.read_text(encoding="utf-8") if text is None else text
    found = {}
    for name, body in re.findall(r"^#define NORMOPS_(\w+) (.+)$", text, flags=re.M):
        if name == "SPEC_CONSTANTS_H":
            continue
        found[name] = _integer(re.sub(r"\(\s*ptrdiff_t\s*\)", "", body))
    return found


def python_constants():
    return {name: value for name, value in vars(_spec).items() if name.isupper()}


def test_the_header_and_the_python_module_hold_the_same_numbers():
    header, python = header_constants(), python_constants()
    assert set(header) == set(NAMES) == set(python), (sorted(header), sorted(python))
    for name in NAMES:
        assert type(python[name]) is int
        assert header[name] == python[name], f"{name}: spec_constants.h {header[name]}, _spec.py {python[name]}"


def test_the_header_parser_reads_what_it_must():
    assert header_constants("#define NORMOPS_X ((ptrdiff_t)1 << 20)\n#define NORMOPS_Y ((ptrdiff_t)256)\n") == {
        "X": 1 << 20, "Y": 256}
    with pytest.raises(ValueError):
        header_constants("#define NORMOPS_X (sizeof(int) * 2)\n")


def _spec_numbers(pattern, power_of_two=False):
    found = [int(v) for v in re.findall(pattern, SPEC)]
    assert found, f"docs/specification.md no longer says {pattern!r}"
    return {1 << v for v in found} if power_of_two else set(found)


def test_the_specification_states_the_same_numbers():
    assert _spec_numbers(r"max\(1, (\d+) // cols\)") == {_spec.ROW_CHUNK_ELEMENTS}
    assert _spec_numbers(r"chunks of (\d+) elements") == {_spec.ROW_CHUNK_ELEMENTS}
    assert _spec_numbers(r"\| (\d+) elements \|") == {_spec.ROW_CHUNK_ELEMENTS}
    assert _spec_numbers(r"max\(1, (\d+) // work\)") == {_spec.REDUCE_CHUNK_ELEMENTS}
    assert _spec_numbers(r"tiles of (\d+)\b") == {_spec.REDUCE_TILE}
    assert _spec_numbers(r"min\(C, (\d+)\)") == {_spec.REDUCE_TILE}
    assert _spec_numbers(r"(?:at least|below) 2\^(\d+) (?:terms|elements)", True) == {_spec.LONG_TERMS}
    assert _spec_numbers(r"blocks of\s+\**2\^(\d+)", True) == {_spec.BLOCK_TERMS}


def test_no_other_source_defines_them():
    """Python modules import them from normops._spec, Cython sources declare
    them from spec_constants.h; no file assigns or #defines them again."""
    assignment = re.compile(rf"^\s*(?:cdef\s+[\w ]+\s+)?({'|'.join(NAMES)})\s*=(?!=)", re.M)
    definition = re.compile(rf"^\s*#\s*define\s+\w*({'|'.join(NAMES)})\b", re.M)
    found = []
    for path in sorted((ROOT / "normops").rglob("*")):
        if path.suffix not in {".py", ".pyx", ".pxi", ".pxd", ".h"} or path in (HEADER, ROOT / "normops" / "_spec.py"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{path.relative_to(ROOT)}: {m.group(0).strip()}" for m in assignment.finditer(text)]
        found += [f"{path.relative_to(ROOT)}: {m.group(0).strip()}" for m in definition.finditer(text)]
    assert not found, "\n".join(found)
