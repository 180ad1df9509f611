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


cdef int cum_typed(int code, void* px, void* py, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner,
                   bint exclusive, bint reverse, int n_threads, cumOp* op) noexcept nogil:
    """cum_run for the element type code (0: float32, 1: float64, 2: uint32,
    3: uint64); -1 for any other code."""
    if code == 0:
        cum_run(<const float*>px, <float*>py, outer, n, inner, exclusive, reverse, n_threads, op)
    elif code == 1:
        cum_run(<const double*>px, <double*>py, outer, n, inner, exclusive, reverse, n_threads, op)
    elif code == 2:
        cum_run(<const uint32_t*>px, <uint32_t*>py, outer, n, inner, exclusive, reverse, n_threads, op)
    elif code == 3:
        cum_run(<const uint64_t*>px, <uint64_t*>py, outer, n, inner, exclusive, reverse, n_threads, op)
    else:
        return -1
    return 0


# ------------------------------------------------------------ entry points

def cumulate(x, y, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner, bint multiply, bint exclusive,
             bint reverse, int n_threads):
    """CumSum (CumProd when multiply) of the outer x n x inner array x along
    n into y (same dtype: float32, float64, uint32 or uint64; signed
    integers are passed as their unsigned view)."""
    outer_n_inner_check(outer, n, inner)
    if not isinstance(x, cnp.ndarray):
        raise TypeError("kernel argument 'x' must be an ndarray")
    cdef int t = cnp.PyArray_TYPE(<cnp.ndarray>x)
    check_array(x, t, shape_size(outer, n, inner), False, "x")
    check_array(y, t, shape_size(outer, n, inner), True, "y")
    cdef int code = {"f4": 0, "f8": 1, "u4": 2, "u8": 3}.get(x.dtype.kind + str(x.dtype.itemsize), -1)
    if code < 0:
        raise TypeError(f"cumulate does not take {x.dtype}")
    if outer * n * inner == 0:
        return
    cdef void* px = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* py = cnp.PyArray_DATA(<cnp.ndarray>y)
    with nogil:
        if multiply:
            cum_typed(code, px, py, outer, n, inner, exclusive, reverse, n_threads, <CumMul*>NULL)
        else:
            cum_typed(code, px, py, outer, n, inner, exclusive, reverse, n_threads, <CumAdd*>NULL)



# ------------------------------------------------------------ per-call routes
# One call from the front layer for the common case (see arg_reduce.pxi).

cpdef object cum_direct(object x, object axis, bint exclusive, bint reverse, bint multiply, int n_threads):
    """CumSum (CumProd when multiply) of a plain, non-empty x of rank >= 1
    along ``axis``: a Python int, a 0-d or one-element int32/int64 ndarray
    (ONNX's input), or None (the flattened array, as NumPy's cumsum)."""
    if not is_plain_float(x):
        return None
    cdef cnp.ndarray a = <cnp.ndarray>x
    cdef int nd = cnp.PyArray_NDIM(a), i, k, t
    cdef cnp.npy_intp* shape = cnp.PyArray_DIMS(a)
    cdef Py_ssize_t size = cnp.PyArray_SIZE(a), outer = 1, n, inner = 1
    cdef cnp.npy_intp flat = size
    cdef long v
    cdef cnp.ndarray y
    if nd == 0 or size == 0:
        return None
    if axis is None:
        n = size
        y = cnp.PyArray_EMPTY(1, &flat, cnp.PyArray_TYPE(a), 0) if nd != 1 else placed_like(a)
    else:
        if type(axis) is cnp.ndarray:
            t = cnp.PyArray_TYPE(<cnp.ndarray>axis)
            if (t != cnp.NPY_INT64 and t != cnp.NPY_INT32) or cnp.PyArray_NDIM(<cnp.ndarray>axis) > 1 \
                    or cnp.PyArray_SIZE(<cnp.ndarray>axis) != 1 or not cnp.PyArray_ISALIGNED(<cnp.ndarray>axis) \
                    or not cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>axis):
                return None
            if t == cnp.NPY_INT64:
                v = (<const int64_t*>cnp.PyArray_DATA(<cnp.ndarray>axis))[0]
            else:
                v = (<const int32_t*>cnp.PyArray_DATA(<cnp.ndarray>axis))[0]
            if not -nd <= v < nd:
                return None
            k = <int>(v + nd if v < 0 else v)
        else:
            k = plain_axis(axis, nd)
            if k < 0:
                return None
        n = shape[k]
        for i in range(nd):
            if i < k:
                outer *= shape[i]
            elif i > k:
                inner *= shape[i]
        y = placed_like(a)
    cdef void* px = cnp.PyArray_DATA(a)
    cdef void* py = cnp.PyArray_DATA(y)
    cdef int code = 0 if cnp.PyArray_TYPE(a) == cnp.NPY_FLOAT32 else 1
    cdef PyThreadState* saved = gil_release(outer * n * inner)
    if multiply:
        cum_typed(code, px, py, outer, n, inner, exclusive, reverse, n_threads, <CumMul*>NULL)
    else:
        cum_typed(code, px, py, outer, n, inner, exclusive, reverse, n_threads, <CumAdd*>NULL)
    gil_restore(saved)
    return y
