/* The maximum of a row on the native vectors of sum16.h (Softmax's step
 * 1-2), and NORMOPS_VMAX / NORMOPS_VMIN (the reductions' max and min).
 * Lane-wise maxima folded at the end: the value is the row maximum
 * whatever the order; which zero (-0 or +0) wins a tie does not matter to
 * any result (x - m is +0 or -0 only where exp and log see the same
 * value). NaN never wins a comparison. */
#ifndef NORMOPS_ROWMAX_H
#define NORMOPS_ROWMAX_H

#include "sum16.h"

/* The row maximum ignoring NaN (-inf for an empty or all-NaN row), with
 * four independent accumulators: max is exact in any order, and the
 * callers detect NaN elsewhere (Softmax: through the sum of exponentials).
 * NORMOPS_VMAX(N, v, m) is v > m ? v : m lane by lane (NORMOPS_VMIN: v < m ?
 * v : m): on x86 one max (min) instruction, which returns its second operand
 * when either is NaN. */
#if defined(__AVX512F__)
#include <immintrin.h>
#define NORMOPS_MAX_normops_f32(v, m) ((normops_f32_vec)_mm512_max_ps((__m512)(v), (__m512)(m)))
#define NORMOPS_MAX_normops_f64(v, m) ((normops_f64_vec)_mm512_max_pd((__m512d)(v), (__m512d)(m)))
#define NORMOPS_MIN_normops_f32(v, m) ((normops_f32_vec)_mm512_min_ps((__m512)(v), (__m512)(m)))
#define NORMOPS_MIN_normops_f64(v, m) ((normops_f64_vec)_mm512_min_pd((__m512d)(v), (__m512d)(m)))
#elif defined(__AVX__)
#include <immintrin.h>
#define NORMOPS_MAX_normops_f32(v, m) ((normops_f32_vec)_mm256_max_ps((__m256)(v), (__m256)(m)))
#define NORMOPS_MAX_normops_f64(v, m) ((normops_f64_vec)_mm256_max_pd((__m256d)(v), (__m256d)(m)))
#define NORMOPS_MIN_normops_f32(v, m) ((normops_f32_vec)_mm256_min_ps((__m256)(v), (__m256)(m)))
#define NORMOPS_MIN_normops_f64(v, m) ((normops_f64_vec)_mm256_min_pd((__m256d)(v), (__m256d)(m)))
#elif defined(__SSE2__)
#include <emmintrin.h>
#define NORMOPS_MAX_normops_f32(v, m) ((normops_f32_vec)_mm_max_ps((__m128)(v), (__m128)(m)))
#define NORMOPS_MAX_normops_f64(v, m) ((normops_f64_vec)_mm_max_pd((__m128d)(v), (__m128d)(m)))
#define NORMOPS_MIN_normops_f32(v, m) ((normops_f32_vec)_mm_min_ps((__m128)(v), (__m128)(m)))
#define NORMOPS_MIN_normops_f64(v, m) ((normops_f64_vec)_mm_min_pd((__m128d)(v), (__m128d)(m)))
#endif
#ifdef NORMOPS_MAX_normops_f32
#define NORMOPS_VMAX(N, v, m) NORMOPS_MAX_##N(v, m)
#define NORMOPS_VMIN(N, v, m) NORMOPS_MIN_##N(v, m)
#else
#define NORMOPS_VMAX(N, v, m) ((N##_vec)(((N##_bits)(v) & ((v) > (m))) | ((N##_bits)(m) & ~((v) > (m)))))
#define NORMOPS_VMIN(N, v, m) ((N##_vec)(((N##_bits)(v) & ((v) < (m))) | ((N##_bits)(m) & ~((v) < (m)))))
#endif
#define NORMOPS_DEFINE_ROWMAX_PLAIN(T, N)                                                     \
static inline T normops_row_max_plain_##T(const T* x, ptrdiff_t n) {                          \
    const T inf = (T)__builtin_inf();                                                         \
    N##_vec none = {0}, m0, m1, m2, m3;                                                       \
    m0 = m1 = m2 = m3 = none - inf;                                                           \
    ptrdiff_t i = 0, step = 4 * N##_LANES, full = n - n % step;                               \
    for (; i < full; i += step) {                                                             \
        N##_vec v0 = *(const N##_unaligned*)(x + i);                                          \
        N##_vec v1 = *(const N##_unaligned*)(x + i + N##_LANES);                              \
        N##_vec v2 = *(const N##_unaligned*)(x + i + 2 * N##_LANES);                          \
        N##_vec v3 = *(const N##_unaligned*)(x + i + 3 * N##_LANES);                          \
        m0 = NORMOPS_VMAX(N, v0, m0); m1 = NORMOPS_VMAX(N, v1, m1);                           \
        m2 = NORMOPS_VMAX(N, v2, m2); m3 = NORMOPS_VMAX(N, v3, m3);                           \
    }                                                                                         \
    m0 = NORMOPS_VMAX(N, m1, m0); m2 = NORMOPS_VMAX(N, m3, m2); m0 = NORMOPS_VMAX(N, m2, m0); \
    T best = -inf;                                                                            \
    for (int l = 0; l < N##_LANES; l++)                                                       \
        if (m0[l] > best) best = m0[l];                                                       \
    for (; i < n; i++)                                                                        \
        if (x[i] > best) best = x[i];                                                         \
    return best;                                                                              \
}

NORMOPS_DEFINE_ROWMAX_PLAIN(float, normops_f32)
NORMOPS_DEFINE_ROWMAX_PLAIN(double, normops_f64)

#endif
