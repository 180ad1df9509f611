# The entry points of Sigmoid (docs/specification.md §10.1), in the routes
# module: they check the arrays, place the output and call one kernel
# build's loop (activation.pxi) through its table; methods of the build
# (kernel_build.pxi).


cpdef object sigmoid_flat(KernelBuild build, object x, object y, bint fast, int n_threads):
    """Sigmoid of the contiguous float32/float64/float16/bfloat16 array x
    into y of the same dtype, in chunks of 16384 elements (element-wise:
    the bits never depend on threads)."""
    cdef Storage storage = storage_of(x, "x")
    cdef int t = cnp.PyArray_TYPE(<cnp.ndarray>x)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>x)
    check_array(x, t, n, False, "x")
    check_array(y, t, n, True, "y")
    cdef const void* px = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* py = cnp.PyArray_DATA(<cnp.ndarray>y)
    cdef PyThreadState* saved = gil_release(n)  # nothing below touches a Python object
    cdef int done = build.table.sigmoid(px, py, storage, n, fast, n_threads)
    gil_restore(saved)
    if done < 0:
        raise MemoryError()
    return None


cpdef object sigmoid_direct(KernelBuild build, object x, bint fast, int n_threads):
    """ONNX Sigmoid of x, the thread count and flavour settled, when x is a
    non-empty, aligned, native, C-contiguous float32 or float64 ndarray (or
    float16, where the build converts it itself); else None."""
    if fast_storage(x) < 0 or cnp.PyArray_SIZE(<cnp.ndarray>x) == 0:
        return None
    cdef cnp.ndarray y = kernel_output_like(<cnp.ndarray>x)
    sigmoid_flat(build, x, y, fast, n_threads)
    return y
