# What the build can do and what the CPU runs (normops._isa, show_config):
# the same for every ISA build, so answered once, here.

from normops._kernels.shim cimport (
    NORMOPS_HAVE_OPENMP, NORMOPS_X86_64, NORMOPS_HAVE_FLOAT16, omp_get_max_threads, normops_cpu_has_level,
    normops_mxcsr,
)


def float16_storage():
    """True when the builds convert float16 themselves (gcc/clang _Float16)."""
    return bool(NORMOPS_HAVE_FLOAT16)


def openmp_enabled():
    """True when the builds run their loops with OpenMP."""
    return bool(NORMOPS_HAVE_OPENMP)


def max_threads():
    """omp_get_max_threads() of the calling thread (OMP_NUM_THREADS,
    threadpoolctl's limit), or 1 without OpenMP."""
    return omp_get_max_threads()


def built_for_x86_64():
    return bool(NORMOPS_X86_64)


def cpu_has_level(int level):
    """0 = baseline, 1 = x86-64-v3 (AVX2), 2 = x86-64-v4 (AVX-512)."""
    return bool(normops_cpu_has_level(level))


def mxcsr():
    """The SSE control register of the calling thread (on aarch64, FPCR.FZ
    as its FTZ and DAZ bits; 0 on other CPUs)."""
    return normops_mxcsr()
