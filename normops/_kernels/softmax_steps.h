/* Float32 steps of Softmax and Sigmoid in C (softmax.pxi has the rows).
 *
 * 1. The fast flavour's exponentials and their Sum16 in one pass.
 *
 * 2. y[i] / s for float32, the bits of one IEEE division per element
 * (exact Softmax, docs/specification.md §9.2 step 5): at AVX2 and AVX-512 half of the
 * elements by the division itself and half at the cost of a float64
 * multiplication, the two running side by side on different units.
 *
 * q = (double)y[i] * RN64(1/s) is within 2^-52 (relative) of y[i]/s. A
 * float32 quotient y/s of normal size is either a float32 or at least
 * 2^-49 (relative) away from every float32 rounding boundary: a boundary
 * M has 25 significant bits with an odd last one, so y - M*s is not zero
 * and is a multiple of the smaller of the quanta of y and M*s. Rounding q
 * to float32 therefore gives RN32(y/s). Quotients below 2^-126 (subnormal
 * results, whose boundaries have fewer bits) take the division itself, on
 * the lanes of the vector that holds them, which is rare in Softmax (y/s <
 * 2^-126 needs x - max below -87). docs/exactness.md has the argument in full; the tests compare
 * with the division. */
#ifndef NORMOPS_SOFTMAX_STEPS_H
#define NORMOPS_SOFTMAX_STEPS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sum16.h"
#include "rowmax.h"
#include "transcendental.h"
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

/* How a Softmax or LogSoftmax row's last pass finishes it (1c) */
#define NORMOPS_LAST_DIVIDE 0
#define NORMOPS_LAST_MULTIPLY 1
#define NORMOPS_LAST_SUBTRACT 2

/* e[i] = the fast exp of x[i] - shift (the difference rounded first);
 * returns the Sum16 of the e[i]. At AVX-512 and AVX2 vector registers hold
 * the sixteen partials, so the sum rides along with the exponentials; at
 * the baseline it is a second pass. Same bits either way.
 * d (or NULL) receives the differences x[i] - shift (LogSoftmax's y: its
 * last pass then subtracts in place, on lines this compute-bound pass has
 * already brought into the cache for writing).
 * next (or NULL): the n elements the caller reads next (the next row). At
 * AVX-512 and AVX2 this compute-bound loop also reads them and stores their
 * maximum (ignoring NaN, -inf if none) in *next_max; at the baseline
 * *next_max is left alone. At AVX-512 a NaN comes out with its payload
 * (the Softmax row then becomes canonical NaN); the differences are at
 * most 0, so the clamp at 89 is not needed.
 * keep: whether the caller reads the e[i] afterwards (Softmax) or only the
 * sum (LogSoftmax); at AVX-512 and AVX2 keep = 0 skips their stores, at the
 * baseline e is the sum's buffer either way. */
#if defined(__AVX512F__)
/* The AVX-512 pass of both flavours (exact: exp32, whose hard lanes are
 * recomputed before the vector joins the sum, its range as
 * normops_exp32_quick16 takes it; fast: the fast exp), one vector of
 * elements at i, m the lanes in the row: the tail loads zeros (exp 1,
 * never hard) and leaves the partials past it alone. mn (or NULL): the
 * next row's minimum as well (ignoring NaN). */
NORMOPS_ALWAYS_INLINE void normops_exp_sum_step_avx512(const float* x, __m512 s, float* e, float* d, ptrdiff_t i,
                                                       __mmask16 m, int keep, const float* next, int exact,
                                                       int range, float* prev, __m512 prev_s, __m512* acc,
                                                       __m512* mx, __m512* mn) {
    __m512 diff = _mm512_maskz_sub_ps(m, _mm512_maskz_loadu_ps(m, x + i), s);
    __m512 v = exact ? normops_exp32_exact16(diff, range) : normops_exp32_fast16_core(diff);
    if (prev)  /* the previous row's last pass (1c), on the divider beside this arithmetic */
        _mm512_mask_storeu_ps(prev + i, m, _mm512_div_ps(_mm512_maskz_loadu_ps(m, prev + i), prev_s));
    if (next) {  /* max and min return their second operand when either is NaN */
        __m512 w = _mm512_mask_loadu_ps(_mm512_set1_ps(-__builtin_inff()), m, next + i);
        *mx = _mm512_max_ps(w, *mx);
        if (mn)
            *mn = _mm512_mask_min_ps(*mn, m, w, *mn);
    }
    if (d)
        _mm512_mask_storeu_ps(d + i, m, diff);
    if (keep)
        _mm512_mask_storeu_ps(e + i, m, v);
    *acc = _mm512_mask_add_ps(*acc, m, *acc, v);
}

NORMOPS_ALWAYS_INLINE __m512 normops_exp_sum_row_avx512(const float* x, float shift, float* e, float* d,
                                                        ptrdiff_t n, int keep, const float* next, float* next_max,
                                                        float* next_min, int exact, int range, float* prev,
                                                        float prev_s) {
    __m512 s = _mm512_set1_ps(shift), acc = _mm512_setzero_ps(), mx = _mm512_set1_ps(-__builtin_inff());
    __m512 mn = _mm512_set1_ps(__builtin_inff()), ps = _mm512_set1_ps(prev_s);
    __m512* pmn = next_min ? &mn : NULL;
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16)
        normops_exp_sum_step_avx512(x, s, e, d, i, (__mmask16)0xFFFF, keep, next, exact, range, prev, ps, &acc,
                                    &mx, pmn);
    if (i < n)
        normops_exp_sum_step_avx512(x, s, e, d, i, (__mmask16)((1u << (n - i)) - 1), keep, next, exact, range, prev,
                                    ps, &acc, &mx, pmn);
    if (next) {
        *next_max = _mm512_reduce_max_ps(mx);
        if (next_min)
            *next_min = _mm512_reduce_min_ps(mn);
    }
    return acc;
}

/* row_min: this row's minimum if known (else NaN): when every difference
 * is then at least -87.3, exp32 makes neither of its range masks
 * (NORMOPS_EXP_NORMAL; x - shift >= RN(row_min - shift), rounding being
 * monotonic). next_min (or NULL, and only with next): the next row's
 * minimum, for its own pass. */
