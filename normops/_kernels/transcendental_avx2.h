/* exp32 and log32 at AVX2 with FMA: the quick paths on 8 lanes and the
 * loops that recompute their flagged lanes by the careful path
 * (docs/transcendentals.md, "The quick paths"). Part of transcendental.h,
 * which includes it in an AVX2 build after the rounding test and the
 * careful path; not included on its own. */
#ifndef NORMOPS_TRANSCENDENTAL_AVX2_H
#define NORMOPS_TRANSCENDENTAL_AVX2_H

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

#endif
