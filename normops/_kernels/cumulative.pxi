# CumSum and CumProd (docs/specification.md §13; §14 for chunks).
#
# The front layer views the input as outer x n x inner (n: the extent of the
# axis) in a native, C-contiguous array. inner == 1 is the row layout (each
# line contiguous); otherwise the column layout: the inner lines of one
# outer index are contiguous and are processed side by side in tiles, one
# pass over the data. Every line is computed by one thread from start to
# end, and nothing is combined across chunks, so the thread count cannot
# change a result.

from libc.stdint cimport uint32_t, uint64_t

# CumSum adds and CumProd multiplies floats, or integers modulo 2^k: signed
# integers come as their unsigned view (the same bits for both operations,
# and no undefined signed overflow in C).
ctypedef fused cumT:
    float
    double
    uint32_t
    uint64_t

# The operation of a cumulative kernel, as a fused type of two empty tags:
# each operation gets its own compiled loops (no branch inside them) from
# the one implementation below. Call sites pass a NULL pointer of the tag.
cdef struct CumAdd:
    char unused
cdef struct CumMul:
    char unused

ctypedef fused cumOp:
    CumAdd
    CumMul

# Lines side by side in the column layout. They need no scratch per line
# (the previous output row is the running value), so their tiles are
# wider than ArgMax's: longer contiguous runs (measured).
cdef Py_ssize_t CUM_TILE = 4096
# Column chunks are narrowed (not below CUM_MIN_TILE lines) while there are
# fewer than CUM_FEW_TILES and one holds more than CUM_TILE_ELEMENTS
# elements: see cum_run.
cdef Py_ssize_t CUM_MIN_TILE = 1024
cdef Py_ssize_t CUM_TILE_ELEMENTS = 1 << 18
cdef Py_ssize_t CUM_FEW_TILES = 8
# Lines run this many side by side (independent chains).
cdef enum:
    CUM_SIDE_BY_SIDE = 4


cdef inline bint cum_is_nan(cumT v) noexcept nogil:
    if cumT is float or cumT is double:
        return v != v
    else:
        return False


cdef inline cumT cum_apply(cumT a, cumT b, cumOp* op) noexcept nogil:
    """One step of the running value: a + b (CumSum) or a * b (CumProd),
    one IEEE rounding (floats) or modulo 2^k (unsigned integers)."""
    if cumOp is CumAdd:
        return a + b
    else:
        return a * b


cdef inline cumT cum_identity(const cumT* like, cumOp* op) noexcept nogil:
    """The first output of an exclusive line: 0 (CumSum) or 1 (CumProd), in
    the type of *like (only its type is used)."""
    if cumOp is CumAdd:
        return 0
    else:
        return 1


cdef inline void cum_canonicalize(cumT* y, Py_ssize_t stride, Py_ssize_t n) noexcept nogil:
    """Every NaN of y[k * stride], k < n, becomes the canonical quiet NaN
    (its payload would depend on the operand order the compiler picked)."""
    cdef Py_ssize_t k
    if cumT is float or cumT is double:
        for k in range(n):
            y[k * stride] = canonical(y[k * stride], True)


