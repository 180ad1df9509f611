# The axes of the per-call routes (reduction_entry.pxi, arg_reduce_entry.pxi,
# cumulative_entry.pxi, numpy_style_entry.pxi), in the routes module: a
# Python int axis or an axis set taken as it comes, and the O x R x C
# layout of a reduction that needs no copy. Anything else is left to the
# front layer's general path, which checks and computes it.

from cpython.long cimport PyLong_AsLongAndOverflow
from cpython.ref cimport Py_INCREF
from libc.stdint cimport int32_t, int64_t, uint64_t


cdef inline object scalar_or_array(cnp.ndarray out, bint scalar):
    """out, or its element as a NumPy scalar when ``scalar`` and out is 0-d."""
    if scalar and cnp.PyArray_NDIM(out) == 0:
        Py_INCREF(out)  # PyArray_Return steals a reference (numpy's pxd does not say so)
        return cnp.PyArray_Return(out)
    return out


cdef inline int plain_axis(object axis, int ndim) noexcept:
    """A Python int axis in [-ndim, ndim), normalised; -1 for anything else."""
    cdef int overflow = 0
    cdef long v
    if type(axis) is not int:
        return -1
    v = PyLong_AsLongAndOverflow(axis, &overflow)
    if overflow or not -ndim <= v < ndim:
        return -1
    return <int>(v + ndim if v < 0 else v)


cdef bint axis_set(object axes, int ndim, bint onnx_style, uint64_t* mask) except -1:
    """The axis set of ``axes`` as a bit mask, each axis in range and none
    repeated. ONNX style: None, a list or tuple of Python ints or a 1-D
    int64 ndarray, empty meaning every axis; NumPy style: None, a Python
    int or a tuple of Python ints, empty meaning none. False for anything
    else (the general path then reads and checks them)."""
    cdef Py_ssize_t k, count = 1
    cdef int a
    cdef const int64_t* p
    cdef uint64_t bit
    mask[0] = 0
    if axes is None:
        mask[0] = ~(<uint64_t>0) >> (64 - ndim) if ndim else 0
        return True
    if type(axes) is int and not onnx_style:
        a = plain_axis(axes, ndim)
        if a < 0:
            return False
        mask[0] = (<uint64_t>1) << a
        return True
    if type(axes) is tuple or (type(axes) is list and onnx_style):
        count = len(axes)
        for k in range(count):
            a = plain_axis(axes[k], ndim)
            if a < 0:
                return False
            bit = (<uint64_t>1) << a
            if mask[0] & bit:
                return False
            mask[0] |= bit
    elif type(axes) is cnp.ndarray and onnx_style:
        if (cnp.PyArray_TYPE(<cnp.ndarray>axes) != cnp.NPY_INT64 or cnp.PyArray_NDIM(<cnp.ndarray>axes) != 1
                or not cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>axes)
                or not cnp.PyArray_ISALIGNED(<cnp.ndarray>axes)
                or not cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>axes)):
            return False
        count = cnp.PyArray_SIZE(<cnp.ndarray>axes)
        p = <const int64_t*>cnp.PyArray_DATA(<cnp.ndarray>axes)
        for k in range(count):
            if not -ndim <= p[k] < ndim:
                return False
            bit = (<uint64_t>1) << (p[k] + ndim if p[k] < 0 else p[k])
            if mask[0] & bit:
                return False
            mask[0] |= bit
    else:
        return False
    if count == 0 and onnx_style:
        mask[0] = ~(<uint64_t>0) >> (64 - ndim) if ndim else 0
    return True


cdef bint plain_mask(object w, cnp.ndarray a) noexcept:
    """An exact bool ndarray of a's shape, C-contiguous."""
    if type(w) is not cnp.ndarray:
        return False
    cdef cnp.ndarray m = <cnp.ndarray>w
    cdef int k
    if (cnp.PyArray_TYPE(m) != cnp.NPY_BOOL or cnp.PyArray_NDIM(m) != cnp.PyArray_NDIM(a)
            or not cnp.PyArray_IS_C_CONTIGUOUS(m)):
        return False
    for k in range(cnp.PyArray_NDIM(a)):
        if cnp.PyArray_DIMS(m)[k] != cnp.PyArray_DIMS(a)[k]:
            return False
    return True


cdef bint direct_layout(cnp.ndarray a, object axes, bint onnx_style, bint keepdims, Py_ssize_t* O, Py_ssize_t* R,
                        Py_ssize_t* C, cnp.npy_intp* dims, int* out_nd) except -1:
    """The O x R x C layout of a reduction of a over ``axes`` (ONNX or
    NumPy style: axis_set) and the output's shape (docs/specification.md
    §11.2: extent-1 axes dropped, neighbouring kept or reduced axes
    merged), when it needs no transposition (the axes left read kept,
    reduced, kept) and no extent is 0; False otherwise.
    Each output's sequence, x[o, :, c], holds the reduced index tuples in
    row-major order: also the rows of MeanVarianceNormalization (§8.1)."""
    cdef int nd = cnp.PyArray_NDIM(a), i, phase = 0
    cdef uint64_t mask
    cdef Py_ssize_t n
    if nd > 64 or not axis_set(axes, nd, onnx_style, &mask):
        return False
    cdef cnp.npy_intp* shape = cnp.PyArray_DIMS(a)
    O[0] = R[0] = C[0] = 1
    out_nd[0] = 0
    for i in range(nd):
        n = shape[i]
        if n == 0:
            return False
        if (mask >> i) & 1:
            if keepdims:
                dims[out_nd[0]] = 1
                out_nd[0] += 1
            if n == 1:
                continue
            if phase == 2:
                return False
            phase = 1
            R[0] *= n
        else:
            dims[out_nd[0]] = n
            out_nd[0] += 1
            if n == 1:
                continue
            if phase == 0:
                O[0] *= n
            else:
                phase = 2
                C[0] *= n
    if phase == 0:
        C[0] = O[0]
        O[0] = 1
    return True
