"""Benchmarks of normops against ONNX Runtime, NumPy and torch.

``python -m normops bench`` (or ``normops.benchmark.main(argv)``) on the
command line, `bench()` from Python. Each runtime is timed in its own
worker processes; see `normops.benchmark.runner.bench` for the protocol and
`normops.benchmark.cases` to add cases. Nothing heavy is imported here.
"""

from .cases import CASES, Case, register, select_cases
from .cli import main
from .runner import BenchResults, bench

__all__ = ["bench", "main", "BenchResults", "Case", "CASES", "register", "select_cases"]
