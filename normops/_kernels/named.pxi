# The named functions' route in C: normops.ops' Softmax family, Sigmoid,
# Gelu and BiasGelu, LpNormalization and MeanVarianceNormalization, and
# the LayerNormalization family (and normops.run, sessions and the
# SciPy-style functions through some of them; settle_call, route.pxi,
# settles mode and threads) reach the kernels here without a Python frame
# between the public function and the kernel, because on small inputs those
# frames are most of the call. Anything this route does not take returns
# None, and the caller's validated path takes the call: the only place
# errors are raised.


cdef object named_version(object op, object opset):
    """The operator version an opset argument stands for, if op has served
    it before (its cache); else None."""
    if not (opset is None or type(opset) is int):
        return None
    return (<dict>op._version_cache).get(opset)


def softmax_named(object op, object x, object axis, object opset, object mode, object n_threads, int kind):
    """normops.ops.softmax / log_softmax / hardmax (op: the OpDef, kind as
    in softmax_direct), axis None standing for the opset's default (1 up to
    opset 12, -1 from 13): the output, or None."""
    if CONFIG is None:
        route_setup()
    if type(x) is not cnp.ndarray:
        return None
    cdef object version = named_version(op, opset)
    if version is None:
        return None
    if axis is None:
        axis = 1 if version < 13 else -1
    cdef CallSettings settings
    if settle_call(mode, n_threads, &settings) < 0:
        return None
    return softmax_direct(BUILD, x, axis, version, kind, settings.fast, settings.threads)


def sigmoid_named(object op, object x, object opset, object mode, object n_threads):
    """normops.ops.sigmoid: the output, or None."""
    if CONFIG is None:
        route_setup()
    if type(x) is not cnp.ndarray or named_version(op, opset) is None:
        return None
    cdef CallSettings settings
    if settle_call(mode, n_threads, &settings) < 0:
        return None
    return sigmoid_direct(BUILD, x, settings.fast, settings.threads)


def row_divide_named(object op, object x, Py_ssize_t cols_axes, int kind, object opset, object mode,
                     object n_threads):
    """normops.ops.mean_variance_normalization / lp_normalization (kind as
    in row_divide) over the last ``cols_axes`` axes of x, the attributes
    already checked by the caller: row_divide_settled's output, or None."""
    if CONFIG is None:
        route_setup()
    if named_version(op, opset) is None:
        return None
    cdef CallSettings settings
    if settle_call(mode, n_threads, &settings) < 0:
        return None
    return row_divide_settled(x, cols_axes, kind, settings.threads)


