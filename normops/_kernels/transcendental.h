/* normops' own exp and log (docs/transcendentals.md).
 *
 * exp32 / log32: float32 in and out, correctly rounded (to nearest, ties to
 * even) for every one of the 2^32 inputs, proven by
 * `python -m normops verify-transcendentals`. exp64 / log64: the same
 * construction for float64, deterministic, error below one ulp (not
 * correctly rounded). exp32_fast: float32 arithmetic for the fast flavour.
 *
 * The scalar functions use only IEEE + - * / on float and double, each
 * rounded on its own (the build passes -ffp-contract=off: no contraction),
 * integer operations on the bit patterns, and table loads: no libm, no
 * conversion whose rounding mode could matter. Special cases are selects on
 * masks, not branches, so that gcc vectorises the array loops (table loads
 * become gathers at AVX2/AVX-512) with exactly the scalar operations.
 * exp32 and log32 are the exception (decisions.md §2): a correctly rounded
 * result is unique, so their array loops try a quick float64 evaluation
 * with whatever the build offers (explicit fused multiply-add, permutes,
 * vgetmant/vgetexp/vscalef) and fall back to the scalar careful path where
 * a rounding test cannot decide; every ISA level gives the same bits, as
 * the exhaustive check proves for each build.
 *
 * NaN results are the canonical quiet NaN (float32 0x7FC00000, float64
 * 0x7FF8000000000000). Subnormal inputs and results follow IEEE: the
 * results are wrong if another library has set flush-to-zero or
 * denormals-are-zero in the thread (normops.show_config() reports both).
 */
#ifndef NORMOPS_TRANSCENDENTAL_H
#define NORMOPS_TRANSCENDENTAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "transcendental_tables.h"
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#define NORMOPS_ALWAYS_INLINE static inline __attribute__((always_inline))

/* ---------------------------------------------------------------- bits */

