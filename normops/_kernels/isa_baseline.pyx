# Kernel build for ISA level "baseline"; see setup.py for its compiler flags.
ISA_LEVEL = "baseline"
include "kernels.pxi"
