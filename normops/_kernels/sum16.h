/* The canonical Sum16 (seed spec, "The canonical sum"), for several rows at
 * once.
 *
 * Sixteen partial sums start at +0; term j of a row is added to partial
 * j % 16 in increasing j; the partials are folded at distances 8, 4, 2, 1.
 * The sixteen partials of a row are one 16-lane vector of GCC's vector
 * extension: the compiler maps it onto 4 SSE, 2 AVX or 1 AVX-512 register
 * (float32), and every lane is its own IEEE addition, so the result does
 * not depend on the ISA level. Rows summed side by side (1, 2 or 4) are
 * independent chains of additions that the CPU overlaps; each row keeps its
 * own order, so the bits do not depend on the grouping.
 *
 * Written in C rather than Cython because the vector type is what makes
 * every build vectorise this loop; only + - * and a sign-bit clear. */
#ifndef NORMOPS_SUM16_H
#define NORMOPS_SUM16_H

#include <stddef.h>
#include <string.h>

/* gcc notes that a 64-byte vector is returned differently with and without
 * AVX-512 (irrelevant: these functions are static inline), and warns about
 * center[r] on the paths where center is NULL and never read. */
#pragma GCC diagnostic ignored "-Wpsabi"
#pragma GCC diagnostic ignored "-Warray-bounds"

enum normops_term { NORMOPS_TERM_VALUE, NORMOPS_TERM_SQUARED_DEVIATION, NORMOPS_TERM_ABSOLUTE };

#define NORMOPS_ALWAYS_INLINE static inline __attribute__((always_inline))

#define NORMOPS_DEFINE_SUM16(T, V, I, SIGN_BIT)                                                  \
typedef T V __attribute__((vector_size(16 * sizeof(T))));                                     \
typedef I V##_bits __attribute__((vector_size(16 * sizeof(T))));                              \
                                                                                               \
NORMOPS_ALWAYS_INLINE V V##_load(const T* p) { V v; memcpy(&v, p, sizeof v); return v; }        \
                                                                                               \
/* The 16 terms from p: x, (x - c) * (x - c) with both ops rounded, or |x|. */               \
NORMOPS_ALWAYS_INLINE V V##_terms(V x, T center, int term) {                                    \
    if (term == NORMOPS_TERM_SQUARED_DEVIATION) { V d = x - center; return d * d; }            \
    if (term == NORMOPS_TERM_ABSOLUTE) return (V)((V##_bits)x & (I)~SIGN_BIT);                 \
    return x;                                                                                  \
}                                                                                              \
                                                                                               \
NORMOPS_ALWAYS_INLINE T V##_fold(V p) {                                                         \
    T a[8], b[4];                                                                              \
    for (int t = 0; t < 8; t++) a[t] = p[t] + p[t + 8];                                        \
    for (int t = 0; t < 4; t++) b[t] = a[t] + a[t + 4];                                        \
    return (b[0] + b[2]) + (b[1] + b[3]);                                                      \
}                                                                                              \
                                                                                               \
NORMOPS_ALWAYS_INLINE void V##_rows(const T* x, ptrdiff_t stride, int nrows, ptrdiff_t n,       \
                                    const T* center, int term, T* out, const T* prefetch) {    \
    V p[4] = {{0}, {0}, {0}, {0}};                                                             \
    T c[4] = {0, 0, 0, 0};                                                                     \
    ptrdiff_t full = n - n % 16, i;                                                            \
    if (term == NORMOPS_TERM_SQUARED_DEVIATION)                                                \
        for (int r = 0; r < nrows; r++) c[r] = center[r];                                      \
    for (i = 0; i < full; i += 16) {                                                           \
        if (prefetch)                                                                          \
            for (int r = 0; r < nrows; r++) {                                                  \
                __builtin_prefetch(prefetch + r * stride + i, 0, 2);                           \
                if (sizeof(T) == 8) __builtin_prefetch(prefetch + r * stride + i + 8, 0, 2);  \
            }                                                                                  \
        for (int r = 0; r < nrows; r++)                                                        \
            p[r] = p[r] + V##_terms(V##_load(x + r * stride + i), c[r], term);                \
    }                                                                                          \
    if (full < n) {                                                                            \
        /* the tail: terms j >= n contribute nothing (the lanes stay as they are) */          \
        for (int r = 0; r < nrows; r++) {                                                      \
            T tail[16] = {0};                                                                  \
            memcpy(tail, x + r * stride + full, (size_t)(n - full) * sizeof(T));               \
            V t = V##_terms(V##_load(tail), c[r], term);                                       \
            for (ptrdiff_t k = 0; k < n - full; k++) p[r][k] = p[r][k] + t[k];                 \
        }                                                                                      \
    }                                                                                          \
    for (int r = 0; r < nrows; r++) out[r] = V##_fold(p[r]);                                   \
}                                                                                              \
                                                                                               \
/* out[r] = Sum16 over j < n of the terms of row r (x + r * stride), r < nrows   \
 * (1, 2 or 4); prefetch (or NULL) starts nrows rows a later call will read.  */ \
static inline void normops_sum16_##T(const T* x, ptrdiff_t stride, int nrows, ptrdiff_t n,     \
                                     const T* center, int term, T* out, const T* prefetch) {   \
    /* constant arguments, so that each case is its own straight loop */                      \
    switch (term * 8 + nrows) {                                                                \
    case NORMOPS_TERM_VALUE * 8 + 1: V##_rows(x, stride, 1, n, center, NORMOPS_TERM_VALUE, out, prefetch); break; \
    case NORMOPS_TERM_VALUE * 8 + 2: V##_rows(x, stride, 2, n, center, NORMOPS_TERM_VALUE, out, prefetch); break; \
    case NORMOPS_TERM_VALUE * 8 + 4: V##_rows(x, stride, 4, n, center, NORMOPS_TERM_VALUE, out, prefetch); break; \
    case NORMOPS_TERM_SQUARED_DEVIATION * 8 + 1: V##_rows(x, stride, 1, n, center, NORMOPS_TERM_SQUARED_DEVIATION, out, prefetch); break; \
    case NORMOPS_TERM_SQUARED_DEVIATION * 8 + 2: V##_rows(x, stride, 2, n, center, NORMOPS_TERM_SQUARED_DEVIATION, out, prefetch); break; \
    case NORMOPS_TERM_SQUARED_DEVIATION * 8 + 4: V##_rows(x, stride, 4, n, center, NORMOPS_TERM_SQUARED_DEVIATION, out, prefetch); break; \
    default: V##_rows(x, stride, 1, n, center, NORMOPS_TERM_ABSOLUTE, out, prefetch); break; \
    }                                                                                          \
}

NORMOPS_DEFINE_SUM16(float, normops_f32x16, int, (int)0x80000000)
NORMOPS_DEFINE_SUM16(double, normops_f64x16, long long, (long long)0x8000000000000000LL)

#endif
