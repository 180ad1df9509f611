# Kernel sources shared by every ISA build (isa_*.pyx include this file).
#
# Entry points are plain Python functions taking ndarrays: the front layer
# (normops/_validate.py) has already made every array native-endian,
# C-contiguous and of the right dtype, but the checks below are repeated
# (they are a few pointer reads) so that a misuse raises instead of crashing.

cimport numpy as cnp
from cpython.pyport cimport PY_SSIZE_T_MAX
from libc.stdlib cimport malloc, free
from cython.parallel cimport prange
from normops._kernels.shim cimport (
    NORMOPS_HAVE_OPENMP, NORMOPS_X86_64, NORMOPS_HAVE_FLOAT16, omp_get_max_threads, omp_get_thread_num,
    normops_cpu_has_level, normops_mxcsr, normops_widen_float16, normops_narrow_float16,
    normops_widen_bfloat16, normops_narrow_bfloat16, omp_get_num_procs,
    normops_budget_grant, normops_budget_take, normops_budget_release, normops_budget_in_use,
    normops_budget_share, normops_budget_state, normops_team_late, normops_region_expect, normops_region_begin,
    normops_region_end, normops_region_judge, normops_team_forget,
)
from cpython.pycapsule cimport PyCapsule_New, PyCapsule_GetPointer

cnp.import_array()

# Rows per chunk: max(1, ROW_CHUNK_ELEMENTS // cols) (docs/specification.md §14.1).
cdef Py_ssize_t ROW_CHUNK_ELEMENTS = 16384
# Below this many input elements (of a normalisation's cost) a call runs on
# one thread: starting the OpenMP team costs more than it saves (measured,
# docs/performance-analysis.md, "Threads by the work a second thread saves").
cdef Py_ssize_t SERIAL_BELOW_ELEMENTS = 98304
# Rows summed side by side share the cache between passes: a group holds
# at most this many bytes (measured, docs/performance.md).
cdef Py_ssize_t SIDE_BY_SIDE_BYTES = 16384
# A row normalisation over at most this many bytes of rows (one thread's
# range) stays in the cache: its last step takes the separately compiled
# loop (rownorm.pxi, normalize_apply).
cdef Py_ssize_t APPLY_IN_CACHE_BYTES = 1 << 20
# BatchNormalization inference: planes shorter than this run as one row per
# sample with a segment per channel (fewer, longer rows; same bits).
cdef Py_ssize_t BATCH_PLANE_ELEMENTS = 256


# Cost of an element relative to a normalisation's, for threads_for_costly
# (measured at 2 threads on Softmax and Sigmoid: threads pay once the fast
# exponential takes about 24576 elements off a thread, the exact one 6144)
# and for the cumulative scans (threads pay from about 49152 elements).
DEF FAST_EXP_WEIGHT = 2
DEF EXACT_EXP_WEIGHT = 8
DEF CUM_WEIGHT = 2


# The GIL. Releasing and taking it back costs two mutex operations, about
# 0.07 µs, a twentieth of a call on a 4x8 input; so, as NumPy does for its
# loops (NPY_BEGIN_THREADS_THRESHOLDED, 500 elements), a kernel call on
# fewer elements keeps it. Only around calls of noexcept nogil functions:
# nothing between gil_release and gil_restore touches a Python object.
cdef extern from "Python.h":
    ctypedef struct PyThreadState
    PyThreadState* PyEval_SaveThread()
    void PyEval_RestoreThread(PyThreadState* state)

cdef Py_ssize_t GIL_KEPT_BELOW_ELEMENTS = 500


cdef inline PyThreadState* gil_release(Py_ssize_t elements) noexcept:
    """Release the GIL for a kernel call on this many elements, unless they
    are too few to be worth it (NULL: kept)."""
    return PyEval_SaveThread() if elements >= GIL_KEPT_BELOW_ELEMENTS else NULL


cdef inline void gil_restore(PyThreadState* saved) noexcept:
    """Take back the GIL that gil_release released, if it did."""
    if saved != NULL:
        PyEval_RestoreThread(saved)


