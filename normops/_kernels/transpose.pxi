# The cache-blocked transposing copy of the front layer's "move axes"
# scratch copies (normops/_transpose.py); the loops are in transpose.h.

cdef extern from "transpose.h" nogil:
    void normops_transpose_tile(const void* src, void* dst, Py_ssize_t A, Py_ssize_t B,
                                Py_ssize_t T, Py_ssize_t t, int word)

# Tile edge in elements: 32 x 32 measured best or equal-best for 4- and
# 8-byte elements against 8, 16 and 64 (docs/performance-analysis.md).
cdef Py_ssize_t TRANSPOSE_TILE = 32


def swap_blocks(x, y, Py_ssize_t outer, Py_ssize_t a, Py_ssize_t b, int n_threads):
    """y[o, j, i] = x[o, i, j] for x of shape (outer, a, b), as raw words.

    x and y are C-contiguous ndarrays of one dtype whose element size is 1,
    2, 4 or 8 bytes. A pure copy: no bit depends on the tile size or the
    thread count. The threads claim tiles one at a time."""
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
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
    cdef Py_ssize_t T = TRANSPOSE_TILE
    cdef Py_ssize_t tiles = outer * ((a + T - 1) // T) * ((b + T - 1) // T)
    cdef int threads = threads_for(n_threads, tiles, outer * a * b, NORMOPS_COST_MOVE)
    cdef Py_ssize_t t
    with nogil:
        threads = team_take(threads, n_threads)
        for t in prange(tiles, num_threads=threads, schedule="dynamic"):
            normops_team_claims(claimed)
            normops_transpose_tile(px, py, a, b, T, t, word)
        team_release(threads)


def set_transpose_tile(Py_ssize_t elements):
    """Change the tile edge of swap_blocks (tests and benchmarks; the
    copy does not depend on it); returns the old one."""
    global TRANSPOSE_TILE
    old = TRANSPOSE_TILE
    TRANSPOSE_TILE = max(1, elements)
    return old