NORMOPS_ALWAYS_INLINE uint32_t normops_f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
NORMOPS_ALWAYS_INLINE float normops_u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
NORMOPS_ALWAYS_INLINE uint64_t normops_d2u(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
NORMOPS_ALWAYS_INLINE double normops_u2d(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }

#define NORMOPS_NAN32 0x7FC00000u
#define NORMOPS_NAN64 0x7FF8000000000000ull
/* Adding 1.5 * 2^52 to |t| < 2^51 rounds t to an integer k, and the low
 * bits of the sum's pattern are k in two's complement. */
#define NORMOPS_SHIFT64 0x1.8p52
#define NORMOPS_SHIFT32 0x1.8p23f

/* hi + lo (|lo| <= ulp(hi) / 2, the exact sum of a Fast2Sum/2Sum) rounded
 * to odd at 53 bits: hi itself when it is exact or odd, else the odd
 * neighbour of hi on the side of lo. Rounding that double to float32 gives
 * the float32 nearest to hi + lo: a float32 midpoint, or the overflow and
 * underflow thresholds, have at most 25 significant bits, so they are even
 * doubles, and the odd value never lands on one nor crosses it. This is the
 * midpoint guard before the final rounding. */
NORMOPS_ALWAYS_INLINE double normops_round_to_odd(double hi, double lo) {
    uint64_t hb = normops_d2u(hi), lb = normops_d2u(lo);
    /* one pattern step: +1 (away from zero) when lo has the sign of hi,
     * else -1; taken when hi is even and lo is not zero. Arithmetic rather
     * than branches: the condition is random in a scalar loop. */
    uint64_t step = 1 - (((hb ^ lb) >> 63) << 1);
    uint64_t lz = lb << 1;                                  /* 0 iff lo = +-0 */
    uint64_t take = (~hb & 1) & ((lz | (0 - lz)) >> 63);
    return normops_u2d(hb + (step & (0 - take)));
}

/* -------------------------------------------------------- exp, shared */

/* x = k ln2/64 + r, |r| <= ln2/128 (a little more from the rounding of
 * x * 64/ln2), k from the pattern of the shifted value. x - k*L1 is exact
 * (k*L1 is exact: L1 has 36 significant bits and |k| < 2^17; the
 * difference follows from Sterbenz's lemma), one rounding for k*L2. */
NORMOPS_ALWAYS_INLINE double normops_exp_reduce(double z, uint64_t* k) {
    double t = z * NORMOPS_EXP_INVL + NORMOPS_SHIFT64;
    double kd = t - NORMOPS_SHIFT64;
    *k = normops_d2u(t) - normops_d2u(NORMOPS_SHIFT64);
    return (z - kd * NORMOPS_EXP_L1) - kd * NORMOPS_EXP_L2;
}

/* expm1(r) for |r| <= 0.0055: Taylor to degree 6 (truncation below 2^-65
 * relative). */
NORMOPS_ALWAYS_INLINE double normops_exp_poly(double r) {
    double q = NORMOPS_EXP_C2 + r * (NORMOPS_EXP_C3 + r * (NORMOPS_EXP_C4
               + r * (NORMOPS_EXP_C5 + r * NORMOPS_EXP_C6)));
    return r + (r * r) * q;
}

/* -------------------------------------------------------------- exp32 */

/* e^x = 2^m 2^(j/64) e^r with k = 64m + j. The table value hi + lo times
 * (1 + p), p = expm1(r): hi + (lo + hi p), the sum kept as an unevaluated
 * pair by Fast2Sum. Returns the pair's high part, stores its low part;
 * relative error of the pair below 2^-58 (measured, docs/transcendentals.md),
 * where the hardest float32 input needs 2^-52.7. */
NORMOPS_ALWAYS_INLINE double normops_exp32_pair(float x, double* lo_out) {
    double z = (double)x;
    /* exp(89) overflows float32 and exp(-104) < 2^-150 rounds to +0, so
     * clamping changes no result; infinities become finite. These selects
     * are single min/max instructions; they turn a NaN into 89, and
     * normops_exp32 restores it. */
    z = z < 89.0 ? z : 89.0;
    z = z > -104.0 ? z : -104.0;
    uint64_t k;
    double r = normops_exp_reduce(z, &k);
    double p = normops_exp_poly(r);
    uint64_t j = k & 63;  /* 64-bit table index: a gather at AVX2/AVX-512 */
    double th = normops_exp_hi[j], tl = normops_exp_lo[j];
    double u = tl + th * p;
    double hi = th + u;                 /* Fast2Sum: |th| >= |u| */
    double lo = u - (hi - th);
    /* 2^m from the pattern: (k - j) << 46 is m << 52 (m from -151 to 129,
     * a normal double), so the products are exact */
    double scale = normops_u2d(((k - j) << 46) + normops_d2u(1.0));
    *lo_out = lo * scale;
    return hi * scale;
}

/* The pair rounded to odd, then to float32: the only rounding of the
 * result; it makes +inf above the overflow threshold and the correctly
 * rounded subnormal or +0 below 2^-126. */
NORMOPS_ALWAYS_INLINE float normops_exp32(float x) {
    double lo;
    double hi = normops_exp32_pair(x, &lo);
    uint32_t y = normops_f2u((float)normops_round_to_odd(hi, lo));
    y = x != x ? NORMOPS_NAN32 : y;  /* the canonical NaN */
    return normops_u2f(y);
}

/* ------------------------------------------------- exp32, quick path */

/* The cheap first attempt of the array loops: e^x in float64 from a
 * 256-entry table of 2^(j/256) and a degree-3 Taylor polynomial. Relative
 * error below 2^-42.5: truncation 2^-42.7 (|r| <= ln2/512), the rounding
 * of k*L up to 2^-45.6, a few roundings of 2^-53. Rounding that double to
 * float32 gives the correctly rounded result unless the double lies within
 * 2^10.5 of its own ulps of a float32 rounding boundary; *hard is then set
 * and the caller recomputes the element on the exact path. The test looks
 * at the 29 bits below float32 precision, where a boundary (a midpoint, or
 * the overflow threshold) has the pattern 1 followed by 28 zeros. Results
 * in or near float32's subnormal range (inputs from -104 to -87.3) are
 * always hard, since their boundaries sit elsewhere; below that the result
 * is +0 either way. The outputs are thus exactly normops_exp32's, and the
 * exhaustive check runs through this path (docs/transcendentals.md). */
#define NORMOPS_EXPQ_TOLERANCE 2048u
NORMOPS_ALWAYS_INLINE float normops_exp32_quick(float x, uint32_t* hard) {
    float c = x < 89.0f ? x : 89.0f;    /* as in normops_exp32_pair, in float32: */
    c = c > -104.0f ? c : -104.0f;      /* one min and one max per 16 lanes */
    uint32_t subnormal = (c < -87.3f) & (c > -104.0f);
    double z = (double)c;
    /* x = k ln2/256 + r, |r| <= ln2/512 plus roundings */
    double t = z * NORMOPS_EXPQ_INVL + NORMOPS_SHIFT64;
    double kd = t - NORMOPS_SHIFT64;
    double r = z - kd * NORMOPS_EXPQ_L;
    double p = r + (r * r) * (NORMOPS_EXP_C2 + r * NORMOPS_EXP_C3);
    /* The pattern of t is that of the shift plus k, and the shift's pattern
     * has 48 low zero bits: so its low 8 bits are j = k mod 256 and, shifted
     * left by 44, it is k << 44 (mod 2^64). With the table's patterns biased
     * by -(j << 44), one integer addition gives 2^(j/256) 2^m, k = 256 m + j
     * (m added to the exponent: a normal double for m in [-151, 129]). */
    uint64_t tb = normops_d2u(t);
    double th = normops_u2d(normops_expq_biased[tb & 255] + (tb << 44));
    double y = th + th * p;
    uint64_t below = normops_d2u(y) & 0x1FFFFFFFu;
    uint32_t near_boundary = below - (0x10000000u - NORMOPS_EXPQ_TOLERANCE) < 2 * NORMOPS_EXPQ_TOLERANCE;
    *hard = near_boundary | subnormal;
    uint32_t out = normops_f2u((float)y);
    out = x != x ? NORMOPS_NAN32 : out;
    return normops_u2f(out);
}

/* ---------------------------------------------------------- log, shared */

/* log1p(z) - z = z^2 Q(z) for |z| <= 2^-7: Taylor to degree 9 (truncation
 * below 2^-66 relative to z). */
NORMOPS_ALWAYS_INLINE double normops_log_poly(double z) {
    double q = NORMOPS_LOG_Q2 + z * (NORMOPS_LOG_Q3 + z * (NORMOPS_LOG_Q4 + z * (NORMOPS_LOG_Q5
               + z * (NORMOPS_LOG_Q6 + z * (NORMOPS_LOG_Q7 + z * (NORMOPS_LOG_Q8 + z * NORMOPS_LOG_Q9))))));
    return (z * z) * q;
}

/* log x = e ln2 - log(invc) + log1p(z), with x = 2^e m and z = m invc - 1
 * exact (the caller's), as an unevaluated pair rounded once at the end.
 * e*LN2_HI + logc_hi is exact (multiples of 2^-42 below 2^10); 2Sum adds z
 * exactly; the small terms go into the low part. zlo is a low part of z
 * (float64) or 0. Returns hi, stores lo. */
NORMOPS_ALWAYS_INLINE double normops_log_combine(double e, uint64_t i, double z, double zlo, double* lo_out) {
    double s1 = e * NORMOPS_LN2_HI + normops_log_logc_hi[i];
    double h = s1 + z;                  /* 2Sum(s1, z) */
    double zz = h - s1;
    double l = (s1 - (h - zz)) + (z - zz);
    l = l + ((normops_log_poly(z) + zlo) + (e * NORMOPS_LN2_LO + normops_log_logc_lo[i]));
    double hi = h + l;                  /* Fast2Sum: |h| >= |l| */
    *lo_out = l - (hi - h);
    return hi;
}

/* -------------------------------------------------------------- log32 */

/* log x as an unevaluated pair (relative error below 2^-60, measured);
 * garbage for x <= 0, inf and NaN, which normops_log32 replaces. */
NORMOPS_ALWAYS_INLINE double normops_log32_pair(float x, double* lo_out) {
    uint32_t ux = normops_f2u(x);
    /* +0 and positive subnormals: scale by 2^23 (exact), exponent - 23 */
    int sub = ux < 0x00800000u;
    uint32_t us = normops_f2u(sub ? x * 0x1p23f : x);
    uint32_t idx = (us >> 16) & 127;
    /* mantissas just below 2: exponent + 1 and entry 127 (invc = 1/2), so
     * that x just below a power of two reduces around 1 from below */
    int32_t e = (int32_t)((us >> 23) & 255) - 127 - (sub ? 23 : 0) + (idx == 127);
    double m = (double)normops_u2f((us & 0x007FFFFFu) | 0x3F800000u);
    uint64_t i = idx;
    double z = m * normops_log_invc[i] - 1.0;  /* 24 x 12 bits: exact; Sterbenz */
    return normops_log_combine((double)e, i, z, 0.0, lo_out);
}

NORMOPS_ALWAYS_INLINE float normops_log32(float x) {
    uint32_t ux = normops_f2u(x);
    double lo;
    double hi = normops_log32_pair(x, &lo);
    uint32_t y = normops_f2u((float)normops_round_to_odd(hi, lo));
    /* x < 0, -inf and NaN -> NaN; +inf -> +inf; +-0 -> -inf. log(1) = +0
     * comes out of the arithmetic. */
    y = ux >= 0x7F800000u ? NORMOPS_NAN32 : y;
    y = ux == 0x7F800000u ? 0x7F800000u : y;
    y = (ux & 0x7FFFFFFFu) == 0 ? 0xFF800000u : y;
    return normops_u2f(y);
}

/* -------------------------------------------------------------- exp64 */

/* Same reduction; the pair is rounded once to double, then scaled by 2^m
 * in two exact-or-once-rounded factors (2^m alone can overflow). Error:
 * at most 0.5 ulp plus about 2^-7 ulp for normal results, up to 0.75 ulp
 * for subnormal ones (the sum is rounded at 53 bits before the scaling
 * rounds it again). */
NORMOPS_ALWAYS_INLINE double normops_exp64(double x) {
    double z = x < 710.0 ? x : 710.0;       /* exp(710) overflows (NaN: restored at the end) */
    z = z > -746.0 ? z : -746.0;            /* exp(-746) < 2^-1075 rounds to +0 */
    uint64_t k;
    double r = normops_exp_reduce(z, &k);
    double p = normops_exp_poly(r);
    uint64_t j = k & 63;
    double th = normops_exp_hi[j], tl = normops_exp_lo[j];
    double v = th + (tl + th * p);
    /* m = k >> 6 in [-1077, 1025]; mo = m + 2048 > 0 avoids an arithmetic
     * 64-bit shift (none at AVX2). m1 = floor(m/2), m2 = m - m1. */
    uint64_t mo = (k + ((uint64_t)2048 << 6)) >> 6;
    uint64_t m1o = mo >> 1;
    double scale1 = normops_u2d((m1o - 1) << 52);        /* 2^m1 */
    double scale2 = normops_u2d((mo - m1o - 1) << 52);   /* 2^m2 */
    uint64_t y = normops_d2u((v * scale1) * scale2);
    y = x != x ? NORMOPS_NAN64 : y;
    return normops_u2d(y);
}

/* -------------------------------------------------------------- log64 */

/* z = m invc - 1 is not exact for a 53-bit m, but m = mhi + mlo with mhi
 * of 41 significant bits: mhi invc - 1 and mlo invc are exact, and 2Sum
 * makes the pair (z, zlo) = m invc - 1 exactly. log1p(z + zlo) =
 * log1p(z) + zlo / (1 + z) + ..., of which zlo - zlo z is kept. The pair
 * is rounded once: error about 0.5 ulp. */
NORMOPS_ALWAYS_INLINE double normops_log64(double x) {
    uint64_t ux = normops_d2u(x);
    int sub = ux < 0x0010000000000000ull;
    uint64_t us = normops_d2u(sub ? x * 0x1p52 : x);
    uint64_t i = (us >> 45) & 127;
    /* the exponent + 2^52 + 2048 as a double pattern, then minus the
     * offset: an exact int64 -> double conversion that AVX2 has */
    uint64_t eo = ((us >> 52) & 2047) + (2048 - 1023) - (sub ? 52 : 0) + (i == 127);
    double e = normops_u2d(normops_d2u(0x1p52) + eo) - (0x1p52 + 2048.0);
    uint64_t mb = (us & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull;
    double m = normops_u2d(mb);
    double mhi = normops_u2d(mb & ~(uint64_t)0xFFF);
    double mlo = m - mhi;
    double invc = normops_log_invc[i];
    double a = mhi * invc - 1.0;
    double b = mlo * invc;
    double z = a + b;                   /* 2Sum(a, b) */
    double bb = z - a;
    double zlo = (a - (z - bb)) + (b - bb);
    double lo;
    double hi = normops_log_combine(e, i, z, zlo - zlo * z, &lo);
    uint64_t y = normops_d2u(hi + lo);
    y = ux >= 0x7FF0000000000000ull ? NORMOPS_NAN64 : y;
    y = ux == 0x7FF0000000000000ull ? 0x7FF0000000000000ull : y;
    y = (ux & 0x7FFFFFFFFFFFFFFFull) == 0 ? 0xFFF0000000000000ull : y;
    return normops_u2d(y);
}

/* -------------------------------------------------------- fast exp32 */

/* x = n ln2 + r, |r| <= ln2/2, n*LN2_HI exact (16 bits times |n| < 2^8),
 * e^r by Taylor to degree 7, 2^n applied so that only the last operation
 * rounds (subnormal results) or overflows. The fast flavour may differ
 * between instruction-set levels (decisions.md §1): AVX-512 shortens the
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
 * (decisions.md §1 allows it; the bound holds at both, measured on every
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

/* ------------------------------------------------------------- arrays */

/* For each function f: normops_f_array, the element-wise loop that gcc
 * vectorises, and normops_f_scalar_array, the same one element at a time
 * through a call that is never inlined (the tests compare the two). y may
 * be x: each element is read before it is written, and ivdep tells gcc
 * there is no other dependence, so it does not version the loop on
 * aliasing. PRE is off in the vector loop: it specialises the clamped
 * path of exp with constant table entries, which turns the table loads
 * into masked loads that do not vectorise. The tuning makes gcc use
 * gather instructions (generic tuning emulates them). Both are gcc's
 * (other compilers get the plain loops; the bits do not change). */
#if defined(__GNUC__) && !defined(__clang__)
#define NORMOPS_IVDEP _Pragma("GCC ivdep")
#define NORMOPS_NO_PRE __attribute__((optimize("no-tree-pre")))
#if defined(__AVX512F__)
#define NORMOPS_GATHER_TUNE __attribute__((target("tune=icelake-server")))
#elif defined(__AVX2__)
#define NORMOPS_GATHER_TUNE __attribute__((target("tune=haswell")))
#else
#define NORMOPS_GATHER_TUNE
#endif
#elif defined(__clang__)
#define NORMOPS_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#define NORMOPS_NO_PRE
#define NORMOPS_GATHER_TUNE
#else
#define NORMOPS_IVDEP
#define NORMOPS_NO_PRE
#define NORMOPS_GATHER_TUNE
#endif
#define NORMOPS_VECTOR_MAP(name, f, T)                                              \
    NORMOPS_NO_PRE NORMOPS_GATHER_TUNE                                              \
    static void normops_##name(const T* x, T* y, ptrdiff_t n) {                     \
        NORMOPS_IVDEP                                                               \
        for (ptrdiff_t i = 0; i < n; i++)                                           \
            y[i] = normops_##f(x[i]);                                               \
    }
#define NORMOPS_SCALAR_MAP(f, T)                                                    \
    __attribute__((noinline)) static T normops_##f##_one(T x) { return normops_##f(x); } \
    static void normops_##f##_scalar_array(const T* x, T* y, ptrdiff_t n) {         \
        for (ptrdiff_t i = 0; i < n; i++)                                           \
            y[i] = normops_##f##_one(x[i]);                                         \
    }
