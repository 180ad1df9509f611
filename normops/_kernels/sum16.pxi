# The canonical Sum16 (seed spec, "The canonical sum").
#
# Sixteen partial sums start at +0; term j is added to partial j % 16 in
# increasing j; the partials are then folded pairwise at distances 8, 4, 2
# and 1. Each vector lane holds its own partials, so the vector width (SSE,
# AVX2, AVX-512) cannot change the result, and gcc turns the fixed 16-wide
# inner loops into vector code at every ISA level.

from cython cimport floating


cdef inline floating sum16_fold(floating* partial) noexcept nogil:
    """Fold the 16 partials: distance 8, then 4, then 2, then 1."""
    cdef floating a[8]
    cdef floating b[4]
    cdef int t
    for t in range(8):
        a[t] = partial[t] + partial[t + 8]
    for t in range(4):
        b[t] = a[t] + a[t + 4]
    return (b[0] + b[2]) + (b[1] + b[3])


cdef inline floating sum16(const floating* x, Py_ssize_t n) noexcept nogil:
    """Sum16 of x[0..n)."""
    cdef floating result
    sum16_side_by_side(x, 0, 1, n, NULL, TERM_VALUE, &result, NULL)
    return result


# Rows summed side by side: each row keeps its own 16 partials and its own
# order, but the rows' additions are independent, so the CPU overlaps them
# instead of waiting on one chain of dependent additions. Each row has its
# own partial array so that gcc keeps them in vector registers.
cdef enum:
    MAX_ROWS_SIDE_BY_SIDE = 4

# What is summed: the values, their squared deviations, their magnitudes.
cdef enum SumTerm:
    TERM_VALUE
    TERM_SQUARED_DEVIATION
    TERM_ABSOLUTE


cdef extern from *:
    # gcc/clang builtin: a hint, never a fault, even past the end of an array
    void __builtin_prefetch(const void* address, int rw, int locality) noexcept nogil


cdef inline void prefetch_line(const floating* p) noexcept nogil:
    """Ask for the 64 bytes from p (into L2): 16 floats, or 8 doubles twice."""
    __builtin_prefetch(p, 0, 2)
    if floating is double:
        __builtin_prefetch(p + 8, 0, 2)


cdef inline floating sum16_term(floating v, floating center, SumTerm term) noexcept nogil:
    if term == TERM_SQUARED_DEVIATION:
        v = v - center
        return v * v
    if term == TERM_ABSOLUTE:
        return v if v >= 0 else -v
    return v


cdef inline void sum16_side_by_side(
    const floating* x, Py_ssize_t stride, int nrows, Py_ssize_t n,
    const floating* center, SumTerm term, floating* out,
    const floating* prefetch,
) noexcept nogil:
    """out[r] = Sum16 over j < n of the term of x[r * stride + j], r < nrows
    (nrows and term are constants at each call site, so the branches fold).

    TERM_SQUARED_DEVIATION is the separately rounded
    (x - center[r]) * (x - center[r]). With center[r] = 0 that is x * x bit
    for bit (x - 0 == x for every x, -0 included): the RMS sum of squares.

    ``prefetch`` (or NULL) starts nrows rows of the same stride that a later
    call will read; one cache line of each is requested per 16 terms, so
    memory keeps streaming while these rows are summed from cache.
    """
    cdef floating p0[16]
    cdef floating p1[16]
    cdef floating p2[16]
    cdef floating p3[16]
    cdef floating c0 = 0, c1 = 0, c2 = 0, c3 = 0
    cdef const floating* x0 = x
    cdef const floating* x1 = x + stride
    cdef const floating* x2 = x + 2 * stride
    cdef const floating* x3 = x + 3 * stride
    cdef Py_ssize_t i, full = n - n % 16
    cdef int k
    if term == TERM_SQUARED_DEVIATION:
        c0 = center[0]
        if nrows == 4:
            c1, c2, c3 = center[1], center[2], center[3]
    for k in range(16):
        p0[k] = 0
        p1[k] = 0
        p2[k] = 0
        p3[k] = 0
    for i in range(0, full, 16):
        if prefetch != NULL:
            for k in range(nrows):
                prefetch_line(prefetch + k * stride + i)
        for k in range(16):
            p0[k] = p0[k] + sum16_term(x0[i + k], c0, term)
            if nrows == 4:
                p1[k] = p1[k] + sum16_term(x1[i + k], c1, term)
                p2[k] = p2[k] + sum16_term(x2[i + k], c2, term)
                p3[k] = p3[k] + sum16_term(x3[i + k], c3, term)
    for k in range(n - full):
        p0[k] = p0[k] + sum16_term(x0[full + k], c0, term)
        if nrows == 4:
            p1[k] = p1[k] + sum16_term(x1[full + k], c1, term)
            p2[k] = p2[k] + sum16_term(x2[full + k], c2, term)
            p3[k] = p3[k] + sum16_term(x3[full + k], c3, term)
    out[0] = sum16_fold(p0)
    if nrows == 4:
        out[1] = sum16_fold(p1)
        out[2] = sum16_fold(p2)
        out[3] = sum16_fold(p3)