NORMOPS_ALWAYS_INLINE float normops_exp_shifted_sum16_avx512(const float* x, float shift, float* e, float* d,
                                                             ptrdiff_t n, int keep, const float* next,
                                                             float* next_max, int exact, float* prev,
                                                             float prev_s, float row_min, float* next_min) {
    __m512 acc;
    if (exact && row_min - shift >= NORMOPS_EXPF32_TINY)
        acc = normops_exp_sum_row_avx512(x, shift, e, d, n, keep, next, next_max, next_min, exact,
                                         NORMOPS_EXP_NORMAL, prev, prev_s);
    else
        acc = normops_exp_sum_row_avx512(x, shift, e, d, n, keep, next, next_max, next_min, exact,
                                         NORMOPS_EXP_BELOW_89, prev, prev_s);
    /* Sum16's fold (sum16.h) in registers: partial t plus partial t + 8,
     * then t plus t + 4, then (0 + 2) + (1 + 3), the same additions */
    __m256 a = _mm256_add_ps(_mm512_castps512_ps256(acc), _mm512_extractf32x8_ps(acc, 1));
    __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));
    return _mm_cvtss_f32(_mm_add_ss(c, _mm_shuffle_ps(c, c, 1)));
}

static inline float normops_exp32_fast_shifted_sum16(const float* x, float shift, float* e, float* d,
                                                     ptrdiff_t n, int keep, const float* next,
                                                     float* next_max, float row_min, float* next_min) {
    (void)row_min;  /* vscalefps takes every range at the same cost: no minimum needed */
    (void)next_min;
    return normops_exp_shifted_sum16_avx512(x, shift, e, d, n, keep, next, next_max, 0, NULL, 0.0f,
                                            __builtin_nanf(""), NULL);
}
#elif defined(__AVX2__) && defined(__FMA__)
/* the fast exponential of v, its lanes in range (NORMOPS_EXP_NORMAL: in
 * (-86, 0] or NaN; a NaN lane gives a NaN, which reaches the sum: its row
 * is then written as the canonical NaN) */
NORMOPS_ALWAYS_INLINE __m256 normops_exp32_fast8_in(__m256 v, int range) {
    if (range != NORMOPS_EXP_NORMAL)
        return normops_exp32_fast8(v);
    return normops_exp32_fast8_normal_or_nan(v);
}

/* The AVX2 pass of both flavours: two vectors hold the sixteen partials
 * (part q, lane l: partial 8q + l), so the sum rides along with the
 * exponentials here too. Adds the terms of x[0..n) to p. exact: exp32 (its range as
 * normops_exp32_quick8 takes it, the hard lanes recomputed in registers),
 * else the fast exponential. next (or NULL): the next row's elements at
 * the same places, their maximum and minimum (ignoring NaN) taken into mx
 * and mn on the way. */
NORMOPS_ALWAYS_INLINE void normops_exp_sum_terms_avx2(const float* x, float shift, float* e, float* d, ptrdiff_t n,
                                                     int keep, int exact, int range, normops_f32_partials* p,
                                                     const float* next, __m256* mx, __m256* mn, float* prev,
                                                     float prev_by, int prev_op) {
    __m256 s = _mm256_set1_ps(shift), by = _mm256_set1_ps(prev_by);
    ptrdiff_t full = n - n % 16;
    /* The fast flavour software-pipelined, as the Sigmoid loop (below):
     * each step computes the next 16 exponentials, then stores and sums the
     * 16 the step before computed (same operations per lane, same order of
     * the sum). The exact flavour was no faster so (1% slower): its
     * exponential branches to the careful path. */
    __m256 e0 = _mm256_setzero_ps(), e1 = _mm256_setzero_ps();
#define NORMOPS_ROW_EXPS(at, out0, out1)                                     \
    do {                                                                     \
        __m256 v0 = _mm256_sub_ps(_mm256_loadu_ps(x + (at)), s);             \
        __m256 v1 = _mm256_sub_ps(_mm256_loadu_ps(x + (at) + 8), s);         \
        if (d) {                                                             \
            _mm256_storeu_ps(d + (at), v0);                                  \
            _mm256_storeu_ps(d + (at) + 8, v1);                              \
        }                                                                    \
        out0 = exact ? normops_exp32_exact8(v0, range) : normops_exp32_fast8_in(v0, range); \
        out1 = exact ? normops_exp32_exact8(v1, range) : normops_exp32_fast8_in(v1, range); \
    } while (0)
    if (full && !exact)
        NORMOPS_ROW_EXPS(0, e0, e1);
    for (ptrdiff_t i = 0; i < full; i += 16) {
        __m256 f0 = e0, f1 = e1;
        if (exact)  /* not pipelined: no faster (its careful path's branch) */
            NORMOPS_ROW_EXPS(i, e0, e1);
        else if (i + 16 < full)
            NORMOPS_ROW_EXPS(i + 16, f0, f1);
        if (prev) {  /* the previous row's last pass (1c), beside this arithmetic */
            __m256 a = _mm256_loadu_ps(prev + i), b = _mm256_loadu_ps(prev + i + 8);
            if (prev_op == NORMOPS_LAST_DIVIDE) {
                a = _mm256_div_ps(a, by);
                b = _mm256_div_ps(b, by);
            } else if (prev_op == NORMOPS_LAST_MULTIPLY) {
                a = _mm256_mul_ps(a, by);
                b = _mm256_mul_ps(b, by);
            } else {
                a = _mm256_sub_ps(a, by);
                b = _mm256_sub_ps(b, by);
            }
            _mm256_storeu_ps(prev + i, a);
            _mm256_storeu_ps(prev + i + 8, b);
        }
        if (next) {  /* max and min return their second operand when either is NaN */
            __m256 w0 = _mm256_loadu_ps(next + i), w1 = _mm256_loadu_ps(next + i + 8);
            *mx = _mm256_max_ps(w1, _mm256_max_ps(w0, *mx));
            *mn = _mm256_min_ps(w1, _mm256_min_ps(w0, *mn));
        }
        if (keep) {
            _mm256_storeu_ps(e + i, e0);
            _mm256_storeu_ps(e + i + 8, e1);
        }
        p->part[0] = p->part[0] + (normops_f32_vec)e0;
        p->part[1] = p->part[1] + (normops_f32_vec)e1;
        if (!exact) {
            e0 = f0;
            e1 = f1;
        }
    }
#undef NORMOPS_ROW_EXPS
    if (full < n) {  /* through a copy: exp(d - 0) is exp(d), d - 0 being d for every float */
        float t[16], w[16];
        ptrdiff_t len = n - full;
        for (ptrdiff_t j = full; prev && j < n; j++)  /* the same operation, one element at a time */
            prev[j] = prev_op == NORMOPS_LAST_DIVIDE ? prev[j] / prev_by
                : prev_op == NORMOPS_LAST_MULTIPLY ? prev[j] * prev_by : prev[j] - prev_by;
        for (ptrdiff_t j = 0; j < 16; j++) {
            t[j] = j < len ? x[full + j] - shift : 0.0f;
            w[j] = next && j < len ? next[full + j] : __builtin_nanf("");  /* NaN: ignored */
        }
        if (d)
            memcpy(d + full, t, (size_t)len * sizeof(float));
        if (exact)
            normops_exp32_below_max_array(t, 0.0f, t, len);
        else
            normops_exp32_fast_shifted_array(t, 0.0f, t, len);
        if (keep)
            memcpy(e + full, t, (size_t)len * sizeof(float));
        normops_f32_add_tail(p, t, len, 0.0f, NORMOPS_TERM_VALUE);
        if (next) {
            __m256 w0 = _mm256_loadu_ps(w), w1 = _mm256_loadu_ps(w + 8);
            *mx = _mm256_max_ps(w1, _mm256_max_ps(w0, *mx));
            *mn = _mm256_min_ps(w1, _mm256_min_ps(w0, *mn));
        }
    }
}

