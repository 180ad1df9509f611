"""Run an operator over many arrays from a pool of threads.

The kernels release the GIL while they compute (``with nogil``), so calls
made from several Python threads run on several cores at once. Every call
is computed exactly as a serial call would be: same function, same
arguments, same flavour, so the results are bit-identical to
``[func(a, *args, **kwargs) for a in arrays]`` (the exact flavour does not
depend on the thread count either).

``map_batch`` returns a list; ``imap_batch`` is its lazy form, a generator
that takes items from an iterator only as workers free up (at most
``2 * max_workers`` calls submitted and not yet consumed), for batches that
do not fit in memory. See docs/batch.md.
"""
import collections
import concurrent.futures
import os

from . import _config
from ._errors import InvalidInputError, UnsupportedError

__all__ = ["map_batch", "imap_batch"]

_NAME = "map_batch"


def _default_workers():
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _check_workers(max_workers, where):
    if max_workers is None:
        return _default_workers()
    return _config.positive_count(max_workers, "max_workers", where, 1 << 16)


def _tqdm(progress, where):
    """tqdm's class when a bar is asked for, else None (checked eagerly)."""
    if progress is False or progress is None:
        return None
    if progress is not True and not isinstance(progress, dict):
        raise InvalidInputError(
            f"{where}: argument 'progress' must be True, False or a dict of tqdm arguments, not {progress!r}")
    try:
        from tqdm.auto import tqdm
    except ImportError:
        raise UnsupportedError(f"{where}: progress=True needs tqdm (pip install tqdm)") from None
    return tqdm


def _progress_bar(progress, total, where):
    tqdm = _tqdm(progress, where)
    if tqdm is None:
        return None
    options = {"total": total, "desc": where, "unit": "array"}
    if isinstance(progress, dict):
        options.update(progress)
    return tqdm(**options)


def _with_index(exc, index, where):
    """Name the failing item on the exception itself (type unchanged, so
    ``except InvalidInputError`` still works)."""
    note = f"{where}: item {index} of the batch raised this"
    exc.batch_index = index
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:  # Python 3.10: kept for introspection, not printed
        exc.__notes__ = list(getattr(exc, "__notes__", [])) + [note]
    return exc


def _generate(func, arrays, args, kwargs, max_workers, n_threads, mode, progress, where, total):
    def call(item):
        # the caller's flavour, and the per-call thread count, in this worker
        with _config.config(mode=mode, n_threads=n_threads):
            return func(item, *args, **kwargs)

    bar = _progress_bar(progress, total, where)
    pending = collections.deque()
    limit = 2 * max_workers  # bounded look-ahead over a lazy iterator
    executor = concurrent.futures.ThreadPoolExecutor(max_workers=max_workers,
                                                     thread_name_prefix="normops-batch")
    try:
        items = enumerate(arrays)
        exhausted = False
        while True:
            while not exhausted and len(pending) < limit:
                try:
                    index, item = next(items)
                except StopIteration:
                    exhausted = True
                    break
                pending.append((index, executor.submit(call, item)))
            if not pending:
                return
            index, future = pending.popleft()
            try:
                result = future.result()
            except BaseException as exc:
                raise _with_index(exc, index, where)
            if bar is not None:
                bar.update(1)
            yield result
    finally:
        for _, future in pending:
            future.cancel()
        executor.shutdown(wait=True, cancel_futures=True)
        if bar is not None:
            bar.close()


def _prepare(func, arrays, max_workers, n_threads, progress, where):
    if not callable(func):
        raise InvalidInputError(f"{where}: argument 'func' must be callable, not {type(func).__name__}")
    try:
        iter(arrays)
    except TypeError:
        raise InvalidInputError(
            f"{where}: argument 'arrays' must be an iterable of arrays, not {type(arrays).__name__}") from None
    workers = _check_workers(max_workers, where)
    _tqdm(progress, where)
    if n_threads is None:
        n_threads = _config.get_config()["n_threads"]
    n_threads = _config.check_n_threads(n_threads, where)
    try:
        total = len(arrays)
    except TypeError:
        total = None
    # the flavour in force now, in the calling thread (a generator body runs
    # only when consumed, perhaps outside the caller's normops.config block)
    mode = _config.get_config()["mode"]
    return workers, n_threads, mode, total


def imap_batch(func, arrays, *args, max_workers=None, n_threads=1, progress=False, **kwargs):
    """Lazy ``map_batch``: a generator of ``func(a, *args, **kwargs)`` for
    each ``a`` of ``arrays``, in order.

    Items are taken from ``arrays`` (any iterable, e.g. a generator reading
    files) only as results are consumed: at most ``2 * max_workers`` calls
    are in flight. Closing the generator early cancels the calls not yet
    started. Arguments are checked when the generator is created.
    """
    workers, n_threads, mode, total = _prepare(func, arrays, max_workers, n_threads, progress, "imap_batch")
    return _generate(func, arrays, args, kwargs, workers, n_threads, mode, progress, "imap_batch", total)


def map_batch(func, arrays, *args, max_workers=None, n_threads=1, progress=False, **kwargs):
    """``[func(a, *args, **kwargs) for a in arrays]``, computed by a pool of
    threads; the results are bit-identical to the serial calls.

    Parameters
    ----------
    func : callable
        A normops function (``normops.layer_normalization``...) or any
        callable whose first argument is one item of ``arrays``; the
        normops calls inside it run in the kernels without the GIL.
    arrays : iterable
        The first argument of each call (a list, a tuple, a generator...).
    *args, **kwargs
        Passed to every call after the item (``scale``, ``axis=``...).
    max_workers : int or None
        Calls running at once (threads of the pool). None: the number of
        CPUs this process may use.
    n_threads : int or None
        OpenMP threads of each call (default 1: with as many workers as
        cores, one thread per call avoids oversubscription). None follows
        the caller's configuration. It is applied with ``normops.config``
        inside each worker, so it also reaches normops calls made inside
        ``func``, and like any configured count it is an upper bound under
        the process-wide thread budget (the calls running together get at
        most the usable cores).
    progress : bool or dict
        True shows a tqdm progress bar (tqdm must be installed); a dict is
        passed to tqdm as keyword arguments.

    The flavour (``mode``) in force in the calling thread is used in the
    workers too, unless ``func`` gets its own ``mode=``. If a call raises,
    the calls not yet started are cancelled and the exception is re-raised
    unchanged in type, with ``batch_index`` set to the item's index and a
    note naming it.
    """
    workers, n_threads, mode, total = _prepare(func, arrays, max_workers, n_threads, progress, _NAME)
    return list(_generate(func, arrays, args, kwargs, workers, n_threads, mode, progress, _NAME, total))