#define NORMOPS_MAPS(f, T) NORMOPS_VECTOR_MAP(f##_array, f, T) NORMOPS_SCALAR_MAP(f, T)

/* exp32 over arrays: a quick evaluation of every element in float64 and a
 * rounding test that flags the rare element it cannot decide, recomputed
 * by the careful path (Ziv's strategy; docs/transcendentals.md, "The quick
 * paths"). The quick path differs between ISA levels (fused multiply-add
 * and permutes where the build has them); the results cannot, since each
 * is the correctly rounded one or flagged, and the exhaustive check runs
 * these loops at every level. */
NORMOPS_SCALAR_MAP(exp32, float)
NORMOPS_SCALAR_MAP(log32, float)

/* The rounding test of a quick result y (float64, relative error below
 * 2^53 TOL / 2 ulps of y... see below): in the 29 bits of y below float32
 * precision a float32 rounding boundary (a midpoint, or the overflow
 * threshold) is 1 followed by 28 zeros. y is hard when those bits lie
 * within TOL units of that pattern: adding TOL - 2^28 to the low 32 bits
 * maps the window onto [0, 2 TOL), which is bits 28..log2(2 TOL) all zero.
 * Otherwise the boundary is more than TOL double ulps from y, farther than
 * the error, and (float)y is correctly rounded. */
#define NORMOPS_NEAR_ADD(tol) ((int)((tol) - 0x10000000u))
#define NORMOPS_NEAR_MASK(tol) ((int)(0x1FFFFFFFu & ~(2 * (tol) - 1)))
/* log: below 2^-41.6 (polynomial 2^-41.8), at most 2^11.4 ulps */
#define NORMOPS_LOGF64_TOL 0x2000u

/* What a vector loop's caller knows of the range of exp32's arguments
 * (the quick paths below: normops_exp32_quick16 says what each allows) */
#define NORMOPS_EXP_ANY 0
#define NORMOPS_EXP_BELOW_89 1
#define NORMOPS_EXP_NORMAL 2
#define NORMOPS_EXPF32_TINY (-87.3f)

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
/* The careful path on the hard elements of a vector (bit i of lanes set:
 * element i is recomputed; d holds the vector's inputs). Recomputing an
 * element that was not hard changes nothing: both paths give the correctly
 * rounded result. Not inlined: it stays out of the hot loop. At AVX2 an
 * element first takes the baseline's float64 quick path (normops_exp32_quick,
 * its window, 2^-42 relative, about 2^9 times narrower than the float32
 * one's), and the double-double path only where that is hard too: about 1
 * element in 500 comes here, and each costs about 18 ns instead of 29
 * (with the branch's misprediction and the stores). AVX-512, where the
 * proof could not be rerun, keeps the direct path. */
