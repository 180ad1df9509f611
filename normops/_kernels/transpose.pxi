# The cache-blocked transposing copy of the front layer's "move axes"
# scratch copies (normops/_transpose.py); the loops are in transpose.h.

cdef extern from "transpose.h" nogil:
    void normops_transpose_tile(const void* src, void* dst, Py_ssize_t A, Py_ssize_t B,
                                Py_ssize_t T, Py_ssize_t t, int word)

# Tile edge in elements: 32 x 32 measured best or equal-best for 4- and
# 8-byte elements against 8, 16 and 64 (docs/performance-analysis.md).
cdef Py_ssize_t TRANSPOSE_TILE = 32


cdef void swap_blocks_loop(const void* px, void* py, Py_ssize_t outer, Py_ssize_t a, Py_ssize_t b, int word,
                           int n_threads) noexcept nogil:
    """y[o, j, i] = x[o, i, j] for x of shape (outer, a, b), as raw words
    of ``word`` bytes (1, 2, 4 or 8), in tiles the threads claim one at a
    time: a pure copy, no bit depends on the tile or the threads. Its entry
    point, which checks the arrays: transpose_entry.pxi."""
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t T = TRANSPOSE_TILE
    cdef Py_ssize_t tiles = outer * ((a + T - 1) // T) * ((b + T - 1) // T), t
    cdef int threads = threads_for(n_threads, tiles, outer * a * b, NORMOPS_COST_MOVE)
    threads = team_take(threads, n_threads)
    for t in prange(tiles, num_threads=threads, schedule="dynamic"):
        normops_team_claims(claimed)
        normops_transpose_tile(px, py, a, b, T, t, word)
    team_release(threads)