cpdef object row_divide_settled(object x, Py_ssize_t cols_axes, int kind, int threads):
    """The rows of x (its last ``cols_axes`` axes) divided as ``kind`` says,
    with the thread count settled (settle_call): the output, when x is a
    non-empty, aligned, native, C-contiguous float32 or float64 ndarray; or
    None. A model node's and normops.run's call (row_divide.py)."""
    if type(x) is not cnp.ndarray:
        return None
    cdef cnp.ndarray a = <cnp.ndarray>x
    cdef int ndim = cnp.PyArray_NDIM(a)
    cdef Py_ssize_t size = cnp.PyArray_SIZE(a)
    if not is_plain_float(a) or size == 0 or not 1 <= cols_axes <= ndim:
        return None
    cdef Py_ssize_t cols = dims_product(a, ndim - <int>cols_axes, ndim)
    cdef cnp.ndarray y = placed_like(a)
    row_divide(BUILD, a, y, size // cols, cols, kind, threads)
    return y


cdef int lp_kind(object x, object axis, object p):
    """row_divide's kind for LpNormalization of x along axis, when axis is
    the last (-1 or ndim - 1) and p 1 or 2, both ints; else 0."""
    if type(x) is not cnp.ndarray or type(axis) is not int or type(p) is not int or not (p == 1 or p == 2):
        return 0
    cdef int ndim = cnp.PyArray_NDIM(<cnp.ndarray>x)
    if ndim < 1 or not (axis == -1 or axis == ndim - 1):
        return 0
    return DIVIDE_BY_L1 if p == 1 else DIVIDE_BY_L2


def lp_named(object op, object x, object axis, object p, object opset, object mode, object n_threads):
    """normops.ops.lp_normalization: the output when lp_kind and
    row_divide_named take the call; else None."""
    cdef int kind = lp_kind(x, axis, p)
    return None if kind == 0 else row_divide_named(op, x, 1, kind, opset, mode, n_threads)


def lp_settled(object x, object axis, object p, int threads):
    """lp_named with the thread count settled (settle_call): a model node's
    and normops.run's call."""
    cdef int kind = lp_kind(x, axis, p)
    return None if kind == 0 else row_divide_settled(x, 1, kind, threads)


def cum_named(object x, object axis, object exclusive, object reverse, bint multiply, object opset, object mode,
              object n_threads):
    """normops.ops.cum_sum / cum_prod (multiply) at the latest opset (opset
    None), and run's and sessions': the output when exclusive and reverse
    are the ints 0 or 1 and cum_direct takes x and axis; else None."""
    if CONFIG is None:
        route_setup()
    if opset is not None or axis is None:
        return None
    if not (type(exclusive) is int and 0 <= exclusive <= 1 and type(reverse) is int and 0 <= reverse <= 1):
        return None
    cdef CallSettings settings
    if settle_call(mode, n_threads, &settings) < 0:
        return None
    return cum_direct(BUILD, x, axis, <bint>exclusive, <bint>reverse, multiply, settings.threads)


def gelu_named(object op, object x, object b, bint tanh, object opset, object mode, object n_threads):
    """normops.ops.gelu (b None) and bias_gelu (b the bias): gelu_settled's
    output, or None."""
    if CONFIG is None:
        route_setup()
    if named_version(op, opset) is None:
        return None
    cdef CallSettings settings
    if settle_call(mode, n_threads, &settings) < 0:
        return None
    return gelu_settled(x, b, tanh, settings.fast, settings.threads)


cpdef object gelu_settled(object x, object b, bint tanh, bint fast, int threads):
    """Gelu of x (plus the bias b first, when not None), flavour and thread
    count settled (settle_call): the output, when x is a plain float array
    (is_plain_float, kernel_table.pxd) and b None or a 1-D plain array of
    x's dtype and x's last extent; or None. Also a model node's and
    normops.run's call (gelu.py)."""
    if not is_plain_float(x):
        return None
    cdef cnp.ndarray a = <cnp.ndarray>x
    cdef int ndim = cnp.PyArray_NDIM(a)
    if b is not None and not (is_plain_float(b) and cnp.PyArray_TYPE(<cnp.ndarray>b) == cnp.PyArray_TYPE(a)
                              and cnp.PyArray_NDIM(<cnp.ndarray>b) == 1 and ndim >= 1
                              and cnp.PyArray_DIM(<cnp.ndarray>b, 0) == cnp.PyArray_DIM(a, ndim - 1)):
        return None
    cdef cnp.ndarray y = placed_like(a)
    if cnp.PyArray_SIZE(a):
        gelu_flat(BUILD, a, b, y, tanh, fast, threads)
    return y


# stash_type values whose statistics are float32 (the kernels' own)
FLOAT32_STASH_TYPES = frozenset((1, 10, 11, 16))


def row_normalize_named(object op, tuple family, object X, object scale, object bias, object axis, object epsilon,
                        object stash_type, object keep_dims, object opset, object mode, object n_threads,
                        bint full_output):
    """normops.ops.layer_normalization, rms_normalization and
    simplified_layer_normalization: family is the operator's (center,
    one_param_type, y_follows_scale, statistics) with statistics 2 (Mean
    and InvStdDev), 1 (InvStdDev) or 0. The output, or with full_output
    the tuple of every output the node defines; or None (row_normalize_nd
    takes only what needs no conversion)."""
    cdef int statistics = family[3]
    if CONFIG is None:
        route_setup()
    if named_version(op, opset) is None:
        return None
    if not (type(stash_type) is int and stash_type in FLOAT32_STASH_TYPES):
        return None
    if not (type(keep_dims) is int and keep_dims == 1):
        return None
    cdef CallSettings settings
    if settle_call(mode, n_threads, &settings) < 0:
        return None
    cdef bint stats = full_output and statistics > 0
    result = row_normalize_nd(BUILD, X, scale, bias, axis, epsilon, family[0], family[1], family[2],
                              settings.threads, stats and statistics == 2, stats)
    if result is None or not full_output:
        return result if result is None else (<tuple>result)[0]
    if statistics == 2:
        return result
    return ((<tuple>result)[0], (<tuple>result)[2]) if statistics == 1 else ((<tuple>result)[0],)
