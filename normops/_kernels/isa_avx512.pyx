# Kernel build for ISA level "avx512"; see setup.py for its compiler flags.
ISA_LEVEL = "avx512"
include "kernels.pxi"
