# normops' own exp, log and log1p (transcendental.h,
# docs/transcendentals.md): the chunked loops of their element-wise maps,
# of the exhaustive check's pattern ranges and of its long-double
# reference. Their entry points, which check the arrays, are in the routes
# module (transcendental_entry.pxi), reaching these through the build's
# table (kernel_table.pxd).

from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, free

cdef extern from "transcendental.h" nogil:
    # for the kernels (Softmax and friends): one element, or a contiguous run
    float normops_exp32(float x)
    float normops_log32(float x)
    float normops_exp32_fast(float x)
    double normops_exp64(double x)
    double normops_log64(double x)
    float normops_log1p32(float x)
    double normops_log1p64(double x)
    void normops_exp32_array(const float* x, float* y, Py_ssize_t n)
    void normops_log32_array(const float* x, float* y, Py_ssize_t n)
    void normops_exp32_fast_array(const float* x, float* y, Py_ssize_t n)
    void normops_exp64_array(const double* x, double* y, Py_ssize_t n)
    void normops_log64_array(const double* x, double* y, Py_ssize_t n)
    # y[i] = exp(x[i] - shift), the difference rounded to float32 first
    void normops_exp32_shifted_array(const float* x, float shift, float* y, Py_ssize_t n)
    void normops_exp32_below_max_array(const float* x, float max, float* y, Py_ssize_t n)
    void normops_exp32_fast_shifted_array(const float* x, float shift, float* y, Py_ssize_t n)
    # for the loops below (the numbers: kernel_codes.h)
    void normops_tfunc_map(int which, const void* x, void* y, Py_ssize_t n)
    void normops_tfunc_range(int which, uint64_t start, uint64_t stride, Py_ssize_t n, uint32_t* out)
    void normops_tfunc_pairs(int which, const float* x, double* hi, double* lo, Py_ssize_t n)

cdef extern from "transcendental_reference.h" nogil:
    const int NORMOPS_HAVE_LONG_DOUBLE_REFERENCE
    Py_ssize_t normops_reference_range(int which, const uint32_t* patterns, uint64_t start, uint64_t stride,
                                       Py_ssize_t n, uint32_t* out, uint8_t* near, int near_bits,
                                       double* closest, uint32_t* closest_pattern)

cdef inline Py_ssize_t chunk_count(Py_ssize_t n) noexcept nogil:
    return (n + ROW_CHUNK_ELEMENTS - 1) // ROW_CHUNK_ELEMENTS


cdef void map_chunks(int which, const char* x, char* y, Py_ssize_t n, Py_ssize_t itemsize,
                     int n_threads) noexcept nogil:
    """y = f(x) element-wise, in chunks of ROW_CHUNK_ELEMENTS elements, one
    chunk per thread turn (the bits never depend on which thread)."""
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t chunks = chunk_count(n), c, start, length
    cdef int threads = threads_for_chunks(n_threads, chunks, ROW_CHUNK_ELEMENTS, n,
                                          map_family((which & ~NORMOPS_T_SCALAR) == NORMOPS_T_EXP32_FAST))
    if threads == 1:
        serial_begin()
        normops_tfunc_map(which, x, y, n)
        serial_end()
        return
    threads = team_take(threads, n_threads)
    for c in prange(chunks, nogil=True, schedule='dynamic', num_threads=threads):
        normops_team_claims(claimed)
        start = c * ROW_CHUNK_ELEMENTS
        length = min(ROW_CHUNK_ELEMENTS, n - start)
        normops_tfunc_map(which, x + start * itemsize, y + start * itemsize, length)
    team_release(threads)


# ------------------------------------------------- the exhaustive check

cdef void range_chunks(int which, uint64_t start, uint64_t stride, Py_ssize_t n, uint32_t* out,
                       int n_threads) noexcept nogil:
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t chunks = chunk_count(n), c, first, length
    cdef int threads = team_take(whole_team(n_threads, chunks), n_threads)
    for c in prange(chunks, nogil=True, schedule='dynamic', num_threads=threads):
        normops_team_claims(claimed)
        first = c * ROW_CHUNK_ELEMENTS
        length = min(ROW_CHUNK_ELEMENTS, n - first)
        normops_tfunc_range(which, start + <uint64_t>first * stride, stride, length, out + first)
    team_release(threads)


cdef Py_ssize_t reference_chunks(int which, const uint32_t* patterns, uint64_t start, uint64_t stride,
                                 Py_ssize_t n, uint32_t* out, uint8_t* near, int near_bits, int n_threads,
                                 double* closest_distance, uint32_t* closest_input) noexcept nogil:
    """The long-double reference over chunks of ROW_CHUNK_ELEMENTS inputs:
    the number flagged near a midpoint (-1: out of memory), and the input
    closest to one with its distance in ulps."""
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t chunks = chunk_count(n), c, first, length, flagged = 0
    cdef int threads = whole_team(n_threads, chunks)
    # one closest-to-a-midpoint slot per chunk (prange has no min reduction)
    cdef Py_ssize_t slots = max(chunks, 1), best = 0
    cdef double* closest = <double*>malloc(slots * sizeof(double))
    cdef uint32_t* closest_pattern = <uint32_t*>malloc(slots * sizeof(uint32_t))
    if closest == NULL or closest_pattern == NULL:
        free(closest)
        free(closest_pattern)
        return -1
    closest[0] = 1.0
    closest_pattern[0] = 0
    threads = team_take(threads, n_threads)
    for c in prange(chunks, schedule='dynamic', num_threads=threads):
        normops_team_claims(claimed)
        first = c * ROW_CHUNK_ELEMENTS
        length = min(ROW_CHUNK_ELEMENTS, n - first)
        flagged += normops_reference_range(which, patterns if patterns == NULL else patterns + first,
                                           start + <uint64_t>first * stride, stride, length,
                                           out + first, near + first, near_bits, closest + c, closest_pattern + c)
    team_release(threads)
    for c in range(1, chunks):
        if closest[c] < closest[best]:
            best = c
    closest_distance[0] = closest[best]
    closest_input[0] = closest_pattern[best]
    free(closest)
    free(closest_pattern)
    return flagged
