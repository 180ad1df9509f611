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

#include "team.h"

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
