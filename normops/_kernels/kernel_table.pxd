# What the routes module (routes.pyx, compiled once) and the ISA builds
# (isa_*.pyx, one per instruction-set level) share: the table of a build's
# nogil loops the routes call (each build fills one and hands it over in a
# capsule, KERNEL_TABLE), and the codes and layouts they pass. Declarations
# only: nothing here is a module, and nothing touches a Python object.

from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t

# how an array's elements are stored: float16 and bfloat16 are widened
# exactly to float32 and results rounded once back (docs/specification.md
# §4.2; storage.pxi)
cdef enum Storage:
    STORE_FLOAT32
    STORE_FLOAT16
    STORE_BFLOAT16
    STORE_FLOAT64

# the statistic each row is divided by (row_divide.pxi)
cdef enum RowDivisor:
    DIVIDE_BY_STD = 0   # MeanVarianceNormalization
    DIVIDE_BY_L1 = 1    # LpNormalization p=1
    DIVIDE_BY_L2 = 2    # LpNormalization p=2

# what the routes ask a build for, by number (kernel_codes.h)
cdef extern from "kernel_codes.h":
    enum:
        NORMOPS_T_EXP32
        NORMOPS_T_LOG32
        NORMOPS_T_EXP32_FAST
        NORMOPS_T_EXP64
        NORMOPS_T_LOG64
        NORMOPS_T_LOG1P32
        NORMOPS_T_LOG1P64
        NORMOPS_T_SCALAR
        NORMOPS_T_ERF32
        NORMOPS_T_TANH32
        NORMOPS_T_ERF64
        NORMOPS_T_TANH64
        NORMOPS_T_ERF32_FAST
        NORMOPS_T_TANH32_FAST
        NORMOPS_REFERENCE_EXP
        NORMOPS_REFERENCE_LOG
        NORMOPS_REFERENCE_LOG1P
    # a reduction's accumulation
    enum normops_reduce_op:
        NORMOPS_R_SUM
        NORMOPS_R_SUM_ABS
        NORMOPS_R_SUM_SQUARE
        NORMOPS_R_SUM_EXP
        NORMOPS_R_PROD
        NORMOPS_R_MAX
        NORMOPS_R_MIN
        NORMOPS_R_MAX_NAN
        NORMOPS_R_MIN_NAN
        NORMOPS_R_SUM_EXP_FAST
    # the step after it
    enum:
        FINISH_NONE "NORMOPS_FINISH_NONE"
        FINISH_MEAN "NORMOPS_FINISH_MEAN"
        FINISH_SQRT "NORMOPS_FINISH_SQRT"
        FINISH_LOG "NORMOPS_FINISH_LOG"
        FINISH_LOGSUMEXP "NORMOPS_FINISH_LOGSUMEXP"
        FINISH_NAN_FIRST "NORMOPS_FINISH_NAN_FIRST"
    # element types
    enum:
        ELEMENT_FLOAT32 "NORMOPS_FLOAT32"
        ELEMENT_FLOAT64 "NORMOPS_FLOAT64"
        ELEMENT_INT8 "NORMOPS_INT8"
        ELEMENT_INT16 "NORMOPS_INT16"
        ELEMENT_INT32 "NORMOPS_INT32"
        ELEMENT_INT64 "NORMOPS_INT64"
        ELEMENT_UINT8 "NORMOPS_UINT8"
        ELEMENT_UINT16 "NORMOPS_UINT16"
        ELEMENT_UINT32 "NORMOPS_UINT32"
        ELEMENT_UINT64 "NORMOPS_UINT64"

# a build's tuning knobs (tuning_entry.pxi): sizes and switches that
# change speed, never bits
cdef enum Knob:
    KNOB_STREAM_FROM_BYTES           # softmax.pxi, STREAM_FROM_BYTES
    KNOB_SOFTMAX_SHORT_ROWS          # softmax.pxi, SHORT_ROWS_ON
    KNOB_SOFTMAX_DIVIDE_IN_PASS      # softmax.pxi, DIVIDE_IN_PASS_ON
    KNOB_SOFTMAX_GROUP_ELEMENTS      # softmax.pxi, GROUP_ELEMENTS
    KNOB_LOG_SOFTMAX_GROUP_ELEMENTS  # softmax.pxi, LOG_GROUP_ELEMENTS
    KNOB_APPLY_IN_CACHE_BYTES        # kernels.pxi, APPLY_IN_CACHE_BYTES
    KNOB_SIDE_BY_SIDE_BYTES          # kernels.pxi, SIDE_BY_SIDE_BYTES
    KNOB_TRANSPOSE_TILE              # transpose.pxi, TRANSPOSE_TILE

