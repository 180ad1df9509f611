# The routes from normops' entry points to the kernels: normops.run's
# kept direct functions (route.pxi) and the named functions' route in C
# (named.pxi), the outputs placed for the kernels' stores (placed.pxi,
# which the ISA builds cimport: routes.pxd), the thread decisions' figures
# and the thread budget (thread_costs.pxi), and the build facts
# (build_facts.pxi). None of it depends on the instruction set, so it is
# compiled once (setup.py); it reaches the kernels of the ISA build chosen
# at import through that build's table (kernel_table.pxd, use_kernels).

cimport numpy as cnp
from cpython.pycapsule cimport PyCapsule_GetPointer
from normops._kernels.kernel_table cimport (
    KernelTable, KERNEL_TABLE_NAME, DIVIDE_BY_L1, DIVIDE_BY_L2, is_plain_float, dims_product,
)

cnp.import_array()

include "placed.pxi"
include "route.pxi"
include "named.pxi"
include "thread_costs.pxi"
include "build_facts.pxi"
