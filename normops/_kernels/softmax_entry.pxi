# The entry points of Softmax, LogSoftmax and Hardmax (docs/specification.md
# §9) and of the float64 quotient of exact Softmax's step 5, in the routes
# module: they check the arrays, or take a plain array as it comes (the
# per-call routes, softmax_direct), place the output and call one build's
# loops (softmax.pxi) through its table; methods of the build
# (kernel_build.pxi).


cdef object run_softmax_rows(KernelBuild build, cnp.ndarray x, cnp.ndarray y, Storage storage, Py_ssize_t rows,
                             Py_ssize_t cols, int kind, bint fast, int n_threads):
    cdef const void* px = cnp.PyArray_DATA(x)
    cdef void* py = cnp.PyArray_DATA(y)
    cdef PyThreadState* saved = gil_release(rows * cols)  # nothing below touches a Python object
    cdef int done = build.table.softmax_rows(px, py, storage, rows, cols, kind, fast, n_threads)
    gil_restore(saved)
    if done < 0:
        raise MemoryError()
    return y


def softmax_rows(KernelBuild build, x, y, Py_ssize_t rows, Py_ssize_t cols, int kind, bint fast, int n_threads):
    """kind 0 Softmax, 1 LogSoftmax, 2 Hardmax over each row of the
    rows x cols matrix x, into y of the same dtype: float32, float64, or
    float16/bfloat16 (widened and rounded back in the kernel; float16 where
    the build stores it, ``float16_storage()``)."""
    cdef Storage storage = storage_of(x, "x")
    cdef int t = cnp.PyArray_TYPE(<cnp.ndarray>x)
    if rows < 0 or cols < 1 or not 0 <= kind <= 2:
        raise ValueError("softmax_rows needs rows >= 0, cols >= 1 and kind in 0..2")
    check_array(x, t, shape_size(rows, cols), False, "x")
    check_array(y, t, shape_size(rows, cols), True, "y")
    if rows == 0:
        return
    run_softmax_rows(build, <cnp.ndarray>x, <cnp.ndarray>y, storage, rows, cols, kind, fast, n_threads)


