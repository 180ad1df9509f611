# Declarations of platform_shim.h: OpenMP (or its serial stubs) and CPU probes.
cdef extern from "platform_shim.h" nogil:
    const int NORMOPS_HAVE_OPENMP
    const int NORMOPS_X86_64
    int omp_get_max_threads()
    int omp_get_num_procs()
    int normops_cpu_has_level(int level)
    unsigned int normops_mxcsr()
