# The entry points of the row normalisations (docs/specification.md §6-§7):
# LayerNormalization, RMSNormalization and SimplifiedLayerNormalization,
# InstanceNormalization, GroupNormalization and BatchNormalization, in the
# routes module. They check the arrays, or take the common call as it
# comes (row_normalize_nd, channel_normalize_nd: None for anything else),
# place the outputs and call one build's loops (normalization.pxi) through
# its table; methods of the build (kernel_build.pxi).

from libc.string cimport memset

# BatchNormalization inference: planes shorter than this run as one row per
# sample with a segment per channel (fewer, longer rows; same bits).
cdef Py_ssize_t BATCH_PLANE_ELEMENTS = 256


cdef inline bint storable(Storage x, Storage y, Storage scale, int bias) noexcept:
    """float64 arithmetic stores float64 only; float32 arithmetic stores
    float32, float16 or bfloat16 (bias = -1: no bias)."""
    cdef bint wide = x == STORE_FLOAT64
    return ((y == STORE_FLOAT64) == wide and (scale == STORE_FLOAT64) == wide
            and (bias < 0 or (bias == STORE_FLOAT64) == wide))


cdef int run_row_normalize(
    KernelBuild build, cnp.ndarray x, Storage xs, cnp.ndarray y, Storage ys,
    cnp.ndarray scale, Storage ss, object bias, int bs,
    float* mean_out, float* inv_out, Py_ssize_t rows, Py_ssize_t cols,
    double epsilon, bint center, int n_threads, RowParams* p, const void* given_var,
) except -1:
    """The build's row normalisation on checked arrays (see ``storable``)
    with the parameter layout p and the supplied variances (or NULL)."""
    cdef const void* px = cnp.PyArray_DATA(x)
    cdef void* py = cnp.PyArray_DATA(y)
    cdef const void* ps = cnp.PyArray_DATA(scale)
    cdef const void* pb = data_or_null(bias)
    cdef PyThreadState* saved = gil_release(rows * cols)  # nothing below touches a Python object
    cdef int done = build.table.row_normalize(px, xs, py, ys, ps, ss, pb, bs, mean_out, inv_out, rows, cols,
                                              epsilon, center, n_threads, p, given_var)
    gil_restore(saved)
    if done < 0:
        raise MemoryError()
    return 0


cdef int run_batch_training(
    KernelBuild build, cnp.ndarray x, Storage xs, cnp.ndarray y, Storage ys, object scale, Storage ss,
    object bias, int bs, const void* given_mean, const void* given_var, void* running_mean, void* running_var,
    Py_ssize_t N, Py_ssize_t C, Py_ssize_t S, double epsilon, double momentum, int n_threads,
    void* saved_mean, void* saved_inv,
) except -1:
    """The build's BatchNormalization in training mode on checked arrays."""
    cdef const void* px = cnp.PyArray_DATA(x)
    cdef void* py = cnp.PyArray_DATA(y)
    cdef const void* ps = cnp.PyArray_DATA(<cnp.ndarray>scale)
    cdef const void* pb = cnp.PyArray_DATA(<cnp.ndarray>bias)
    # each channel gathered into a row of the arithmetic type
    cdef cnp.npy_intp dims[2]
    dims[0] = C
    dims[1] = N * S
    cdef cnp.ndarray gathered = cnp.PyArray_EMPTY(2, dims, cnp.NPY_FLOAT64 if xs == STORE_FLOAT64 else cnp.NPY_FLOAT32,
                                                  0)
    cdef void* pg = cnp.PyArray_DATA(gathered)
    cdef int done
    with nogil:
        done = build.table.batch_training(px, xs, py, ys, ps, ss, pb, bs, given_mean, given_var, running_mean,
                                          running_var, N, C, S, epsilon, momentum, n_threads, saved_mean,
                                          saved_inv, pg)
    if done < 0:
        raise MemoryError()
    return 0


