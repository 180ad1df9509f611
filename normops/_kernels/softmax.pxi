# Softmax, LogSoftmax and Hardmax over rows (seed spec, "Softmax,
# LogSoftmax, Hardmax"; decisions.md §3). The front layer has already laid
# the normalised axis out as the contiguous rows of a rows x cols matrix.

from libc.string cimport memset

cdef enum SoftmaxKind:
    KIND_SOFTMAX
    KIND_LOG_SOFTMAX
    KIND_HARDMAX


cdef extern from "rowmax.h" nogil:
    float normops_row_max_float(const float* x, Py_ssize_t n, int* has_nan, int* has_pos_inf)
    double normops_row_max_double(const double* x, Py_ssize_t n, int* has_nan, int* has_pos_inf)

    float normops_row_max_plain_float(const float* x, Py_ssize_t n)
    double normops_row_max_plain_double(const double* x, Py_ssize_t n)

cdef extern from "softmax_steps.h" nogil:
    float normops_exp32_fast_shifted_sum16(const float* x, float shift, float* y, Py_ssize_t n,
                                           const float* next)
    void normops_divide_float_array(const float* e, float s, float* y, Py_ssize_t n)
    void normops_sigmoid_float(const float* x, float* y, Py_ssize_t n, int fast)


cdef void hardmax_row(const floating* x, floating* y, Py_ssize_t n) noexcept nogil:
    """1 at the first maximum, 0 elsewhere; a row holding NaN is all 0."""
    cdef int has_nan = 0, pos_inf = 0
    cdef floating m
    cdef Py_ssize_t j, first_max = 0
    if floating is float:
        m = normops_row_max_float(x, n, &has_nan, &pos_inf)
    else:
        m = normops_row_max_double(x, n, &has_nan, &pos_inf)
    memset(y, 0, n * sizeof(floating))
    if not has_nan:
        while x[first_max] != m:
            first_max += 1
        y[first_max] = 1


cdef void softmax_row(const floating* x, floating* y, floating* scratch, Py_ssize_t n,
                      SoftmaxKind kind, bint fast, const floating* next) noexcept nogil:
    """One Softmax or LogSoftmax row; scratch holds n elements; next (or
    NULL) is the row that follows, prefetched while this one computes.

    A row holding NaN or +inf, or only -inf, is NaN throughout. The maximum
    m ignores NaN, so +inf and only -inf show in m, and a NaN shows in the
    sum of exponentials (exp of NaN - m is NaN; nothing else makes a NaN:
    every other x[j] - m is finite or -inf)."""
    cdef floating m, s, log_s, r
    cdef Py_ssize_t j
    # Softmax keeps the exponentials in y (their stores overlap the
    # arithmetic, and the last pass then works in the cache); LogSoftmax
    # only sums them
    cdef floating* e = y if kind == KIND_SOFTMAX else scratch
    if floating is float:
        m = normops_row_max_plain_float(x, n)
    else:
        m = normops_row_max_plain_double(x, n)
    if m == INFINITY or m == -INFINITY:
        s = <floating>NAN
    elif floating is float:
        # e[j] = exp32(x[j] - m), the difference rounded first, in one pass
        if fast:
            s = normops_exp32_fast_shifted_sum16(x, m, e, n, next)
        else:
            normops_exp32_shifted_array(x, m, e, n)
            s = sum16(e, n)
    else:  # float64 has one exponential in both flavours
        for j in range(n):
            e[j] = x[j] - m
        normops_exp64_array(e, e, n)
        s = sum16(e, n)
    if s != s:
        for j in range(n):
            y[j] = <floating>NAN
    elif kind == KIND_LOG_SOFTMAX:
        if floating is float:
            log_s = normops_log32(s)
        else:
            log_s = normops_log64(s)
        for j in range(n):
            y[j] = (x[j] - m) - log_s
    elif fast:
        r = (<floating>1) / s
        for j in range(n):
            y[j] = y[j] * r
    elif floating is float:
        normops_divide_float_array(y, s, y, n)  # the bits of y[j] / s
    else:
        for j in range(n):
            y[j] = y[j] / s  # one division per element, no reciprocal


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
            if kind == KIND_HARDMAX:
                hardmax_row(x + r * cols, y + r * cols, cols)
            else:
                softmax_row(x + r * cols, y + r * cols, scratch, cols, kind, fast,
                            x + (r + 1) * cols if r + 1 < rows else NULL)
        return
    for c in prange(chunks, schedule="static", num_threads=threads):
        for r in range(c * per_chunk, min((c + 1) * per_chunk, rows)):
            if kind == KIND_HARDMAX:
                hardmax_row(x + r * cols, y + r * cols, cols)
            else:
                softmax_row(x + r * cols, y + r * cols, scratch + omp_get_thread_num() * cols,
                            cols, kind, fast, x + (r + 1) * cols if r + 1 < rows else NULL)


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
    # Softmax and Hardmax work in y; LogSoftmax sums its exponentials in scratch
    cdef void* scratch = malloc(max(threads, 1) * cols * itemsize if kind == KIND_LOG_SOFTMAX else 1)
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
    """y = 1 / (1 + exp(-x)), both operations rounded (decisions.md §2;
    float32 in softmax_steps.h)."""
    cdef Py_ssize_t j
    cdef floating one = 1
    if floating is float:
        normops_sigmoid_float(x, y, n, fast)
    else:  # float64 has one exponential in both flavours
        for j in range(n):
            y[j] = -x[j]
        normops_exp64_array(y, y, n)
        for j in range(n):
            y[j] = one / (one + y[j])


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


def divide_float_into(e, float s, out):
    """out = e / s for a float32 array e through the float64 quotient of
    softmax_steps.h (exact Softmax's step 5; for tests)."""
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>e)
    check_array(e, cnp.NPY_FLOAT32, n, False, "e")
    check_array(out, cnp.NPY_FLOAT32, n, True, "out")
    if not (s == s and abs(s) >= 1.1754943508222875e-38 and abs(s) < float("inf")):
        raise ValueError("divide_float_into needs a finite s of normal size")
    with nogil:
        normops_divide_float_array(<const float*>cnp.PyArray_DATA(<cnp.ndarray>e), s,
                                   <float*>cnp.PyArray_DATA(<cnp.ndarray>out), n)
