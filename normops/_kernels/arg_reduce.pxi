# ArgMax / ArgMin (docs/specification.md §12; §14 for chunks).
#
# The front layer views the input as outer x n x inner (n: the extent of the
# axis) in a native, C-contiguous array. inner == 1 is the row layout (each
# sequence contiguous); otherwise the column layout: the inner outputs of one
# outer index are contiguous and are processed side by side in tiles, one
# pass over the data. Every output is computed by one thread from start to
# end, except sequences of at least LONG_TERMS terms, which are cut into
# blocks of BLOCK_TERMS (spec_constants.h, as the reductions' of §11.4)
# combined keeping the earliest winner: the same index a single scan
# gives. So the thread count cannot change a result.

from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

cdef extern from "arg_reduce.h" nogil:
    Py_ssize_t normops_argscan_f32(const float*, Py_ssize_t, int, int, int, float*, int*)
    Py_ssize_t normops_argscan_f64(const double*, Py_ssize_t, int, int, int, double*, int*)
    Py_ssize_t normops_argscan_i8(const int8_t*, Py_ssize_t, int, int, int, int8_t*, int*)
    Py_ssize_t normops_argscan_i16(const int16_t*, Py_ssize_t, int, int, int, int16_t*, int*)
    Py_ssize_t normops_argscan_i32(const int32_t*, Py_ssize_t, int, int, int, int32_t*, int*)
    Py_ssize_t normops_argscan_i64(const int64_t*, Py_ssize_t, int, int, int, int64_t*, int*)
    Py_ssize_t normops_argscan_u8(const uint8_t*, Py_ssize_t, int, int, int, uint8_t*, int*)
    Py_ssize_t normops_argscan_u16(const uint16_t*, Py_ssize_t, int, int, int, uint16_t*, int*)
    Py_ssize_t normops_argscan_u32(const uint32_t*, Py_ssize_t, int, int, int, uint32_t*, int*)
    Py_ssize_t normops_argscan_u64(const uint64_t*, Py_ssize_t, int, int, int, uint64_t*, int*)
    void normops_argscan4_f32(const float*, Py_ssize_t, Py_ssize_t, int, int, int, Py_ssize_t*, float*, int*)
    void normops_argscan4_f64(const double*, Py_ssize_t, Py_ssize_t, int, int, int, Py_ssize_t*, double*, int*)
    void normops_argscan4_i8(const int8_t*, Py_ssize_t, Py_ssize_t, int, int, int, Py_ssize_t*, int8_t*, int*)
    void normops_argscan4_i16(const int16_t*, Py_ssize_t, Py_ssize_t, int, int, int, Py_ssize_t*, int16_t*, int*)
    void normops_argscan4_i32(const int32_t*, Py_ssize_t, Py_ssize_t, int, int, int, Py_ssize_t*, int32_t*, int*)
    void normops_argscan4_i64(const int64_t*, Py_ssize_t, Py_ssize_t, int, int, int, Py_ssize_t*, int64_t*, int*)
    void normops_argscan4_u8(const uint8_t*, Py_ssize_t, Py_ssize_t, int, int, int, Py_ssize_t*, uint8_t*, int*)
    void normops_argscan4_u16(const uint16_t*, Py_ssize_t, Py_ssize_t, int, int, int, Py_ssize_t*, uint16_t*, int*)
    void normops_argscan4_u32(const uint32_t*, Py_ssize_t, Py_ssize_t, int, int, int, Py_ssize_t*, uint32_t*, int*)
    void normops_argscan4_u64(const uint64_t*, Py_ssize_t, Py_ssize_t, int, int, int, Py_ssize_t*, uint64_t*, int*)
    void normops_argtile_f32(const float*, Py_ssize_t, Py_ssize_t, Py_ssize_t, int, int, int, int, float*, int32_t*)
    void normops_argtile_f64(const double*, Py_ssize_t, Py_ssize_t, Py_ssize_t, int, int, int, int, double*, int64_t*)
    void normops_argtile_i32(const int32_t*, Py_ssize_t, Py_ssize_t, Py_ssize_t, int, int, int, int, int32_t*, int32_t*)
    void normops_argtile_i64(const int64_t*, Py_ssize_t, Py_ssize_t, Py_ssize_t, int, int, int, int, int64_t*, int64_t*)
    void normops_argtile_u32(const uint32_t*, Py_ssize_t, Py_ssize_t, Py_ssize_t, int, int, int, int, uint32_t*, int32_t*)
    void normops_argtile_u64(const uint64_t*, Py_ssize_t, Py_ssize_t, Py_ssize_t, int, int, int, int, uint64_t*, int64_t*)

