# Python entry points of the row normalisation kernels.


cdef inline bint storable(Storage x, Storage y, Storage scale, int bias) noexcept:
    """float64 arithmetic stores float64 only; float32 arithmetic stores
    float32, float16 or bfloat16 (bias = -1: no bias)."""
    cdef bint wide = x == STORE_FLOAT64
    return ((y == STORE_FLOAT64) == wide and (scale == STORE_FLOAT64) == wide
            and (bias < 0 or (bias == STORE_FLOAT64) == wide))


cdef int run_row_normalize(
    cnp.ndarray x, Storage xs, cnp.ndarray y, Storage ys,
    cnp.ndarray scale, Storage ss, object bias, int bs,
    float* mean_out, float* inv_out, Py_ssize_t rows, Py_ssize_t cols,
    double epsilon, bint center, int n_threads, const RowParams* p,
) except -1:
    """Run on checked arrays (see ``storable``) with the parameter layout p.
    Float32 arithmetic widens narrower Scale/B once into float32 scratch."""
    cdef void* px = cnp.PyArray_DATA(x)
    cdef void* py = cnp.PyArray_DATA(y)
    cdef void* ps = cnp.PyArray_DATA(scale)
    cdef void* pb = data_or_null(bias)
    cdef float* wide_scale = NULL
    cdef float* wide_bias = NULL
    cdef float* scratch = NULL
    cdef int threads = row_chunk_threads(n_threads, rows, cols, NORMOPS_COST_ROWS if center else NORMOPS_COST_ROWS_RMS)
    cdef Py_ssize_t nparams = param_count(p, cols)
    cdef PyThreadState* saved
    if xs == STORE_FLOAT64:
        saved = gil_release(rows * cols)
        normalize_chunks[double](px, xs, py, ys, <const double*>ps, <const double*>pb,
                                 mean_out, inv_out, rows, cols, epsilon, center, threads, n_threads, NULL, p)
        gil_restore(saved)
        return 0
    try:
        if xs != STORE_FLOAT32 or ys != STORE_FLOAT32:
            scratch = <float*>malloc(max(threads, 1) * group_scratch_size(cols) * sizeof(float))
            if scratch == NULL:
                raise MemoryError()
        if ss != STORE_FLOAT32:
            wide_scale = <float*>malloc(nparams * sizeof(float))
            if wide_scale == NULL:
                raise MemoryError()
            widen_rows(ps, ss, 0, wide_scale, nparams)
            ps = wide_scale
        if pb != NULL and bs != STORE_FLOAT32:
            wide_bias = <float*>malloc(nparams * sizeof(float))
            if wide_bias == NULL:
                raise MemoryError()
            widen_rows(pb, <Storage>bs, 0, wide_bias, nparams)
            pb = wide_bias
        saved = gil_release(rows * cols)
        normalize_chunks[float](px, xs, py, ys, <const float*>ps, <const float*>pb,
                                mean_out, inv_out, rows, cols, <float>epsilon, center, threads, n_threads,
                                scratch, p)
        gil_restore(saved)
    finally:
        free(wide_scale)
        free(wide_bias)
        free(scratch)
    return 0


