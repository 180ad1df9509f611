# The entry point of the cache-blocked transposing copy (normops/_transpose.py's
# "move axes" scratch copies), in the routes module: it checks the arrays
# and calls one build's loop (transpose.pxi); a method of the build
# (kernel_build.pxi).


def swap_blocks(KernelBuild build, x, y, Py_ssize_t outer, Py_ssize_t a, Py_ssize_t b, int n_threads):
    """y[o, j, i] = x[o, i, j] for x of shape (outer, a, b), as raw words.

    x and y are C-contiguous ndarrays of one dtype whose element size is 1,
    2, 4 or 8 bytes. A pure copy: no bit depends on the tile size or the
    thread count. The threads claim tiles one at a time."""
    if not isinstance(x, cnp.ndarray) or not isinstance(y, cnp.ndarray):
        raise TypeError("swap_blocks takes ndarrays")
    if outer < 0 or a < 0 or b < 0:
        raise ValueError("swap_blocks needs outer, a, b >= 0")
    if x.dtype != y.dtype:
        raise TypeError("swap_blocks: x and y need one dtype")
    cdef int word = <int>cnp.PyArray_ITEMSIZE(<cnp.ndarray>x)
    if word != 1 and word != 2 and word != 4 and word != 8:
        raise TypeError(f"swap_blocks moves 1, 2, 4 or 8-byte elements, not {x.dtype}")
    check_array(x, cnp.PyArray_TYPE(<cnp.ndarray>x), shape_size(outer, a, b), False, "x")
    check_array(y, cnp.PyArray_TYPE(<cnp.ndarray>x), shape_size(outer, a, b), True, "y")
    cdef const void* px = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* py = cnp.PyArray_DATA(<cnp.ndarray>y)
    # the words are read as unsigned integers of their size: both pointers
    # must be aligned to it (a dtype's own alignment can be smaller)
    if (<size_t>px) % word or (<size_t>py) % word:
        raise ValueError("swap_blocks: x and y must be aligned to their element size")
    if outer * a * b == 0:
        return
    with nogil:
        build.table.swap_blocks(px, py, outer, a, b, word, n_threads)