def row_normalize(
    KernelBuild build, x, scale, bias, y, mean_out, inv_out,
    Py_ssize_t rows, Py_ssize_t cols, double epsilon, bint center, int n_threads,
    Py_ssize_t period=0, Py_ssize_t seg_len=0, given_mean=None, given_var=None,
):
    """Normalise each row of the rows x cols matrix x into y.

    Arithmetic is float64 when x is float64 (then every array is), else
    float32, with x, y, scale and bias each float32, float16 or bfloat16
    (widened exactly / rounded once). scale and bias (bias may be None) have
    cols elements; mean_out and inv_out are None or float32 arrays of rows
    elements. center=False gives RMS normalisation. epsilon is rounded to
    the arithmetic type.

    period > 0 selects scalar parameters per row segment (see RowParams in
    normalization.pxi): scale and bias then have period * (cols // seg_len)
    elements. given_mean/given_var (as many, the arithmetic type) supply
    the statistics of steps 1 and 2 (step 3 runs once per value).
    """
    cdef Storage xs = storage_of(x, "x"), ys = storage_of(y, "y"), ss = storage_of(scale, "scale")
    cdef int bs = -1 if bias is None else <int>storage_of(bias, "bias")
    cdef Py_ssize_t size
    cdef RowParams p
    if rows < 0 or cols < 1:
        raise ValueError("row_normalize needs rows >= 0 and cols >= 1")
    size = shape_size(rows, cols)
    if period < 0 or (period > 0 and (seg_len < 1 or cols % seg_len != 0)):
        raise ValueError("row_normalize needs period >= 0 and seg_len dividing cols")
    if not storable(xs, ys, ss, bs):
        raise TypeError("row_normalize: float64 arrays need float64 arithmetic throughout")
    p.period = period
    p.seg_len = seg_len
    cdef Py_ssize_t nparams = param_count(&p, cols)
    cdef int arith = cnp.NPY_FLOAT64 if xs == STORE_FLOAT64 else cnp.NPY_FLOAT32
    check_array(x, cnp.PyArray_TYPE(<cnp.ndarray>x), size, False, "x")
    check_array(y, cnp.PyArray_TYPE(<cnp.ndarray>y), size, True, "y")
    check_array(scale, cnp.PyArray_TYPE(<cnp.ndarray>scale), nparams, False, "scale")
    if bias is not None:
        check_array(bias, cnp.PyArray_TYPE(<cnp.ndarray>bias), nparams, False, "bias")
    if (given_mean is None) != (given_var is None) or (given_mean is not None and period == 0):
        raise ValueError("row_normalize: given_mean and given_var go together, with period > 0")
    if given_mean is not None:
        check_array(given_mean, arith, nparams, False, "given_mean")
        check_array(given_var, arith, nparams, False, "given_var")
    p.given_mean = data_or_null(given_mean)
    p.given_inv = NULL
    p.mean_native = NULL
    p.var_native = NULL
    p.inv_native = NULL
    if mean_out is not None:
        check_array(mean_out, cnp.NPY_FLOAT32, rows, True, "mean_out")
    if inv_out is not None:
        check_array(inv_out, cnp.NPY_FLOAT32, rows, True, "inv_out")
    run_row_normalize(build, x, xs, y, ys, scale, ss, bias, bs, <float*>data_or_null(mean_out),
                      <float*>data_or_null(inv_out), rows, cols, epsilon, center, n_threads, &p,
                      data_or_null(given_var))


# ------------------------------------------------------ the per-call fast path

cdef inline bint covers_suffix(cnp.ndarray p, cnp.ndarray x, int axis, Py_ssize_t cols):
    """p has the normalized shape exactly (right-aligned, as many elements)."""
    cdef int k = cnp.PyArray_NDIM(p), nd = cnp.PyArray_NDIM(x), i
    if cnp.PyArray_SIZE(p) != cols or k > nd - axis:
        return False
    for i in range(1, k + 1):
        if cnp.PyArray_DIM(p, k - i) != cnp.PyArray_DIM(x, nd - i):
            return False
    return True


