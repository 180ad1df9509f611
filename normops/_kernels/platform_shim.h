/* The one OpenMP shim, plus CPU probes, for every kernel build.
 *
 * Without OpenMP the stubs below keep the kernels compiling and running
 * serially; Cython guards its own prange pragmas with _OPENMP as well. */
#ifndef NORMOPS_PLATFORM_SHIM_H
#define NORMOPS_PLATFORM_SHIM_H

#ifdef _OPENMP
#include <omp.h>
#define NORMOPS_HAVE_OPENMP 1
#else
#define NORMOPS_HAVE_OPENMP 0
static inline int omp_get_max_threads(void) { return 1; }
static inline int omp_get_num_procs(void) { return 1; }
static inline int omp_get_thread_num(void) { return 0; }
#endif

/* The process-wide thread budget (docs/specification.md §14.4): how many threads are
 * inside normops's parallel loops right now, summed over every calling
 * thread (a map_batch pool, dask's threaded scheduler, a user's threads).
 * A loop whose count was left to the configuration gets at most the cores
 * the others leave free (at least 1; its whole team when nothing else
 * runs); an explicit per-call count is granted as asked, and counted. Every
 * ISA build loaded in the process points normops_budget at the first
 * build's counter (normops._isa shares it). */
typedef struct {
    int in_use;               /* threads inside parallel loops now */
    long long late_until;     /* CLOCK_MONOTONIC ns: loops run on one thread until then (0: never) */
    long long backoff;        /* ns of one thread after the last late team (0: none) */
} normops_team_state;
static normops_team_state normops_team_own = {0, 0, 0};
static normops_team_state* normops_team = &normops_team_own;
#define normops_budget (&normops_team->in_use)

static inline int normops_budget_grant(int team, int in_use, int cores) {
    if (in_use <= 0)
        return team;
    if (team > cores - in_use)
        team = cores - in_use;
    return team < 1 ? 1 : team;
}

