/* The numbers docs/specification.md fixes for chunks, tiles and long
 * sequences: the kernels' one copy. normops/_spec.py holds the same numbers
 * under the same names (without the NORMOPS_ prefix) for the Python side
 * (normops/dask.py, normops/reference/, the tests);
 * tests/test_spec_constants.py checks that this file, normops/_spec.py and
 * the specification's text agree. Chunks never change a bit (rows, outputs
 * and lines are computed whole inside one); the blocks of a long sequence
 * do, so changing NORMOPS_LONG_TERMS or NORMOPS_BLOCK_TERMS is a change of
 * the specification first.
 *
 * Each value is a ptrdiff_t (Py_ssize_t in the Cython sources, which
 * declare them in kernels.pxi), so that no product of them is computed in
 * int. */
#ifndef NORMOPS_SPEC_CONSTANTS_H
#define NORMOPS_SPEC_CONSTANTS_H

#include <stddef.h>

/* Rows per chunk: max(1, NORMOPS_ROW_CHUNK_ELEMENTS // cols) (§6.6, §7.4,
 * §8, §9.1, §14.1); the element-wise maps go in chunks of this many
 * elements (§5.1, §10). */
#define NORMOPS_ROW_CHUNK_ELEMENTS ((ptrdiff_t)16384)

/* Reductions, ArgMax/ArgMin, CumSum/CumProd: max(1,
 * NORMOPS_REDUCE_CHUNK_ELEMENTS // work) units per chunk (§11.3, §12, §13). */
#define NORMOPS_REDUCE_CHUNK_ELEMENTS ((ptrdiff_t)32768)

/* Outputs per column tile of a reduction (§11.2); a tile's work is
 * R * min(C, NORMOPS_REDUCE_TILE) (§11.3). */
#define NORMOPS_REDUCE_TILE ((ptrdiff_t)256)

/* A sequence of at least NORMOPS_LONG_TERMS terms is reduced in blocks of
 * NORMOPS_BLOCK_TERMS combined in block order (§11.4); ArgMax/ArgMin
 * sequences as long are scanned in such blocks (§12). */
#define NORMOPS_LONG_TERMS ((ptrdiff_t)1 << 20)
#define NORMOPS_BLOCK_TERMS ((ptrdiff_t)1 << 16)

#endif
