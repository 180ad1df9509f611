# The entry points of ArgMax and ArgMin (docs/specification.md §12) and of
# np.argmax / np.argmin, in the routes module: they check the arrays, or
# take a plain array and a Python int axis as they come (arg_direct), and
# call one build's loops (arg_reduce.pxi) through its table; methods of
# the build (kernel_build.pxi).


def arg_reduce(KernelBuild build, x, out, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner, bint is_min,
               bint last, bint find_nan, int n_threads):
    """ArgMax (ArgMin when is_min) of the outer x n x inner array x along n
    into the int64 array out (outer x inner). last: select_last_index;
    find_nan: NumPy's rule (the first NaN wins) instead of ONNX's (NaN never
    wins unless first). x: float32/64 or any 8..64-bit integer type."""
    outer_n_inner_check(outer, n, inner)
    if not isinstance(x, cnp.ndarray):
        raise TypeError("kernel argument 'x' must be an ndarray")
    cdef int t = cnp.PyArray_TYPE(<cnp.ndarray>x)
    check_array(x, t, shape_size(outer, n, inner), False, "x")
    check_array(out, cnp.NPY_INT64, shape_size(outer, inner), True, "out")
    cdef int element = element_type(x)
    if element < 0:
        raise TypeError(f"arg_reduce does not take {x.dtype}")
    cdef const void* px = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef int64_t* po = <int64_t*>cnp.PyArray_DATA(<cnp.ndarray>out)
    cdef int done
    with nogil:
        done = build.table.arg_reduce(element, px, po, outer, n, inner, is_min, last, find_nan, n_threads)
    if done < 0:
        raise MemoryError()


# One call from the front layer for the common case: a plain float32/float64
# array (is_plain_float, kernel_table.pxd) and a Python int axis in range. None for
# anything else: the front layer's general path then checks and computes it.

def arg_direct(KernelBuild build, x, axis, bint keepdims, bint is_min, bint last, bint find_nan, int n_threads,
               bint scalar):
    """ArgMax (ArgMin when is_min) of a plain, non-empty x of rank >= 1
    along ``axis`` (None: the flattened array) as int64 in the result's
    shape (keepdims: the axis kept as 1, every axis with None); a 0-d
    result as a NumPy scalar when ``scalar``."""
    if not is_plain_float(x):
        return None
    cdef cnp.ndarray a = <cnp.ndarray>x
    cdef int nd = cnp.PyArray_NDIM(a), i, k, out_nd = 0
    cdef cnp.npy_intp* shape = cnp.PyArray_DIMS(a)
    cdef cnp.npy_intp dims[64]
    cdef Py_ssize_t size = cnp.PyArray_SIZE(a), outer = 1, n, inner = 1
    if nd == 0 or size == 0:
        return None
    if axis is None:
        n = size
        if keepdims:
            for i in range(nd):
                dims[i] = 1
            out_nd = nd
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
            if i != k or keepdims:
                dims[out_nd] = 1 if i == k else shape[i]
                out_nd += 1
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(out_nd, dims, cnp.NPY_INT64, 0)
    cdef int element = ELEMENT_FLOAT32 if cnp.PyArray_TYPE(a) == cnp.NPY_FLOAT32 else ELEMENT_FLOAT64
    cdef const void* px = cnp.PyArray_DATA(a)
    cdef int64_t* po = <int64_t*>cnp.PyArray_DATA(out)
    cdef PyThreadState* saved = gil_release(outer * n * inner)  # nothing below touches a Python object
    cdef int done = build.table.arg_reduce(element, px, po, outer, n, inner, is_min, last, find_nan, n_threads)
    gil_restore(saved)
    if done < 0:
        raise MemoryError()
    return scalar_or_array(out, scalar)
