/* The fast flavour's exponential, exp32_fast, at every ISA level
 * (docs/transcendentals.md, "The fast flavour"). Part of transcendental.h,
 * which includes it after the scalar functions; not included on its own. */
#ifndef NORMOPS_EXP_FAST_H
#define NORMOPS_EXP_FAST_H

/* -------------------------------------------------------- fast exp32 */

/* x = n ln2 + r, |r| <= ln2/2, n*LN2_HI exact (16 bits times |n| < 2^8),
 * e^r by Taylor to degree 7, 2^n applied so that only the last operation
 * rounds (subnormal results) or overflows. The fast flavour may differ
 * between instruction-set levels (docs/specification.md §2.3): AVX-512 shortens the
 * polynomial with a table of 2^(j/16), AVX2 fits a degree-6 one, both with
 * fused multiply-add; the baseline keeps this scalar form. The error bound
 * holds at every level
 * (docs/transcendentals.md, measured on every input). */
#if defined(__FMA__)
#define NORMOPS_FMAF(a, b, c) __builtin_fmaf((a), (b), (c))
#else
#define NORMOPS_FMAF(a, b, c) ((a) * (b) + (c))
#endif

#if defined(__AVX512F__)
#include <immintrin.h>

/* The core for x <= 89 or NaN: a NaN passes through with its payload
 * (max returns its second operand when either is NaN; every later value
 * derives from it). x = (n/16) ln2 + r with n/16 = x log2 e rounded to
 * sixteenths by the shift, |r| <= ln2/32 (about); the pattern of the
 * shifted sum ends in the bits of n, so its low four bits index the
 * 16-entry table of 2^(j/16), j = n mod 16, held in one register
 * (vpermps); e^r - 1 = w = r (1 + r (T2 + r T3)), fitted; T + T w rounds
 * once, and vscalefps multiplies by 2^floor(n/16). Eleven vector
 * operations where a degree-6 polynomial over |r| <= ln2/2 took twelve;
 * measured at most 0.998 ulp from e^x, one float32 step from exp32, on
 * every input (docs/transcendentals.md). */
NORMOPS_ALWAYS_INLINE __m512 normops_exp32_fast16_core(__m512 x) {
    __m512 c = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);
    __m512 shift = _mm512_set1_ps(NORMOPS_EXPF_SHIFT16);
    __m512 t = _mm512_fmadd_ps(c, _mm512_set1_ps(NORMOPS_EXPF_LOG2E), shift);
    __m512 n16 = _mm512_sub_ps(t, shift);  /* n/16, exact */
    __m512 r = _mm512_fnmadd_ps(n16, _mm512_set1_ps(NORMOPS_EXPF_LN2_HI), c);
    r = _mm512_fnmadd_ps(n16, _mm512_set1_ps(NORMOPS_EXPF_LN2_LO), r);
    __m512 table = _mm512_permutexvar_ps(_mm512_castps_si512(t), _mm512_load_ps(normops_expf_sixteenths));
    __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(NORMOPS_EXPF_T3), r, _mm512_set1_ps(NORMOPS_EXPF_T2));
    __m512 w = _mm512_mul_ps(r, _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.0f)));
    return _mm512_scalef_ps(_mm512_fmadd_ps(table, w, table), n16);
}

/* Every input: clamped at 89 (NaN passes), NaN made canonical. */
NORMOPS_ALWAYS_INLINE __m512 normops_exp32_fast16(__m512 x) {
    __m512 y = normops_exp32_fast16_core(_mm512_min_ps(_mm512_set1_ps(89.0f), x));
    __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    return _mm512_mask_blend_ps(nan, y, _mm512_castsi512_ps(_mm512_set1_epi32((int)NORMOPS_NAN32)));
}

/* one element through the vector code, so that the scalar loop gives the
 * vector loop's bits */
NORMOPS_ALWAYS_INLINE float normops_exp32_fast(float x) {
    return _mm512_cvtss_f32(normops_exp32_fast16(_mm512_set1_ps(x)));
}