cdef inline Py_ssize_t exp_cost(bint fast_exp) noexcept nogil:
    """The weight of an element of an exponential kernel: the fast
    exponential's or the correctly rounded one's."""
    return FAST_EXP_WEIGHT if fast_exp else EXACT_EXP_WEIGHT


cdef inline int team_size(int requested, Py_ssize_t chunks) noexcept nogil:
    """The requested threads capped at the chunk count. requested > 0 is a
    per-call count; -k is the configured count k and 0 OpenMP's count for
    the calling thread, both subject to the thread budget (team_take)."""
    if chunks <= 1:
        return 1
    if requested < 0:
        requested = -requested
    elif requested == 0:
        requested = omp_get_max_threads()
    if requested <= 1:
        return 1
    if requested > chunks:
        return <int>chunks
    return requested


# Parallel loops: threads claim chunks (schedule="dynamic", chunk size 1:
# each thread, the calling one included, takes the next unclaimed chunk), so
# a descheduled thread delays only the chunk it holds (docs/specification.md §14.2).
# Each loop runs on team_take(threads, requested) threads, handed back with
# team_release after it.

cdef inline int team_take(int team, int requested) noexcept nogil:
    """The threads a loop sized team (threads_for...) starts now, taken from
    the process-wide budget (platform_shim.h): a count left to the
    configuration (requested <= 0) gets what the other calls leave free.
    The loop is timed from here to team_release (late teams)."""
    cdef int taken = normops_budget_take(team, requested <= 0)
    if taken > 1:
        normops_region_begin()
    return taken


cdef inline void team_release(int taken) noexcept nogil:
    if taken > 1:
        normops_region_end()
    normops_budget_release(taken)


cdef inline int team_on_time(int threads, Py_ssize_t weighted_elements) noexcept nogil:
    """threads, or 1 while a recent loop's team came late (another process
    holding the cores: platform_shim.h, "Late teams"); records what the
    loop's time is judged against."""
    if threads <= 1:
        return threads
    if normops_team_late():
        return 1
    normops_region_expect(weighted_elements, threads)
    return threads


