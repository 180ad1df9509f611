# The entry points of normops' own exp, log and log1p
# (docs/transcendentals.md), in the routes module: each checks its arrays
# and calls the loops of one kernel build (transcendental.pxi) through its
# table. They are methods of the build (kernel_build.pxi):
# ``normops._isa.kernels.exp32_into(x, out)`` runs the chosen build's,
# ``normops._isa.load("avx2").exp32_into(x, out)`` the AVX2 build's.

from libc.stdint cimport uint8_t, uint32_t, uint64_t


cdef int run_map(KernelBuild build, int which, object x, object out, int typenum, int n_threads,
                 bint scalar) except -1:
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
        build.table.function_map(which, px, py, n, itemsize, n_threads)
    return 0


def exp32_into(KernelBuild build, x, out, int n_threads=1, bint scalar=False):
    """out = exp32(x): correctly rounded e^x, float32 contiguous arrays of
    one size (out may be x). ``scalar`` runs the one-element-at-a-time
    loop instead of the vectorised one (same bits; for tests)."""
    run_map(build, NORMOPS_T_EXP32, x, out, cnp.NPY_FLOAT32, n_threads, scalar)


def log32_into(KernelBuild build, x, out, int n_threads=1, bint scalar=False):
    """out = log32(x): correctly rounded natural log (see exp32_into)."""
    run_map(build, NORMOPS_T_LOG32, x, out, cnp.NPY_FLOAT32, n_threads, scalar)


def exp32_fast_into(KernelBuild build, x, out, int n_threads=1, bint scalar=False):
    """out = the fast flavour's e^x (float32 arithmetic, see
    docs/transcendentals.md for its error bound)."""
    run_map(build, NORMOPS_T_EXP32_FAST, x, out, cnp.NPY_FLOAT32, n_threads, scalar)


def log1p32_into(KernelBuild build, x, out, int n_threads=1, bint scalar=False):
    """out = log1p32(x): correctly rounded log(1 + x) (see exp32_into)."""
    run_map(build, NORMOPS_T_LOG1P32, x, out, cnp.NPY_FLOAT32, n_threads, scalar)


def log1p64_into(KernelBuild build, x, out, int n_threads=1, bint scalar=False):
    """out = log1p64(x): float64 log(1 + x), error below one ulp."""
    run_map(build, NORMOPS_T_LOG1P64, x, out, cnp.NPY_FLOAT64, n_threads, scalar)


def exp64_into(KernelBuild build, x, out, int n_threads=1, bint scalar=False):
    """out = exp64(x): float64 e^x, error below one ulp."""
    run_map(build, NORMOPS_T_EXP64, x, out, cnp.NPY_FLOAT64, n_threads, scalar)


def log64_into(KernelBuild build, x, out, int n_threads=1, bint scalar=False):
    """out = log64(x): float64 natural log, error below one ulp."""
    run_map(build, NORMOPS_T_LOG64, x, out, cnp.NPY_FLOAT64, n_threads, scalar)


cdef int run_pairs(KernelBuild build, int which, object x, object hi, object lo) except -1:
    if not isinstance(x, cnp.ndarray):
        raise TypeError("kernel argument 'x' must be an ndarray")
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>x)
    check_array(x, cnp.NPY_FLOAT32, n, False, "x")
    check_array(hi, cnp.NPY_FLOAT64, n, True, "hi")
    check_array(lo, cnp.NPY_FLOAT64, n, True, "lo")
    with nogil:
        build.table.function_pairs(which, <const float*>cnp.PyArray_DATA(<cnp.ndarray>x),
                                   <double*>cnp.PyArray_DATA(<cnp.ndarray>hi),
                                   <double*>cnp.PyArray_DATA(<cnp.ndarray>lo), n)
    return 0


def exp32_pair_into(KernelBuild build, x, hi, lo):
    """hi + lo (float64 arrays): the unevaluated pair that exp32 rounds to
    float32, for finite x in [-104, 89] (error measurements)."""
    run_pairs(build, NORMOPS_T_EXP32, x, hi, lo)


def log32_pair_into(KernelBuild build, x, hi, lo):
    """As exp32_pair_into, for log32 (finite x > 0)."""
    run_pairs(build, NORMOPS_T_LOG32, x, hi, lo)


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


cdef run_range(KernelBuild build, int which, uint64_t start, uint64_t count, object out, uint64_t stride,
               int n_threads, bint scalar):
    check_range(start, count, stride, out, None)
    if scalar:
        which |= NORMOPS_T_SCALAR
    with nogil:
        build.table.function_range(which, start, stride, <Py_ssize_t>count,
                                   <uint32_t*>cnp.PyArray_DATA(<cnp.ndarray>out), n_threads)


def exp32_range(KernelBuild build, uint64_t start_bits, uint64_t count, out, uint64_t stride=1, int n_threads=1,
                bint scalar=False):
    """out[i] = pattern of exp32 of the float32 whose pattern is
    start_bits + i*stride, i < count (out: uint32, count elements)."""
    run_range(build, NORMOPS_T_EXP32, start_bits, count, out, stride, n_threads, scalar)