ctypedef fused argT:
    float
    double
    int8_t
    int16_t
    int32_t
    int64_t
    uint8_t
    uint16_t
    uint32_t
    uint64_t

# Elements one chunk reads: max(1, REDUCE_CHUNK_ELEMENTS // work) units (the
# reductions' rule; spec_constants.h). Outputs side by side in the column layout:
cdef enum:
    COLUMN_TILE = 512


cdef inline bint is_nan(argT v) noexcept nogil:
    if argT is float or argT is double:
        return v != v
    else:
        return False


cdef inline Py_ssize_t argscan(const argT* x, Py_ssize_t n, bint is_min, bint last, bint find_nan,
                               argT* value, int* found_nan) noexcept nogil:
    """The vectorised scan of arg_reduce.h for argT (NaN ignored; see there)."""
    if argT is float:
        return normops_argscan_f32(x, n, is_min, last, find_nan, value, found_nan)
    elif argT is double:
        return normops_argscan_f64(x, n, is_min, last, find_nan, value, found_nan)
    elif argT is int8_t:
        return normops_argscan_i8(x, n, is_min, last, find_nan, value, found_nan)
    elif argT is int16_t:
        return normops_argscan_i16(x, n, is_min, last, find_nan, value, found_nan)
    elif argT is int32_t:
        return normops_argscan_i32(x, n, is_min, last, find_nan, value, found_nan)
    elif argT is int64_t:
        return normops_argscan_i64(x, n, is_min, last, find_nan, value, found_nan)
    elif argT is uint8_t:
        return normops_argscan_u8(x, n, is_min, last, find_nan, value, found_nan)
    elif argT is uint16_t:
        return normops_argscan_u16(x, n, is_min, last, find_nan, value, found_nan)
    elif argT is uint32_t:
        return normops_argscan_u32(x, n, is_min, last, find_nan, value, found_nan)
    else:
        return normops_argscan_u64(x, n, is_min, last, find_nan, value, found_nan)


cdef inline void argscan4(const argT* x, Py_ssize_t stride, Py_ssize_t n, bint is_min, bint last,
                          bint find_nan, Py_ssize_t* index, argT* value, int* found_nan) noexcept nogil:
    """argscan of the four sequences x + q * stride (q < 4, n >= 1 terms each)
    side by side, into index[q], value[q], found_nan[q]."""
    if argT is float:
        normops_argscan4_f32(x, stride, n, is_min, last, find_nan, index, value, found_nan)
    elif argT is double:
        normops_argscan4_f64(x, stride, n, is_min, last, find_nan, index, value, found_nan)
    elif argT is int8_t:
        normops_argscan4_i8(x, stride, n, is_min, last, find_nan, index, value, found_nan)
    elif argT is int16_t:
        normops_argscan4_i16(x, stride, n, is_min, last, find_nan, index, value, found_nan)
    elif argT is int32_t:
        normops_argscan4_i32(x, stride, n, is_min, last, find_nan, index, value, found_nan)
    elif argT is int64_t:
        normops_argscan4_i64(x, stride, n, is_min, last, find_nan, index, value, found_nan)
    elif argT is uint8_t:
        normops_argscan4_u8(x, stride, n, is_min, last, find_nan, index, value, found_nan)
    elif argT is uint16_t:
        normops_argscan4_u16(x, stride, n, is_min, last, find_nan, index, value, found_nan)
    elif argT is uint32_t:
        normops_argscan4_u32(x, stride, n, is_min, last, find_nan, index, value, found_nan)
    else:
        normops_argscan4_u64(x, stride, n, is_min, last, find_nan, index, value, found_nan)


