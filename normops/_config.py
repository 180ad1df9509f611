"""Configuration in scikit-learn's style.

Two settings per call: the flavour ``mode`` ("exact" or "fast") and
``n_threads``. ``set_config`` changes the process-wide values;
``config(...)`` overrides them for a block of code in the calling thread
only; each call's ``mode=`` and ``n_threads=`` arguments override both.

One setting of the process only (``set_config``, not ``config``):
``output_cache_bytes``, how much memory of freed large outputs normops
keeps for its next outputs of about their size (default 64 MiB; 0 keeps
none). Memory the process holds is shared by its threads, so a per-thread
override would have no meaning.

The thread count, when nothing sets it, follows OpenMP as seen from the
calling thread: threadpoolctl's ``threadpool_limits`` and
``OMP_NUM_THREADS`` both act through ``omp_get_max_threads()``, which by
default is the CPU count.

Only a per-call ``n_threads=`` is taken as asked. A count from the
configuration or OpenMP is an upper bound under the process-wide thread
budget: while other normops calls run (from other Python threads), a call
gets only the cores they leave free, at least one (docs/design.md,
"Threads").
"""
import contextlib
import operator
import threading

from . import _isa, _threads
from ._errors import InvalidInputError

MODES = ("exact", "fast")
MAX_THREADS = 1024  # more would only oversubscribe; the kernels take a C int
_UNSET = object()

_global_config = {"mode": "exact", "n_threads": None}
_thread_local = threading.local()


def _overrides():
    """The calling thread's override dict (empty when no config() is open)."""
    try:
        return _thread_local.overrides
    except AttributeError:
        _thread_local.overrides = {}
        return _thread_local.overrides


def check_mode(mode, where="normops"):
    if not isinstance(mode, str) or mode not in MODES:  # (an array's `in` would not be a bool)
        raise InvalidInputError(f"{where}: argument 'mode' must be 'exact' or 'fast', not {mode!r}")
    return mode


def bounded_int(value, name, where, lower, upper, what):
    """An integer argument (not a bool) in lower..upper; ``what`` says what
    is expected, for the error."""
    try:
        if isinstance(value, bool):
            raise TypeError
        count = operator.index(value)
    except TypeError:
        raise InvalidInputError(f"{where}: argument {name!r} must be {what}, not {value!r}") from None
    if not lower <= count <= upper:
        raise InvalidInputError(f"{where}: argument {name!r} must be in {lower}..{upper}, not {count}")
    return count


def positive_count(value, name, where, upper):
    """A count argument: None, or an integer (not a bool) in 1..upper."""
    if value is None:
        return None
    return bounded_int(value, name, where, 1, upper, "a positive integer or None")


def check_n_threads(n_threads, where="normops"):
    """None (follow OpenMP) or a positive integer."""
    return positive_count(n_threads, "n_threads", where, MAX_THREADS)


def _checked(mode, n_threads, where):
    """The settings given (not _UNSET), validated."""
    changes = {}
    if mode is not _UNSET:
        changes["mode"] = check_mode(mode, where)
    if n_threads is not _UNSET:
        changes["n_threads"] = check_n_threads(n_threads, where)
    return changes


def get_config():
    """The settings in force in the calling thread, as a new dict."""
    merged = dict(_global_config)
    merged.update(_overrides())
    merged["output_cache_bytes"] = _isa.output_cache_bytes()
    merged["thread_costs"] = _threads.pinned()
    return merged


def check_output_cache_bytes(value, where):
    """A byte count: an integer (not a bool) from 0 to 2^62."""
    return bounded_int(value, "output_cache_bytes", where, 0, 1 << 62, "a non-negative integer")


def set_config(*, mode=_UNSET, n_threads=_UNSET, output_cache_bytes=_UNSET, thread_costs=_UNSET):
    """Change the process-wide settings. ``n_threads=None`` goes back to
    following OpenMP / threadpoolctl; ``output_cache_bytes`` is the memory
    of freed large outputs kept for the next ones (0: none, and the blocks
    kept are freed now); ``thread_costs`` pins the figures that decide how
    many threads a call takes (normops._threads; None: measure them); an
    omitted argument is left as it is."""
    changes = _checked(mode, n_threads, "set_config")  # all or nothing
    if thread_costs is not _UNSET:
        thread_costs = _threads.check_thread_costs(thread_costs, "set_config")
    if output_cache_bytes is not _UNSET:
        _isa.set_output_cache_bytes(check_output_cache_bytes(output_cache_bytes, "set_config"))
    if thread_costs is not _UNSET:
        _threads.pin(thread_costs)
    _global_config.update(changes)


@contextlib.contextmanager
def config(*, mode=_UNSET, n_threads=_UNSET, thread_costs=_UNSET):
    """Override settings for a block of code, in the calling thread only;
    except ``thread_costs``, which pins the machine's figures for the whole
    process while the block runs (they describe the machine, not a thread).

    >>> with normops.config(mode="fast", n_threads=1):
    ...     y = normops.layer_normalization(x, scale)
    """
    changes = _checked(mode, n_threads, "config")  # before anything changes
    if thread_costs is not _UNSET:
        thread_costs = _threads.check_thread_costs(thread_costs, "config")
    overrides = _overrides()
    saved = dict(overrides)
    saved_pin = _threads.pinned()
    try:
        overrides.update(changes)
        if thread_costs is not _UNSET:
            _threads.pin(thread_costs)
        yield get_config()
    finally:
        overrides.clear()
        overrides.update(saved)
        if thread_costs is not _UNSET:
            _threads.pin(saved_pin)


def set_num_threads(n_threads):
    """Process-wide thread count (None: follow OpenMP / threadpoolctl)."""
    set_config(n_threads=n_threads)


def get_num_threads():
    """The thread count a call from this thread would use."""
    return resolve_threads(None, "get_num_threads")


def resolve_mode(mode, where):
    """Per-call mode, else the thread's config, else the global one."""
    if mode is None:
        mode = _overrides().get("mode", _global_config["mode"])
        return mode
    return check_mode(mode, where)


def kernel_threads(n_threads, where):
    """The count to hand to a kernel. A per-call count k is passed as k, an
    explicit request. A count left to the configuration is subject to the
    process-wide thread budget (the kernels give it only the cores that
    concurrent calls leave free): the configured k is passed as -k, and 0
    means "ask OpenMP" (the kernel calls omp_get_max_threads() itself,
    which saves a call on the per-call path)."""
    if n_threads is None:
        try:
            overrides = _thread_local.overrides
        except AttributeError:
            overrides = _overrides()
        n_threads = overrides.get("n_threads", _global_config["n_threads"])
        return 0 if n_threads is None else -n_threads
    if type(n_threads) is int and 0 < n_threads <= MAX_THREADS:  # the common case, checked by type
        return n_threads
    return check_n_threads(n_threads, where)


def resolve_threads(n_threads, where):
    """Per-call count, else the configured one, else OpenMP's."""
    return abs(kernel_threads(n_threads, where)) or _isa.routes.max_threads()
