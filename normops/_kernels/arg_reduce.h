/* ArgMax / ArgMin of contiguous sequences (and of column tiles) on native vectors.
 *
 * The rule (docs/specification.md §12) is a sequential scan: a later
 * element wins when strictly better, or better-or-equal with
 * select_last_index; NaN never wins unless it is first. Its result is the
 * first (last) index holding the best non-NaN value M. Comparisons are
 * exact, so any order of finding M gives the same M, and the index is then
 * a search for x == M: the result never depends on the vector width.
 *
 * One pass: four vectors a step, from one sequence (a group of 4 vectors)
 * or from four sequences side by side (a group of one vector each: four
 * memory streams, which read faster than one). Every lane keeps
 * its best value and the number of the group it came from (NaN never
 * replaces a lane: comparisons with NaN are false; a tie replaces it with
 * select_last_index). Folding the lanes gives M and the first (last) group
 * holding it, and only that group is searched for x == M. Elements after
 * the last whole group are read as one more group ending the sequence,
 * overlapping the one before (seeing an element twice moves neither a
 * first nor a last winner out of the group that holds it). Narrow integer
 * types count groups in lanes of their own width, so their sequences are
 * cut into super-blocks of at most 127 (32767) groups, combined in order
 * like the scan combines elements. When M is the type's "worst" value
 * (-inf for ArgMax on floats) a lane of NaN only could tie it, so the
 * whole sequence is searched instead.
 *
 * find_nan (NumPy's rule, the first NaN wins) also reports the first NaN.
 * normops_argtile_* scans the column layout (sequences side by side in
 * memory), see N##_tile. Only comparisons: no arithmetic on the data. */
#ifndef NORMOPS_ARG_REDUCE_H
#define NORMOPS_ARG_REDUCE_H

#include <stdint.h>
#include "sum16.h"

/* gcc's backward jump threading spent about 28 s of each ISA build's 70
 * on the four-sequence scans (gcc 12 -ftime-report; 1.7 s without it),
 * threading the fold's per-sequence conditions through the unrolled
 * loops. It is off for those functions only. It moves no arithmetic (they
 * have none: comparisons); measured on Zen 5 (AVX-512), one thread, old
 * and new builds interleaved in one process over 60 ArgMax/ArgMin cases:
 * geomean 0.99x the time, float32 and int8 column layouts up to 1.3x
 * faster, int32 sequences of 4M elements 1.1x slower. */
#if defined(__GNUC__) && !defined(__clang__)
#define NORMOPS_NO_THREAD_JUMPS __attribute__((optimize("no-thread-jumps")))
#else
#define NORMOPS_NO_THREAD_JUMPS
#endif

/* T: element type; N: prefix of its names; I: same-size signed integer;
 * WORST_MAX / WORST_MIN: the value every element beats or ties (ArgMax / ArgMin). */
/* AVX-512, float32/float64: the compare yields a mask register and the two
 * blends use it directly (gcc turns the generic bit operations into a
 * mask -> vector -> mask round trip and two xors per blend). Same
 * comparisons, so the same lanes; evaluates to 1 when it did the update. */
