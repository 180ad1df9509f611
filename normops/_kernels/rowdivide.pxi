# MeanVarianceNormalization and LpNormalization: each row divided by one
# statistic of its own (decisions.md §5, "same machinery"; the arithmetic
# is documented in docs/exactness.md). Reuses Sum16 (sum16.pxi), and
# ieee_sqrt, canonical, row_chunk_threads from rownorm*.pxi unchanged.

cdef enum RowDivisor:
    DIVIDE_BY_STD = 0   # MeanVarianceNormalization
    DIVIDE_BY_L1 = 1    # LpNormalization p=1
    DIVIDE_BY_L2 = 2    # LpNormalization p=2


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


def row_divide(x, y, Py_ssize_t rows, Py_ssize_t cols, int kind, int n_threads):
    """y[r, :] = row r of the rows x cols matrix x divided by its statistic
    (kind 0: MeanVarianceNormalization, 1: L1, 2: L2 LpNormalization).

    x and y are C-contiguous, of one dtype: float32, float64, float16 or
    bfloat16 (the last two computed in float32). Rows go in chunks of
    max(1, 16384 // cols) rows, one chunk per task; a row is never split,
    so the bits never depend on the threads.
    """
    cdef Storage xs = storage_of(x, "x"), ys = storage_of(y, "y")
    cdef Py_ssize_t per_chunk, chunks, c
    cdef int threads
    cdef float* scratch = NULL
    if rows < 0 or cols < 1:
        raise ValueError("row_divide needs rows >= 0 and cols >= 1")
    if kind < DIVIDE_BY_STD or kind > DIVIDE_BY_L2:
        raise ValueError(f"row_divide: unknown kind {kind}")
    if xs != ys:
        raise TypeError("row_divide: x and y need one dtype")
    check_array(x, cnp.PyArray_TYPE(<cnp.ndarray>x), rows * cols, False, "x")
    check_array(y, cnp.PyArray_TYPE(<cnp.ndarray>y), rows * cols, True, "y")
    cdef const void* px = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* py = cnp.PyArray_DATA(<cnp.ndarray>y)
    per_chunk = max(1, ROW_CHUNK_ELEMENTS // cols)
    chunks = (rows + per_chunk - 1) // per_chunk
    threads = row_chunk_threads(n_threads, rows, cols)
    try:
        if xs == STORE_FLOAT16 or xs == STORE_BFLOAT16:
            scratch = <float*>malloc(max(threads, 1) * cols * sizeof(float))
            if scratch == NULL:
                raise MemoryError()
        with nogil:
            if threads <= 1:
                divide_rows(px, xs, py, 0, rows, cols, kind, scratch)
            else:
                for c in prange(chunks, schedule="static", num_threads=threads):
                    divide_rows(px, xs, py, c * per_chunk, min((c + 1) * per_chunk, rows), cols, kind,
                                NULL if scratch == NULL else scratch + omp_get_thread_num() * cols)
    finally:
        free(scratch)
