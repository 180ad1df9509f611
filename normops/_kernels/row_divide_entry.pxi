# The entry points of MeanVarianceNormalization and LpNormalization
# (docs/specification.md §8) and of the Sum16 of rows behind normops.var
# and normops.std (§16.2), in the routes module: they check the arrays and
# call one build's loops (row_divide.pxi) through its table; methods of
# the build (kernel_build.pxi).


cpdef object row_divide(KernelBuild build, object x, object y, Py_ssize_t rows, Py_ssize_t cols, int kind,
                        int n_threads):
    """y[r, :] = row r of the rows x cols matrix x divided by its statistic
    (kind 0: MeanVarianceNormalization, 1: L1, 2: L2 LpNormalization).

    x and y are C-contiguous, of one dtype: float32, float64, float16 or
    bfloat16 (the last two computed in float32). Rows go in chunks of
    max(1, 16384 // cols) rows, one chunk per task; a row is never split,
    so the bits never depend on the threads.
    """
    cdef Storage xs = storage_of(x, "x"), ys = storage_of(y, "y")
    if rows < 0 or cols < 1:
        raise ValueError("row_divide needs rows >= 0 and cols >= 1")
    if kind < DIVIDE_BY_STD or kind > DIVIDE_BY_L2:
        raise ValueError(f"row_divide: unknown kind {kind}")
    if xs != ys:
        raise TypeError("row_divide: x and y need one dtype")
    check_array(x, cnp.PyArray_TYPE(<cnp.ndarray>x), shape_size(rows, cols), False, "x")
    check_array(y, cnp.PyArray_TYPE(<cnp.ndarray>y), shape_size(rows, cols), True, "y")
    cdef const void* px = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* py = cnp.PyArray_DATA(<cnp.ndarray>y)
    cdef PyThreadState* saved = gil_release(rows * cols)  # nothing below touches a Python object
    cdef int done = build.table.row_divide(px, xs, py, rows, cols, kind, n_threads)
    gil_restore(saved)
    if done < 0:
        raise MemoryError()
    return None


def lp_columns(KernelBuild build, x, y, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner, int kind, int n_threads):
    """LpNormalization (kind 1: L1, 2: L2) of each column x[a, :, b] of the
    C-contiguous float32/float64 (outer, n, inner) array x into y (same
    dtype and layout). Columns go in chunks of max(1, 16384 // n), claimed
    by the threads a few neighbouring chunks at a time; the bits never
    depend on the threads."""
    cdef int t = float_typenum(x)
    if outer < 0 or n < 1 or inner < 1:
        raise ValueError("lp_columns needs outer >= 0, n >= 1 and inner >= 1")
    if kind != DIVIDE_BY_L1 and kind != DIVIDE_BY_L2:
        raise ValueError(f"lp_columns: unknown kind {kind}")
    check_array(x, t, shape_size(outer, n, inner), False, "x")
    check_array(y, t, shape_size(outer, n, inner), True, "y")
    cdef const void* px = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* py = cnp.PyArray_DATA(<cnp.ndarray>y)
    cdef int done
    with nogil:
        done = build.table.lp_columns(px, py, outer, n, inner, kind, t == cnp.NPY_FLOAT32, n_threads)
    if done < 0:
        raise MemoryError()


def row_sums16(KernelBuild build, x, out, Py_ssize_t rows, Py_ssize_t cols, center, int n_threads):
    """out[r] = Sum16 over j of x[r, j] (center None), or of the separately
    rounded (x[r, j] - center[r]) * (x[r, j] - center[r]), for the
    C-contiguous float32/float64 rows x cols matrix x (out, center: rows
    elements of x's dtype). Rows go in chunks of max(1, 16384 // cols)
    rows; a row is never split."""
    cdef int t = float_typenum(x)
    if rows < 0 or cols < 1:
        raise ValueError("row_sums16 needs rows >= 0 and cols >= 1")
    check_array(x, t, shape_size(rows, cols), False, "x")
    check_array(out, t, rows, True, "out")
    if center is not None:
        check_array(center, t, rows, False, "center")
    cdef const void* px = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* po = cnp.PyArray_DATA(<cnp.ndarray>out)
    cdef const void* pc = data_or_null(center)
    cdef PyThreadState* saved = gil_release(rows * cols)  # nothing below touches a Python object
    build.table.row_sums16(px, po, rows, cols, pc, t == cnp.NPY_FLOAT32, n_threads)
    gil_restore(saved)