cdef inline Py_ssize_t chunks_per_claim(Py_ssize_t chunks, Py_ssize_t neighbours, int threads) noexcept nogil:
    """Chunks a thread claims at once where up to `neighbours` neighbouring
    chunks are better done together (one pass over the shared rows), but
    at least four claims per thread, so that a descheduled thread holds up
    little. Each chunk is still computed whole, as alone."""
    return max(1, min(neighbours, chunks // (4 * <Py_ssize_t>threads)))


cdef inline int threads_for(int requested, Py_ssize_t chunks, Py_ssize_t elements) noexcept nogil:
    """Threads for a parallel loop: capped at the chunk count, 1 when small."""
    if elements < SERIAL_BELOW_ELEMENTS:
        return 1
    return team_on_time(team_size(requested, chunks), elements)


cdef inline int threads_for_costly(int requested, Py_ssize_t chunks, Py_ssize_t chunk_elements,
                                   Py_ssize_t elements, Py_ssize_t weight) noexcept nogil:
    """Threads for chunks of elements that cost about weight times a
    normalisation's (exponentials): serial unless the elements the other
    threads take off the busiest one (chunks evenly shared: it runs
    ceil(chunks / threads) chunks), weighted, reach half the serial
    threshold (at 2 threads, weight 1 and even chunks, threads_for's rule).
    saved * weight < half is tested as saved < ceil(half / weight), which
    cannot overflow."""
    cdef int threads = team_size(requested, chunks)
    cdef Py_ssize_t busiest, saved, half = SERIAL_BELOW_ELEMENTS // 2
    if threads > 1:
        busiest = min(elements, (chunks + threads - 1) // threads * chunk_elements)
        saved = elements - busiest
        if (saved < (half + weight - 1) // weight) if weight > 0 else half > 0:
            return 1
        return team_on_time(threads, elements * weight if elements < (<Py_ssize_t>1 << 56) else elements)
    return threads


include "storage.pxi"
include "placed.pxi"
include "sum16.pxi"
include "rownorm.pxi"
include "rownorm_api.pxi"
include "rowdivide.pxi"
include "transcendental.pxi"
include "softmax.pxi"
include "reduce.pxi"
include "argcum.pxi"
include "gelu.pxi"
include "transpose.pxi"
include "route.pxi"
include "named.pxi"


# ----------------------------------------------------------------- checks

cdef int check_array(object a, int typenum, Py_ssize_t size, bint writable, str name) except -1:
    if not isinstance(a, cnp.ndarray):
        raise TypeError(f"kernel argument {name!r} must be an ndarray")
    cdef cnp.ndarray arr = <cnp.ndarray>a
    if cnp.PyArray_TYPE(arr) != typenum:
        raise TypeError(f"kernel argument {name!r} has dtype {arr.dtype}")
    if cnp.PyArray_SIZE(arr) != size:
        raise ValueError(f"kernel argument {name!r} has {cnp.PyArray_SIZE(arr)} elements, expected {size}")
    if not cnp.PyArray_IS_C_CONTIGUOUS(arr) or not cnp.PyArray_ISALIGNED(arr) or not cnp.PyArray_ISNOTSWAPPED(arr):
        raise ValueError(f"kernel argument {name!r} must be aligned, native and C-contiguous")
    if writable and not cnp.PyArray_ISWRITEABLE(arr):
        raise ValueError(f"kernel argument {name!r} must be writable")
    return 0


cdef Py_ssize_t shape_size(Py_ssize_t a, Py_ssize_t b, Py_ssize_t c=1) except -1:
    """a * b * c for a kernel's shape arguments, refused when it overflows
    (a wrapped product could pass check_array and then index past x)."""
    if a < 0 or b < 0 or c < 0:
        raise ValueError("kernel shape arguments must be >= 0")
    cdef object size = <object>a * b * c
    if size > PY_SSIZE_T_MAX:
        raise ValueError(f"kernel shape {a} x {b} x {c} is too large")
    return <Py_ssize_t>size


cdef inline void* data_or_null(object a):
    return NULL if a is None else cnp.PyArray_DATA(<cnp.ndarray>a)


cdef int float_typenum(object x) except -1:
    if not isinstance(x, cnp.ndarray):
        raise TypeError("kernel input must be an ndarray")
    cdef int t = cnp.PyArray_TYPE(<cnp.ndarray>x)
    if t != cnp.NPY_FLOAT32 and t != cnp.NPY_FLOAT64:
        raise TypeError(f"kernels take float32 or float64, not {x.dtype}")
    return t


# ----------------------------------------------------------- entry points

cdef Storage storage_of(object a, str name) except *:
    """The storage type of a kernel array argument."""
    if not isinstance(a, cnp.ndarray):
        raise TypeError(f"kernel argument {name!r} must be an ndarray")
    cdef int t = cnp.PyArray_TYPE(<cnp.ndarray>a)
    if t == cnp.NPY_FLOAT32:
        return STORE_FLOAT32
    if t == cnp.NPY_FLOAT64:
        return STORE_FLOAT64
    if t == cnp.NPY_FLOAT16 and NORMOPS_HAVE_FLOAT16:
        return STORE_FLOAT16
    if a.dtype.name == "bfloat16" and a.dtype.itemsize == 2:
        return STORE_BFLOAT16
    raise TypeError(f"kernel argument {name!r} has dtype {a.dtype}, which this build does not store")


def sum16_rows(x, out, Py_ssize_t rows, Py_ssize_t cols):
    """out[r] = Sum16(x[r, :]) for a rows x cols matrix (the building block)."""
    cdef int t = float_typenum(x)
    check_array(x, t, shape_size(rows, cols), False, "x")
    check_array(out, t, rows, True, "out")
    cdef void* px = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* po = cnp.PyArray_DATA(<cnp.ndarray>out)
    cdef Py_ssize_t r
    with nogil:
        for r in range(rows):
            if t == cnp.NPY_FLOAT32:
                (<float*>po)[r] = sum16(<const float*>px + r * cols, cols)
            else:
                (<double*>po)[r] = sum16(<const double*>px + r * cols, cols)


# ------------------------------------------------------------ build facts

def float16_storage():
    """True when this build converts float16 itself (gcc/clang _Float16)."""
    return bool(NORMOPS_HAVE_FLOAT16)


def openmp_enabled():
    """True when this build runs its loops with OpenMP."""
    return bool(NORMOPS_HAVE_OPENMP)


def max_threads():
    """omp_get_max_threads() of the calling thread (OMP_NUM_THREADS,
    threadpoolctl's limit), or 1 without OpenMP."""
    return omp_get_max_threads()


def built_for_x86_64():
    return bool(NORMOPS_X86_64)


def cpu_has_level(int level):
    """0 = baseline, 1 = x86-64-v3 (AVX2), 2 = x86-64-v4 (AVX-512)."""
    return bool(normops_cpu_has_level(level))


def mxcsr():
    """The SSE control register of the calling thread (on aarch64, FPCR.FZ
    as its FTZ and DAZ bits; 0 on other CPUs)."""
    return normops_mxcsr()


def set_apply_in_cache_bytes(Py_ssize_t nbytes):
    """Change the size of a row range from which the row normalisations'
    last step keeps its inlined loop (APPLY_IN_CACHE_BYTES; results do not
    depend on it); returns the old one."""
    global APPLY_IN_CACHE_BYTES
    old = APPLY_IN_CACHE_BYTES
    APPLY_IN_CACHE_BYTES = max(0, nbytes)
    return old


def set_side_by_side_bytes(Py_ssize_t nbytes):
    """Change the byte budget of a group of rows summed side by side
    (benchmarks tune it; results do not depend on it); returns the old one."""
    global SIDE_BY_SIDE_BYTES
    old = SIDE_BY_SIDE_BYTES
    SIDE_BY_SIDE_BYTES = max(0, nbytes)
    return old


def costly_thread_count(int requested, Py_ssize_t chunks, Py_ssize_t chunk_elements, Py_ssize_t elements,
                        Py_ssize_t weight):
    """threads_for_costly's choice (tests check the rule)."""
    return threads_for_costly(requested, chunks, chunk_elements, elements, weight)


def thread_budget():
    """The process-wide team state of this build (the thread budget and the
    late-team clock), as a capsule (for share_thread_budget)."""
    return PyCapsule_New(normops_budget_state(), b"normops.thread_budget", NULL)


def share_thread_budget(capsule):
    """Count this build's threads in another build's budget, and its late
    teams in its clock (one state per process however many ISA builds are
    loaded). Call before any kernel."""
    normops_budget_share(PyCapsule_GetPointer(capsule, b"normops.thread_budget"))


def judge_team(long long took_ns, long long expect_ns):
    """Judge a loop that took took_ns against expect_ns as team_release
    does (tests drive the late-team rule with it); returns whether loops
    now stay on one thread."""
    normops_region_judge(took_ns, expect_ns)
    return bool(normops_team_late())


def forget_late_teams():
    """Clear the late-team clock (tests)."""
    normops_team_forget()


def threads_in_use():
    """Threads inside normops's parallel loops right now (the budget)."""
    return normops_budget_in_use()


def usable_cores():
    """The cores the budget shares out: omp_get_num_procs() (this process's
    CPU affinity), or 1 without OpenMP."""
    return omp_get_num_procs()


def budget_grant(int team, int in_use, int cores):
    """Threads granted to a budgeted loop of team threads when in_use are
    taken out of cores (tests check the rule)."""
    return normops_budget_grant(team, in_use, cores)


def take_threads(int team, int requested):
    """team_take from Python (tests hold part of the budget with it); give
    the result back with release_threads."""
    return team_take(team, requested)


def release_threads(int taken):
    team_release(taken)


def set_serial_threshold(Py_ssize_t elements):
    """Change the serial threshold (benchmarks measure it); returns the old one."""
    global SERIAL_BELOW_ELEMENTS
    old = SERIAL_BELOW_ELEMENTS
    SERIAL_BELOW_ELEMENTS = max(0, elements)
    return old


