"""The README's two command pairs, as .ci/run extracts and runs them."""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("readme_commands", ROOT / ".ci" / "readme_commands.py")
readme_commands = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(readme_commands)


def test_the_install_and_example_pair():
    lines = readme_commands.section_commands((ROOT / "README.md").read_text(),
                                             "Install and run an example").splitlines()
    assert len(lines) == 2
    assert lines[0] == "pip install -e ."  # editable: the example runs from the repository root
    assert lines[1].startswith('python -c "import numpy as np, normops;')


def test_the_install_and_test_pair_runs_pytest():
    lines = readme_commands.section_commands((ROOT / "README.md").read_text(),
                                             "Install and run the tests").splitlines()
    assert lines == ['pip install -e ".[test]"', "python -m pytest -q"]


def test_ci_runs_both_pairs_from_the_readme():
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'readme_commands.py "Install and run an example"' in ci
    assert 'readme_commands.py "Install and run the tests"' in ci


def test_extraction_takes_exactly_one_bash_block():
    text = "# T\n\n## A\n\ntext\n\n```bash\necho a\n```\n\n## B\n\n```bash\nx\n```\n```bash\ny\n```\n"
    assert readme_commands.section_commands(text, "A") == "echo a\n"
    with pytest.raises(SystemExit, match="2 bash blocks"):
        readme_commands.section_commands(text, "B")
    with pytest.raises(SystemExit, match="no section"):
        readme_commands.section_commands(text, "C")
