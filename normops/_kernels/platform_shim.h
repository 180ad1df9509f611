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
#else
#define NORMOPS_X86_64 0
static inline int normops_cpu_has_level(int level) { return level == 0; }
static inline unsigned int normops_mxcsr(void) { return 0; }
#endif

#endif
