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
    int normops_budget_in_use()
    void normops_budget_share(void* state)
    void* normops_budget_state()

cdef extern from "team.h" nogil:
    enum:
        NORMOPS_COST_ROWS
        NORMOPS_COST_REDUCE
        NORMOPS_COST_SOFTMAX_EXACT
        NORMOPS_COST_SOFTMAX_FAST
        NORMOPS_COST_MAP_EXACT
        NORMOPS_COST_MAP_FAST
        NORMOPS_COST_SCAN
        NORMOPS_COST_MOVE
        NORMOPS_COST_ROWS_RMS
        NORMOPS_COST_REDUCE_EXP_EXACT
        NORMOPS_COST_REDUCE_EXP_FAST
        NORMOPS_COST_SCAN_LINES
        NORMOPS_COST_FAMILIES
        NORMOPS_GAP_BUCKETS
        NORMOPS_IDLE_FROM_BUCKET
        NORMOPS_LEVELS
        NORMOPS_THIS_LEVEL
        NORMOPS_TEAM_FLOOR_PS
        NORMOPS_GAIN_PERCENT
        NORMOPS_SIZES
    ctypedef struct normops_team_state:
        long long ps_per_element[3][12][12]
        int cost_samples[3][12][12]
        int cost_pinned[12]
        long long wake_ns[48]
        unsigned wake_count[48]
        int wake_pinned
        long long join_ns
        long long stretch_pm[3][12][12]
        unsigned stretch_count[3][12][12]
        int stretch_pinned[12]
        int stretch_from_size
        long long end_ns[48]
        unsigned end_count[48]
    long long normops_cost_ps(int level, int family, long long elements)
    int normops_gap_bucket(long long gap_ns)
    int normops_gap_slot(long long gap_ns, int idle)
    int normops_team_choose(int cap, long long chunks, long long chunk_elements, long long elements,
                            int family, int level, int slot, double* w_ps, int* slow_gap, int* stretched)
    int normops_team_plan(int cap, long long chunks, long long chunk_elements, long long elements, int family)
    void normops_loop_begin(int n)
    void normops_loop_end(int n)
    int normops_team_take(int team, int budgeted)
    void normops_team_release(int taken)
    void normops_team_forget()
    int normops_stretch_from_size()
    void normops_team_set_core_cache(long long bytes)
    normops_team_state* normops_team_figures()
    void normops_team_note_region_end(long long ns_ago)
    void normops_plan_drop()
    int normops_set_threads_always(int always)
    long long normops_join_estimate()
    void normops_wake_learn(int slot, long long obs)
    long long* normops_claim_slot()
    void normops_team_claims(long long* slot)
    void normops_team_learn_loop(int level, int family, int slot, long long elements, double w_ps, int n,
                                 long long took_ns, long long claimed_ns, long long caller_first_ns,
                                 unsigned solo_claims, unsigned shared_claims)
    int normops_cost_settled(int samples, double w_ps)