/* the largest and smallest lane of v (no NaN in it) */
NORMOPS_ALWAYS_INLINE float normops_hmax8(__m256 v) {
    __m128 a = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    a = _mm_max_ps(a, _mm_movehl_ps(a, a));
    return _mm_cvtss_f32(_mm_max_ss(a, _mm_shuffle_ps(a, a, 1)));
}
NORMOPS_ALWAYS_INLINE float normops_hmin8(__m256 v) {
    __m128 a = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    a = _mm_min_ps(a, _mm_movehl_ps(a, a));
    return _mm_cvtss_f32(_mm_min_ss(a, _mm_shuffle_ps(a, a, 1)));
}

/* A row: the Sum16 of its terms, and the next row's maximum and minimum
 * when next (next_min may be NULL). */
NORMOPS_ALWAYS_INLINE float normops_exp_sum_row_avx2(const float* x, float shift, float* e, float* d, ptrdiff_t n,
                                                    int keep, int exact, int range, const float* next,
                                                    float* next_max, float* next_min, float* prev, float prev_by,
                                                    int prev_op) {
    normops_f32_partials p = {{{0}}};
    __m256 mx = _mm256_set1_ps(-__builtin_inff()), mn = _mm256_set1_ps(__builtin_inff());
    normops_exp_sum_terms_avx2(x, shift, e, d, n, keep, exact, range, &p, next, &mx, &mn, prev, prev_by, prev_op);
    if (next) {
        *next_max = normops_hmax8(mx);
        if (next_min)
            *next_min = normops_hmin8(mn);
    }
    return normops_f32_fold(&p);
}

/* CALL(EXACT, RANGE) with the range a row's pass takes, each a constant so
 * that one loop is compiled for each. Every difference x - shift is at
 * least RN(row_min - shift) (rounding is monotonic; row_min NaN: unknown),
 * so a row within 87.3 of its maximum makes none of exp32's range masks
 * (NORMOPS_EXP_NORMAL), and one within 86 lets the fast exponential skip
 * its clamps and range test. */
#define NORMOPS_AVX2_ROW_RANGE(EXACT, row_min, shift, CALL)                                             \
    ((EXACT) ? ((row_min) - (shift) >= NORMOPS_EXPF32_TINY ? CALL(1, NORMOPS_EXP_NORMAL)               \
                                                           : CALL(1, NORMOPS_EXP_BELOW_89))            \
             : ((row_min) - (shift) > NORMOPS_EXPF_FAST_NORMAL_LO ? CALL(0, NORMOPS_EXP_NORMAL)        \
                                                                  : CALL(0, NORMOPS_EXP_BELOW_89)))
/* the row pass alone (no previous row to finish) */
#define NORMOPS_AVX2_ROW_PASS(EXACT, RANGE) \
    normops_exp_sum_row_avx2(x, shift, e, d, n, keep, EXACT, RANGE, next, next_max, next_min, NULL, 0.0f, 0)

static inline float normops_exp32_fast_shifted_sum16(const float* x, float shift, float* e, float* d,
                                                     ptrdiff_t n, int keep, const float* next,
                                                     float* next_max, float row_min, float* next_min) {
    return NORMOPS_AVX2_ROW_RANGE(0, row_min, shift, NORMOPS_AVX2_ROW_PASS);
}
#else
static inline float normops_exp32_fast_shifted_sum16(const float* x, float shift, float* e, float* d,
                                                     ptrdiff_t n, int keep, const float* next,
                                                     float* next_max, float row_min, float* next_min) {
    float total;
    (void)keep;
    (void)next;
    (void)next_max;
    (void)row_min;
    (void)next_min;
    if (d) {  /* exp(d - 0) is exp(d): d - 0 is d for every float, -0 included */
        for (ptrdiff_t i = 0; i < n; i++)
            d[i] = x[i] - shift;
        x = d;
        shift = 0.0f;
    }
    normops_exp32_fast_shifted_array(x, shift, e, n);
    normops_sum16_float(e, 0, 1, n, NULL, NORMOPS_TERM_VALUE, &total, NULL);
    return total;
}
#endif

/* y[i] = e[i] / s for finite e[i] and a finite s >= 2^-126; y may be e.
 * The divider is slow but runs beside the other units, so each 32 (AVX2:
 * 16) quotients are split: half by the division itself, half through
 * float64 as above; both give RN32(e[i] / s), so the split changes no bit
 * (about twice the speed of either alone, bench: docs/performance-analysis.md).
 * An element below s 2^-125 (a quotient that may be below 2^-126, whose
 * boundaries have fewer bits) takes the division on the float64 side too;
 * for s below 2^-100 (never in Softmax, whose s >= 1) every element does. */
static inline void normops_divide_float_array(const float* e, float s, float* y, ptrdiff_t n) {
    double inv_s = 1.0 / (double)s;
    float small = s >= 0x1p-100f ? s * 0x1p-125f : __builtin_inff();
    ptrdiff_t i = 0;
#if defined(__AVX512F__)
    const __m512d vinv = _mm512_set1_pd(inv_s);
    const __m512 vs = _mm512_set1_ps(s), vsmall = _mm512_set1_ps(small);
    for (; i + 32 <= n; i += 32) {
        __m512 v = _mm512_loadu_ps(e + i), w = _mm512_loadu_ps(e + i + 16);
        __m512 qv = _mm512_div_ps(v, vs);
        __m256 lo = _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(w)), vinv));
        __m256 hi = _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_cvtps_pd(_mm512_extractf32x8_ps(w, 1)), vinv));
        __m512 qw = _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
        __mmask16 hard = _mm512_cmp_ps_mask(w, vsmall, _CMP_LT_OQ);
        if (hard)
            qw = _mm512_mask_div_ps(qw, hard, w, vs);
        _mm512_storeu_ps(y + i, qv);
        _mm512_storeu_ps(y + i + 16, qw);
    }
    for (; i < n; i += 16) {  /* the last 31 or fewer: divisions (zeros past the end) */
        __mmask16 m = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, m, _mm512_div_ps(_mm512_maskz_loadu_ps(m, e + i), vs));
    }
