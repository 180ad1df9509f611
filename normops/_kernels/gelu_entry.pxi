# The entry points of Gelu and BiasGelu and of normops' own erf and tanh
# (docs/transcendentals.md), in the routes module: each checks its arrays
# and calls the loops of one kernel build (gelu.pxi) through its table;
# methods of the build (kernel_build.pxi), as transcendental_entry.pxi's.


def erf32_into(KernelBuild build, x, out, int n_threads=1, bint scalar=False):
    """out = erf32(x) (float32 contiguous arrays of one size; out may be x):
    faithful (below 1 ulp, float32 arithmetic, proven over every input).
    ``scalar``: the one-at-a-time loop."""
    run_map(build, NORMOPS_T_ERF32, x, out, cnp.NPY_FLOAT32, n_threads, scalar)


def tanh32_into(KernelBuild build, x, out, int n_threads=1, bint scalar=False):
    """out = tanh32(x): faithful, within 0.5 + 2^-26 ulp (see erf32_into)."""
    run_map(build, NORMOPS_T_TANH32, x, out, cnp.NPY_FLOAT32, n_threads, scalar)


def erf64_into(KernelBuild build, x, out, int n_threads=1, bint scalar=False):
    """out = erf64(x): float64, about one ulp."""
    run_map(build, NORMOPS_T_ERF64, x, out, cnp.NPY_FLOAT64, n_threads, scalar)


def tanh64_into(KernelBuild build, x, out, int n_threads=1, bint scalar=False):
    """out = tanh64(x): float64, about one ulp."""
    run_map(build, NORMOPS_T_TANH64, x, out, cnp.NPY_FLOAT64, n_threads, scalar)


def erf32_fast_into(KernelBuild build, x, out, int n_threads=1, bint scalar=False):
    """out = the fast flavour's erf (float32 arithmetic, about 2 ulp)."""
    run_map(build, NORMOPS_T_ERF32_FAST, x, out, cnp.NPY_FLOAT32, n_threads, scalar)


def tanh32_fast_into(KernelBuild build, x, out, int n_threads=1, bint scalar=False):
    """out = the fast flavour's tanh (float32 arithmetic, about 2 ulp)."""
    run_map(build, NORMOPS_T_TANH32_FAST, x, out, cnp.NPY_FLOAT32, n_threads, scalar)


cpdef object gelu_flat(KernelBuild build, object x, object b, object y, bint tanh, bint fast, int n_threads):
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
    cdef PyThreadState* saved = gil_release(n)  # nothing below touches a Python object
    build.table.gelu(px, pb, cols, py, n, t == cnp.NPY_FLOAT32, tanh, fast, n_threads)
    gil_restore(saved)
    return None