__attribute__((noinline)) static void normops_exp32_careful(const float* d, float* y, unsigned lanes) {
    for (; lanes; lanes &= lanes - 1) {
        float x = d[__builtin_ctz(lanes)];
#if defined(__AVX512F__)
        y[__builtin_ctz(lanes)] = normops_exp32(x);
#else
        uint32_t hard;
        float quick = normops_exp32_quick(x, &hard);
        y[__builtin_ctz(lanes)] = hard ? normops_exp32(x) : quick;
#endif
    }
}
#endif

#if defined(__AVX512F__)
__attribute__((noinline)) static void normops_log32_careful(const float* d, float* y, ptrdiff_t len) {
    for (ptrdiff_t i = 0; i < len; i++)
        y[i] = normops_log32(d[i]);
}

/* The low 32 bits of 16 doubles (two vectors) in lane order, and the test
 * above on them: a mask of the hard lanes. */
NORMOPS_ALWAYS_INLINE __mmask16 normops_near_boundary16(__m512d lo, __m512d hi, int add, int mask) {
    const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    __m512i low = _mm512_permutex2var_epi32(_mm512_castpd_si512(lo), evens, _mm512_castpd_si512(hi));
    return _mm512_testn_epi32_mask(_mm512_add_epi32(low, _mm512_set1_epi32(add)), _mm512_set1_epi32(mask));
}

NORMOPS_ALWAYS_INLINE __m512 normops_cvt2pd_ps(__m512d lo, __m512d hi) {
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)), _mm512_cvtpd_ps(hi), 1);
}

/* exp32 on 16 lanes by the quick path, in float32 arithmetic; *hard gets
 * the lanes to recompute.
 *
 * x = (k/32) ln2 + r: t = x/ln2 + SHIFT is a multiple of 1/32 whose
 * pattern ends in j = k mod 32, kd = t - SHIFT = k/32 exactly; rh = x - kd
 * LN2_HI is exact (an FMA; tools/gen_transcendental_tables.py checks why).
 * The table is of accurate points (Gal's method): point[j] is a float32
 * within 2^-42 (relative) of 2^(j/32) e^delta[j] for a small delta[j]
 * (|delta| < 2^-15), so e^x = 2^floor(k/32) point[j] e^(r - delta[j]) and
 * no low part of the table is needed. rl = kd MLN2_LO + offset[j] carries
 * the rest of kd ln2 and -delta[j], rs = rh + rl rounded. With e^r' = 1 +
 * r' + r'^2 q(r'), q = 1/2 + r'/6 + r'^2/24:
 *     e^x / 2^floor(k/32) = point + point rh + point (rl + rs^2 q)
 * s = RN(point + point rh) (one FMA) and its error e (exact: point - s is,
 * and e is a float32 within 2^-48 relative); tt = point u + e with u =
 * rl + rs^2 q, small (|tt| < 2^-12 relative to s). s + tt is within about
 * 2^-36 (relative) of e^x / 2^floor(k/32).
 *
 * The rounding test: offset[j] also holds -BIAS / point[j] (the table
 * generator), so tt comes out lowered by BIAS (to within 2^-37): y2 =
 * RN(s + tt), the window's lower end, and y1 = RN(s + (tt + 2 BIAS)), its
 * upper end. Where they agree, no float32 rounding boundary lies within
 * BIAS of the value, farther than its error, and y2 is the correctly
 * rounded result at this scale; vscalefps multiplies it by 2^floor(k/32)
 * exactly (or to +inf past the overflow threshold, which is itself such a
 * boundary). Where they differ, or are NaN (x NaN), the lane is hard.
 * BIAS = 2^-35, set by the exhaustive check (docs/transcendentals.md);
 * about 1 element in 4000 is hard.
 *
 * Lanes with x <= -104 (-inf included) give +0 (e^-104 < 2^-150); results
 * below 2^-126 (x in (-104, -87.3)) are hard: their rounding boundaries sit
 * at other bit positions. x is first clamped at 89 (exp(89) overflows).
 * range, what the caller knows of every lane that is not NaN (a constant:
 * the tests it makes unnecessary drop out): NORMOPS_EXP_ANY nothing;
 * NORMOPS_EXP_BELOW_89 at most 89 (Softmax's x - max <= 0), no clamp;
 * NORMOPS_EXP_NORMAL also at least -87.3 (a Softmax row whose minimum is
 * that close to its maximum): no lane is +0 or tiny, so neither mask is
 * made. The arithmetic on each lane is the same in all three. (AVX2's
 * normops_exp32_quick8 takes the same three.) */
/* exp32(-v) instead of exp32(v) when negated (Sigmoid's e^-x; range
 * NORMOPS_EXP_ANY): -v is never formed, the signs go into the constants
 * and the comparisons (t = -v/ln2 + SHIFT, rh = -v - kd LN2_HI, each the
 * same rounding of the same value; the clamp at 89 becomes one at -89, and
 * a NaN stays NaN); a zero's sign does not matter (e^0 = 1 either way). */
NORMOPS_ALWAYS_INLINE __m512 normops_exp32_quick16_of(__m512 v, __mmask16* hard, int range, int negated) {
    const __m512 shift = _mm512_set1_ps(NORMOPS_EXPF32_SHIFT);
    __m512 c = range != NORMOPS_EXP_ANY ? v  /* min and max keep a NaN (their second operand) */
        : negated ? _mm512_max_ps(_mm512_set1_ps(-89.0f), v) : _mm512_min_ps(_mm512_set1_ps(89.0f), v);
    __mmask16 live = range == NORMOPS_EXP_NORMAL ? (__mmask16)0xFFFF
        : negated ? _mm512_cmp_ps_mask(c, _mm512_set1_ps(104.0f), _CMP_NGE_UQ)  /* -c > -104 or NaN */
        : _mm512_cmp_ps_mask(c, _mm512_set1_ps(-104.0f), _CMP_NLE_UQ);  /* > -104 or NaN */
    __mmask16 tiny = range == NORMOPS_EXP_NORMAL ? (__mmask16)0
        : negated ? _mm512_mask_cmp_ps_mask(live, c, _mm512_set1_ps(-NORMOPS_EXPF32_TINY), _CMP_GT_OQ)
        : _mm512_mask_cmp_ps_mask(live, c, _mm512_set1_ps(NORMOPS_EXPF32_TINY), _CMP_LT_OQ);
    __m512 t = _mm512_fmadd_ps(c, _mm512_set1_ps(negated ? -NORMOPS_EXPF32_INVLN2 : NORMOPS_EXPF32_INVLN2), shift);
    __m512 kd = _mm512_sub_ps(t, shift);
    __m512 rh = negated ? _mm512_fnmsub_ps(kd, _mm512_set1_ps(NORMOPS_EXPF32_LN2_HI), c)
        : _mm512_fnmadd_ps(kd, _mm512_set1_ps(NORMOPS_EXPF32_LN2_HI), c);
    __m512i j = _mm512_castps_si512(t);
    __m512 point = _mm512_permutex2var_ps(_mm512_load_ps(normops_expf32_point), j,
                                          _mm512_load_ps(normops_expf32_point + 16));
    __m512 offset = _mm512_permutex2var_ps(_mm512_load_ps(normops_expf32_offset), j,
                                           _mm512_load_ps(normops_expf32_offset + 16));
    __m512 rl = _mm512_fmadd_ps(kd, _mm512_set1_ps(NORMOPS_EXPF32_MLN2_LO), offset);
    __m512 rs = _mm512_add_ps(rh, rl);
    __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(NORMOPS_EXPF32_C4), rs, _mm512_set1_ps(NORMOPS_EXPF32_C3));
    q = _mm512_fmadd_ps(q, rs, _mm512_set1_ps(0.5f));
    __m512 u = _mm512_fmadd_ps(_mm512_mul_ps(rs, rs), q, rl);
    __m512 s = _mm512_fmadd_ps(point, rh, point);
    __m512 e = _mm512_fmadd_ps(point, rh, _mm512_sub_ps(point, s));
    __m512 tt = _mm512_fmadd_ps(point, u, e);  /* lowered by BIAS */
    __m512 y2 = _mm512_add_ps(s, tt);
    __m512 y1 = _mm512_add_ps(s, _mm512_add_ps(tt, _mm512_set1_ps(2 * NORMOPS_EXPF32_BIAS)));
    *hard = tiny | _mm512_mask_cmp_ps_mask(live, y1, y2, _CMP_NEQ_UQ);
    return range == NORMOPS_EXP_NORMAL ? _mm512_scalef_ps(y2, kd) : _mm512_maskz_scalef_ps(live, y2, kd);
}

