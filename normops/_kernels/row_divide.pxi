# MeanVarianceNormalization and LpNormalization: each row divided by one
# statistic of its own (docs/specification.md §8; how the kernel gets
# there: docs/exactness.md). Reuses Sum16 (sum16.pxi), and
# ieee_sqrt, canonical, row_chunk_threads from normalization*.pxi unchanged.

# RowDivisor (DIVIDE_BY_STD, _L1, _L2): kernel_table.pxd, which the routes share.


cdef inline void divide_row(const floating* x, floating* y, Py_ssize_t cols, int kind) noexcept nogil:
    """One row x -> y (x may be y: each element is read before written).

    STD: mean = Sum16(x) / n, s = sqrt(Sum16((x - mean)^2) / n),
         y = (x - mean) / s (no epsilon, as ONNX's formula and ORT's kernel).
    L1:  s = Sum16(|x|);  L2: s = sqrt(Sum16(x * x));  y = x / s, and
         y = +0 throughout when s == 0 (ONNX Runtime's zero-norm rule).
    Every NaN result is canonical.
    """
    cdef floating mean = 0, s = 0
    cdef floating n = <floating>cols
    cdef Py_ssize_t j
    if kind == DIVIDE_BY_STD:
        sum16_side_by_side(x, 0, 1, cols, NULL, NORMOPS_TERM_VALUE, &mean, NULL)
        mean = mean / n
        sum16_side_by_side(x, 0, 1, cols, &mean, NORMOPS_TERM_SQUARED_DEVIATION, &s, NULL)
        s = ieee_sqrt(s / n)
    elif kind == DIVIDE_BY_L1:
        sum16_side_by_side(x, 0, 1, cols, NULL, NORMOPS_TERM_ABSOLUTE, &s, NULL)
    else:
        # (x - 0) * (x - 0) is x * x bit for bit (sum16_side_by_side)
        sum16_side_by_side(x, 0, 1, cols, &mean, NORMOPS_TERM_SQUARED_DEVIATION, &s, NULL)
        s = ieee_sqrt(s)
    if kind != DIVIDE_BY_STD and s == 0:
        for j in range(cols):
            y[j] = 0
        return
    # x - 0 == x for every x (-0 included): Lp divides x itself
    for j in range(cols):
        y[j] = canonical((x[j] - mean) / s, True)


cdef void divide_rows(
    const void* x, Storage x_storage, void* y, Py_ssize_t row_begin, Py_ssize_t row_end,
    Py_ssize_t cols, int kind, float* scratch,
) noexcept nogil:
    """Rows [row_begin, row_end); float16/bfloat16 rows are widened exactly
    into ``scratch`` (cols floats), computed in float32, rounded once back."""
    cdef Py_ssize_t r
    for r in range(row_begin, row_end):
        if x_storage == STORE_FLOAT64:
            divide_row[double](<const double*>x + r * cols, <double*>y + r * cols, cols, kind)
        elif x_storage == STORE_FLOAT32:
            divide_row[float](<const float*>x + r * cols, <float*>y + r * cols, cols, kind)
        else:
            widen_rows(x, x_storage, r * cols, scratch, cols)
            divide_row[float](scratch, scratch, cols, kind)
            narrow_rows(scratch, y, x_storage, r * cols, cols)


