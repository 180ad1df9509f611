"""The ```python blocks of the user-guide pages run, in order, each page in
one namespace (a block may use what an earlier block of its page made)."""
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = {
    "preprocessing.md": ("sklearn", "pandas"),
    "batch.md": (),
    "dask.md": ("dask.array", "distributed"),
}


def python_blocks(text):
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


@pytest.mark.parametrize("page", sorted(PAGES))
def test_page_examples_run(page, capsys):
    for module in PAGES[page]:
        pytest.importorskip(module)
    blocks = python_blocks((DOCS / page).read_text())
    assert blocks, f"{page} has no python example"
    namespace = {"__name__": f"docs_{page[:-3]}"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"{page} (python block {i + 1})", "exec"), namespace)


def test_block_extraction():
    text = "a\n```python\nx = 1\n```\n```\nnot python\n```\n```python\ny = 2\n```\n"
    assert python_blocks(text) == ["x = 1\n", "y = 2\n"]
