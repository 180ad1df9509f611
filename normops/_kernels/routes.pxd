# What the ISA builds (isa_*.pyx) take from the routes module (routes.pyx,
# compiled once): the outputs placed for the kernels' stores (placed.pxi).
# Cython exports these through the module, which every build imports.

cimport numpy as cnp

cdef cnp.ndarray placed_like(cnp.ndarray x)
cdef cnp.ndarray placed_empty(cnp.ndarray x, int typenum)
cdef cnp.ndarray kernel_output_like(cnp.ndarray a)