cpdef object row_normalize_nd(KernelBuild build, object X, object scale, object bias, object axis, object epsilon,
                              bint center, bint one_type, bint y_follows_scale, int n_threads, bint want_mean,
                              bint want_inv):
    """The common call, validated and run without leaving C.

    Takes only what needs no conversion: float32, float64 or float16
    ndarrays, native and C-contiguous, Scale/B of exactly the normalized
    shape (all one dtype when ``one_type``), an int axis in range and a
    float epsilon. Y has X's dtype, or Scale's with ``y_follows_scale``.
    Returns (Y, Mean or None, InvStdDev or None), or None when the call must
    go through the full validation in normops/_validate.py (which also
    raises every error: this function never does).
    """
    if type(X) is not cnp.ndarray or type(axis) is not int or type(epsilon) is not float:
        return None
    cdef int xs = fast_storage(X), ss = fast_storage(scale)
    cdef int bs = -1 if bias is None else fast_storage(bias)
    if xs < 0 or ss < 0 or (bias is not None and bs < 0):
        return None
    if one_type and (ss != xs or (bias is not None and bs != xs)):
        return None
    cdef Storage ys = <Storage>(ss if y_follows_scale else xs)
    if not storable(<Storage>xs, ys, <Storage>ss, bs):
        return None
    cdef cnp.ndarray x = <cnp.ndarray>X
    cdef int nd = cnp.PyArray_NDIM(x)
    if nd < 1 or nd > 32 or axis < -nd or axis >= nd:
        return None
    cdef int ax = <int>axis + (nd if axis < 0 else 0)
    cdef Py_ssize_t rows = 1, cols = 1
    cdef int i
    for i in range(ax):
        rows *= cnp.PyArray_DIM(x, i)
    for i in range(ax, nd):
        cols *= cnp.PyArray_DIM(x, i)
    if cols == 0 or not covers_suffix(<cnp.ndarray>scale, x, ax, cols):
        return None
    if bias is not None and not covers_suffix(<cnp.ndarray>bias, x, ax, cols):
        return None
    cdef cnp.npy_intp stat_dims[32]
    for i in range(nd):
        stat_dims[i] = cnp.PyArray_DIM(x, i) if i < ax else 1
    cdef cnp.ndarray y = placed_empty(x, storage_typenum(ys))  # large ones reuse kept blocks (placed_alloc.h)
    cdef object mean = None, inv = None
    if want_mean:
        mean = cnp.PyArray_EMPTY(nd, stat_dims, cnp.NPY_FLOAT32, 0)
    if want_inv:
        inv = cnp.PyArray_EMPTY(nd, stat_dims, cnp.NPY_FLOAT32, 0)
    # ONNX float attribute: its value is the float32 nearest to epsilon
    cdef double eps = <float>(<double>epsilon)
    cdef RowParams shared_columns
    memset(&shared_columns, 0, sizeof(RowParams))
    run_row_normalize(build, x, <Storage>xs, y, ys, <cnp.ndarray>scale, <Storage>ss, bias, bs,
                      <float*>data_or_null(mean), <float*>data_or_null(inv), rows, cols, eps, center, n_threads,
                      &shared_columns, NULL)
    return (y, mean, inv)


