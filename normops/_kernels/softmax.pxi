# Softmax, LogSoftmax and Hardmax over rows (docs/specification.md §9).
# The front layer has already laid
# the normalised axis out as the contiguous rows of a rows x cols matrix.

from libc.string cimport memcpy, memset

cdef enum SoftmaxKind:
    KIND_SOFTMAX
    KIND_LOG_SOFTMAX
    KIND_HARDMAX


cdef extern from "rowmax.h" nogil:
    float normops_row_max_plain_float(const float* x, Py_ssize_t n)
    double normops_row_max_plain_double(const double* x, Py_ssize_t n)

cdef extern from "softmax_steps.h" nogil:
    float normops_exp32_fast_shifted_sum16(const float* x, float shift, float* e, float* d, Py_ssize_t n,
                                           int keep, const float* next, float* next_max, float row_min,
                                           float* next_min)
    float normops_exp32_shifted_sum16(const float* x, float shift, float* e, float* d, Py_ssize_t n,
                                      int keep, const float* next, float* next_max, float row_min,
                                      float* next_min)
    void normops_divide_float_array(const float* e, float s, float* y, Py_ssize_t n)
    float normops_row_pass_finishing(const float* x, float shift, float* row, Py_ssize_t n, int exact,
                                     const float* next, float* next_max, float* prev, float prev_by,
                                     int prev_op, float row_min, float* next_min)
    int normops_finishes_in_pass(int exact, int op)
    void normops_finish_row(float* y, float by, Py_ssize_t n, int op)
    int NORMOPS_LAST_DIVIDE
    int NORMOPS_LAST_MULTIPLY
    int NORMOPS_LAST_SUBTRACT
    void normops_scale_float(const float* e, float r, float* y, Py_ssize_t n, int stream)
    void normops_subtract_float(float* y, float log_s, Py_ssize_t n)
    void normops_stream_fence()
    void normops_sigmoid_float(const float* x, float* y, Py_ssize_t n, int fast, int stream)
    int normops_softmax_short_rows(const float* x, float* y, Py_ssize_t first, Py_ssize_t last,
                                   Py_ssize_t cols, int log_softmax, int fast)

# Float32 outputs of at least this many bytes take streaming stores in their
# last pass (softmax_steps.h, section 3). Off by default: on the machine
# measured (a 260 MB L3 cache) plain stores were as fast or faster in
# repeated calls, up to 1.3x on 64 MB outputs, and leave the output in the
# cache for the next operation (docs/performance-analysis.md).
cdef Py_ssize_t STREAM_FROM_BYTES = (<Py_ssize_t>1) << 62


cdef void hardmax_row(const floating* x, floating* y, Py_ssize_t n) noexcept nogil:
    """1 at the first maximum, 0 elsewhere; a row holding NaN is all 0: the
    ArgMax scan (arg_reduce.h) that stops at a NaN, in vectors where a row
    maximum and a search for it took twice as long."""
    cdef int has_nan = 0
    cdef floating m
    cdef Py_ssize_t first_max = argscan(x, n, False, False, True, &m, &has_nan)
    memset(y, 0, n * sizeof(floating))  # after the scan: y may be x
    if not has_nan:
        y[first_max] = 1


# Rows go through in groups: the sums of a group's rows first, then their
# scalars (LogSoftmax's log32 of the sums as one vector call, the fast
# Softmax's reciprocals), then their last passes. Short rows thus overlap
# each other's latencies instead of paying them one after the other; a
# group holds at most GROUP_ELEMENTS elements, so its rows are still in the
# L1 cache for the last pass.
DEF MAX_GROUP_ROWS = 16
# short rows take sixteen-row folds (softmax_steps.h, 3b); off only to
# compare with the row-at-a-time code in tests
cdef bint SHORT_ROWS_ON = True
# Softmax and LogSoftmax finish a row (divide, scale or subtract) inside the
# next row's pass where the level has that code (softmax_steps.h, 1c); off
# only to compare in tests and bench
cdef bint DIVIDE_IN_PASS_ON = True
# LogSoftmax's rows finish in the next row's pass from this width: shorter
# rows gain more from grouping their log32 calls (bench/softmax_divide_in_pass.py:
# 256 columns 1.03x/1.10x exact/fast in the pass, 512 0.97x/1.03x, 1024 0.93x/0.94x)
DEF LOG_IN_PASS_COLS = 1024
cdef Py_ssize_t GROUP_ELEMENTS = 1024
cdef Py_ssize_t LOG_GROUP_ELEMENTS = 4096