ctypedef struct RowParams:  # normalization.pxi
    # How Scale/B (and supplied statistics) map onto the rows.
    # period == 0: Scale/B hold one value per column, shared by every row.
    # period > 0: a row is cols // seg_len segments of seg_len columns;
    #   segment i of row r takes the scalar parameter number
    #   (r % period) * (cols // seg_len) + i (InstanceNormalization: period C,
    #   one segment; GroupNormalization-21: period G, C / G segments).
    Py_ssize_t period
    Py_ssize_t seg_len
    # Per parameter, or NULL: statistics supplied (BatchNormalization in
    # inference mode: mean and inv = 1 / sqrt(var + epsilon)), steps 1-3
    # skipped; step 4 unchanged.
    const void* given_mean
    const void* given_inv
    # Per row, or NULL: step 1's mean, step 2's variance and step 3's inv
    # in the arithmetic type (BatchNormalization's training statistics; inv
    # is the legacy saved_var output, the very value step 4 used).
    void* mean_native
    void* var_native
    void* inv_native


# the capsule's name, with the table's layout version: a build of another
# layout (an older commit's, loaded to compare) is refused, not misread.
# Change the number with the layout.
cdef extern from *:
    """
    #define NORMOPS_KERNEL_TABLE_NAME "normops._kernels.KernelTable.2"
    """
    const char* KERNEL_TABLE_NAME "NORMOPS_KERNEL_TABLE_NAME"

