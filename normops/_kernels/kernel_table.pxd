# What the routes module (routes.pyx, compiled once) and the ISA builds
# (isa_*.pyx, one per instruction-set level) share: the table of kernel
# entry points the routes call in the build chosen at import (each build
# fills one and hands it over in a capsule, KERNEL_TABLE), and the small
# checks both sides make. Declarations only: nothing here is a module.

cimport numpy as cnp

# the statistic each row is divided by (row_divide.pxi)
cdef enum RowDivisor:
    DIVIDE_BY_STD = 0   # MeanVarianceNormalization
    DIVIDE_BY_L1 = 1    # LpNormalization p=1
    DIVIDE_BY_L2 = 2    # LpNormalization p=2

# the capsule's name
cdef extern from *:
    """
    #define NORMOPS_KERNEL_TABLE_NAME "normops._kernels.KernelTable"
    """
    const char* KERNEL_TABLE_NAME "NORMOPS_KERNEL_TABLE_NAME"

ctypedef struct KernelTable:
    object (*softmax_direct)(object x, object axis, object version, int kind, bint fast, int n_threads)
    object (*sigmoid_direct)(object x, bint fast, int n_threads)
    object (*row_divide)(object x, object y, Py_ssize_t rows, Py_ssize_t cols, int kind, int n_threads)
    object (*cum_direct)(object x, object axis, bint exclusive, bint reverse, bint multiply, int n_threads)
    object (*gelu_flat)(object x, object b, object y, bint tanh, bint fast, int n_threads)
    object (*row_normalize_nd)(object X, object scale, object bias, object axis, object epsilon, bint center,
                               bint one_param_type, bint y_follows_scale, int n_threads, bint want_mean,
                               bint want_inv)
    # the build's own share of the thread decisions (team.h keeps a copy
    # per build: the calling thread's last team, and where the process's
    # figures are); the routes module shows and pins the figures themselves
    int figures_level   # the ISA level its figures are kept under (0 baseline, 1 AVX2, 2 AVX-512)
    void (*use_team_state)(void* state) noexcept nogil
    void (*forget_last_team)() noexcept nogil
    int (*loop_threads)(int cap, long long chunks, long long chunk_elements, long long elements,
                        int family) noexcept nogil
    int (*threads_in_use)() noexcept nogil


cdef inline bint is_plain_float(object x) noexcept:
    """An exact ndarray of float32/float64, native, aligned, C-contiguous."""
    if type(x) is not cnp.ndarray:
        return False
    cdef cnp.ndarray a = <cnp.ndarray>x
    cdef int t = cnp.PyArray_TYPE(a)
    return ((t == cnp.NPY_FLOAT32 or t == cnp.NPY_FLOAT64) and cnp.PyArray_IS_C_CONTIGUOUS(a)
            and cnp.PyArray_ISALIGNED(a) and cnp.PyArray_ISNOTSWAPPED(a))


cdef inline Py_ssize_t dims_product(cnp.ndarray x, int first, int last) noexcept:
    """The product of x's dimensions first..last-1."""
    cdef Py_ssize_t p = 1
    cdef int i
    for i in range(first, last):
        p *= cnp.PyArray_DIM(x, i)
    return p
