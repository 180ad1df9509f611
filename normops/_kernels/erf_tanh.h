/* normops' own erf and tanh (docs/transcendentals.md, "erf and tanh").
 *
 * erf32, tanh32: float32 arithmetic, one construction with a table each
 * (erf: degree 5 on 32 intervals of width 1/8; tanh: degree 7 on 32
 * intervals of width 1/4; erf32_tables.h, tanh32_tables.h from
 * tools/gen_poly32_tables.py), the result a float plus a small correction:
 * faithful, proven over every input by `python -m normops
 * verify-transcendentals --function erf|tanh`. erf64 / tanh64: double
 * polynomials of degree 15 on intervals of width 1/4 (erf_tanh_tables.h),
 * Horner's rule with separate * and + (the build passes -ffp-contract=off),
 * about one ulp. erf32_fast / tanh32_fast: degree 7 with float coefficients
 * in float arithmetic, fused multiply-add where the CPU has it (the fast
 * flavour may differ between ISA levels), about 2 ulp; at AVX2 erf32_fast
 * has a construction of its own (8 intervals, degree 6: below).
 *
 * Only + - * on double/float, exact conversions, integer operations on bit
 * patterns and table loads; no libm. The table loads are gathers in the
 * auto-vectorised loops; at AVX-512 erf32, tanh32 and both fast functions
 * keep each coefficient's intervals in two registers instead. Every form
 * performs exactly the scalar operations: the exact functions give the
 * same bits at every ISA level.
 *
 * Special values: NaN -> canonical NaN; +-inf -> +-1; +-0 -> +-0; |x|
 * from the saturation threshold on gives exactly +-1.
 */
#ifndef NORMOPS_ERF_TANH_H
#define NORMOPS_ERF_TANH_H

#include "transcendental.h"
#include "erf_tanh_tables.h"
#include "erf32_tables.h"
#include "tanh32_tables.h"

/* Horner's rule on interval i of a coefficient table of degree DEG. The
 * index is int32 arithmetic so that gcc makes the loads gathers. */
#define NORMOPS_ET_HORNER(T, tab, DEG, i, t, FMA) ({                              \
        int32_t b_ = (i) * ((DEG) + 1);                                            \
        T p_ = (tab)[b_ + (DEG)];                                                  \
        _Pragma("GCC unroll 16")                                                   \
        for (int k_ = (DEG) - 1; k_ >= 0; k_--) p_ = FMA(p_, (t), (tab)[b_ + k_]);  \
        p_; })
#define NORMOPS_ET_MULADD(a, b, c) ((a) * (b) + (c))

/* |x| (a double or float >= 0; NaN becomes the bound) clamped below INTERVALS / 4;
 * interval i = floor(4a); t = a - c_i, exact (c_0 = 0, c_i = i/4 + 1/8) */
#define NORMOPS_ET_REDUCE(T, a, INTERVALS, i, t) do {                             \
        const T last_ = (T)(INTERVALS) * (T)0.25 - (T)0x1p-16;                     \
        T a_ = (a) < last_ ? (a) : last_;                                          \
        i = (int32_t)(a_ * (T)4);                                                  \
        t = a_ - (T)(2 * i + (i > 0)) * (T)0.125;  /* integer select: vectorises */ \
    } while (0)

/* erf64 / tanh64: the same polynomials in double */
#define NORMOPS_ET_DEFINE64(name, INTERVALS, SAT64)                                \
    NORMOPS_ALWAYS_INLINE double normops_##name##64(double x) {                    \
        uint64_t ux = normops_d2u(x), ax = ux & 0x7FFFFFFFFFFFFFFFull;             \
        double a = normops_u2d(ax);                                                \
        int32_t i; double t;                                                       \
        NORMOPS_ET_REDUCE(double, a, INTERVALS, i, t);                             \
        double p = NORMOPS_ET_HORNER(double, normops_##name##_coef, NORMOPS_ET_DEG, i, t, NORMOPS_ET_MULADD); \
        p = a >= SAT64 ? 1.0 : p;                                                  \
        uint64_t y = normops_d2u(p) | (ux & 0x8000000000000000ull);                \
        y = ax > 0x7FF0000000000000ull ? NORMOPS_NAN64 : y;                        \
        return normops_u2d(y);                                                     \
    }

