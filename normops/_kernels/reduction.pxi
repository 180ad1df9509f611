# The Reduce* accumulations (docs/specification.md §11). The
# loops are in reduction.h; here: chunks, threads, the long-reduction blocks,
# the finishing step on the per-output results (mean, sqrt, log, LogSumExp,
# the NaN rules). Their entry points: reduction_entry.pxi.

from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t

ctypedef fused reducible:
    float
    double
    int32_t
    uint32_t
    int64_t
    uint64_t


cdef extern from "reduction.h" nogil:
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

# Reduction chunks: max(1, REDUCE_CHUNK_ELEMENTS // work) units (docs/specification.md
# §11.3); a sequence of at least LONG_TERMS terms is cut into blocks of
# BLOCK_TERMS, reduced independently and then combined (§11.4). Both, and
# REDUCE_TILE, come from spec_constants.h (kernels.pxi).


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


cdef inline int reduce_family(int op) noexcept nogil:
    """The cost family of a reduction: a LogSumExp's element (an exp) costs
    5-10x a sum's, so it is timed and decided apart."""
    if op == NORMOPS_R_SUM_EXP:
        return NORMOPS_COST_REDUCE_EXP_EXACT
    if op == NORMOPS_R_SUM_EXP_FAST:
        return NORMOPS_COST_REDUCE_EXP_FAST
    return NORMOPS_COST_REDUCE


