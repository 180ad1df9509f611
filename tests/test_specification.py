"""The repository carries its own specification and cites only it.

docs/specification.md is the normative text. Code, docs and tests cite it
(or another page of the repository), never a document outside the
repository or an issue number, which a reader of a clone cannot follow.
Pure Python: reads files only, imports nothing of normops.
"""
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "docs" / "specification.md"
THIS = Path(__file__).resolve()

SUFFIXES = {".py", ".pyx", ".pxi", ".pxd", ".h", ".md", ".toml", ".sh"}
EXTRA = {".ci/run"}
#: Walked only when git is not available (an unpacked source tree).
SKIPPED_DIRS = {".git", ".venv", "build", "dist", ".aarch64", "__pycache__", ".hypothesis"}

#: Citations of documents outside the repository.
OUTSIDE = [
    (re.compile(r"decisions\.md"), "the outside decisions document"),
    (re.compile(r"\.\./shared|shared/spec"), "the outside spec folder"),
    (re.compile(r"\bseeds/"), "the outside seed texts"),
    (re.compile(r"\bseed\s+spec\b", re.I), "the outside seed spec"),
    (re.compile(r"kernels-attention|exact-transcendentals"), "an outside document"),
]

#: "issue 19", "issues 17 and 18", "issue-19", "issue #4".
ISSUE_WORD = re.compile(r"\bissues?[\s-]*#?\s*\d+", re.I)
#: "#12" as an issue or pull-request number. Not matched: "##32" (C token
#: pasting), "&#123;" (HTML entities), "owner/repo#123" (a public upstream
#: tracker, which a reader can follow), "#include" and markdown headings
#: (no digit), and hex colours ("#777777": too many digits, or quoted).
HASH_NUMBER = re.compile(r"(?<![\w/&#\"'])#(\d{1,5})\b")
#: compare-ort's case labels ("float32 #6 [33x12x2]") number cases, not issues.
CASE_LABEL = re.compile(r"\b(?:b?float(?:16|32|64)|u?int(?:8|16|32|64)|bool) $")


def tracked_text_files():
    """Tracked files of the kinds above (every file under the tree when git
    cannot list them), this file excepted: it must spell the patterns."""
    try:
        names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True,
                               timeout=60).stdout.decode().split("\0")
        paths = [ROOT / n for n in names if n]
    except (OSError, subprocess.SubprocessError):
        paths = [p for p in ROOT.rglob("*") if not SKIPPED_DIRS & set(p.relative_to(ROOT).parts)]
    chosen = []
    for p in paths:
        rel = p.relative_to(ROOT).as_posix()
        if (p.suffix in SUFFIXES or rel in EXTRA) and p.is_file() and p.resolve() != THIS:
            chosen.append(p)
    return chosen


def citations(text):
    """(line number, what, excerpt) of every outside or issue citation."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for pattern, what in OUTSIDE:
            if pattern.search(line):
                found.append((number, what, line.strip()))
        if ISSUE_WORD.search(line):
            found.append((number, "an issue number", line.strip()))
        for m in HASH_NUMBER.finditer(line):
            if not CASE_LABEL.search(line[:m.start()]):
                found.append((number, "an issue number", line.strip()))
    return found


def test_no_file_cites_outside_documents_or_issue_numbers():
    files = tracked_text_files()
    assert any(p.name == "specification.md" for p in files), "the file list misses docs/"
    problems = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, what, line in citations(text):
            problems.append(f"{path.relative_to(ROOT)}:{number}: cites {what}: {line[:100]}")
    assert not problems, ("cite docs/specification.md (by section) or a page of the repository "
                          "instead:\n" + "\n".join(problems))


@pytest.mark.parametrize("text", [
    "see decisions.md §6", "(../shared/spec/README.md)", "seeds/000_x.txt", "the seed spec's rule",
    "issue 19's target", "issues 17 and 18", "the issue-19 cases", "fixed in #42", "(#7)",
])
def test_the_checks_catch_citations(text):
    assert citations(text)


@pytest.mark.parametrize("text", [
    "#include <stdint.h>", "## 3. The canonical sum (Sum16)", "normops_##name##32(x)",
    'color="#777777"', "microsoft/onnxruntime#7642", "`GroupNormalization-18 float32 #6 [33x12x2]`",
    "float64 #0: [3x33x31]", "issued together", "the seed 0 run", "&#123;",
])
def test_the_checks_leave_legitimate_text_alone(text):
    assert not citations(text)


# ------------------------------------------------------------ the spec itself

def spec_headings():
    return re.findall(r"^#{2,3} (.+)$", SPEC.read_text(encoding="utf-8"), flags=re.M)


def test_the_specification_exists_with_its_sections():
    headings = spec_headings()
    for heading in (
        "1. Status and scope",
        "2. Flavours: exact and fast",
        "3. The canonical sum (Sum16)",
        "4. Types, rounding and NaN",
        "5. Exponential, logarithm, erf and tanh",
        "6. LayerNormalization, RMSNormalization, SimplifiedLayerNormalization",
        "7. InstanceNormalization, GroupNormalization, BatchNormalization",
        "8. MeanVarianceNormalization, LpNormalization",
        "9. Softmax, LogSoftmax, Hardmax",
        "10. Sigmoid, Gelu, BiasGelu",
        "11. Reductions (the Reduce* operators)",
        "11.4 Long reductions",
        "12. ArgMax, ArgMin",
        "13. CumSum, CumProd",
        "14. Chunks and threads",
        "15. Inputs, errors and what is not served",
        "16. NumPy- and SciPy-style functions",
        "16.4 Specified, not yet served",
    ):
        assert heading in headings, f"docs/specification.md has no section {heading!r}"


def test_sections_are_numbered_in_order():
    numbers = [h.split(" ", 1)[0].rstrip(".") for h in spec_headings()]
    assert len(numbers) == len(set(numbers)), "a section number is used twice"
    tops = [int(n) for n in numbers if n.isdigit()]
    assert tops == list(range(1, len(tops) + 1))


def test_every_cited_section_exists():
    """A citation "§N" or "§N.M" anywhere in the repository names a section
    of docs/specification.md (the only document cited by section number)."""
    sections = {h.split(" ", 1)[0].rstrip(".") for h in spec_headings()}
    missing = []
    for path in tracked_text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            for m in re.finditer(r"§(\d+(?:\.\d+)?)", line):
                if m.group(1) not in sections:
                    missing.append(f"{path.relative_to(ROOT)}:{number}: §{m.group(1)}")
    assert not missing, "no such section in docs/specification.md:\n" + "\n".join(missing)
