# Sigmoid (docs/specification.md §10.1): element-wise, in chunks of
# ROW_CHUNK_ELEMENTS; its float32 blocks are in softmax_steps.h, beside the
# Softmax steps whose exponential they share.

cdef void sigmoid_block(const floating* x, floating* y, Py_ssize_t n, bint fast,
                        bint stream) noexcept nogil:
    """y = 1 / (1 + exp(-x)), both operations rounded (docs/specification.md §10.1;
    float32 in softmax_steps.h, streaming its stores if asked)."""
    cdef Py_ssize_t j
    cdef floating one = 1
    if floating is float:
        normops_sigmoid_float(x, y, n, fast, stream)
        if stream:
            normops_stream_fence()
    else:  # float64 has one exponential in both flavours
        for j in range(n):
            y[j] = -x[j]
        normops_exp64_array(y, y, n)
        for j in range(n):
            y[j] = one / (one + y[j])


cdef void sigmoid_chunk(const void* x, void* y, Storage storage, float* wide, Py_ssize_t start,
                        Py_ssize_t n, bint fast, bint stream) noexcept nogil:
    """Elements start..start+n-1 of any storage (float16/bfloat16 widened
    into wide, the float32 Sigmoid in place there, rounded once into y)."""
    if storage == STORE_FLOAT32:
        sigmoid_block[float](<const float*>x + start, <float*>y + start, n, fast, stream)
    elif storage == STORE_FLOAT64:
        sigmoid_block[double](<const double*>x + start, <double*>y + start, n, fast, stream)
    else:
        widen_rows(x, storage, start, wide, n)
        sigmoid_block[float](wide, wide, n, fast, False)
        narrow_rows(wide, y, storage, start, n)


cdef int sigmoid_loop(const void* px, void* py, Storage storage, Py_ssize_t n, bint fast,
                      int n_threads) noexcept nogil:
    """Sigmoid of n contiguous elements of any storage, in chunks of
    ROW_CHUNK_ELEMENTS (element-wise: the bits never depend on threads);
    -1 when the scratch rows of float16/bfloat16 could not be had.
    Its entry point, which checks the arrays: activation_entry.pxi."""
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t chunks = (n + ROW_CHUNK_ELEMENTS - 1) // ROW_CHUNK_ELEMENTS, c, start
    cdef int threads = threads_for_chunks(n_threads, chunks, ROW_CHUNK_ELEMENTS, n,
                                          map_family(fast and storage != STORE_FLOAT64))
    cdef bint stream = storage == STORE_FLOAT32 and n * 4 >= STREAM_FROM_BYTES
    cdef bint narrow = storage == STORE_FLOAT16 or storage == STORE_BFLOAT16
    cdef float* wide = NULL
    if narrow:
        wide = <float*>malloc(max(threads, 1) * min(n, ROW_CHUNK_ELEMENTS) * sizeof(float) + 4)
        if wide == NULL:
            return -1
    if threads <= 1:
        serial_begin()
        for c in range(chunks if narrow else 1):
            start = c * ROW_CHUNK_ELEMENTS
            sigmoid_chunk(px, py, storage, wide, start, min(ROW_CHUNK_ELEMENTS, n - start) if narrow else n,
                          fast, stream)
        serial_end()
    else:
        threads = team_take(threads, n_threads)
        for c in prange(chunks, schedule="dynamic", num_threads=threads):
            normops_team_claims(claimed)
            start = c * ROW_CHUNK_ELEMENTS
            sigmoid_chunk(px, py, storage,
                          wide + omp_get_thread_num() * ROW_CHUNK_ELEMENTS if narrow else NULL,
                          start, min(ROW_CHUNK_ELEMENTS, n - start), fast, stream)
        team_release(threads)
    free(wide)
    return 0
