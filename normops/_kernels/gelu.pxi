# Gelu, com.microsoft BiasGelu and normops' own erf/tanh (gelu.h,
# erf_tanh.h; docs/transcendentals.md, docs/exactness.md). Element-wise, in
# chunks of ROW_CHUNK_ELEMENTS elements, one chunk per thread turn: the bits
# never depend on the threads.

cdef extern from "gelu.h" nogil:
    enum normops_etfunc:
        NORMOPS_T_ERF32
        NORMOPS_T_TANH32
        NORMOPS_T_ERF64
        NORMOPS_T_TANH64
        NORMOPS_T_ERF32_FAST
        NORMOPS_T_TANH32_FAST
    void normops_etfunc_map(int which, const void* x, void* y, Py_ssize_t n)
    void normops_gelu_segment_f32(const float* x, const float* b, Py_ssize_t cols, float* y,
                                  Py_ssize_t start, Py_ssize_t length, int kind, int fast)
    void normops_gelu_segment_f64(const double* x, const double* b, Py_ssize_t cols, double* y,
                                  Py_ssize_t start, Py_ssize_t length, int kind, int fast)

cdef enum ElementwiseOp:
    EW_ETFUNC
    EW_GELU32
    EW_GELU64


cdef inline void elementwise_segment(ElementwiseOp op, const char* x, const char* b, Py_ssize_t cols, char* y,
                                     Py_ssize_t start, Py_ssize_t length, Py_ssize_t itemsize,
                                     int which, bint fast) noexcept nogil:
    if op == EW_ETFUNC:
        normops_etfunc_map(which, x + start * itemsize, y + start * itemsize, length)
    elif op == EW_GELU32:
        normops_gelu_segment_f32(<const float*>x, <const float*>b, cols, <float*>y, start, length, which, fast)
    else:
        normops_gelu_segment_f64(<const double*>x, <const double*>b, cols, <double*>y, start, length, which, fast)


cdef void elementwise_chunks(ElementwiseOp op, const char* x, const char* b, Py_ssize_t cols, char* y,
                             Py_ssize_t n, Py_ssize_t itemsize, int which, bint fast,
                             int n_threads) noexcept nogil:
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t chunks = (n + ROW_CHUNK_ELEMENTS - 1) // ROW_CHUNK_ELEMENTS, c, start
    cdef bint cheap = (op == EW_GELU32 and fast
                       or op == EW_ETFUNC and ((which & ~NORMOPS_T_SCALAR) == NORMOPS_T_ERF32_FAST
                                                  or (which & ~NORMOPS_T_SCALAR) == NORMOPS_T_TANH32_FAST))
    cdef int threads = threads_for_chunks(n_threads, chunks, ROW_CHUNK_ELEMENTS, n, map_family(cheap))
    if threads <= 1:
        serial_begin()
        elementwise_segment(op, x, b, cols, y, 0, n, itemsize, which, fast)
        serial_end()
        return
    threads = team_take(threads, n_threads)
    for c in prange(chunks, schedule="dynamic", num_threads=threads):
        normops_team_claims(claimed)
        start = c * ROW_CHUNK_ELEMENTS
        elementwise_segment(op, x, b, cols, y, start, min(ROW_CHUNK_ELEMENTS, n - start), itemsize, which, fast)
    team_release(threads)


cdef int run_etfunc(int which, object x, object out, int typenum, int n_threads, bint scalar) except -1:
    if not isinstance(x, cnp.ndarray):
        raise TypeError("kernel argument 'x' must be an ndarray")
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>x)
    check_array(x, typenum, n, False, "x")
    check_array(out, typenum, n, True, "out")
    cdef const char* px = <const char*>cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef char* py = <char*>cnp.PyArray_DATA(<cnp.ndarray>out)
    if scalar:
        which |= NORMOPS_T_SCALAR
    with nogil:
        elementwise_chunks(EW_ETFUNC, px, NULL, n, py, n, 4 if typenum == cnp.NPY_FLOAT32 else 8,
                           which, False, n_threads)
    return 0


def erf32_into(x, out, int n_threads=1, bint scalar=False):
    """out = erf32(x) (float32 contiguous arrays of one size; out may be x):
    faithful (below 1 ulp, float32 arithmetic, proven over every input).
    ``scalar``: the one-at-a-time loop."""
    run_etfunc(NORMOPS_T_ERF32, x, out, cnp.NPY_FLOAT32, n_threads, scalar)


def tanh32_into(x, out, int n_threads=1, bint scalar=False):
    """out = tanh32(x): faithful, within 0.5 + 2^-26 ulp (see erf32_into)."""
    run_etfunc(NORMOPS_T_TANH32, x, out, cnp.NPY_FLOAT32, n_threads, scalar)


def erf64_into(x, out, int n_threads=1, bint scalar=False):
    """out = erf64(x): float64, about one ulp."""
    run_etfunc(NORMOPS_T_ERF64, x, out, cnp.NPY_FLOAT64, n_threads, scalar)


def tanh64_into(x, out, int n_threads=1, bint scalar=False):
    """out = tanh64(x): float64, about one ulp."""
    run_etfunc(NORMOPS_T_TANH64, x, out, cnp.NPY_FLOAT64, n_threads, scalar)


def erf32_fast_into(x, out, int n_threads=1, bint scalar=False):
    """out = the fast flavour's erf (float32 arithmetic, about 2 ulp)."""
    run_etfunc(NORMOPS_T_ERF32_FAST, x, out, cnp.NPY_FLOAT32, n_threads, scalar)


def tanh32_fast_into(x, out, int n_threads=1, bint scalar=False):
    """out = the fast flavour's tanh (float32 arithmetic, about 2 ulp)."""
    run_etfunc(NORMOPS_T_TANH32_FAST, x, out, cnp.NPY_FLOAT32, n_threads, scalar)


cpdef object gelu_flat(object x, object b, object y, bint tanh, bint fast, int n_threads):
    """y = Gelu(x) (b None) or Gelu(x + b), b added to every row of len(b)
    elements; contiguous float32/float64 arrays of one dtype."""
    cdef int t = float_typenum(x)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>x), cols = n
    check_array(x, t, n, False, "x")
    check_array(y, t, n, True, "y")
    if b is not None:
        cols = cnp.PyArray_SIZE(<cnp.ndarray>b)
        check_array(b, t, cols, False, "b")
        if cols < 1 or n % cols:
            raise ValueError("gelu_flat: the size of x must be a multiple of the size of b")
    cdef const char* px = <const char*>cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef const char* pb = <const char*>data_or_null(b)
    cdef char* py = <char*>cnp.PyArray_DATA(<cnp.ndarray>y)
    cdef PyThreadState* saved = gil_release(n)
    elementwise_chunks(EW_GELU32 if t == cnp.NPY_FLOAT32 else EW_GELU64, px, pb, cols, py, n,
                       4 if t == cnp.NPY_FLOAT32 else 8, 1 if tanh else 0, fast, n_threads)
    gil_restore(saved)
