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
    NORMOPS_HAVE_FLOAT16, omp_get_max_threads, omp_get_thread_num,
    normops_widen_float16, normops_narrow_float16, normops_widen_bfloat16, normops_narrow_bfloat16,
    normops_budget_in_use, normops_budget_share,
    NORMOPS_COST_ROWS, NORMOPS_COST_REDUCE, NORMOPS_COST_SOFTMAX_EXACT, NORMOPS_COST_SOFTMAX_FAST,
    NORMOPS_COST_MAP_EXACT, NORMOPS_COST_MAP_FAST, NORMOPS_COST_SCAN,
    NORMOPS_COST_MOVE, NORMOPS_COST_ROWS_RMS, NORMOPS_COST_REDUCE_EXP_EXACT, NORMOPS_COST_REDUCE_EXP_FAST, NORMOPS_COST_SCAN_LINES,
    NORMOPS_THIS_LEVEL, normops_team_plan, normops_loop_begin, normops_loop_end, normops_team_take, normops_team_release,
    normops_team_note_region_end, normops_plan_drop, normops_claim_slot, normops_team_claims,
)
from cpython.pycapsule cimport PyCapsule_New
from normops._kernels.routes cimport placed_like, placed_empty, kernel_output_like
from normops._kernels.kernel_table cimport (
    KernelTable, KERNEL_TABLE_NAME, RowDivisor, DIVIDE_BY_STD, DIVIDE_BY_L1, DIVIDE_BY_L2, is_plain_float, dims_product,
)

cnp.import_array()

# The specification's chunks, tiles and long sequences (docs/specification.md
# §11.2-§11.4, §12, §14.1): one copy, in spec_constants.h (normops/_spec.py
# holds the same numbers for Python). Rows per chunk:
# max(1, ROW_CHUNK_ELEMENTS // cols); reductions, ArgMax/ArgMin and
# CumSum/CumProd: max(1, REDUCE_CHUNK_ELEMENTS // work) units; a reduction's
# column tile: REDUCE_TILE outputs; sequences of at least LONG_TERMS terms in
# blocks of BLOCK_TERMS.
cdef extern from "spec_constants.h" nogil:
    const Py_ssize_t ROW_CHUNK_ELEMENTS "NORMOPS_ROW_CHUNK_ELEMENTS"
    const Py_ssize_t REDUCE_CHUNK_ELEMENTS "NORMOPS_REDUCE_CHUNK_ELEMENTS"
    const Py_ssize_t REDUCE_TILE "NORMOPS_REDUCE_TILE"
    const Py_ssize_t LONG_TERMS "NORMOPS_LONG_TERMS"
    const Py_ssize_t BLOCK_TERMS "NORMOPS_BLOCK_TERMS"
# Rows summed side by side share the cache between passes: a group holds
# at most this many bytes (measured, docs/performance.md).
cdef Py_ssize_t SIDE_BY_SIDE_BYTES = 16384
# A row normalisation over at most this many bytes of rows (one thread's
# range) stays in the cache: its last step takes the separately compiled
# loop (normalization.pxi, normalize_apply).
cdef Py_ssize_t APPLY_IN_CACHE_BYTES = 1 << 20
# BatchNormalization inference: planes shorter than this run as one row per
# sample with a segment per channel (fewer, longer rows; same bits).
cdef Py_ssize_t BATCH_PLANE_ELEMENTS = 256


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


cdef inline int map_family(bint fast) noexcept nogil:
    """The cost family of an element-wise transcendental kernel (Sigmoid,
    Gelu, the exp32/log32 maps): the fast flavour's or the exact one's."""
    return NORMOPS_COST_MAP_FAST if fast else NORMOPS_COST_MAP_EXACT


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
# a descheduled thread delays only the chunk it holds (docs/specification.md
# §14.2). How many threads a
# loop takes comes from costs measured on this machine (team.h): a loop is
# sized by threads_for or threads_for_chunks, runs between team_take and
# team_release (or, where it runs on one thread without a team,
# serial_begin and serial_end), and teaches the model its time.

cdef inline int team_take(int team, int requested) noexcept nogil:
    """The threads a loop sized team (threads_for...) starts now, taken from
    the process-wide budget: a count left to the configuration
    (requested <= 0) gets what the other calls leave free."""
    return normops_team_take(team, requested <= 0)


cdef inline void team_release(int taken) noexcept nogil:
    normops_team_release(taken)


cdef inline void serial_begin() noexcept nogil:
    """Before a loop that threads_for sent to one thread and that runs
    without team_take: time it now and then (what an element costs)."""
    normops_loop_begin(1)


cdef inline void serial_end() noexcept nogil:
    normops_loop_end(1)