#else
#if defined(__AVX2__)
    const __m256d vinv = _mm256_set1_pd(inv_s);
    const __m256 vs = _mm256_set1_ps(s), vsmall = _mm256_set1_ps(small);
    for (; i + 16 <= n; i += 16) {
        __m256 v = _mm256_loadu_ps(e + i), w = _mm256_loadu_ps(e + i + 8);
        __m256 qv = _mm256_div_ps(v, vs);
        __m128 lo = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(w)), vinv));
        __m128 hi = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(w, 1)), vinv));
        __m256 qw = _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
        __m256 hard = _mm256_cmp_ps(w, vsmall, _CMP_LT_OQ);
        if (_mm256_movemask_ps(hard))
            qw = _mm256_blendv_ps(qw, _mm256_div_ps(w, vs), hard);
        _mm256_storeu_ps(y + i, qv);
        _mm256_storeu_ps(y + i + 8, qw);
    }
    for (; i < n; i++) {
        float f = (float)((double)e[i] * inv_s);
        y[i] = e[i] < small ? e[i] / s : f;
    }
#else
    /* baseline: SSE2's division alone is faster than the scalar float64
     * loop (no packed conversions to pair it with) */
    (void)inv_s;
    (void)small;
    for (; i < n; i++)
        y[i] = e[i] / s;
#endif
#endif
}

/* 1b. The exact flavour's exponentials and their Sum16 in one pass over
 * the row; arguments as normops_exp32_fast_shifted_sum16's, with shift the
 * row maximum (every difference at most 0 or NaN), and next's maximum
 * taken at every level. row_min and next_min as in
 * normops_exp_shifted_sum16_avx512 (at the baseline row_min is not needed
 * and *next_min is NaN: unknown). At AVX-512 and AVX2, the fast flavour's
 * loop with exp32's quick path, each vector's hard lanes recomputed before
 * it joins the sum. At the baseline a piece at a time: exp32 of a piece (transcendental.h's array
 * entry point), then the piece's terms added into the sixteen partials
 * while it is still in the L1 cache, where a second pass would read the
 * row again. Pieces are whole multiples of 16 elements, so term j still
 * goes to partial j % 16 in increasing j: the bits of sum16. */
#if defined(__AVX512F__)
static inline float normops_exp32_shifted_sum16(const float* x, float shift, float* e, float* d, ptrdiff_t n,
                                                int keep, const float* next, float* next_max, float row_min,
                                                float* next_min) {
    return normops_exp_shifted_sum16_avx512(x, shift, e, d, n, keep, next, next_max, 1, NULL, 0.0f, row_min,
                                            next_min);
}
#elif defined(__AVX2__) && defined(__FMA__)
static inline float normops_exp32_shifted_sum16(const float* x, float shift, float* e, float* d, ptrdiff_t n,
                                                int keep, const float* next, float* next_max, float row_min,
                                                float* next_min) {
    return NORMOPS_AVX2_ROW_RANGE(1, row_min, shift, NORMOPS_AVX2_ROW_PASS);  /* as at AVX-512 */
}
#else
#define NORMOPS_EXACT_PIECE 512
static inline float normops_exp32_shifted_sum16(const float* x, float shift, float* e, float* d, ptrdiff_t n,
                                                int keep, const float* next, float* next_max, float row_min,
                                                float* next_min) {
    normops_f32_partials p = {{{0}}};
    float buf[NORMOPS_EXACT_PIECE];
    float nm = -__builtin_inff();
    for (ptrdiff_t b = 0; b < n; b += NORMOPS_EXACT_PIECE) {
        ptrdiff_t len = n - b < NORMOPS_EXACT_PIECE ? n - b : NORMOPS_EXACT_PIECE;
        ptrdiff_t full = len - len % 16;
        float* out = keep ? e + b : buf;
        if (d) {  /* exp32(d - 0) is exp32(d): d - 0 is d, -0 included */
            for (ptrdiff_t i = 0; i < len; i++)
                d[b + i] = x[b + i] - shift;
            normops_exp32_below_max_array(d + b, 0.0f, out, len);
        } else {
            normops_exp32_below_max_array(x + b, shift, out, len);
        }
        for (ptrdiff_t k = 0; k < full; k += 16)
            normops_f32_add16(&p, out + k, 0.0f, NORMOPS_TERM_VALUE);
        if (full < len)
            normops_f32_add_tail(&p, out + full, len - full, 0.0f, NORMOPS_TERM_VALUE);
        if (next) {
            float pm = normops_row_max_plain_float(next + b, len);
            nm = pm > nm ? pm : nm;
        }
    }
    (void)row_min;
    if (next) {
        *next_max = nm;
        if (next_min)
            *next_min = __builtin_nanf("");
    }
    return normops_f32_fold(&p);
}
#endif

/* 3. Streaming stores for the last pass of a large output.
 *
 * An output much larger than the caches goes to memory anyway; a plain
 * store first reads the line it writes (read for ownership), so each
 * element costs three memory transfers (read x, read y, write y) where two
 * are needed. A non-temporal store writes whole lines without reading
 * them. With stream set (and a level that has them: AVX2, AVX-512), y is
 * peeled to a 64-byte boundary with plain stores and whole vectors then
 * stream; the values stored are the same either way, only their way to
 * memory differs. A thread that streamed calls normops_stream_fence()
 * before its results are read (the end of its chunk). */
#if defined(__AVX512F__)
#define NORMOPS_STREAM_LANES 16
typedef __m512 normops_stream_vec;
#define NORMOPS_STREAM_LOAD(p) _mm512_loadu_ps(p)
#define NORMOPS_STREAM_SET1(v) _mm512_set1_ps(v)
#define NORMOPS_STREAM_STORE(p, v) _mm512_stream_ps((p), (v))
#elif defined(__AVX__)
#include <immintrin.h>
#define NORMOPS_STREAM_LANES 8
typedef __m256 normops_stream_vec;
#define NORMOPS_STREAM_LOAD(p) _mm256_loadu_ps(p)
#define NORMOPS_STREAM_SET1(v) _mm256_set1_ps(v)
#define NORMOPS_STREAM_STORE(p, v) _mm256_stream_ps((p), (v))
#endif