/* y[i] = fast exp(x[i] - shift), the difference rounded first; y may be x */
static void normops_exp32_fast_shifted_array(const float* x, float shift, float* y, ptrdiff_t n) {
    __m512 s = _mm512_set1_ps(shift);
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, normops_exp32_fast16(_mm512_sub_ps(_mm512_loadu_ps(x + i), s)));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        __m512 v = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), s);
        _mm512_mask_storeu_ps(y + i, m, normops_exp32_fast16(v));
    }
}
#elif defined(__AVX2__) && defined(__FMA__)
/* x = n ln2 + r with n = x log2 e rounded by the shift, |r| <= ln2/2
 * (about); e^r = 1 + r + r^2 q, q of degree 4 fitted (F2..F6,
 * transcendental_tables.h), evaluated in Estrin's form with fused
 * multiply-add; 2^n applied as two normal factors 2^k1 2^k2 (k1 = n >> 1,
 * n in [-150, 128]): p 2^k1 is exact, so only the second product rounds,
 * once (subnormal results and the overflow to +inf included). Where every
 * lane's result is normal (c in (-86, 88), n in [-124, 127], the common
 * case), adding n to p's exponent field is the same exact product in two
 * operations: 12 operations per 8 lanes then. AVX-512's table of 2^(j/16)
 * (two vpermps and a blend here) took 16 and was 9% slower on Zen 2, whose
 * few operations in flight favour the shorter chain of dependent
 * operations over the fewer operations; so the AVX2 bits are not AVX-512's
 * (docs/specification.md §2.3 allows it; the bound holds at both, measured on every
 * input: docs/transcendentals.md). normops_exp32_fast8_scaled: p = exp(c)
 * 2^-n and the shifted sum t, whose pattern ends in the bits of n. */
NORMOPS_ALWAYS_INLINE __m256 normops_exp32_fast8_scaled(__m256 c, __m256* t_out) {
    __m256 shift = _mm256_set1_ps(NORMOPS_SHIFT32), one = _mm256_set1_ps(1.0f);
    __m256 t = _mm256_fmadd_ps(c, _mm256_set1_ps(NORMOPS_EXPF_LOG2E), shift);
    __m256 n = _mm256_sub_ps(t, shift);  /* exact */
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(NORMOPS_EXPF_LN2_HI), c);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(NORMOPS_EXPF_LN2_LO), r);
    __m256 r2 = _mm256_mul_ps(r, r);
    __m256 low = _mm256_fmadd_ps(_mm256_set1_ps(NORMOPS_EXPF_F3), r, _mm256_set1_ps(NORMOPS_EXPF_F2));
    __m256 high = _mm256_fmadd_ps(_mm256_set1_ps(NORMOPS_EXPF_F5), r, _mm256_set1_ps(NORMOPS_EXPF_F4));
    high = _mm256_fmadd_ps(_mm256_set1_ps(NORMOPS_EXPF_F6), r2, high);
    __m256 q = _mm256_fmadd_ps(high, r2, low);  /* F2 + F3 r + r^2 (F4 + F5 r + F6 r^2) */
    *t_out = t;
    return _mm256_fmadd_ps(q, r2, _mm256_add_ps(one, r));
}

/* The fast exponential of lanes all in (-86, 88) (no NaN): n joins p's
 * exponent field (t's pattern is that of 1.5 2^23 + n, whose shift by 23
 * leaves n 2^23), exact since p 2^n is normal. Callers that know their
 * range (a Softmax row within 86 of its maximum, a Sigmoid vector that
 * passed normops_fast8_normal_lanes) skip the clamps, the range test and
 * the NaN blend: same bits. */
NORMOPS_ALWAYS_INLINE __m256 normops_exp32_fast8_normal(__m256 c) {
    __m256 t;
    __m256 p = normops_exp32_fast8_scaled(c, &t);
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), _mm256_slli_epi32(_mm256_castps_si256(t), 23)));
}

/* The same for lanes in (-86, 88) or NaN: n converted to an integer
 * instead (vcvtps2dq turns a NaN into 0x80000000, which the shift by 23
 * makes 0), so a NaN lane stays a NaN (not the canonical one) and every
 * other lane gets normops_exp32_fast8_normal's bits; one operation more,
 * where a blend would take two. */
NORMOPS_ALWAYS_INLINE __m256 normops_exp32_fast8_normal_or_nan(__m256 c) {
    __m256 t;
    __m256 p = normops_exp32_fast8_scaled(c, &t);
    __m256i n = _mm256_cvtps_epi32(_mm256_sub_ps(t, _mm256_set1_ps(NORMOPS_SHIFT32)));
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), _mm256_slli_epi32(n, 23)));
}

#define NORMOPS_EXPF_FAST_NORMAL_LO (-86.0f)
#define NORMOPS_EXPF_FAST_NORMAL_HI 88.0f

