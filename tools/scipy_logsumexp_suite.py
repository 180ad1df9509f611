"""Run SciPy's own tests of logsumexp, softmax and log_softmax
(scipy/special/tests/test_logsumexp.py of the installed SciPy) with
normops' functions in their place.

    python tools/scipy_logsumexp_suite.py            # a summary
    python tools/scipy_logsumexp_suite.py --json     # the counts as JSON

The test module's ``logsumexp``, ``softmax`` and ``log_softmax`` are
replaced by normops' before each test runs. Every test must pass except
those that give complex input, which normops refuses with
``UnsupportedError`` (docs/specification.md §15.4); the summary counts
both and lists any other failure. Exit code 0 when that holds.
"""
import argparse
import json
import sys
from pathlib import Path

import pytest


def _test_file():
    import scipy.special

    return Path(scipy.special.__file__).resolve().parent / "tests" / "test_logsumexp.py"


class Substitute:
    """pytest plugin: normops' functions in the test module, and a record
    of every test's outcome."""

    def __init__(self):
        self.passed = []
        self.complex_refused = []
        self.failed = []     # (test id, exception)
        self.skipped = []

    def pytest_collection_modifyitems(self, session, config, items):
        import normops

        for item in items:
            module = item.module
            module.logsumexp = normops.logsumexp
            module.softmax = normops.softmax
            module.log_softmax = normops.log_softmax

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if report.skipped and call.when in ("setup", "call"):
            self.skipped.append(item.nodeid)
        elif call.when == "call":
            if report.passed:
                self.passed.append(item.nodeid)
            else:
                exc = call.excinfo.value if call.excinfo is not None else None
                from normops import UnsupportedError

                if isinstance(exc, UnsupportedError) and "complex" in str(exc):
                    self.complex_refused.append(item.nodeid)
                else:
                    self.failed.append((item.nodeid, f"{type(exc).__name__}: {exc}"))
        elif report.failed:  # an error in setup or teardown
            self.failed.append((item.nodeid, f"{call.when}: {report.longrepr}"))


def run(quiet=True):
    """Run the suite; returns the plugin with its record."""
    plugin = Substitute()
    args = [str(_test_file()), "-p", "no:cacheprovider", "-q" if quiet else "-v", "--no-header"]
    if quiet:
        args += ["--tb=no", "-rN"]
    plugin.exit_code = int(pytest.main(args, plugins=[plugin]))
    return plugin


def counts(plugin):
    import normops

    def by_function(ids):
        found = {name: sum(1 for i in ids if f"::Test{name}::" in i) for name in ("LogSumExp", "Softmax", "LogSoftmax")}
        found["other"] = sum(1 for i in ids if "::Test" not in i)
        return found

    return {
        "normops": normops.__file__, "pytest_exit_code": plugin.exit_code, "passed": len(plugin.passed), "complex_refused": len(plugin.complex_refused),
        "failed": len(plugin.failed), "skipped": len(plugin.skipped),
        "passed_by_class": by_function(plugin.passed),
        "complex_refused_by_class": by_function(plugin.complex_refused),
        "failures": plugin.failed,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = parser.parse_args(argv)
    plugin = run()
    result = counts(plugin)
    if args.json:
        print(json.dumps(result))
    else:
        import scipy

        print(f"SciPy {scipy.__version__}, {_test_file()}")
        print(f"passed {result['passed']} {result['passed_by_class']}")
        print(f"complex input refused (UnsupportedError) {result['complex_refused']} "
              f"{result['complex_refused_by_class']}")
        print(f"skipped {result['skipped']}")
        print(f"failed otherwise {result['failed']}")
        for nodeid, exc in result["failures"]:
            print(f"  {nodeid}: {exc}")
    return 0 if not result["failed"] and result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
