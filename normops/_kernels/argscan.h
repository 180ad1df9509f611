/* ArgMax / ArgMin of one contiguous sequence on native vectors.
 *
 * The rule (seed spec, "ArgMax, ArgMin") is a sequential scan: a later
 * element wins when strictly better, or better-or-equal with
 * select_last_index; NaN never wins unless it is first. Its result is the
 * first (last) index holding the best non-NaN value M. Comparisons are
 * exact, so any order of finding M gives the same M, and the index is then
 * a search for x == M: the result never depends on the vector width.
 *
 * One pass: the sequence is read in groups of 4 vectors. Every lane keeps
 * its best value and the number of the group it came from (NaN never
 * replaces a lane: comparisons with NaN are false; a tie replaces it with
 * select_last_index). Folding the lanes gives M and the first (last) group
 * holding it, and only that group is searched for x == M. Elements after
 * the last whole group are read as one more group ending the sequence,
 * overlapping the one before (seeing an element twice moves neither a
 * first nor a last winner out of the group that holds it). Narrow integer
 * types count groups in lanes of their own width, so their sequences are
 * cut into super-blocks of at most 127 (32767) groups, combined in order
 * like the scan combines elements. When M is the type's "worst" value
 * (-inf for ArgMax on floats) a lane of NaN only could tie it, so the
 * whole sequence is searched instead.
 *
 * find_nan (NumPy's rule, the first NaN wins) also reports the first NaN.
 * Only comparisons: no arithmetic on the data at all. */
#ifndef NORMOPS_ARGSCAN_H
#define NORMOPS_ARGSCAN_H

#include <stdint.h>
#include "sum16.h"

/* T: element type; N: prefix of its names; I: same-size signed integer;
 * WORST_MAX / WORST_MIN: the value every element beats or ties (ArgMax / ArgMin). */
/* AVX-512, float32/float64: the compare yields a mask register and the two
 * blends use it directly (gcc turns the generic bit operations into a
 * mask -> vector -> mask round trip and two xors per blend). Same
 * comparisons, so the same lanes; evaluates to 1 when it did the update. */
