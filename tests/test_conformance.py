"""The ONNX backend node test cases, run through normops in both flavours.

The cases and the comparison live in ``normops_tools.conformance``; this module
runs every served case as its own test and checks the harness itself.
"""

import numpy as np
import pytest

pytest.importorskip("onnx")

import normops  # noqa: E402
from normops_tools import conformance  # noqa: E402

ALL_CASES = conformance.discover()
SERVED = [c for c in ALL_CASES if c.served]
# normops must run every one-node case of these; an UnsupportedError there is
# a failure, not a skip.
MUST_SERVE = ("LayerNormalization", "RMSNormalization")


@pytest.mark.parametrize("mode", conformance.MODES)
@pytest.mark.parametrize("case", SERVED, ids=[c.name for c in SERVED])
def test_node_case(case, mode):
    outcome = conformance.run_case(case, mode)
    if outcome.status == conformance.NOT_SERVED and case.op_type not in MUST_SERVE:
        pytest.skip(f"not served: {outcome.message}")
    assert outcome.status == conformance.PASSED, outcome.message


# --------------------------------------------------------------------------
# The cases are there (the parametrised test cannot pass by running nothing)


@pytest.mark.parametrize("op_type", MUST_SERVE)
def test_operator_has_served_cases(op_type):
    served = [c for c in SERVED if c.op_type == op_type and c.domain == ""]
    assert len(served) > 10, [c.name for c in served]


@pytest.mark.parametrize("prefix", ["test_layer_normalization_", "test_rms_normalization_"])
def test_every_one_node_case_is_served(prefix):
    cases = [c for c in ALL_CASES if c.name.startswith(prefix) and "_expanded" not in c.name]
    assert cases
    assert [c.name for c in cases if not c.served] == []


def test_served_operators_are_in_the_table():
    names = {op for _, op in conformance.served_operators()}
    assert set(MUST_SERVE) <= names


def test_expanded_case_is_recorded_not_served():
    (case,) = [c for c in ALL_CASES if c.name == "test_layer_normalization_2d_axis0_expanded"]
    assert not case.served
    assert (case.domain, case.op_type) == ("", "LayerNormalization")
    assert case.n_nodes > 1
    assert case.reason.startswith(f"expanded function body ({case.n_nodes} nodes: ")
    outcome = conformance.run_case(case, "exact")
    assert outcome.status == conformance.NOT_SERVED
    assert outcome.message == case.reason


def test_filter_selects_by_regex():
    names = [c.name for c in conformance.discover(r"^test_rms_normalization_2d_axis0")]
    assert names == ["test_rms_normalization_2d_axis0", "test_rms_normalization_2d_axis0_expanded"]


# --------------------------------------------------------------------------
# The comparison


def test_check_output_accepts_within_tolerance_and_matching_nan():
    want = np.array([1.0, np.nan, -2.0, 0.0], dtype=np.float32)
    got = want * np.float32(1 + 5e-4)
    conformance.check_output(want, got)
    conformance.check_output(np.array([3, 4], np.int64), np.array([3, 4], np.int64))


@pytest.mark.parametrize(
    "want, got, message",
    [
        (np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32), "shape (3, 2), expected (2, 3)"),
        (np.zeros(3, np.float32), np.zeros(3, np.float64), "dtype float64, expected float32"),
        (np.ones(3, np.float32), np.array([1, 1, 1.002], np.float32), "1 of 3 elements differ"),
        (np.ones(2, np.float32), np.array([1, np.nan], np.float32), "first at index (1,): expected 1.0, got nan"),
        (np.array([np.nan], np.float32), np.array([0], np.float32), "expected nan, got 0.0"),
        (np.array([[5, 7]], np.int64), np.array([[5, 8]], np.int64), "first at index (0, 1): expected 7, got 8"),
        (np.array([True]), np.array([False]), "1 of 1 elements differ (exact)"),
        (np.zeros(1, np.float32), [0.0], "not a numpy.ndarray"),
    ],
)
def test_check_output_rejects(want, got, message):
    with pytest.raises(AssertionError) as info:
        conformance.check_output(want, got)
    assert message in str(info.value)


# --------------------------------------------------------------------------
# Outcomes of one case, with normops.run replaced


@pytest.fixture
def layer_norm_case():
    (case,) = [c for c in SERVED if c.name == "test_layer_normalization_2d_axis0"]
    node, attributes, data_sets = conformance._load(case)
    ((_, inputs, expected),) = data_sets
    return case, inputs, expected