cpdef object softmax_last_axis(KernelBuild build, object x, Py_ssize_t cols, int kind, bint fast, int n_threads):
    """The per-call route: a new array of kind ``kind`` over the rows of
    ``cols`` elements of x, when x is a non-empty, aligned, native,
    C-contiguous float32/float64 (or float16, where the build stores it)
    ndarray (cols > 0 dividing its size); else None, and the caller takes
    the validating path (this never raises on input it does not take)."""
    if type(x) is not cnp.ndarray:
        return None
    cdef cnp.ndarray a = <cnp.ndarray>x
    cdef int t = cnp.PyArray_TYPE(a)
    cdef Py_ssize_t size = cnp.PyArray_SIZE(a)
    cdef bint half = t == cnp.NPY_FLOAT16 and NORMOPS_HAVE_FLOAT16
    if ((t != cnp.NPY_FLOAT32 and t != cnp.NPY_FLOAT64 and not half) or size == 0 or cols < 1 or size % cols
            or not 0 <= kind <= 2 or not cnp.PyArray_IS_C_CONTIGUOUS(a) or not cnp.PyArray_ISALIGNED(a)
            or not cnp.PyArray_ISNOTSWAPPED(a)):
        return None
    cdef cnp.ndarray y = (cnp.PyArray_EMPTY(cnp.PyArray_NDIM(a), cnp.PyArray_DIMS(a), t, 0) if half
                          else placed_like(a))
    return run_softmax_rows(build, a, y,
                            STORE_FLOAT16 if half else (STORE_FLOAT32 if t == cnp.NPY_FLOAT32 else STORE_FLOAT64),
                            size // cols, cols, kind, fast, n_threads)


cpdef object softmax_columns(KernelBuild build, object x, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner,
                             int kind, bint fast, int n_threads):
    """Softmax (kind 0), LogSoftmax (1) or Hardmax (2) along the middle axis
    of x viewed as outer x n x inner (inner > 1), as a new array, when x is
    a non-empty, aligned, native, C-contiguous float32/float64 ndarray of
    that size; else None (the caller takes the general path). Each column
    gets the bits the row code gives it (the same steps, in the same order)."""
    if type(x) is not cnp.ndarray:
        return None
    cdef cnp.ndarray a = <cnp.ndarray>x
    cdef int t = cnp.PyArray_TYPE(a)
    if ((t != cnp.NPY_FLOAT32 and t != cnp.NPY_FLOAT64) or outer < 1 or n < 1 or inner < 2
            or not 0 <= kind <= 2 or not cnp.PyArray_IS_C_CONTIGUOUS(a) or not cnp.PyArray_ISALIGNED(a)
            or not cnp.PyArray_ISNOTSWAPPED(a) or n > PY_SSIZE_T_MAX // inner // outer
            or cnp.PyArray_SIZE(a) != outer * n * inner):
        return None
    cdef cnp.ndarray y = placed_like(a)
    cdef void* px = cnp.PyArray_DATA(a)
    cdef void* py = cnp.PyArray_DATA(y)
    cdef int done
    with nogil:
        done = build.table.softmax_columns(px, py, t == cnp.NPY_FLOAT32, outer, n, inner, kind, fast, n_threads)
    if done < 0:
        raise MemoryError()
    return y


def divide_float_into(KernelBuild build, e, float s, out):
    """out = e / s for a float32 array e through the float64 quotient of
    softmax_steps.h (exact Softmax's step 5; for tests)."""
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>e)
    check_array(e, cnp.NPY_FLOAT32, n, False, "e")
    check_array(out, cnp.NPY_FLOAT32, n, True, "out")
    if not (s == s and abs(s) >= 1.1754943508222875e-38 and abs(s) < float("inf")):
        raise ValueError("divide_float_into needs a finite s of normal size")
    with nogil:
        build.table.divide_float(<const float*>cnp.PyArray_DATA(<cnp.ndarray>e), s,
                                 <float*>cnp.PyArray_DATA(<cnp.ndarray>out), n)


cpdef object softmax_direct(KernelBuild build, object x, object axis, object version, int kind, bint fast,
                            int n_threads):
    """ONNX Softmax (kind 0), LogSoftmax (1) or Hardmax (2) of this opset
    ``version`` along ``axis`` of x, the thread count and flavour settled:
    rows that are contiguous as the opset lays them out (the last axis at
    every opset, flattened at any axis up to 12) by the rows kernel, along
    a middle axis from opset 13 by the one that gathers blocks of columns
    into rows and back (each column gets the row code's bits); None where
    the kernels do not take x."""
    if type(x) is not cnp.ndarray or type(axis) is not int:
        return None
    cdef cnp.ndarray a = <cnp.ndarray>x
    cdef int ndim = cnp.PyArray_NDIM(a)
    if ndim == 0 or not -ndim <= axis < ndim:
        return None
    cdef int ax = <int>axis
    if ax < 0:
        ax += ndim
    if ax == ndim - 1:
        return softmax_last_axis(build, a, cnp.PyArray_DIM(a, ax), kind, fast, n_threads)
    if version < 13:
        return softmax_last_axis(build, a, dims_product(a, ax, ndim), kind, fast, n_threads)
    if cnp.PyArray_SIZE(a) == 0:
        return None
    cdef Py_ssize_t inner = dims_product(a, ax + 1, ndim)
    if inner == 1:  # only 1s follow the axis: contiguous rows
        return softmax_last_axis(build, a, cnp.PyArray_DIM(a, ax), kind, fast, n_threads)
    return softmax_columns(build, a, dims_product(a, 0, ax), cnp.PyArray_DIM(a, ax), inner, kind, fast, n_threads)
