# Row normalisation: LayerNormalization, RMSNormalization and
# SimplifiedLayerNormalization (seed spec, "LayerNormalization,
# RMSNormalization", steps 1-4; decisions.md §5).

from libc.math cimport sqrt, sqrtf, NAN


cdef inline floating ieee_sqrt(floating v) noexcept nogil:
    # Built with -fno-math-errno: this is the sqrtss/sqrtsd instruction.
    if floating is float:
        return sqrtf(v)
    else:
        return sqrt(v)


cdef inline float stat_to_float32(floating v) noexcept nogil:
    """Statistics outputs are float32: round once, canonical NaN."""
    cdef float r = <float>v
    return r if r == r else <float>NAN


cdef void normalize_rows(
    const floating* x, floating* y,
    const floating* scale, const floating* bias,
    float* mean_out, float* inv_out,
    Py_ssize_t row_begin, Py_ssize_t row_end, Py_ssize_t cols,
    floating epsilon, bint center,
) noexcept nogil:
    """Normalise rows [row_begin, row_end) of the rows x cols matrix x.

    bias, mean_out and inv_out may be NULL.
    """
    cdef floating n = <floating>cols
    cdef floating one = 1
    cdef floating qnan = <floating>NAN
    cdef floating mean, var, inv, v
    cdef const floating* xr
    cdef floating* yr
    cdef Py_ssize_t r, j
    for r in range(row_begin, row_end):
        xr = x + r * cols
        yr = y + r * cols
        # step 1 (RMS: the mean is 0 and not computed)
        mean = sum16(xr, cols) / n if center else 0
        # step 2: separately rounded difference and square
        var = sum16_squared_deviations(xr, cols, mean) / n
        # step 3
        inv = one / ieee_sqrt(var + epsilon)
        # step 4: four separately rounded operations, NaN canonicalised
        if bias != NULL:
            for j in range(cols):
                v = (((xr[j] - mean) * inv) * scale[j]) + bias[j]
                yr[j] = v if v == v else qnan
        else:
            for j in range(cols):
                v = ((xr[j] - mean) * inv) * scale[j]
                yr[j] = v if v == v else qnan
        if mean_out != NULL:
            mean_out[r] = stat_to_float32(mean)
        if inv_out != NULL:
            inv_out[r] = stat_to_float32(inv)


cdef void normalize_chunks(
    const floating* x, floating* y,
    const floating* scale, const floating* bias,
    float* mean_out, float* inv_out,
    Py_ssize_t rows, Py_ssize_t cols,
    floating epsilon, bint center, int n_threads,
) noexcept nogil:
    """Split the rows into chunks of max(1, 16384 // cols) rows, one chunk per
    task. Rows are independent, so the bits never depend on the threads."""
    cdef Py_ssize_t per_chunk = max(1, ROW_CHUNK_ELEMENTS // cols)
    cdef Py_ssize_t chunks = (rows + per_chunk - 1) // per_chunk
    cdef Py_ssize_t c
    cdef int threads = threads_for(n_threads, chunks, rows * cols)
    if threads <= 1:
        normalize_rows(x, y, scale, bias, mean_out, inv_out, 0, rows, cols, epsilon, center)
        return
    for c in prange(chunks, schedule="static", num_threads=threads):
        normalize_rows(
            x, y, scale, bias, mean_out, inv_out,
            c * per_chunk, min((c + 1) * per_chunk, rows), cols, epsilon, center,
        )