NORMOPS_ALWAYS_INLINE __m512 normops_exp32_quick16(__m512 v, __mmask16* hard, int range) {
    return normops_exp32_quick16_of(v, hard, range, 0);
}

/* exp32 of 16 lanes in a register (of their negations when negated, see
 * normops_exp32_quick16_of): the quick path, then the careful path on its
 * flagged lanes (for loops that keep the results in registers) */
NORMOPS_ALWAYS_INLINE __m512 normops_exp32_exact16_of(__m512 v, int range, int negated) {
    __mmask16 hard;
    __m512 y = normops_exp32_quick16_of(v, &hard, range, negated);
    if (__builtin_expect(hard != 0, 0)) {
        float d[16], e[16];
        _mm512_storeu_ps(d, negated ? _mm512_sub_ps(_mm512_setzero_ps(), v) : v);
        _mm512_storeu_ps(e, y);
        normops_exp32_careful(d, e, hard);
        y = _mm512_loadu_ps(e);
    }
    return y;
}

NORMOPS_ALWAYS_INLINE __m512 normops_exp32_exact16(__m512 v, int range) {
    return normops_exp32_exact16_of(v, range, 0);
}

/* y[i] = exp32(x[i] - shift), the difference rounded to float32 first (the
 * Softmax step); y may be x (a vector's differences stay in a register
 * until its hard lanes, if any, are recomputed). The tail through masked
 * loads (zeros: never hard) and stores. */
NORMOPS_ALWAYS_INLINE void normops_exp32_shifted_blocks(const float* x, float shift, float* y, ptrdiff_t n,
                                                     int below_89) {
    __m512 s = _mm512_set1_ps(shift);
    float d[16];
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __mmask16 hard;
        __m512 v = _mm512_sub_ps(_mm512_loadu_ps(x + i), s);
        _mm512_storeu_ps(y + i, normops_exp32_quick16(v, &hard, below_89));
        if (__builtin_expect(hard != 0, 0)) {
            _mm512_storeu_ps(d, v);
            normops_exp32_careful(d, y + i, hard);
        }
    }
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1), hard;
        __m512 v = _mm512_maskz_sub_ps(m, _mm512_maskz_loadu_ps(m, x + i), s);
        _mm512_mask_storeu_ps(y + i, m, normops_exp32_quick16(v, &hard, below_89));
        if (hard & m) {
            _mm512_storeu_ps(d, v);
            normops_exp32_careful(d, y + i, hard & m);
        }
    }
}

/* log z for 8 doubles z = x > 0 widened (subnormal x included: z is a
 * normal double): z = 2^E m, m in [0.75, 1.5) by vgetmantpd, E the
 * exponent of z (4/3 + 2^-40), which is z's own plus one exactly when m <
 * 1; n = round(16 m) by the shift trick, entry n mod 16 (vpermt2pd): invc
 * near 1/m, logc = -log(invc); r = m invc - 1 (one rounding, |r| <= 0.039);
 * log z = E ln2 + logc + r + r^2 Q(r), Q fitted. Where n = 16 (m near 1)
 * invc = 1 and logc = 0, so that r = m - 1 is exact and, for E = 0, log z
 * near 1 keeps its relative accuracy. */
NORMOPS_ALWAYS_INLINE __m512d normops_logf64_quick8(__m512d z) {
    __m512d e = _mm512_getexp_pd(_mm512_mul_pd(z, _mm512_set1_pd(NORMOPS_LOGF64_FOUR_THIRDS)));
    __m512d m = _mm512_getmant_pd(z, _MM_MANT_NORM_p75_1p5, _MM_MANT_SIGN_src);
    __m512i n = _mm512_castpd_si512(_mm512_add_pd(m, _mm512_set1_pd(NORMOPS_LOGF64_SHIFT)));
    __m512d invc = _mm512_permutex2var_pd(_mm512_load_pd(normops_logf64_invc), n,
                                          _mm512_load_pd(normops_logf64_invc + 8));
    __m512d logc = _mm512_permutex2var_pd(_mm512_load_pd(normops_logf64_logc), n,
                                          _mm512_load_pd(normops_logf64_logc + 8));
    __m512d r = _mm512_fmsub_pd(m, invc, _mm512_set1_pd(1.0));
    __m512d q = _mm512_fmadd_pd(_mm512_set1_pd(NORMOPS_LOGF64_B7), r, _mm512_set1_pd(NORMOPS_LOGF64_B6));
    q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(NORMOPS_LOGF64_B5));
    q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(NORMOPS_LOGF64_B4));
    q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(NORMOPS_LOGF64_B3));
    q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(NORMOPS_LOGF64_B2));
    __m512d s = _mm512_fmadd_pd(e, _mm512_set1_pd(NORMOPS_LOGF64_LN2), logc);
    return _mm512_fmadd_pd(_mm512_mul_pd(r, r), q, _mm512_add_pd(s, r));
}

/* log32 on 16 lanes by the quick path; hard: the lanes to recompute, which
 * include every input that is not positive, finite and non-zero (NaN, +-0,
 * negative, +-inf: one vfpclassps). */
NORMOPS_ALWAYS_INLINE __m512 normops_log32_quick16(__m512 x, __mmask16* hard) {
    __mmask16 special = _mm512_fpclass_ps_mask(x, 0xDF);
    __m512d lo = normops_logf64_quick8(_mm512_cvtps_pd(_mm512_castps512_ps256(x)));
    __m512d hi = normops_logf64_quick8(_mm512_cvtps_pd(_mm512_extractf32x8_ps(x, 1)));
    *hard = special | normops_near_boundary16(lo, hi, NORMOPS_NEAR_ADD(NORMOPS_LOGF64_TOL),
                                              NORMOPS_NEAR_MASK(NORMOPS_LOGF64_TOL));
    return normops_cvt2pd_ps(lo, hi);
}