cdef inline void arg_rows(const argT* x, int64_t* out, Py_ssize_t r0, Py_ssize_t r1, Py_ssize_t n,
                          bint is_min, bint last, bint find_nan) noexcept nogil:
    """out[r] for the contiguous rows r0 <= r < r1 of n >= 1 terms: four rows
    side by side (one memory stream each), the rest one by one. A row that
    starts with NaN gives 0 (nothing compares better than NaN)."""
    cdef Py_ssize_t index[4]
    cdef argT value[4]
    cdef int found[4]
    cdef Py_ssize_t r = r0, q
    while r + 4 <= r1:
        argscan4(x + r * n, n, n, is_min, last, find_nan, &index[0], &value[0], &found[0])
        for q in range(4):
            out[r + q] = 0 if is_nan(x[(r + q) * n]) else index[q]
        r += 4
    while r < r1:
        out[r] = arg_sequence(x + r * n, n, is_min, last, find_nan)
        r += 1


cdef inline int64_t arg_sequence(const argT* x, Py_ssize_t n, bint is_min, bint last,
                                 bint find_nan) noexcept nogil:
    """The index the scan gives for one contiguous sequence: 0 when it is
    empty or starts with NaN (the first element is also the first NaN)."""
    cdef argT value
    cdef int found_nan
    if n == 0 or is_nan(x[0]):
        return 0
    return argscan(x, n, is_min, last, find_nan, &value, &found_nan)


