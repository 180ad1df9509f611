"""Do the installed optional dependencies import together?

pip can resolve a set of packages that installs cleanly, passes
``pip check`` and still cannot import: a new dask with a distributed old
enough that its loose requirement admits any dask (its newest releases pin
dask exactly, so the resolver backtracks to one that does not). Importing
each optional integration right after the install catches that, and the
message names the pair. ``tests/conftest.py`` runs this before the suite;
``python tests/installed_extras.py`` runs it alone.
"""
import importlib
import importlib.metadata as metadata
import re
import sys

# import name -> distribution name, for every optional dependency a feature
# or the test suite imports (pyproject.toml's extras).
OPTIONAL_MODULES = {
    "onnx": "onnx",
    "onnxruntime": "onnxruntime",
    "ml_dtypes": "ml_dtypes",
    "scipy": "scipy",
    "sklearn": "scikit-learn",
    "pandas": "pandas",
    "dask.array": "dask",
    "distributed": "distributed",
    "tqdm": "tqdm",
    "hypothesis": "hypothesis",
    "matplotlib": "matplotlib",
    "mpmath": "mpmath",
}


def _version(distribution):
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _installed_requirements(distribution):
    """'name version' for each requirement of distribution that is installed."""
    found = []
    for requirement in metadata.requires(distribution) or ():
        if ";" in requirement and "extra ==" in requirement:
            continue
        name = re.match(r"[A-Za-z0-9_.\-]+", requirement).group(0)
        version = _version(name)
        if version is not None:
            found.append(f"{name} {version} (asks {requirement.split(';')[0].strip()})")
    return found


def broken_imports(modules=OPTIONAL_MODULES):
    """One message per installed optional dependency that fails to import:
    its version, the error, and the installed versions of what it requires."""
    problems = []
    for module, distribution in modules.items():
        version = _version(distribution)
        if version is None:
            continue  # not installed: the tests that need it skip
        try:
            importlib.import_module(module)
        except Exception as error:  # any failure to import is the point
            pairs = "; ".join(_installed_requirements(distribution)) or "no installed requirements"
            problems.append(f"{distribution} {version} is installed but `import {module}` fails: "
                            f"{type(error).__name__}: {error}. Installed beside it: {pairs}.")
    return problems


def main():
    problems = broken_imports()
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print("Reinstall with the project's extras (pip install -e \".[test]\"), which pin working pairs.",
              file=sys.stderr)
        return 1
    print("optional dependencies: every installed one imports")
    return 0


if __name__ == "__main__":
    sys.exit(main())
