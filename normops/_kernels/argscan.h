/* ArgMax / ArgMin of one contiguous sequence on native vectors.
 *
 * The rule (seed spec, "ArgMax, ArgMin") is a sequential scan: a later
 * element wins when strictly better, or better-or-equal with
 * select_last_index; NaN never wins unless it is first. Its result is the
 * first (last) index holding the best non-NaN value M. Comparisons are
 * exact, so any order of finding M gives the same M, and the index is then
 * a search for x == M: the result never depends on the vector width.
 *
 * One pass: the sequence is cut into sub-blocks of SUB_BYTES; each
 * sub-block's lane-wise best (NaN never replaces a lane: comparisons with
 * NaN are false) is folded, the sub-blocks are combined like the scan
 * combines elements, and only the winning sub-block is searched again.
 * When M is the type's "worst" value (-inf for ArgMax on floats) an all-NaN
 * sub-block could tie it, so the whole sequence is searched instead.
 *
 * find_nan (NumPy's rule, the first NaN wins) also reports the first NaN.
 * Only comparisons: no arithmetic on the data at all. */
#ifndef NORMOPS_ARGSCAN_H
#define NORMOPS_ARGSCAN_H

#include <stdint.h>
#include "sum16.h"

#define NORMOPS_ARG_SUB_BYTES 8192

/* Result of scanning one range: index of the winner (-1: none, the range is
 * all NaN), its value, and whether the index is the range's first NaN. */
#define NORMOPS_DEFINE_ARGSCAN(T, N, I, WORST_MAX, WORST_MIN)                                  \
typedef T N##_av __attribute__((vector_size(NORMOPS_VECTOR_BYTES)));                          \
typedef I N##_ab __attribute__((vector_size(NORMOPS_VECTOR_BYTES)));                          \
typedef T N##_au __attribute__((vector_size(NORMOPS_VECTOR_BYTES), aligned(sizeof(T)), may_alias)); \
enum { N##_AL = NORMOPS_VECTOR_BYTES / sizeof(T) };                                           \
                                                                                              \
NORMOPS_ALWAYS_INLINE int N##_better(T a, T b, int is_min) { return is_min ? a < b : a > b; } \
                                                                                              \
NORMOPS_ALWAYS_INLINE N##_av N##_vbest(N##_av v, N##_av m, int is_min) {                      \
    N##_ab take = is_min ? (v < m) : (v > m);                                                 \
    return (N##_av)(((N##_ab)v & take) | ((N##_ab)m & ~take));                                \
}                                                                                             \
                                                                                              \
NORMOPS_ALWAYS_INLINE int N##_any(N##_ab b) {                                                 \
    typedef unsigned long long w64 __attribute__((vector_size(NORMOPS_VECTOR_BYTES)));        \
    w64 w = (w64)b;                                                                           \
    unsigned long long r = 0;                                                                 \
    for (int q = 0; q < NORMOPS_VECTOR_BYTES / 8; q++) r |= w[q];                             \
    return r != 0;                                                                            \
}                                                                                             \
                                                                                              \