#if defined(__AVX512F__)
#include <immintrin.h>
#define NORMOPS_CMP512(SUF, a, b, is_min, last)                                              \
    ((is_min) ? ((last) ? _mm512_cmp_##SUF##_mask(a, b, _CMP_LE_OQ) : _mm512_cmp_##SUF##_mask(a, b, _CMP_LT_OQ)) \
              : ((last) ? _mm512_cmp_##SUF##_mask(a, b, _CMP_GE_OQ) : _mm512_cmp_##SUF##_mask(a, b, _CMP_GT_OQ)))
#define NORMOPS_MASKED_TRACK(T, v, best, group, g, is_min, last) __extension__ ({             \
    int _done = 0;                                                                            \
    if (__builtin_types_compatible_p(T, float)) {                                             \
        __mmask16 _k = NORMOPS_CMP512(ps, (__m512)(v), (__m512)*(best), is_min, last);       \
        *(best) = (__typeof__(*(best)))_mm512_mask_blend_ps(_k, (__m512)*(best), (__m512)(v)); \
        *(group) = (__typeof__(*(group)))_mm512_mask_blend_epi32(_k, (__m512i)*(group), (__m512i)(g)); \
        _done = 1;                                                                            \
    } else if (__builtin_types_compatible_p(T, double)) {                                     \
        __mmask8 _k = NORMOPS_CMP512(pd, (__m512d)(v), (__m512d)*(best), is_min, last);      \
        *(best) = (__typeof__(*(best)))_mm512_mask_blend_pd(_k, (__m512d)*(best), (__m512d)(v)); \
        *(group) = (__typeof__(*(group)))_mm512_mask_blend_epi64(_k, (__m512i)*(group), (__m512i)(g)); \
        _done = 1;                                                                            \
    }                                                                                         \
    _done; })
#else
#define NORMOPS_MASKED_TRACK(T, v, best, group, g, is_min, last) 0
#endif

#define NORMOPS_DEFINE_ARGSCAN(T, N, I, WORST_MAX, WORST_MIN)                                  \
typedef T N##_av __attribute__((vector_size(NORMOPS_VECTOR_BYTES)));                          \
typedef I N##_ab __attribute__((vector_size(NORMOPS_VECTOR_BYTES)));                          \
typedef T N##_au __attribute__((vector_size(NORMOPS_VECTOR_BYTES), aligned(sizeof(T)), may_alias)); \
enum { N##_AL = NORMOPS_VECTOR_BYTES / sizeof(T) };                                           \
                                                                                              \
NORMOPS_ALWAYS_INLINE int N##_better(T a, T b, int is_min) { return is_min ? a < b : a > b; } \
                                                                                              \
NORMOPS_ALWAYS_INLINE int N##_any(N##_ab b) {                                                 \
    typedef unsigned long long w64 __attribute__((vector_size(NORMOPS_VECTOR_BYTES)));        \
    w64 w = (w64)b;                                                                           \
    unsigned long long r = 0;                                                                 \
    for (int q = 0; q < NORMOPS_VECTOR_BYTES / 8; q++) r |= w[q];                             \
    return r != 0;                                                                            \
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
/* One lane track: the lane's best value and the group where it was taken. */                 \
NORMOPS_ALWAYS_INLINE void N##_track(N##_av v, N##_av* best, N##_ab* group, N##_ab g,          \
                                     int is_min, int last) {                                  \
    if (NORMOPS_MASKED_TRACK(T, v, best, group, g, is_min, last)) return;                     \
    N##_ab take = is_min ? (v < *best) : (v > *best);                                         \
    if (last) take |= v == *best;                                                             \
    *best = (N##_av)(((N##_ab)v & take) | ((N##_ab)*best & ~take));                           \
    *group = (g & take) | (*group & ~take);                                                   \
}                                                                                             \
                                                                                              \
/* One group of 4 vectors into the four tracks. */                                           \
NORMOPS_ALWAYS_INLINE void N##_group(const T* x, N##_av* b0, N##_av* b1, N##_av* b2, N##_av* b3, \
                                     N##_ab* g0, N##_ab* g1, N##_ab* g2, N##_ab* g3, N##_ab g,  \
                                     N##_ab* nan, int is_min, int last, int find_nan) {       \
    N##_av v0 = *(const N##_au*)x, v1 = *(const N##_au*)(x + N##_AL);                         \
    N##_av v2 = *(const N##_au*)(x + 2 * N##_AL), v3 = *(const N##_au*)(x + 3 * N##_AL);      \
    N##_track(v0, b0, g0, g, is_min, last);                                                   \
    N##_track(v1, b1, g1, g, is_min, last);                                                   \
    N##_track(v2, b2, g2, g, is_min, last);                                                   \
    N##_track(v3, b3, g3, g, is_min, last);                                                   \
    if (find_nan) *nan |= (v0 != v0) | (v1 != v1) | (v2 != v2) | (v3 != v3);                  \
}                                                                                             \
                                                                                              \
/* Two tracks of the same lanes merged: a tie keeps the earlier (later) group. */            \
NORMOPS_ALWAYS_INLINE void N##_merge(N##_av* best, N##_ab* group, N##_av b, N##_ab g,          \
                                     int is_min, int last) {                                  \
    N##_ab take = is_min ? (b < *best) : (b > *best);                                         \
    take |= (b == *best) & (last ? (g > *group) : (g < *group));                              \
    *best = (N##_av)(((N##_ab)b & take) | ((N##_ab)*best & ~take));                           \
    *group = (g & take) | (*group & ~take);                                                   \
}                                                                                             \
                                                                                              \
NORMOPS_ALWAYS_INLINE ptrdiff_t N##_scan(const T* x, ptrdiff_t n, int is_min, int last,        \
                                         int find_nan, T* value, int* found_nan) {            \
    const T worst = is_min ? (WORST_MIN) : (WORST_MAX);                                      \
    /* groups of 4 vectors; a group number must fit a lane of I */                            \
    const ptrdiff_t G = 4 * N##_AL;                                                           \
    const ptrdiff_t per_super = sizeof(I) >= 4 ? ((ptrdiff_t)1 << 30) : ((ptrdiff_t)1 << (8 * sizeof(I) - 1)) - 1; \
    ptrdiff_t full = n - n % G, where = -1, wlen = 0;                                         \
    T best = worst;                                                                           \
    *found_nan = 0;                                                                           \
    for (ptrdiff_t s0 = 0; s0 < full; s0 += per_super * G) {                                  \
        ptrdiff_t s1 = full - s0 > per_super * G ? s0 + per_super * G : full;                 \
        /* named tracks (not arrays), so that they stay in registers */                      \
        N##_av zero = {0}, b0 = zero + worst, b1 = b0, b2 = b0, b3 = b0;                      \
        N##_ab g0 = {0}, g1 = g0, g2 = g0, g3 = g0, g = g0, nan = g0;                          \
        for (ptrdiff_t s = s0; s < s1; s += G) {                                              \
            N##_group(x + s, &b0, &b1, &b2, &b3, &g0, &g1, &g2, &g3, g, &nan, is_min, last, find_nan); \
            g += 1;                                                                           \
        }                                                                                     \
        /* the last few elements: the group that ends the sequence, overlapping                \
         * the one before (an element seen twice cannot move a first winner to a               \
         * later group, and a last winner inside the suffix is in it) */                       \
        ptrdiff_t groups = (s1 - s0) / G, end = s1;                                           \
        int suffix = s1 == full && full < n;                                                  \
        if (suffix) {                                                                         \
            N##_group(x + n - G, &b0, &b1, &b2, &b3, &g0, &g1, &g2, &g3, g, &nan, is_min, last, find_nan); \
            end = n;                                                                          \
        }                                                                                     \
        if (find_nan && N##_any(nan)) {  /* no NaN before s0 */                               \
            *found_nan = 1;                                                                   \
            *value = x[s0];                                                                   \
            return s0 + N##_find(x + s0, end - s0, worst, 0, 1);                              \
        }                                                                                     \
        /* fold: tracks merged (a tie keeps the earlier or later group),                      \
         * then the lanes: the best value M, then its first (last) group */                   \
        N##_merge(&b0, &g0, b1, g1, is_min, last);                                            \
        N##_merge(&b2, &g2, b3, g3, is_min, last);                                            \
        N##_merge(&b0, &g0, b2, g2, is_min, last);                                            \
        T m = worst;                                                                          \
        for (int l = 0; l < N##_AL; l++) if (N##_better(b0[l], m, is_min)) m = b0[l];     \
        ptrdiff_t k = -1;                                                                     \
        for (int l = 0; l < N##_AL; l++)                                                      \
            if (b0[l] == m && (k < 0 || (last ? g0[l] > k : g0[l] < k))) k = g0[l]; \
        if (N##_better(m, best, is_min) || (last && m == best)) {                             \
            best = m; where = (suffix && k == groups) ? n - G : s0 + k * G; wlen = G;         \
        }                                                                                     \
    }                                                                                         \
    for (ptrdiff_t i = full > 0 ? n : 0; i < n; i++) {  /* shorter than one group */       \
        if (find_nan && x[i] != x[i]) { *found_nan = 1; *value = x[i]; return i; }            \
        if (N##_better(x[i], best, is_min) || (last && x[i] == best)) {                       \
            best = x[i]; where = i; wlen = 1;                                                 \
        }                                                                                     \
    }                                                                                         \
    *value = best;                                                                            \
    if (best == worst)  /* a lane of NaN only may have tied: search everything */            \
        return N##_find(x, n, best, last, 0);                                                 \
    return where + N##_find(x + where, wlen, best, last, 0);                                  \
}                                                                                             \
                                                                                              \
/* The scan of x[0..n) with NaN ignored: returns the winner's index (-1 when                  \
 * every element is NaN) and stores its value. With find_nan, a NaN anywhere                  \
 * ends the scan: *found_nan = 1 and the first NaN's index is returned.                       \
 * Each flag combination is its own loop. */                                                  \
static inline ptrdiff_t normops_argscan_##N(const T* x, ptrdiff_t n, int is_min, int last,    \
                                            int find_nan, T* value, int* found_nan) {         \
    switch ((is_min ? 4 : 0) + (last ? 2 : 0) + (find_nan ? 1 : 0)) {                         \
    case 0: return N##_scan(x, n, 0, 0, 0, value, found_nan);                                 \
    case 1: return N##_scan(x, n, 0, 0, 1, value, found_nan);                                 \
    case 2: return N##_scan(x, n, 0, 1, 0, value, found_nan);                                 \
    case 3: return N##_scan(x, n, 0, 1, 1, value, found_nan);                                 \
    case 4: return N##_scan(x, n, 1, 0, 0, value, found_nan);                                 \
    case 5: return N##_scan(x, n, 1, 0, 1, value, found_nan);                                 \
    case 6: return N##_scan(x, n, 1, 1, 0, value, found_nan);                                 \
    default: return N##_scan(x, n, 1, 1, 1, value, found_nan);                                \
    }                                                                                         \
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
