/* Gelu and com.microsoft BiasGelu, element-wise (docs/exactness.md, "Gelu").
 *
 * approximate="none": y = (0.5 * v) * (1 + erf(v * RN(1/sqrt 2)))
 * approximate="tanh": y = (0.5 * v) * (1 + tanh(RN(sqrt(2/pi)) * (v + RN(0.044715) * ((v * v) * v))))
 * with v = x (Gelu) or x + b (BiasGelu, the sum rounded first), every
 * operation rounded in the array's type, the constants rounded once to it.
 * erf/tanh: erf32/tanh32 (exact float32), erf32_fast/tanh32_fast (fast
 * float32), erf64/tanh64 (float64, both flavours). NaN results are the
 * canonical NaN (that includes Gelu(-inf) = -inf * 0).
 */
#ifndef NORMOPS_GELU_H
#define NORMOPS_GELU_H

#include "erf_tanh.h"
#include "softmax_steps.h"  /* NORMOPS_SIGMOID_AHEAD */

enum { NORMOPS_GELU_ERF = 0, NORMOPS_GELU_TANH = 1 };

#define NORMOPS_GELU_ELEMENT(T, name, ERF, TANH, NANBITS, TOU, FROMU)              \
    NORMOPS_ALWAYS_INLINE T normops_gelu_##name##_erf(T v) {                       \
        T g = ERF(v * (T)0.70710678118654752440);                                  \
        T y = ((T)0.5 * v) * ((T)1 + g);                                           \
        return y != y ? FROMU(NANBITS) : y;                                        \
    }                                                                              \
    NORMOPS_ALWAYS_INLINE T normops_gelu_##name##_tanh(T v) {                      \
        T inner = v + (T)0.044715 * ((v * v) * v);                                 \
        T g = TANH((T)0.79788456080286535588 * inner);                             \
        T y = ((T)0.5 * v) * ((T)1 + g);                                           \
        return y != y ? FROMU(NANBITS) : y;                                        \
    }

NORMOPS_GELU_ELEMENT(float, f32, normops_erf32, normops_tanh32, NORMOPS_NAN32, normops_f2u, normops_u2f)
NORMOPS_GELU_ELEMENT(float, f32_fast, normops_erf32_fast, normops_tanh32_fast, NORMOPS_NAN32, normops_f2u, normops_u2f)
NORMOPS_GELU_ELEMENT(double, f64, normops_erf64, normops_tanh64, NORMOPS_NAN64, normops_d2u, normops_u2d)

/* y[i] = Gelu(x[i]) or Gelu(x[i] + b[i]); y may be x */
#define NORMOPS_GELU_MAP(T, name, kind)                                            \
    NORMOPS_NO_PRE NORMOPS_GATHER_TUNE                                              \
    static void normops_gelu_##name##_##kind##_map(const T* x, const T* b, T* y, ptrdiff_t n) { \
        if (b == NULL) {                                                           \
            NORMOPS_IVDEP                                                          \
            for (ptrdiff_t i = 0; i < n; i++) y[i] = normops_gelu_##name##_##kind(x[i]); \
        } else {                                                                   \
            NORMOPS_IVDEP                                                          \
            for (ptrdiff_t i = 0; i < n; i++) y[i] = normops_gelu_##name##_##kind(x[i] + b[i]); \
        }                                                                          \
    }
#if defined(__AVX512F__)
/* The float32 maps in explicit vectors (erf/tanh pick their coefficients
 * with vpermt2ps); the same bits as the scalar element functions above, no
 * fused multiply-add outside the fast erf/tanh.
 *
 * The exact forms skip 0.5 * v: they take the halved erf/tanh core, which
 * gives hg = g / 2 exactly from u / 2 = v * (RN(1/sqrt 2) / 2) (the same
 * rounding halved), and w = 0.5 + hg is exactly (1 + g) / 2, so v * w is
 * the formula's (0.5 * v) * (1 + g). Where u / 2 underflows, g is far
 * below 2^-25, w = 0.5 and 1 + g = 1, and v * 0.5 is the formula's 0.5 * v.
 * Checked over all 2^32 float32 v against the scalar form. */