#if defined(__SSE2__)
#include <immintrin.h>
#endif
#if defined(__AVX512F__)
#define NORMOPS_CMP512(SUF, a, b, is_min, last)                                              \
    ((is_min) ? ((last) ? _mm512_cmp_##SUF##_mask(a, b, _CMP_LE_OQ) : _mm512_cmp_##SUF##_mask(a, b, _CMP_LT_OQ)) \
              : ((last) ? _mm512_cmp_##SUF##_mask(a, b, _CMP_GE_OQ) : _mm512_cmp_##SUF##_mask(a, b, _CMP_GT_OQ)))
#define NORMOPS_MASKED_TRACK(T, v, best, group, g, is_min, last) __extension__ ({             \
    int _done = 0;                                                                            \
    if (__builtin_types_compatible_p(T, float)) {                                             \
        __mmask16 _k = NORMOPS_CMP512(ps, (__m512)(v), (__m512)*(best), is_min, last);       \
        *(best) = (__typeof__(*(best)))_mm512_mask_blend_ps(_k, (__m512)*(best), (__m512)(v)); \
        *(group) = (__typeof__(*(group)))_mm512_mask_blend_epi32(_k, (__m512i)*(group), (__m512i)(g)); \
        _done = 1;                                                                            \
    } else if (__builtin_types_compatible_p(T, double)) {                                     \
        __mmask8 _k = NORMOPS_CMP512(pd, (__m512d)(v), (__m512d)*(best), is_min, last);      \
        *(best) = (__typeof__(*(best)))_mm512_mask_blend_pd(_k, (__m512d)*(best), (__m512d)(v)); \
        *(group) = (__typeof__(*(group)))_mm512_mask_blend_epi64(_k, (__m512i)*(group), (__m512i)(g)); \
        _done = 1;                                                                            \
    }                                                                                         \
    _done; })
/* The lane fold of float32/float64 on AVX-512: the best lane value M (the
 * lanes hold no NaN) and the first (last) group among the lanes equal to
 * it, by reduction instructions rather than a scalar walk over the lanes
 * (it runs once per row: measured 80-90 ns a row of 4096 before). */
#define NORMOPS_MASKED_FOLD(T, b, g, is_min, last, m, k) __extension__ ({                    \
    int _done = 0;                                                                            \
    if (__builtin_types_compatible_p(T, float)) {                                             \
        __m512 _b = (__m512)(b);                                                              \
        float _m = (is_min) ? _mm512_reduce_min_ps(_b) : _mm512_reduce_max_ps(_b);            \
        __mmask16 _e = _mm512_cmp_ps_mask(_b, _mm512_set1_ps(_m), _CMP_EQ_OQ);               \
        *(m) = _m;                                                                            \
        *(k) = (last) ? _mm512_mask_reduce_max_epi32(_e, (__m512i)(g))                        \
                      : _mm512_mask_reduce_min_epi32(_e, (__m512i)(g));                       \
        _done = 1;                                                                            \
    } else if (__builtin_types_compatible_p(T, double)) {                                     \
        __m512d _b = (__m512d)(b);                                                            \
        double _m = (is_min) ? _mm512_reduce_min_pd(_b) : _mm512_reduce_max_pd(_b);           \
        __mmask8 _e = _mm512_cmp_pd_mask(_b, _mm512_set1_pd(_m), _CMP_EQ_OQ);                \
        *(m) = _m;                                                                            \
        *(k) = (last) ? _mm512_mask_reduce_max_epi64(_e, (__m512i)(g))                        \
                      : _mm512_mask_reduce_min_epi64(_e, (__m512i)(g));                       \
        _done = 1;                                                                            \
    }                                                                                         \
    _done; })
#else
#define NORMOPS_MASKED_TRACK(T, v, best, group, g, is_min, last) 0
#define NORMOPS_MASKED_FOLD(T, b, g, is_min, last, m, k) 0
#endif

/* Bit l set when lane l of the comparison result b (elements of size bytes)
 * is set: one move-mask instruction where the ISA has one for that size. */
typedef char normops_lane_bytes __attribute__((vector_size(NORMOPS_VECTOR_BYTES)));
static inline __attribute__((always_inline)) unsigned long long normops_lane_mask(normops_lane_bytes b, int size) {
#if defined(__AVX512BW__) && defined(__AVX512DQ__)
    switch (size) {
    case 1: return _mm512_movepi8_mask((__m512i)b);
    case 2: return _mm512_movepi16_mask((__m512i)b);
    case 4: return _mm512_movepi32_mask((__m512i)b);
    default: return _mm512_movepi64_mask((__m512i)b);
    }
#elif defined(__AVX2__)
    if (size == 1) return (unsigned)_mm256_movemask_epi8((__m256i)b);
    if (size == 4) return (unsigned)_mm256_movemask_ps((__m256)b);
    if (size == 8) return (unsigned)_mm256_movemask_pd((__m256d)b);
#elif defined(__SSE2__)
    if (size == 1) return (unsigned)_mm_movemask_epi8((__m128i)b);
    if (size == 4) return (unsigned)_mm_movemask_ps((__m128)b);
    if (size == 8) return (unsigned)_mm_movemask_pd((__m128d)b);
#endif
    unsigned long long r = 0;
    for (int l = 0; l < NORMOPS_VECTOR_BYTES / size; l++)
        if (b[l * size]) r |= 1ull << l;
    return r;
}

/* CALL once per combination of the three flags, spelled MIN_, LAST_, NAN_ in
 * it (each its own loop, with constants). An integer T (HAS_NAN 0, a
 * constant) holds no NaN: find_nan changes nothing there, and only the
 * four loops without it are compiled (the others would double the build
 * time of the integer types for nothing). */