/* nonzero when every lane of c is in (-86, 88) (NaN is not) */
NORMOPS_ALWAYS_INLINE int normops_fast8_normal_lanes(__m256 c) {
    __m256 normal = _mm256_and_ps(_mm256_cmp_ps(c, _mm256_set1_ps(NORMOPS_EXPF_FAST_NORMAL_LO), _CMP_GT_OQ),
                                  _mm256_cmp_ps(c, _mm256_set1_ps(NORMOPS_EXPF_FAST_NORMAL_HI), _CMP_LT_OQ));
    return _mm256_movemask_ps(normal) == 0xFF;
}

NORMOPS_ALWAYS_INLINE __m256 normops_exp32_fast8_core(__m256 x) {
    __m256 c = _mm256_max_ps(_mm256_set1_ps(-104.0f), x);
    if (__builtin_expect(normops_fast8_normal_lanes(c), 1))  /* n in [-124, 127] */
        return normops_exp32_fast8_normal(c);
    __m256 t;
    __m256 y = normops_exp32_fast8_scaled(c, &t);
    __m256i k = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(_mm256_set1_ps(NORMOPS_SHIFT32)));
    __m256i k1 = _mm256_srai_epi32(k, 1);
    __m256i bias = _mm256_set1_epi32(127);
    __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, bias), 23));
    __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(k, k1), bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(y, s1), s2);
}

/* Every input: clamped at 89 (NaN passes), NaN made canonical. */
NORMOPS_ALWAYS_INLINE __m256 normops_exp32_fast8(__m256 x) {
    __m256 y = normops_exp32_fast8_core(_mm256_min_ps(_mm256_set1_ps(89.0f), x));
    return _mm256_blendv_ps(y, _mm256_castsi256_ps(_mm256_set1_epi32((int)NORMOPS_NAN32)),
                            _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

/* one element through the vector code, so that the scalar loop gives the
 * vector loop's bits */
NORMOPS_ALWAYS_INLINE float normops_exp32_fast(float x) {
    return _mm256_cvtss_f32(normops_exp32_fast8(_mm256_set1_ps(x)));
}

/* y[i] = fast exp(x[i] - shift), the difference rounded first; y may be x */
static void normops_exp32_fast_shifted_array(const float* x, float shift, float* y, ptrdiff_t n) {
    __m256 s = _mm256_set1_ps(shift);
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, normops_exp32_fast8(_mm256_sub_ps(_mm256_loadu_ps(x + i), s)));
    if (i < n) {  /* the tail through a copy */
        float tail[8] = {0, 0, 0, 0, 0, 0, 0, 0}, out[8];
        for (ptrdiff_t j = 0; j < n - i; j++)
            tail[j] = x[i + j] - shift;
        _mm256_storeu_ps(out, normops_exp32_fast8(_mm256_loadu_ps(tail)));
        for (ptrdiff_t j = 0; j < n - i; j++)
            y[i + j] = out[j];
    }
}
#else
NORMOPS_ALWAYS_INLINE float normops_exp32_fast(float x) {
    float z = x < 89.0f ? x : 89.0f;   /* as in normops_exp32_pair */
    z = z > -104.0f ? z : -104.0f;
    float t = NORMOPS_FMAF(z, NORMOPS_EXPF_LOG2E, NORMOPS_SHIFT32);
    float nf = t - NORMOPS_SHIFT32;
    int32_t n = (int32_t)(normops_f2u(t) - normops_f2u(NORMOPS_SHIFT32));
    float r = NORMOPS_FMAF(-nf, NORMOPS_EXPF_LN2_HI, z);
    r = NORMOPS_FMAF(-nf, NORMOPS_EXPF_LN2_LO, r);
    float p = NORMOPS_FMAF(NORMOPS_EXPF_P7, r, NORMOPS_EXPF_P6);
    p = NORMOPS_FMAF(p, r, NORMOPS_EXPF_P5);
    p = NORMOPS_FMAF(p, r, NORMOPS_EXPF_P4);
    p = NORMOPS_FMAF(p, r, NORMOPS_EXPF_P3);
    p = NORMOPS_FMAF(p, r, NORMOPS_EXPF_P2);
    p = NORMOPS_FMAF(p, r, 1.0f);
    p = NORMOPS_FMAF(p, r, 1.0f);
    int32_t n1 = n >> 1, n2 = n - n1;   /* n in [-150, 128]: both in [-75, 64] */
    float s1 = normops_u2f((uint32_t)(n1 + 127) << 23);
    float s2 = normops_u2f((uint32_t)(n2 + 127) << 23);
    uint32_t y = normops_f2u((p * s1) * s2);
    y = x != x ? NORMOPS_NAN32 : y;
    return normops_u2f(y);
}
#endif

#endif
