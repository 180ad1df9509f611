# Gelu, com.microsoft BiasGelu and normops' own erf/tanh (gelu.h,
# erf_tanh.h; docs/transcendentals.md, docs/exactness.md). Element-wise, in
# chunks of ROW_CHUNK_ELEMENTS elements, one chunk per thread turn: the bits
# never depend on the threads. Their entry points: gelu_entry.pxi.

cdef extern from "gelu.h" nogil:
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


cdef void gelu_loop(const char* x, const char* b, Py_ssize_t cols, char* y, Py_ssize_t n, bint is_float32,
                    bint tanh, bint fast, int n_threads) noexcept nogil:
    """y = Gelu(x) (b NULL) or Gelu(x + b), b added to every row of cols
    elements; its entry point, which checks the arrays: gelu_entry.pxi."""
    elementwise_chunks(EW_GELU32 if is_float32 else EW_GELU64, x, b, cols, y, n, 4 if is_float32 else 8,
                       1 if tanh else 0, fast, n_threads)