NORMOPS_ALWAYS_INLINE __m512 normops_gelu_f32_vec16(__m512 v, int kind, int fast) {
    __m512 w;  /* (1 + g) / 2; the exact erf/tanh leave NaN as some NaN: canonicalised below */
    if (kind == NORMOPS_GELU_TANH) {
        __m512 cube = _mm512_mul_ps(_mm512_mul_ps(v, v), v);
        __m512 inner = _mm512_add_ps(v, _mm512_mul_ps(_mm512_set1_ps((float)0.044715), cube));
        if (fast) {
            __m512 g = normops_tanh32_fast16(_mm512_mul_ps(_mm512_set1_ps((float)0.79788456080286535588), inner));
            w = _mm512_mul_ps(_mm512_set1_ps(0.5f), _mm512_add_ps(_mm512_set1_ps(1.0f), g));  /* exact */
        } else {
            __m512 u2 = _mm512_mul_ps(_mm512_set1_ps((float)0.79788456080286535588 * 0.5f), inner);
            w = _mm512_add_ps(_mm512_set1_ps(0.5f), normops_tanh32_scaled16(u2, 1));
        }
    } else {
        /* the exact erf32 also in the fast flavour (it is the cheaper one here) */
        __m512 u2 = _mm512_mul_ps(v, _mm512_set1_ps((float)0.70710678118654752440 * 0.5f));
        w = _mm512_add_ps(_mm512_set1_ps(0.5f), normops_erf32_scaled16(u2, 1));
    }
    /* y is NaN exactly when v is NaN or -inf (-inf * 0): every other v gives
     * a finite or +inf y. So the lanes with v > -inf take the product and
     * the others the canonical NaN, in one masked multiply. */
    __mmask16 ok = _mm512_cmp_ps_mask(v, _mm512_castsi512_ps(_mm512_set1_epi32((int)0xFF800000u)), _CMP_GT_OQ);
    return _mm512_mask_mul_ps(_mm512_castsi512_ps(_mm512_set1_epi32((int)NORMOPS_NAN32)), ok, v, w);
}

/* the lanes of m only (a head or a tail) */
NORMOPS_ALWAYS_INLINE void normops_gelu_f32_masked(const float* x, const float* b, float* y, __mmask16 m, int kind,
                                                    int fast) {
    __m512 v = _mm512_maskz_loadu_ps(m, x);
    if (b) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, b));
    _mm512_mask_storeu_ps(y, m, normops_gelu_f32_vec16(v, kind, fast));
}

NORMOPS_ALWAYS_INLINE void normops_gelu_f32_vec_map(const float* x, const float* b, float* y, ptrdiff_t n, int kind,
                                                     int fast) {
    ptrdiff_t i = 0;
    /* a masked head up to y's 64-byte boundary: the full vectors then store
     * whole cache lines (and read them too when x has y's misalignment, as
     * two NumPy arrays usually do); split lines cost about 6% here */
    ptrdiff_t head = ((uintptr_t)y & 3u) ? 0 : (ptrdiff_t)(((0u - (uintptr_t)y) & 63u) / sizeof(float));
    if (head && n >= head + 16) {
        normops_gelu_f32_masked(x, b, y, (__mmask16)((1u << head) - 1), kind, fast);
        i = head;
    }
    for (; i + 16 <= n; i += 16) {
        /* compute-bound: fetch ahead so the reads hide behind it (as Sigmoid) */
        __builtin_prefetch(x + i + NORMOPS_SIGMOID_AHEAD, 0, 3);
        __m512 v = _mm512_loadu_ps(x + i);
        if (b) v = _mm512_add_ps(v, _mm512_loadu_ps(b + i));
        _mm512_storeu_ps(y + i, normops_gelu_f32_vec16(v, kind, fast));
    }
    if (i < n)
        normops_gelu_f32_masked(x + i, b ? b + i : NULL, y + i, (__mmask16)((1u << (n - i)) - 1), kind, fast);
}
/* At AVX-512 the exact erf32 (about 0.40 ns per Gelu element) is cheaper
 * than the fast erf (0.50): the fast flavour uses it too, so its erf Gelu
 * equals exact. */
static void normops_gelu_f32_fast_erf_map(const float* x, const float* b, float* y, ptrdiff_t n) {
    normops_gelu_f32_vec_map(x, b, y, n, NORMOPS_GELU_ERF, 0);
}
static void normops_gelu_f32_fast_tanh_map(const float* x, const float* b, float* y, ptrdiff_t n) {
    normops_gelu_f32_vec_map(x, b, y, n, NORMOPS_GELU_TANH, 1);
}
static void normops_gelu_f32_erf_map(const float* x, const float* b, float* y, ptrdiff_t n) {
    normops_gelu_f32_vec_map(x, b, y, n, NORMOPS_GELU_ERF, 0);
}
static void normops_gelu_f32_tanh_map(const float* x, const float* b, float* y, ptrdiff_t n) {
    normops_gelu_f32_vec_map(x, b, y, n, NORMOPS_GELU_TANH, 0);
}
#elif defined(__AVX2__) && defined(__FMA__)
/* The element functions above on 8 lanes (erf32/tanh32 without gathers):
 * the same bits. The exact forms: as at AVX-512 (above), the halved
 * erf/tanh core gives w = (1 + g) / 2 exactly and v * w is the formula's
 * (0.5 * v) * (1 + g) (checked over all 2^32 float32 v against the scalar
 * form). The fast erf form takes the AVX2 fast erf (erf_tanh.h, one
 * register per coefficient) and the formula's operations in its order, as
 * normops_gelu_f32_fast_erf does on one element with the same erf; the
 * fast tanh form uses the exact tanh32 (cheaper here than gcc's gathered
 * fast one), so it equals the exact one. The NaN results (v NaN or -inf)
 * are marked by a comparison made off the chain of dependent operations. */
