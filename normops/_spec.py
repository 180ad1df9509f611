"""The numbers docs/specification.md fixes for chunks, tiles and long
sequences, for the Python side (normops/dask.py, normops/reference/, the
tests).

The kernels take the same numbers from ``normops/_kernels/spec_constants.h``
(named there with the prefix ``NORMOPS_``); ``tests/test_spec_constants.py``
checks that the two and the specification's text agree. Chunks never change
a bit (rows, outputs and lines are computed whole inside one); the blocks of
a long sequence do, so changing ``LONG_TERMS`` or ``BLOCK_TERMS`` is a
change of the specification first. Plain integers only: the executable
specification imports this module too, and must not reach production code
through it.
"""

#: Rows per chunk: ``max(1, ROW_CHUNK_ELEMENTS // cols)`` (§6.6, §7.4, §8,
#: §9.1, §14.1); the element-wise maps go in chunks of this many elements
#: (§5.1, §10).
ROW_CHUNK_ELEMENTS = 16384

#: Reductions, ArgMax/ArgMin, CumSum/CumProd: ``max(1,
#: REDUCE_CHUNK_ELEMENTS // work)`` units per chunk (§11.3, §12, §13).
REDUCE_CHUNK_ELEMENTS = 32768

#: Outputs per column tile of a reduction (§11.2); a tile's work is
#: ``R * min(C, REDUCE_TILE)`` (§11.3).
REDUCE_TILE = 256

#: A sequence of at least ``LONG_TERMS`` terms is reduced in blocks of
#: ``BLOCK_TERMS`` combined in block order (§11.4); ArgMax/ArgMin sequences
#: as long are scanned in such blocks (§12).
LONG_TERMS = 1 << 20
BLOCK_TERMS = 1 << 16