static inline void normops_stream_fence(void) {
#if defined(NORMOPS_STREAM_LANES)
    _mm_sfence();
#endif
}

/* elements of y before its first 64-byte boundary (at most n) */
static inline ptrdiff_t normops_stream_head(const float* y, ptrdiff_t n) {
    ptrdiff_t head = (ptrdiff_t)((0u - (uintptr_t)y) & 63u) / (ptrdiff_t)sizeof(float);
    return head < n ? head : n;
}

/* The streamed part of "y[i] = expression for i in [0, n)": when streaming,
 * the scalar form SEXPR up to the boundary, then the vector form VEXPR
 * (the same rounded operations) on whole vectors; i is left at the first
 * element not yet written, for the caller's plain loop. */
#if defined(NORMOPS_STREAM_LANES)
#define NORMOPS_STREAMED(y, n, stream, i, VEXPR, SEXPR)                                  \
    if ((stream) && ((uintptr_t)(y) & 3u) == 0) {                                        \
        ptrdiff_t head_ = normops_stream_head((y), (n));                                 \
        for (; i < head_; i++) (y)[i] = (SEXPR);                                         \
        for (; i + NORMOPS_STREAM_LANES <= (n); i += NORMOPS_STREAM_LANES)               \
            NORMOPS_STREAM_STORE((y) + i, (VEXPR));                                      \
    }
#else
#define NORMOPS_STREAMED(y, n, stream, i, VEXPR, SEXPR) (void)(stream);
#endif

/* Softmax, fast flavour: y[i] = e[i] * r; e may be y when not streaming */
static inline void normops_scale_float(const float* e, float r, float* y, ptrdiff_t n, int stream) {
    ptrdiff_t i = 0;
#if defined(NORMOPS_STREAM_LANES)
    normops_stream_vec vr = NORMOPS_STREAM_SET1(r);
#endif
    NORMOPS_STREAMED(y, n, stream, i, NORMOPS_STREAM_LOAD(e + i) * vr, e[i] * r)
    for (; i < n; i++)
        y[i] = e[i] * r;
}

/* LogSoftmax's last pass: y[i] = d[i] - log_s, with d[i] = x[i] - m
 * already in y (in place, so never streamed) */
static inline void normops_subtract_float(float* y, float log_s, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; i++)
        y[i] = y[i] - log_s;
}

/* 1c. Softmax and LogSoftmax rows of one length in turn: the row pass of
 * 1b with the previous row's last pass in the same loop. prev (or NULL)
 * holds that row's exponentials (Softmax) or differences (LogSoftmax), n
 * of them, and becomes its results by prev_op with prev_by:
 *   NORMOPS_LAST_DIVIDE    e[i] / s         (exact Softmax: prev_by = s)
 *   NORMOPS_LAST_MULTIPLY  e[i] * RN(1 / s) (fast Softmax)
 *   NORMOPS_LAST_SUBTRACT  d[i] - log32(s)  (LogSoftmax, both flavours)
 * the bits of normops_divide_float_array, normops_scale_float and
 * normops_subtract_float. Where normops_finishes_in_pass says so (AVX2:
 * every case; AVX-512: the exact Softmax) that last pass runs beside the
 * exponential's arithmetic, on a row still in the L1 cache, instead of in a
 * pass of its own; elsewhere the previous row is finished first, then this
 * row's pass, and the caller keeps its grouped rows instead. row: where
 * this row's pass keeps what its last pass needs (Softmax the
 * exponentials, LogSoftmax the differences; prev_op says which). Other
 * arguments as normops_exp32_shifted_sum16's (exact) or
 * normops_exp32_fast_shifted_sum16's. */
static inline void normops_finish_row(float* y, float by, ptrdiff_t n, int op) {
    if (op == NORMOPS_LAST_DIVIDE)
        normops_divide_float_array(y, by, y, n);
    else if (op == NORMOPS_LAST_MULTIPLY)
        normops_scale_float(y, by, y, n, 0);
    else
        normops_subtract_float(y, by, n);
}

#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
static inline int normops_finishes_in_pass(int exact, int op) {
    (void)exact;
    (void)op;
    return 1;
}

/* one loop compiled for each flavour, range and operation; what the row
 * keeps follows from the operation, so it is a constant too (as run-time
 * values, keep and d cost 8% on Zen 2) */
#define NORMOPS_ROW_FINISHING(EXACT, RANGE, OP)                                                      \
    normops_exp_sum_row_avx2(x, shift, row, (OP) == NORMOPS_LAST_SUBTRACT ? row : NULL, n,          \
                             (OP) != NORMOPS_LAST_SUBTRACT, EXACT, RANGE, next, next_max, next_min, prev, \
                             prev_by, OP)
#define NORMOPS_ROW_FINISHING_OPS(EXACT, RANGE)                                  \
    (prev_op == NORMOPS_LAST_DIVIDE ? NORMOPS_ROW_FINISHING(EXACT, RANGE, NORMOPS_LAST_DIVIDE)       \
     : prev_op == NORMOPS_LAST_MULTIPLY ? NORMOPS_ROW_FINISHING(EXACT, RANGE, NORMOPS_LAST_MULTIPLY) \
     : NORMOPS_ROW_FINISHING(EXACT, RANGE, NORMOPS_LAST_SUBTRACT))

static inline float normops_row_pass_finishing(const float* x, float shift, float* row, ptrdiff_t n, int exact,
                                               const float* next, float* next_max, float* prev, float prev_by,
                                               int prev_op, float row_min, float* next_min) {
    return exact ? NORMOPS_AVX2_ROW_RANGE(1, row_min, shift, NORMOPS_ROW_FINISHING_OPS)
                 : NORMOPS_AVX2_ROW_RANGE(0, row_min, shift, NORMOPS_ROW_FINISHING_OPS);
}
#else
static inline int normops_finishes_in_pass(int exact, int op) {
#if defined(__AVX512F__)
    return exact && op == NORMOPS_LAST_DIVIDE;
#else
    (void)exact;
    (void)op;
    return 0;
#endif
}

static inline float normops_row_pass_finishing(const float* x, float shift, float* row, ptrdiff_t n, int exact,
                                               const float* next, float* next_max, float* prev, float prev_by,
                                               int prev_op, float row_min, float* next_min) {
    int keep = prev_op != NORMOPS_LAST_SUBTRACT;  /* Softmax keeps its exponentials in row */
    float *e = row, *d = keep ? NULL : row;       /* LogSoftmax its differences */
#if defined(__AVX512F__)
    if (exact && prev_op == NORMOPS_LAST_DIVIDE)
        return normops_exp_shifted_sum16_avx512(x, shift, e, d, n, keep, next, next_max, 1, prev, prev_by, row_min,
                                                next_min);
#endif
    if (prev)
        normops_finish_row(prev, prev_by, n, prev_op);
    if (exact)
        return normops_exp32_shifted_sum16(x, shift, e, d, n, keep, next, next_max, row_min, next_min);
    return normops_exp32_fast_shifted_sum16(x, shift, e, d, n, keep, next, next_max, row_min, next_min);
}
#endif

