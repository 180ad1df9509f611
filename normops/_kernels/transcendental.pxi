# Entry points of normops' own exp, log and log1p (transcendental.h,
# docs/transcendentals.md): element-wise maps over contiguous arrays, the
# pattern ranges of the exhaustive check, and its long-double reference.

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
    # for the entry points below
    enum normops_tfunc:
        NORMOPS_T_EXP32
        NORMOPS_T_LOG32
        NORMOPS_T_EXP32_FAST
        NORMOPS_T_EXP64
        NORMOPS_T_LOG64
        NORMOPS_T_LOG1P32
        NORMOPS_T_LOG1P64
        NORMOPS_T_SCALAR
    void normops_tfunc_map(int which, const void* x, void* y, Py_ssize_t n)
    void normops_tfunc_range(int which, uint64_t start, uint64_t stride, Py_ssize_t n, uint32_t* out)
    void normops_tfunc_pairs(int which, const float* x, double* hi, double* lo, Py_ssize_t n)

cdef extern from "transcendental_reference.h" nogil:
    const int NORMOPS_HAVE_LONG_DOUBLE_REFERENCE
    Py_ssize_t normops_reference_range(int which, const uint32_t* patterns, uint64_t start, uint64_t stride,
                                       Py_ssize_t n, uint32_t* out, uint8_t* near, int near_bits,
                                       double* closest, uint32_t* closest_pattern)

cdef enum:
    REFERENCE_EXP = 0
    REFERENCE_LOG = 1
    REFERENCE_LOG1P = 2


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


cdef int run_map(int which, object x, object out, int typenum, int n_threads, bint scalar) except -1:
    if not isinstance(x, cnp.ndarray):
        raise TypeError("kernel argument 'x' must be an ndarray")
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>x)
    check_array(x, typenum, n, False, "x")
    check_array(out, typenum, n, True, "out")
    cdef const char* px = <const char*>cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef char* py = <char*>cnp.PyArray_DATA(<cnp.ndarray>out)
    cdef Py_ssize_t itemsize = 4 if typenum == cnp.NPY_FLOAT32 else 8
    if scalar:
        which |= NORMOPS_T_SCALAR
    with nogil:
        map_chunks(which, px, py, n, itemsize, n_threads)
    return 0


def exp32_into(x, out, int n_threads=1, bint scalar=False):
    """out = exp32(x): correctly rounded e^x, float32 contiguous arrays of
    one size (out may be x). ``scalar`` runs the one-element-at-a-time
    loop instead of the vectorised one (same bits; for tests)."""
    run_map(NORMOPS_T_EXP32, x, out, cnp.NPY_FLOAT32, n_threads, scalar)


def log32_into(x, out, int n_threads=1, bint scalar=False):
    """out = log32(x): correctly rounded natural log (see exp32_into)."""
    run_map(NORMOPS_T_LOG32, x, out, cnp.NPY_FLOAT32, n_threads, scalar)


def exp32_fast_into(x, out, int n_threads=1, bint scalar=False):
    """out = the fast flavour's e^x (float32 arithmetic, see
    docs/transcendentals.md for its error bound)."""
    run_map(NORMOPS_T_EXP32_FAST, x, out, cnp.NPY_FLOAT32, n_threads, scalar)


def log1p32_into(x, out, int n_threads=1, bint scalar=False):
    """out = log1p32(x): correctly rounded log(1 + x) (see exp32_into)."""
    run_map(NORMOPS_T_LOG1P32, x, out, cnp.NPY_FLOAT32, n_threads, scalar)


def log1p64_into(x, out, int n_threads=1, bint scalar=False):
    """out = log1p64(x): float64 log(1 + x), error below one ulp."""
    run_map(NORMOPS_T_LOG1P64, x, out, cnp.NPY_FLOAT64, n_threads, scalar)


def exp64_into(x, out, int n_threads=1, bint scalar=False):
    """out = exp64(x): float64 e^x, error below one ulp."""
    run_map(NORMOPS_T_EXP64, x, out, cnp.NPY_FLOAT64, n_threads, scalar)


def log64_into(x, out, int n_threads=1, bint scalar=False):
    """out = log64(x): float64 natural log, error below one ulp."""
    run_map(NORMOPS_T_LOG64, x, out, cnp.NPY_FLOAT64, n_threads, scalar)


