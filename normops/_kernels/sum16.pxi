# The canonical Sum16 (docs/specification.md §3); the loop itself is
# in sum16.h (GCC vector extension: 16 lanes, one per partial).

from cython cimport floating

cdef extern from "sum16.h" nogil:
    cdef enum normops_term:
        NORMOPS_TERM_VALUE
        NORMOPS_TERM_SQUARED_DEVIATION
        NORMOPS_TERM_ABSOLUTE
    void normops_sum16_float(const float* x, Py_ssize_t stride, int nrows, Py_ssize_t n,
                             const float* center, int term, float* out, const float* prefetch)
    void normops_sum16_double(const double* x, Py_ssize_t stride, int nrows, Py_ssize_t n,
                              const double* center, int term, double* out, const double* prefetch)

cdef enum:
    MAX_ROWS_SIDE_BY_SIDE = 4


cdef inline void sum16_side_by_side(
    const floating* x, Py_ssize_t stride, int nrows, Py_ssize_t n,
    const floating* center, int term, floating* out, const floating* prefetch,
) noexcept nogil:
    """out[r] = Sum16 over j < n of the term of x[r * stride + j], r < nrows
    (1, 2 or 4 rows side by side, each in its own canonical order).

    NORMOPS_TERM_SQUARED_DEVIATION is the separately rounded
    (x - center[r]) * (x - center[r]); with center[r] = 0 that is x * x bit
    for bit (x - 0 == x for every x, -0 included): the RMS sum of squares.
    ``prefetch`` (or NULL) starts nrows rows of the same stride that a later
    call will read: one cache line of each is requested per 16 terms.
    """
    if floating is float:
        normops_sum16_float(x, stride, nrows, n, center, term, out, prefetch)
    else:
        normops_sum16_double(x, stride, nrows, n, center, term, out, prefetch)


cdef inline floating sum16(const floating* x, Py_ssize_t n) noexcept nogil:
    """Sum16 of x[0..n)."""
    cdef floating result
    sum16_side_by_side(x, 0, 1, n, NULL, NORMOPS_TERM_VALUE, &result, NULL)
    return result


cdef void sum16_rows_loop(const void* x, void* out, Py_ssize_t rows, Py_ssize_t cols,
                          bint is_float32) noexcept nogil:
    """out[r] = Sum16(x[r, :]) for a rows x cols matrix, one thread (the
    building block; its entry point: sum16_entry.pxi)."""
    cdef Py_ssize_t r
    for r in range(rows):
        if is_float32:
            (<float*>out)[r] = sum16(<const float*>x + r * cols, cols)
        else:
            (<double*>out)[r] = sum16(<const double*>x + r * cols, cols)
