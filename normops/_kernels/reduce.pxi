# The Reduce* accumulations (seed spec, "Reductions"; decisions.md §6). The
# loops are in reduce.h; here: chunks, threads and the long-reduction blocks.
# Finishing (mean, sqrt, log, NaN rules) runs on the per-output results in
# normops/reference/_reduce.py (evaluate), shared by kernels and reference.

from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t

ctypedef fused reducible:
    float
    double
    int32_t
    uint32_t
    int64_t
    uint64_t


cdef extern from "reduce.h" nogil:
    cdef enum normops_reduce_op:
        NORMOPS_R_SUM
        NORMOPS_R_SUM_EXP
        NORMOPS_R_PROD
        NORMOPS_R_MAX
        NORMOPS_R_MIN
        NORMOPS_R_MAX_NAN
        NORMOPS_R_MIN_NAN
        NORMOPS_R_SUM_EXP_FAST
    const int NORMOPS_TILE
    const int NORMOPS_PROD_SEQS
    const int NORMOPS_SPAN_BYTES
    void normops_reduce_cols_float(const float* x, Py_ssize_t R, Py_ssize_t C, int w, int op,
                                   const float* center, float* out, Py_ssize_t out_stride)
    void normops_reduce_cols_double(const double* x, Py_ssize_t R, Py_ssize_t C, int w, int op,
                                    const double* center, double* out, Py_ssize_t out_stride)
    void normops_reduce_rows_float(const float* x, Py_ssize_t count, Py_ssize_t n, int op,
                                   const float* center, float* out)
    void normops_reduce_rows_double(const double* x, Py_ssize_t count, Py_ssize_t n, int op,
                                    const double* center, double* out)
    void normops_reduce_cols_int32_t(const int32_t* x, Py_ssize_t R, Py_ssize_t C, int w, int op,
                                 const int32_t* center, int32_t* out, Py_ssize_t out_stride)
    void normops_reduce_rows_int32_t(const int32_t* x, Py_ssize_t count, Py_ssize_t n, int op,
                                 const int32_t* center, int32_t* out)
    void normops_reduce_cols_uint32_t(const uint32_t* x, Py_ssize_t R, Py_ssize_t C, int w, int op,
                                 const uint32_t* center, uint32_t* out, Py_ssize_t out_stride)
    void normops_reduce_rows_uint32_t(const uint32_t* x, Py_ssize_t count, Py_ssize_t n, int op,
                                 const uint32_t* center, uint32_t* out)
    void normops_reduce_cols_int64_t(const int64_t* x, Py_ssize_t R, Py_ssize_t C, int w, int op,
                                 const int64_t* center, int64_t* out, Py_ssize_t out_stride)
    void normops_reduce_rows_int64_t(const int64_t* x, Py_ssize_t count, Py_ssize_t n, int op,
                                 const int64_t* center, int64_t* out)
    void normops_reduce_cols_uint64_t(const uint64_t* x, Py_ssize_t R, Py_ssize_t C, int w, int op,
                                 const uint64_t* center, uint64_t* out, Py_ssize_t out_stride)
    void normops_reduce_rows_uint64_t(const uint64_t* x, Py_ssize_t count, Py_ssize_t n, int op,
                                 const uint64_t* center, uint64_t* out)

# Reduction chunks: max(1, REDUCE_CHUNK_ELEMENTS // work) units (seed spec).
cdef Py_ssize_t REDUCE_CHUNK_ELEMENTS = 32768
# decisions.md §6: a sequence of at least LONG_TERMS terms is cut into
# blocks of BLOCK_TERMS, reduced independently and then combined.
cdef Py_ssize_t LONG_TERMS = 1 << 20
cdef Py_ssize_t BLOCK_TERMS = 1 << 16


cdef inline int combine_op(int op) noexcept nogil:
    """How block results combine: sums by Sum16, the rest by their own rule."""
    if op == NORMOPS_R_PROD or op == NORMOPS_R_MAX or op == NORMOPS_R_MIN \
            or op == NORMOPS_R_MAX_NAN or op == NORMOPS_R_MIN_NAN:
        return op
    return NORMOPS_R_SUM