cdef inline Py_ssize_t group_rows(Py_ssize_t cols, SoftmaxKind kind) noexcept nogil:
    cdef Py_ssize_t budget = LOG_GROUP_ELEMENTS if kind == KIND_LOG_SOFTMAX else GROUP_ELEMENTS
    return max(1, min(MAX_GROUP_ROWS, budget // cols))


cdef inline Py_ssize_t scratch_rows(Py_ssize_t cols, SoftmaxKind kind, bint stream) noexcept nogil:
    """Rows of scratch per thread: LogSoftmax only sums its exponentials (one
    row, reused), a streaming Softmax keeps a group's, the others none."""
    if kind == KIND_LOG_SOFTMAX:
        return 1
    if kind == KIND_SOFTMAX and stream:
        return group_rows(cols, kind)
    return 0


cdef inline int softmax_family(SoftmaxKind kind, bint fast, bint is_float32) noexcept nogil:
    """The cost family of a Softmax, LogSoftmax or Hardmax element."""
    if kind == KIND_HARDMAX:
        return NORMOPS_COST_ROWS
    return NORMOPS_COST_SOFTMAX_FAST if fast and is_float32 else NORMOPS_COST_SOFTMAX_EXACT


cdef floating softmax_row_sum(const floating* x, floating* e, floating* d, Py_ssize_t n, bint fast,
                              bint keep, const floating* next, floating* row_max, floating* row_min,
                              floating* m_out) noexcept nogil:
    """Steps 1-4 of one Softmax or LogSoftmax row: the maximum into m_out,
    the exponentials e[j] (n elements; kept there if keep, else e may be
    overwritten or left alone) and their sum, returned (NaN for a NaN row).
    d (or NULL; LogSoftmax's y row) receives the differences x[j] - m, so
    that the last pass finishes in place, on lines already in the cache.
    next (or NULL) is the row that follows, read while this one computes.
    row_max: in, this row's maximum if already known, else NaN; out, the
    next row's maximum if this row's pass found it, else NaN (the maximum
    is exact in any order, so where it is computed does not matter).
    row_min likewise with the minimum, which the float32 passes use (an
    exponential's range test they can skip) and find at AVX-512 and AVX2.

    A row holding NaN or +inf, or only -inf, is NaN throughout. The maximum
    m ignores NaN, so +inf and only -inf show in m, and a NaN shows in the
    sum of exponentials (exp of NaN - m is NaN; nothing else makes a NaN:
    every other x[j] - m is finite or -inf)."""
    cdef floating m, s, lo = row_min[0]
    cdef Py_ssize_t j
    m = row_max[0]
    row_max[0] = <floating>NAN
    row_min[0] = <floating>NAN
    if m != m:
        if floating is float:
            m = normops_row_max_plain_float(x, n)
        else:
            m = normops_row_max_plain_double(x, n)
    m_out[0] = m
    if m == INFINITY or m == -INFINITY:
        return <floating>NAN
    if floating is float:
        # e[j] = exp32(x[j] - m), the difference rounded first, and their
        # sum in one pass (every x[j] - m is <= 0 or NaN)
        if fast:
            return normops_exp32_fast_shifted_sum16(x, m, e, d, n, keep, next, row_max, lo, row_min)
        return normops_exp32_shifted_sum16(x, m, e, d, n, keep, next, row_max, lo, row_min)
    else:  # float64 has one exponential in both flavours
        for j in range(n):
            e[j] = x[j] - m
        if d != NULL:
            memcpy(d, e, n * sizeof(double))
        normops_exp64_array(e, e, n)
        return sum16(e, n)


cdef void softmax_row_last(floating* y, floating* e, Py_ssize_t n, SoftmaxKind kind, bint fast,
                           bint stream, floating s, floating t) noexcept nogil:
    """Step 5 of one row from its sum s and t (LogSoftmax: log s; fast
    Softmax: 1 / s); e: the exponentials (Softmax; may be y); LogSoftmax's y
    holds x[j] - m already. stream: y takes streaming stores (fast float32
    Softmax)."""
    cdef Py_ssize_t j
    if s != s:
        for j in range(n):
            y[j] = <floating>NAN
    elif kind == KIND_LOG_SOFTMAX:
        if floating is float:
            normops_subtract_float(y, t, n)
        else:
            for j in range(n):
                y[j] = y[j] - t
    elif fast:
        if floating is float:
            normops_scale_float(e, t, y, n, stream)
        else:
            for j in range(n):
                y[j] = e[j] * t
    elif floating is float:
        normops_divide_float_array(e, s, y, n)  # the bits of e[j] / s
    else:
        for j in range(n):
            y[j] = e[j] / s  # one division per element, no reciprocal


cdef inline int last_op(SoftmaxKind kind, bint fast) noexcept nogil:
    """How a float32 row's last pass finishes it (softmax_steps.h, 1c)."""
    if kind == KIND_LOG_SOFTMAX:
        return NORMOPS_LAST_SUBTRACT
    return NORMOPS_LAST_MULTIPLY if fast else NORMOPS_LAST_DIVIDE


cdef void rows_finished_in_pass(const float* x, float* y, Py_ssize_t first, Py_ssize_t last,
                                Py_ssize_t cols, SoftmaxKind kind, bint fast) noexcept nogil:
    """Rows first..last-1 of the float32 Softmax or LogSoftmax, each row's
    last pass (Softmax: the division by its sum, fast the product by
    RN(1 / sum); LogSoftmax: the difference minus log32(sum)) run inside
    the next row's pass (softmax_steps.h, 1c); the steps and their bits are
    softmax_row_sum's and softmax_row_last's. pending: a row in y waiting
    for its last pass (its exponentials, or LogSoftmax's differences),
    pending_by the operand of that pass."""
    cdef float carried = <float>NAN, carried_min = <float>NAN
    cdef float m, s, lo, pending_by = 0
    cdef float* pending = NULL
    cdef float* row
    cdef const float* next
    cdef Py_ssize_t r, j
    cdef int op = last_op(kind, fast)
    cdef bint log_softmax = kind == KIND_LOG_SOFTMAX
    for r in range(first, last):
        row = y + r * cols
        next = x + (r + 1) * cols if r + 1 < last else NULL
        m, lo = carried, carried_min
        carried = carried_min = <float>NAN
        if m != m:
            m = normops_row_max_plain_float(x + r * cols, cols)
        if m == INFINITY or m == -INFINITY:
            s = <float>NAN  # step 1: a NaN row, no exponentials
        else:
            # LogSoftmax keeps the differences in its row, Softmax the exponentials
            s = normops_row_pass_finishing(x + r * cols, m, row, cols, not fast, next, &carried, pending,
                                           pending_by, op, lo, &carried_min)
            pending = NULL
        if pending != NULL:  # this row made no pass: the waiting row on its own
            normops_finish_row(pending, pending_by, cols, op)
            pending = NULL
        if s != s:
            for j in range(cols):
                row[j] = <float>NAN
        else:
            pending = row
            if log_softmax:
                normops_log32_array(&s, &pending_by, 1)
            else:
                pending_by = (<float>1) / s if fast else s
    if pending != NULL:
        normops_finish_row(pending, pending_by, cols, op)


cdef void softmax_chunk(const floating* x, floating* y, floating* scratch, Py_ssize_t first,
                        Py_ssize_t last, Py_ssize_t cols, SoftmaxKind kind, bint fast,
                        bint stream) noexcept nogil:
    """Rows first..last-1 on the calling thread; scratch holds
    scratch_rows(cols, kind, stream) rows."""
    cdef Py_ssize_t r, i, k, g = group_rows(cols, kind)
    # row i of a group keeps its exponentials at e_step * i in scratch
    cdef Py_ssize_t e_step = 0 if kind == KIND_LOG_SOFTMAX else cols
    cdef bint log_softmax = kind == KIND_LOG_SOFTMAX
    cdef floating carried = <floating>NAN, carried_min = <floating>NAN
    cdef floating m[MAX_GROUP_ROWS]
    cdef floating s[MAX_GROUP_ROWS]
    cdef floating t[MAX_GROUP_ROWS]
    # Softmax keeps the exponentials in y (their stores overlap the
    # arithmetic, and the last pass then works in the cache), or in scratch
    # when streaming (y is then written once, by the last pass); LogSoftmax
    # only sums them, and keeps the differences in y for the same reason
    cdef bint in_y = kind == KIND_SOFTMAX and not stream
    if kind == KIND_HARDMAX:
        for r in range(first, last):
            hardmax_row(x + r * cols, y + r * cols, cols)
        return
    if floating is float:
        if cols == 1 and not fast:
            # rows of one element (a column of a 1 x n input): the steps give
            # exp32(x - x) = exp32(+0) = 1 exactly, then 1 / 1 = 1 or
            # +0 - log32(1) = +0; NaN, +inf and -inf make a NaN row (step 1)
            for r in range(first, last):
                if x[r] - x[r] == 0:
                    y[r] = 1 if kind == KIND_SOFTMAX else 0
                else:
                    y[r] = <floating>NAN
            return
        # short rows, sixteen at a time where the level has that code
        if (not stream and SHORT_ROWS_ON
                and normops_softmax_short_rows(x, y, first, last, cols, log_softmax, fast)):
            return
        if (DIVIDE_IN_PASS_ON and not stream
                and (kind == KIND_SOFTMAX or (kind == KIND_LOG_SOFTMAX and cols >= LOG_IN_PASS_COLS))
                and normops_finishes_in_pass(not fast, last_op(kind, fast))):
            rows_finished_in_pass(x, y, first, last, cols, kind, fast)
            return
    r = first
    while r < last:
        k = min(g, last - r)
        for i in range(k):
            s[i] = softmax_row_sum(x + (r + i) * cols, y + (r + i) * cols if in_y else scratch + i * e_step,
                                   y + (r + i) * cols if log_softmax else NULL, cols, fast, kind == KIND_SOFTMAX,
                                   x + (r + i + 1) * cols if r + i + 1 < last else NULL, &carried, &carried_min,
                                   &m[i])
        if log_softmax:
            if floating is float:
                normops_log32_array(s, t, k)
            else:
                normops_log64_array(s, t, k)
        elif fast:
            for i in range(k):
                t[i] = (<floating>1) / s[i]
        for i in range(k):
            softmax_row_last(y + (r + i) * cols, y + (r + i) * cols if in_y else scratch + i * e_step,
                             cols, kind, fast, stream, s[i], t[i])
        r += k
    if stream:
        normops_stream_fence()


cdef void softmax_chunks(const floating* x, floating* y, floating* scratch,
                         Py_ssize_t rows, Py_ssize_t cols, SoftmaxKind kind, bint fast,
                         bint stream, int threads, int requested) noexcept nogil:
    """Rows in chunks of max(1, 16384 // cols), one chunk per task; scratch
    holds scratch_rows(cols, kind, stream) rows per thread. Rows are independent: the bits
    never depend on the threads."""
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t per_chunk = max(1, ROW_CHUNK_ELEMENTS // cols)
    cdef Py_ssize_t chunks = (rows + per_chunk - 1) // per_chunk
    cdef Py_ssize_t c
    # a team of one (also the budget's share while other calls run) takes
    # the rows as one range: chunks would cut the row-to-row pipeline
    cdef int taken = team_take(threads, requested) if threads > 1 else 0
    if taken <= 1:
        serial_begin()
        softmax_chunk(x, y, scratch, 0, rows, cols, kind, fast, stream)
        serial_end()
    else:
        for c in prange(chunks, schedule="dynamic", num_threads=taken):
            normops_team_claims(claimed)
            softmax_chunk(x, y, scratch + omp_get_thread_num() * scratch_rows(cols, kind, stream) * cols,
                          c * per_chunk,
                          min((c + 1) * per_chunk, rows), cols, kind, fast, stream)
    if taken:
        team_release(taken)


cdef void softmax_stored_chunk(const void* x, void* y, Storage storage, float* wide, float* scratch,
                               Py_ssize_t first, Py_ssize_t last, Py_ssize_t cols, SoftmaxKind kind,
                               bint fast) noexcept nogil:
    """Rows first..last-1 of float16/bfloat16 rows: widened exactly into
    wide, the float32 algorithm in place there, each result rounded once
    into y (docs/specification.md §4.2)."""
    cdef Py_ssize_t n = (last - first) * cols
    widen_rows(x, storage, first * cols, wide, n)
    softmax_chunk[float](wide, wide, scratch, 0, last - first, cols, kind, fast, False)
    narrow_rows(wide, y, storage, first * cols, n)


cdef void softmax_stored_chunks(const void* x, void* y, Storage storage, float* wide, float* scratch,
                                Py_ssize_t rows, Py_ssize_t cols, SoftmaxKind kind, bint fast,
                                int threads, int requested) noexcept nogil:
    """softmax_chunks for float16/bfloat16 storage; wide holds a chunk's
    rows per thread."""
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t per_chunk = max(1, ROW_CHUNK_ELEMENTS // cols)
    cdef Py_ssize_t chunks = (rows + per_chunk - 1) // per_chunk
    cdef Py_ssize_t c, tid
    if threads <= 1:
        serial_begin()
        for c in range(chunks):
            softmax_stored_chunk(x, y, storage, wide, scratch, c * per_chunk, min((c + 1) * per_chunk, rows),
                                 cols, kind, fast)
        serial_end()
        return
    threads = team_take(threads, requested)
    for c in prange(chunks, schedule="dynamic", num_threads=threads):
        normops_team_claims(claimed)
        tid = omp_get_thread_num()
        softmax_stored_chunk(x, y, storage, wide + tid * per_chunk * cols,
                             scratch + tid * scratch_rows(cols, kind, False) * cols,
                             c * per_chunk, min((c + 1) * per_chunk, rows), cols, kind, fast)
    team_release(threads)


cdef int softmax_rows_loop(const void* px, void* py, Storage storage, Py_ssize_t rows, Py_ssize_t cols, int kind,
                           bint fast, int n_threads) noexcept nogil:
    """Softmax (kind 0), LogSoftmax (1) or Hardmax (2) over each row of the
    rows x cols matrix x into y, of one storage; -1 when the scratch rows
    could not be had. Its entry points, which check the arrays:
    softmax_entry.pxi."""
    cdef Py_ssize_t per_chunk = max(1, ROW_CHUNK_ELEMENTS // cols)
    cdef int threads = threads_for_chunks(n_threads, (rows + per_chunk - 1) // per_chunk, per_chunk * cols,
                                          rows * cols, softmax_family(<SoftmaxKind>kind, fast,
                                                                      storage != STORE_FLOAT64))
    cdef Py_ssize_t itemsize = 8 if storage == STORE_FLOAT64 else 4
    cdef bint narrow = storage == STORE_FLOAT16 or storage == STORE_BFLOAT16
    # only the fast Softmax's last pass streams: the exact one's is the
    # division, LogSoftmax's works in place (both stay in the cache)
    cdef bint stream = (storage == STORE_FLOAT32 and rows * cols * itemsize >= STREAM_FROM_BYTES
                        and kind == KIND_SOFTMAX and fast)
    # Softmax and Hardmax work in y, LogSoftmax and a streaming Softmax in scratch
    cdef void* scratch = malloc(max(1, max(threads, 1) * scratch_rows(cols, <SoftmaxKind>kind, stream)
                                       * cols * itemsize))
    cdef float* wide = NULL
    if narrow and scratch != NULL:
        wide = <float*>malloc(max(threads, 1) * min(per_chunk, rows) * cols * sizeof(float))
    if scratch == NULL or (narrow and wide == NULL):
        free(scratch)
        return -1
    if narrow:
        softmax_stored_chunks(px, py, storage, wide, <float*>scratch, rows, cols, <SoftmaxKind>kind,
                              fast, threads, n_threads)
    elif storage == STORE_FLOAT32:
        softmax_chunks[float](<const float*>px, <float*>py, <float*>scratch, rows, cols,
                              <SoftmaxKind>kind, fast, stream, threads, n_threads)
    else:
        softmax_chunks[double](<const double*>px, <double*>py, <double*>scratch, rows, cols,
                               <SoftmaxKind>kind, fast, stream, threads, n_threads)
    free(wide)
    free(scratch)
    return 0


# ------------------------------------------- along an axis that is not last

# Columns gathered into rows at a time: a block of rows x COLUMN_BLOCK
# is read row by row (contiguous runs), computed by the row code above and
# scattered back, so each column gets exactly the row algorithm's bits.
DEF COLUMN_BLOCK = 16


cdef inline Py_ssize_t column_stride(Py_ssize_t n, Py_ssize_t itemsize) noexcept nogil:
    """Elements from one buffer row to the next: n, or n + 16 when rows of
    n would start 4 KiB apart (or a multiple): the gather and the scatter
    touch the sixteen rows element by element, and lines 4 KiB apart share
    one L1 cache set (n = 1024 took 1.7x the time of moving the axis)."""
    return n + 16 if (n * itemsize) % 4096 == 0 else n


cdef void softmax_column_blocks(const floating* x, floating* y, floating* buf, Py_ssize_t first,
                                Py_ssize_t last, Py_ssize_t n, Py_ssize_t inner, SoftmaxKind kind,
                                bint fast) noexcept nogil:
    """Blocks first..last-1 of x viewed as outer x n x inner, each block up
    to COLUMN_BLOCK neighbouring columns (inner positions) of one outer
    index; buf holds (2 * COLUMN_BLOCK + scratch_rows(n, kind, False)) *
    column_stride(n, sizeof(floating)) elements."""
    cdef Py_ssize_t per = (inner + COLUMN_BLOCK - 1) // COLUMN_BLOCK
    cdef Py_ssize_t u, o, c0, w, i, j
    cdef Py_ssize_t ld = column_stride(n, sizeof(floating))
    cdef floating* rows_in = buf
    cdef floating* rows_out = buf + COLUMN_BLOCK * ld
    cdef floating* scratch = buf + 2 * COLUMN_BLOCK * ld
    cdef const floating* src
    cdef floating* dst
    for u in range(first, last):
        o = u // per
        c0 = (u % per) * COLUMN_BLOCK
        w = min(<Py_ssize_t>COLUMN_BLOCK, inner - c0)
        src = x + o * n * inner + c0
        for i in range(n):
            for j in range(w):
                rows_in[j * ld + i] = src[i * inner + j]
        if ld == n:
            softmax_chunk(rows_in, rows_out, scratch, 0, w, n, kind, fast, False)
        else:  # rows of 1024 and more go one at a time in softmax_chunk anyway
            for j in range(w):
                softmax_chunk(rows_in + j * ld, rows_out + j * ld, scratch, 0, 1, n, kind, fast, False)
        dst = y + o * n * inner + c0
        for i in range(n):
            for j in range(w):
                dst[i * inner + j] = rows_out[j * ld + i]


cdef int softmax_columns_loop(const void* px, void* py, bint is_float32, Py_ssize_t outer, Py_ssize_t n,
                              Py_ssize_t inner, int kind, bint fast, int n_threads) noexcept nogil:
    """Softmax (kind 0), LogSoftmax (1) or Hardmax (2) along the middle axis
    of x viewed as outer x n x inner (inner > 1) into y; each column gets
    the bits the row code gives it (the same steps, in the same order). -1
    when the blocks' buffers could not be had. Its entry point:
    softmax_entry.pxi."""
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t blocks = outer * ((inner + COLUMN_BLOCK - 1) // COLUMN_BLOCK)
    cdef Py_ssize_t per_chunk = max(1, ROW_CHUNK_ELEMENTS // (n * COLUMN_BLOCK))
    cdef Py_ssize_t chunks = (blocks + per_chunk - 1) // per_chunk
    cdef int threads = threads_for_chunks(n_threads, chunks, per_chunk * n * COLUMN_BLOCK, outer * n * inner,
                                          softmax_family(<SoftmaxKind>kind, fast, is_float32))
    cdef Py_ssize_t itemsize = 4 if is_float32 else 8
    cdef Py_ssize_t per_thread = ((2 * COLUMN_BLOCK + scratch_rows(n, <SoftmaxKind>kind, False))
                                  * column_stride(n, itemsize))
    cdef void* buf = malloc(max(1, max(threads, 1) * per_thread * itemsize))
    cdef Py_ssize_t c
    if buf == NULL:
        return -1
    if threads <= 1:
        serial_begin()
        if is_float32:
            softmax_column_blocks[float](<const float*>px, <float*>py, <float*>buf, 0, blocks, n, inner,
                                         <SoftmaxKind>kind, fast)
        else:
            softmax_column_blocks[double](<const double*>px, <double*>py, <double*>buf, 0, blocks, n, inner,
                                          <SoftmaxKind>kind, fast)
        serial_end()
    else:
        threads = team_take(threads, n_threads)
        for c in prange(chunks, schedule="dynamic", num_threads=threads):
            normops_team_claims(claimed)
            if is_float32:
                softmax_column_blocks[float](<const float*>px, <float*>py,
                                             <float*>buf + omp_get_thread_num() * per_thread,
                                             c * per_chunk, min((c + 1) * per_chunk, blocks), n, inner,
                                             <SoftmaxKind>kind, fast)
            else:
                softmax_column_blocks[double](<const double*>px, <double*>py,
                                              <double*>buf + omp_get_thread_num() * per_thread,
                                              c * per_chunk, min((c + 1) * per_chunk, blocks), n, inner,
                                              <SoftmaxKind>kind, fast)
        team_release(threads)
    free(buf)
    return 0