cdef inline void arg_blocks(const argT* x, Py_ssize_t n, Py_ssize_t u, bint is_min, bint last,
                            bint find_nan, argT* values, Py_ssize_t* index, int* nans) noexcept nogil:
    """Blocks 4u .. 4u + 3 of a long sequence (those that exist): four whole
    blocks side by side, else one by one (the last block may be shorter)."""
    cdef Py_ssize_t b = 4 * u, e = min(4 * u + 4, (n + BLOCK_TERMS - 1) // BLOCK_TERMS)
    if e - b == 4 and e * BLOCK_TERMS <= n:
        argscan4(x + b * BLOCK_TERMS, BLOCK_TERMS, BLOCK_TERMS, is_min, last, find_nan,
                 &index[b], &values[b], &nans[b])
        return
    while b < e:
        index[b] = argscan(x + b * BLOCK_TERMS, min(BLOCK_TERMS, n - b * BLOCK_TERMS),
                           is_min, last, find_nan, &values[b], &nans[b])
        b += 1


cdef int64_t arg_long(const argT* x, Py_ssize_t n, bint is_min, bint last, bint find_nan,
                      int n_threads, argT* values, Py_ssize_t* index, int* nans) noexcept nogil:
    """A sequence of at least LONG_TERMS terms: blocks of BLOCK_TERMS
    scanned (on any threads), then combined in block order keeping the
    earliest winner, which is the single scan's result. The scratch arrays
    hold one entry per block."""
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t blocks = (n + BLOCK_TERMS - 1) // BLOCK_TERMS, b, best_b = -1
    cdef Py_ssize_t quads = (blocks + 3) // 4
    cdef int threads
    cdef argT best
    if is_nan(x[0]):
        return 0
    threads = threads_for(n_threads, quads, n, NORMOPS_COST_REDUCE)
    if threads <= 1:
        serial_begin()
        for b in range(quads):
            arg_blocks(x, n, b, is_min, last, find_nan, values, index, nans)
        serial_end()
    else:
        threads = team_take(threads, n_threads)
        for b in prange(quads, schedule="dynamic", num_threads=threads):
            normops_team_claims(claimed)
            arg_blocks(x, n, b, is_min, last, find_nan, values, index, nans)
        team_release(threads)
    for b in range(blocks):
        if nans[b]:  # find_nan only: no NaN in the blocks before
            return b * BLOCK_TERMS + index[b]
        if index[b] < 0:  # all NaN: never a winner
            continue
        if (best_b < 0 or (values[b] < best if is_min else values[b] > best)
                or (last and values[b] == best)):
            best = values[b]
            best_b = b
    return best_b * BLOCK_TERMS + index[best_b]


ctypedef fused indexT:
    int32_t
    int64_t


cdef inline bint arg_tile_vector(const argT* x, indexT* index, argT* best, Py_ssize_t n,
                                 Py_ssize_t inner, Py_ssize_t w, bint is_min, bint last,
                                 bint find_nan, bint skip_nan) noexcept nogil:
    """arg_tile_scan on vectors (arg_reduce.h's normops_argtile) when argT has 4
    or 8 bytes and its index lanes (of the same width) hold n - 1: the
    indices are counted there and copied to index. False (nothing done)
    otherwise: 8- and 16-bit types and 4-byte sequences of 2^31 terms or more
    take the scalar loop."""
    cdef int32_t i32[COLUMN_TILE]
    cdef int64_t i64[COLUMN_TILE]
    cdef Py_ssize_t j
    if argT is float or argT is int32_t or argT is uint32_t:
        if n > 2147483647:
            return False
        if argT is float:
            normops_argtile_f32(x, n, inner, w, is_min, last, find_nan, skip_nan, best, &i32[0])
        elif argT is int32_t:
            normops_argtile_i32(x, n, inner, w, is_min, last, find_nan, skip_nan, best, &i32[0])
        else:
            normops_argtile_u32(x, n, inner, w, is_min, last, find_nan, skip_nan, best, &i32[0])
        for j in range(w):
            index[j] = <indexT>i32[j]
        return True
    elif argT is double or argT is int64_t or argT is uint64_t:
        if argT is double:
            normops_argtile_f64(x, n, inner, w, is_min, last, find_nan, skip_nan, best, &i64[0])
        elif argT is int64_t:
            normops_argtile_i64(x, n, inner, w, is_min, last, find_nan, skip_nan, best, &i64[0])
        else:
            normops_argtile_u64(x, n, inner, w, is_min, last, find_nan, skip_nan, best, &i64[0])
        for j in range(w):
            index[j] = <indexT>i64[j]
        return True
    else:
        return False


cdef inline void arg_tile_scan(const argT* x, indexT* index, argT* best, Py_ssize_t n,
                               Py_ssize_t inner, Py_ssize_t w, bint is_min, bint last,
                               bint find_nan, bint skip_nan) noexcept nogil:
    """The w neighbouring sequences x[i * inner + j], i < n (n >= 1), scanned
    side by side: best[j] and index[j] hold each one's running winner.
    skip_nan (a block after the first of a long sequence): a leading NaN is
    replaced by the first other value, so that the block's winner is its
    best non-NaN value (NaN only if every element is)."""
    cdef argT v, b
    cdef Py_ssize_t i, j
    cdef bint take
    cdef const argT* row
    if arg_tile_vector(x, index, best, n, inner, w, is_min, last, find_nan, skip_nan):
        return
    for j in range(w):
        best[j] = x[j]
        index[j] = 0
    for i in range(1, n):
        row = x + i * inner
        for j in range(w):
            v = row[j]
            b = best[j]
            if is_min:
                take = (v <= b) if last else (v < b)
            else:
                take = (v >= b) if last else (v > b)
            if find_nan:  # NumPy's rule: the first NaN wins
                take = take | (is_nan(v) & (not is_nan(b)))
            elif skip_nan:
                take = take | (is_nan(b) & (not is_nan(v)))
            best[j] = v if take else b
            index[j] = <indexT>i if take else index[j]


cdef inline void arg_tile(const argT* x, int64_t* out, Py_ssize_t n, Py_ssize_t inner,
                          Py_ssize_t w, bint is_min, bint last, bint find_nan) noexcept nogil:
    """Column layout: out[j] for w <= COLUMN_TILE neighbouring sequences.
    Indices are counted in 32 bits when they fit, so that they share the
    vector lanes of 32-bit data."""
    cdef argT best[COLUMN_TILE]
    cdef int32_t index[COLUMN_TILE]
    cdef Py_ssize_t j
    if n > 2147483647:
        arg_tile_scan(x, out, best, n, inner, w, is_min, last, find_nan, False)
        return
    arg_tile_scan(x, &index[0], best, n, inner, w, is_min, last, find_nan, False)
    for j in range(w):
        out[j] = index[j]


cdef void arg_long_columns(const argT* x, int64_t* out, Py_ssize_t outer, Py_ssize_t n,
                           Py_ssize_t inner, bint is_min, bint last, bint find_nan, int n_threads,
                           argT* values, int32_t* index) noexcept nogil:
    """Column layout, n >= LONG_TERMS (docs/specification.md §12): each tile is
    scanned in blocks of BLOCK_TERMS rows (units of one tile and one block, on
    any threads); block b of output k leaves its winner in values[b * K + k]
    and index[b * K + k] (K outputs). Then every output takes the scan's
    rule over its block winners in block order, which keeps the earliest
    winner: the single scan's index."""
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t blocks = (n + BLOCK_TERMS - 1) // BLOCK_TERMS
    cdef Py_ssize_t tiles = (inner + COLUMN_TILE - 1) // COLUMN_TILE
    cdef Py_ssize_t K = outer * inner, units = outer * tiles * blocks, u, t, b, o, j0, k
    cdef int threads = team_take(threads_for(n_threads, units, outer * n * inner, NORMOPS_COST_REDUCE), n_threads)
    cdef argT best, v
    cdef int64_t at
    cdef bint take
    for u in prange(units, schedule="dynamic", num_threads=threads):
        normops_team_claims(claimed)
        t = u // blocks
        b = u % blocks
        o = t // tiles
        j0 = (t % tiles) * COLUMN_TILE
        k = o * inner + j0
        if b == 0:  # the first block keeps the rule "a NaN first wins"
            arg_tile_scan(x + o * n * inner + j0, index + k, values + k, min(BLOCK_TERMS, n), inner,
                          min(COLUMN_TILE, inner - j0), is_min, last, find_nan, False)
        else:
            arg_tile_scan(x + o * n * inner + b * BLOCK_TERMS * inner + j0, index + b * K + k,
                          values + b * K + k, min(BLOCK_TERMS, n - b * BLOCK_TERMS), inner,
                          min(COLUMN_TILE, inner - j0), is_min, last, find_nan, True)
    team_release(threads)
    for k in range(K):
        best = values[k]
        at = index[k]
        for b in range(1, blocks):
            v = values[b * K + k]
            if is_min:
                take = (v <= best) if last else (v < best)
            else:
                take = (v >= best) if last else (v > best)
            if find_nan:
                take = take | (is_nan(v) & (not is_nan(best)))
            if take:
                best = v
                at = b * BLOCK_TERMS + index[b * K + k]
        out[k] = at


cdef void arg_run(const argT* x, int64_t* out, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner,
                  bint is_min, bint last, bint find_nan, int n_threads,
                  void* scratch) noexcept nogil:
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t tiles, units, per_chunk, chunks, c, u, r, j0, o
    cdef Py_ssize_t blocks = (n + BLOCK_TERMS - 1) // BLOCK_TERMS
    cdef int threads
    if n == 0:
        for r in range(outer * inner):
            out[r] = 0
        return
    if inner == 1 and n >= LONG_TERMS:
        for r in range(outer):
            out[r] = arg_long(x + r * n, n, is_min, last, find_nan, n_threads, <argT*>scratch,
                              <Py_ssize_t*>(<char*>scratch + 8 * blocks),
                              <int*>(<char*>scratch + 16 * blocks))
        return
    if n >= LONG_TERMS:
        arg_long_columns(x, out, outer, n, inner, is_min, last, find_nan, n_threads, <argT*>scratch,
                         <int32_t*>(<char*>scratch + 8 * blocks * outer * inner))
        return
    if inner == 1:
        per_chunk = max(1, REDUCE_CHUNK_ELEMENTS // n)
        chunks = (outer + per_chunk - 1) // per_chunk
        threads = threads_for(n_threads, chunks, outer * n, NORMOPS_COST_REDUCE)
        if threads <= 1:
            serial_begin()
            arg_rows(x, out, 0, outer, n, is_min, last, find_nan)
            serial_end()
        else:
            threads = team_take(threads, n_threads)
            for c in prange(chunks, schedule="dynamic", num_threads=threads):
                normops_team_claims(claimed)
                arg_rows(x, out, c * per_chunk, min((c + 1) * per_chunk, outer), n, is_min, last, find_nan)
            team_release(threads)
        return
    tiles = (inner + COLUMN_TILE - 1) // COLUMN_TILE
    units = outer * tiles
    per_chunk = max(1, REDUCE_CHUNK_ELEMENTS // (n * min(inner, COLUMN_TILE)))
    chunks = (units + per_chunk - 1) // per_chunk
    threads = threads_for(n_threads, chunks, outer * n * inner, NORMOPS_COST_REDUCE)
    if threads <= 1:
        serial_begin()
        for u in range(units):
            o = u // tiles
            j0 = (u % tiles) * COLUMN_TILE
            arg_tile(x + o * n * inner + j0, out + o * inner + j0, n, inner,
                     min(COLUMN_TILE, inner - j0), is_min, last, find_nan)
        serial_end()
    else:
        threads = team_take(threads, n_threads)
        for c in prange(chunks, schedule="dynamic", num_threads=threads):
            normops_team_claims(claimed)
            for u in range(c * per_chunk, min((c + 1) * per_chunk, units)):
                o = u // tiles
                j0 = (u % tiles) * COLUMN_TILE
                arg_tile(x + o * n * inner + j0, out + o * inner + j0, n, inner,
                         min(COLUMN_TILE, inner - j0), is_min, last, find_nan)
        team_release(threads)



cdef int arg_reduce_loop(int element, const void* px, int64_t* po, Py_ssize_t outer, Py_ssize_t n,
                         Py_ssize_t inner, bint is_min, bint last, bint find_nan, int n_threads) noexcept nogil:
    """ArgMax (ArgMin when is_min) of the outer x n x inner array x along n
    into out (outer x inner), for an element type of kernel_codes.h
    (find_nan: float32/float64 only); -1 when the blocks of a long
    sequence could not be had. Its entry points, which check the arrays:
    arg_reduce_entry.pxi."""
    cdef Py_ssize_t blocks = (n + BLOCK_TERMS - 1) // BLOCK_TERMS
    cdef void* scratch = NULL
    if n >= LONG_TERMS:
        # per block: value (<= 8 bytes), index and flag (row layout), or a
        # value and an int32 index per output (long column layout)
        scratch = malloc(blocks * (24 if inner <= 1 else max(24, 12 * outer * inner)))
        if scratch == NULL:
            return -1
    if element == ELEMENT_FLOAT32:
        arg_run(<const float*>px, po, outer, n, inner, is_min, last, find_nan, n_threads, scratch)
    elif element == ELEMENT_FLOAT64:
        arg_run(<const double*>px, po, outer, n, inner, is_min, last, find_nan, n_threads, scratch)
    elif element == ELEMENT_INT8:
        arg_run(<const int8_t*>px, po, outer, n, inner, is_min, last, False, n_threads, scratch)
    elif element == ELEMENT_INT16:
        arg_run(<const int16_t*>px, po, outer, n, inner, is_min, last, False, n_threads, scratch)
    elif element == ELEMENT_INT32:
        arg_run(<const int32_t*>px, po, outer, n, inner, is_min, last, False, n_threads, scratch)
    elif element == ELEMENT_INT64:
        arg_run(<const int64_t*>px, po, outer, n, inner, is_min, last, False, n_threads, scratch)
    elif element == ELEMENT_UINT8:
        arg_run(<const uint8_t*>px, po, outer, n, inner, is_min, last, False, n_threads, scratch)
    elif element == ELEMENT_UINT16:
        arg_run(<const uint16_t*>px, po, outer, n, inner, is_min, last, False, n_threads, scratch)
    elif element == ELEMENT_UINT32:
        arg_run(<const uint32_t*>px, po, outer, n, inner, is_min, last, False, n_threads, scratch)
    else:
        arg_run(<const uint64_t*>px, po, outer, n, inner, is_min, last, False, n_threads, scratch)
    free(scratch)
    return 0
