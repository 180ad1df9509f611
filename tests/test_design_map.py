"""docs/design.md stays a true map: its kernel map names every source file
of normops/_kernels/ and nothing else, and every module its family table
names exists. Pure Python: reads files only."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DESIGN = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
KERNELS = ROOT / "normops" / "_kernels"
SOURCES = {".py", ".pyx", ".pxi", ".pxd", ".h"}


def section(title):
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", DESIGN, flags=re.M | re.S)
    assert match, f"docs/design.md has no section {title!r}"
    return match.group(1)


def test_the_kernel_map_lists_every_kernel_file():
    block = re.search(r"^```\n(.*?)^```", section("Kernel map"), flags=re.M | re.S).group(1)
    listed = [line.split()[0] for line in block.splitlines() if line and not line[0].isspace()]
    on_disk = sorted(p.name for p in KERNELS.iterdir() if p.suffix in SOURCES)
    assert len(listed) == len(set(listed)), "a file is listed twice"
    assert sorted(listed) == on_disk, (f"missing from the map: {sorted(set(on_disk) - set(listed))}; "
                                       f"listed, not in normops/_kernels: {sorted(set(listed) - set(on_disk))}")


def test_the_family_table_names_existing_files():
    rows = [line for line in section("Operator families").splitlines() if line.startswith("| ")][2:]
    assert len(rows) >= 10
    places = {"front": ROOT / "normops", "kernels": KERNELS, "reference": ROOT / "normops" / "reference",
              "tests": ROOT / "tests"}
    missing = []
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        for where, cell in zip(("front", "kernels", "reference", "tests"), cells[1:]):
            for name in re.findall(r"`([\w*]+\.(?:py|pyx|pxi|pxd|h))`", cell):
                if not list(places[where].glob(name)):
                    missing.append(f"{cells[0]}: {where} file {name}")
    assert not missing, "\n".join(missing)
