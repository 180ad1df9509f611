"""Randomized differential comparison of normops with ONNX Runtime.

``python -m normops compare-ort`` generates, for every served operator and
every version the registry serves, randomized one-node cases (ranks 1-5,
odd widths, axis subsets and negative axes, keepdims, attribute variations
valid at that opset, special values, every candidate dtype), runs each case
in ONNX Runtime (CPU execution provider, one thread) and in normops in both
flavours, and compares the outputs.

The error measure (one number per output, the worst output counts)::

    scaled error = max|a - b| / max(1, max|b|)

over the elements where both results are finite, ``a`` normops and ``b``
ONNX Runtime, both widened to float64. Non-finite elements must agree
exactly (NaN where ORT has NaN, the same infinity; +0 equals -0). The bound is ``1e-4``
for float32/float64 outputs and ``4 * eps`` of the output type for the
narrow floats (float16: 2^-8 = 3.9e-3, bfloat16: 2^-5 = 3.1e-2: one
rounding to the narrow type on each side, plus ORT's own narrow
arithmetic). Integer and boolean outputs must be equal. Shapes and dtypes
must be equal.

A disagreement is a failure unless its cause is established: the NaN rules
the spec documents (NAN_DIFFERENCES) and the table DOCUMENTED_DIFFERENCES,
whose every rule states the condition, the reason and the spec text behind
normops's side, and checks its evidence on the case itself.

Adding an operator is one generator function registered with
:func:`generator` in ``normops_tools/cases/randomized.py`` (the one registry
of cases, which the tests and the benchmark share); the registry (``normops._registry``) decides whether it
runs: a generator whose operator is not served waits, and a served operator
without a generator is reported as such.

``onnx`` and ``onnxruntime`` are optional: imported when a case runs.

The modules: ``comparison`` (statuses, bounds, how two outputs compare),
``differences`` (the documented
disagreements), ``runner`` (a case through both runtimes, classified) and
``report`` (the report and the command line).
"""

from . import comparison, differences, report, runner
from normops_tools.cases.randomized import (FLOATS, GENERATORS, INTS, Case, Gen, Generator, generator, make_cases,
                                            n_outputs_of, schema_dtypes)
from .comparison import (BOUND, DOCUMENTED, FAIL, FLOAT64_AGREEMENT, MODES, NEAR_FLOAT64, NOT_SERVED,
                         ORT_FAILS, PASS, bound_for, compare_outputs)
from .differences import (DOCUMENTED_DIFFERENCES, NAN_DIFFERENCES, OPEN_DISAGREEMENTS, Documented,
                          documented_difference, open_disagreement)
from .report import BEGIN, END, Report, extract_section, main, replace_section, run, to_markdown, to_text
from .runner import Result, run_case, run_ort

__all__ = [
    "comparison", "differences", "report", "runner",
    "GENERATORS", "Case", "Gen", "Generator", "generator", "make_cases", "n_outputs_of", "schema_dtypes",
    "BOUND", "DOCUMENTED", "FAIL", "FLOAT64_AGREEMENT", "FLOATS", "INTS", "MODES", "NEAR_FLOAT64", "NOT_SERVED",
    "ORT_FAILS", "PASS", "bound_for", "compare_outputs",
    "DOCUMENTED_DIFFERENCES", "NAN_DIFFERENCES", "OPEN_DISAGREEMENTS", "Documented", "documented_difference",
    "open_disagreement",
    "BEGIN", "END", "Report", "extract_section", "main", "replace_section", "run", "to_markdown", "to_text",
    "Result", "run_case", "run_ort",
]