cdef inline void cum_lines(const cumT* x, cumT* y, Py_ssize_t n, int count, bint exclusive,
                           bint reverse, cumOp* op) noexcept nogil:
    """count (1 or CUM_SIDE_BY_SIDE = 4, a constant at each call site)
    neighbouring contiguous lines of n >= 1 terms, side by side: each line
    is its own sequential chain of operations in accumulation order, in a
    named accumulator (kept in a register). Inclusive: acc = x[p0], then
    acc op x[p_k]; exclusive: acc = identity, then acc op x[p_(k-1)]. A NaN
    running value stays NaN to the end of its line (NaN + v and NaN * v are
    NaN), so a line whose last value is not NaN holds no NaN, and only the
    others are canonicalised, afterwards."""
    cdef Py_ssize_t step = -1 if reverse else 1
    cdef Py_ssize_t p = n - 1 if reverse else 0
    cdef Py_ssize_t lag = step if exclusive else 0, k, q
    cdef const cumT* x1 = x + n
    cdef const cumT* x2 = x + 2 * n
    cdef const cumT* x3 = x + 3 * n
    cdef cumT* y1 = y + n
    cdef cumT* y2 = y + 2 * n
    cdef cumT* y3 = y + 3 * n
    cdef cumT a0 = cum_identity(x, op), a1 = a0, a2 = a0, a3 = a0
    if not exclusive:
        a0 = x[p]
        if count == 4:
            a1 = x1[p]
            a2 = x2[p]
            a3 = x3[p]
    y[p] = a0
    if count == 4:
        y1[p] = a1
        y2[p] = a2
        y3[p] = a3
    for k in range(1, n):
        p += step
        q = p - lag
        a0 = cum_apply(a0, x[q], op)
        y[p] = a0
        if count == 4:
            a1 = cum_apply(a1, x1[q], op)
            y1[p] = a1
            a2 = cum_apply(a2, x2[q], op)
            y2[p] = a2
            a3 = cum_apply(a3, x3[q], op)
            y3[p] = a3
    if cum_is_nan(a0):
        cum_canonicalize(y, 1, n)
    if count == 4:
        if cum_is_nan(a1):
            cum_canonicalize(y1, 1, n)
        if cum_is_nan(a2):
            cum_canonicalize(y2, 1, n)
        if cum_is_nan(a3):
            cum_canonicalize(y3, 1, n)


cdef inline void cum_line_range(const cumT* x, cumT* y, Py_ssize_t n, Py_ssize_t r0, Py_ssize_t r1,
                                bint exclusive, bint reverse, cumOp* op) noexcept nogil:
    """Lines r0..r1: whole groups side by side (a constant count, so the
    accumulators stay in registers), then the rest one by one."""
    cdef Py_ssize_t r = r0
    while r + CUM_SIDE_BY_SIDE <= r1:
        cum_lines(x + r * n, y + r * n, n, CUM_SIDE_BY_SIDE, exclusive, reverse, op)
        r += CUM_SIDE_BY_SIDE
    while r < r1:
        cum_lines(x + r * n, y + r * n, n, 1, exclusive, reverse, op)
        r += 1


cdef inline void cum_tile(const cumT* x, cumT* y, Py_ssize_t n, Py_ssize_t inner, Py_ssize_t w,
                          bint exclusive, bint reverse, cumOp* op) noexcept nogil:
    """Column layout: w neighbouring lines x[i * inner + j] as contiguous
    vectors; the previous output row is the running value. Each line's
    chain is the same whatever w is. Lines whose last value is NaN are
    canonicalised afterwards (see cum_lines)."""
    cdef Py_ssize_t step = -1 if reverse else 1
    cdef Py_ssize_t p = n - 1 if reverse else 0
    cdef Py_ssize_t lag = step if exclusive else 0, k, j
    cdef cumT* first = y + p * inner
    cdef cumT* prev
    cdef cumT* cur = first
    cdef const cumT* src
    cdef cumT start = cum_identity(x, op)
    for j in range(w):
        cur[j] = start if exclusive else x[p * inner + j]
    for k in range(1, n):
        prev = cur
        p += step
        cur = y + p * inner
        src = x + (p - lag) * inner
        for j in range(w):
            cur[j] = cum_apply(prev[j], src[j], op)
    for j in range(w):
        if cum_is_nan(cur[j]):
            cum_canonicalize(first + j, step * inner, n)


cdef inline void cum_tiles(const cumT* x, cumT* y, Py_ssize_t n, Py_ssize_t inner, Py_ssize_t width,
                           Py_ssize_t u0, Py_ssize_t u1, bint exclusive, bint reverse,
                           cumOp* op) noexcept nogil:
    """Column layout: tiles u0..u1, in the order (outer index, column block
    of width lines)."""
    cdef Py_ssize_t tiles = (inner + width - 1) // width, u, o, j0
    for u in range(u0, u1):
        o = u // tiles
        j0 = (u % tiles) * width
        cum_tile(x + o * n * inner + j0, y + o * n * inner + j0, n, inner,
                 min(width, inner - j0), exclusive, reverse, op)


