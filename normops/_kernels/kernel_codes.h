/* The numbers naming what the routes module (compiled once) asks a kernel
 * build for through its table (kernel_table.pxd): normops' own element-wise
 * functions, the reductions' accumulations and finishing steps, the element
 * types of the integer-serving kernels. One list, read by both sides. */
#ifndef NORMOPS_KERNEL_CODES_H
#define NORMOPS_KERNEL_CODES_H

/* exp, log and log1p (transcendental.h) */
enum normops_tfunc {
    NORMOPS_T_EXP32, NORMOPS_T_LOG32, NORMOPS_T_EXP32_FAST,
    NORMOPS_T_EXP64, NORMOPS_T_LOG64, NORMOPS_T_LOG1P32, NORMOPS_T_LOG1P64,
    NORMOPS_T_SCALAR = 8  /* or-ed in: the one-at-a-time loop */
};

/* erf and tanh (erf_tanh.h): numbers after the ones above */
enum normops_etfunc {
    NORMOPS_T_ERF32 = 16, NORMOPS_T_TANH32, NORMOPS_T_ERF64, NORMOPS_T_TANH64,
    NORMOPS_T_ERF32_FAST, NORMOPS_T_TANH32_FAST
};

/* the long-double references of the exhaustive check
 * (transcendental_reference.h) */
enum normops_reference_function {
    NORMOPS_REFERENCE_EXP = 0, NORMOPS_REFERENCE_LOG = 1, NORMOPS_REFERENCE_LOG1P = 2
};

/* a reduction's accumulation (reduction.h) */
enum normops_reduce_op {
    NORMOPS_R_SUM, NORMOPS_R_SUM_ABS, NORMOPS_R_SUM_SQUARE, NORMOPS_R_SUM_EXP,
    NORMOPS_R_PROD, NORMOPS_R_MAX, NORMOPS_R_MIN, NORMOPS_R_MAX_NAN, NORMOPS_R_MIN_NAN,
    /* ReduceLogSumExp's fast flavour: SUM_EXP with the fast exponential
     * (float32; float64 has one exponential in both flavours) */
    NORMOPS_R_SUM_EXP_FAST
};

/* the step after a reduction's accumulation, per output (reduction.pxi;
 * the same numbers in normops/reduction.py) */
enum normops_finishing {
    NORMOPS_FINISH_NONE = 0,
    NORMOPS_FINISH_MEAN = 1,        /* / count (rounded to the arithmetic type) */
    NORMOPS_FINISH_SQRT = 2,
    NORMOPS_FINISH_LOG = 3,
    NORMOPS_FINISH_LOGSUMEXP = 4,   /* m + log(sum exp(x - m)); an infinite or NaN m is the result */
    NORMOPS_FINISH_NAN_FIRST = 5    /* max/min scan: a NaN first element wins */
};

/* the element types of ArgMax/ArgMin, CumSum/CumProd and the integer
 * reductions (signed integers pass as their unsigned view where the bits
 * are the same) */
enum normops_element_type {
    NORMOPS_FLOAT32, NORMOPS_FLOAT64, NORMOPS_INT8, NORMOPS_INT16, NORMOPS_INT32, NORMOPS_INT64,
    NORMOPS_UINT8, NORMOPS_UINT16, NORMOPS_UINT32, NORMOPS_UINT64
};

#endif