/* Threads a loop of `team` threads may start now, counted until released. */
static inline int normops_budget_take(int team, int budgeted) {
    int in_use, grant;
    if (!budgeted) {
        __atomic_fetch_add(normops_budget, team, __ATOMIC_ACQ_REL);
        return team;
    }
    in_use = __atomic_load_n(normops_budget, __ATOMIC_ACQUIRE);
    do {
        grant = normops_budget_grant(team, in_use, omp_get_num_procs());
    } while (!__atomic_compare_exchange_n(normops_budget, &in_use, in_use + grant, 1,
                                          __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
    return grant;
}

static inline void normops_budget_release(int taken) {
    __atomic_fetch_sub(normops_budget, taken, __ATOMIC_ACQ_REL);
}

static inline void normops_budget_share(void* state) {
    normops_team = (normops_team_state*)state;
}

static inline void* normops_budget_state(void) {
    return normops_team;
}

/* Late teams. A parallel loop waits at its end for every thread of its
 * team, including one that has not yet had a CPU: when another process
 * keeps the cores busy, that wait is a scheduler time slice or more (4-16
 * ms measured here for a 20 µs call). A loop that takes far longer than
 * its work can (4 ns per weighted element per thread, plus 2 ms: every
 * kernel at every ISA level is faster than that)
 * sends the process's following loops to one thread for a while: 50 ms,
 * doubled after each late loop up to 1 s, forgotten after a loop on time.
 * Thread counts never change a bit, so this only moves time. */
#include <time.h>
#define NORMOPS_LATE_SLACK_NS 2000000LL
#define NORMOPS_LATE_FIRST_NS 50000000LL
#define NORMOPS_LATE_MAX_NS 1000000000LL
static __thread long long normops_region_expect_ns = 0, normops_region_start_ns = 0;

static inline long long normops_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* True while loops should stay on one thread. */
static inline int normops_team_late(void) {
    long long until = __atomic_load_n(&normops_team->late_until, __ATOMIC_RELAXED);
    return until != 0 && normops_now_ns() < until;
}

/* The loop about to run on `threads` threads has this much weighted work. */
static inline void normops_region_expect(long long weighted_elements, int threads) {
    normops_region_expect_ns = 4 * (weighted_elements / (threads > 0 ? threads : 1)) + NORMOPS_LATE_SLACK_NS;
}

static inline void normops_region_begin(void) {
    normops_region_start_ns = normops_now_ns();
}

/* The loop's time against its expectation; `took` < 0 measures the clock. */
static inline void normops_region_judge(long long took, long long expect) {
    long long backoff;
    if (expect <= 0)
        return;
    if (took > expect) {
        backoff = __atomic_load_n(&normops_team->backoff, __ATOMIC_RELAXED);
        backoff = backoff <= 0 ? NORMOPS_LATE_FIRST_NS
                  : (2 * backoff > NORMOPS_LATE_MAX_NS ? NORMOPS_LATE_MAX_NS : 2 * backoff);
        __atomic_store_n(&normops_team->backoff, backoff, __ATOMIC_RELAXED);
        __atomic_store_n(&normops_team->late_until, normops_now_ns() + backoff, __ATOMIC_RELAXED);
    } else if (__atomic_load_n(&normops_team->backoff, __ATOMIC_RELAXED) != 0) {
        __atomic_store_n(&normops_team->backoff, 0, __ATOMIC_RELAXED);
    }
}

static inline void normops_team_forget(void) {
    __atomic_store_n(&normops_team->backoff, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&normops_team->late_until, 0, __ATOMIC_RELAXED);
}

static inline void normops_region_end(void) {
    long long expect = normops_region_expect_ns;
    normops_region_expect_ns = 0;
    normops_region_judge(normops_now_ns() - normops_region_start_ns, expect);
}

static inline int normops_budget_in_use(void) {
    return __atomic_load_n(normops_budget, __ATOMIC_ACQUIRE);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <xmmintrin.h>
#define NORMOPS_X86_64 1
/* "x86-64-v3" = AVX2 + FMA + F16C + BMI; "x86-64-v4" adds AVX-512 F/BW/CD/DQ/VL.
 * libgcc also checks that the OS saves the wider registers. */
static inline int normops_cpu_has_level(int level) {
    __builtin_cpu_init();
    switch (level) {
    case 0: return 1;
    case 1: return __builtin_cpu_supports("x86-64-v3");
    case 2: return __builtin_cpu_supports("x86-64-v4");
    default: return 0;
    }
}
/* FTZ (bit 15) and DAZ (bit 6): set by a -ffast-math library, they would
 * flush subnormals and change exact results. */
static inline unsigned int normops_mxcsr(void) { return _mm_getcsr(); }
#elif defined(__aarch64__) && defined(__GNUC__)
#define NORMOPS_X86_64 0
static inline int normops_cpu_has_level(int level) { return level == 0; }
/* FPCR.FZ (bit 24) flushes subnormal inputs and results alike: reported in
 * MXCSR's terms, as both FTZ and DAZ. */
static inline unsigned int normops_mxcsr(void) {
    unsigned long fpcr;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
    return ((fpcr >> 24) & 1u) ? (1u << 15) | (1u << 6) : 0u;
}
#else
#define NORMOPS_X86_64 0
static inline int normops_cpu_has_level(int level) { return level == 0; }
static inline unsigned int normops_mxcsr(void) { return 0; }
#endif

/* IEEE binary16 storage. gcc >= 12 and clang >= 15 have _Float16 on x86-64
 * and AArch64: conversions to and from float are exact / correctly rounded
 * (F16C or AVX-512 FP16 instructions where the build allows, else libgcc).
 * Without it the front layer converts with NumPy instead. */
#if defined(__FLT16_MAX__)
typedef _Float16 normops_float16;
#define NORMOPS_HAVE_FLOAT16 1
#else
typedef unsigned short normops_float16;
#define NORMOPS_HAVE_FLOAT16 0
#endif

/* Storage conversions (no arithmetic): binary16 and bfloat16 <-> float32.
 * Widening is exact; narrowing rounds to nearest, ties to even, and turns
 * a NaN into the canonical NaN of the narrow type. F16C converts 8 values
 * per instruction where the build has it; the scalar tail and other builds
 * use the compiler's own _Float16 conversions, which are the same IEEE
 * operations. */
#include <stdint.h>
#include <string.h>
#if defined(__F16C__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

static inline void normops_widen_float16(const uint16_t* src, float* dst, ptrdiff_t n) {
    ptrdiff_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(src + i))));
#endif
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(src + i))));
#endif
#if NORMOPS_HAVE_FLOAT16
    for (; i < n; i++) {
        normops_float16 h;
        memcpy(&h, src + i, 2);
        dst[i] = (float)h;
    }
#endif
}

static inline void normops_narrow_float16(const float* src, uint16_t* dst, ptrdiff_t n) {
    ptrdiff_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i*)(dst + i),
                            _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i*)(dst + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
#if NORMOPS_HAVE_FLOAT16
    for (; i < n; i++) {
        normops_float16 h = (normops_float16)src[i];
        memcpy(dst + i, &h, 2);
    }
#endif
}

static inline void normops_widen_bfloat16(const uint16_t* src, float* dst, ptrdiff_t n) {
    uint32_t* d = (uint32_t*)dst;  /* float and uint32_t share size and alignment */
    for (ptrdiff_t i = 0; i < n; i++)
        d[i] = (uint32_t)src[i] << 16;
}

static inline void normops_narrow_bfloat16(const float* src, uint16_t* dst, ptrdiff_t n) {
    const uint32_t* s = (const uint32_t*)src;
    for (ptrdiff_t i = 0; i < n; i++) {
        uint32_t bits = s[i];
        uint16_t rounded = (uint16_t)((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
        dst[i] = (bits & 0x7FFFFFFFu) > 0x7F800000u ? (uint16_t)0x7FC0 : rounded;
    }
}

#endif
