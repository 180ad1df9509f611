# Fresh outputs placed for the row kernels' stores (placed_alloc.h): on a
# 64-byte line and, modulo 4096, 3 KiB past the input's line. Measured on
# fast Softmax (performance-analysis.md): 10-15% off the in-cache rows
# against an output 16 bytes into a line or just ahead of x modulo 4096.
# The values never depend on where y is.

cdef extern from "placed_alloc.h":
    object normops_placed_handler_capsule()
    void normops_set_place_hint(size_t address)
    size_t normops_set_keep_limit(size_t limit)
    size_t normops_kept_total()

# Smaller outputs keep NumPy's allocator: switching the handler in and out
# costs about 0.3 µs a call, and fast Softmax outputs of 16-64 KiB measured
# 3-10% slower placed, those of 128 KiB and more 1-19% faster (the gain
# depends on where malloc happened to put y).
cdef Py_ssize_t PLACE_FROM_BYTES = 131072
# how far past the input's line y starts, modulo 4096 (the offsets 2048
# and 3072 measured best, the offsets just past x worst)
DEF PLACE_AFTER_INPUT = 3072
cdef object PLACED_HANDLER = normops_placed_handler_capsule()


cdef cnp.ndarray placed_like(cnp.ndarray x):
    """A new C-contiguous array of x's shape and dtype for a kernel that
    reads x and writes it in step; an ordinary ndarray that owns its data
    (NumPy frees it through the handler it was made with)."""
    return placed_empty(x, cnp.PyArray_TYPE(x))


cdef cnp.ndarray placed_empty(cnp.ndarray x, int typenum):
    """placed_like with the dtype ``typenum`` (LayerNormalization's Y may
    have Scale's dtype); placed when x is large enough."""
    if cnp.PyArray_NBYTES(x) < PLACE_FROM_BYTES:
        return cnp.PyArray_EMPTY(cnp.PyArray_NDIM(x), cnp.PyArray_DIMS(x), typenum, 0)
    normops_set_place_hint(<size_t>cnp.PyArray_DATA(x) + PLACE_AFTER_INPUT)
    old = cnp.PyDataMem_SetHandler(PLACED_HANDLER)
    try:
        return cnp.PyArray_EMPTY(cnp.PyArray_NDIM(x), cnp.PyArray_DIMS(x), typenum, 0)
    finally:
        cnp.PyDataMem_SetHandler(old)


cdef cnp.ndarray kernel_output_like(cnp.ndarray a):
    """A new array like a (C order, its shape and dtype), placed for a
    kernel reading a (float32/float64 a; other arrays get np.empty's)."""
    cdef int t = cnp.PyArray_TYPE(a)
    if t == cnp.NPY_FLOAT32 or t == cnp.NPY_FLOAT64:
        return placed_like(a)
    return cnp.PyArray_EMPTY(cnp.PyArray_NDIM(a), cnp.PyArray_DIMS(a), t, 0)


def empty_placed(x):
    """kernel_output_like from Python."""
    if type(x) is not cnp.ndarray:
        raise TypeError("kernel argument 'x' must be an ndarray")
    return kernel_output_like(<cnp.ndarray>x)


def set_place_from_bytes(Py_ssize_t nbytes):
    """Change the output size from which outputs are placed (tests and
    benchmarks; the bits do not depend on it); returns the old one."""
    global PLACE_FROM_BYTES
    old = PLACE_FROM_BYTES
    PLACE_FROM_BYTES = max(1, nbytes)
    return old


def set_output_cache_bytes(size_t limit):
    """Change how many bytes of freed placed outputs (blocks of 1 MiB and
    more) are kept for the next outputs of about their size (0: none; the
    kept blocks above the new limit are freed now); returns the old limit."""
    return normops_set_keep_limit(limit)


def output_cache_held():
    """The bytes held now in kept blocks (tests)."""
    return normops_kept_total()
