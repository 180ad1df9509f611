/* exp32 and log32 at AVX-512: the quick paths on 16 lanes and the loops
 * that recompute their flagged lanes by the careful path
 * (docs/transcendentals.md, "The quick paths"). Part of transcendental.h,
 * which includes it in an AVX-512 build after the rounding test and the
 * careful path; not included on its own. */
#ifndef NORMOPS_TRANSCENDENTAL_AVX512_H
#define NORMOPS_TRANSCENDENTAL_AVX512_H

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

#endif
