"""onnx's own backend test runner (``onnx.backend.test.BackendTest``) running
the node test cases of the served operators through ``normops.onnx.Backend``,
in the exact and the fast flavour.

Which cases run is decided by ``normops_tools.conformance``: a served case runs; a
case of a served operator that normops does not serve (an expanded function
body...) is skipped with the reason the conformance table gives. As in
tests/test_conformance.py, an UnsupportedError at run time (an unserved
dtype) skips, except for the operators normops must serve in full.
"""

import functools
import re
import unittest

import pytest

pytest.importorskip("onnx")

import onnx.backend.test  # noqa: E402

import normops  # noqa: E402
from normops_tools import conformance  # noqa: E402
from normops.onnx import ExactBackend, FastBackend  # noqa: E402

MUST_SERVE = ("LayerNormalization", "RMSNormalization")
SERVED_OPERATORS = set(conformance.served_operators())
CASES = [c for c in conformance.discover() if (c.domain, c.op_type) in SERVED_OPERATORS]
SERVED = [c for c in CASES if c.served]


def _skip_unserved(case, func):
    """``func``, with an UnsupportedError turned into a skip (see the module doc)."""

    @functools.wraps(func)
    def run(self):
        try:
            return func(self)
        except normops.UnsupportedError as exc:
            if case.op_type in MUST_SERVE:
                raise
            self.skipTest(f"not served: {exc}")

    return run


def _test_classes(backend, suffix):
    """The runner's node-test class for ``backend``, with only the CPU tests
    of the served operators' cases."""
    runner = onnx.backend.test.BackendTest(backend, __name__)
    for case in CASES:
        runner.include(f"^{re.escape(case.name)}_cpu$")
    (node_class,) = [cls for name, cls in runner.test_cases.items() if name == "OnnxBackendNodeModelTest"]
    attributes = {}
    for case in CASES:
        func = getattr(node_class, f"{case.name}_cpu")
        if case.served:
            attributes[f"{case.name}_cpu"] = _skip_unserved(case, func)
        else:
            attributes[f"{case.name}_cpu"] = unittest.skip(case.reason)(func)
    name = f"OnnxBackendNodeModelTest{suffix}"
    return {name: type(name, (unittest.TestCase,), {"__module__": __name__, **attributes})}


globals().update(_test_classes(ExactBackend, "Exact"))
globals().update(_test_classes(FastBackend, "Fast"))


def test_the_runner_has_the_served_cases():
    """The generated classes hold one test per case (they cannot pass by
    running nothing)."""
    assert len(SERVED) > 40
    for suffix in ("Exact", "Fast"):
        cls = globals()[f"OnnxBackendNodeModelTest{suffix}"]
        names = {n for n in dir(cls) if n.startswith("test_")}
        assert names == {f"{c.name}_cpu" for c in CASES}


def test_unserved_cases_of_expanded_bodies_name_their_operators():
    """An expanded function body fails to load with an UnsupportedError
    naming every operator of it that normops neither serves nor plumbs."""
    from normops import _registry
    from normops.onnx import PLUMBING_OPERATORS

    import onnx

    checked = 0
    for case in CASES:
        if case.served or case.n_nodes == 1:
            continue
        model = onnx.load(str(case.path / "model.onnx"))
        opset = {e.domain: e.version for e in model.opset_import}[""]
        unserved = {n.op_type for n in model.graph.node
                    if n.op_type not in PLUMBING_OPERATORS and not _registry.is_served("", n.op_type, opset)}
        if not unserved:
            continue
        with pytest.raises(normops.UnsupportedError) as info:
            ExactBackend.prepare(model)
        for op_type in unserved:
            assert f"\n  {op_type} (domain ai.onnx, opset {opset}," in str(info.value)
        checked += 1
    assert checked > 10
