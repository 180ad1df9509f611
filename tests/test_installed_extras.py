"""The guard that stops the suite when optional dependencies installed by
pip cannot import together (tests/installed_extras.py)."""
import sys

import pytest

from installed_extras import OPTIONAL_MODULES, broken_imports


def test_every_installed_optional_dependency_imports():
    assert broken_imports() == []


def test_a_module_that_fails_to_import_is_named_with_its_requirements(tmp_path, monkeypatch):
    # a stand-in for distributed 2021.4.1 beside dask 2026.11: installed, but
    # its import raises; the message names the distribution, its version and
    # the installed versions of what it requires
    (tmp_path / "normops_broken_probe.py").write_text("raise ImportError('cannot import name tokenize')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    problems = broken_imports({"normops_broken_probe": "pytest"})
    assert len(problems) == 1
    assert f"pytest {pytest.__version__} is installed but `import normops_broken_probe` fails" in problems[0]
    assert "cannot import name tokenize" in problems[0]
    assert "pluggy" in problems[0]  # one of pytest's requirements, with its version
    sys.modules.pop("normops_broken_probe", None)


def test_a_missing_distribution_is_not_a_problem():
    assert broken_imports({"normops_no_such_module": "normops-no-such-distribution"}) == []


def test_the_dask_extras_pin_distributed_through_dask():
    # an unpinned distributed beside dask lets pip backtrack distributed to a
    # 2021 release that cannot import with a new dask
    tomllib = pytest.importorskip("tomllib")
    from pathlib import Path
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
    for extra in ("dask", "test"):
        requirements = project["optional-dependencies"][extra]
        assert any(r.startswith("dask[") and "distributed" in r.split("]")[0] for r in requirements), extra
        assert not any(r.split("[")[0].split(">")[0].split("=")[0].strip() == "distributed" for r in requirements)
    assert "dask.array" in OPTIONAL_MODULES and "distributed" in OPTIONAL_MODULES
