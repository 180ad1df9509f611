# The entry points of CumSum and CumProd (docs/specification.md §13) and of
# np.cumsum / np.cumprod, in the routes module: they check the arrays, or
# take a plain array and its axis as they come (cum_direct), and call one
# build's loops (cumulative.pxi) through its table; methods of the build
# (kernel_build.pxi).

from libc.stdint cimport int32_t, int64_t


def cumulate(KernelBuild build, x, y, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner, bint multiply,
             bint exclusive, bint reverse, int n_threads):
    """CumSum (CumProd when multiply) of the outer x n x inner array x along
    n into y (same dtype: float32, float64, uint32 or uint64; signed
    integers are passed as their unsigned view)."""
    outer_n_inner_check(outer, n, inner)
    if not isinstance(x, cnp.ndarray):
        raise TypeError("kernel argument 'x' must be an ndarray")
    cdef int t = cnp.PyArray_TYPE(<cnp.ndarray>x)
    check_array(x, t, shape_size(outer, n, inner), False, "x")
    check_array(y, t, shape_size(outer, n, inner), True, "y")
    cdef int element = element_type(x)
    if not (element == ELEMENT_FLOAT32 or element == ELEMENT_FLOAT64 or element == ELEMENT_UINT32
            or element == ELEMENT_UINT64):
        raise TypeError(f"cumulate does not take {x.dtype}")
    if outer * n * inner == 0:
        return
    cdef const void* px = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* py = cnp.PyArray_DATA(<cnp.ndarray>y)
    with nogil:
        build.table.cumulate(element, px, py, outer, n, inner, multiply, exclusive, reverse, n_threads)


# One call from the front layer for the common case (see arg_reduce_entry.pxi).

cpdef object cum_direct(KernelBuild build, object x, object axis, bint exclusive, bint reverse, bint multiply,
                        int n_threads):
    """CumSum (CumProd when multiply) of a plain, non-empty x of rank >= 1
    along ``axis``: a Python int, a 0-d or one-element int32/int64 ndarray
    (ONNX's input), or None (the flattened array, as NumPy's cumsum)."""
    if not is_plain_float(x):
        return None
    cdef cnp.ndarray a = <cnp.ndarray>x
    cdef int nd = cnp.PyArray_NDIM(a), i, k, t
    cdef cnp.npy_intp* shape = cnp.PyArray_DIMS(a)
    cdef Py_ssize_t size = cnp.PyArray_SIZE(a), outer = 1, n, inner = 1
    cdef cnp.npy_intp flat = size
    cdef long v
    cdef cnp.ndarray y
    if nd == 0 or size == 0:
        return None
    if axis is None:
        n = size
        y = cnp.PyArray_EMPTY(1, &flat, cnp.PyArray_TYPE(a), 0) if nd != 1 else placed_like(a)
    else:
        if type(axis) is cnp.ndarray:
            t = cnp.PyArray_TYPE(<cnp.ndarray>axis)
            if (t != cnp.NPY_INT64 and t != cnp.NPY_INT32) or cnp.PyArray_NDIM(<cnp.ndarray>axis) > 1 \
                    or cnp.PyArray_SIZE(<cnp.ndarray>axis) != 1 or not cnp.PyArray_ISALIGNED(<cnp.ndarray>axis) \
                    or not cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>axis):
                return None
            if t == cnp.NPY_INT64:
                v = (<const int64_t*>cnp.PyArray_DATA(<cnp.ndarray>axis))[0]
            else:
                v = (<const int32_t*>cnp.PyArray_DATA(<cnp.ndarray>axis))[0]
            if not -nd <= v < nd:
                return None
            k = <int>(v + nd if v < 0 else v)
        else:
            k = plain_axis(axis, nd)
            if k < 0:
                return None
        n = shape[k]
        for i in range(nd):
            if i < k:
                outer *= shape[i]
            elif i > k:
                inner *= shape[i]
        y = placed_like(a)
    cdef int element = ELEMENT_FLOAT32 if cnp.PyArray_TYPE(a) == cnp.NPY_FLOAT32 else ELEMENT_FLOAT64
    cdef const void* px = cnp.PyArray_DATA(a)
    cdef void* py = cnp.PyArray_DATA(y)
    cdef PyThreadState* saved = gil_release(outer * n * inner)  # nothing below touches a Python object
    build.table.cumulate(element, px, py, outer, n, inner, multiply, exclusive, reverse, n_threads)
    gil_restore(saved)
    return y