def log32_range(KernelBuild build, uint64_t start_bits, uint64_t count, out, uint64_t stride=1, int n_threads=1,
                bint scalar=False):
    """As exp32_range, for log32."""
    run_range(build, NORMOPS_T_LOG32, start_bits, count, out, stride, n_threads, scalar)


def log1p32_range(KernelBuild build, uint64_t start_bits, uint64_t count, out, uint64_t stride=1, int n_threads=1,
                  bint scalar=False):
    """As exp32_range, for log1p32."""
    run_range(build, NORMOPS_T_LOG1P32, start_bits, count, out, stride, n_threads, scalar)


def exp32_fast_range(KernelBuild build, uint64_t start_bits, uint64_t count, out, uint64_t stride=1,
                     int n_threads=1, bint scalar=False):
    """As exp32_range, for the fast exponential."""
    run_range(build, NORMOPS_T_EXP32_FAST, start_bits, count, out, stride, n_threads, scalar)


def has_long_double_reference(KernelBuild build):
    """True when this build has the x86 long-double reference."""
    return bool(build.table.has_long_double_reference)


cdef object run_reference(KernelBuild build, int which, object patterns, uint64_t start, uint64_t count,
                          object out, object near, uint64_t stride, int n_threads, int near_bits):
    """The long-double reference (the build's reference_range): (flagged,
    closest distance in ulps, its input pattern)."""
    if not build.table.has_long_double_reference:
        raise NotImplementedError("this build has no x86 long-double reference; check the golden digest instead")
    check_range(start if patterns is None else 0, count, stride, out, near)
    if patterns is not None:
        check_array(patterns, cnp.NPY_FLOAT32, <Py_ssize_t>count, False, "x")
    cdef const uint32_t* pp = <const uint32_t*>data_or_null(patterns)
    cdef uint32_t* po = <uint32_t*>cnp.PyArray_DATA(<cnp.ndarray>out)
    cdef uint8_t* pn = <uint8_t*>cnp.PyArray_DATA(<cnp.ndarray>near)
    cdef Py_ssize_t flagged
    cdef double closest = 1.0
    cdef uint32_t closest_pattern = 0
    with nogil:
        flagged = build.table.reference_range(which, pp, start, stride, <Py_ssize_t>count, po, pn, near_bits,
                                              n_threads, &closest, &closest_pattern)
    if flagged < 0:
        raise MemoryError()
    return flagged, closest, closest_pattern


def exp32_reference_range(KernelBuild build, uint64_t start_bits, uint64_t count, out, near, uint64_t stride=1,
                          int n_threads=1, int near_bits=36):
    """out[i] = pattern of (float) expl(x) for x of pattern start_bits +
    i*stride (canonical NaN); near[i] = 1 where expl(x) lies within
    2^-near_bits ulp of a float32 midpoint (recheck those with mpmath).
    Returns (number flagged, smallest distance to a midpoint in ulps, the
    pattern of that input). Verification only: x86 long double and libm."""
    return run_reference(build, NORMOPS_REFERENCE_EXP, None, start_bits, count, out, near, stride, n_threads,
                         near_bits)


def log32_reference_range(KernelBuild build, uint64_t start_bits, uint64_t count, out, near, uint64_t stride=1,
                          int n_threads=1, int near_bits=36):
    """As exp32_reference_range, with logl."""
    return run_reference(build, NORMOPS_REFERENCE_LOG, None, start_bits, count, out, near, stride, n_threads,
                         near_bits)


def log1p32_reference_range(KernelBuild build, uint64_t start_bits, uint64_t count, out, near, uint64_t stride=1,
                            int n_threads=1, int near_bits=36):
    """As exp32_reference_range, with log1pl."""
    return run_reference(build, NORMOPS_REFERENCE_LOG1P, None, start_bits, count, out, near, stride, n_threads,
                         near_bits)


def exp32_reference_into(KernelBuild build, x, out, near, int n_threads=1, int near_bits=36):
    """exp32_reference_range on the elements of the float32 array x."""
    return run_reference(build, NORMOPS_REFERENCE_EXP, x, 0, cnp.PyArray_SIZE(<cnp.ndarray>x), out, near, 1,
                         n_threads, near_bits)


def log32_reference_into(KernelBuild build, x, out, near, int n_threads=1, int near_bits=36):
    """log32_reference_range on the elements of the float32 array x."""
    return run_reference(build, NORMOPS_REFERENCE_LOG, x, 0, cnp.PyArray_SIZE(<cnp.ndarray>x), out, near, 1,
                         n_threads, near_bits)


def log1p32_reference_into(KernelBuild build, x, out, near, int n_threads=1, int near_bits=36):
    """log1p32_reference_range on the elements of the float32 array x."""
    return run_reference(build, NORMOPS_REFERENCE_LOG1P, x, 0, cnp.PyArray_SIZE(<cnp.ndarray>x), out, near, 1,
                         n_threads, near_bits)