static void normops_log32_array(const float* x, float* y, ptrdiff_t n) {
    float d[16];
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __mmask16 hard;
        __m512 v = _mm512_loadu_ps(x + i);
        _mm512_storeu_ps(y + i, normops_log32_quick16(v, &hard));
        if (__builtin_expect(hard != 0, 0)) {
            _mm512_storeu_ps(d, v);
            normops_log32_careful(d, y + i, 16);
        }
    }
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1), hard;
        __m512 v = _mm512_mask_loadu_ps(_mm512_set1_ps(1.0f), m, x + i);  /* 1 elsewhere: never hard */
        _mm512_mask_storeu_ps(y + i, m, normops_log32_quick16(v, &hard));
        if (hard & m) {
            _mm512_storeu_ps(d, v);
            normops_log32_careful(d, y + i, n - i);
        }
    }
}
#elif defined(__AVX2__) && defined(__FMA__)
/* exp32 on 8 lanes by the quick path in float32 arithmetic: the AVX-512
 * construction (normops_exp32_quick16) with what AVX2 has. *hard gets a
 * mask of the lanes to recompute (bit i: lane i).
 * - 2^(j/16) = hi + lo, j = k mod 16: every other entry of the 32-entry
 *   tables, in two registers each, picked by two vpermps (the low three
 *   bits of t) and a blend on the fourth bit; so |r| <= ln2/32 and q gets
 *   one more term, q = 1/2 + r/6 + r^2/24 + r^3/120.
 * - 2^floor(k/16) added to the exponent field (no vscalefps): t's pattern
 *   is SHIFT's plus k, and SHIFT's low four bits are 0, so (pattern << 19)
 *   masked to the exponent field is SHIFT's part plus floor(k/16) << 23.
 *   The result is normal from x > -87.3 up to the overflow threshold;
 *   x >= 0x1.62e43p+6, the smallest input whose exp32 is +inf, gives +inf
 *   by a blend.
 * - DELTA = 2^-33: over all 2^32 inputs 2^-34 lets 35 wrong results
 *   through, 2^-33 none (the exhaustive check); about 1 element in 500 is
 *   hard. */
#define NORMOPS_EXPF32_DELTA_AVX2 0x1p-33f
#define NORMOPS_EXPF32_OVERFLOW 0x1.62e43p+6f
NORMOPS_ALWAYS_INLINE __m256 normops_exp16_table8(const float* t32, __m256i j, __m256 upper) {
    /* entries 0, 2, ..., 30 of a 32-entry table: 2^(i/16) for i < 16 */
    const __m256 a = _mm256_setr_ps(t32[0], t32[2], t32[4], t32[6], t32[8], t32[10], t32[12], t32[14]);
    const __m256 b = _mm256_setr_ps(t32[16], t32[18], t32[20], t32[22], t32[24], t32[26], t32[28], t32[30]);
    return _mm256_blendv_ps(_mm256_permutevar8x32_ps(a, j), _mm256_permutevar8x32_ps(b, j), upper);
}

NORMOPS_ALWAYS_INLINE __m256 normops_exp32_quick8(__m256 v, int* hard, int range) {
    const __m256 shift = _mm256_set1_ps(NORMOPS_EXPF32_SHIFT16);
    __m256 c = range != NORMOPS_EXP_ANY ? v : _mm256_min_ps(_mm256_set1_ps(89.0f), v);  /* min keeps a NaN in v */
    /* range NORMOPS_EXP_NORMAL: every lane in [-87.3, 88] (the callers':
     * in [-87.3, 0]), so no lane is +0, tiny or +inf and no mask is made */
    int normal = range == NORMOPS_EXP_NORMAL;
    __m256 live = normal ? _mm256_castsi256_ps(_mm256_set1_epi32(-1))
        : _mm256_cmp_ps(c, _mm256_set1_ps(-104.0f), _CMP_NLE_UQ);  /* > -104 or NaN */
    __m256 tiny = normal ? _mm256_setzero_ps() : _mm256_cmp_ps(c, _mm256_set1_ps(NORMOPS_EXPF32_TINY), _CMP_LT_OQ);
    __m256 over = _mm256_cmp_ps(c, _mm256_set1_ps(NORMOPS_EXPF32_OVERFLOW), _CMP_GE_OQ);
    __m256 t = _mm256_fmadd_ps(c, _mm256_set1_ps(NORMOPS_EXPF32_INVLN2), shift);
    __m256 kd = _mm256_sub_ps(t, shift);  /* k/16 */
    __m256 rh = _mm256_fnmadd_ps(kd, _mm256_set1_ps(NORMOPS_EXPF32_LN2_HI), c);
    __m256 rl = _mm256_mul_ps(kd, _mm256_set1_ps(NORMOPS_EXPF32_MLN2_LO));
    __m256 rs = _mm256_add_ps(rh, rl);
    __m256i j = _mm256_castps_si256(t);
    __m256 upper = _mm256_castsi256_ps(_mm256_slli_epi32(j, 28));
    __m256 hi = normops_exp16_table8(normops_expf32_hi, j, upper);
    __m256 lo = normops_exp16_table8(normops_expf32_lo, j, upper);
    /* q in Estrin's form: a shorter chain of dependent operations (the
     * window of Zen 2's scheduler is what limits this loop) */
    __m256 rs2 = _mm256_mul_ps(rs, rs);
    __m256 q = _mm256_fmadd_ps(
        _mm256_fmadd_ps(_mm256_set1_ps(NORMOPS_EXPF32_C5), rs, _mm256_set1_ps(NORMOPS_EXPF32_C4)), rs2,
        _mm256_fmadd_ps(_mm256_set1_ps(NORMOPS_EXPF32_C3), rs, _mm256_set1_ps(0.5f)));
    __m256 u = _mm256_fmadd_ps(rs2, q, rl);
    __m256 s = _mm256_fmadd_ps(hi, rh, hi);
    __m256 e = _mm256_fmadd_ps(hi, rh, _mm256_sub_ps(hi, s));
    __m256 tt = _mm256_add_ps(_mm256_fmadd_ps(hi, u, _mm256_fmadd_ps(lo, rs, lo)), e);
    __m256 y1 = _mm256_add_ps(s, _mm256_add_ps(tt, _mm256_set1_ps(NORMOPS_EXPF32_DELTA_AVX2)));
    __m256 y2 = _mm256_add_ps(s, _mm256_sub_ps(tt, _mm256_set1_ps(NORMOPS_EXPF32_DELTA_AVX2)));
    __m256 differ = _mm256_cmp_ps(y1, y2, _CMP_NEQ_UQ);
    *hard = _mm256_movemask_ps(normal ? differ : _mm256_and_ps(live, _mm256_or_ps(tiny, differ)));
    __m256i scale = _mm256_sub_epi32(
        _mm256_and_si256(_mm256_slli_epi32(j, 19), _mm256_set1_epi32((int)0xFF800000u)),
        _mm256_and_si256(_mm256_slli_epi32(_mm256_castps_si256(shift), 19), _mm256_set1_epi32((int)0xFF800000u)));
    __m256 y = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(y1), scale));
    return normal ? y : _mm256_and_ps(live, _mm256_blendv_ps(y, _mm256_set1_ps(__builtin_inff()), over));
}

/* nonzero when every lane of v is in [-87.3, 88] (NaN is not): the range
 * NORMOPS_EXP_NORMAL takes, where its lanes get the bits of any range's */
NORMOPS_ALWAYS_INLINE int normops_exp32_normal_lanes8(__m256 v) {
    __m256 in = _mm256_and_ps(_mm256_cmp_ps(v, _mm256_set1_ps(NORMOPS_EXPF32_TINY), _CMP_GE_OQ),
                              _mm256_cmp_ps(v, _mm256_set1_ps(88.0f), _CMP_LE_OQ));
    return _mm256_movemask_ps(in) == 0xFF;
}

/* exp32 of 8 lanes in a register: the quick path, then the careful path
 * on its flagged lanes (for loops that keep the results in registers) */
NORMOPS_ALWAYS_INLINE __m256 normops_exp32_exact8(__m256 v, int range) {
    int hard;
    __m256 y = normops_exp32_quick8(v, &hard, range);
    if (__builtin_expect(hard != 0, 0)) {
        float d[8], e[8];
        _mm256_storeu_ps(d, v);
        _mm256_storeu_ps(e, y);
        normops_exp32_careful(d, e, (unsigned)hard);
        y = _mm256_loadu_ps(e);
    }
    return y;
}

