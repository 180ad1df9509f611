# Softmax, LogSoftmax and Hardmax over rows (seed spec, "Softmax,
# LogSoftmax, Hardmax"; decisions.md §3). The front layer has already laid
# the normalised axis out as the contiguous rows of a rows x cols matrix.

cdef enum SoftmaxKind:
    KIND_SOFTMAX
    KIND_LOG_SOFTMAX
    KIND_HARDMAX


cdef extern from "rowmax.h" nogil:
    float normops_row_max_float(const float* x, Py_ssize_t n, int* has_nan, int* has_pos_inf)
    double normops_row_max_double(const double* x, Py_ssize_t n, int* has_nan, int* has_pos_inf)


cdef inline bint scan_row(const floating* x, Py_ssize_t n, floating* row_max, bint* has_nan) noexcept nogil:
    """The row maximum; returns True when the row is a NaN row for
    Softmax/LogSoftmax: it holds NaN or +inf, or only -inf. has_nan: the
    row holds a NaN (Hardmax's rule)."""
    cdef int nan = 0, pos_inf = 0
    if floating is float:
        row_max[0] = normops_row_max_float(x, n, &nan, &pos_inf)
    else:
        row_max[0] = normops_row_max_double(x, n, &nan, &pos_inf)
    has_nan[0] = nan != 0
    return nan != 0 or pos_inf != 0 or row_max[0] == -INFINITY


cdef void softmax_row(const floating* x, floating* y, floating* scratch, Py_ssize_t n,
                      SoftmaxKind kind, bint fast) noexcept nogil:
    """One row; scratch holds n elements."""
    cdef floating m, s, log_s, r, qnan = <floating>NAN
    cdef bint has_nan
    cdef Py_ssize_t j, first_max = 0
    cdef bint nan_row = scan_row(x, n, &m, &has_nan)
    cdef int exp_kind, log_kind
    if floating is float:
        exp_kind = NORMOPS_T_EXP32_FAST if fast else NORMOPS_T_EXP32
        log_kind = NORMOPS_T_LOG32
    else:
        exp_kind = NORMOPS_T_EXP64  # float64 has one exponential in both flavours
        log_kind = NORMOPS_T_LOG64
    if kind == KIND_HARDMAX:
        # 1 at the first maximum, 0 elsewhere; a row holding NaN is all 0
        for j in range(n):
            y[j] = 0
        if not has_nan:
            while x[first_max] != m:
                first_max += 1
            y[first_max] = 1
        return
    if nan_row:
        for j in range(n):
            y[j] = qnan
        return
    if kind == KIND_SOFTMAX:
        for j in range(n):
            scratch[j] = x[j] - m  # rounded before the exponential
        normops_tfunc_map(exp_kind, scratch, y, n)
        s = sum16(y, n)
        if fast:
            r = (<floating>1) / s
            for j in range(n):
                y[j] = y[j] * r
        else:
            for j in range(n):
                y[j] = y[j] / s  # one division per element, no reciprocal
    else:
        for j in range(n):
            y[j] = x[j] - m
        normops_tfunc_map(exp_kind, y, scratch, n)
        s = sum16(scratch, n)
        normops_tfunc_map(log_kind, &s, &log_s, 1)
        for j in range(n):
            y[j] = y[j] - log_s