def channel_normalize_nd(KernelBuild build, X, scale, bias, mean, var, Py_ssize_t groups, bint per_channel,
                         epsilon, int n_threads, momentum=None):
    """The common call of InstanceNormalization (groups = 0: one per channel),
    GroupNormalization and BatchNormalization in inference mode (mean and
    var given; groups ignored) without leaving C.

    Takes only float32 or float64 ndarrays, native and C-contiguous, all of
    one dtype, X of rank >= 2, parameters of shape (C,) (or (groups,) when
    not per_channel) and a float epsilon. Returns Y, or None when the call
    must go through the full validation (which raises every error: this
    function never does). A float ``momentum`` (with mean and var) asks
    for BatchNormalization's training mode: returns (Y, running_mean,
    running_var).
    """
    if type(X) is not cnp.ndarray or type(epsilon) is not float:
        return None
    cdef int xs = fast_storage(X)
    if xs != STORE_FLOAT32 and xs != STORE_FLOAT64:
        return None
    cdef cnp.ndarray x = <cnp.ndarray>X
    cdef int nd = cnp.PyArray_NDIM(x), i
    if nd < 2:
        return None
    cdef Py_ssize_t N = cnp.PyArray_DIM(x, 0), C = cnp.PyArray_DIM(x, 1), S = 1
    for i in range(2, nd):
        S *= cnp.PyArray_DIM(x, i)
    cdef bint batch = mean is not None
    if batch or groups == 0:
        groups = C
    if groups < 1 or C % groups != 0:
        return None
    cdef Py_ssize_t nparams = C if (per_channel or batch) else groups
    for a in ((scale, bias, mean, var) if batch else (scale, bias)):
        if fast_storage(a) != xs or cnp.PyArray_NDIM(<cnp.ndarray>a) != 1 \
                or cnp.PyArray_DIM(<cnp.ndarray>a, 0) != nparams:
            return None
    cdef cnp.ndarray y = placed_empty(x, storage_typenum(<Storage>xs))
    cdef cnp.npy_intp nc = C
    if momentum is not None:
        if not batch or type(momentum) is not float or N * C * S == 0:
            return None
        running_mean = cnp.PyArray_EMPTY(1, &nc, storage_typenum(<Storage>xs), 0)
        running_var = cnp.PyArray_EMPTY(1, &nc, storage_typenum(<Storage>xs), 0)
        run_batch_training(build, x, <Storage>xs, y, <Storage>xs, scale, <Storage>xs, bias, xs,
                           cnp.PyArray_DATA(<cnp.ndarray>mean), cnp.PyArray_DATA(<cnp.ndarray>var),
                           cnp.PyArray_DATA(<cnp.ndarray>running_mean), cnp.PyArray_DATA(<cnp.ndarray>running_var),
                           N, C, S, <double>(<float>(<double>epsilon)),
                           <double>(<float>(<double>momentum)),  # ONNX float attributes are float32
                           n_threads, NULL, NULL)
        return (y, running_mean, running_var)
    if N * C * S == 0:
        return y
    cdef RowParams p
    memset(&p, 0, sizeof(RowParams))
    cdef Py_ssize_t rows, cols
    if batch and S < BATCH_PLANE_ELEMENTS:
        # short planes: a row is one sample, one segment per channel
        rows = N
        cols = C * S
        p.period = 1
        p.seg_len = S
    else:
        rows = N * groups
        cols = (C // groups) * S
        p.period = groups
        p.seg_len = S if (per_channel or batch) else cols
    if batch:
        p.given_mean = cnp.PyArray_DATA(<cnp.ndarray>mean)
    cdef double eps = <float>(<double>epsilon)
    run_row_normalize(build, x, <Storage>xs, y, <Storage>xs, <cnp.ndarray>scale, <Storage>xs, bias, xs,
                      NULL, NULL, rows, cols, eps, True, n_threads, &p,
                      cnp.PyArray_DATA(<cnp.ndarray>var) if batch else NULL)
    return y


def batch_normalization_training(KernelBuild build, x, scale, bias, given_mean, given_var, y, running_mean,
                                 running_var, Py_ssize_t N, Py_ssize_t C, Py_ssize_t S, double epsilon,
                                 double momentum, int n_threads, saved_mean=None, saved_inv=None):
    """BatchNormalization in training mode on an N x C x S input x into y
    (storage as in row_normalize: float64 throughout, or float32 arithmetic
    on float32/float16/bfloat16 storage). scale and bias have C values;
    given_mean/given_var (read) and running_mean/running_var (written) C
    values of the arithmetic type. epsilon and momentum are rounded to it.
    saved_mean/saved_inv (None, or C values of the arithmetic type, written)
    receive the batch mean and inverse standard deviation Y was made with."""
    cdef Storage xs = storage_of(x, "x"), ys = storage_of(y, "y"), ss = storage_of(scale, "scale")
    cdef int bs = <int>storage_of(bias, "bias")
    if N < 1 or C < 0 or S < 1:
        raise ValueError("batch_normalization_training needs N >= 1 and S >= 1")
    if not storable(xs, ys, ss, bs):
        raise TypeError("batch_normalization_training: float64 arrays need float64 arithmetic throughout")
    cdef int arith = cnp.NPY_FLOAT64 if xs == STORE_FLOAT64 else cnp.NPY_FLOAT32
    check_array(x, cnp.PyArray_TYPE(<cnp.ndarray>x), shape_size(N, C, S), False, "x")
    check_array(y, cnp.PyArray_TYPE(<cnp.ndarray>y), shape_size(N, C, S), True, "y")
    check_array(scale, cnp.PyArray_TYPE(<cnp.ndarray>scale), C, False, "scale")
    check_array(bias, cnp.PyArray_TYPE(<cnp.ndarray>bias), C, False, "bias")
    for a, name, w in ((given_mean, "given_mean", False), (given_var, "given_var", False),
                       (running_mean, "running_mean", True), (running_var, "running_var", True)):
        check_array(a, arith, C, w, name)
    for a, name in ((saved_mean, "saved_mean"), (saved_inv, "saved_inv")):
        if a is not None:
            check_array(a, arith, C, True, name)
    run_batch_training(build, x, xs, y, ys, scale, ss, bias, bs, data_or_null(given_mean), data_or_null(given_var),
                       data_or_null(running_mean), data_or_null(running_var), N, C, S,
                       epsilon if xs == STORE_FLOAT64 else <float>epsilon,
                       momentum if xs == STORE_FLOAT64 else <float>momentum, n_threads,
                       data_or_null(saved_mean), data_or_null(saved_inv))
