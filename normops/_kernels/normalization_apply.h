/* Step 4 of the row normalisations (docs/specification.md §6.3):
 * y = (((x - mean) * inv) * scale) + bias, four
 * separately rounded operations (three without a bias), NaN made canonical
 * unless the row is known NaN-free. In a small function of its own: inlined
 * into normalization.pxi's large row loop, gcc kept the pointers and a copy of
 * each x vector on the stack (seven loads and two stores per 8 elements,
 * about 4.5 cycles on Zen 2 where 2 suffice). y may be x. */
#ifndef NORMOPS_NORMALIZATION_APPLY_H
#define NORMOPS_NORMALIZATION_APPLY_H

#include <math.h>
#include <stddef.h>

#define NORMOPS_DEFINE_NORMALIZE_APPLY(T, NAME)                                                          \
    __attribute__((noinline)) static void NAME(const T* x, T* y, const T* scale, const T* bias, T mean, \
                                               T inv, ptrdiff_t n, int check_nan) {                     \
        if (bias != NULL && check_nan) {                                                               \
            for (ptrdiff_t j = 0; j < n; j++) {                                                        \
                T v = (((x[j] - mean) * inv) * scale[j]) + bias[j];                                    \
                y[j] = v == v ? v : (T)NAN;                                                            \
            }                                                                                          \
        } else if (bias != NULL) {                                                                     \
            for (ptrdiff_t j = 0; j < n; j++)                                                          \
                y[j] = (((x[j] - mean) * inv) * scale[j]) + bias[j];                                   \
        } else if (check_nan) {                                                                        \
            for (ptrdiff_t j = 0; j < n; j++) {                                                        \
                T v = ((x[j] - mean) * inv) * scale[j];                                                \
                y[j] = v == v ? v : (T)NAN;                                                            \
            }                                                                                          \
        } else {                                                                                       \
            for (ptrdiff_t j = 0; j < n; j++)                                                          \
                y[j] = ((x[j] - mean) * inv) * scale[j];                                               \
        }                                                                                              \
    }

NORMOPS_DEFINE_NORMALIZE_APPLY(float, normops_normalize_apply_float)
NORMOPS_DEFINE_NORMALIZE_APPLY(double, normops_normalize_apply_double)

#endif
