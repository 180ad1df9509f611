# Declarations of platform_shim.h: OpenMP (or its serial stubs) and CPU probes.
cdef extern from "platform_shim.h" nogil:
    const int NORMOPS_HAVE_OPENMP
    const int NORMOPS_X86_64
    const int NORMOPS_HAVE_FLOAT16
    int omp_get_max_threads()
    int omp_get_num_procs()
    int omp_get_thread_num()
    int normops_cpu_has_level(int level)
    unsigned int normops_mxcsr()
    void normops_widen_float16(const unsigned short* src, float* dst, Py_ssize_t n)
    void normops_narrow_float16(const float* src, unsigned short* dst, Py_ssize_t n)
    void normops_widen_bfloat16(const unsigned short* src, float* dst, Py_ssize_t n)
    void normops_narrow_bfloat16(const float* src, unsigned short* dst, Py_ssize_t n)
    int normops_budget_grant(int team, int in_use, int cores)
    int normops_budget_take(int team, int budgeted)
    void normops_budget_release(int taken)
    int normops_budget_in_use()
    void normops_budget_share(void* state)
    void* normops_budget_state()
    int normops_team_late()
    void normops_region_expect(long long weighted_elements, int threads)
    void normops_region_begin()
    void normops_region_end()
    void normops_region_judge(long long took, long long expect)
    void normops_team_forget()