#define NORMOPS_ARGSCAN_CASES(HAS_NAN, CALL) do {                                             \
    if (!(HAS_NAN)) {                                                                         \
        switch ((is_min ? 2 : 0) + (last ? 1 : 0)) {                                          \
        case 0: { enum { MIN_ = 0, LAST_ = 0, NAN_ = 0 }; CALL; break; }                      \
        case 1: { enum { MIN_ = 0, LAST_ = 1, NAN_ = 0 }; CALL; break; }                      \
        case 2: { enum { MIN_ = 1, LAST_ = 0, NAN_ = 0 }; CALL; break; }                      \
        default: { enum { MIN_ = 1, LAST_ = 1, NAN_ = 0 }; CALL; break; }                     \
        }                                                                                     \
        break;                                                                                \
    }                                                                                         \
    switch ((is_min ? 4 : 0) + (last ? 2 : 0) + (find_nan ? 1 : 0)) {                         \
    case 0: { enum { MIN_ = 0, LAST_ = 0, NAN_ = 0 }; CALL; break; }                          \
    case 1: { enum { MIN_ = 0, LAST_ = 0, NAN_ = 1 }; CALL; break; }                          \
    case 2: { enum { MIN_ = 0, LAST_ = 1, NAN_ = 0 }; CALL; break; }                          \
    case 3: { enum { MIN_ = 0, LAST_ = 1, NAN_ = 1 }; CALL; break; }                          \
    case 4: { enum { MIN_ = 1, LAST_ = 0, NAN_ = 0 }; CALL; break; }                          \
    case 5: { enum { MIN_ = 1, LAST_ = 0, NAN_ = 1 }; CALL; break; }                          \
    case 6: { enum { MIN_ = 1, LAST_ = 1, NAN_ = 0 }; CALL; break; }                          \
    default: { enum { MIN_ = 1, LAST_ = 1, NAN_ = 1 }; CALL; break; }                         \
    }                                                                                         \
} while (0)

/* A column tile (see N##_tile) on VB-byte vectors of L lanes, w >= L.
 * Wide tiles (w >= 4L): blocks of NORMOPS_TILE_ROWS rows, each read in strips
 * of 4 vectors of columns whose winners stay in registers for the block
 * (measured: 1.2-1.5x faster than a pass per row with the winners in memory,
 * and than strips down all the rows, which read memory with a large stride
 * and suffer most when rows are not 64-byte aligned). Narrow tiles: strips
 * of one vector down all the rows, with 4 row phases: phase p scans row 0
 * and the rows 1 + p, 5 + p, ... (independent chains), and the phases are
 * then combined by the rule's order on candidates (better value; on a tie
 * the earlier, with select_last_index the later, index; NaN as NAN_MODE
 * says): each phase's winner is the winner of a subsequence that starts
 * with row 0, so the best of them is the column's. The last strip ends at
 * w, overlapping the one before: reading rows again that a winner already
 * includes changes nothing (nothing in them beats it strictly; with
 * select_last_index the last of the equal ones is taken again). */