/* best of x[0..n) ignoring NaN (worst when none), and whether a NaN occurs */                \
NORMOPS_ALWAYS_INLINE T N##_range_best(const T* x, ptrdiff_t n, int is_min, int* has_nan) {   \
    const T worst = is_min ? (WORST_MIN) : (WORST_MAX);                                      \
    N##_av zero = {0};                                                                        \
    N##_av m0 = zero + worst, m1 = m0, m2 = m0, m3 = m0;                                      \
    N##_ab nan = {0};                                                                         \
    ptrdiff_t i = 0, full = n - n % (4 * N##_AL);                                             \
    for (; i < full; i += 4 * N##_AL) {                                                       \
        N##_av v0 = *(const N##_au*)(x + i), v1 = *(const N##_au*)(x + i + N##_AL);           \
        N##_av v2 = *(const N##_au*)(x + i + 2 * N##_AL), v3 = *(const N##_au*)(x + i + 3 * N##_AL); \
        m0 = N##_vbest(v0, m0, is_min); m1 = N##_vbest(v1, m1, is_min);                       \
        m2 = N##_vbest(v2, m2, is_min); m3 = N##_vbest(v3, m3, is_min);                       \
        nan |= (v0 != v0) | (v1 != v1) | (v2 != v2) | (v3 != v3);                             \
    }                                                                                         \
    m0 = N##_vbest(m1, m0, is_min); m2 = N##_vbest(m3, m2, is_min); m0 = N##_vbest(m2, m0, is_min); \
    T best = worst;                                                                           \
    for (int l = 0; l < N##_AL; l++) if (N##_better(m0[l], best, is_min)) best = m0[l];       \
    int any_nan = N##_any(nan);                                                               \
    for (; i < n; i++) {                                                                      \
        if (N##_better(x[i], best, is_min)) best = x[i];                                      \
        any_nan |= x[i] != x[i];                                                              \
    }                                                                                         \
    *has_nan = any_nan;                                                                       \
    return best;                                                                              \
}                                                                                             \
                                                                                              \
/* first (last) index of x[0..n) equal to value, or NaN when want_nan; -1 if none */          \
NORMOPS_ALWAYS_INLINE ptrdiff_t N##_find(const T* x, ptrdiff_t n, T value, int last, int want_nan) { \
    N##_av zero = {0}, target = zero + value;                                                 \
    ptrdiff_t full = n - n % N##_AL, i;                                                       \
    if (!last) {                                                                              \
        for (i = 0; i < full; i += N##_AL) {                                                  \
            N##_av v = *(const N##_au*)(x + i);                                               \
            if (N##_any(want_nan ? (v != v) : (v == target))) break;                          \
        }                                                                                     \
        for (; i < n; i++) if (want_nan ? x[i] != x[i] : x[i] == value) return i;             \
        return -1;                                                                            \
    }                                                                                         \
    for (i = n - 1; i >= full; i--) if (want_nan ? x[i] != x[i] : x[i] == value) return i;    \
    for (i = full - N##_AL; i >= 0; i -= N##_AL) {                                            \
        N##_av v = *(const N##_au*)(x + i);                                                   \
        if (N##_any(want_nan ? (v != v) : (v == target))) {                                   \
            for (ptrdiff_t k = i + N##_AL - 1; k >= i; k--)                                   \
                if (want_nan ? x[k] != x[k] : x[k] == value) return k;                        \
        }                                                                                     \
    }                                                                                         \
    return -1;                                                                                \
}                                                                                             \
                                                                                              \
/* The scan of x[0..n) with NaN ignored: returns the winner's index (-1 when                  \
 * every element is NaN) and stores its value. With find_nan, a NaN anywhere                  \
 * ends the scan: *found_nan = 1 and the first NaN's index is returned. */                    \
static inline ptrdiff_t normops_argscan_##N(const T* x, ptrdiff_t n, int is_min, int last,    \
                                            int find_nan, T* value, int* found_nan) {         \
    const T worst = is_min ? (WORST_MIN) : (WORST_MAX);                                      \
    const ptrdiff_t sub = NORMOPS_ARG_SUB_BYTES / sizeof(T);                                  \
    T best = worst;                                                                           \
    ptrdiff_t where = -1, len = 0;                                                            \
    *found_nan = 0;                                                                           \
    for (ptrdiff_t s = 0; s < n; s += sub) {                                                  \
        ptrdiff_t m = n - s < sub ? n - s : sub;                                              \
        int has_nan;                                                                          \
        T b = N##_range_best(x + s, m, is_min, &has_nan);                                     \
        if (find_nan && has_nan) {                                                            \
            *found_nan = 1;                                                                   \
            *value = x[s];                                                                    \
            return s + N##_find(x + s, m, best, 0, 1);                                        \
        }                                                                                     \
        if (N##_better(b, best, is_min) || (last && b == best)) { best = b; where = s; len = m; } \
    }                                                                                         \
    *value = best;                                                                            \
    if (best == worst)  /* an all-NaN sub-block may have tied: search everything */           \
        return N##_find(x, n, best, last, 0);                                                 \
    return where + N##_find(x + where, len, best, last, 0);                                   \
}

NORMOPS_DEFINE_ARGSCAN(float, f32, int32_t, -__builtin_inff(), __builtin_inff())
NORMOPS_DEFINE_ARGSCAN(double, f64, int64_t, -__builtin_inf(), __builtin_inf())
NORMOPS_DEFINE_ARGSCAN(int8_t, i8, int8_t, INT8_MIN, INT8_MAX)
NORMOPS_DEFINE_ARGSCAN(int16_t, i16, int16_t, INT16_MIN, INT16_MAX)
NORMOPS_DEFINE_ARGSCAN(int32_t, i32, int32_t, INT32_MIN, INT32_MAX)
NORMOPS_DEFINE_ARGSCAN(int64_t, i64, int64_t, INT64_MIN, INT64_MAX)
NORMOPS_DEFINE_ARGSCAN(uint8_t, u8, int8_t, 0, UINT8_MAX)
NORMOPS_DEFINE_ARGSCAN(uint16_t, u16, int16_t, 0, UINT16_MAX)
NORMOPS_DEFINE_ARGSCAN(uint32_t, u32, int32_t, 0, UINT32_MAX)
NORMOPS_DEFINE_ARGSCAN(uint64_t, u64, int64_t, 0, UINT64_MAX)

#endif