NORMOPS_ALWAYS_INLINE void normops_exp32_shifted_blocks(const float* x, float shift, float* y, ptrdiff_t n,
                                                     int below_89) {
    __m256 s = _mm256_set1_ps(shift);
    float d[8];
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8) {
        int hard;
        __m256 v = _mm256_sub_ps(_mm256_loadu_ps(x + i), s);
        _mm256_storeu_ps(y + i, normops_exp32_quick8(v, &hard, below_89));
        if (__builtin_expect(hard != 0, 0)) {
            _mm256_storeu_ps(d, v);
            normops_exp32_careful(d, y + i, (unsigned)hard);
        }
    }
    if (i < n) {  /* the tail through a copy (zeros after it: never hard) */
        float tail[8] = {0, 0, 0, 0, 0, 0, 0, 0}, out[8];
        int hard;
        for (ptrdiff_t j = 0; j < n - i; j++)
            tail[j] = x[i + j] - shift;
        _mm256_storeu_ps(out, normops_exp32_quick8(_mm256_loadu_ps(tail), &hard, below_89));
        if (hard)
            normops_exp32_careful(tail, out, (unsigned)hard & ((1u << (n - i)) - 1));
        for (ptrdiff_t j = 0; j < n - i; j++)
            y[i + j] = out[j];
    }
}
#endif

#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
/* log32's quick path at AVX2: normops_logf64_quick8's operations, in the
 * same order and with the same constants, on 4 doubles, so that each lane
 * comes out as the AVX-512 lane does (and the same rounding test decides
 * it). What AVX2 lacks is made exactly from the bits of z (a positive
 * normal double: x > 0 finite, subnormal x included, widened): vgetmantpd
 * with [0.75, 1.5) keeps z's fraction with the exponent of 1, or of 1/2
 * when the fraction's first bit is set (a mantissa of 1.5 or more), and
 * vgetexppd of z (4/3 + 2^-40) is z's exponent plus that bit (z has at
 * most 24 significant bits, so the product reaches 2 exactly when the
 * mantissa reaches 1.5); the exponent becomes a double by the 2^52 trick
 * (no int64 conversion at AVX2), the two 16-entry tables are gathered. */
NORMOPS_ALWAYS_INLINE __m256d normops_logf64_quick4(__m256d z) {
    const __m256i one_and_half = _mm256_set1_epi64x((long long)1 << 51);
    __m256i bits = _mm256_castpd_si256(z);
    __m256i upper = _mm256_and_si256(bits, one_and_half);  /* the mantissa is 1.5 or more */
    __m256i biased = _mm256_add_epi64(_mm256_srli_epi64(bits, 52), _mm256_srli_epi64(upper, 51));
    __m256d e = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(biased, _mm256_castpd_si256(_mm256_set1_pd(0x1p52)))),
                              _mm256_set1_pd(0x1p52 + 1023.0));
    __m256i fraction = _mm256_and_si256(bits, _mm256_set1_epi64x(0x000FFFFFFFFFFFFFLL));
    __m256d m = _mm256_castsi256_pd(_mm256_or_si256(
        fraction, _mm256_sub_epi64(_mm256_set1_epi64x(0x3FF0000000000000LL), _mm256_slli_epi64(upper, 1))));
    __m256i n = _mm256_and_si256(_mm256_castpd_si256(_mm256_add_pd(m, _mm256_set1_pd(NORMOPS_LOGF64_SHIFT))),
                                 _mm256_set1_epi64x(15));
    __m256d invc = _mm256_i64gather_pd(normops_logf64_invc, n, 8);
    __m256d logc = _mm256_i64gather_pd(normops_logf64_logc, n, 8);
    __m256d r = _mm256_fmsub_pd(m, invc, _mm256_set1_pd(1.0));
    __m256d q = _mm256_fmadd_pd(_mm256_set1_pd(NORMOPS_LOGF64_B7), r, _mm256_set1_pd(NORMOPS_LOGF64_B6));
    q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(NORMOPS_LOGF64_B5));
    q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(NORMOPS_LOGF64_B4));
    q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(NORMOPS_LOGF64_B3));
    q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(NORMOPS_LOGF64_B2));
    __m256d s = _mm256_fmadd_pd(e, _mm256_set1_pd(NORMOPS_LOGF64_LN2), logc);
    return _mm256_fmadd_pd(_mm256_mul_pd(r, r), q, _mm256_add_pd(s, r));
}

/* the rounding test (NORMOPS_NEAR_ADD) on the low 32 bits of 4 doubles: a
 * mask of the hard lanes (bit i: lane i) */
NORMOPS_ALWAYS_INLINE int normops_near_boundary4(__m256d y, int add, int mask) {
    __m256i low = _mm256_add_epi32(_mm256_castpd_si256(y), _mm256_set1_epi64x((long long)(uint32_t)add));
    __m256i tested = _mm256_and_si256(low, _mm256_set1_epi64x((long long)(uint32_t)mask));
    return _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(tested, _mm256_setzero_si256())));
}

/* log32 on 8 lanes by the quick path; *hard: the lanes to recompute, among
 * them every input that is not positive, finite and non-zero */
NORMOPS_ALWAYS_INLINE __m256 normops_log32_quick8(__m256 x, int* hard) {
    __m256i u = _mm256_castps_si256(x);
    /* x in (0, +inf): its pattern as a signed integer in (0, 0x7F800000) */
    __m256i usual = _mm256_and_si256(_mm256_cmpgt_epi32(u, _mm256_setzero_si256()),
                                     _mm256_cmpgt_epi32(_mm256_set1_epi32(0x7F800000), u));
    __m256d lo = normops_logf64_quick4(_mm256_cvtps_pd(_mm256_castps256_ps128(x)));
    __m256d hi = normops_logf64_quick4(_mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)));
    int add = NORMOPS_NEAR_ADD(NORMOPS_LOGF64_TOL), mask = NORMOPS_NEAR_MASK(NORMOPS_LOGF64_TOL);
    *hard = (normops_near_boundary4(lo, add, mask) | (normops_near_boundary4(hi, add, mask) << 4))
        | (~_mm256_movemask_ps(_mm256_castsi256_ps(usual)) & 0xFF);
    return _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo));
}

/* The same on one element in scalar registers (the tails, and LogSoftmax's
 * log32 of each row's sum, whose latency the next row waits for): the
 * same operations, scalar, the tables read directly; the careful path
 * where the quick one cannot decide or x is not in (0, +inf). */
NORMOPS_ALWAYS_INLINE float normops_log32_quick_or_careful(float x) {
    uint32_t u = normops_f2u(x);
    if (__builtin_expect(u - 1u >= 0x7F7FFFFFu, 0))  /* +-0, negative, +inf, NaN */
        return normops_log32(x);
    uint64_t bits = normops_d2u((double)x);
    uint64_t upper = (bits >> 51) & 1u;
    double e = (double)((int64_t)(bits >> 52) + (int64_t)upper - 1023);
    double m = normops_u2d((bits & 0x000FFFFFFFFFFFFFull) | (0x3FF0000000000000ull - (upper << 52)));
    uint64_t n = normops_d2u(m + NORMOPS_LOGF64_SHIFT) & 15u;
    double r = __builtin_fma(m, normops_logf64_invc[n], -1.0);
    double q = __builtin_fma(NORMOPS_LOGF64_B7, r, NORMOPS_LOGF64_B6);
    q = __builtin_fma(q, r, NORMOPS_LOGF64_B5);
    q = __builtin_fma(q, r, NORMOPS_LOGF64_B4);
    q = __builtin_fma(q, r, NORMOPS_LOGF64_B3);
    q = __builtin_fma(q, r, NORMOPS_LOGF64_B2);
    double s = __builtin_fma(e, NORMOPS_LOGF64_LN2, normops_logf64_logc[n]);
    double y = __builtin_fma(r * r, q, s + r);
    uint32_t low = (uint32_t)normops_d2u(y) + (uint32_t)NORMOPS_NEAR_ADD(NORMOPS_LOGF64_TOL);
    if (__builtin_expect((low & (uint32_t)NORMOPS_NEAR_MASK(NORMOPS_LOGF64_TOL)) == 0, 0))
        return normops_log32(x);
    return (float)y;
}

