/* Verification only: (float) expl(x), (float) logl(x) and (float) log1pl(x)
 * in x86 long double (64-bit significand), the reference of the exhaustive
 * check of exp32, log32 and log1p32 (normops_tools/verify_transcendentals.py). The only libm calls in
 * normops; no operator uses them.
 *
 * glibc's expl/logl err by about one long-double ulp, 2^-40 float32 ulp,
 * far below the 2^-34 ulp at which the hardest inputs lie from a float32
 * midpoint. Each result is flagged when it lies within 2^-36 float32 ulp
 * of a midpoint (or of the overflow threshold): the checker recomputes
 * those with mpmath rather than trusting the reference there. The caller
 * can lower that threshold to have more inputs rechecked. */
#ifndef NORMOPS_TRANSCENDENTAL_REFERENCE_H
#define NORMOPS_TRANSCENDENTAL_REFERENCE_H
#include "kernel_codes.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && LDBL_MANT_DIG == 64
#define NORMOPS_HAVE_LONG_DOUBLE_REFERENCE 1

/* v rounded to float32 (the x87 store rounds once, to nearest even, with
 * IEEE subnormals) into *out; returns the distance from v to the nearest
 * float32 midpoint (or overflow threshold), in float32 ulps there: 0.5 for
 * exact, infinite and NaN results. */
static inline double normops_reference_round(long double v, uint32_t* out) {
    float f = (float)v;
    memcpy(out, &f, 4);
    if (f != f)
        *out = 0x7FC00000u;
    long double a = fabsl(v);
    if (!(a > 0.0L) || !(a <= LDBL_MAX))
        return 0.5;
    /* the two float32 values around a, the upper one possibly 2^128 */
    float fa = fabsf(f);
    float below = (long double)fa > a ? nextafterf(fa, 0.0f) : fa;
    long double lo = below;
    long double hi = below == FLT_MAX ? 0x1p128L : (long double)nextafterf(below, INFINITY);
    long double mid = (lo + hi) * 0.5L;   /* exact: 26 significant bits */
    return (double)(fabsl(a - mid) / (hi - lo));
}

static inline float normops_bits_to_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* which: NORMOPS_REFERENCE_EXP, _LOG or _LOG1P (kernel_codes.h), on the inputs with patterns start + i*stride,
 * i < n (or patterns[i] when patterns is not NULL): out[i] the reference's pattern, near[i] = 1 when it lies within
 * 2^-near_bits ulp of a midpoint. Returns the number flagged; the distance
 * (ulps) and the pattern of the input closest to a midpoint go to
 * *closest and *closest_pattern. */
static inline ptrdiff_t normops_reference_range(int which, const uint32_t* patterns, uint64_t start,
                                                uint64_t stride, ptrdiff_t n,
                                                uint32_t* out, uint8_t* near, int near_bits,
                                                double* closest, uint32_t* closest_pattern) {
    double threshold = ldexp(1.0, -near_bits);
    ptrdiff_t flagged = 0;
    *closest = 1.0;
    *closest_pattern = 0;
    for (ptrdiff_t i = 0; i < n; i++) {
        uint32_t pattern = patterns ? patterns[i] : (uint32_t)(start + (uint64_t)i * stride);
        long double x = normops_bits_to_float(pattern);
        double d = normops_reference_round(which == NORMOPS_REFERENCE_EXP ? expl(x) : which == NORMOPS_REFERENCE_LOG ? logl(x) : log1pl(x), out + i);
        near[i] = d < threshold;
        flagged += near[i];
        if (d < *closest) {
            *closest = d;
            *closest_pattern = pattern;
        }
    }
    return flagged;
}

#else
#define NORMOPS_HAVE_LONG_DOUBLE_REFERENCE 0
static inline ptrdiff_t normops_reference_range(int which, const uint32_t* patterns, uint64_t start,
                                                uint64_t stride, ptrdiff_t n,
                                                uint32_t* out, uint8_t* near, int near_bits,
                                                double* closest, uint32_t* closest_pattern) {
    (void)which; (void)patterns; (void)start; (void)stride; (void)n; (void)out; (void)near; (void)near_bits;
    *closest = 1.0;
    *closest_pattern = 0;
    return -1;
}
#endif

#endif