ctypedef struct KernelTable:
    # Softmax, LogSoftmax and Hardmax (kind 0, 1, 2; softmax.pxi) over rows of
    # one storage, and along the middle axis of outer x n x inner: -1 when out
    # of memory; exact Softmax's float64 quotient e / s
    int (*softmax_rows)(const void* x, void* y, Storage storage, Py_ssize_t rows, Py_ssize_t cols, int kind,
                        bint fast, int n_threads) noexcept nogil
    int (*softmax_columns)(const void* x, void* y, bint is_float32, Py_ssize_t outer, Py_ssize_t n,
                           Py_ssize_t inner, int kind, bint fast, int n_threads) noexcept nogil
    void (*divide_float)(const float* e, float s, float* out, Py_ssize_t n) noexcept nogil
    # Sigmoid of n elements of a storage (activation.pxi): -1 when out of memory
    int (*sigmoid)(const void* x, void* y, Storage storage, Py_ssize_t n, bint fast, int n_threads) noexcept nogil
    # rows divided by a statistic of their own (row_divide.pxi; kind: RowDivisor):
    # -1 when out of memory; LpNormalization along columns; the Sum16 of rows
    int (*row_divide)(const void* x, Storage storage, void* y, Py_ssize_t rows, Py_ssize_t cols, int kind,
                      int n_threads) noexcept nogil
    int (*lp_columns)(const void* x, void* y, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner, int kind,
                      bint is_float32, int n_threads) noexcept nogil
    void (*row_sums16)(const void* x, void* out, Py_ssize_t rows, Py_ssize_t cols, const void* center,
                       bint is_float32, int n_threads) noexcept nogil
    # Sum16 of each row, one thread (sum16.pxi)
    void (*sum16_rows)(const void* x, void* out, Py_ssize_t rows, Py_ssize_t cols, bint is_float32) noexcept nogil
    # the transposing copy of words of 1, 2, 4 or 8 bytes (transpose.pxi)
    void (*swap_blocks)(const void* x, void* y, Py_ssize_t outer, Py_ssize_t a, Py_ssize_t b, int word,
                        int n_threads) noexcept nogil
    # set a tuning knob (Knob, above) to a value: the old one
    Py_ssize_t (*tune)(int knob, Py_ssize_t value) noexcept nogil
    # Gelu of n elements, a bias b (or NULL) of cols elements added first (gelu.pxi)
    void (*gelu)(const char* x, const char* b, Py_ssize_t cols, char* y, Py_ssize_t n, bint is_float32, bint tanh,
                 bint fast, int n_threads) noexcept nogil
    # the row normalisations (normalization.pxi): rows x cols x into y, scale
    # and bias (or NULL) of each storage, as p lays them out, given_var (or
    # NULL) the variances behind p.given_mean; BatchNormalization's training
    # mode on N x C x S, gathering each channel into a row of ``gathered``.
    # -1 when out of memory.
    int (*row_normalize)(const void* x, Storage xs, void* y, Storage ys, const void* scale, Storage ss,
                         const void* bias, int bs, float* mean_out, float* inv_out, Py_ssize_t rows,
                         Py_ssize_t cols, double epsilon, bint center, int n_threads, RowParams* p,
                         const void* given_var) noexcept nogil
    int (*batch_training)(const void* x, Storage xs, void* y, Storage ys, const void* scale, Storage ss,
                          const void* bias, int bs, const void* given_mean, const void* given_var,
                          void* running_mean, void* running_var, Py_ssize_t N, Py_ssize_t C, Py_ssize_t S,
                          double epsilon, double momentum, int n_threads, void* saved_mean,
                          void* saved_inv, void* gathered) noexcept nogil
    # normops' own functions (kernel_codes.h), element-wise over n elements
    # of itemsize bytes in chunks (transcendental.pxi, gelu.pxi); the pairs
    # before exp32's and log32's last rounding; the float32 functions over
    # the patterns start + i*stride; the long-double reference over them
    # (or over patterns, when not NULL): the number flagged near a midpoint,
    # and the closest one; -1 when out of memory
    void (*function_map)(int which, const char* x, char* y, Py_ssize_t n, Py_ssize_t itemsize,
                         int n_threads) noexcept nogil
    void (*function_pairs)(int which, const float* x, double* hi, double* lo, Py_ssize_t n) noexcept nogil
    void (*function_range)(int which, uint64_t start, uint64_t stride, Py_ssize_t n, uint32_t* out,
                           int n_threads) noexcept nogil
    bint has_long_double_reference
    Py_ssize_t (*reference_range)(int which, const uint32_t* patterns, uint64_t start, uint64_t stride,
                                  Py_ssize_t n, uint32_t* out, uint8_t* near, int near_bits, int n_threads,
                                  double* closest, uint32_t* closest_pattern) noexcept nogil
    # the reductions (reduction.pxi): the accumulation of any element type,
    # the finished float32/float64 reduction, NumPy's where= and initial=
    # and var/std (numpy_style.pxi); x is O x R x C, reduced along R
    int (*reduce_accumulate)(int element, const void* x, Py_ssize_t O, Py_ssize_t R, Py_ssize_t C, int op,
                             const void* center, void* out, int n_threads) except -1 nogil
    int (*reduce_finish)(bint is_float32, const void* x, Py_ssize_t O, Py_ssize_t R, Py_ssize_t C, int op,
                         int finishing, void* out, int n_threads) except -1 nogil
    int (*reduce_where)(bint is_float32, const void* x, const unsigned char* where, Py_ssize_t O, Py_ssize_t R,
                        Py_ssize_t C, int op, int n_threads, bint has_initial, double initial, bint mean,
                        void* out) except -1 nogil
    int (*variance)(bint is_float32, const void* x, const unsigned char* where, Py_ssize_t O, Py_ssize_t R,
                    Py_ssize_t C, double ddof, bint root, int n_threads, void* out) except -1 nogil
    # ArgMax/ArgMin (arg_reduce.pxi) and CumSum/CumProd (cumulative.pxi) of the
    # outer x n x inner array x along n (-1: out of memory; an element type
    # the kernel does not take)
    int (*arg_reduce)(int element, const void* x, int64_t* out, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner,
                      bint is_min, bint last, bint find_nan, int n_threads) noexcept nogil
    int (*cumulate)(int element, const void* x, void* y, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner,
                    bint multiply, bint exclusive, bint reverse, int n_threads) noexcept nogil
    # the build's own share of the thread decisions (team.h keeps a copy
    # per build: the calling thread's last team, and where the process's
    # figures are); the routes module shows and pins the figures themselves
    int figures_level   # the ISA level its figures are kept under (0 baseline, 1 AVX2, 2 AVX-512)
    void (*use_team_state)(void* state) noexcept nogil
    void (*forget_last_team)() noexcept nogil
    int (*loop_threads)(int cap, long long chunks, long long chunk_elements, long long elements,
                        int family) noexcept nogil
    int (*threads_in_use)() noexcept nogil


cdef inline Py_ssize_t param_count(const RowParams* p, Py_ssize_t cols) noexcept nogil:
    """Values in Scale (and B) under the layout p."""
    return cols if p.period == 0 else p.period * (cols // p.seg_len)
