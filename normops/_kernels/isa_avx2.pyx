# Kernel build for ISA level "avx2"; see setup.py for its compiler flags.
ISA_LEVEL = "avx2"
include "kernels.pxi"
