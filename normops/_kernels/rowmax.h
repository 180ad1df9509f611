/* The maximum of a row and whether it holds NaN or +inf, on the native
 * vectors of sum16.h (Softmax's step 1-2). Lane-wise maxima folded at the
 * end: the value is the row maximum whatever the order; which zero (-0 or
 * +0) wins a tie does not matter to any result (x - m is +0 or -0 only
 * where exp and log see the same value). NaN never wins a comparison. */
#ifndef NORMOPS_ROWMAX_H
#define NORMOPS_ROWMAX_H

#include "sum16.h"

#define NORMOPS_DEFINE_ROWMAX(T, N)                                                           \
static inline T normops_row_max_##T(const T* x, ptrdiff_t n, int* has_nan, int* has_pos_inf) { \
    const T inf = (T)__builtin_inf();                                                         \
    N##_vec m = {0}, none = {0};                                                              \
    N##_bits nan = (N##_bits){0}, pos_inf = (N##_bits){0};                                    \
    ptrdiff_t i = 0, full = n - n % N##_LANES;                                                \
    T best = -inf;                                                                            \
    m = none - inf;                                                                           \
    for (; i < full; i += N##_LANES) {                                                        \
        N##_vec v = *(const N##_unaligned*)(x + i);                                           \
        N##_bits greater = v > m;                                                             \
        m = (N##_vec)(((N##_bits)v & greater) | ((N##_bits)m & ~greater));                    \
        nan |= v != v;                                                                        \
        pos_inf |= v == inf;                                                                  \
    }                                                                                         \
    int any_nan = 0, any_inf = 0;                                                             \
    for (int l = 0; l < N##_LANES; l++) {                                                     \
        if (m[l] > best) best = m[l];                                                         \
        any_nan |= nan[l] != 0;                                                               \
        any_inf |= pos_inf[l] != 0;                                                           \
    }                                                                                         \
    for (; i < n; i++) {                                                                      \
        if (x[i] > best) best = x[i];                                                         \
        any_nan |= x[i] != x[i];                                                              \
        any_inf |= x[i] == inf;                                                               \
    }                                                                                         \
    *has_nan = any_nan;                                                                       \
    *has_pos_inf = any_inf;                                                                   \
    return best;                                                                              \
}

NORMOPS_DEFINE_ROWMAX(float, normops_f32)
NORMOPS_DEFINE_ROWMAX(double, normops_f64)

#endif
