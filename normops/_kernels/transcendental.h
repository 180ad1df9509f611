/* normops' own exp and log (docs/transcendentals.md).
 *
 * exp32 / log32 / log1p32: float32 in and out, correctly rounded (to
 * nearest, ties to even) for every one of the 2^32 inputs, proven by
 * `python -m normops verify-transcendentals`. exp64 / log64 / log1p64: the
 * same construction for float64, deterministic, error below one ulp (not
 * correctly rounded). exp32_fast: float32 arithmetic for the fast flavour.
 *
 * The scalar functions use only IEEE + - * / on float and double, each
 * rounded on its own (the build passes -ffp-contract=off: no contraction),
 * integer operations on the bit patterns, and table loads: no libm, no
 * conversion whose rounding mode could matter. Special cases are selects on
 * masks, not branches, so that gcc vectorises the array loops (table loads
 * become gathers at AVX2/AVX-512) with exactly the scalar operations.
 * exp32 and log32 are the exception (docs/specification.md §5.1): a correctly rounded
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
 *
 * This header has the scalar functions, the rounding test, the careful
 * path on flagged lanes, the baseline's quick blocks and the array entry
 * points; exp_fast.h the fast flavour's exponential at every level;
 * transcendental_avx512.h and transcendental_avx2.h the vector quick paths
 * of exp32 and log32 at those levels.
 */
#ifndef NORMOPS_TRANSCENDENTAL_H
#define NORMOPS_TRANSCENDENTAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "transcendental_tables.h"
#include "kernel_codes.h"
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

/* log64's argument reduction of the pattern us of a positive normal double
 * whose exponent is `lower` too high (52 for a subnormal scaled by 2^52):
 * returns the exponent e as a double, sets the table index i and the pair
 * (z, zlo) = m invc - 1 exactly (why exactly: below). */
NORMOPS_ALWAYS_INLINE double normops_log_reduce(uint64_t us, uint64_t lower, uint64_t* i_out,
                                                double* z_out, double* zlo_out) {
    uint64_t i = (us >> 45) & 127;
    /* the exponent + 2^52 + 2048 as a double pattern, then minus the
     * offset: an exact int64 -> double conversion that AVX2 has */
    uint64_t eo = ((us >> 52) & 2047) + (2048 - 1023) - lower + (i == 127);
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
    *zlo_out = (a - (z - bb)) + (b - bb);
    *z_out = z;
    *i_out = i;
    return e;
}

/* z = m invc - 1 is not exact for a 53-bit m, but m = mhi + mlo with mhi
 * of 41 significant bits: mhi invc - 1 and mlo invc are exact, and 2Sum
 * makes the pair (z, zlo) = m invc - 1 exactly. log1p(z + zlo) =
 * log1p(z) + zlo / (1 + z) + ..., of which zlo - zlo z is kept. The pair
 * is rounded once: error about 0.5 ulp. */
NORMOPS_ALWAYS_INLINE double normops_log64(double x) {
    uint64_t ux = normops_d2u(x);
    int sub = ux < 0x0010000000000000ull;
    uint64_t i;
    double z, zlo, lo;
    double e = normops_log_reduce(normops_d2u(sub ? x * 0x1p52 : x), sub ? 52 : 0, &i, &z, &zlo);
    double hi = normops_log_combine(e, i, z, zlo - zlo * z, &lo);
    uint64_t y = normops_d2u(hi + lo);
    y = ux >= 0x7FF0000000000000ull ? NORMOPS_NAN64 : y;
    y = ux == 0x7FF0000000000000ull ? 0x7FF0000000000000ull : y;
    y = (ux & 0x7FFFFFFFFFFFFFFFull) == 0 ? 0xFFF0000000000000ull : y;
    return normops_u2d(y);
}

/* ------------------------------------------------------------ log1p */