cdef void reduce_rows_chunked(const reducible* x, Py_ssize_t O, Py_ssize_t R, int op,
                              const reducible* center, reducible* out, int n_threads) noexcept nogil:
    """Row layout, R < LONG_TERMS: outputs in chunks of max(1, 32768 // R)."""
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t per = max(1, REDUCE_CHUNK_ELEMENTS // max(R, 1))
    cdef Py_ssize_t chunks = (O + per - 1) // per, first, last, claim, g
    cdef int threads = threads_for(n_threads, chunks, O * R, reduce_family(op))
    if threads <= 1:
        serial_begin()
        rows_run(x, O, R, op, center, out)
        serial_end()
        return
    # a claim is enough neighbouring chunks for products to run NORMOPS_PROD_SEQS rows side by side
    threads = team_take(threads, n_threads)
    claim = chunks_per_claim(chunks, (NORMOPS_PROD_SEQS + per - 1) // per, threads) * per
    for g in prange((O + claim - 1) // claim, schedule="dynamic", num_threads=threads):
        normops_team_claims(claimed)
        first = g * claim
        last = min(O, first + claim)
        rows_run(x + first * R, last - first, R, op, shifted(center, first), out + first)
    team_release(threads)


cdef void reduce_cols_chunked(const reducible* x, Py_ssize_t O, Py_ssize_t R, Py_ssize_t C, int op,
                              const reducible* center, reducible* out, int n_threads) noexcept nogil:
    """Column layout, R < LONG_TERMS: tiles of 256 outputs in chunks of
    max(1, 32768 // (R * tile width))."""
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t per_row = (C + REDUCE_TILE - 1) // REDUCE_TILE
    cdef Py_ssize_t tiles = O * per_row
    cdef Py_ssize_t per = max(1, REDUCE_CHUNK_ELEMENTS // max(R * min(C, REDUCE_TILE), 1))
    cdef Py_ssize_t chunks = (tiles + per - 1) // per, claim, g
    cdef Py_ssize_t span = NORMOPS_SPAN_BYTES // (REDUCE_TILE * <Py_ssize_t>sizeof(reducible))
    cdef int threads = threads_for(n_threads, chunks, O * R * C, reduce_family(op))
    if threads <= 1:
        serial_begin()
        cols_range(x, R, C, 0, tiles, per_row, op, center, out)
        serial_end()
        return
    # a claim is up to a span of neighbouring tiles, accumulated together
    threads = team_take(threads, n_threads)
    claim = chunks_per_claim(chunks, (span + per - 1) // per, threads) * per
    for g in prange((tiles + claim - 1) // claim, schedule="dynamic", num_threads=threads):
        normops_team_claims(claimed)
        cols_range(x, R, C, g * claim, min(tiles, (g + 1) * claim), per_row, op, center, out)
    team_release(threads)


cdef inline void cols_range(const reducible* x, Py_ssize_t R, Py_ssize_t C, Py_ssize_t t, Py_ssize_t end,
                            Py_ssize_t per_row, int op, const reducible* center, reducible* out) noexcept nogil:
    """Tiles t..end of the column layout (per_row tiles per outer index),
    up to NORMOPS_SPAN_BYTES of neighbouring outputs of one outer index at a time."""
    cdef Py_ssize_t o, c0, stop
    while t < end:
        o = t // per_row
        c0 = (t % per_row) * REDUCE_TILE
        stop = min(end, (o + 1) * per_row, t + NORMOPS_SPAN_BYTES // (REDUCE_TILE * <Py_ssize_t>sizeof(reducible)))
        cols_tile(x + o * R * C + c0, R, C, <int>(min(C, (stop - o * per_row) * REDUCE_TILE) - c0), op,
                  shifted(center, o * C + c0), out + o * C + c0, 1)
        t = stop


cdef void reduce_long(const reducible* x, Py_ssize_t O, Py_ssize_t R, Py_ssize_t C, int op,
                      const reducible* center, reducible* out, reducible* blocks,
                      int n_threads) noexcept nogil:
    """R >= LONG_TERMS (docs/specification.md §11.4): blocks of BLOCK_TERMS reduced
    tuples; blocks[k * nb + b] holds output k's block b; then each output
    combines its nb block results in block order. A unit is a column tile
    and one block, or in the row layout up to eight (products: NORMOPS_PROD_SEQS)
    neighbouring full blocks of one output, reduced side by side (each in
    its own order)."""
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t nb = (R + BLOCK_TERMS - 1) // BLOCK_TERMS, full = R // BLOCK_TERMS
    cdef Py_ssize_t per_row = (C + REDUCE_TILE - 1) // REDUCE_TILE
    # products run NORMOPS_PROD_SEQS blocks side by side (reduction.h, prod_seqs)
    cdef Py_ssize_t group = 1 if (C > 1 or op == NORMOPS_R_SUM_EXP or op == NORMOPS_R_SUM_EXP_FAST) else (
        NORMOPS_PROD_SEQS if op == NORMOPS_R_PROD else 8)
    cdef Py_ssize_t groups = (nb + group - 1) // group
    cdef Py_ssize_t units = O * per_row * groups, u, t, b, o, c0, k, n
    cdef int threads = team_take(threads_for(n_threads, units, O * R * C, reduce_family(op)), n_threads)
    for u in prange(units, schedule="dynamic", num_threads=threads):
        normops_team_claims(claimed)
        t = u // groups
        b = (u % groups) * group
        o = t // per_row
        c0 = (t % per_row) * REDUCE_TILE
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
                      <int>min(REDUCE_TILE, C - c0), op, shifted(center, k), blocks + k * nb + b, nb)
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


cdef int reduce_accumulate_loop(int element, const void* px, Py_ssize_t O, Py_ssize_t R, Py_ssize_t C, int op,
                                const void* pc, void* po, int n_threads) except -1 nogil:
    """out[o, c] = op over r < R of x[o, r, c] (the accumulation alone; its
    entry point, which checks the arrays: reduction_entry.pxi)."""
    if element == ELEMENT_FLOAT32:
        return reduce_dispatch[float](<const float*>px, O, R, C, op, <const float*>pc, <float*>po, n_threads)
    if element == ELEMENT_FLOAT64:
        return reduce_dispatch[double](<const double*>px, O, R, C, op, <const double*>pc, <double*>po, n_threads)
    if element == ELEMENT_INT32:
        return reduce_dispatch[int32_t](<const int32_t*>px, O, R, C, op, NULL, <int32_t*>po, n_threads)
    if element == ELEMENT_UINT32:
        return reduce_dispatch[uint32_t](<const uint32_t*>px, O, R, C, op, NULL, <uint32_t*>po, n_threads)
    if element == ELEMENT_INT64:
        return reduce_dispatch[int64_t](<const int64_t*>px, O, R, C, op, NULL, <int64_t*>po, n_threads)
    return reduce_dispatch[uint64_t](<const uint64_t*>px, O, R, C, op, NULL, <uint64_t*>po, n_threads)


# ------------------------------------------------------------ finishing
# The step after the accumulation, per output (docs/specification.md
# §11.5), one rounded operation each; then every NaN made the
# canonical quiet NaN (§4.5). Codes shared with normops/reduction.py.

from libc.math cimport sqrt

cdef extern from "transcendental.h" nogil:
    float normops_u2f(uint32_t u)
    double normops_u2d(uint64_t u)

# the finishing codes (FINISH_*): kernel_codes.h

ctypedef fused real:
    float
    double


cdef inline bint finite(real v) noexcept nogil:
    return v - v == 0  # inf - inf and NaN - NaN are NaN


cdef inline real quiet_nan(real like) noexcept nogil:
    if real is float:
        return normops_u2f(0x7FC00000u)
    else:
        return normops_u2d(0x7FF8000000000000u)


cdef inline void log_map(const real* x, real* y, Py_ssize_t n) noexcept nogil:
    """y = log(x), normops' own log32/log64 (transcendental.h)."""
    normops_tfunc_map(NORMOPS_T_LOG32 if real is float else NORMOPS_T_LOG64, x, y, n)


cdef int reduce_finished(const real* x, Py_ssize_t O, Py_ssize_t R, Py_ssize_t C, int op, int finishing,
                         real* out, int n_threads) except -1 nogil:
    """out (O * C) = the finished reduction of the contiguous O x R x C
    array x (R >= 1) by accumulation ``op``, NaN canonical."""
    cdef Py_ssize_t n = O * C, i, o, c
    cdef real* m = NULL
    cdef real* s
    cdef real count = <real>R
    cdef bint sum_exp = op == NORMOPS_R_SUM_EXP or op == NORMOPS_R_SUM_EXP_FAST
    if sum_exp or finishing == FINISH_LOG:
        m = <real*>malloc(2 * max(n, 1) * sizeof(real))
        if m == NULL:
            with gil:
                raise MemoryError()
    s = m + n if m != NULL else NULL
    try:  # reduce_dispatch may raise MemoryError: m is freed either way
        if sum_exp:
            # the terms are centred on the maximum (any NaN wins); an infinite
            # or NaN maximum centres on 0 and is itself the result
            reduce_dispatch(x, O, R, C, NORMOPS_R_MAX_NAN, <const real*>NULL, m, n_threads)
            for i in range(n):
                s[i] = m[i] if finite(m[i]) else 0
            reduce_dispatch(x, O, R, C, op, s, out, n_threads)
            log_map(out, s, n)
            for i in range(n):
                out[i] = m[i] + s[i] if finite(m[i]) else m[i]
        else:
            reduce_dispatch(x, O, R, C, op, <const real*>NULL, out, n_threads)
            if finishing == FINISH_MEAN:
                for i in range(n):
                    out[i] = out[i] / count
            elif finishing == FINISH_SQRT:
                for i in range(n):
                    out[i] = sqrt(out[i])
            elif finishing == FINISH_LOG:
                log_map(out, m, n)
                for i in range(n):
                    out[i] = m[i]
            elif finishing == FINISH_NAN_FIRST:
                for o in range(O):
                    for c in range(C):
                        if x[o * R * C + c] != x[o * R * C + c]:
                            out[o * C + c] = x[o * R * C + c]
    finally:
        free(m)
    for i in range(n):
        if out[i] != out[i]:
            out[i] = quiet_nan(out[i])
    return 0


cdef int finish_reduction(bint is_float32, const void* px, Py_ssize_t O, Py_ssize_t R, Py_ssize_t C, int op,
                          int finishing, void* po, int n_threads) except -1 nogil:
    """reduce_finished on float32 or float64 data (its entry points, which
    check the arrays: reduction_entry.pxi)."""
    if is_float32:
        return reduce_finished(<const float*>px, O, R, C, op, finishing, <float*>po, n_threads)
    return reduce_finished(<const double*>px, O, R, C, op, finishing, <double*>po, n_threads)
