# The entry point of the canonical Sum16 of rows (docs/specification.md §3),
# in the routes module: it checks the arrays and calls one build's loop
# (sum16.pxi); a method of the build (kernel_build.pxi).


def sum16_rows(KernelBuild build, x, out, Py_ssize_t rows, Py_ssize_t cols):
    """out[r] = Sum16(x[r, :]) for a rows x cols matrix (the building block)."""
    cdef int t = float_typenum(x)
    check_array(x, t, shape_size(rows, cols), False, "x")
    check_array(out, t, rows, True, "out")
    cdef const void* px = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* po = cnp.PyArray_DATA(<cnp.ndarray>out)
    with nogil:
        build.table.sum16_rows(px, po, rows, cols, t == cnp.NPY_FLOAT32)