cdef int row_divide_loop(const void* px, Storage storage, void* py, Py_ssize_t rows, Py_ssize_t cols, int kind,
                         int n_threads) noexcept nogil:
    """y[r, :] = row r of the rows x cols matrix x divided by its statistic
    (kind: RowDivisor, kernel_table.pxd), x and y of one storage (float16
    and bfloat16 computed in float32). Rows go in chunks of
    max(1, 16384 // cols) rows, one chunk per task; a row is never split,
    so the bits never depend on the threads. -1 when the scratch rows
    could not be had. Its entry point, which checks the arrays:
    row_divide_entry.pxi."""
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t per_chunk = max(1, ROW_CHUNK_ELEMENTS // cols)
    cdef Py_ssize_t chunks = (rows + per_chunk - 1) // per_chunk, c
    cdef int threads = row_chunk_threads(n_threads, rows, cols)
    cdef float* scratch = NULL
    if storage == STORE_FLOAT16 or storage == STORE_BFLOAT16:
        scratch = <float*>malloc(max(threads, 1) * cols * sizeof(float))
        if scratch == NULL:
            return -1
    if threads <= 1:
        serial_begin()
        divide_rows(px, storage, py, 0, rows, cols, kind, scratch)
        serial_end()
    else:
        threads = team_take(threads, n_threads)
        for c in prange(chunks, schedule="dynamic", num_threads=threads):
            normops_team_claims(claimed)
            divide_rows(px, storage, py, c * per_chunk, min((c + 1) * per_chunk, rows), cols, kind,
                        NULL if scratch == NULL else scratch + omp_get_thread_num() * cols)
        team_release(threads)
    free(scratch)
    return 0


# ------------------------------------------- LpNormalization along columns
#
# LpNormalization along an axis that is not last: x is (outer, n, inner)
# with inner > 1, and each row of the specification is a column x[a, :, b].
# Instead of moving the axis last in a scratch copy and back, columns are
# taken side by side: a span of neighbouring columns keeps sixteen partial
# sums per column (partial i % 16 takes term i, in increasing i: Sum16's
# step 2 for each column), folds them as Sum16 does (8, 4, 2, 1), then
# divides the span. Every column gets the bits of the row code.

# Columns per span: the 16 partial rows of a span fill at most 16 KiB.
DEF LP_SPAN_BYTES = 1024


cdef void lp_span(const floating* x, floating* y, Py_ssize_t n, Py_ssize_t inner, Py_ssize_t w,
                  int kind, floating* partials) noexcept nogil:
    """Columns 0..w-1 of x (n rows, row stride inner) into y; partials holds
    16 * w elements."""
    cdef Py_ssize_t i, j
    cdef floating* q
    cdef const floating* row
    cdef floating* out
    cdef floating s, v
    for j in range(16 * w):
        partials[j] = 0
    for i in range(n):
        q = partials + (i & 15) * w
        row = x + i * inner
        if kind == DIVIDE_BY_L1:
            for j in range(w):
                q[j] = q[j] + abs(row[j])
        else:
            for j in range(w):
                q[j] = q[j] + row[j] * row[j]
    # Sum16's fold, in place: t + (t + 8), then t + (t + 4), then
    # (0 + 2) + (1 + 3); the norm of column j ends in partials[j]
    for i in range(8):
        for j in range(w):
            partials[i * w + j] = partials[i * w + j] + partials[(i + 8) * w + j]
    for i in range(4):
        for j in range(w):
            partials[i * w + j] = partials[i * w + j] + partials[(i + 4) * w + j]
    for i in range(2):
        for j in range(w):
            partials[i * w + j] = partials[i * w + j] + partials[(i + 2) * w + j]
    for j in range(w):
        s = partials[j] + partials[w + j]
        partials[j] = ieee_sqrt(s) if kind == DIVIDE_BY_L2 else s
    for i in range(n):
        row = x + i * inner
        out = y + i * inner
        for j in range(w):
            s = partials[j]
            v = row[j] / s
            # a zero norm gives +0 throughout (the row code's rule)
            out[j] = 0 if s == 0 else canonical(v, True)


cdef void lp_columns_range(const floating* x, floating* y, Py_ssize_t n, Py_ssize_t inner,
                           Py_ssize_t first, Py_ssize_t last, int kind, floating* partials) noexcept nogil:
    """Columns first..last-1 (column c is b = c % inner of slab a = c // inner),
    in spans that stay within one slab."""
    cdef Py_ssize_t span = LP_SPAN_BYTES // sizeof(floating), a, b, w
    while first < last:
        a = first // inner
        b = first % inner
        w = min(span, inner - b, last - first)
        lp_span(x + a * n * inner + b, y + a * n * inner + b, n, inner, w, kind, partials)
        first += w


cdef int lp_columns_loop(const void* px, void* py, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner, int kind,
                         bint is_float32, int n_threads) noexcept nogil:
    """LpNormalization (kind DIVIDE_BY_L1 or DIVIDE_BY_L2) of each column
    x[a, :, b] of the (outer, n, inner) float32/float64 array x into y.
    Columns go in chunks of max(1, 16384 // n), claimed by the threads a
    few neighbouring chunks at a time; the bits never depend on the
    threads. -1 when the partial sums could not be had. Its entry point:
    row_divide_entry.pxi."""
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t columns = outer * inner
    cdef Py_ssize_t per_chunk = max(1, ROW_CHUNK_ELEMENTS // n)
    cdef Py_ssize_t chunks = (columns + per_chunk - 1) // per_chunk
    cdef int threads = row_chunk_threads(n_threads, columns, n)
    cdef Py_ssize_t claim, g
    cdef Py_ssize_t itemsize = 4 if is_float32 else 8
    cdef char* partials = <char*>malloc(max(threads, 1) * 16 * LP_SPAN_BYTES)
    if partials == NULL:
        return -1
    if threads <= 1:
        serial_begin()
        if is_float32:
            lp_columns_range[float](<const float*>px, <float*>py, n, inner, 0, columns, kind, <float*>partials)
        else:
            lp_columns_range[double](<const double*>px, <double*>py, n, inner, 0, columns, kind,
                                     <double*>partials)
        serial_end()
    else:
        # a claim is up to a span of neighbouring columns, taken together
        threads = team_take(threads, n_threads)
        claim = chunks_per_claim(chunks, (LP_SPAN_BYTES // itemsize + per_chunk - 1) // per_chunk,
                                 threads) * per_chunk
        for g in prange((columns + claim - 1) // claim, schedule="dynamic", num_threads=threads):
            normops_team_claims(claimed)
            if is_float32:
                lp_columns_range[float](<const float*>px, <float*>py, n, inner, g * claim,
                                        min(columns, (g + 1) * claim), kind,
                                        <float*>(partials + omp_get_thread_num() * 16 * LP_SPAN_BYTES))
            else:
                lp_columns_range[double](<const double*>px, <double*>py, n, inner, g * claim,
                                         min(columns, (g + 1) * claim), kind,
                                         <double*>(partials + omp_get_thread_num() * 16 * LP_SPAN_BYTES))
        team_release(threads)
    free(partials)
    return 0


# ------------------------------------------------- Sum16 of rows (var, std)
#
# The two sums of normops.var and normops.std (docs/specification.md §16.2):
# Sum16 of each row, or Sum16 of the squared deviations from a centre per
# row, each (x - c) and its square rounded separately (the terms of
# divide_row above). A row is summed whole by one thread (four rows side by
# side, each in its own order), so the bits never depend on the threads.


cdef void row_sums_range(const floating* x, Py_ssize_t first, Py_ssize_t last, Py_ssize_t cols,
                         const floating* center, floating* out) noexcept nogil:
    """out[r] for rows first..last-1 (center NULL: the values)."""
    cdef Py_ssize_t r = first
    cdef int term = NORMOPS_TERM_VALUE if center == NULL else NORMOPS_TERM_SQUARED_DEVIATION
    cdef const floating* c = NULL
    while r < last:
        if center != NULL:
            c = center + r
        if r + 4 <= last:
            sum16_side_by_side(x + r * cols, cols, 4, cols, c, term, out + r, NULL)
            r += 4
        else:
            sum16_side_by_side(x + r * cols, cols, 1, cols, c, term, out + r, NULL)
            r += 1


cdef void row_sums16_loop(const void* px, void* po, Py_ssize_t rows, Py_ssize_t cols, const void* pc,
                          bint is_float32, int n_threads) noexcept nogil:
    """out[r] = Sum16 over j of x[r, j] (center NULL), or of the separately
    rounded (x[r, j] - center[r]) * (x[r, j] - center[r]), for the
    float32/float64 rows x cols matrix x. Rows go in chunks of
    max(1, 16384 // cols) rows; a row is never split. Its entry point:
    row_divide_entry.pxi."""
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t per_chunk = max(1, ROW_CHUNK_ELEMENTS // cols)
    cdef Py_ssize_t chunks = (rows + per_chunk - 1) // per_chunk, c
    cdef int threads = row_chunk_threads(n_threads, rows, cols)
    if threads <= 1:
        serial_begin()
        if is_float32:
            row_sums_range[float](<const float*>px, 0, rows, cols, <const float*>pc, <float*>po)
        else:
            row_sums_range[double](<const double*>px, 0, rows, cols, <const double*>pc, <double*>po)
        serial_end()
        return
    threads = team_take(threads, n_threads)
    for c in prange(chunks, schedule="dynamic", num_threads=threads):
        normops_team_claims(claimed)
        if is_float32:
            row_sums_range[float](<const float*>px, c * per_chunk, min((c + 1) * per_chunk, rows), cols,
                                  <const float*>pc, <float*>po)
        else:
            row_sums_range[double](<const double*>px, c * per_chunk, min((c + 1) * per_chunk, rows), cols,
                                   <const double*>pc, <double*>po)
    team_release(threads)
