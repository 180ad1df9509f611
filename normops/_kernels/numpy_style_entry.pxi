# The per-call routes of the NumPy-style functions' own arithmetic
# (docs/specification.md §16.2), in the routes module: sum, prod, max, min
# and mean with where= and initial=, and var / std. A call with a plain
# float32/float64 array (and a C-contiguous bool mask of its shape) whose
# axes need no transposition (direct_layout, axes.pxi) is computed in one
# call of a build's loops (numpy_style.pxi); anything else returns None and
# normops/numpy_style.py computes it. Methods of the build
# (kernel_build.pxi).


def reduce_where_direct(KernelBuild build, x, where, axes, bint keepdims, int op, int n_threads, bint has_initial,
                        double initial, bint mean):
    """sum / prod / max / min (op 0, 4, 7, 8) of a plain float32/float64
    array over NumPy-style ``axes`` with ``where`` (None, or a C-contiguous
    bool array of x's shape: the left-out elements become the op's
    identity in place) and ``initial`` (one more step after the
    reduction), or mean (op 0, ``mean``: divided by the selected count), a
    0-d result as a NumPy scalar; None when the call needs the general
    path (another array, a transposition, a zero extent)."""
    if not is_plain_float(x):
        return None
    cdef cnp.ndarray a = <cnp.ndarray>x
    if where is not None and not plain_mask(where, a):
        return None
    cdef Py_ssize_t O, R, C
    cdef cnp.npy_intp dims[64]
    cdef int out_nd
    if not direct_layout(a, axes, False, keepdims, &O, &R, &C, dims, &out_nd):
        return None
    cdef int t = cnp.PyArray_TYPE(a)
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(out_nd, dims, t, 0)
    cdef const void* px = cnp.PyArray_DATA(a)
    cdef const unsigned char* pw = NULL
    if where is not None:
        pw = <const unsigned char*>cnp.PyArray_DATA(<cnp.ndarray>where)
    cdef void* po = cnp.PyArray_DATA(out)
    cdef bint is_float32 = t == cnp.NPY_FLOAT32
    if O * R * C < GIL_KEPT_BELOW_ELEMENTS:  # the GIL kept, as gil_release keeps it
        build.table.reduce_where(is_float32, px, pw, O, R, C, op, n_threads, has_initial, initial, mean, po)
    else:
        with nogil:
            build.table.reduce_where(is_float32, px, pw, O, R, C, op, n_threads, has_initial, initial, mean, po)
    return scalar_or_array(out, True)


def variance_direct(KernelBuild build, x, where, axes, bint keepdims, double ddof, bint root, int n_threads):
    """var (std with ``root``) of a plain float32/float64 array over
    NumPy-style ``axes``, ``where`` None or a C-contiguous bool array of
    x's shape; a 0-d result as a NumPy scalar. None when the call needs the
    general path (another array, a transposition, a zero extent)."""
    if not is_plain_float(x):
        return None
    cdef cnp.ndarray a = <cnp.ndarray>x
    if where is not None and not plain_mask(where, a):
        return None
    cdef Py_ssize_t O, R, C
    cdef cnp.npy_intp dims[64]
    cdef int out_nd
    if not direct_layout(a, axes, False, keepdims, &O, &R, &C, dims, &out_nd):
        return None
    cdef int t = cnp.PyArray_TYPE(a)
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(out_nd, dims, t, 0)
    cdef const void* px = cnp.PyArray_DATA(a)
    cdef const unsigned char* pw = NULL
    if where is not None:
        pw = <const unsigned char*>cnp.PyArray_DATA(<cnp.ndarray>where)
    cdef void* po = cnp.PyArray_DATA(out)
    if O * R * C < GIL_KEPT_BELOW_ELEMENTS:  # the GIL kept, as gil_release keeps it
        build.table.variance(t == cnp.NPY_FLOAT32, px, pw, O, R, C, ddof, root, n_threads, po)
    else:
        with nogil:
            build.table.variance(t == cnp.NPY_FLOAT32, px, pw, O, R, C, ddof, root, n_threads, po)
    return scalar_or_array(out, True)
