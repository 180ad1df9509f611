# Kernel sources shared by every ISA build (isa_*.pyx include this file).
#
# A build holds only noexcept nogil loops on pointers and sizes, offered
# through one table (KernelTable, filled at the end of this file). Their
# entry points, which take the ndarrays, check them and place the outputs,
# are in the routes module (routes.pyx, the <family>_entry.pxi files),
# compiled once.

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
from normops._kernels.kernel_table cimport *  # the table, its codes and layouts


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


# ----------------------------------------------------------------- the table
# The routes module (routes.pyx), compiled once, calls a build's loops
# through it (kernel_table.pxd says what each entry does).

cdef void table_divide_float(const float* e, float s, float* out, Py_ssize_t n) noexcept nogil:
    normops_divide_float_array(e, s, out, n)


cdef void table_function_map(int which, const char* x, char* y, Py_ssize_t n, Py_ssize_t itemsize,
                             int n_threads) noexcept nogil:
    if (which & ~NORMOPS_T_SCALAR) < NORMOPS_T_ERF32:
        map_chunks(which, x, y, n, itemsize, n_threads)
    else:
        elementwise_chunks(EW_ETFUNC, x, NULL, n, y, n, itemsize, which, False, n_threads)


cdef void table_function_pairs(int which, const float* x, double* hi, double* lo, Py_ssize_t n) noexcept nogil:
    normops_tfunc_pairs(which, x, hi, lo, n)


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


cdef Py_ssize_t table_tune(int knob, Py_ssize_t value) noexcept nogil:
    """Set one of the build's tuning knobs (kernel_table.pxd); the old value."""
    global STREAM_FROM_BYTES, SHORT_ROWS_ON, DIVIDE_IN_PASS_ON, GROUP_ELEMENTS, LOG_GROUP_ELEMENTS
    global APPLY_IN_CACHE_BYTES, SIDE_BY_SIDE_BYTES, TRANSPOSE_TILE
    cdef Py_ssize_t old
    if knob == KNOB_STREAM_FROM_BYTES:
        old, STREAM_FROM_BYTES = STREAM_FROM_BYTES, value
    elif knob == KNOB_SOFTMAX_SHORT_ROWS:
        old, SHORT_ROWS_ON = SHORT_ROWS_ON, value != 0
    elif knob == KNOB_SOFTMAX_DIVIDE_IN_PASS:
        old, DIVIDE_IN_PASS_ON = DIVIDE_IN_PASS_ON, value != 0
    elif knob == KNOB_SOFTMAX_GROUP_ELEMENTS:
        old, GROUP_ELEMENTS = GROUP_ELEMENTS, value
    elif knob == KNOB_LOG_SOFTMAX_GROUP_ELEMENTS:
        old, LOG_GROUP_ELEMENTS = LOG_GROUP_ELEMENTS, value
    elif knob == KNOB_APPLY_IN_CACHE_BYTES:
        old, APPLY_IN_CACHE_BYTES = APPLY_IN_CACHE_BYTES, value
    elif knob == KNOB_SIDE_BY_SIDE_BYTES:
        old, SIDE_BY_SIDE_BYTES = SIDE_BY_SIDE_BYTES, value
    elif knob == KNOB_TRANSPOSE_TILE:
        old, TRANSPOSE_TILE = TRANSPOSE_TILE, value
    else:
        old = -1
    return old


cdef KernelTable TABLE
TABLE.softmax_rows = softmax_rows_loop
TABLE.softmax_columns = softmax_columns_loop
TABLE.divide_float = table_divide_float
TABLE.sigmoid = sigmoid_loop
TABLE.row_divide = row_divide_loop
TABLE.lp_columns = lp_columns_loop
TABLE.row_sums16 = row_sums16_loop
TABLE.cumulate = cumulate_loop
TABLE.arg_reduce = arg_reduce_loop
TABLE.reduce_accumulate = reduce_accumulate_loop
TABLE.reduce_finish = finish_reduction
TABLE.reduce_where = where_dispatch
TABLE.variance = variance_dispatch
TABLE.gelu = gelu_loop
TABLE.row_normalize = row_normalize_loop
TABLE.batch_training = batch_training_loop
TABLE.function_map = table_function_map
TABLE.function_pairs = table_function_pairs
TABLE.function_range = range_chunks
TABLE.has_long_double_reference = NORMOPS_HAVE_LONG_DOUBLE_REFERENCE
TABLE.reference_range = reference_chunks
TABLE.swap_blocks = swap_blocks_loop
TABLE.sum16_rows = sum16_rows_loop
TABLE.tune = table_tune
TABLE.figures_level = NORMOPS_THIS_LEVEL
TABLE.use_team_state = table_use_team_state
TABLE.forget_last_team = table_forget_last_team
TABLE.loop_threads = table_loop_threads
TABLE.threads_in_use = table_threads_in_use
KERNEL_TABLE = PyCapsule_New(&TABLE, KERNEL_TABLE_NAME, NULL)


