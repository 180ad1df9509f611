"""The tools (benchmark, compare-ort, conformance, the verify commands)
live beside the library in normops_tools: ``import normops`` and its
integrations load none of them, and ``python -m normops`` still runs them."""
import subprocess
import sys

import pytest


def test_importing_normops_loads_no_tool():
    code = ("import sys, normops, normops.ops, normops.reference, normops.batch, normops.preprocessing; "
            "print(sorted(m for m in sys.modules if m.startswith('normops_tools') or m in "
            "('normops.benchmark', 'normops.conformance', 'normops.compare_ort')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_command_line_keeps_every_command():
    from normops.__main__ import COMMANDS

    assert {"info", "conformance", "bench", "verify-transcendentals", "verify-platform", "compare-ort",
            "run-model"} <= set(COMMANDS)
    out = subprocess.run([sys.executable, "-m", "normops", "verify-transcendentals", "--help"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and "usage: python -m normops verify-transcendentals" in out.stdout


@pytest.mark.parametrize("module", ["normops_tools.benchmark", "normops_tools.compare_ort",
                                    "normops_tools.conformance", "normops_tools.verify_platform",
                                    "normops_tools.verify_transcendentals"])
def test_each_tool_imports_from_its_place(module):
    if "conformance" in module or "compare_ort" in module:
        pytest.importorskip("onnx")
    __import__(module)