/* 3b. Short rows of Softmax and LogSoftmax, both flavours, sixteen at a
 * time (cols <= NORMOPS_SHORT_ROW_COLS). One row at a time, each row pays
 * the latency of two horizontal folds (its maximum, its sum) and a few
 * calls, about 40 cycles: more than its arithmetic when it is short. Here
 * the sixteen rows' maxima come out of one transposed fold, then their
 * exponentials and partial sums (fast: row by row, the operations of
 * normops_exp32_fast_shifted_sum16; exact: one exp32 call for the group),
 * then their sums out of one transposed
 * fold that performs Sum16's additions (lane t + lane t + 8, then t + 4,
 * then (0 + 2) + (1 + 3)) for every row at once, then the last passes.
 * Every row gets the bits the row-at-a-time code gives it: the maximum is
 * exact in any order, and each sum is the same additions.
 * Returns 0 where the level has no such code (the caller goes row by row). */
#define NORMOPS_SHORT_ROW_COLS 128
#if defined(__AVX512F__)
/* v[r] (r < 16) folded lane-wise by OP into lane r of the result (the four
 * levels of Sum16's fold, each level for all rows at once) */
#define NORMOPS_DEFINE_FOLD16(name, OP)                                            \
    static inline __m512 normops_fold16_##name(const __m512* v) {                  \
        __m512 w[8], z[4], y[2];                                                   \
        for (int j = 0; j < 8; j++)  /* lane t + lane t + 8: rows 2j, 2j + 1 */    \
            w[j] = OP(_mm512_shuffle_f32x4(v[2 * j], v[2 * j + 1], 0x44),          \
                      _mm512_shuffle_f32x4(v[2 * j], v[2 * j + 1], 0xEE));         \
        for (int j = 0; j < 4; j++)  /* t + (t + 4): row 4j + q in quarter q */    \
            z[j] = OP(_mm512_shuffle_f32x4(w[2 * j], w[2 * j + 1], 0x88),          \
                      _mm512_shuffle_f32x4(w[2 * j], w[2 * j + 1], 0xDD));         \
        for (int j = 0; j < 2; j++)  /* t + (t + 2) */                             \
            y[j] = OP(_mm512_shuffle_ps(z[2 * j], z[2 * j + 1], 0x44),             \
                      _mm512_shuffle_ps(z[2 * j], z[2 * j + 1], 0xEE));            \
        /* 0 + 1: lane 4q + k holds row q + 4k; back to row order */              \
        __m512 f = OP(_mm512_shuffle_ps(y[0], y[1], 0x88), _mm512_shuffle_ps(y[0], y[1], 0xDD)); \
        return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), f); \
    }
NORMOPS_DEFINE_FOLD16(add, _mm512_add_ps)
NORMOPS_DEFINE_FOLD16(max, _mm512_max_ps)

/* m[r] = the maximum of row r < k (k <= 16) of the cols-wide rows at x,
 * ignoring NaN (max returns its second operand when either is NaN), out of
 * one transposed fold; part: the caller's sixteen registers */
static inline void normops_short_row_maxima(const float* x, ptrdiff_t cols, int k, __m512* part, float* m) {
    const __m512 none = _mm512_set1_ps(-__builtin_inff());
    const ptrdiff_t full = cols & ~(ptrdiff_t)15;
    const __mmask16 tail = (__mmask16)((1u << (cols - full)) - 1);
    for (int r = 0; r < 16; r++) {  /* rows past the group's end stay -inf */
        __m512 mx = none;
        if (r < k) {
            const float* row = x + r * cols;
            for (ptrdiff_t j = 0; j < full; j += 16)
                mx = _mm512_max_ps(_mm512_loadu_ps(row + j), mx);
            if (tail)
                mx = _mm512_max_ps(_mm512_mask_loadu_ps(none, tail, row + full), mx);
        }
        part[r] = mx;
    }
    _mm512_storeu_ps(m, normops_fold16_max(part));
}

/* The last passes of k short rows at y, in place: NaN throughout where
 * s[r] is NaN, else y - t[r] (LogSoftmax: y holds x - m, t = log32(s)),
 * y * t[r] (fast Softmax: t = 1 / s) or y / s[r] (exact Softmax) */
static inline void normops_short_rows_last(float* y, ptrdiff_t cols, int k, const float* s, const float* t,
                                           int log_softmax, int fast) {
    for (int r = 0; r < k; r++) {
        float* out = y + r * cols;
        if (s[r] != s[r]) {
            for (ptrdiff_t j = 0; j < cols; j++)
                out[j] = __builtin_nanf("");
        } else if (log_softmax) {
            normops_subtract_float(out, t[r], cols);
        } else if (fast) {
            normops_scale_float(out, t[r], out, cols, 0);
        } else {
            normops_divide_float_array(out, s[r], out, cols);
        }
    }
}

/* The fast flavour's exponentials of k short rows, row by row (the
 * operations of normops_exp32_fast_shifted_sum16), into y: the
 * exponentials (Softmax) or the differences (LogSoftmax), for the last
 * pass to finish in place; part[r]: row r's sixteen partial sums (NaN for
 * a row whose maximum is +-inf: +inf in it, or only -inf and NaN). */
static inline void normops_short_rows_fast_exp(const float* x, float* y, ptrdiff_t cols, int k, const float* m,
                                               int log_softmax, __m512* part) {
    const ptrdiff_t full = cols & ~(ptrdiff_t)15;
    const __mmask16 tail = (__mmask16)((1u << (cols - full)) - 1);
    for (int r = 0; r < 16; r++) {
        __m512 acc = _mm512_setzero_ps();
        if (r < k && m[r] - m[r] == 0.0f) {
            const float* row = x + r * cols;
            float* out = y + r * cols;
            __m512 sh = _mm512_set1_ps(m[r]);
            for (ptrdiff_t j = 0; j < full; j += 16) {
                __m512 diff = _mm512_sub_ps(_mm512_loadu_ps(row + j), sh);
                __m512 e = normops_exp32_fast16_core(diff);
                _mm512_storeu_ps(out + j, log_softmax ? diff : e);
                acc = _mm512_add_ps(acc, e);
            }
            if (tail) {
                __m512 diff = _mm512_sub_ps(_mm512_maskz_loadu_ps(tail, row + full), sh);
                __m512 e = normops_exp32_fast16_core(diff);
                _mm512_mask_storeu_ps(out + full, tail, log_softmax ? diff : e);
                acc = _mm512_mask_add_ps(acc, tail, acc, e);
            }
        } else if (r < k) {
            acc = _mm512_set1_ps(__builtin_nanf(""));
        }
        part[r] = acc;
    }
}