cdef void softmax_chunks(const floating* x, floating* y, floating* scratch,
                         Py_ssize_t rows, Py_ssize_t cols, SoftmaxKind kind, bint fast,
                         int threads) noexcept nogil:
    """Rows in chunks of max(1, 16384 // cols), one chunk per task; scratch
    holds cols elements per thread. Rows are independent: the bits never
    depend on the threads."""
    cdef Py_ssize_t per_chunk = max(1, ROW_CHUNK_ELEMENTS // cols)
    cdef Py_ssize_t chunks = (rows + per_chunk - 1) // per_chunk
    cdef Py_ssize_t c, r
    if threads <= 1:
        for r in range(rows):
            softmax_row(x + r * cols, y + r * cols, scratch, cols, kind, fast)
        return
    for c in prange(chunks, schedule="static", num_threads=threads):
        for r in range(c * per_chunk, min((c + 1) * per_chunk, rows)):
            softmax_row(x + r * cols, y + r * cols, scratch + omp_get_thread_num() * cols,
                        cols, kind, fast)


def softmax_rows(x, y, Py_ssize_t rows, Py_ssize_t cols, int kind, bint fast, int n_threads):
    """kind 0 Softmax, 1 LogSoftmax, 2 Hardmax over each row of the
    rows x cols float32 or float64 matrix x, into y (same dtype)."""
    cdef int t = float_typenum(x)
    if rows < 0 or cols < 1 or not 0 <= kind <= 2:
        raise ValueError("softmax_rows needs rows >= 0, cols >= 1 and kind in 0..2")
    check_array(x, t, rows * cols, False, "x")
    check_array(y, t, rows * cols, True, "y")
    cdef Py_ssize_t per_chunk = max(1, ROW_CHUNK_ELEMENTS // cols)
    cdef int threads = threads_for(n_threads, (rows + per_chunk - 1) // per_chunk, rows * cols)
    cdef Py_ssize_t itemsize = 4 if t == cnp.NPY_FLOAT32 else 8
    cdef void* scratch = malloc(max(threads, 1) * cols * itemsize)
    if scratch == NULL:
        raise MemoryError()
    cdef void* px = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* py = cnp.PyArray_DATA(<cnp.ndarray>y)
    try:
        with nogil:
            if t == cnp.NPY_FLOAT32:
                softmax_chunks[float](<const float*>px, <float*>py, <float*>scratch, rows, cols,
                                      <SoftmaxKind>kind, fast, threads)
            else:
                softmax_chunks[double](<const double*>px, <double*>py, <double*>scratch, rows, cols,
                                       <SoftmaxKind>kind, fast, threads)
    finally:
        free(scratch)


# ---------------------------------------------------------------- Sigmoid

cdef void sigmoid_block(const floating* x, floating* y, Py_ssize_t n, bint fast) noexcept nogil:
    """y = 1 / (1 + exp(-x)), both operations rounded (decisions.md §2);
    exp(-x) underflows to 0 for large x (y = 1 exactly) and overflows to
    +inf for very negative x (y = +0)."""
    cdef Py_ssize_t j
    cdef floating one = 1, v
    cdef int exp_kind
    if floating is float:
        exp_kind = NORMOPS_T_EXP32_FAST if fast else NORMOPS_T_EXP32
    else:
        exp_kind = NORMOPS_T_EXP64
    for j in range(n):
        y[j] = -x[j]
    normops_tfunc_map(exp_kind, y, y, n)
    for j in range(n):
        v = one / (one + y[j])
        y[j] = v if v == v else <floating>NAN


def sigmoid_flat(x, y, bint fast, int n_threads):
    """Sigmoid of the contiguous float32/float64 array x into y, in chunks
    of 16384 elements (element-wise: the bits never depend on threads)."""
    cdef int t = float_typenum(x)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>x)
    check_array(x, t, n, False, "x")
    check_array(y, t, n, True, "y")
    cdef Py_ssize_t chunks = (n + ROW_CHUNK_ELEMENTS - 1) // ROW_CHUNK_ELEMENTS, c, start
    cdef int threads = threads_for(n_threads, chunks, n)
    cdef void* px = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* py = cnp.PyArray_DATA(<cnp.ndarray>y)
    with nogil:
        if threads <= 1:
            if t == cnp.NPY_FLOAT32:
                sigmoid_block[float](<const float*>px, <float*>py, n, fast)
            else:
                sigmoid_block[double](<const double*>px, <double*>py, n, fast)
        else:
            for c in prange(chunks, schedule="static", num_threads=threads):
                start = c * ROW_CHUNK_ELEMENTS
                if t == cnp.NPY_FLOAT32:
                    sigmoid_block[float](<const float*>px + start, <float*>py + start,
                                         min(ROW_CHUNK_ELEMENTS, n - start), fast)
                else:
                    sigmoid_block[double](<const double*>px + start, <double*>py + start,
                                          min(ROW_CHUNK_ELEMENTS, n - start), fast)
