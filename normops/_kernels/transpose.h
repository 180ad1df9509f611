/* Cache-blocked transposing copy: the one "move axes" scratch copy of the
 * front layer (normops/_transpose.py).
 *
 * src holds `outer` A x B matrices, dst receives their B x A transposes.
 * Elements are moved as raw words of 1, 2, 4 or 8 bytes, so every dtype of
 * one size shares one loop and no value is ever interpreted: the copy is
 * exact by construction. The matrices are cut into T x T tiles copied one at
 * a time: a tile's source and destination lines stay in cache until the tile
 * is done, where an element-by-element strided copy loads a new line per
 * element (and, for power-of-two row lengths, every line of a column falls
 * into the same cache set). Within a tile the destination is written row by
 * row (measured faster than reading the source row by row). */
#ifndef NORMOPS_TRANSPOSE_H
#define NORMOPS_TRANSPOSE_H

#include <stddef.h>
#include <stdint.h>

#define NORMOPS_DEFINE_TRANSPOSE_TILE(W)                                                      \
static inline void normops_transpose_tile_##W(const W* s, W* d, ptrdiff_t A, ptrdiff_t B,     \
                                              ptrdiff_t i0, ptrdiff_t i1,                     \
                                              ptrdiff_t j0, ptrdiff_t j1) {                   \
    for (ptrdiff_t j = j0; j < j1; j++)                                                       \
        for (ptrdiff_t i = i0; i < i1; i++)                                                   \
            d[j * A + i] = s[i * B + j];                                                      \
}

NORMOPS_DEFINE_TRANSPOSE_TILE(uint8_t)
NORMOPS_DEFINE_TRANSPOSE_TILE(uint16_t)
NORMOPS_DEFINE_TRANSPOSE_TILE(uint32_t)
NORMOPS_DEFINE_TRANSPOSE_TILE(uint64_t)

/* Copy tile t of the outer * ceil(A / T) * ceil(B / T) tiles (row-major
 * numbering: matrix, tile row, tile column); word is 1, 2, 4 or 8 bytes. */
static inline void normops_transpose_tile(const void* src, void* dst, ptrdiff_t A, ptrdiff_t B,
                                          ptrdiff_t T, ptrdiff_t t, int word) {
    ptrdiff_t tiles_a = (A + T - 1) / T, tiles_b = (B + T - 1) / T;
    ptrdiff_t o = t / (tiles_a * tiles_b), r = t % (tiles_a * tiles_b);
    ptrdiff_t i0 = (r / tiles_b) * T, j0 = (r % tiles_b) * T;
    ptrdiff_t i1 = i0 + T < A ? i0 + T : A, j1 = j0 + T < B ? j0 + T : B;
    ptrdiff_t first = o * A * B;  /* the matrix's first element, in words */
    switch (word) {
    case 1: normops_transpose_tile_uint8_t((const uint8_t*)src + first, (uint8_t*)dst + first,
                                           A, B, i0, i1, j0, j1); break;
    case 2: normops_transpose_tile_uint16_t((const uint16_t*)src + first, (uint16_t*)dst + first,
                                            A, B, i0, i1, j0, j1); break;
    case 4: normops_transpose_tile_uint32_t((const uint32_t*)src + first, (uint32_t*)dst + first,
                                            A, B, i0, i1, j0, j1); break;
    default: normops_transpose_tile_uint64_t((const uint64_t*)src + first, (uint64_t*)dst + first,
                                             A, B, i0, i1, j0, j1); break;
    }
}

#endif