/* The exact flavour's: the group's differences x - m into y (rows are
 * contiguous, so a group is one run of k * cols elements), one exp32 call
 * over all of them (exp32 is element-wise: where its blocks start changes
 * no bit) into e (y itself for Softmax), then each row's sixteen partials.
 * Every difference is at most 0 or NaN whatever m; a row whose maximum is
 * +-inf gets a NaN sum. */
static inline void normops_short_rows_exact_exp(const float* x, float* y, float* e, ptrdiff_t cols, int k,
                                                const float* m, __m512* part) {
    const ptrdiff_t full = cols & ~(ptrdiff_t)15;
    const __mmask16 tail = (__mmask16)((1u << (cols - full)) - 1);
    for (int r = 0; r < k; r++) {
        const float* row = x + r * cols;
        float* out = y + r * cols;
        __m512 sh = _mm512_set1_ps(m[r]);
        for (ptrdiff_t j = 0; j < full; j += 16)
            _mm512_storeu_ps(out + j, _mm512_sub_ps(_mm512_loadu_ps(row + j), sh));
        if (tail)
            _mm512_mask_storeu_ps(out + full, tail, _mm512_sub_ps(_mm512_maskz_loadu_ps(tail, row + full), sh));
    }
    normops_exp32_below_max_array(y, 0.0f, e, k * cols);
    for (int r = 0; r < 16; r++) {
        __m512 acc = _mm512_setzero_ps();
        if (r < k && m[r] - m[r] == 0.0f) {
            const float* row = e + r * cols;
            for (ptrdiff_t j = 0; j < full; j += 16)
                acc = _mm512_add_ps(acc, _mm512_loadu_ps(row + j));
            if (tail)
                acc = _mm512_mask_add_ps(acc, tail, acc, _mm512_maskz_loadu_ps(tail, row + full));
        } else if (r < k) {
            acc = _mm512_set1_ps(__builtin_nanf(""));
        }
        part[r] = acc;
    }
}

/* rows [first, last) of the rows x cols matrix x into y (y may be x);
 * log_softmax picks LogSoftmax (y = (x - m) - log32(s)) over Softmax (fast:
 * y = e * (1 / s); exact: y = e / s) */
static inline int normops_softmax_short_rows(const float* x, float* y, ptrdiff_t first, ptrdiff_t last,
                                             ptrdiff_t cols, int log_softmax, int fast) {
    if (cols > NORMOPS_SHORT_ROW_COLS)
        return 0;
    __m512 part[16];
    float m[16], s[16], t[16];
    float scratch[16 * NORMOPS_SHORT_ROW_COLS];  /* exact LogSoftmax's exponentials */
    for (ptrdiff_t r0 = first; r0 < last; r0 += 16) {
        int k = last - r0 < 16 ? (int)(last - r0) : 16;
        const float* xg = x + r0 * cols;
        float* yg = y + r0 * cols;
        normops_short_row_maxima(xg, cols, k, part, m);
        if (fast)
            normops_short_rows_fast_exp(xg, yg, cols, k, m, log_softmax, part);
        else
            normops_short_rows_exact_exp(xg, yg, log_softmax ? scratch : yg, cols, k, m, part);
        __m512 sums = normops_fold16_add(part);
        _mm512_storeu_ps(s, sums);
        if (log_softmax)
            normops_log32_array(s, t, k);
        else if (fast)
            _mm512_storeu_ps(t, _mm512_div_ps(_mm512_set1_ps(1.0f), sums));
        normops_short_rows_last(yg, cols, k, s, t, log_softmax, fast);
    }
    return 1;
}
#else
static inline int normops_softmax_short_rows(const float* x, float* y, ptrdiff_t first, ptrdiff_t last,
                                             ptrdiff_t cols, int log_softmax, int fast) {
    (void)x; (void)y; (void)first; (void)last; (void)cols; (void)log_softmax; (void)fast;
    return 0;
}
#endif

/* 4. Sigmoid: y = 1 / (1 + exp(-x)), each operation rounded
 * (docs/specification.md §10.1), over blocks that stay in the L1 cache;
 * at AVX-512 both flavours are one pass of vectors. exp(-x) underflows to 0 for large x (y = 1
 * exactly) and overflows to +inf for very negative x (y = +0); a NaN stays
 * the canonical NaN through both operations. y may be x. stream: streaming
 * stores for y (section 3; the caller fences). */
#define NORMOPS_SIGMOID_BLOCK 128
/* elements ahead to prefetch: the loops are compute-bound, so the memory
 * reads can hide behind them (the hardware prefetcher alone lags) */
#define NORMOPS_SIGMOID_AHEAD 1024
#if defined(__AVX512F__)
/* 1 / (1 + exp(-x)) on 16 lanes, exact (exp32's quick path, the hard lanes
 * recomputed) or fast; the lanes past a tail are loaded as 0 (never hard) */
NORMOPS_ALWAYS_INLINE __m512 normops_sigmoid16(__m512 x, int fast) {
    const __m512 one = _mm512_set1_ps(1.0f);
    /* exact: exp32(-x) without forming -x (one operation fewer) */
    __m512 e = fast ? normops_exp32_fast16(_mm512_sub_ps(_mm512_setzero_ps(), x))
        : normops_exp32_exact16_of(x, NORMOPS_EXP_ANY, 1);
    return _mm512_div_ps(one, _mm512_add_ps(one, e));
}
#elif defined(__AVX2__) && defined(__FMA__)
/* the same on 8 lanes: -x is 0 - x (+0 for x = +0: e^0 is 1 either way);
 * normops_sigmoid_exp8 the exponential, normops_sigmoid8 the whole */
NORMOPS_ALWAYS_INLINE __m256 normops_sigmoid_exp8(__m256 x, int fast) {
    __m256 m = _mm256_sub_ps(_mm256_setzero_ps(), x);
    if (!fast && normops_exp32_normal_lanes8(m))  /* no range masks: the same bits */
        return normops_exp32_exact8(m, NORMOPS_EXP_NORMAL);
    if (!fast)
        return normops_exp32_exact8(m, NORMOPS_EXP_ANY);
    if (normops_fast8_normal_lanes(m))  /* no clamp, no NaN: the same bits */
        return normops_exp32_fast8_normal(m);
    return normops_exp32_fast8(m);
}