cdef int run_pairs(int which, object x, object hi, object lo) except -1:
    if not isinstance(x, cnp.ndarray):
        raise TypeError("kernel argument 'x' must be an ndarray")
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>x)
    check_array(x, cnp.NPY_FLOAT32, n, False, "x")
    check_array(hi, cnp.NPY_FLOAT64, n, True, "hi")
    check_array(lo, cnp.NPY_FLOAT64, n, True, "lo")
    with nogil:
        normops_tfunc_pairs(which, <const float*>cnp.PyArray_DATA(<cnp.ndarray>x),
                            <double*>cnp.PyArray_DATA(<cnp.ndarray>hi), <double*>cnp.PyArray_DATA(<cnp.ndarray>lo), n)
    return 0


def exp32_pair_into(x, hi, lo):
    """hi + lo (float64 arrays): the unevaluated pair that exp32 rounds to
    float32, for finite x in [-104, 89] (error measurements)."""
    run_pairs(NORMOPS_T_EXP32, x, hi, lo)


def log32_pair_into(x, hi, lo):
    """As exp32_pair_into, for log32 (finite x > 0)."""
    run_pairs(NORMOPS_T_LOG32, x, hi, lo)


# ------------------------------------------------- the exhaustive check

cdef int check_range(uint64_t start, uint64_t count, uint64_t stride, object out, object near) except -1:
    if stride < 1:
        raise ValueError("stride must be >= 1")
    if count > 0 and <object>start + (<object>count - 1) * <object>stride > 0xFFFFFFFF:  # Python ints: no wrap
        raise ValueError("the patterns start + i*stride, i < count, must stay below 2^32")
    check_array(out, cnp.NPY_UINT32, <Py_ssize_t>count, True, "out")
    if near is not None:
        check_array(near, cnp.NPY_UINT8, <Py_ssize_t>count, True, "near")
    return 0


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


cdef run_range(int which, uint64_t start, uint64_t count, object out, uint64_t stride, int n_threads, bint scalar):
    check_range(start, count, stride, out, None)
    if scalar:
        which |= NORMOPS_T_SCALAR
    with nogil:
        range_chunks(which, start, stride, <Py_ssize_t>count,
                     <uint32_t*>cnp.PyArray_DATA(<cnp.ndarray>out), n_threads)


def exp32_range(uint64_t start_bits, uint64_t count, out, uint64_t stride=1, int n_threads=1, bint scalar=False):
    """out[i] = pattern of exp32 of the float32 whose pattern is
    start_bits + i*stride, i < count (out: uint32, count elements)."""
    run_range(NORMOPS_T_EXP32, start_bits, count, out, stride, n_threads, scalar)


def log32_range(uint64_t start_bits, uint64_t count, out, uint64_t stride=1, int n_threads=1, bint scalar=False):
    """As exp32_range, for log32."""
    run_range(NORMOPS_T_LOG32, start_bits, count, out, stride, n_threads, scalar)


def log1p32_range(uint64_t start_bits, uint64_t count, out, uint64_t stride=1, int n_threads=1,
                  bint scalar=False):
    """As exp32_range, for log1p32."""
    run_range(NORMOPS_T_LOG1P32, start_bits, count, out, stride, n_threads, scalar)


def exp32_fast_range(uint64_t start_bits, uint64_t count, out, uint64_t stride=1, int n_threads=1,
                     bint scalar=False):
    """As exp32_range, for the fast exponential."""
    run_range(NORMOPS_T_EXP32_FAST, start_bits, count, out, stride, n_threads, scalar)


def has_long_double_reference():
    """True when this build has the x86 long-double reference."""
    return bool(NORMOPS_HAVE_LONG_DOUBLE_REFERENCE)


