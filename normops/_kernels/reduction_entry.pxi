# The entry points of the Reduce* operators (docs/specification.md §11),
# in the routes module: they check the arrays, or find the layout of a
# plain array (reduce_direct, axes.pxi), and call one build's loops
# (reduction.pxi) through its table; methods of the build
# (kernel_build.pxi).


def reduce_accumulate(KernelBuild build, x, out, Py_ssize_t O, Py_ssize_t R, Py_ssize_t C, int op, center,
                      int n_threads):
    """out[o, c] = op over r < R of x[o, r, c] for the contiguous array x of
    O * R * C elements (C == 1: the row layout; C > 1: the column layout).
    float32/float64: op 0 sum, 1 sum of |x|, 2 sum of squares, 3 sum of
    exp(x - center[o, c]), 4 product, 5 max, 6 min (both ignoring NaN),
    7 max, 8 min (any NaN wins), 9 the sum of op 3 with the fast
    flavour's exponential (float64: op 3). int32/uint32/int64/uint64: the
    same ops but 3 and 9, wrapping around. R must be >= 1."""
    if not isinstance(x, cnp.ndarray):
        raise TypeError("kernel argument 'x' must be an ndarray")
    cdef int element = element_type(x)
    cdef bint is_float = element == ELEMENT_FLOAT32 or element == ELEMENT_FLOAT64
    cdef bint sum_exp = op == NORMOPS_R_SUM_EXP or op == NORMOPS_R_SUM_EXP_FAST
    if not (is_float or element == ELEMENT_INT32 or element == ELEMENT_UINT32 or element == ELEMENT_INT64
            or element == ELEMENT_UINT64) or (sum_exp and not is_float):
        raise TypeError(f"reduce_accumulate does not take dtype {x.dtype} with op {op}")
    cdef int t = cnp.PyArray_TYPE(<cnp.ndarray>x)
    if O < 0 or R < 1 or C < 1 or not 0 <= op <= 9:
        raise ValueError("reduce_accumulate needs O >= 0, R >= 1, C >= 1 and op in 0..9")
    check_array(x, t, shape_size(O, R, C), False, "x")
    check_array(out, t, shape_size(O, C), True, "out")
    if sum_exp:
        check_array(center, t, shape_size(O, C), False, "center")
    cdef const void* px = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* po = cnp.PyArray_DATA(<cnp.ndarray>out)
    cdef const void* pc = data_or_null(center) if sum_exp else NULL
    with nogil:
        build.table.reduce_accumulate(element, px, O, R, C, op, pc, po, n_threads)


def reduce_finish(KernelBuild build, x, out, Py_ssize_t O, Py_ssize_t R, Py_ssize_t C, int op, int finishing,
                  int n_threads):
    """out[o, c] = the finished reduction over r < R of the contiguous
    float32/float64 array x[o, r, c] (R >= 1): accumulation ``op`` (as in
    reduce_accumulate), then the finishing step ``finishing`` (0 none,
    1 mean, 2 sqrt, 3 log, 4 LogSumExp (op 3), 5 a NaN first element wins);
    every NaN canonical."""
    if not isinstance(x, cnp.ndarray):
        raise TypeError("kernel argument 'x' must be an ndarray")
    cdef int t = cnp.PyArray_TYPE(<cnp.ndarray>x)
    if t != cnp.NPY_FLOAT32 and t != cnp.NPY_FLOAT64:
        raise TypeError(f"reduce_finish does not take dtype {x.dtype}")
    if O < 0 or R < 1 or C < 1 or not 0 <= op <= 9 or not 0 <= finishing <= 5 or (
            (op == NORMOPS_R_SUM_EXP or op == NORMOPS_R_SUM_EXP_FAST) != (finishing == FINISH_LOGSUMEXP)):
        raise ValueError("reduce_finish needs O >= 0, R >= 1, C >= 1, op in 0..9, finishing in 0..5 "
                         "(4 with op 3 or 9 only)")
    check_array(x, t, shape_size(O, R, C), False, "x")
    check_array(out, t, shape_size(O, C), True, "out")
    cdef const void* px = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* po = cnp.PyArray_DATA(<cnp.ndarray>out)
    with nogil:
        build.table.reduce_finish(t == cnp.NPY_FLOAT32, px, O, R, C, op, finishing, po, n_threads)


def reduce_direct(KernelBuild build, x, axes, bint keepdims, int op, int finishing, int n_threads,
                  bint onnx_style, bint scalar):
    """The finished reduction (see reduce_finish) of a plain float32/float64
    array x (exact ndarray, native, aligned, C-contiguous, non-empty) over
    ``axes`` (see axis_set), in its output shape, computed without a copy;
    a 0-d result as a NumPy scalar when ``scalar``. None when anything is
    otherwise (another array or axes, an empty reduction, a layout that
    needs a transposition: direct_layout): the front layer's general path
    then checks and computes it."""
    if not is_plain_float(x):
        return None
    cdef cnp.ndarray a = <cnp.ndarray>x
    cdef Py_ssize_t O, R, C
    cdef cnp.npy_intp dims[64]
    cdef int out_nd
    if not direct_layout(a, axes, onnx_style, keepdims, &O, &R, &C, dims, &out_nd):
        return None
    cdef int t = cnp.PyArray_TYPE(a)
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(out_nd, dims, t, 0)
    cdef const void* px = cnp.PyArray_DATA(a)
    cdef void* po = cnp.PyArray_DATA(out)
    if O * R * C < GIL_KEPT_BELOW_ELEMENTS:  # the GIL kept, as gil_release keeps it
        build.table.reduce_finish(t == cnp.NPY_FLOAT32, px, O, R, C, op, finishing, po, n_threads)
    else:
        with nogil:
            build.table.reduce_finish(t == cnp.NPY_FLOAT32, px, O, R, C, op, finishing, po, n_threads)
    return scalar_or_array(out, scalar)
