/* The Reduce* kernels on native vectors (docs/specification.md §11).
 * The front layer has arranged the data as
 * outer x reduced x inner, C-contiguous:
 *
 *  - column layout (inner > 1 kept): a tile of up to 256 neighbouring
 *    outputs is accumulated row after row, each output sequentially from the
 *    identity in reduced-tuple order; lane l of a vector is output l, so the
 *    vectors only run outputs side by side and every output keeps its own
 *    order (one pass over the data, whatever the ISA width);
 *  - row layout (inner = 1): each output's sequence is contiguous; sums use
 *    the canonical Sum16 of sum16.h, products multiply sequentially from 1,
 *    max/min scan in lanes (see row_scan).
 *
 * Max/min here ignore NaN (a NaN first element is the front layer's rule);
 * MAX_NAN / MIN_NAN let any NaN win (LogSumExp's maximum, NumPy's max).
 * Only + - * and compares; exp through transcendental.h one element at a
 * time. */
#ifndef NORMOPS_REDUCE_H
#define NORMOPS_REDUCE_H

#include "sum16.h"
#include "rowmax.h"  /* NORMOPS_VMAX / NORMOPS_VMIN: one max/min instruction on x86 */
#include "transcendental.h"  /* and kernel_codes.h */
#include <stdint.h>

/* enum normops_reduce_op: kernel_codes.h */

/* Neighbouring tiles of one thread are accumulated together, up to this
 * many bytes of outputs (L1-resident), so that each data row is read as one
 * contiguous stretch (each output still runs its own sequence: the bits do
 * not change). */
#define NORMOPS_SPAN_BYTES 16384
/* Terms evaluated by exp at a time in the row layout (a multiple of 16). */
#define NORMOPS_EXP_PIECE 1024
/* Sequences a float product runs side by side (NORMOPS_PROD_SEQS / lanes vectors
 * of lanes); enough independent chains to hide the multiply latency, and no more:
 * rows of 16 KB, and the 2^16-term blocks of a long product (256 KB), all start at
 * the same place of an 8-way L1 (and L2) set, so that 16 such streams at once evict
 * each other. At AVX2 16 sequences took 2.2x the time of 8 on Zen 2 (bench:
 * docs/performance-analysis.md, "ReduceProd's streams"). AVX-512 keeps 16, one
 * vector of float32 lanes (not measured: no AVX-512 machine at hand). */
#if defined(__AVX512F__)
#define NORMOPS_PROD_SEQS 16
#else
#define NORMOPS_PROD_SEQS 8
#endif
#define NORMOPS_UNROLL _Pragma("GCC unroll 16")
#if defined(__clang__)
#define NORMOPS_SHUFFLE2(V, a, b, m) __extension__({                                      \
    V r_; for (int l_ = 0; l_ < (int)(sizeof(V) / sizeof(a[0])); l_++)                   \
        r_[l_] = m[l_] < (int)(sizeof(V) / sizeof(a[0])) ? a[m[l_]] : b[m[l_] - (int)(sizeof(V) / sizeof(a[0]))]; r_; })
#else
#define NORMOPS_SHUFFLE2(V, a, b, m) __builtin_shuffle(a, b, m)
#endif

/* The column loop of any element type with N##_identity, N##_step1 and N##_stepv. */
#define NORMOPS_DEFINE_COLS(T, N)                                                            \
/* Column tiles: out[j * out_stride] = op over r < R of x[r * C + j], j < w, at most         \
 * NORMOPS_SPAN_BYTES of outputs. */                                                         \
