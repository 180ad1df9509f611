"""Benchmarks of normops against ONNX Runtime, NumPy and torch.

``python -m normops bench`` (or ``normops_tools.benchmark.main(argv)``) on the
command line, `bench()` from Python. Each runtime is timed in its own
worker processes, or, with ``interleave=True`` (``--interleave``), every
runtime in one worker process per thread count, their calls alternated; see
`normops_tools.benchmark.runner.bench` for the protocols,
`normops_tools.cases.measured` to add cases and `normops_tools.benchmark.figures` for
the charts. Nothing heavy is imported here.
"""

from normops_tools.cases.measured import CASES, Case, register, select_cases
from .cli import main
from .runner import BenchResults, bench

__all__ = ["bench", "main", "BenchResults", "Case", "CASES", "register", "select_cases"]