NORMOPS_ET_DEFINE64(erf, NORMOPS_ERF_INTERVALS, NORMOPS_ERF_SAT64)
NORMOPS_ET_DEFINE64(tanh, NORMOPS_TANH_INTERVALS, NORMOPS_TANH_SAT64)

/* ------------------------------------------------------ erf32, tanh32 */

/* erf32 and tanh32, float32 arithmetic (docs/transcendentals.md, "erf32"
 * and "tanh32"; N##32_tables.h from tools/gen_poly32_tables.py). One shape,
 * the table decides the function: a = min(|x|, CLAMP); k = min(a, KMAX)
 * rounded to a multiple of the interval width by the shift constant (the
 * low 5 bits of the sum are the interval i); t = a - k, exact; y = B +
 * a * P_i(t), P_i by Horner, B = a on the intervals near 0 and RN32(f(k))
 * elsewhere. a * P_i is at most about an eighth of y, so the last addition
 * dominates the error: faithful, proven over every input by `python -m
 * normops verify-transcendentals --function erf|tanh`. f32(CLAMP) = 1, which
 * gives the saturation (and +-inf -> +-1) with no extra select; a subnormal
 * a gives a (a * P_i underflows to 0). Sign of x copied, NaN -> canonical
 * NaN. */
#define NORMOPS_POLY32_DEFINE(name, N)                                             \
    NORMOPS_ALWAYS_INLINE float normops_##name##32(float x) {                      \
        uint32_t ux = normops_f2u(x), ax = ux & 0x7FFFFFFFu;                       \
        float a = normops_u2f(ax);                                                 \
        a = a < NORMOPS_##N##32_CLAMP ? a : NORMOPS_##N##32_CLAMP;  /* NaN -> the clamp (restored below) */ \
        float s = (a < NORMOPS_##N##32_KMAX ? a : NORMOPS_##N##32_KMAX) + NORMOPS_##N##32_SHIFT; \
        float k = s - NORMOPS_##N##32_SHIFT;                                       \
        float t = a - k;                                                           \
        int32_t i = (int32_t)(normops_f2u(s) & 31u);                               \
        const float* c = normops_##name##32_tab;                                   \
        float p = c[(NORMOPS_##N##32_DEG + 1) * 32 + i];                           \
        _Pragma("GCC unroll 8")                                                    \
        for (int r = NORMOPS_##N##32_DEG; r >= 1; r--) p = p * t + c[r * 32 + i];  \
        float h = c[i];                                                            \
        float b = k < NORMOPS_##N##32_ZONE ? a : h;                                \
        uint32_t y = normops_f2u(b + a * p) | (ux & 0x80000000u);                  \
        y = ax > 0x7F800000u ? NORMOPS_NAN32 : y;                                  \
        return normops_u2f(y);                                                     \
    }
NORMOPS_POLY32_DEFINE(erf, ERF)
NORMOPS_POLY32_DEFINE(tanh, TANH)

#if defined(__AVX512F__)
/* erf32 / tanh32 on 16 lanes: the operations of the scalar function, each
 * table row held in two registers and picked by vpermt2ps (no gathers).
 * vrangeps gives min(|x|, CLAMP) in one instruction (a NaN stays NaN here).
 * The core leaves a NaN input as some NaN: Gelu canonicalises its own NaN
 * results.
 *
 * half = 1 (a compile-time constant) gives f(2x) / 2 from x: the same
 * operations with every value halved. CLAMP, KMAX and SHIFT are halved,
 * the interval width is halved (one more WBITS), H is halved and p_j times
 * 2^j (P is a polynomial in t = 2t'). Halving commutes with rounding away
 * from underflow, so every step is exactly half the unhalved one, and the
 * result exactly f32(2x) / 2 except where it is below about 2^-100. Gelu
 * uses it to drop its own 0.5 * v (docs/exactness.md, "Gelu"). */
#define NORMOPS_POLY32_DEFINE16(name, N)                                           \
    NORMOPS_ALWAYS_INLINE __m512 normops_##name##32_scaled16(__m512 x, const int half) { \
        const float* c = normops_##name##32_tab;                                   \
        const float h_ = half ? 0.5f : 1.0f;                                       \
        __m512 a = _mm512_range_ps(x, _mm512_set1_ps(NORMOPS_##N##32_CLAMP * h_), 0x0A);  /* min by magnitude, sign cleared */ \
        const float shift_ = NORMOPS_##N##32_SHIFT * h_;                           \
        /* CLAMP rounds to at most KMAX (erf): min(a, KMAX) changes nothing,     \
         * and t = a - k is one vreduceps (a minus a rounded to nearest even    \
         * at WBITS fraction bits, exact: the scalar's a - k). Otherwise (tanh) \
         * the scalar's steps. */                                               \
        const int clamp_in_last_ = (NORMOPS_##N##32_CLAMP + NORMOPS_##N##32_SHIFT) - NORMOPS_##N##32_SHIFT \
                                   <= NORMOPS_##N##32_KMAX;                        \
        __m512 s, t;                                                               \
        if (clamp_in_last_) {                                                      \
            s = _mm512_add_ps(a, _mm512_set1_ps(shift_));                          \
            t = _mm512_reduce_ps(a, ((NORMOPS_##N##32_WBITS + half) << 4) | 0x08);  /* RNE, no precision exception */ \
        } else {                                                                   \
            s = _mm512_add_ps(_mm512_min_ps(a, _mm512_set1_ps(NORMOPS_##N##32_KMAX * h_)), _mm512_set1_ps(shift_)); \
            t = _mm512_sub_ps(a, _mm512_sub_ps(s, _mm512_set1_ps(shift_)));        \
        }                                                                          \
        __m512i i = _mm512_castps_si512(s);  /* vpermt2ps reads the low 5 bits */  \
        /* row r >= 1 holds p_(r-1): scaled by 2^(r-1) when halved (exact) */     \
        __m512 p = NORMOPS_POLY32_ROW(c, NORMOPS_##N##32_DEG + 1, i, half ? (float)(1 << NORMOPS_##N##32_DEG) : 1.0f); \
        for (int r = NORMOPS_##N##32_DEG; r >= 1; r--)                             \
            p = _mm512_add_ps(_mm512_mul_ps(p, t), NORMOPS_POLY32_ROW(c, r, i, half ? (float)(1 << (r - 1)) : 1.0f)); \
        /* B = a on the intervals below ZONE, H elsewhere. The generator writes \
         * H = 0 exactly on those intervals (H > 0 on the others), so one      \
         * vfixupimmps picks: H of class zero -> a (token 0, the first         \
         * operand), positive or one -> H itself (token 1) */                    \
        __m512 b = _mm512_fixupimm_ps(a, NORMOPS_POLY32_ROW(c, 0, i, h_), _mm512_set1_epi32(0x10001000), 0); \
        __m512 y = _mm512_add_ps(b, _mm512_mul_ps(a, p));                          \
        /* y | (x & sign) */                                                       \
        return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(y), _mm512_castps_si512(x), \
                                                             _mm512_set1_epi32(0x7FFFFFFF), 0xF4)); \
    }                                                                              \
    NORMOPS_ALWAYS_INLINE __m512 normops_##name##32_core16(__m512 x) {             \
        return normops_##name##32_scaled16(x, 0);                                  \
    }                                                                              \
    NORMOPS_ALWAYS_INLINE __m512 normops_##name##32_16(__m512 x) {                 \
        return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), normops_##name##32_core16(x), \
                                    _mm512_castsi512_ps(_mm512_set1_epi32((int)NORMOPS_NAN32))); \
    }                                                                              \
    /* the explicit vectors of Gelu, so that name##32_into (and the            \
     * measurement over every input) runs the same code */                        \
    static void normops_##name##32_array(const float* x, float* y, ptrdiff_t n) { \
        ptrdiff_t i = 0;                                                           \
        for (; i + 16 <= n; i += 16)                                               \
            _mm512_storeu_ps(y + i, normops_##name##32_16(_mm512_loadu_ps(x + i))); \
        if (i < n) {                                                               \
            __mmask16 m = (__mmask16)((1u << (n - i)) - 1);                        \
            _mm512_mask_storeu_ps(y + i, m, normops_##name##32_16(_mm512_maskz_loadu_ps(m, x + i))); \
        }                                                                          \
    }                                                                              \
    NORMOPS_SCALAR_MAP(name##32, float)
/* row r of table c, interval i of each lane */
/* row r of table c times the power of two m (the loads and the exact
 * scaling are loop invariants), interval i of each lane */
#define NORMOPS_POLY32_ROW(c, r, i, m)                                                        \
    _mm512_permutex2var_ps(_mm512_mul_ps(_mm512_loadu_ps((c) + (r) * 32), _mm512_set1_ps(m)), (i), \
                           _mm512_mul_ps(_mm512_loadu_ps((c) + (r) * 32 + 16), _mm512_set1_ps(m)))
NORMOPS_POLY32_DEFINE16(erf, ERF)
NORMOPS_POLY32_DEFINE16(tanh, TANH)
#elif defined(__AVX2__) && defined(__FMA__)
/* Entry i (the low 5 bits of each lane of i) of a 32-entry row: four
 * vpermps on the low three bits, blends on bits 3 and 4 (gathers, which
 * gcc makes of the scalar loop, are slow on some AVX2 CPUs). */
NORMOPS_ALWAYS_INLINE __m256 normops_row32_8(const float* row, __m256i i) {
    __m256 bit3 = _mm256_castsi256_ps(_mm256_slli_epi32(i, 28)), bit4 = _mm256_castsi256_ps(_mm256_slli_epi32(i, 27));
    __m256 lo = _mm256_blendv_ps(_mm256_permutevar8x32_ps(_mm256_loadu_ps(row), i),
                                 _mm256_permutevar8x32_ps(_mm256_loadu_ps(row + 8), i), bit3);
    __m256 hi = _mm256_blendv_ps(_mm256_permutevar8x32_ps(_mm256_loadu_ps(row + 16), i),
                                 _mm256_permutevar8x32_ps(_mm256_loadu_ps(row + 24), i), bit3);
    return _mm256_blendv_ps(lo, hi, bit4);
}
/* The same tables interval by interval (AVX2): interval i's entries H, p0,
 * p1, ... at i * STRIDE, STRIDE = 8 for erf32 (7 rows) and 16 for tanh32
 * (9), filled from the generated row-major tables when the module loads.
 * [1] is the table halved for normops_##name##32_scaled8(x, 1): H / 2 and
 * p_j 2^j (exact), and top_halved the row of the highest coefficient so
 * scaled (tanh32 picks its ninth row apart). */
#define NORMOPS_POLY32_ROWS(N) (NORMOPS_##N##32_DEG + 2)
#define NORMOPS_POLY32_STRIDE(N) (NORMOPS_POLY32_ROWS(N) <= 8 ? 8 : 16)
#define NORMOPS_POLY32_BY_INTERVAL(name, N)                                        \
    static float normops_##name##32_by_interval[2][32 * NORMOPS_POLY32_STRIDE(N)] __attribute__((aligned(32))); \
    static float normops_##name##32_top_halved[32] __attribute__((aligned(32)));  \
    __attribute__((constructor)) static void normops_##name##32_fill_by_interval(void) { \
        for (int i = 0; i < 32; i++) {                                             \
            for (int r = 0; r < NORMOPS_POLY32_ROWS(N); r++) {                     \
                float v = normops_##name##32_tab[r * 32 + i];                      \
                normops_##name##32_by_interval[0][i * NORMOPS_POLY32_STRIDE(N) + r] = v; \
                normops_##name##32_by_interval[1][i * NORMOPS_POLY32_STRIDE(N) + r] = \
                    r == 0 ? v * 0.5f : v * (float)(1 << (r - 1));                 \
            }                                                                      \
            normops_##name##32_top_halved[i] =                                     \
                normops_##name##32_tab[(NORMOPS_##N##32_DEG + 1) * 32 + i] * (float)(1 << NORMOPS_##N##32_DEG); \
        }                                                                          \
    }
NORMOPS_POLY32_BY_INTERVAL(erf, ERF)
NORMOPS_POLY32_BY_INTERVAL(tanh, TANH)

/* Entries 0..7 of each lane's interval block (blocks of `stride` floats,
 * the interval in the low 5 bits of the lane of i) as 8 vectors, out[r]
 * holding entry r of every lane: eight 32-byte rows loaded as 128-bit
 * halves and transposed. Fewer shuffles than normops_row32_8 per entry
 * (3 instead of 7) once six or more entries are wanted. */
NORMOPS_ALWAYS_INLINE void normops_rows8_by_interval(const float* t, int stride, __m256i i, __m256 out[8]) {
    int ix[8];
    _mm256_storeu_si256((__m256i*)ix, _mm256_and_si256(i, _mm256_set1_epi32(31)));
    __m256 r[8];
    for (int h = 0; h < 2; h++)      /* entries 0..3, then 4..7 */
        for (int l = 0; l < 4; l++)  /* lane l in the low half, lane l + 4 in the high one */
            r[4 * h + l] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_load_ps(t + ix[l] * stride + 4 * h)),
                                                _mm_load_ps(t + ix[l + 4] * stride + 4 * h), 1);
    for (int h = 0; h < 2; h++) {
        __m256 t0 = _mm256_unpacklo_ps(r[4 * h], r[4 * h + 1]), t1 = _mm256_unpackhi_ps(r[4 * h], r[4 * h + 1]);
        __m256 t2 = _mm256_unpacklo_ps(r[4 * h + 2], r[4 * h + 3]), t3 = _mm256_unpackhi_ps(r[4 * h + 2], r[4 * h + 3]);
        out[4 * h] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
        out[4 * h + 1] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
        out[4 * h + 2] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
        out[4 * h + 3] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
    }
}

/* erf32 / tanh32 on 8 lanes: the scalar function's operations in order
 * (separate * and +), the table entries of rows 0..7 from the
 * interval-major copy, a ninth (tanh) by normops_row32_8: the same bits
 * (all 2^32 inputs: a C driver against the scalar function, and the
 * proof's recorded digests).
 * half = 1 (a compile-time constant) gives f(2x) / 2 from x, every value
 * halved as in normops_##name##32_scaled16 (AVX-512): Gelu's form. The
 * scaled core leaves a NaN input as some NaN. */
#define NORMOPS_POLY32_DEFINE8(name, N)                                            \
    NORMOPS_ALWAYS_INLINE __m256 normops_##name##32_scaled8(__m256 x, const int half) { \
        const float h_ = half ? 0.5f : 1.0f;                                       \
        const __m256 sign = _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u)); \
        const __m256 shift = _mm256_set1_ps(NORMOPS_##N##32_SHIFT * h_);           \
        /* min returns its second operand for a NaN: the clamp, as the scalar */  \
        __m256 a = _mm256_min_ps(_mm256_andnot_ps(sign, x), _mm256_set1_ps(NORMOPS_##N##32_CLAMP * h_)); \
        __m256 s = _mm256_add_ps(_mm256_min_ps(a, _mm256_set1_ps(NORMOPS_##N##32_KMAX * h_)), shift); \
        __m256 k = _mm256_sub_ps(s, shift);                                        \
        __m256 t = _mm256_sub_ps(a, k);                                            \
        __m256i i = _mm256_castps_si256(s);  /* halved: s's ulp is halved too, the low bits the same */ \
        __m256 e[8];  /* e[0] = H, e[r + 1] = p_r */                               \
        normops_rows8_by_interval(normops_##name##32_by_interval[half], NORMOPS_POLY32_STRIDE(N), i, e); \
        __m256 p = NORMOPS_##N##32_DEG + 1 < 8 ? e[NORMOPS_##N##32_DEG + 1]        \
                   : normops_row32_8(half ? normops_##name##32_top_halved          \
                                          : normops_##name##32_tab + (NORMOPS_##N##32_DEG + 1) * 32, i); \
        for (int r = NORMOPS_##N##32_DEG; r >= 1; r--)                             \
            p = _mm256_add_ps(_mm256_mul_ps(p, t), e[r]);                          \
        __m256 b = _mm256_blendv_ps(e[0], a,                                       \
                                    _mm256_cmp_ps(k, _mm256_set1_ps(NORMOPS_##N##32_ZONE * h_), _CMP_LT_OQ)); \
        return _mm256_or_ps(_mm256_add_ps(b, _mm256_mul_ps(a, p)), _mm256_and_ps(x, sign)); \
    }                                                                              \
    NORMOPS_ALWAYS_INLINE __m256 normops_##name##32_8(__m256 x) {                  \
        return _mm256_blendv_ps(normops_##name##32_scaled8(x, 0),                  \
                                _mm256_castsi256_ps(_mm256_set1_epi32((int)NORMOPS_NAN32)), \
                                _mm256_cmp_ps(x, x, _CMP_UNORD_Q));                \
    }                                                                              \
    static void normops_##name##32_array(const float* x, float* y, ptrdiff_t n) { \
        ptrdiff_t i = 0;                                                           \
        for (; i + 8 <= n; i += 8)                                                 \
            _mm256_storeu_ps(y + i, normops_##name##32_8(_mm256_loadu_ps(x + i))); \
        for (; i < n; i++)                                                         \
            y[i] = normops_##name##32(x[i]);                                       \
    }                                                                              \
    NORMOPS_SCALAR_MAP(name##32, float)
NORMOPS_POLY32_DEFINE8(erf, ERF)
NORMOPS_POLY32_DEFINE8(tanh, TANH)
#else
NORMOPS_MAPS(erf32, float)
NORMOPS_MAPS(tanh32, float)
#endif

/* ------------------------------------------------------------ fast */

/* 32 intervals of width W (1/8 for erf, 5/16 for tanh), i = (int)(|x|/W)
 * (the product rounded: i may be the neighbour at a boundary, where the
 * polynomial still holds), t = |x| - c_i exact (Sterbenz), coefficient k of
 * interval i at k * 32 + i. At AVX-512 the 32 entries of a coefficient sit
 * in two registers and one vpermt2ps picks them (no gathers); the scalar
 * function runs the vector code on one lane, so both give the same bits. */
#define NORMOPS_ET_FAST_LAST(F) (32.0f * NORMOPS_##F##_FAST_WIDTH - 0x1p-16f)
#if defined(__AVX512F__)
NORMOPS_ALWAYS_INLINE __m512 normops_et_fast16(__m512 x, const float* tab, float width, float invw, float last,
                                              float sat) {
    const __m512i absmask = _mm512_set1_epi32(0x7FFFFFFF);
    __m512 ax = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x), absmask));
    __m512 a = _mm512_min_ps(ax, _mm512_set1_ps(last));          /* NaN -> last, as the scalar select */
    __m512i i = _mm512_cvttps_epi32(_mm512_mul_ps(a, _mm512_set1_ps(invw)));
    __m512i m = _mm512_add_epi32(_mm512_add_epi32(i, i), _mm512_min_epi32(i, _mm512_set1_epi32(1)));
    __m512 t = _mm512_sub_ps(a, _mm512_mul_ps(_mm512_cvtepi32_ps(m), _mm512_set1_ps(0.5f * width)));
    const float* c = tab + NORMOPS_ET_FAST_DEG * 32;
    __m512 p = _mm512_permutex2var_ps(_mm512_loadu_ps(c), i, _mm512_loadu_ps(c + 16));
    for (int k = NORMOPS_ET_FAST_DEG - 1; k >= 0; k--) {
        c = tab + k * 32;
        p = _mm512_fmadd_ps(p, t, _mm512_permutex2var_ps(_mm512_loadu_ps(c), i, _mm512_loadu_ps(c + 16)));
    }
    p = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(ax, _mm512_set1_ps(sat), _CMP_GE_OQ), p, _mm512_set1_ps(1.0f));
    __m512 y = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(p),
                                                   _mm512_andnot_si512(absmask, _mm512_castps_si512(x))));
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), y,
                                _mm512_castsi512_ps(_mm512_set1_epi32((int)NORMOPS_NAN32)));
}
#define NORMOPS_ET_FAST_DEFINE(name, F)                                            \
    NORMOPS_ALWAYS_INLINE __m512 normops_##name##32_fast16(__m512 x) {             \
        return normops_et_fast16(x, normops_##name##_fast_coef, NORMOPS_##F##_FAST_WIDTH, \
                                 NORMOPS_##F##_FAST_INVWIDTH, NORMOPS_ET_FAST_LAST(F), NORMOPS_##F##_SAT32); \
    }                                                                              \
    NORMOPS_ALWAYS_INLINE float normops_##name##32_fast(float x) {                 \
        return _mm512_cvtss_f32(normops_##name##32_fast16(_mm512_set1_ps(x)));     \
    }
#else
#define NORMOPS_ET_FAST_DEFINE(name, F)                                            \
    NORMOPS_ALWAYS_INLINE float normops_##name##32_fast(float x) {                 \
        uint32_t ux = normops_f2u(x), ax = ux & 0x7FFFFFFFu;                       \
        float a = normops_u2f(ax);                                                 \
        float a_ = a < NORMOPS_ET_FAST_LAST(F) ? a : NORMOPS_ET_FAST_LAST(F);      \
        int32_t i = (int32_t)(a_ * NORMOPS_##F##_FAST_INVWIDTH);                   \
        float t = a_ - (float)(2 * i + (i > 0)) * (0.5f * NORMOPS_##F##_FAST_WIDTH); \
        const float* c = normops_##name##_fast_coef;                               \
        float p = c[NORMOPS_ET_FAST_DEG * 32 + i];                                 \
        _Pragma("GCC unroll 16")                                                   \
        for (int k = NORMOPS_ET_FAST_DEG - 1; k >= 0; k--) p = NORMOPS_FMAF(p, t, c[k * 32 + i]); \
        p = a >= NORMOPS_##F##_SAT32 ? 1.0f : p;                                   \
        uint32_t y = normops_f2u(p) | (ux & 0x80000000u);                          \
        y = ax > 0x7F800000u ? NORMOPS_NAN32 : y;                                  \
        return normops_u2f(y);                                                     \
    }
#endif
#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
/* The fast erf at AVX2: 8 intervals, so that the 8 entries of each
 * coefficient fill one register and one vpermps picks a lane's (gathers
 * of the 32-interval table cost more than the exact erf32). a = |x|, k =
 * round(2a) by the 1.5 * 2^23 shift, capped at 7 on the shifted pattern;
 * interval k is [k/2 - 1/4, k/2 + 1/4) around c_k = k/2 for k >= 1 (the
 * last reaching 4) and [0, 1/4) for k = 0 (c_0 = 0); t = a - c_k exact.
 * erf = c0 + t q(t) (tools/gen_erf_tanh_tables.py: normops_erf_fast8_coef,
 * entry j * 8 + k; degree NORMOPS_ERF_FAST8_DEG = 6), on interval 0
 * t + t q(t). q in Estrin's form: on Zen 2 the length of the chain of
 * dependent operations limits these loops, and each vpermps takes two
 * cycles of the shuffle unit (so the t of interval 0 is a mask, not a
 * look-up). Measured on every input: docs/transcendentals.md. Every a
 * from 3.75 on, +inf and NaN included, takes the capped interval 7; from
 * the saturation on the blend gives 1, and a NaN a makes t and the lane
 * NaN. The sign is copied from x; a NaN stays some NaN. */
NORMOPS_ALWAYS_INLINE __m256 normops_erf32_fast8_signed(__m256 x) {
    const __m256 sign = _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u));
    const __m256 shift = _mm256_set1_ps(NORMOPS_SHIFT32);
    __m256 a = _mm256_andnot_ps(sign, x);
    __m256i k = _mm256_min_epi32(_mm256_castps_si256(_mm256_fmadd_ps(a, _mm256_set1_ps(2.0f), shift)),
                                 _mm256_add_epi32(_mm256_castps_si256(shift),
                                                  _mm256_set1_epi32(NORMOPS_ERF_FAST8_INTERVALS - 1)));
    __m256 t = _mm256_fnmadd_ps(_mm256_sub_ps(_mm256_castsi256_ps(k), shift), _mm256_set1_ps(0.5f), a);
    const float* c = normops_erf_fast8_coef;
#define NORMOPS_ERF8_C(j) _mm256_permutevar8x32_ps(_mm256_loadu_ps(c + (j) * 8), k)
    __m256 t2 = _mm256_mul_ps(t, t), t4 = _mm256_mul_ps(t2, t2);
    __m256 q = _mm256_fmadd_ps(_mm256_fmadd_ps(NORMOPS_ERF8_C(6), t, NORMOPS_ERF8_C(5)), t4,
                               _mm256_fmadd_ps(_mm256_fmadd_ps(NORMOPS_ERF8_C(4), t, NORMOPS_ERF8_C(3)), t2,
                                               _mm256_fmadd_ps(NORMOPS_ERF8_C(2), t, NORMOPS_ERF8_C(1))));
    /* t on interval 0 (k's pattern is the shift's), +0 elsewhere */
    __m256 d = _mm256_and_ps(t, _mm256_castsi256_ps(_mm256_cmpeq_epi32(k, _mm256_castps_si256(shift))));
    __m256 p = _mm256_fmadd_ps(q, t, _mm256_add_ps(NORMOPS_ERF8_C(0), d));
#undef NORMOPS_ERF8_C
    p = _mm256_blendv_ps(p, _mm256_set1_ps(1.0f), _mm256_cmp_ps(a, _mm256_set1_ps(NORMOPS_ERF_SAT32), _CMP_GE_OQ));
    return _mm256_or_ps(p, _mm256_and_ps(x, sign));
}
/* every input, NaN made canonical */
NORMOPS_ALWAYS_INLINE __m256 normops_erf32_fast8(__m256 x) {
    return _mm256_blendv_ps(normops_erf32_fast8_signed(x), _mm256_castsi256_ps(_mm256_set1_epi32((int)NORMOPS_NAN32)),
                            _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}
/* one element: a lane of the vector code, so both give the same bits */
NORMOPS_ALWAYS_INLINE float normops_erf32_fast(float x) {
    return _mm256_cvtss_f32(normops_erf32_fast8(_mm256_set1_ps(x)));
}
static void normops_erf32_fast_array(const float* x, float* y, ptrdiff_t n) {
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, normops_erf32_fast8(_mm256_loadu_ps(x + i)));
    for (; i < n; i++)
        y[i] = normops_erf32_fast(x[i]);
}
NORMOPS_SCALAR_MAP(erf32_fast, float)
#else
NORMOPS_ET_FAST_DEFINE(erf, ERF)
NORMOPS_MAPS(erf32_fast, float)
#endif
NORMOPS_ET_FAST_DEFINE(tanh, TANH)

NORMOPS_MAPS(erf64, double)
NORMOPS_MAPS(tanh64, double)
NORMOPS_MAPS(tanh32_fast, float)

/* One entry for the Cython maps (the numbers: kernel_codes.h). */

static inline void normops_etfunc_map(int which, const void* x, void* y, ptrdiff_t n) {
#define NORMOPS_CASE(tag, f, T)                                                     \
    case tag: normops_##f##_array((const T*)x, (T*)y, n); break;                    \
    case tag | NORMOPS_T_SCALAR: normops_##f##_scalar_array((const T*)x, (T*)y, n); break;
    switch (which) {
    NORMOPS_CASE(NORMOPS_T_ERF32, erf32, float)
    NORMOPS_CASE(NORMOPS_T_TANH32, tanh32, float)
    NORMOPS_CASE(NORMOPS_T_ERF64, erf64, double)
    NORMOPS_CASE(NORMOPS_T_TANH64, tanh64, double)
    NORMOPS_CASE(NORMOPS_T_ERF32_FAST, erf32_fast, float)
    NORMOPS_CASE(NORMOPS_T_TANH32_FAST, tanh32_fast, float)
    default: break;
    }
#undef NORMOPS_CASE
}

#endif