cdef inline const reducible* shifted(const reducible* p, Py_ssize_t k) noexcept nogil:
    """p + k, or NULL when p is (center is only given for SUM_EXP)."""
    if p == NULL:
        return NULL
    return p + k


cdef inline void cols_tile(const reducible* x, Py_ssize_t R, Py_ssize_t C, int w, int op,
                           const reducible* center, reducible* out, Py_ssize_t out_stride) noexcept nogil:
    if reducible is float:
        normops_reduce_cols_float(x, R, C, w, op, center, out, out_stride)
    elif reducible is double:
        normops_reduce_cols_double(x, R, C, w, op, center, out, out_stride)
    elif reducible is int32_t:
        normops_reduce_cols_int32_t(x, R, C, w, op, center, out, out_stride)
    elif reducible is uint32_t:
        normops_reduce_cols_uint32_t(x, R, C, w, op, center, out, out_stride)
    elif reducible is int64_t:
        normops_reduce_cols_int64_t(x, R, C, w, op, center, out, out_stride)
    else:
        normops_reduce_cols_uint64_t(x, R, C, w, op, center, out, out_stride)


cdef inline void rows_run(const reducible* x, Py_ssize_t count, Py_ssize_t n, int op,
                          const reducible* center, reducible* out) noexcept nogil:
    if reducible is float:
        normops_reduce_rows_float(x, count, n, op, center, out)
    elif reducible is double:
        normops_reduce_rows_double(x, count, n, op, center, out)
    elif reducible is int32_t:
        normops_reduce_rows_int32_t(x, count, n, op, center, out)
    elif reducible is uint32_t:
        normops_reduce_rows_uint32_t(x, count, n, op, center, out)
    elif reducible is int64_t:
        normops_reduce_rows_int64_t(x, count, n, op, center, out)
    else:
        normops_reduce_rows_uint64_t(x, count, n, op, center, out)