def test_run_case_passes_the_recorded_outputs_through(monkeypatch, layer_norm_case):
    case, inputs, expected = layer_norm_case
    seen = {}

    def fake(op_type, inputs, attributes=None, **kwargs):
        seen.update(op_type=op_type, n_inputs=len(inputs), attributes=attributes, **kwargs)
        return [want.copy() for _, _, want in expected]

    monkeypatch.setattr(normops, "run", fake)
    assert conformance.run_case(case, "fast").status == conformance.PASSED
    assert seen["op_type"] == "LayerNormalization"
    assert seen["n_inputs"] == 3
    assert seen["attributes"] == {"axis": 0}  # the node leaves epsilon at its default
    assert (seen["opset"], seen["domain"], seen["mode"]) == (17, "", "fast")


def test_run_case_reports_a_wrong_output(monkeypatch, layer_norm_case):
    case, inputs, expected = layer_norm_case
    outputs = [want.copy() for _, _, want in expected]
    outputs[2][0, 0] += 1
    monkeypatch.setattr(normops, "run", lambda *a, **k: outputs)
    outcome = conformance.run_case(case, "exact")
    assert outcome.status == conformance.FAILED
    assert outcome.message.startswith("output 2 ('InvStdDev'): 1 of 1 elements differ")


def test_run_case_reports_a_modified_input(monkeypatch, layer_norm_case):
    case, inputs, expected = layer_norm_case
    # onnx hands out read-only arrays when a tensor is stored as raw bytes
    read = conformance._read_tensor
    monkeypatch.setattr(conformance, "_read_tensor", lambda path: read(path).copy())

    def fake(op_type, inputs, *args, **kwargs):
        inputs[0][...] = 0
        return [want.copy() for _, _, want in expected]

    monkeypatch.setattr(normops, "run", fake)
    outcome = conformance.run_case(case, "exact")
    assert outcome.status == conformance.FAILED
    assert "input 0 ('X') was modified" in outcome.message


def test_run_case_unsupported_is_not_served_other_errors_fail(monkeypatch, layer_norm_case):
    case = layer_norm_case[0]

    def unsupported(*args, **kwargs):
        raise normops.UnsupportedError("LayerNormalization: dtype not served")

    def broken(*args, **kwargs):
        raise ValueError("boom")

    monkeypatch.setattr(normops, "run", unsupported)
    outcome = conformance.run_case(case, "exact")
    assert (outcome.status, outcome.message) == (conformance.NOT_SERVED, "LayerNormalization: dtype not served")
    monkeypatch.setattr(normops, "run", broken)
    outcome = conformance.run_case(case, "exact")
    assert (outcome.status, outcome.message) == (conformance.FAILED, "ValueError: boom")


# --------------------------------------------------------------------------
# The command


def _without_date(text):
    return [line for line in text.splitlines() if not line.startswith("Generated on ")]


def test_main_writes_a_deterministic_table(tmp_path, capsys):
    argv = ["--filter", r"^test_(layer|rms)_normalization_2d_axis0", "--quiet"]
    first, second = tmp_path / "a.md", tmp_path / "b.md"
    assert conformance.main([*argv, "--output", str(first)]) == 0
    assert conformance.main([*argv, "--output", str(second)]) == 0
    text = first.read_text()
    assert _without_date(text) == _without_date(second.read_text())
    assert "| LayerNormalization | ai.onnx | 17 | 3 | 1 | 1 | 0 | 2 |" in text
    assert "| RMSNormalization | ai.onnx | 23 | 2 | 1 | 1 | 0 | 1 |" in text
    assert "- `test_layer_normalization_2d_axis0_expanded_ver18`: expanded function body (" in text
    assert capsys.readouterr().out.splitlines()[0].startswith("5 cases of served operators (exact, fast): 2 passed")


def test_main_prints_without_writing_for_a_partial_run(capsys):
    assert conformance.main(["--filter", "^test_rms_normalization_2d_axis1$", "--mode", "exact"]) == 0
    out = capsys.readouterr().out
    assert "RMSNormalization" in out
    assert "LayerNormalization " not in out  # operators without a selected case are left out
    assert "wrote" not in out


def test_main_rejects_a_bad_regex(capsys):
    with pytest.raises(SystemExit) as info:
        conformance.main(["--filter", "("])
    assert info.value.code == 2


def test_missing_onnx_names_the_extra(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "onnx", None)
    with pytest.raises(ImportError, match=r"'test' extra"):
        conformance.node_test_dir()


def test_checked_in_table_is_current():
    page = conformance._default_output()
    if page is None or not page.is_file():
        pytest.skip("no docs/conformance.md in this tree")
    fresh = conformance.to_markdown(conformance.run_all())
    page_text = conformance.without_preserved_sections(page.read_text())  # e.g. compare-ort's
    assert _without_date(page_text) == _without_date(fresh), (
        "docs/conformance.md is out of date: run python -m normops conformance"
    )
