# The routes from normops' entry points to the kernels, compiled once
# (setup.py): every kernel entry point (the <family>_entry.pxi files, with
# their checks, checks.pxi, and axes, axes.pxi; methods of each build,
# kernel_build.pxi), normops.run's kept direct functions (route.pxi), the
# named functions' route in C (named.pxi), the outputs placed for the
# kernels' stores (placed.pxi), the thread decisions' figures and the
# thread budget (thread_costs.pxi) and the build facts (build_facts.pxi).
# None of it depends on the instruction set; it reaches the nogil loops of
# an ISA build through that build's table (kernel_table.pxd).

cimport numpy as cnp
from cpython.pycapsule cimport PyCapsule_GetPointer
from normops._kernels.kernel_table cimport *

cnp.import_array()

cdef class KernelBuild  # kernel_build.pxi

# kernel_codes.h's numbers, which the front layer passes to the entry points
# (normops/reduction.py, normops/row_divide.py): one list, the C one
REDUCE_OPS = dict(SUM=NORMOPS_R_SUM, SUM_ABS=NORMOPS_R_SUM_ABS, SUM_SQUARE=NORMOPS_R_SUM_SQUARE,
                  SUM_EXP=NORMOPS_R_SUM_EXP, PROD=NORMOPS_R_PROD, MAX=NORMOPS_R_MAX, MIN=NORMOPS_R_MIN,
                  MAX_NAN=NORMOPS_R_MAX_NAN, MIN_NAN=NORMOPS_R_MIN_NAN, SUM_EXP_FAST=NORMOPS_R_SUM_EXP_FAST)
FINISHING_STEPS = dict(NONE=FINISH_NONE, MEAN=FINISH_MEAN, SQRT=FINISH_SQRT, LOG=FINISH_LOG,
                       LOGSUMEXP=FINISH_LOGSUMEXP, NAN_FIRST=FINISH_NAN_FIRST)
ROW_DIVISORS = dict(STD=DIVIDE_BY_STD, L1=DIVIDE_BY_L1, L2=DIVIDE_BY_L2)

include "checks.pxi"
include "axes.pxi"
include "placed.pxi"
include "route.pxi"
include "named.pxi"
include "thread_costs.pxi"
include "build_facts.pxi"
# the entry points of each family, then the build they are methods of
include "activation_entry.pxi"
include "arg_reduce_entry.pxi"
include "cumulative_entry.pxi"
include "gelu_entry.pxi"
include "normalization_entry.pxi"
include "numpy_style_entry.pxi"
include "reduction_entry.pxi"
include "row_divide_entry.pxi"
include "softmax_entry.pxi"
include "sum16_entry.pxi"
include "transcendental_entry.pxi"
include "transpose_entry.pxi"
include "tuning_entry.pxi"
include "kernel_build.pxi"