NORMOPS_ALWAYS_INLINE __m256 normops_gelu_f32_vec8(__m256 v, int kind, int fast) {
    __m256 w;
    __m256 ok = _mm256_cmp_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32((int)0xFF800000u)), _CMP_GT_OQ);
    if (fast && kind == NORMOPS_GELU_ERF) {
        __m256 g = normops_erf32_fast8_signed(_mm256_mul_ps(v, _mm256_set1_ps((float)0.70710678118654752440)));
        __m256 y = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v), _mm256_add_ps(_mm256_set1_ps(1.0f), g));
        return _mm256_blendv_ps(_mm256_castsi256_ps(_mm256_set1_epi32((int)NORMOPS_NAN32)), y, ok);
    }
    if (kind == NORMOPS_GELU_TANH) {
        __m256 inner = _mm256_add_ps(v, _mm256_mul_ps(_mm256_set1_ps((float)0.044715), _mm256_mul_ps(_mm256_mul_ps(v, v), v)));
        __m256 u2 = _mm256_mul_ps(_mm256_set1_ps((float)0.79788456080286535588 * 0.5f), inner);
        w = _mm256_add_ps(_mm256_set1_ps(0.5f), normops_tanh32_scaled8(u2, 1));
    } else {
        __m256 u2 = _mm256_mul_ps(v, _mm256_set1_ps((float)0.70710678118654752440 * 0.5f));
        w = _mm256_add_ps(_mm256_set1_ps(0.5f), normops_erf32_scaled8(u2, 1));
    }
    return _mm256_blendv_ps(_mm256_castsi256_ps(_mm256_set1_epi32((int)NORMOPS_NAN32)), _mm256_mul_ps(v, w), ok);
}
#define NORMOPS_GELU_MAP8(name, KIND, FAST, scalar)                                \
    static void normops_gelu_f32_##name##_map(const float* x, const float* b, float* y, ptrdiff_t n) { \
        ptrdiff_t i = 0;                                                           \
        for (; i + 8 <= n; i += 8) {                                               \
            __builtin_prefetch(x + i + NORMOPS_SIGMOID_AHEAD, 0, 3);               \
            __m256 v = _mm256_loadu_ps(x + i);                                     \
            if (b) v = _mm256_add_ps(v, _mm256_loadu_ps(b + i));                   \
            _mm256_storeu_ps(y + i, normops_gelu_f32_vec8(v, KIND, FAST));         \
        }                                                                          \
        for (; i < n; i++) y[i] = scalar(b ? x[i] + b[i] : x[i]);                  \
    }
NORMOPS_GELU_MAP8(erf, NORMOPS_GELU_ERF, 0, normops_gelu_f32_erf)
NORMOPS_GELU_MAP8(tanh, NORMOPS_GELU_TANH, 0, normops_gelu_f32_tanh)
NORMOPS_GELU_MAP8(fast_erf, NORMOPS_GELU_ERF, 1, normops_gelu_f32_fast_erf)
NORMOPS_GELU_MAP8(fast_tanh, NORMOPS_GELU_TANH, 1, normops_gelu_f32_tanh)
#else
NORMOPS_GELU_MAP(float, f32, erf)
NORMOPS_GELU_MAP(float, f32, tanh)
NORMOPS_GELU_MAP(float, f32_fast, erf)
NORMOPS_GELU_MAP(float, f32_fast, tanh)
#endif
NORMOPS_GELU_MAP(double, f64, erf)
NORMOPS_GELU_MAP(double, f64, tanh)

/* Elements [start, start + len) of x (rows of `cols` elements when b is
 * not NULL: b, of cols elements, is added to every row). */
#define NORMOPS_GELU_SEGMENT(T, name, fastname)                                    \
    static void normops_gelu_segment_##name(const T* x, const T* b, ptrdiff_t cols, T* y, \
                                            ptrdiff_t start, ptrdiff_t len, int kind, int fast) { \
        void (*f)(const T*, const T*, T*, ptrdiff_t) =                             \
            kind == NORMOPS_GELU_TANH ? (fast ? normops_gelu_##fastname##_tanh_map : normops_gelu_##name##_tanh_map) \
                                      : (fast ? normops_gelu_##fastname##_erf_map : normops_gelu_##name##_erf_map); \
        if (b == NULL) { f(x + start, NULL, y + start, len); return; }             \
        ptrdiff_t end = start + len;                                               \
        while (start < end) {                                                      \
            ptrdiff_t j = start % cols;                                            \
            ptrdiff_t run = cols - j < end - start ? cols - j : end - start;       \
            f(x + start, b + j, y + start, run);                                   \
            start += run;                                                          \
        }                                                                          \
    }
NORMOPS_GELU_SEGMENT(float, f32, f32_fast)
NORMOPS_GELU_SEGMENT(double, f64, f64)

#endif