def row_normalize(
    x, scale, bias, y, mean_out, inv_out,
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
    run_with_params(x, xs, y, ys, scale, ss, bias, bs,
                    <float*>data_or_null(mean_out), <float*>data_or_null(inv_out),
                    rows, cols, epsilon, center, n_threads, &p, data_or_null(given_var))


cdef int run_with_params(
    cnp.ndarray x, Storage xs, cnp.ndarray y, Storage ys,
    cnp.ndarray scale, Storage ss, object bias, int bs,
    float* mean_out, float* inv_out, Py_ssize_t rows, Py_ssize_t cols,
    double epsilon, bint center, int n_threads, RowParams* p, const void* given_var,
) except -1:
    """run_row_normalize after step 3 on the supplied variances (if any):
    p.given_inv then points at a scratch of their inverses."""
    cdef Py_ssize_t nparams = param_count(p, cols)
    cdef void* inv = NULL
    try:
        if given_var != NULL:
            inv = malloc(max(nparams, 1) * (sizeof(double) if xs == STORE_FLOAT64 else sizeof(float)))
            if inv == NULL:
                raise MemoryError()
            if xs == STORE_FLOAT64:
                inverse_std[double](<const double*>given_var, <double*>inv, nparams, epsilon)
            else:
                inverse_std[float](<const float*>given_var, <float*>inv, nparams, <float>epsilon)
            p.given_inv = inv
        run_row_normalize(x, xs, y, ys, scale, ss, bias, bs, mean_out, inv_out,
                          rows, cols, epsilon, center, n_threads, p)
    finally:
        free(inv)
    return 0


# ------------------------------------------------------ the per-call fast path

cdef inline int fast_storage(object a) noexcept:
    """Storage of an exact, aligned, native, C-contiguous float32/float64/
    float16 ndarray; -1 for anything else (bfloat16 takes the full path)."""
    if type(a) is not cnp.ndarray:
        return -1
    cdef cnp.ndarray arr = <cnp.ndarray>a
    if not (cnp.PyArray_IS_C_CONTIGUOUS(arr) and cnp.PyArray_ISALIGNED(arr) and cnp.PyArray_ISNOTSWAPPED(arr)):
        return -1
    cdef int t = cnp.PyArray_TYPE(arr)
    if t == cnp.NPY_FLOAT32:
        return STORE_FLOAT32
    if t == cnp.NPY_FLOAT64:
        return STORE_FLOAT64
    if t == cnp.NPY_FLOAT16 and NORMOPS_HAVE_FLOAT16:
        return STORE_FLOAT16
    return -1


cdef inline int storage_typenum(Storage s) noexcept:
    if s == STORE_FLOAT32:
        return cnp.NPY_FLOAT32
    if s == STORE_FLOAT64:
        return cnp.NPY_FLOAT64
    return cnp.NPY_FLOAT16


cdef inline bint covers_suffix(cnp.ndarray p, cnp.ndarray x, int axis, Py_ssize_t cols):
    """p has the normalized shape exactly (right-aligned, as many elements)."""
    cdef int k = cnp.PyArray_NDIM(p), nd = cnp.PyArray_NDIM(x), i
    if cnp.PyArray_SIZE(p) != cols or k > nd - axis:
        return False
    for i in range(1, k + 1):
        if cnp.PyArray_DIM(p, k - i) != cnp.PyArray_DIM(x, nd - i):
            return False
    return True


cpdef object row_normalize_nd(object X, object scale, object bias, object axis, object epsilon, bint center,
                              bint one_type, bint y_follows_scale, int n_threads, bint want_mean,
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
    run_row_normalize(x, <Storage>xs, y, ys, <cnp.ndarray>scale, <Storage>ss, bias, bs,
                      <float*>data_or_null(mean), <float*>data_or_null(inv),
                      rows, cols, eps, center, n_threads, &shared_columns)
    return (y, mean, inv)


def channel_normalize_nd(X, scale, bias, mean, var, Py_ssize_t groups, bint per_channel,
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
        run_batch_training(x, <Storage>xs, y, <Storage>xs, <cnp.ndarray>scale, <Storage>xs, bias, xs,
                           cnp.PyArray_DATA(<cnp.ndarray>mean), cnp.PyArray_DATA(<cnp.ndarray>var),
                           cnp.PyArray_DATA(<cnp.ndarray>running_mean), cnp.PyArray_DATA(<cnp.ndarray>running_var),
                           N, C, S, <double>(<float>(<double>epsilon)),
                           <double>(<float>(<double>momentum)),  # ONNX float attributes are float32
                           n_threads)
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
    run_with_params(x, <Storage>xs, y, <Storage>xs, <cnp.ndarray>scale, <Storage>xs, bias, xs,
                    NULL, NULL, rows, cols, eps, True, n_threads, &p,
                    cnp.PyArray_DATA(<cnp.ndarray>var) if batch else NULL)
    return y


cdef int run_batch_training(
    cnp.ndarray x, Storage xs, cnp.ndarray y, Storage ys,
    cnp.ndarray scale, Storage ss, object bias, int bs,
    const void* given_mean, const void* given_var, void* running_mean, void* running_var,
    Py_ssize_t N, Py_ssize_t C, Py_ssize_t S, double epsilon, double momentum, int n_threads,
    void* saved_mean=NULL, void* saved_inv=NULL,
) except -1:
    """BatchNormalization in training mode (docs/specification.md §7.3): channel c's
    elements in row-major order (n, then spatial) are gathered into row c
    of an arithmetic-type scratch, normalised there in place with their
    batch statistics and scattered back; then the running statistics
    (given * momentum) + (current * (1 - momentum)), each operation rounded,
    into running_mean/running_var (arithmetic type, C values each).
    saved_mean/saved_inv (or NULL) receive the batch mean and the
    inv = 1 / sqrt(var + epsilon) that normalised Y (legacy opsets'
    saved_mean and saved_var)."""
    cdef bint wide = xs == STORE_FLOAT64
    cdef Storage arith = STORE_FLOAT64 if wide else STORE_FLOAT32
    cdef Py_ssize_t cols = N * S, n, c, k
    cdef cnp.npy_intp dims[2]
    dims[0] = C
    dims[1] = cols
    cdef cnp.ndarray rows = cnp.PyArray_EMPTY(2, dims, cnp.NPY_FLOAT64 if wide else cnp.NPY_FLOAT32, 0)
    cdef size_t item = sizeof(double) if wide else sizeof(float)
    cdef char* pr = <char*>cnp.PyArray_DATA(rows)
    cdef const char* px = <const char*>cnp.PyArray_DATA(x)
    cdef char* py = <char*>cnp.PyArray_DATA(y)
    cdef void* mean = malloc(3 * max(C, 1) * item)  # mean, var, inv per channel
    cdef RowParams p
    cdef double m, rest
    cdef float mf, restf
    if mean == NULL:
        raise MemoryError()
    try:
        with nogil:
            for c in range(C):
                for n in range(N):
                    if xs == arith:
                        memcpy(pr + (c * cols + n * S) * item, px + ((n * C + c) * S) * item, S * item)
                    else:
                        widen_rows(px, xs, (n * C + c) * S, <float*>pr + c * cols + n * S, S)
        memset(&p, 0, sizeof(RowParams))
        p.period = C
        p.seg_len = cols
        p.mean_native = mean
        p.var_native = <char*>mean + C * item
        p.inv_native = <char*>mean + 2 * C * item
        run_row_normalize(rows, arith, rows, arith, scale, ss, bias, bs, NULL, NULL, C, cols,
                          epsilon, True, n_threads, &p)
        with nogil:
            for c in range(C):
                for n in range(N):
                    if ys == arith:
                        memcpy(py + ((n * C + c) * S) * item, pr + (c * cols + n * S) * item, S * item)
                    else:
                        narrow_rows(<float*>pr + c * cols + n * S, py, ys, (n * C + c) * S, S)
            if wide:
                m = momentum
                rest = 1.0 - m
                for k in range(C):
                    (<double*>running_mean)[k] = canonical(((<const double*>given_mean)[k] * m)
                                                           + ((<double*>mean)[k] * rest), True)
                    (<double*>running_var)[k] = canonical(((<const double*>given_var)[k] * m)
                                                          + ((<double*>mean)[C + k] * rest), True)
            else:
                mf = <float>momentum
                restf = <float>1.0 - mf
                for k in range(C):
                    (<float*>running_mean)[k] = canonical(((<const float*>given_mean)[k] * mf)
                                                          + ((<float*>mean)[k] * restf), True)
                    (<float*>running_var)[k] = canonical(((<const float*>given_var)[k] * mf)
                                                         + ((<float*>mean)[C + k] * restf), True)
        if saved_mean != NULL:
            memcpy(saved_mean, mean, C * item)
        if saved_inv != NULL:
            memcpy(saved_inv, <char*>mean + 2 * C * item, C * item)
    finally:
        free(mean)
    return 0


def batch_normalization_training(x, scale, bias, given_mean, given_var, y, running_mean, running_var,
                                 Py_ssize_t N, Py_ssize_t C, Py_ssize_t S, double epsilon,
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
    run_batch_training(x, xs, y, ys, scale, ss, bias, bs, data_or_null(given_mean), data_or_null(given_var),
                       data_or_null(running_mean), data_or_null(running_var), N, C, S,
                       epsilon if xs == STORE_FLOAT64 else <float>epsilon,
                       momentum if xs == STORE_FLOAT64 else <float>momentum, n_threads,
                       data_or_null(saved_mean), data_or_null(saved_inv))