cdef object run_reference(int which, object patterns, uint64_t start, uint64_t count, object out, object near,
                          uint64_t stride, int n_threads, int near_bits):
    """The long-double reference over chunks of ROW_CHUNK_ELEMENTS inputs;
    returns (flagged, closest distance in ulps, its input pattern)."""
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    if not NORMOPS_HAVE_LONG_DOUBLE_REFERENCE:
        raise NotImplementedError("this build has no x86 long-double reference; check the golden digest instead")
    check_range(start if patterns is None else 0, count, stride, out, near)
    if patterns is not None:
        check_array(patterns, cnp.NPY_FLOAT32, <Py_ssize_t>count, False, "x")
    cdef const uint32_t* pp = <const uint32_t*>data_or_null(patterns)
    cdef uint32_t* po = <uint32_t*>cnp.PyArray_DATA(<cnp.ndarray>out)
    cdef uint8_t* pn = <uint8_t*>cnp.PyArray_DATA(<cnp.ndarray>near)
    cdef Py_ssize_t n = <Py_ssize_t>count, chunks = chunk_count(n), c, first, length, flagged = 0
    cdef int threads = whole_team(n_threads, chunks)
    # one closest-to-a-midpoint slot per chunk (prange has no min reduction)
    cdef Py_ssize_t slots = max(chunks, 1), best = 0
    cdef double* closest = <double*>malloc(slots * sizeof(double))
    cdef uint32_t* closest_pattern = <uint32_t*>malloc(slots * sizeof(uint32_t))
    if closest == NULL or closest_pattern == NULL:
        free(closest)
        free(closest_pattern)
        raise MemoryError()
    closest[0] = 1.0
    closest_pattern[0] = 0
    try:
        with nogil:
            threads = team_take(threads, n_threads)
            for c in prange(chunks, schedule='dynamic', num_threads=threads):
                normops_team_claims(claimed)
                first = c * ROW_CHUNK_ELEMENTS
                length = min(ROW_CHUNK_ELEMENTS, n - first)
                flagged += normops_reference_range(which, pp if pp == NULL else pp + first,
                                                   start + <uint64_t>first * stride, stride, length,
                                                   po + first, pn + first, near_bits,
                                                   closest + c, closest_pattern + c)
            team_release(threads)
            for c in range(1, chunks):
                if closest[c] < closest[best]:
                    best = c
        return flagged, closest[best], closest_pattern[best]
    finally:
        free(closest)
        free(closest_pattern)


def exp32_reference_range(uint64_t start_bits, uint64_t count, out, near, uint64_t stride=1, int n_threads=1,
                          int near_bits=36):
    """out[i] = pattern of (float) expl(x) for x of pattern start_bits +
    i*stride (canonical NaN); near[i] = 1 where expl(x) lies within
    2^-near_bits ulp of a float32 midpoint (recheck those with mpmath).
    Returns (number flagged, smallest distance to a midpoint in ulps, the
    pattern of that input). Verification only: x86 long double and libm."""
    return run_reference(REFERENCE_EXP, None, start_bits, count, out, near, stride, n_threads, near_bits)


def log32_reference_range(uint64_t start_bits, uint64_t count, out, near, uint64_t stride=1, int n_threads=1,
                          int near_bits=36):
    """As exp32_reference_range, with logl."""
    return run_reference(REFERENCE_LOG, None, start_bits, count, out, near, stride, n_threads, near_bits)


def log1p32_reference_range(uint64_t start_bits, uint64_t count, out, near, uint64_t stride=1,
                            int n_threads=1, int near_bits=36):
    """As exp32_reference_range, with log1pl."""
    return run_reference(REFERENCE_LOG1P, None, start_bits, count, out, near, stride, n_threads, near_bits)


def exp32_reference_into(x, out, near, int n_threads=1, int near_bits=36):
    """exp32_reference_range on the elements of the float32 array x."""
    return run_reference(REFERENCE_EXP, x, 0, cnp.PyArray_SIZE(<cnp.ndarray>x), out, near, 1, n_threads, near_bits)


def log32_reference_into(x, out, near, int n_threads=1, int near_bits=36):
    """log32_reference_range on the elements of the float32 array x."""
    return run_reference(REFERENCE_LOG, x, 0, cnp.PyArray_SIZE(<cnp.ndarray>x), out, near, 1, n_threads, near_bits)


def log1p32_reference_into(x, out, near, int n_threads=1, int near_bits=36):
    """log1p32_reference_range on the elements of the float32 array x."""
    return run_reference(REFERENCE_LOG1P, x, 0, cnp.PyArray_SIZE(<cnp.ndarray>x), out, near, 1, n_threads,
                         near_bits)
