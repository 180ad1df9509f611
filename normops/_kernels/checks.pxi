# The checks of the kernels' entry points (the <family>_entry.pxi files),
# in the routes module: the front layer (normops/_validate.py) has already
# made every array native-endian, C-contiguous and of the right dtype, but
# an entry point checks again (a few pointer reads) so that a misuse raises
# instead of crashing; and the GIL released around a build's loops.

from cpython.pyport cimport PY_SSIZE_T_MAX
from normops._kernels.shim cimport NORMOPS_HAVE_FLOAT16


cdef inline bint is_plain_float(object x) noexcept:
    """An exact ndarray of float32/float64, native, aligned, C-contiguous."""
    if type(x) is not cnp.ndarray:
        return False
    cdef cnp.ndarray a = <cnp.ndarray>x
    cdef int t = cnp.PyArray_TYPE(a)
    return ((t == cnp.NPY_FLOAT32 or t == cnp.NPY_FLOAT64) and cnp.PyArray_IS_C_CONTIGUOUS(a)
            and cnp.PyArray_ISALIGNED(a) and cnp.PyArray_ISNOTSWAPPED(a))


cdef inline Py_ssize_t dims_product(cnp.ndarray x, int first, int last) noexcept:
    """The product of x's dimensions first..last-1."""
    cdef Py_ssize_t p = 1
    cdef int i
    for i in range(first, last):
        p *= cnp.PyArray_DIM(x, i)
    return p


cdef inline int check_array(object a, int typenum, Py_ssize_t size, bint writable, str name) except -1:
    """A kernel's array argument: an ndarray of this type and size, aligned,
    native and C-contiguous (and writable, if asked); else TypeError or
    ValueError naming it. The front layer has made it so already: this
    check turns a misuse into an error instead of a crash."""
    if not isinstance(a, cnp.ndarray):
        raise TypeError(f"kernel argument {name!r} must be an ndarray")
    cdef cnp.ndarray arr = <cnp.ndarray>a
    if cnp.PyArray_TYPE(arr) != typenum:
        raise TypeError(f"kernel argument {name!r} has dtype {arr.dtype}")
    if cnp.PyArray_SIZE(arr) != size:
        raise ValueError(f"kernel argument {name!r} has {cnp.PyArray_SIZE(arr)} elements, expected {size}")
    if not cnp.PyArray_IS_C_CONTIGUOUS(arr) or not cnp.PyArray_ISALIGNED(arr) or not cnp.PyArray_ISNOTSWAPPED(arr):
        raise ValueError(f"kernel argument {name!r} must be aligned, native and C-contiguous")
    if writable and not cnp.PyArray_ISWRITEABLE(arr):
        raise ValueError(f"kernel argument {name!r} must be writable")
    return 0


cdef inline int element_type(object x) except -2:
    """The element type (kernel_codes.h) of an ndarray, by kind and size
    (so int64 is int64 whatever C type NumPy names it); -1 for any other."""
    cdef str kind = x.dtype.kind
    cdef Py_ssize_t size = x.dtype.itemsize
    if kind == "f":
        return ELEMENT_FLOAT32 if size == 4 else ELEMENT_FLOAT64 if size == 8 else -1
    if kind == "i":
        return (ELEMENT_INT8 if size == 1 else ELEMENT_INT16 if size == 2 else ELEMENT_INT32 if size == 4
                else ELEMENT_INT64 if size == 8 else -1)
    if kind == "u":
        return (ELEMENT_UINT8 if size == 1 else ELEMENT_UINT16 if size == 2 else ELEMENT_UINT32 if size == 4
                else ELEMENT_UINT64 if size == 8 else -1)
    return -1


cdef inline void* data_or_null(object a):
    return NULL if a is None else cnp.PyArray_DATA(<cnp.ndarray>a)


cdef inline int float_typenum(object x) except -1:
    if not isinstance(x, cnp.ndarray):
        raise TypeError("kernel input must be an ndarray")
    cdef int t = cnp.PyArray_TYPE(<cnp.ndarray>x)
    if t != cnp.NPY_FLOAT32 and t != cnp.NPY_FLOAT64:
        raise TypeError(f"kernels take float32 or float64, not {x.dtype}")
    return t


cdef inline Py_ssize_t shape_size(Py_ssize_t a, Py_ssize_t b, Py_ssize_t c=1) except -1:
    """a * b * c for a kernel's shape arguments, refused when it overflows
    (a wrapped product could pass check_array and then index past x)."""
    if a < 0 or b < 0 or c < 0:
        raise ValueError("kernel shape arguments must be >= 0")
    cdef object size = <object>a * b * c
    if size > PY_SSIZE_T_MAX:
        raise ValueError(f"kernel shape {a} x {b} x {c} is too large")
    return <Py_ssize_t>size


cdef inline int outer_n_inner_check(Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner) except -1:
    """The outer x n x inner view of an axis kernel (ArgMax, CumSum, ...)."""
    if outer < 0 or n < 0 or inner < 0:
        raise ValueError("outer, n and inner must be >= 0")
    return 0


cdef inline Storage storage_of(object a, str name) except *:
    """The storage type of a kernel array argument."""
    if not isinstance(a, cnp.ndarray):
        raise TypeError(f"kernel argument {name!r} must be an ndarray")
    cdef int t = cnp.PyArray_TYPE(<cnp.ndarray>a)
    if t == cnp.NPY_FLOAT32:
        return STORE_FLOAT32
    if t == cnp.NPY_FLOAT64:
        return STORE_FLOAT64
    if t == cnp.NPY_FLOAT16 and NORMOPS_HAVE_FLOAT16:
        return STORE_FLOAT16
    if a.dtype.name == "bfloat16" and a.dtype.itemsize == 2:
        return STORE_BFLOAT16
    raise TypeError(f"kernel argument {name!r} has dtype {a.dtype}, which this build does not store")


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


# The GIL. Releasing and taking it back costs two mutex operations, about
# 0.07 µs, a twentieth of a call on a 4x8 input; so, as NumPy does for its
# loops (NPY_BEGIN_THREADS_THRESHOLDED, 500 elements), a kernel call on
# fewer elements keeps it. Only around calls of noexcept nogil functions:
# nothing between gil_release and gil_restore touches a Python object.
cdef extern from "Python.h":
    ctypedef struct PyThreadState
    PyThreadState* PyEval_SaveThread()
    void PyEval_RestoreThread(PyThreadState* state)

cdef Py_ssize_t GIL_KEPT_BELOW_ELEMENTS = 500


cdef inline PyThreadState* gil_release(Py_ssize_t elements) noexcept:
    """Release the GIL for a kernel call on this many elements, unless they
    are too few to be worth it (NULL: kept)."""
    return PyEval_SaveThread() if elements >= GIL_KEPT_BELOW_ELEMENTS else NULL


cdef inline void gil_restore(PyThreadState* saved) noexcept:
    """Take back the GIL that gil_release released, if it did."""
    if saved != NULL:
        PyEval_RestoreThread(saved)