NORMOPS_ALWAYS_INLINE __m256 normops_sigmoid8(__m256 x, int fast) {
    const __m256 one = _mm256_set1_ps(1.0f);
    return _mm256_div_ps(one, _mm256_add_ps(one, normops_sigmoid_exp8(x, fast)));
}
#endif

#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
/* The loop, instantiated per flavour and store kind below: with fast and
 * stream as run-time values gcc kept both flavours' range tests in the
 * loop (fast Sigmoid 17% slower, exact 4%, on Zen 2).
 *
 * Software-pipelined: each step divides for the vector whose exponential
 * the step before computed while it computes the next one's. Zen 2 holds
 * few operations in flight, and the division and store, waiting on the
 * exponential's long chain, held places the next exponential could use
 * (C driver, 65536 elements: fast 0.478 -> 0.455 ns per element, exact
 * 1.046 -> 0.978). Each lane's arithmetic is unchanged: the same bits. */
NORMOPS_ALWAYS_INLINE void normops_sigmoid_loop8(const float* x, float* y, ptrdiff_t n, int fast, int stream) {
    const __m256 one = _mm256_set1_ps(1.0f);
    ptrdiff_t i = 0;
    if (stream)  /* up to y's 64-byte boundary, as the tail below */
        i = normops_stream_head(y, n);
    for (ptrdiff_t k = 0; k < i; k++)
        y[k] = _mm256_cvtss_f32(normops_sigmoid8(_mm256_set1_ps(x[k]), fast));
#define NORMOPS_SIGMOID_STORE8(at, e)                                         \
    do {                                                                      \
        __m256 v_ = _mm256_div_ps(one, _mm256_add_ps(one, e));                \
        if (stream)                                                           \
            _mm256_stream_ps(y + (at), v_);                                   \
        else                                                                  \
            _mm256_storeu_ps(y + (at), v_);                                   \
    } while (0)
    if (i + 8 <= n) {
        __m256 e = normops_sigmoid_exp8(_mm256_loadu_ps(x + i), fast);
        for (; i + 16 <= n; i += 8) {
            __builtin_prefetch(x + i + NORMOPS_SIGMOID_AHEAD, 0, 3);
            __m256 following = normops_sigmoid_exp8(_mm256_loadu_ps(x + i + 8), fast);
            NORMOPS_SIGMOID_STORE8(i, e);
            e = following;
        }
        NORMOPS_SIGMOID_STORE8(i, e);
        i += 8;
    }
#undef NORMOPS_SIGMOID_STORE8
    if (i < n) {  /* the tail through a copy (zeros after it) */
        float tail[8] = {0, 0, 0, 0, 0, 0, 0, 0}, out[8];
        for (ptrdiff_t k = 0; k < n - i; k++)
            tail[k] = x[i + k];
        _mm256_storeu_ps(out, normops_sigmoid8(_mm256_loadu_ps(tail), fast));
        for (ptrdiff_t k = 0; k < n - i; k++)
            y[i + k] = out[k];
    }
}
#endif

#if defined(__AVX512F__)
/* the loop per flavour and store kind, as at AVX2 */
NORMOPS_ALWAYS_INLINE void normops_sigmoid_loop16(const float* x, float* y, ptrdiff_t n, int fast, int stream) {
    ptrdiff_t i = 0;
    if (stream && n >= 16) {  /* up to y's 64-byte boundary */
        ptrdiff_t head = normops_stream_head(y, n);
        __mmask16 m = (__mmask16)((1u << head) - 1);
        _mm512_mask_storeu_ps(y, m, normops_sigmoid16(_mm512_maskz_loadu_ps(m, x), fast));
        i = head;
    }
    for (; i + 16 <= n; i += 16) {
        __builtin_prefetch(x + i + NORMOPS_SIGMOID_AHEAD, 0, 3);
        __m512 v = normops_sigmoid16(_mm512_loadu_ps(x + i), fast);
        if (stream)
            _mm512_stream_ps(y + i, v);
        else
            _mm512_storeu_ps(y + i, v);
    }
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, m, normops_sigmoid16(_mm512_maskz_loadu_ps(m, x + i), fast));
    }
}
#endif

#if defined(__AVX512F__)
#define NORMOPS_SIGMOID_LOOP normops_sigmoid_loop16
#elif defined(__AVX2__) && defined(__FMA__)
#define NORMOPS_SIGMOID_LOOP normops_sigmoid_loop8
#endif

static inline void normops_sigmoid_float(const float* x, float* y, ptrdiff_t n, int fast, int stream) {
#if defined(NORMOPS_SIGMOID_LOOP)
    stream = stream && ((uintptr_t)y & 3u) == 0;
    if (fast && stream)
        NORMOPS_SIGMOID_LOOP(x, y, n, 1, 1);
    else if (fast)
        NORMOPS_SIGMOID_LOOP(x, y, n, 1, 0);
    else if (stream)
        NORMOPS_SIGMOID_LOOP(x, y, n, 0, 1);
    else
        NORMOPS_SIGMOID_LOOP(x, y, n, 0, 0);
#else
    float e[NORMOPS_SIGMOID_BLOCK];
#if defined(NORMOPS_STREAM_LANES)
    const normops_stream_vec vone = NORMOPS_STREAM_SET1(1.0f);
#endif
    for (ptrdiff_t b = 0; b < n; b += NORMOPS_SIGMOID_BLOCK) {
        ptrdiff_t len = n - b < NORMOPS_SIGMOID_BLOCK ? n - b : NORMOPS_SIGMOID_BLOCK, i = 0;
        __builtin_prefetch(x + b + NORMOPS_SIGMOID_AHEAD, 0, 3);
        __builtin_prefetch(x + b + NORMOPS_SIGMOID_AHEAD + 64, 0, 3);
        for (ptrdiff_t j = 0; j < len; j++)
            e[j] = 0.0f - x[b + j];  /* -x, but +0 for x = +0: exp gives 1 either way */
        if (fast)
            normops_exp32_fast_shifted_array(e, 0.0f, e, len);
        else
            normops_exp32_array(e, e, len);
        NORMOPS_STREAMED(y + b, len, stream, i, vone / (vone + NORMOPS_STREAM_LOAD(e + i)), 1.0f / (1.0f + e[i]))
        for (; i < len; i++)
            y[b + i] = 1.0f / (1.0f + e[i]);
    }
#endif
}

#endif