/* log32 over arrays (y may be x): the quick path, its hard lanes (about 1
 * in 2^16 on random data, and the special inputs) recomputed by the
 * careful path; the last n mod 8 one at a time */
static void normops_log32_array(const float* x, float* y, ptrdiff_t n) {
    ptrdiff_t i = 0;
    float d[8];
    for (; i + 8 <= n; i += 8) {
        int hard;
        __m256 v = _mm256_loadu_ps(x + i);
        _mm256_storeu_ps(y + i, normops_log32_quick8(v, &hard));
        if (__builtin_expect(hard != 0, 0)) {  /* from a copy: y may be x */
            _mm256_storeu_ps(d, v);
            for (; hard; hard &= hard - 1)
                y[i + __builtin_ctz((unsigned)hard)] = normops_log32(d[__builtin_ctz((unsigned)hard)]);
        }
    }
    for (; i < n; i++)
        y[i] = normops_log32_quick_or_careful(x[i]);
}
#elif !defined(__AVX512F__)
NORMOPS_VECTOR_MAP(log32_array, log32, float)
#endif
#if !defined(__AVX512F__) && !(defined(__AVX2__) && defined(__FMA__))
/* Without fused multiply-add (the baseline build): the quick path of
 * normops_exp32_quick on blocks of NORMOPS_QUICK_BLOCK elements, and the
 * careful path again on a block where any element was hard (about one
 * block in a thousand on random data). */
#define NORMOPS_QUICK_BLOCK 128
NORMOPS_VECTOR_MAP(exp32_exact_array, exp32, float)
NORMOPS_NO_PRE NORMOPS_GATHER_TUNE
static uint32_t normops_exp32_quick_block(const float* x, float shift, float* d, float* y, ptrdiff_t n) {
    uint32_t hard = 0;
    NORMOPS_IVDEP
    for (ptrdiff_t i = 0; i < n; i++) {
        uint32_t h;
        d[i] = x[i] - shift;
        y[i] = normops_exp32_quick(d[i], &h);
        hard |= h;
    }
    return hard;
}

/* The quick path writes y directly: the careful one, when needed, starts
 * again from the differences in d, so overwriting x (y = x) loses
 * nothing. */
NORMOPS_ALWAYS_INLINE void normops_exp32_shifted_blocks(const float* x, float shift, float* y, ptrdiff_t n,
                                                     int below_89) {
    (void)below_89;  /* (the scalar clamp costs nothing worth saving) */
    float d[NORMOPS_QUICK_BLOCK];
    for (ptrdiff_t b = 0; b < n; b += NORMOPS_QUICK_BLOCK) {
        ptrdiff_t len = n - b < NORMOPS_QUICK_BLOCK ? n - b : NORMOPS_QUICK_BLOCK;
        if (normops_exp32_quick_block(x + b, shift, d, y + b, len))
            normops_exp32_exact_array(d, y + b, len);
    }
}
#endif

static void normops_exp32_shifted_array(const float* x, float shift, float* y, ptrdiff_t n) {
    normops_exp32_shifted_blocks(x, shift, y, n, 0);
}

/* The same for shift = the maximum of x's non-NaN elements (Softmax's
 * step 3): every difference that is not NaN is at most 0. */
static void normops_exp32_below_max_array(const float* x, float max, float* y, ptrdiff_t n) {
    normops_exp32_shifted_blocks(x, max, y, n, 1);
}

/* x - 0 is x for every float32 (-0 included), so this is plain exp32 */
static void normops_exp32_array(const float* x, float* y, ptrdiff_t n) {
    normops_exp32_shifted_array(x, 0.0f, y, n);
}
NORMOPS_SCALAR_MAP(exp32_fast, float)
#if !defined(__AVX512F__) && !(defined(__AVX2__) && defined(__FMA__))
NORMOPS_NO_PRE
static void normops_exp32_fast_shifted_array(const float* x, float shift, float* y, ptrdiff_t n) {
    NORMOPS_IVDEP
    for (ptrdiff_t i = 0; i < n; i++)
        y[i] = normops_exp32_fast(x[i] - shift);
}
#endif
static void normops_exp32_fast_array(const float* x, float* y, ptrdiff_t n) {
    normops_exp32_fast_shifted_array(x, 0.0f, y, n);
}
NORMOPS_MAPS(exp64, double)
NORMOPS_MAPS(log64, double)

/* y[i] = exp64(x[i] - shift), the difference rounded first; y may be x */
static void normops_exp64_shifted_array(const double* x, double shift, double* y, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; i++)
        y[i] = x[i] - shift;
    normops_exp64_array(y, y, n);
}

/* One entry for the Cython chunk loops. */
enum normops_tfunc {
    NORMOPS_T_EXP32, NORMOPS_T_LOG32, NORMOPS_T_EXP32_FAST,
    NORMOPS_T_EXP64, NORMOPS_T_LOG64,
    NORMOPS_T_SCALAR = 8  /* or-ed in: the one-at-a-time loop */
};

static inline void normops_tfunc_map(int which, const void* x, void* y, ptrdiff_t n) {
#define NORMOPS_CASE(tag, f, T)                                                     \
    case tag: normops_##f##_array((const T*)x, (T*)y, n); break;                    \
    case tag | NORMOPS_T_SCALAR: normops_##f##_scalar_array((const T*)x, (T*)y, n); break;
    switch (which) {
    NORMOPS_CASE(NORMOPS_T_EXP32, exp32, float)
    NORMOPS_CASE(NORMOPS_T_LOG32, log32, float)
    NORMOPS_CASE(NORMOPS_T_EXP32_FAST, exp32_fast, float)
    NORMOPS_CASE(NORMOPS_T_EXP64, exp64, double)
    NORMOPS_CASE(NORMOPS_T_LOG64, log64, double)
    default: break;
    }
#undef NORMOPS_CASE
}

/* The pairs before the final rounding (to measure their error). */
static inline void normops_tfunc_pairs(int which, const float* x, double* hi, double* lo, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; i++)
        hi[i] = which == NORMOPS_T_EXP32 ? normops_exp32_pair(x[i], lo + i) : normops_log32_pair(x[i], lo + i);
}

/* The float32 functions on the inputs whose patterns are start + i*stride,
 * i < n (the exhaustive check walks all 2^32 of them). */
#define NORMOPS_RANGE_BLOCK 2048
static inline void normops_tfunc_range(int which, uint64_t start, uint64_t stride, ptrdiff_t n, uint32_t* out) {
    float in[NORMOPS_RANGE_BLOCK];
    for (ptrdiff_t b = 0; b < n; b += NORMOPS_RANGE_BLOCK) {
        ptrdiff_t len = n - b < NORMOPS_RANGE_BLOCK ? n - b : NORMOPS_RANGE_BLOCK;
        uint64_t first = start + (uint64_t)b * stride;
        for (ptrdiff_t i = 0; i < len; i++)
            in[i] = normops_u2f((uint32_t)(first + (uint64_t)i * stride));
        normops_tfunc_map(which, in, (float*)(out + b), len);
    }
}

#endif