cdef void reduce_rows_chunked(const reducible* x, Py_ssize_t O, Py_ssize_t R, int op,
                              const reducible* center, reducible* out, int n_threads) noexcept nogil:
    """Row layout, R < LONG_TERMS: outputs in chunks of max(1, 32768 // R)."""
    cdef Py_ssize_t per = max(1, REDUCE_CHUNK_ELEMENTS // max(R, 1))
    cdef Py_ssize_t chunks = (O + per - 1) // per, first, last, claim, g
    cdef int threads = threads_for(n_threads, chunks, O * R)
    if threads <= 1:
        rows_run(x, O, R, op, center, out)
        return
    # a claim is enough neighbouring chunks for products to run 16 rows side by side
    threads = team_take(threads, n_threads)
    claim = chunks_per_claim(chunks, (NORMOPS_PROD_SEQS + per - 1) // per, threads) * per
    for g in prange((O + claim - 1) // claim, schedule="dynamic", num_threads=threads):
        first = g * claim
        last = min(O, first + claim)
        rows_run(x + first * R, last - first, R, op, shifted(center, first), out + first)
    team_release(threads)


cdef void reduce_cols_chunked(const reducible* x, Py_ssize_t O, Py_ssize_t R, Py_ssize_t C, int op,
                              const reducible* center, reducible* out, int n_threads) noexcept nogil:
    """Column layout, R < LONG_TERMS: tiles of 256 outputs in chunks of
    max(1, 32768 // (R * tile width))."""
    cdef Py_ssize_t per_row = (C + NORMOPS_TILE - 1) // NORMOPS_TILE
    cdef Py_ssize_t tiles = O * per_row
    cdef Py_ssize_t per = max(1, REDUCE_CHUNK_ELEMENTS // max(R * min(C, NORMOPS_TILE), 1))
    cdef Py_ssize_t chunks = (tiles + per - 1) // per, claim, g
    cdef Py_ssize_t span = NORMOPS_SPAN_BYTES // (NORMOPS_TILE * <Py_ssize_t>sizeof(reducible))
    cdef int threads = threads_for(n_threads, chunks, O * R * C)
    if threads <= 1:
        cols_range(x, R, C, 0, tiles, per_row, op, center, out)
        return
    # a claim is up to a span of neighbouring tiles, accumulated together
    threads = team_take(threads, n_threads)
    claim = chunks_per_claim(chunks, (span + per - 1) // per, threads) * per
    for g in prange((tiles + claim - 1) // claim, schedule="dynamic", num_threads=threads):
        cols_range(x, R, C, g * claim, min(tiles, (g + 1) * claim), per_row, op, center, out)
    team_release(threads)


cdef inline void cols_range(const reducible* x, Py_ssize_t R, Py_ssize_t C, Py_ssize_t t, Py_ssize_t end,
                            Py_ssize_t per_row, int op, const reducible* center, reducible* out) noexcept nogil:
    """Tiles t..end of the column layout (per_row tiles per outer index),
    up to NORMOPS_SPAN_BYTES of neighbouring outputs of one outer index at a time."""
    cdef Py_ssize_t o, c0, stop
    while t < end:
        o = t // per_row
        c0 = (t % per_row) * NORMOPS_TILE
        stop = min(end, (o + 1) * per_row, t + NORMOPS_SPAN_BYTES // (NORMOPS_TILE * <Py_ssize_t>sizeof(reducible)))
        cols_tile(x + o * R * C + c0, R, C, <int>(min(C, (stop - o * per_row) * NORMOPS_TILE) - c0), op,
                  shifted(center, o * C + c0), out + o * C + c0, 1)
        t = stop


cdef void reduce_long(const reducible* x, Py_ssize_t O, Py_ssize_t R, Py_ssize_t C, int op,
                      const reducible* center, reducible* out, reducible* blocks,
                      int n_threads) noexcept nogil:
    """R >= LONG_TERMS (decisions.md §6): blocks of BLOCK_TERMS reduced
    tuples; blocks[k * nb + b] holds output k's block b; then each output
    combines its nb block results in block order. A unit is a column tile
    and one block, or in the row layout up to eight (products: sixteen)
    neighbouring full blocks of one output, reduced side by side (each in
    its own order)."""
    cdef Py_ssize_t nb = (R + BLOCK_TERMS - 1) // BLOCK_TERMS, full = R // BLOCK_TERMS
    cdef Py_ssize_t per_row = (C + NORMOPS_TILE - 1) // NORMOPS_TILE
    # products run NORMOPS_PROD_SEQS blocks side by side (reduce.h, prod_seqs)
    cdef Py_ssize_t group = 1 if (C > 1 or op == NORMOPS_R_SUM_EXP or op == NORMOPS_R_SUM_EXP_FAST) else (
        NORMOPS_PROD_SEQS if op == NORMOPS_R_PROD else 8)
    cdef Py_ssize_t groups = (nb + group - 1) // group
    cdef Py_ssize_t units = O * per_row * groups, u, t, b, o, c0, k, n
    cdef int threads = team_take(threads_for(n_threads, units, O * R * C), n_threads)
    for u in prange(units, schedule="dynamic", num_threads=threads):
        t = u // groups
        b = (u % groups) * group
        o = t // per_row
        c0 = (t % per_row) * NORMOPS_TILE
        k = o * C + c0
        if C == 1:
            n = min(b + group, full) - b  # full blocks of this unit, side by side
            if n > 0:
                rows_run(x + o * R + b * BLOCK_TERMS, n, BLOCK_TERMS, op, shifted(center, o), blocks + o * nb + b)
            else:  # the short last block
                rows_run(x + o * R + b * BLOCK_TERMS, 1, R - b * BLOCK_TERMS, op, shifted(center, o),
                         blocks + o * nb + b)
                n = 1
            if b + n < min(b + group, nb):  # a short last block after full ones
                rows_run(x + o * R + (b + n) * BLOCK_TERMS, 1, R - (b + n) * BLOCK_TERMS, op,
                         shifted(center, o), blocks + o * nb + b + n)
        else:
            cols_tile(x + o * R * C + b * BLOCK_TERMS * C + c0, min(BLOCK_TERMS, R - b * BLOCK_TERMS), C,
                      <int>min(NORMOPS_TILE, C - c0), op, shifted(center, k), blocks + k * nb + b, nb)
    team_release(threads)
    reduce_rows_chunked(blocks, O * C, nb, combine_op(op), <const reducible*>NULL, out, n_threads)


cdef int reduce_dispatch(const reducible* x, Py_ssize_t O, Py_ssize_t R, Py_ssize_t C, int op,
                         const reducible* center, reducible* out, int n_threads) except -1 nogil:
    cdef reducible* blocks
    if R >= LONG_TERMS:
        blocks = <reducible*>malloc(O * C * ((R + BLOCK_TERMS - 1) // BLOCK_TERMS) * sizeof(reducible))
        if blocks == NULL:
            with gil:
                raise MemoryError()
        reduce_long(x, O, R, C, op, center, out, blocks, n_threads)
        free(blocks)
    elif C == 1:
        reduce_rows_chunked(x, O, R, op, center, out, n_threads)
    else:
        reduce_cols_chunked(x, O, R, C, op, center, out, n_threads)
    return 0


# dtype (kind, itemsize) -> index into the dispatch of reduce_accumulate
_REDUCE_TYPES = {("f", 4): 0, ("f", 8): 1, ("i", 4): 4, ("u", 4): 5, ("i", 8): 6, ("u", 8): 7}


def reduce_accumulate(x, out, Py_ssize_t O, Py_ssize_t R, Py_ssize_t C, int op, center, int n_threads):
    """out[o, c] = op over r < R of x[o, r, c] for the contiguous array x of
    O * R * C elements (C == 1: the row layout; C > 1: the column layout).
    float32/float64: op 0 sum, 1 sum of |x|, 2 sum of squares, 3 sum of
    exp(x - center[o, c]), 4 product, 5 max, 6 min (both ignoring NaN),
    7 max, 8 min (any NaN wins), 9 the sum of op 3 with the fast
    flavour's exponential (float64: op 3). int32/uint32/int64/uint64: the
    same ops but 3 and 9, wrapping around. R must be >= 1."""
    if not isinstance(x, cnp.ndarray):
        raise TypeError("kernel argument 'x' must be an ndarray")
    kind = _REDUCE_TYPES.get((x.dtype.kind, x.dtype.itemsize))
    cdef bint sum_exp = op == NORMOPS_R_SUM_EXP or op == NORMOPS_R_SUM_EXP_FAST
    if kind is None or (kind >= 2 and sum_exp):
        raise TypeError(f"reduce_accumulate does not take dtype {x.dtype} with op {op}")
    cdef int t = cnp.PyArray_TYPE(<cnp.ndarray>x)
    if O < 0 or R < 1 or C < 1 or not 0 <= op <= 9:
        raise ValueError("reduce_accumulate needs O >= 0, R >= 1, C >= 1 and op in 0..9")
    check_array(x, t, shape_size(O, R, C), False, "x")
    check_array(out, t, shape_size(O, C), True, "out")
    if sum_exp:
        check_array(center, t, shape_size(O, C), False, "center")
    cdef void* px = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* po = cnp.PyArray_DATA(<cnp.ndarray>out)
    cdef void* pc = data_or_null(center) if sum_exp else NULL
    cdef int k = kind
    with nogil:
        if k == 0:
            reduce_dispatch[float](<const float*>px, O, R, C, op, <const float*>pc, <float*>po, n_threads)
        elif k == 1:
            reduce_dispatch[double](<const double*>px, O, R, C, op, <const double*>pc, <double*>po, n_threads)
        elif k == 4:
            reduce_dispatch[int32_t](<const int32_t*>px, O, R, C, op, NULL, <int32_t*>po, n_threads)
        elif k == 5:
            reduce_dispatch[uint32_t](<const uint32_t*>px, O, R, C, op, NULL, <uint32_t*>po, n_threads)
        elif k == 6:
            reduce_dispatch[int64_t](<const int64_t*>px, O, R, C, op, NULL, <int64_t*>po, n_threads)
        else:
            reduce_dispatch[uint64_t](<const uint64_t*>px, O, R, C, op, NULL, <uint64_t*>po, n_threads)