#define NORMOPS_TILE_STEP(v, b, g, at) do {                                                   \
    tb _t = is_min ? (last ? (v) <= (b) : (v) < (b)) : (last ? (v) >= (b) : (v) > (b));        \
    if (nan_mode == 1) _t |= ((v) != (v)) & ((b) == (b));                                     \
    if (nan_mode == 2) _t |= ((b) != (b)) & ((v) == (v));                                     \
    (b) = (tv)(((tb)(v) & _t) | ((tb)(b) & ~_t));                                             \
    (g) = ((at) & _t) | ((g) & ~_t);                                                          \
} while (0)
#define NORMOPS_TILE_ROWS 8
#define NORMOPS_TILE_STRIPS(T, I, VB) do {                                                    \
    typedef T tv __attribute__((vector_size(VB)));                                            \
    typedef I tb __attribute__((vector_size(VB)));                                            \
    typedef T tu __attribute__((vector_size(VB), aligned(sizeof(T)), may_alias));             \
    typedef I tbu __attribute__((vector_size(VB), aligned(sizeof(I)), may_alias));            \
    const ptrdiff_t L = (VB) / sizeof(T);                                                     \
    tv b[4];                                                                                  \
    tb g[4], one = {0};                                                                       \
    one += 1;                                                                                 \
    if (w >= 4 * L) {                                                                         \
        /* the winners go back to best/index between row blocks */                          \
        for (ptrdiff_t j = 0; j < w; j++) { best[j] = x[j]; index[j] = 0; }                   \
        for (ptrdiff_t i0 = 1; i0 < n; i0 += NORMOPS_TILE_ROWS) {                             \
            ptrdiff_t i1 = n - i0 > NORMOPS_TILE_ROWS ? i0 + NORMOPS_TILE_ROWS : n;           \
            for (ptrdiff_t j0 = 0; j0 < w; j0 += 4 * L) {                                     \
                ptrdiff_t j = j0 + 4 * L <= w ? j0 : w - 4 * L;                               \
                tb at = {0};                                                                  \
                at += (I)(i0 - 1);                                                            \
                _Pragma("GCC unroll 4") for (int t = 0; t < 4; t++) {                         \
                    b[t] = *(tu*)(best + j + t * L); g[t] = *(tbu*)(index + j + t * L);       \
                }                                                                             \
                for (ptrdiff_t i = i0; i < i1; i++) {                                         \
                    const T* row = x + i * inner + j;                                         \
                    at += one;                                                                \
                    _Pragma("GCC unroll 4") for (int t = 0; t < 4; t++) {                     \
                        tv v = *(const tu*)(row + t * L);                                     \
                        NORMOPS_TILE_STEP(v, b[t], g[t], at);                                 \
                    }                                                                         \
                }                                                                             \
                _Pragma("GCC unroll 4") for (int t = 0; t < 4; t++) {                         \
                    *(tu*)(best + j + t * L) = b[t]; *(tbu*)(index + j + t * L) = g[t];       \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
        break;                                                                                \
    }                                                                                         \
    for (ptrdiff_t j0 = 0; j0 < w; j0 += L) {                                                 \
        /* narrow tiles: strips of one vector with 4 row phases */                           \
        {                                                                                     \
            ptrdiff_t j = j0 + L <= w ? j0 : w - L, i = 1;                                    \
            tb at = {0};                                                                      \
            _Pragma("GCC unroll 4") for (int p = 0; p < 4; p++) {                             \
                b[p] = *(const tu*)(x + j); g[p] = at;                                        \
            }                                                                                 \
            for (; i + 4 <= n; i += 4) {                                                      \
                const T* row = x + i * inner + j;                                             \
                _Pragma("GCC unroll 4") for (int p = 0; p < 4; p++) {                         \
                    at += one;                                                                \
                    tv v = *(const tu*)(row + p * inner);                                     \
                    NORMOPS_TILE_STEP(v, b[p], g[p], at);                                     \
                }                                                                             \
            }                                                                                 \
            for (; i < n; i++) {                                                              \
                at += one;                                                                    \
                tv v = *(const tu*)(x + i * inner + j);                                       \
                NORMOPS_TILE_STEP(v, b[0], g[0], at);                                         \
            }                                                                                 \
            _Pragma("GCC unroll 4") for (int p = 1; p < 4; p++) {                             \
                tv c = b[p], a = b[0];                                                        \
                tb take = is_min ? c < a : c > a, na = a != a, nc = c != c;                   \
                take |= (c == a) & (last ? g[p] > g[0] : g[p] < g[0]);                        \
                if (nan_mode == 1) take = (na & nc & (g[p] < g[0])) | (~na & (nc | take));    \
                if (nan_mode == 2) take = (na & ~nc) | (~na & take);                          \
                b[0] = (tv)(((tb)c & take) | ((tb)a & ~take));                                \
                g[0] = (g[p] & take) | (g[0] & ~take);                                        \
            }                                                                                 \
            *(tu*)(best + j) = b[0]; *(tbu*)(index + j) = g[0];                               \
        }                                                                                     \
    }                                                                                         \
} while (0)

/* One element type T, named N: I the lane type of the group numbers,
 * WORST_MAX/WORST_MIN the starting values, HAS_NAN 1 for a floating T */
#define NORMOPS_DEFINE_ARGSCAN(T, N, I, WORST_MAX, WORST_MIN, HAS_NAN)                         \
typedef T N##_av __attribute__((vector_size(NORMOPS_VECTOR_BYTES)));                          \
typedef I N##_ab __attribute__((vector_size(NORMOPS_VECTOR_BYTES)));                          \
typedef T N##_au __attribute__((vector_size(NORMOPS_VECTOR_BYTES), aligned(sizeof(T)), may_alias)); \
enum { N##_AL = NORMOPS_VECTOR_BYTES / sizeof(T), N##_HAS_NAN = HAS_NAN };                  \
                                                                                              \
NORMOPS_ALWAYS_INLINE int N##_better(T a, T b, int is_min) { return is_min ? a < b : a > b; } \
                                                                                              \
NORMOPS_ALWAYS_INLINE int N##_any(N##_ab b) {                                                 \
    typedef unsigned long long w64 __attribute__((vector_size(NORMOPS_VECTOR_BYTES)));        \
    w64 w = (w64)b;                                                                           \
    unsigned long long r = 0;                                                                 \
    for (int q = 0; q < NORMOPS_VECTOR_BYTES / 8; q++) r |= w[q];                             \
    return r != 0;                                                                            \
}                                                                                             \
                                                                                              \
/* first (last) index of x[0..n) equal to value, or NaN when want_nan; -1 if none */          \
NORMOPS_ALWAYS_INLINE ptrdiff_t N##_find(const T* x, ptrdiff_t n, T value, int last, int want_nan) { \
    N##_av zero = {0}, target = zero + value;                                                 \
    ptrdiff_t full = n - n % N##_AL, i;                                                       \
    if (!last) {                                                                              \
        for (i = 0; i < full; i += N##_AL) {                                                  \
            N##_av v = *(const N##_au*)(x + i);                                               \
            unsigned long long m = normops_lane_mask((normops_lane_bytes)(want_nan ? (v != v) : (v == target)), sizeof(T)); \
            if (m) return i + __builtin_ctzll(m);                                             \
        }                                                                                     \
        for (; i < n; i++) if (want_nan ? x[i] != x[i] : x[i] == value) return i;             \
        return -1;                                                                            \
    }                                                                                         \
    for (i = n - 1; i >= full; i--) if (want_nan ? x[i] != x[i] : x[i] == value) return i;    \
    for (i = full - N##_AL; i >= 0; i -= N##_AL) {                                            \
        N##_av v = *(const N##_au*)(x + i);                                                   \
        unsigned long long m = normops_lane_mask((normops_lane_bytes)(want_nan ? (v != v) : (v == target)), sizeof(T)); \
        if (m) return i + 63 - __builtin_clzll(m);                                            \
    }                                                                                         \
    return -1;                                                                                \
}                                                                                             \
                                                                                              \
/* One lane track: the lane's best value and the group where it was taken. */                 \
NORMOPS_ALWAYS_INLINE void N##_track(N##_av v, N##_av* best, N##_ab* group, N##_ab g,          \
                                     int is_min, int last) {                                  \
    if (NORMOPS_MASKED_TRACK(T, v, best, group, g, is_min, last)) return;                     \
    N##_ab take = is_min ? (v < *best) : (v > *best);                                         \
    if (last) take |= v == *best;                                                             \
    *best = (N##_av)(((N##_ab)v & take) | ((N##_ab)*best & ~take));                           \
    *group = (g & take) | (*group & ~take);                                                   \
}                                                                                             \
                                                                                              \
/* Two tracks of the same lanes merged: a tie keeps the earlier (later) group. */            \
NORMOPS_ALWAYS_INLINE void N##_merge(N##_av* best, N##_ab* group, N##_av b, N##_ab g,          \
                                     int is_min, int last) {                                  \
    N##_ab take = is_min ? (b < *best) : (b > *best);                                         \
    take |= (b == *best) & (last ? (g > *group) : (g < *group));                              \
    *best = (N##_av)(((N##_ab)b & take) | ((N##_ab)*best & ~take));                           \
    *group = (g & take) | (*group & ~take);                                                   \
}                                                                                             \
                                                                                              \
/* K (1 or 4, a constant) sequences x + q * stride, q < K, of n >= 1 terms each, side by      \
 * side: four vectors a step in all, so one sequence has four tracks and four                 \
 * sequences one each (four streams from memory read faster than one: measured).              \
 * A group is the part of one sequence one step reads. index[q], value[q] and                 \
 * found_nan[q] as normops_argscan_##N returns and stores them. */                            \
NORMOPS_ALWAYS_INLINE void N##_scan(const T* x, ptrdiff_t stride, ptrdiff_t n, const int K,    \
                                    int is_min, int last, int find_nan,                       \
                                    ptrdiff_t* index, T* value, int* found_nan) {             \
    const T worst = is_min ? (WORST_MIN) : (WORST_MAX);                                      \
    const int GV = 4 / K;  /* vectors in a group, tracks of a sequence */                     \
    const ptrdiff_t G = GV * N##_AL;                                                          \
    /* a group number must fit a lane of I */                                                 \
    const ptrdiff_t per_super = sizeof(I) >= 4 ? ((ptrdiff_t)1 << 30) : ((ptrdiff_t)1 << (8 * sizeof(I) - 1)) - 1; \
    ptrdiff_t full = n - n % G, where[4], wlen[4];                                            \
    T best[4];                                                                                \
    int done[4];                                                                              \
    for (int q = 0; q < K; q++) {                                                             \
        best[q] = worst; where[q] = -1; wlen[q] = 0; done[q] = 0; found_nan[q] = 0;           \
    }                                                                                         \
    for (ptrdiff_t s0 = 0; s0 < full; s0 += per_super * G) {                                 \
        ptrdiff_t s1 = full - s0 > per_super * G ? s0 + per_super * G : full;                 \
        /* track t of sequence q is b[q * GV + t]; every index a constant once                \
         * unrolled, so that the tracks stay in registers */                                  \
        N##_av zero = {0}, b[4];                                                              \
        N##_ab g = {0}, gr[4], nan[4];                                                        \
        _Pragma("GCC unroll 4") for (int t = 0; t < 4; t++) {                                 \
            b[t] = zero + worst; gr[t] = g; nan[t] = g;                                       \
        }                                                                                     \
        /* the last few elements: the group that ends each sequence, overlapping              \
         * the one before (an element seen twice cannot move a first winner to a             \
         * later group, and a last winner inside the suffix is in it) */                      \
        ptrdiff_t groups = (s1 - s0) / G, end = s1;                                           \
        int suffix = s1 == full && full < n;                                                  \
        for (ptrdiff_t s = s0; s < s1 + (suffix ? G : 0); s += G) {                           \
            ptrdiff_t at = s < s1 ? s : n - G;                                                \
            _Pragma("GCC unroll 4") for (int q = 0; q < K; q++) {                             \
                _Pragma("GCC unroll 4") for (int t = 0; t < GV; t++) {                        \
                    N##_av v = *(const N##_au*)(x + q * stride + at + t * N##_AL);            \
                    N##_track(v, &b[q * GV + t], &gr[q * GV + t], g, is_min, last);           \
                    if (find_nan) nan[q] |= v != v;                                           \
                }                                                                             \
            }                                                                                 \
            g += 1;                                                                           \
        }                                                                                     \
        if (suffix) end = n;                                                                  \
        _Pragma("GCC unroll 4") for (int q = 0; q < K; q++) {                                 \
            const T* xq = x + q * stride;                                                     \
            if (done[q]) continue;                                                            \
            if (find_nan && N##_any(nan[q])) {  /* no NaN before s0 */                        \
                done[q] = found_nan[q] = 1;                                                   \
                value[q] = xq[s0];                                                            \
                index[q] = s0 + N##_find(xq + s0, end - s0, worst, 0, 1);                     \
                continue;                                                                     \
            }                                                                                 \
            /* fold: tracks merged (a tie keeps the earlier or later group),                  \
             * then the lanes: the best value M, then its first (last) group */               \
            N##_av b0 = b[q * GV];                                                            \
            N##_ab g0 = gr[q * GV];                                                           \
            if (GV == 4) {                                                                    \
                N##_merge(&b[1], &gr[1], b[3], gr[3], is_min, last);                          \
                N##_merge(&b0, &g0, b[2], gr[2], is_min, last);                               \
                N##_merge(&b0, &g0, b[1], gr[1], is_min, last);                               \
            }                                                                                 \
            T m = worst;                                                                      \
            ptrdiff_t k = -1;                                                                 \
            if (!NORMOPS_MASKED_FOLD(T, b0, g0, is_min, last, &m, &k)) {                      \
                for (int l = 0; l < N##_AL; l++) if (N##_better(b0[l], m, is_min)) m = b0[l]; \
                for (int l = 0; l < N##_AL; l++)                                              \
                    if (b0[l] == m && (k < 0 || (last ? g0[l] > k : g0[l] < k))) k = g0[l];   \
            }                                                                                 \
            if (N##_better(m, best[q], is_min) || (last && m == best[q])) {                   \
                best[q] = m; where[q] = (suffix && k == groups) ? n - G : s0 + k * G; wlen[q] = G; \
            }                                                                                 \
        }                                                                                     \
    }                                                                                         \
    for (int q = 0; q < K; q++) {                                                             \
        const T* xq = x + q * stride;                                                         \
        if (done[q]) continue;                                                                \
        for (ptrdiff_t i = full > 0 ? n : 0; i < n; i++) {  /* shorter than one group */     \
            if (find_nan && xq[i] != xq[i]) {                                                 \
                found_nan[q] = 1; value[q] = xq[i]; index[q] = i; break;                      \
            }                                                                                 \
            if (N##_better(xq[i], best[q], is_min) || (last && xq[i] == best[q])) {           \
                best[q] = xq[i]; where[q] = i; wlen[q] = 1;                                   \
            }                                                                                 \
        }                                                                                     \
        if (found_nan[q]) continue;                                                           \
        value[q] = best[q];                                                                   \
        if (best[q] == worst)  /* a lane of NaN only may have tied: search everything */     \
            index[q] = N##_find(xq, n, best[q], last, 0);                                     \
        else                                                                                  \
            index[q] = where[q] + N##_find(xq + where[q], wlen[q], best[q], last, 0);         \
    }                                                                                         \
}                                                                                             \
                                                                                              \
/* The scan of x[0..n) with NaN ignored: returns the winner's index (-1 when                  \
 * every element is NaN) and stores its value. With find_nan, a NaN anywhere                  \
 * ends the scan: *found_nan = 1 and the first NaN's index is returned.                       \
 * Each flag combination is its own loop. */                                                  \
static inline ptrdiff_t normops_argscan_##N(const T* x, ptrdiff_t n, int is_min, int last,    \
                                            int find_nan, T* value, int* found_nan) {         \
    ptrdiff_t index = -1;  /* always set; gcc cannot see it */                           \
    NORMOPS_ARGSCAN_CASES(N##_HAS_NAN, N##_scan(x, 0, n, 1, MIN_, LAST_, NAN_, &index, value, found_nan)); \
    return index;                                                                             \
}                                                                                             \
                                                                                              \
/* Column layout: the w neighbouring sequences x[i * inner + j], i < n (n >= 1),            \
 * j < w, side by side, row by row: best[j] and index[j] hold each one's                      \
 * running winner, as the sequential rule updates it (the lanes are the                       \
 * sequences, so no fold is needed). NAN_MODE 1 (NumPy's rule): a NaN replaces                \
 * a non-NaN winner; 2 (a long sequence's block after the first): a non-NaN                   \
 * replaces a NaN winner, so the block's winner is its best non-NaN value.                    \
 * Index lanes have T's width: callers keep n within I. */                                    \
NORMOPS_ALWAYS_INLINE int N##_tile_take(T v, T b, int is_min, int last, int nan_mode) {        \
    int take = is_min ? (last ? v <= b : v < b) : (last ? v >= b : v > b);                    \
    if (nan_mode == 1) take |= (v != v) & (b == b);                                           \
    if (nan_mode == 2) take |= (b != b) & (v == v);                                           \
    return take;                                                                              \
}                                                                                             \
                                                                                              \
NORMOPS_ALWAYS_INLINE void N##_tile(const T* x, ptrdiff_t n, ptrdiff_t inner, ptrdiff_t w,     \
                                    int is_min, int last, int nan_mode, T* best, I* index) {  \
    if (w >= N##_AL)                                                                          \
        NORMOPS_TILE_STRIPS(T, I, NORMOPS_VECTOR_BYTES);                                      \
    else if (NORMOPS_VECTOR_BYTES > 32 && w >= (ptrdiff_t)(32 / sizeof(T)))                   \
        NORMOPS_TILE_STRIPS(T, I, 32);  /* narrow tiles: narrower vectors */                  \
    else if (w >= (ptrdiff_t)(16 / sizeof(T)))                                                \
        NORMOPS_TILE_STRIPS(T, I, 16);                                                        \
    else {                                                                                    \
        for (ptrdiff_t j = 0; j < w; j++) { best[j] = x[j]; index[j] = 0; }                   \
        for (ptrdiff_t i = 1; i < n; i++)                                                     \
            for (ptrdiff_t j = 0; j < w; j++)                                                 \
                if (N##_tile_take(x[i * inner + j], best[j], is_min, last, nan_mode)) {       \
                    best[j] = x[i * inner + j]; index[j] = (I)i;                              \
                }                                                                             \
    }                                                                                         \
}                                                                                             \
                                                                                              \
static inline void normops_argtile_##N(const T* x, ptrdiff_t n, ptrdiff_t inner, ptrdiff_t w, \
                                       int is_min, int last, int find_nan, int skip_nan,      \
                                       T* best, I* index) {                                   \
    if (!N##_HAS_NAN) {  /* no NaN: NaN modes 1 and 2 are mode 0 (see NORMOPS_ARGSCAN_CASES) */ \
        switch ((is_min ? 2 : 0) + (last ? 1 : 0)) {                                          \
        case 0: N##_tile(x, n, inner, w, 0, 0, 0, best, index); break;                        \
        case 1: N##_tile(x, n, inner, w, 0, 1, 0, best, index); break;                        \
        case 2: N##_tile(x, n, inner, w, 1, 0, 0, best, index); break;                        \
        default: N##_tile(x, n, inner, w, 1, 1, 0, best, index); break;                       \
        }                                                                                     \
        return;                                                                               \
    }                                                                                         \
    switch ((is_min ? 6 : 0) + (last ? 3 : 0) + (find_nan ? 1 : skip_nan ? 2 : 0)) {          \
    case 0: N##_tile(x, n, inner, w, 0, 0, 0, best, index); break;                            \
    case 1: N##_tile(x, n, inner, w, 0, 0, 1, best, index); break;                            \
    case 2: N##_tile(x, n, inner, w, 0, 0, 2, best, index); break;                            \
    case 3: N##_tile(x, n, inner, w, 0, 1, 0, best, index); break;                            \
    case 4: N##_tile(x, n, inner, w, 0, 1, 1, best, index); break;                            \
    case 5: N##_tile(x, n, inner, w, 0, 1, 2, best, index); break;                            \
    case 6: N##_tile(x, n, inner, w, 1, 0, 0, best, index); break;                            \
    case 7: N##_tile(x, n, inner, w, 1, 0, 1, best, index); break;                            \
    case 8: N##_tile(x, n, inner, w, 1, 0, 2, best, index); break;                            \
    case 9: N##_tile(x, n, inner, w, 1, 1, 0, best, index); break;                            \
    case 10: N##_tile(x, n, inner, w, 1, 1, 1, best, index); break;                           \
    default: N##_tile(x, n, inner, w, 1, 1, 2, best, index); break;                           \
    }                                                                                         \
}                                                                                             \
                                                                                              \
