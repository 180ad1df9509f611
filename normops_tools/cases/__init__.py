"""The one registry of cases: for every operator, how to make random cases
of it and the fixed cases the benchmark measures.

- `randomized`: one generator per operator (registered with `generator`):
  random shapes, attributes valid at each version, special values, every
  candidate dtype. The tests (`test_entry_points.py`, `test_properties.py`,
  `test_spec_independent.py`) and ``python -m normops compare-ort`` draw
  their cases from it.
- `measured`: the benchmark's cases (registered with `register`): one node
  at a fixed shape with the NumPy and torch expressions it is compared
  with, and the cases that time a route, a NumPy/SciPy-style function, a
  session or a model. ``python -m normops bench`` and the scaling
  section measure them.

`operators` joins the two by operator; `tests/test_cases.py` checks that
every served operator has both. Adding an operator: a generator in
`randomized.py` and at least one case in `measured.py`.

Only NumPy is imported here: the benchmark's worker processes import this
package too, and must not pull in what they do not measure.
"""

from __future__ import annotations

import dataclasses

from . import measured, randomized
from .measured import CASES, call_as_written, get_case, register, select_cases
from .randomized import FLOATS, GENERATORS, INTS, Gen, Generator, dtype_named, generator, make_cases

__all__ = [
    "measured", "randomized", "OperatorCases", "operators",
    "CASES", "call_as_written", "get_case", "register", "select_cases",
    "FLOATS", "GENERATORS", "INTS", "Gen", "Generator", "dtype_named", "generator", "make_cases",
]

#: the benchmark groups whose cases time one ONNX node of their operator
NODE_GROUPS = ("operator", "small", "route")


@dataclasses.dataclass(frozen=True)
class OperatorCases:
    """An operator's entry in the registry: its random generator (None:
    none yet) and the names of its measured one-node cases."""

    domain: str
    op_type: str
    generator: Generator | None
    measured: tuple[str, ...]


def operators() -> dict[tuple[str, str], OperatorCases]:
    """(domain, op_type) -> the operator's cases of both kinds, for every
    operator that has either."""
    names: dict[tuple[str, str], list[str]] = {}
    for case in CASES.values():
        if case.group in NODE_GROUPS:
            names.setdefault((case.domain, case.op_type), []).append(case.name)
    return {key: OperatorCases(key[0], key[1], GENERATORS.get(key), tuple(names.get(key, ())))
            for key in sorted(set(GENERATORS) | set(names))}
