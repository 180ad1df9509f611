"""The one registry of cases (normops_tools.cases): every served operator
has random cases (the tests and compare-ort draw them) and measured ones
(the benchmark's), and each measured case's NumPy expression, the peer the
benchmark times and checks the accuracy of every runtime against, computes
what normops computes."""
import dataclasses

import numpy as np
import pytest

from normops import _registry
from normops_tools import cases
from normops_tools.benchmark.runtimes import RUNTIMES, output_array, prepare

SERVED = sorted(_registry.served_operators())
OPERATORS = cases.operators()


def test_every_served_operator_has_cases_of_both_kinds():
    assert sorted(OPERATORS) == SERVED
    for key, entry in OPERATORS.items():
        assert entry.generator is not None, f"{key} has no random cases"
        assert entry.generator.op_type == key[1] and entry.generator.domain == key[0]
        assert entry.measured, f"{key} has no measured case"


def test_an_unregistered_operator_shows_as_missing():
    key = ("", "NotAnOperator")
    case = cases.measured.softmax_case("Softmax", (2, 8))
    cases.CASES["not_an_operator"] = dataclasses.replace(case, name="not_an_operator", op_type="NotAnOperator")
    try:
        entry = cases.operators()[key]
        assert entry.generator is None and entry.measured == ("not_an_operator",)
    finally:
        del cases.CASES["not_an_operator"]
    assert key not in cases.operators()


def _smallest_case(key):
    measured = [cases.get_case(n) for n in OPERATORS[key].measured]
    return min((c for c in measured if c.group == "operator" and "float32" in c.dtypes),
               key=lambda c: (c.elements, c.name))


@pytest.mark.parametrize("key", SERVED, ids=[op for _, op in SERVED])
def test_the_numpy_expression_computes_what_normops_computes(key):
    case = _smallest_case(key)
    inputs = case.inputs("float32")
    runtime = RUNTIMES["normops-exact"]
    runtime.setup(1)
    got = output_array(runtime, case, prepare(runtime, case, inputs, 1)())
    want = case.numpy_fn(inputs, case.attributes, acc=np.float64)
    assert got.shape == want.shape
    if got.dtype.kind in "iub" or key[1] == "Hardmax":  # indices and one-hot rows: equal
        assert np.array_equal(got, want)
    else:
        # float32 against float64: a rounding per term of the longest
        # sequence (a product's errors add up), and compare-ort's 1e-4
        bound = max(1e-4, case.width * 2.0 ** -23)
        scale = max(1.0, float(np.nanmax(np.abs(want)))) if want.size else 1.0
        assert float(np.nanmax(np.abs(got.astype(np.float64) - want))) <= bound * scale
