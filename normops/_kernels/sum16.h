/* The canonical Sum16 (docs/specification.md §3), for several rows at
 * once.
 *
 * Sixteen partial sums start at +0; term j of a row is added to partial
 * j % 16 in increasing j; the partials are folded at distances 8, 4, 2, 1.
 * The sixteen partials of a row are held in native vector registers (GCC's
 * vector extension at the build's width: 4 SSE, 2 AVX or 1 AVX-512 register
 * for float32), partial k in lane k; every lane is its own IEEE addition,
 * so the result does not depend on the ISA level. Rows summed side by side
 * (1, 2 or 4) are independent chains that the CPU overlaps; each row keeps
 * its own order, so the bits do not depend on the grouping either.
 *
 * Written in C rather than Cython because explicit vectors are what make
 * every build vectorise this loop; only + - * and a sign-bit clear. */
#ifndef NORMOPS_SUM16_H
#define NORMOPS_SUM16_H

#include <stddef.h>
#include <string.h>

/* gcc warns about center[r] on paths where center is NULL and never read */
#pragma GCC diagnostic ignored "-Warray-bounds"

enum normops_term { NORMOPS_TERM_VALUE, NORMOPS_TERM_SQUARED_DEVIATION, NORMOPS_TERM_ABSOLUTE };

#if defined(__AVX512F__)
#define NORMOPS_VECTOR_BYTES 64
#elif defined(__AVX__)
#define NORMOPS_VECTOR_BYTES 32
#else
#define NORMOPS_VECTOR_BYTES 16
#endif

#define NORMOPS_ALWAYS_INLINE static inline __attribute__((always_inline))

/* N##_blend(take, x, acc): x in the lanes whose mask in take is all ones,
 * acc elsewhere (for vector types N##_vec with same-size integers N##_bits) */
#define NORMOPS_DEFINE_BLEND(N)                                                               \
NORMOPS_ALWAYS_INLINE N##_vec N##_blend(N##_bits take, N##_vec x, N##_vec acc) {              \
    return (N##_vec)(((N##_bits)x & take) | ((N##_bits)acc & ~take));                         \
}