cdef inline Py_ssize_t chunks_per_claim(Py_ssize_t chunks, Py_ssize_t neighbours, int threads) noexcept nogil:
    """Chunks a thread claims at once where up to `neighbours` neighbouring
    chunks are better done together (one pass over the shared rows), but
    at least four claims per thread, so that a descheduled thread holds up
    little. Each chunk is still computed whole, as alone."""
    return max(1, min(neighbours, chunks // (4 * <Py_ssize_t>threads)))


cdef inline int threads_for_chunks(int requested, Py_ssize_t chunks, Py_ssize_t chunk_elements,
                                   Py_ssize_t elements, int family) noexcept nogil:
    """Threads for a loop of `chunks` chunks of about chunk_elements
    elements each (elements in all) of a kernel family: the requested count
    capped at the chunks, fewer (down to 1) where threads would not pay for
    what starting them costs now (team.h)."""
    return normops_team_plan(team_size(requested, chunks), chunks, chunk_elements, elements, family)


cdef inline int whole_team(int requested, Py_ssize_t chunks) noexcept nogil:
    """The requested count capped at the chunks, without the cost model:
    for the exhaustive checks, whose every call is long."""
    normops_plan_drop()
    return team_size(requested, chunks)


cdef inline int threads_for(int requested, Py_ssize_t chunks, Py_ssize_t elements, int family) noexcept nogil:
    """threads_for_chunks with the elements shared evenly by the chunks."""
    return threads_for_chunks(requested, chunks, (elements + chunks - 1) // chunks if chunks > 0 else 0,
                              elements, family)


include "storage.pxi"
include "sum16.pxi"
include "normalization.pxi"
include "normalization_api.pxi"
include "row_divide.pxi"
include "transcendental.pxi"
include "arg_reduce.pxi"  # before softmax.pxi: Hardmax takes its first maximum by the ArgMax scan
include "softmax.pxi"
include "activation.pxi"
include "reduction.pxi"
include "numpy_style.pxi"
include "cumulative.pxi"
include "gelu.pxi"
include "transpose.pxi"


# ---------------------------------------------------- the routes' entry points
# The routes module (routes.pyx: named.pxi, route.pxi), compiled once, calls
# these kernels of the build chosen at import through this table.

cdef object table_softmax_direct(object x, object axis, object version, int kind, bint fast, int n_threads):
    return softmax_direct(x, axis, version, kind, fast, n_threads)


cdef object table_sigmoid_direct(object x, bint fast, int n_threads):
    return sigmoid_direct(x, fast, n_threads)


cdef object table_row_divide(object x, object y, Py_ssize_t rows, Py_ssize_t cols, int kind, int n_threads):
    return row_divide(x, y, rows, cols, kind, n_threads)


cdef object table_cum_direct(object x, object axis, bint exclusive, bint reverse, bint multiply, int n_threads):
    return cum_direct(x, axis, exclusive, reverse, multiply, n_threads)


cdef object table_gelu_flat(object x, object b, object y, bint tanh, bint fast, int n_threads):
    return gelu_flat(x, b, y, tanh, fast, n_threads)


cdef object table_row_normalize_nd(object X, object scale, object bias, object axis, object epsilon, bint center,
                                   bint one_type, bint y_follows_scale, int n_threads, bint want_mean,
                                   bint want_inv):
    return row_normalize_nd(X, scale, bias, axis, epsilon, center, one_type, y_follows_scale, n_threads,
                            want_mean, want_inv)


cdef void table_use_team_state(void* state) noexcept nogil:
    normops_budget_share(state)


cdef void table_forget_last_team() noexcept nogil:
    normops_team_note_region_end(-1)


cdef int table_loop_threads(int cap, long long chunks, long long chunk_elements, long long elements,
                            int family) noexcept nogil:
    cdef int n = normops_team_plan(cap, chunks, chunk_elements, elements, family)
    normops_plan_drop()
    return n


cdef int table_threads_in_use() noexcept nogil:
    return normops_budget_in_use()


cdef KernelTable TABLE
TABLE.softmax_direct = table_softmax_direct
TABLE.sigmoid_direct = table_sigmoid_direct
TABLE.row_divide = table_row_divide
TABLE.cum_direct = table_cum_direct
TABLE.gelu_flat = table_gelu_flat
TABLE.row_normalize_nd = table_row_normalize_nd
TABLE.figures_level = NORMOPS_THIS_LEVEL
TABLE.use_team_state = table_use_team_state
TABLE.forget_last_team = table_forget_last_team
TABLE.loop_threads = table_loop_threads
TABLE.threads_in_use = table_threads_in_use
KERNEL_TABLE = PyCapsule_New(&TABLE, KERNEL_TABLE_NAME, NULL)


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


cdef int outer_n_inner_check(Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner) except -1:
    """The outer x n x inner view of an axis kernel (ArgMax, CumSum, ...)."""
    if outer < 0 or n < 0 or inner < 0:
        raise ValueError("outer, n and inner must be >= 0")
    return 0


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