cdef void cum_run(const cumT* x, cumT* y, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner,
                  bint exclusive, bint reverse, int n_threads, cumOp* op) noexcept nogil:
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t units, per_chunk, chunks, c, width
    cdef int threads
    if inner == 1:
        # chunks hold whole groups of lines side by side
        per_chunk = max(1, REDUCE_CHUNK_ELEMENTS // n)
        per_chunk = (per_chunk + CUM_SIDE_BY_SIDE - 1) // CUM_SIDE_BY_SIDE * CUM_SIDE_BY_SIDE
        chunks = (outer + per_chunk - 1) // per_chunk
        threads = threads_for(n_threads, chunks, outer * n, NORMOPS_COST_SCAN_LINES)
        if threads <= 1:
            serial_begin()
            cum_line_range(x, y, n, 0, outer, exclusive, reverse, op)
            serial_end()
        else:
            threads = team_take(threads, n_threads)
            for c in prange(chunks, schedule="dynamic", num_threads=threads):
                normops_team_claims(claimed)
                cum_line_range(x, y, n, c * per_chunk, min((c + 1) * per_chunk, outer), exclusive, reverse, op)
            team_release(threads)
        return
    # Chunks: column tiles of CUM_TILE lines; while there are fewer than
    # CUM_FEW_TILES of them and one holds more than CUM_TILE_ELEMENTS
    # elements, they are narrowed (down to CUM_MIN_TILE lines), so that long
    # lines over a short outer extent still make several chunks. A function
    # of the shape only; and no width changes a bit (each line's chain is
    # the same), so one thread sweeps CUM_TILE-wide tiles: longer
    # contiguous runs (measured faster than the narrow tiles).
    width = min(CUM_TILE, inner)
    while (width > CUM_MIN_TILE and n * width > CUM_TILE_ELEMENTS
           and outer * ((inner + width - 1) // width) < CUM_FEW_TILES):
        width = max(CUM_MIN_TILE, width // 2)
    units = outer * ((inner + width - 1) // width)
    per_chunk = max(1, REDUCE_CHUNK_ELEMENTS // (n * width))
    chunks = (units + per_chunk - 1) // per_chunk
    threads = threads_for(n_threads, chunks, outer * n * inner, NORMOPS_COST_SCAN)
    if threads <= 1:
        width = min(CUM_TILE, inner)
        serial_begin()
        cum_tiles(x, y, n, inner, width, 0, outer * ((inner + width - 1) // width), exclusive, reverse, op)
        serial_end()
    else:
        threads = team_take(threads, n_threads)
        for c in prange(chunks, schedule="dynamic", num_threads=threads):
            normops_team_claims(claimed)
            cum_tiles(x, y, n, inner, width, c * per_chunk, min((c + 1) * per_chunk, units),
                      exclusive, reverse, op)
        team_release(threads)


cdef int cum_typed(int element, const void* px, void* py, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner,
                   bint exclusive, bint reverse, int n_threads, cumOp* op) noexcept nogil:
    """cum_run for one element type."""
    if element == ELEMENT_FLOAT32:
        cum_run(<const float*>px, <float*>py, outer, n, inner, exclusive, reverse, n_threads, op)
    elif element == ELEMENT_FLOAT64:
        cum_run(<const double*>px, <double*>py, outer, n, inner, exclusive, reverse, n_threads, op)
    elif element == ELEMENT_UINT32:
        cum_run(<const uint32_t*>px, <uint32_t*>py, outer, n, inner, exclusive, reverse, n_threads, op)
    elif element == ELEMENT_UINT64:
        cum_run(<const uint64_t*>px, <uint64_t*>py, outer, n, inner, exclusive, reverse, n_threads, op)
    else:
        return -1
    return 0


cdef int cumulate_loop(int element, const void* px, void* py, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner,
                       bint multiply, bint exclusive, bint reverse, int n_threads) noexcept nogil:
    """CumSum (CumProd when multiply) of the outer x n x inner array x along
    n into y, for the element types float32, float64, uint32 and uint64
    (signed integers as their unsigned view); -1 for any other. Its entry
    points, which check the arrays: cumulative_entry.pxi."""
    if multiply:
        return cum_typed(element, px, py, outer, n, inner, exclusive, reverse, n_threads, <CumMul*>NULL)
    return cum_typed(element, px, py, outer, n, inner, exclusive, reverse, n_threads, <CumAdd*>NULL)
