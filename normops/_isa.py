"""Choose the kernel build (ISA level) for this CPU.

Every level computes the exact flavour with the same bits; the choice only
changes speed. ``NORMOPS_ISA=baseline|avx2|avx512`` forces a level (a level
the CPU cannot run is an error, raised when normops is imported).
"""
import contextlib
import importlib
import importlib.util
import os

from ._errors import InvalidInputError, UnsupportedError

ENV_VAR = "NORMOPS_ISA"
LEVELS = ("baseline", "avx2", "avx512")  # in increasing order

def _wait_policy():
    """What OpenMP's idle threads do in this process, for show_config.
    normops leaves libgomp's default (spin for a while, then sleep):
    setting ``OMP_WAIT_POLICY=passive`` made 2-thread calls 1.1-1.8x
    slower on a quiet machine, and with chunks claimed the default meets
    the busy-core target too (docs/performance-analysis.md, "Threads
    before the measured team model", "Waiting threads")."""
    policy = os.environ.get("OMP_WAIT_POLICY", "").strip()
    return f"{policy.lower()} (OMP_WAIT_POLICY)" if policy else "libgomp's default (spin, then sleep)"


#: What OpenMP's idle threads do in this process (show_config).
wait_policy = _wait_policy()

try:
    #: The routes module (compiled once): every kernel entry point, the routes
    #: to them, the thread budget and the build facts; it runs the loops of
    #: the build it is sent (``kernels`` below).
    routes = importlib.import_module("normops._kernels.routes")
except ModuleNotFoundError as exc:
    if exc.name != "normops._kernels.routes":
        raise
    raise ImportError(
        f"normops: the compiled kernels are missing from {os.path.dirname(os.path.abspath(__file__))}. "
        "In a source checkout, install it with `pip install -e .` (or build in place: "
        "`python setup.py build_ext --inplace`); after a plain `pip install .`, run Python "
        "from another folder than the repository root, whose normops/ folder hides the "
        "installed package.") from None
#: False on CPUs other than x86-64, where the one build is generic.
X86_64 = routes.built_for_x86_64()


def _module_name(level):
    return f"normops._kernels.isa_{level}"


def available_levels():
    """The levels that are built and that this CPU runs, lowest first."""
    levels = []
    for index, level in enumerate(LEVELS):
        if routes.cpu_has_level(index) and importlib.util.find_spec(_module_name(level)) is not None:
            levels.append(level)
    return levels


#: the builds loaded so far, by level (one per level: load(level) is load(level))
_builds = {}


def load(level):
    """The kernel build of one level (which must be runnable here): a
    ``routes.KernelBuild``, whose methods are the build's entry points."""
    if level == "generic":
        level = "baseline"
    if level not in LEVELS:
        raise InvalidInputError(f"{ENV_VAR}: unknown ISA level {level!r}; choose one of {', '.join(LEVELS)}")
    runnable = available_levels()
    if level not in runnable:
        raise UnsupportedError(
            f"{ENV_VAR}: ISA level {level!r} is not available on this CPU or build; "
            f"available: {', '.join(runnable)}")
    build = _builds.get(level)
    if build is None:
        # (one thread budget and one set of figures per process, whichever
        # builds are loaded: KernelBuild hands the build the process's)
        build = _builds[level] = routes.KernelBuild(importlib.import_module(_module_name(level)))
    return build


#: freed large outputs kept for the next ones (placed_alloc.h, in the
#: routes module: one store whichever build runs), in bytes
_output_cache_bytes = 64 << 20


def output_cache_bytes():
    """The kept-output limit."""
    return _output_cache_bytes


def set_output_cache_bytes(limit):
    """Set the kept-output limit (the blocks above it are freed now)."""
    global _output_cache_bytes
    _output_cache_bytes = limit
    routes.set_output_cache_bytes(limit)


def _select():
    requested = os.environ.get(ENV_VAR, "").strip().lower()
    if requested:
        return load(requested)
    return load(available_levels()[-1])


#: The kernel build every call uses.
kernels = _select()
routes.use_kernels(kernels)
routes.set_output_cache_bytes(_output_cache_bytes)


def current_level():
    return kernels.ISA_LEVEL


@contextlib.contextmanager
def use(level):
    """Switch the kernels of the whole process to ``level`` for a block
    (for tests and benchmarks; not thread-safe)."""
    previous = kernels
    switch_to(load(level))
    try:
        yield kernels
    finally:
        switch_to(previous)


def switch_to(build):
    """Make a loaded kernel build the one every call and route uses."""
    global kernels
    kernels = build
    routes.use_kernels(build)
