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
    cdef floating partial[16]
    cdef Py_ssize_t i, full = n - n % 16
    cdef int k
    for k in range(16):
        partial[k] = 0
    for i in range(0, full, 16):
        for k in range(16):
            partial[k] = partial[k] + x[i + k]
    for k in range(n - full):
        partial[k] = partial[k] + x[full + k]
    return sum16_fold(partial)


cdef inline floating sum16_squared_deviations(
    const floating* x, Py_ssize_t n, floating center
) noexcept nogil:
    """Sum16 of the terms (x[j] - center) * (x[j] - center), each op rounded.

    With center = 0 the terms are x[j] * x[j] bit for bit (x - 0 == x for
    every x, -0 included), which is the mean-of-squares sum of RMS norms.
    """
    cdef floating partial[16]
    cdef floating d
    cdef Py_ssize_t i, full = n - n % 16
    cdef int k
    for k in range(16):
        partial[k] = 0
    for i in range(0, full, 16):
        for k in range(16):
            d = x[i + k] - center
            partial[k] = partial[k] + d * d
    for k in range(n - full):
        d = x[full + k] - center
        partial[k] = partial[k] + d * d
    return sum16_fold(partial)