/* T: element type; N: prefix of its names; I: same-size integer; SIGN: its sign bit */
#define NORMOPS_DEFINE_SUM16(T, N, I, SIGN)                                                    \
typedef T N##_vec __attribute__((vector_size(NORMOPS_VECTOR_BYTES)));                         \
typedef I N##_bits __attribute__((vector_size(NORMOPS_VECTOR_BYTES)));                        \
typedef T N##_unaligned __attribute__((vector_size(NORMOPS_VECTOR_BYTES), aligned(sizeof(T)), may_alias)); \
enum { N##_LANES = NORMOPS_VECTOR_BYTES / sizeof(T), N##_PARTS = 16 / N##_LANES };          \
                                                                                             \
/* the 16 partials of one row: part q, lane l holds partial q * LANES + l */                \
typedef struct { N##_vec part[N##_PARTS]; } N##_partials;                                   \
                                                                                             \
NORMOPS_ALWAYS_INLINE N##_vec N##_term(N##_vec x, T center, int term) {                      \
    if (term == NORMOPS_TERM_SQUARED_DEVIATION) { N##_vec d = x - center; return d * d; }    \
    if (term == NORMOPS_TERM_ABSOLUTE) return (N##_vec)((N##_bits)x & (I)~(SIGN));           \
    return x;                                                                                \
}                                                                                            \
                                                                                             \
/* add the terms of x[0..16) */                                                              \
NORMOPS_ALWAYS_INLINE void N##_add16(N##_partials* p, const T* x, T center, int term) {      \
    for (int q = 0; q < N##_PARTS; q++)                                                      \
        p->part[q] = p->part[q] + N##_term(*(const N##_unaligned*)(x + q * N##_LANES), center, term); \
}                                                                                            \
                                                                                             \
/* add the terms of x[0..count), count < 16: the other partials stay as they are */         \
NORMOPS_ALWAYS_INLINE void N##_add_tail(N##_partials* p, const T* x, ptrdiff_t count, T center, int term) { \
    T tail[16] = {0};                                                                        \
    memcpy(tail, x, (size_t)count * sizeof(T));                                              \
    for (int q = 0; q < N##_PARTS; q++) {                                                    \
        N##_vec t = N##_term(*(const N##_unaligned*)(tail + q * N##_LANES), center, term);    \
        for (int l = 0; l < N##_LANES; l++)                                                  \
            if (q * N##_LANES + l < count) p->part[q][l] = p->part[q][l] + t[l];             \
    }                                                                                        \
}                                                                                            \
                                                                                             \
NORMOPS_ALWAYS_INLINE T N##_fold(const N##_partials* p) {                                    \
    T partial[16], a[8], b[4];                                                               \
    for (int q = 0; q < N##_PARTS; q++)                                                      \
        for (int l = 0; l < N##_LANES; l++) partial[q * N##_LANES + l] = p->part[q][l];      \
    for (int t = 0; t < 8; t++) a[t] = partial[t] + partial[t + 8];                          \
    for (int t = 0; t < 4; t++) b[t] = a[t] + a[t + 4];                                      \
    return (b[0] + b[2]) + (b[1] + b[3]);                                                    \
}                                                                                            \
                                                                                             \
NORMOPS_ALWAYS_INLINE void N##_rows(const T* x, ptrdiff_t stride, int nrows, ptrdiff_t n,     \
                                    const T* center, int term, T* out, const T* prefetch) {  \
    /* one named accumulator per row (not an array), so they stay in registers */           \
    N##_partials p0 = {{{0}}}, p1 = {{{0}}}, p2 = {{{0}}}, p3 = {{{0}}};                     \
    T c0 = 0, c1 = 0, c2 = 0, c3 = 0;                                                        \
    const T *x0 = x, *x1 = x + stride, *x2 = x + 2 * stride, *x3 = x + 3 * stride;           \
    ptrdiff_t full = n - n % 16, i;                                                          \
    if (term == NORMOPS_TERM_SQUARED_DEVIATION) {                                            \
        c0 = center[0];                                                                      \
        if (nrows >= 2) c1 = center[1];                                                      \
        if (nrows == 4) { c2 = center[2]; c3 = center[3]; }                                  \
    }                                                                                        \
    for (i = 0; i < full; i += 16) {                                                         \
        if (prefetch)                                                                        \
            for (int r = 0; r < nrows; r++) {                                                \
                __builtin_prefetch(prefetch + r * stride + i, 0, 2);                         \
                if (sizeof(T) == 8) __builtin_prefetch(prefetch + r * stride + i + 8, 0, 2);\
            }                                                                                \
        N##_add16(&p0, x0 + i, c0, term);                                                    \
        if (nrows >= 2) N##_add16(&p1, x1 + i, c1, term);                                    \
        if (nrows == 4) { N##_add16(&p2, x2 + i, c2, term); N##_add16(&p3, x3 + i, c3, term); } \
    }                                                                                        \
    if (full < n) {                                                                          \
        N##_add_tail(&p0, x0 + full, n - full, c0, term);                                    \
        if (nrows >= 2) N##_add_tail(&p1, x1 + full, n - full, c1, term);                    \
        if (nrows == 4) {                                                                    \
            N##_add_tail(&p2, x2 + full, n - full, c2, term);                                \
            N##_add_tail(&p3, x3 + full, n - full, c3, term);                                \
        }                                                                                    \
    }                                                                                        \
    out[0] = N##_fold(&p0);                                                                  \
    if (nrows >= 2) out[1] = N##_fold(&p1);                                                  \
    if (nrows == 4) { out[2] = N##_fold(&p2); out[3] = N##_fold(&p3); }                      \
}                                                                                            \
                                                                                             \
/* out[r] = Sum16 over j < n of the terms of row r (x + r * stride), r < nrows (1, 2 or 4);  \
 * prefetch (or NULL) starts nrows rows that a later call will read. */                     \
static inline void normops_sum16_##T(const T* x, ptrdiff_t stride, int nrows, ptrdiff_t n,   \
                                     const T* center, int term, T* out, const T* prefetch) { \
    /* constant arguments, so that each case is its own straight loop */                    \
    switch (term * 8 + nrows) {                                                              \
    case NORMOPS_TERM_VALUE * 8 + 1: N##_rows(x, stride, 1, n, center, NORMOPS_TERM_VALUE, out, prefetch); break; \
    case NORMOPS_TERM_VALUE * 8 + 2: N##_rows(x, stride, 2, n, center, NORMOPS_TERM_VALUE, out, prefetch); break; \
    case NORMOPS_TERM_VALUE * 8 + 4: N##_rows(x, stride, 4, n, center, NORMOPS_TERM_VALUE, out, prefetch); break; \
    case NORMOPS_TERM_SQUARED_DEVIATION * 8 + 1: N##_rows(x, stride, 1, n, center, NORMOPS_TERM_SQUARED_DEVIATION, out, prefetch); break; \
    case NORMOPS_TERM_SQUARED_DEVIATION * 8 + 2: N##_rows(x, stride, 2, n, center, NORMOPS_TERM_SQUARED_DEVIATION, out, prefetch); break; \
    case NORMOPS_TERM_SQUARED_DEVIATION * 8 + 4: N##_rows(x, stride, 4, n, center, NORMOPS_TERM_SQUARED_DEVIATION, out, prefetch); break; \
    default: N##_rows(x, stride, 1, n, center, NORMOPS_TERM_ABSOLUTE, out, prefetch); break; \
    }                                                                                        \
}

NORMOPS_DEFINE_SUM16(float, normops_f32, int, (int)0x80000000)
NORMOPS_DEFINE_SUM16(double, normops_f64, long long, (long long)0x8000000000000000LL)

#endif