/* log(1 + x) for finite x > -1 (a widened float32, or a float64) as an
 * unevaluated pair (docs/transcendentals.md, "log1p32 and log1p64");
 * garbage elsewhere, which the callers replace.
 *
 * |x| <= 2^-7: log1p(x) = x + x^2 Q(x), log's own polynomial (truncation
 * below 2^-66 relative to x), with table entry 0 (invc = 1, log c = 0), so
 * x itself is the exact leading term. Otherwise u = 1 + x by 2Sum, as the
 * pair (uh, ul) (ul = 0 whenever 1 + x is a double, e.g. for every float32
 * x below 2^51), and log(uh + ul) = log(uh) + ul/uh + O(2^-106): log(uh)
 * by log64's reduction (z, zlo exactly m invc - 1), ul/uh joining the low
 * part. Only + - * / and integer operations on patterns. */
NORMOPS_ALWAYS_INLINE double normops_log1p_pair(double x, double* lo_out) {
    double ax = x < 0 ? -x : x;
    if (ax <= 0x1p-7)
        return normops_log_combine(0.0, 0, x, 0.0, lo_out);
    double uh = 1.0 + x;                /* 2Sum(1, x) */
    double bb = uh - x;
    double ul = (x - (uh - bb)) + (1.0 - bb);
    uint64_t i;                         /* uh >= 2^-53 here: a normal double */
    double z, zlo;
    double e = normops_log_reduce(normops_d2u(uh), 0, &i, &z, &zlo);
    return normops_log_combine(e, i, z, (zlo - zlo * z) + ul / uh, lo_out);
}

/* log1p32: the pair rounded to odd, then to float32 (correctly rounded:
 * proven on all 2^32 inputs by python -m normops verify-transcendentals).
 * NaN and x < -1 -> NaN; -1 -> -inf; +inf -> +inf; +-0 -> +-0. */
NORMOPS_ALWAYS_INLINE float normops_log1p32(float x) {
    uint32_t ux = normops_f2u(x);
    double lo;
    double hi = normops_log1p_pair((double)x, &lo);
    uint32_t y = normops_f2u((float)normops_round_to_odd(hi, lo));
    y = (x != x || x < -1.0f) ? NORMOPS_NAN32 : y;
    y = x == -1.0f ? 0xFF800000u : y;
    y = ux == 0x7F800000u ? 0x7F800000u : y;
    y = (ux & 0x7FFFFFFFu) == 0 ? ux : y;
    return normops_u2f(y);
}

/* log1p64: the pair rounded once (below one ulp; measured in
 * docs/transcendentals.md). Special values as log1p32. */
NORMOPS_ALWAYS_INLINE double normops_log1p64(double x) {
    uint64_t ux = normops_d2u(x);
    double lo;
    double hi = normops_log1p_pair(x, &lo);
    uint64_t y = normops_d2u(hi + lo);
    y = (x != x || x < -1.0) ? NORMOPS_NAN64 : y;
    y = x == -1.0 ? 0xFFF0000000000000ull : y;
    y = ux == 0x7FF0000000000000ull ? ux : y;
    y = (ux & 0x7FFFFFFFFFFFFFFFull) == 0 ? ux : y;
    return normops_u2d(y);
}

#include "exp_fast.h"  /* the fast flavour's exp32_fast */

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

/* The vector quick paths, one header per ISA level */
#if defined(__AVX512F__)
#include "transcendental_avx512.h"
#elif defined(__AVX2__) && defined(__FMA__)
#include "transcendental_avx2.h"
#else
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
NORMOPS_MAPS(log1p32, float)
NORMOPS_MAPS(log1p64, double)

/* y[i] = exp64(x[i] - shift), the difference rounded first; y may be x */
static void normops_exp64_shifted_array(const double* x, double shift, double* y, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; i++)
        y[i] = x[i] - shift;
    normops_exp64_array(y, y, n);
}

/* One entry for the Cython chunk loops (the numbers: kernel_codes.h). */

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
    NORMOPS_CASE(NORMOPS_T_LOG1P32, log1p32, float)
    NORMOPS_CASE(NORMOPS_T_LOG1P64, log1p64, double)
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