/* The same for the four sequences x + q * stride, q < 4, all n >= 1 terms long,              \
 * side by side: index[q], value[q], found_nan[q]. */                                         \
NORMOPS_NO_THREAD_JUMPS static inline void normops_argscan4_##N(const T* x, ptrdiff_t stride, ptrdiff_t n, int is_min, \
                                        int last, int find_nan, ptrdiff_t* index, T* value,   \
                                        int* found_nan) {                                     \
    NORMOPS_ARGSCAN_CASES(N##_HAS_NAN, N##_scan(x, stride, n, 4, MIN_, LAST_, NAN_, index, value, found_nan)); \
}

NORMOPS_DEFINE_ARGSCAN(float, f32, int32_t, -__builtin_inff(), __builtin_inff(), 1)
NORMOPS_DEFINE_ARGSCAN(double, f64, int64_t, -__builtin_inf(), __builtin_inf(), 1)
NORMOPS_DEFINE_ARGSCAN(int8_t, i8, int8_t, INT8_MIN, INT8_MAX, 0)
NORMOPS_DEFINE_ARGSCAN(int16_t, i16, int16_t, INT16_MIN, INT16_MAX, 0)
NORMOPS_DEFINE_ARGSCAN(int32_t, i32, int32_t, INT32_MIN, INT32_MAX, 0)
NORMOPS_DEFINE_ARGSCAN(int64_t, i64, int64_t, INT64_MIN, INT64_MAX, 0)
NORMOPS_DEFINE_ARGSCAN(uint8_t, u8, int8_t, 0, UINT8_MAX, 0)
NORMOPS_DEFINE_ARGSCAN(uint16_t, u16, int16_t, 0, UINT16_MAX, 0)
NORMOPS_DEFINE_ARGSCAN(uint32_t, u32, int32_t, 0, UINT32_MAX, 0)
NORMOPS_DEFINE_ARGSCAN(uint64_t, u64, int64_t, 0, UINT64_MAX, 0)

#endif