NORMOPS_ALWAYS_INLINE void N##_cols_op(const T* x, ptrdiff_t R, ptrdiff_t C, int w, int op,  \
                                       T* out, ptrdiff_t out_stride) {                       \
    N##_vec acc[NORMOPS_SPAN_BYTES / NORMOPS_VECTOR_BYTES];                                  \
    T tail[N##_LANES];                                                                       \
    const int nv = w / N##_LANES, nt = w % N##_LANES;                                        \
    const T id = N##_identity(op);                                                           \
    N##_vec idv = {0};                                                                       \
    idv = idv + id;                                                                          \
    for (int v = 0; v < nv; v++) acc[v] = idv;                                               \
    for (int j = 0; j < nt; j++) tail[j] = id;                                               \
    ptrdiff_t r = 0;                                                                         \
    for (; r + 3 < R; r += 4) { /* four rows per visit of the accumulators, in order */      \
        const T *a = x + r * C, *b = a + C, *c = b + C, *d = c + C;                          \
        for (int v = 0; v < nv; v++) {                                                       \
            const int o = v * N##_LANES;                                                     \
            N##_vec s = N##_stepv(acc[v], *(const N##_unaligned*)(a + o), op);               \
            s = N##_stepv(s, *(const N##_unaligned*)(b + o), op);                            \
            s = N##_stepv(s, *(const N##_unaligned*)(c + o), op);                            \
            acc[v] = N##_stepv(s, *(const N##_unaligned*)(d + o), op);                       \
        }                                                                                    \
        for (int j = nv * N##_LANES; j < w; j++)                                             \
            tail[j - nv * N##_LANES] = N##_step1(N##_step1(N##_step1(N##_step1(              \
                tail[j - nv * N##_LANES], a[j], op), b[j], op), c[j], op), d[j], op);        \
    }                                                                                        \
    for (; r < R; r++) {                                                                     \
        const T* a = x + r * C;                                                              \
        for (int v = 0; v < nv; v++)                                                         \
            acc[v] = N##_stepv(acc[v], *(const N##_unaligned*)(a + v * N##_LANES), op);      \
        for (int j = 0; j < nt; j++) tail[j] = N##_step1(tail[j], a[nv * N##_LANES + j], op); \
    }                                                                                        \
    for (int v = 0; v < nv; v++)                                                             \
        for (int l = 0; l < N##_LANES; l++) out[(v * N##_LANES + l) * out_stride] = acc[v][l]; \
    for (int j = 0; j < nt; j++) out[(nv * N##_LANES + j) * out_stride] = tail[j];           \
}

/* Four independent vector scans over x[i..full4) (the CPU overlaps them);
 * shared by the float and the integer families. */
#define NORMOPS_FOUR_SCANS(N, x, i, full4, op, m0, m1, m2, m3)                   \
    for (; i < full4; i += 4 * N##_LANES) {                                       \
        m0 = N##_stepv(m0, *(const N##_unaligned*)(x + i), op);                   \
        m1 = N##_stepv(m1, *(const N##_unaligned*)(x + i + N##_LANES), op);       \
        m2 = N##_stepv(m2, *(const N##_unaligned*)(x + i + 2 * N##_LANES), op);   \
        m3 = N##_stepv(m3, *(const N##_unaligned*)(x + i + 3 * N##_LANES), op);   \
    }

/* T: element type; N: prefix of sum16.h's names; EXP: its exp for the transcendental map;
 * EXP_SHIFTED(x, c, y, n): y = exp(x - c), the difference rounded first; EXP_FAST and     \
 * EXP_SHIFTED_FAST: the same with the fast flavour's exponential */                         \
#define NORMOPS_DEFINE_REDUCE(T, N, EXP, EXP_SHIFTED, EXP_FAST, EXP_SHIFTED_FAST)            \
NORMOPS_ALWAYS_INLINE T N##_identity(int op) {                                               \
    const T inf = (T)__builtin_inf();                                                        \
    if (op == NORMOPS_R_PROD) return 1;                                                      \
    if (op == NORMOPS_R_MAX || op == NORMOPS_R_MAX_NAN) return -inf;                         \
    if (op == NORMOPS_R_MIN || op == NORMOPS_R_MIN_NAN) return inf;                          \
    return 0;                                                                                \
}                                                                                            \
                                                                                             \
/* acc (op) x for one lane: the sequential step of every op but SUM_EXP */                   \
NORMOPS_ALWAYS_INLINE T N##_step1(T acc, T x, int op) {                                      \
    switch (op) {                                                                            \
    case NORMOPS_R_SUM_ABS: return acc + __builtin_fabs(x);                                  \
    case NORMOPS_R_SUM_SQUARE: return acc + x * x;                                           \
    case NORMOPS_R_PROD: return acc * x;                                                     \
    case NORMOPS_R_MAX: return x > acc ? x : acc;                                            \
    case NORMOPS_R_MIN: return x < acc ? x : acc;                                            \
    case NORMOPS_R_MAX_NAN: return (x > acc || x != x) ? x : acc;                            \
    case NORMOPS_R_MIN_NAN: return (x < acc || x != x) ? x : acc;                            \
    default: return acc + x;                                                                 \
    }                                                                                        \
}                                                                                            \
                                                                                             \
NORMOPS_DEFINE_BLEND(N)                                                                      \
                                                                                             \
/* the same step on every lane of a vector */                                                \
NORMOPS_ALWAYS_INLINE N##_vec N##_stepv(N##_vec acc, N##_vec x, int op) {                    \
    switch (op) {                                                                            \
    case NORMOPS_R_SUM_ABS: return acc + N##_term(x, 0, NORMOPS_TERM_ABSOLUTE);              \
    case NORMOPS_R_SUM_SQUARE: return acc + x * x;                                           \
    case NORMOPS_R_PROD: return acc * x;                                                     \
    case NORMOPS_R_MAX: return NORMOPS_VMAX(N, x, acc);                                      \
    case NORMOPS_R_MIN: return NORMOPS_VMIN(N, x, acc);                                      \
    /* (x > acc || x != x) ? x : acc: the max first, so that the chain    \
     * through acc is a max and a blend, not a compare and a blend too    \
     * (np.max over rows about 1.2x faster, Zen 5)                       */ \
    case NORMOPS_R_MAX_NAN: return N##_blend(x != x, x, NORMOPS_VMAX(N, x, acc));            \
    case NORMOPS_R_MIN_NAN: return N##_blend(x != x, x, NORMOPS_VMIN(N, x, acc));            \
    default: return acc + x;                                                                 \
    }                                                                                        \
}                                                                                            \
                                                                                             \
NORMOPS_DEFINE_COLS(T, N)                                                                    \
                                                                                             \
/* Column tile of exp(x - center[j]) sums, sequential per output. */                         \
NORMOPS_ALWAYS_INLINE void N##_cols_exp(const T* x, ptrdiff_t R, ptrdiff_t C, int w, const T* center, \
                                        T* out, ptrdiff_t out_stride, int fast) {            \
    T acc[NORMOPS_SPAN_BYTES / sizeof(T)], e[NORMOPS_SPAN_BYTES / sizeof(T)];                \
    for (int j = 0; j < w; j++) acc[j] = 0;                                                  \
    for (ptrdiff_t r = 0; r < R; r++) {                                                      \
        const T* a = x + r * C;                                                              \
        for (int j = 0; j < w; j++) e[j] = a[j] - center[j];  /* rounded before exp */       \
        normops_tfunc_map(fast ? EXP_FAST : EXP, e, e, w);                                   \
        for (int j = 0; j < w; j++) acc[j] = acc[j] + e[j];                                  \
    }                                                                                        \
    for (int j = 0; j < w; j++) out[j * out_stride] = acc[j];                                \
}                                                                                            \
                                                                                             \
/* One column tile of any op (constant op per call, so each loop is specialised). */         \
static inline void normops_reduce_cols_##T(const T* x, ptrdiff_t R, ptrdiff_t C, int w, int op, \
                                           const T* center, T* out, ptrdiff_t out_stride) {  \
    switch (op) {                                                                            \
    case NORMOPS_R_SUM: N##_cols_op(x, R, C, w, NORMOPS_R_SUM, out, out_stride); break;      \
    case NORMOPS_R_SUM_ABS: N##_cols_op(x, R, C, w, NORMOPS_R_SUM_ABS, out, out_stride); break; \
    case NORMOPS_R_SUM_SQUARE: N##_cols_op(x, R, C, w, NORMOPS_R_SUM_SQUARE, out, out_stride); break; \
    case NORMOPS_R_SUM_EXP: N##_cols_exp(x, R, C, w, center, out, out_stride, 0); break;     \
    case NORMOPS_R_SUM_EXP_FAST: N##_cols_exp(x, R, C, w, center, out, out_stride, 1); break; \
    case NORMOPS_R_PROD: N##_cols_op(x, R, C, w, NORMOPS_R_PROD, out, out_stride); break;    \
    case NORMOPS_R_MAX: N##_cols_op(x, R, C, w, NORMOPS_R_MAX, out, out_stride); break;      \
    case NORMOPS_R_MIN: N##_cols_op(x, R, C, w, NORMOPS_R_MIN, out, out_stride); break;      \
    case NORMOPS_R_MAX_NAN: N##_cols_op(x, R, C, w, NORMOPS_R_MAX_NAN, out, out_stride); break; \
    default: N##_cols_op(x, R, C, w, NORMOPS_R_MIN_NAN, out, out_stride); break;             \
    }                                                                                        \
}                                                                                            \
                                                                                             \
/* Sequential products (from 1, term after term) of count <= NORMOPS_PROD_SEQS       \
 * sequences x + i * stride of n terms, into out[i]. Lane l of accumulator g runs      \
 * sequence g * LANES + l: each step loads LANES terms of every sequence, transposes   \
 * them in registers (vector k then holds term k of each sequence) and multiplies the  \
 * vectors in term order, so each lane keeps its own sequential order while the many   \
 * chains hide the multiply latency. Missing sequences read ones. */                   \
static inline void N##_prod_seqs(const T* x, ptrdiff_t stride, int count, ptrdiff_t n, T* out) { \
    enum { L = N##_LANES, G = NORMOPS_PROD_SEQS / N##_LANES };                               \
    T ones[L];                                                                               \
    N##_bits lo[5], hi[5];  /* the log2(L) stages of the transposition */                    \
    int st = 0;                                                                              \
    for (int l = 0; l < L; l++) ones[l] = 1;                                                 \
    NORMOPS_UNROLL for (int d = L / 2; d >= 1; d /= 2, st++)                                 \
        NORMOPS_UNROLL for (int l = 0; l < L; l++) {                                         \
            lo[st][l] = (l & d) ? L + l - d : l;                                             \
            hi[st][l] = (l & d) ? L + l : l + d;                                             \
        }                                                                                    \
    N##_vec acc[G];                                                                          \
    NORMOPS_UNROLL for (int g = 0; g < G; g++) { acc[g] = (N##_vec){0}; acc[g] = acc[g] + 1; } \
    const ptrdiff_t steps = n / L;                                                           \
    for (ptrdiff_t t = 0; t < steps; t++)                                                    \
        NORMOPS_UNROLL for (int g = 0; g < G; g++) {                                         \
            N##_vec v[L];                                                                    \
            NORMOPS_UNROLL for (int i = 0; i < L; i++)                                       \
                v[i] = *(const N##_unaligned*)(g * L + i < count                             \
                                               ? x + (g * L + i) * stride + t * L : ones);   \
            st = 0;                                                                          \
            NORMOPS_UNROLL for (int d = L / 2; d >= 1; d /= 2, st++)                         \
                NORMOPS_UNROLL for (int i = 0; i < L; i++)                                   \
                    if (!(i & d)) {                                                          \
                        N##_vec a = v[i], b = v[i + d];                                      \
                        v[i] = NORMOPS_SHUFFLE2(N##_vec, a, b, lo[st]);                      \
                        v[i + d] = NORMOPS_SHUFFLE2(N##_vec, a, b, hi[st]);                  \
                    }                                                                        \
            NORMOPS_UNROLL for (int k = 0; k < L; k++) acc[g] = acc[g] * v[k];               \
        }                                                                                    \
    for (int i = 0; i < count; i++) {  /* the last n % L terms */                            \
        T p = acc[i / L][i % L];                                                             \
        for (ptrdiff_t j = steps * L; j < n; j++) p = p * x[i * stride + j];                 \
        out[i] = p;                                                                          \
    }                                                                                        \
}                                                                                            \
                                                                                             \
/* Row scan of max/min: lanes scan strided subsets, then the lane results are                \
 * scanned by the same rule. The value is the sequential scan's; only a tie                  \
 * between -0 and +0 could depend on the lanes, so a zero result is replaced by              \
 * the first zero of the sequence, which is the sequential scan's choice. */                 \
NORMOPS_ALWAYS_INLINE T N##_row_finish(const T* x, ptrdiff_t n, ptrdiff_t i, N##_vec m, int op) { \
    T best = N##_identity(op);  /* the lanes of m, then x[i..n), then the zero rule */       \
    for (int l = 0; l < N##_LANES; l++) best = N##_step1(best, m[l], op);                    \
    for (; i < n; i++) best = N##_step1(best, x[i], op);                                     \
    if (best == 0)                                                                           \
        for (i = 0; i < n; i++)                                                              \
            if (x[i] == 0) return x[i];                                                      \
    return best;                                                                             \
}                                                                                            \
                                                                                             \
NORMOPS_ALWAYS_INLINE T N##_row_scan(const T* x, ptrdiff_t n, int op) {                      \
    const T id = N##_identity(op);                                                           \
    N##_vec m0 = {0}, m1, m2, m3;                                                            \
    m0 = m0 + id;                                                                            \
    m1 = m2 = m3 = m0;  /* four independent scans: the CPU overlaps them */                  \
    ptrdiff_t i = 0, full4 = n - n % (4 * N##_LANES), full = n - n % N##_LANES;              \
    NORMOPS_FOUR_SCANS(N, x, i, full4, op, m0, m1, m2, m3);                                  \
    for (; i < full; i += N##_LANES) m0 = N##_stepv(m0, *(const N##_unaligned*)(x + i), op); \
    m0 = N##_stepv(N##_stepv(N##_stepv(m0, m1, op), m2, op), m3, op);                        \
    return N##_row_finish(x, n, i, m0, op);                                                  \
}                                                                                            \
                                                                                             \
/* Sum16 of exp(x[j] - c): the terms are made NORMOPS_EXP_PIECE at a time. */                \
NORMOPS_ALWAYS_INLINE T N##_row_exp(const T* x, ptrdiff_t n, T c, int fast) {                \
    N##_partials p = {{{0}}};                                                                \
    T e[NORMOPS_EXP_PIECE];                                                                  \
    for (ptrdiff_t i = 0; i < n; i += NORMOPS_EXP_PIECE) {                                   \
        ptrdiff_t m = n - i < NORMOPS_EXP_PIECE ? n - i : NORMOPS_EXP_PIECE;                 \
        if (fast) /* exp(x - c), the difference rounded first */                             \
            EXP_SHIFTED_FAST(x + i, c, e, m);                                                \
        else                                                                                 \
            EXP_SHIFTED(x + i, c, e, m);                                                     \
        ptrdiff_t full = m - m % 16, k;                                                      \
        for (k = 0; k < full; k += 16) N##_add16(&p, e + k, 0, NORMOPS_TERM_VALUE);          \
        if (full < m) N##_add_tail(&p, e + full, m - full, 0, NORMOPS_TERM_VALUE);           \
    }                                                                                        \
    return N##_fold(&p);                                                                     \
}                                                                                            \
                                                                                             \
/* Four rows at a time, one accumulator each (four streams from memory read                 \
 * faster than one: measured), the rest one by one. */                                        \
NORMOPS_ALWAYS_INLINE void N##_rows_scan(const T* x, ptrdiff_t count, ptrdiff_t n, int op, T* out) { \
    ptrdiff_t i = 0, full = n - n % N##_LANES;                                               \
    for (; i + 4 <= count; i += 4) {                                                         \
        const T *a = x + i * n, *b = a + n, *c = b + n, *d = c + n;                          \
        N##_vec m0 = {0}, m1, m2, m3;                                                        \
        m0 = m0 + N##_identity(op);                                                          \
        m1 = m2 = m3 = m0;                                                                   \
        for (ptrdiff_t j = 0; j < full; j += N##_LANES) {                                    \
            m0 = N##_stepv(m0, *(const N##_unaligned*)(a + j), op);                          \
            m1 = N##_stepv(m1, *(const N##_unaligned*)(b + j), op);                          \
            m2 = N##_stepv(m2, *(const N##_unaligned*)(c + j), op);                          \
            m3 = N##_stepv(m3, *(const N##_unaligned*)(d + j), op);                          \
        }                                                                                    \
        out[i] = N##_row_finish(a, n, full, m0, op);                                         \
        out[i + 1] = N##_row_finish(b, n, full, m1, op);                                     \
        out[i + 2] = N##_row_finish(c, n, full, m2, op);                                     \
        out[i + 3] = N##_row_finish(d, n, full, m3, op);                                     \
    }                                                                                        \
    for (; i < count; i++) out[i] = N##_row_scan(x + i * n, n, op);                          \
}                                                                                            \
                                                                                             \
/* out[i] = op over the contiguous sequence x[i * n .. (i + 1) * n), i < count;              \
 * center[i] is the shift of SUM_EXP (else unused). */                                       \
static inline void normops_reduce_rows_##T(const T* x, ptrdiff_t count, ptrdiff_t n, int op, \
                                           const T* center, T* out) {                        \
    static const T zeros[4] = {0, 0, 0, 0};                                                  \
    ptrdiff_t i = 0;                                                                         \
    int term;                                                                                \
    switch (op) {                                                                            \
    case NORMOPS_R_SUM: case NORMOPS_R_SUM_ABS: case NORMOPS_R_SUM_SQUARE:                   \
        /* x * x is (x - 0) * (x - 0) bit for bit */                                         \
        term = op == NORMOPS_R_SUM ? NORMOPS_TERM_VALUE                                      \
             : op == NORMOPS_R_SUM_ABS ? NORMOPS_TERM_ABSOLUTE : NORMOPS_TERM_SQUARED_DEVIATION; \
        /* four rows side by side (sum16.h serves |x| one row at a time) */                  \
        for (; i + 4 <= count && term != NORMOPS_TERM_ABSOLUTE; i += 4)                      \
            normops_sum16_##T(x + i * n, n, 4, n, zeros, term, out + i, NULL);               \
        for (; i < count; i++) normops_sum16_##T(x + i * n, n, 1, n, zeros, term, out + i, NULL); \
        break;                                                                               \
    case NORMOPS_R_SUM_EXP:                                                                  \
        for (; i < count; i++) out[i] = N##_row_exp(x + i * n, n, center[i], 0);             \
        break;                                                                               \
    case NORMOPS_R_SUM_EXP_FAST:                                                             \
        for (; i < count; i++) out[i] = N##_row_exp(x + i * n, n, center[i], 1);             \
        break;                                                                               \
    case NORMOPS_R_PROD:                                                                     \
        for (; i < count; i += NORMOPS_PROD_SEQS)                                            \
            N##_prod_seqs(x + i * n, n, (int)(count - i < NORMOPS_PROD_SEQS ? count - i : NORMOPS_PROD_SEQS), \
                          n, out + i);                                                       \
        break;                                                                               \
    case NORMOPS_R_MAX: N##_rows_scan(x, count, n, NORMOPS_R_MAX, out); break;               \
    case NORMOPS_R_MIN: N##_rows_scan(x, count, n, NORMOPS_R_MIN, out); break;               \
    case NORMOPS_R_MAX_NAN: N##_rows_scan(x, count, n, NORMOPS_R_MAX_NAN, out); break;       \
    default: N##_rows_scan(x, count, n, NORMOPS_R_MIN_NAN, out); break;                      \
    }                                                                                        \
}

NORMOPS_DEFINE_REDUCE(float, normops_f32, NORMOPS_T_EXP32, normops_exp32_shifted_array,
                      NORMOPS_T_EXP32_FAST, normops_exp32_fast_shifted_array)
NORMOPS_DEFINE_REDUCE(double, normops_f64, NORMOPS_T_EXP64, normops_exp64_shifted_array,
                      NORMOPS_T_EXP64, normops_exp64_shifted_array)

/* Integers (docs/specification.md §11.8): sums, sums of squares and products wrap
 * around (computed in the unsigned type U, so no signed overflow), |x| of
 * the minimum value wraps, max/min compare in T. Wrapping arithmetic is
 * associative and commutative, so the lanes may take any order. */
#define NORMOPS_DEFINE_REDUCE_INT(T, N, U, MINV, MAXV)                                       \
typedef T N##_vec __attribute__((vector_size(NORMOPS_VECTOR_BYTES)));                        \
typedef U N##_bits __attribute__((vector_size(NORMOPS_VECTOR_BYTES)));                       \
typedef T N##_unaligned __attribute__((vector_size(NORMOPS_VECTOR_BYTES), aligned(sizeof(T)), may_alias)); \
enum { N##_LANES = NORMOPS_VECTOR_BYTES / sizeof(T) };                                       \
                                                                                             \
NORMOPS_ALWAYS_INLINE T N##_identity(int op) {                                               \
    if (op == NORMOPS_R_PROD) return 1;                                                      \
    if (op == NORMOPS_R_MAX || op == NORMOPS_R_MAX_NAN) return MINV;                         \
    if (op == NORMOPS_R_MIN || op == NORMOPS_R_MIN_NAN) return MAXV;                         \
    return 0;                                                                                \
}                                                                                            \
                                                                                             \
NORMOPS_ALWAYS_INLINE T N##_step1(T acc, T x, int op) {                                      \
    U a = (U)acc, v = (U)x;                                                                  \
    switch (op) {                                                                            \
    case NORMOPS_R_SUM_ABS: return (T)(a + (x < 0 ? (U)((U)0 - v) : v));                     \
    case NORMOPS_R_SUM_SQUARE: return (T)(a + (U)(v * v));                                   \
    case NORMOPS_R_PROD: return (T)(a * v);                                                  \
    case NORMOPS_R_MAX: case NORMOPS_R_MAX_NAN: return x > acc ? x : acc;                    \
    case NORMOPS_R_MIN: case NORMOPS_R_MIN_NAN: return x < acc ? x : acc;                    \
    default: return (T)(a + v);                                                              \
    }                                                                                        \
}                                                                                            \
                                                                                             \
NORMOPS_DEFINE_BLEND(N)                                                                      \
                                                                                             \
NORMOPS_ALWAYS_INLINE N##_vec N##_stepv(N##_vec acc, N##_vec x, int op) {                    \
    N##_bits a = (N##_bits)acc, v = (N##_bits)x, neg;                                        \
    switch (op) {                                                                            \
    case NORMOPS_R_SUM_ABS:  /* all ones where x < 0: (v ^ neg) - neg is -v there */         \
        neg = (N##_bits)(x < 0);                                                             \
        return (N##_vec)(a + ((v ^ neg) - neg));                                             \
    case NORMOPS_R_SUM_SQUARE: return (N##_vec)(a + v * v);                                  \
    case NORMOPS_R_PROD: return (N##_vec)(a * v);                                            \
    case NORMOPS_R_MAX: case NORMOPS_R_MAX_NAN: return N##_blend((N##_bits)(x > acc), x, acc); \
    case NORMOPS_R_MIN: case NORMOPS_R_MIN_NAN: return N##_blend((N##_bits)(x < acc), x, acc); \
    default: return (N##_vec)(a + v);                                                        \
    }                                                                                        \
}                                                                                            \
                                                                                             \
NORMOPS_DEFINE_COLS(T, N)                                                                    \
                                                                                             \
/* one sequence, any order: four vector accumulators, then the lanes */                      \
NORMOPS_ALWAYS_INLINE T N##_row_any(const T* x, ptrdiff_t n, int op) {                       \
    const T id = N##_identity(op);                                                           \
    N##_vec m0 = {0}, m1, m2, m3;                                                            \
    m0 = m0 + id;                                                                            \
    m1 = m2 = m3 = m0;                                                                       \
    ptrdiff_t i = 0, full4 = n - n % (4 * N##_LANES);                                        \
    NORMOPS_FOUR_SCANS(N, x, i, full4, op, m0, m1, m2, m3);                                  \
    T r = id;                                                                                \
    for (int l = 0; l < N##_LANES; l++) {  /* the lanes' results combine by the op itself */ \
        int c = op == NORMOPS_R_SUM_ABS || op == NORMOPS_R_SUM_SQUARE ? NORMOPS_R_SUM : op;  \
        r = N##_step1(N##_step1(N##_step1(N##_step1(r, m0[l], c), m1[l], c), m2[l], c), m3[l], c); \
    }                                                                                        \
    for (; i < n; i++) r = N##_step1(r, x[i], op);                                           \
    return r;                                                                                \
}                                                                                            \
                                                                                             \
static inline void normops_reduce_rows_##T(const T* x, ptrdiff_t count, ptrdiff_t n, int op, \
                                           const T* center, T* out) {                        \
    (void)center;                                                                            \
    for (ptrdiff_t i = 0; i < count; i++) {                                                  \
        const T* a = x + i * n;                                                              \
        switch (op) {  /* constant op per loop */                                            \
        case NORMOPS_R_SUM_ABS: out[i] = N##_row_any(a, n, NORMOPS_R_SUM_ABS); break;        \
        case NORMOPS_R_SUM_SQUARE: out[i] = N##_row_any(a, n, NORMOPS_R_SUM_SQUARE); break;  \
        case NORMOPS_R_PROD: out[i] = N##_row_any(a, n, NORMOPS_R_PROD); break;              \
        case NORMOPS_R_MAX: case NORMOPS_R_MAX_NAN: out[i] = N##_row_any(a, n, NORMOPS_R_MAX); break; \
        case NORMOPS_R_MIN: case NORMOPS_R_MIN_NAN: out[i] = N##_row_any(a, n, NORMOPS_R_MIN); break; \
        default: out[i] = N##_row_any(a, n, NORMOPS_R_SUM); break;                           \
        }                                                                                    \
    }                                                                                        \
}                                                                                            \
                                                                                             \
static inline void normops_reduce_cols_##T(const T* x, ptrdiff_t R, ptrdiff_t C, int w, int op, \
                                           const T* center, T* out, ptrdiff_t out_stride) {  \
    (void)center;                                                                            \
    switch (op) {                                                                            \
    case NORMOPS_R_SUM_ABS: N##_cols_op(x, R, C, w, NORMOPS_R_SUM_ABS, out, out_stride); break; \
    case NORMOPS_R_SUM_SQUARE: N##_cols_op(x, R, C, w, NORMOPS_R_SUM_SQUARE, out, out_stride); break; \
    case NORMOPS_R_PROD: N##_cols_op(x, R, C, w, NORMOPS_R_PROD, out, out_stride); break;    \
    case NORMOPS_R_MAX: case NORMOPS_R_MAX_NAN: N##_cols_op(x, R, C, w, NORMOPS_R_MAX, out, out_stride); break; \
    case NORMOPS_R_MIN: case NORMOPS_R_MIN_NAN: N##_cols_op(x, R, C, w, NORMOPS_R_MIN, out, out_stride); break; \
    default: N##_cols_op(x, R, C, w, NORMOPS_R_SUM, out, out_stride); break;                 \
    }                                                                                        \
}

NORMOPS_DEFINE_REDUCE_INT(int32_t, normops_i32, uint32_t, INT32_MIN, INT32_MAX)
NORMOPS_DEFINE_REDUCE_INT(uint32_t, normops_u32, uint32_t, 0, UINT32_MAX)
NORMOPS_DEFINE_REDUCE_INT(int64_t, normops_i64, uint64_t, INT64_MIN, INT64_MAX)
NORMOPS_DEFINE_REDUCE_INT(uint64_t, normops_u64, uint64_t, 0, UINT64_MAX)

#endif
