# The thread decisions' figures (team.h) and the thread budget, shown,
# pinned and driven from Python: normops/_threads.py's face of the cost
# model. Part of the routes module (compiled once). The process has one
# team state, this module's: every ISA build loaded takes it (KernelBuild,
# kernel_build.pxi), and the figures shown are the chosen build's level's.

from normops._kernels.shim cimport (
    NORMOPS_COST_FAMILIES, NORMOPS_GAP_BUCKETS, NORMOPS_IDLE_FROM_BUCKET, NORMOPS_TEAM_FLOOR_PS,
    NORMOPS_GAIN_PERCENT, NORMOPS_SIZES, normops_team_state, normops_cost_ps, normops_team_figures,
    normops_join_estimate, normops_budget_state, normops_budget_grant, normops_budget_in_use,
    normops_team_take, normops_team_release, normops_team_forget, normops_team_choose, normops_set_threads_always,
    omp_get_num_procs,
    normops_stretch_from_size, normops_team_set_core_cache, normops_wake_learn, normops_gap_slot,
    normops_cost_settled, normops_team_learn_loop,
)

# the chosen build's ISA level (0 baseline, 1 AVX2, 2 AVX-512)
cdef int LEVEL = 0
# team.h's cost families, in its order
FAMILY_NAMES = ("rows", "reduce", "softmax_exact", "softmax_fast", "map_exact", "map_fast", "scan", "move",
                "rows_rms", "reduce_exp_exact", "reduce_exp_fast", "scan_lines")
SIZE_CLASSES = ("<64Ki", "<128Ki", "<256Ki", "<512Ki", "<1Mi", "<2Mi", "<4Mi", "<8Mi", "<16Mi", "<32Mi", "<64Mi",
                ">=64Mi")  # elements; team.h, normops_size_class


cdef KernelTable* table_of(object module) except NULL:
    return <KernelTable*>PyCapsule_GetPointer(module.KERNEL_TABLE, KERNEL_TABLE_NAME)


cdef use_team_state(KernelTable* table):
    """Show and pin the figures at the level of the build every call uses."""
    global LEVEL
    LEVEL = table.figures_level


def forget_thread_costs():
    """Forget every learned figure (pinned ones stay) and the calling
    thread's last team."""
    normops_team_forget()
    KERNELS.forget_last_team()


def planned_threads(int cap, long long chunks, long long chunk_elements, long long elements, str family,
                    gap_us=None, bint idle=False):
    """The team team.h chooses for such a loop when the calling thread's
    last team stopped gap_us ago (None: never), a gap it spent idle or not,
    and the loop's one-thread estimate in µs (tests and show_config; no
    state changes)."""
    cdef double w = 0
    cdef int slow = 0, stretched = 0
    cdef int slot = normops_gap_slot(-1 if gap_us is None else <long long>(gap_us * 1000), idle)
    n = normops_team_choose(cap, chunks, chunk_elements, elements, FAMILY_NAMES.index(family), LEVEL, slot, &w,
                            &slow, &stretched)
    return n, w / 1e6


def loop_threads(int cap, long long chunks, long long elements, str family):
    """What a loop's own decision (team_plan in the build every call uses,
    with the calling thread's real gap and the retries) gives now, without
    running it (tests)."""
    return KERNELS.loop_threads(cap, chunks, (elements + chunks - 1) // max(chunks, 1), elements,
                                FAMILY_NAMES.index(family))


def set_threads_always(bint always):
    """Every loop with chunks to share takes its whole team, however small
    (tests drive the parallel paths with it); returns the old setting."""
    return bool(normops_set_threads_always(always))


def threads_in_use(object module=None):
    """Threads inside normops's parallel loops right now (the budget), as
    the build every call uses counts them, or as ``module`` does."""
    return (KERNELS if module is None else table_of(module)).threads_in_use()


def usable_cores():
    """The cores the budget shares out: omp_get_num_procs() (this process's
    CPU affinity), or 1 without OpenMP."""
    return omp_get_num_procs()


def budget_grant(int team, int in_use, int cores):
    """Threads granted to a budgeted loop of team threads when in_use are
    taken out of cores (tests check the rule)."""
    return normops_budget_grant(team, in_use, cores)


def take_threads(int team, int requested):
    """A loop's take of the budget, from Python (tests hold part of it with
    it): requested <= 0 is budgeted; give the result back with
    release_threads."""
    return normops_team_take(team, requested <= 0)


def release_threads(int taken):
    normops_team_release(taken)


def thread_costs():
    """The figures team.h decides with, for the chosen build's ISA level: ns per
    element of each family (measured, or the prior while unmeasured: see
    `measured`), the wake-up delay L in µs by gap (keyed by the shortest
    gap of each bucket, in µs; None where unmeasured), the per-thread join
    cost, and which are pinned."""
    cdef normops_team_state* s = normops_team_figures()
    cdef int f, b
    return {
        "ns_per_element": {FAMILY_NAMES[f]: normops_cost_ps(LEVEL, f, 1 << 16) / 1000.0
                           for f in range(NORMOPS_COST_FAMILIES)},
        "ns_per_element_by_size": {
            FAMILY_NAMES[f]: {label: (s.ps_per_element[LEVEL][f][k] / 1000.0
                                      if s.cost_samples[LEVEL][f][k] > 0 or s.cost_pinned[f] else None)
                              for k, label in enumerate(SIZE_CLASSES)}
            for f in range(NORMOPS_COST_FAMILIES)},
        "measured": {FAMILY_NAMES[f]: any(s.cost_samples[LEVEL][f][k] > 0 for k in range(NORMOPS_SIZES))
                     for f in range(NORMOPS_COST_FAMILIES)},
        "pinned": {FAMILY_NAMES[f]: bool(s.cost_pinned[f]) for f in range(NORMOPS_COST_FAMILIES)},
        "wake_us": {gap_bucket_lower_edge_us(b): (None if s.wake_ns[b] < 0 else s.wake_ns[b] / 1000.0)
                    for b in range(NORMOPS_GAP_BUCKETS)},
        "end_us": {gap_bucket_lower_edge_us(b): (s.end_ns[b] / 1000.0 if s.end_count[b] > 0 else None)
                   for b in range(NORMOPS_GAP_BUCKETS)},
        "wake_us_idle": {gap_bucket_lower_edge_us(b): (None if s.wake_ns[b + NORMOPS_GAP_BUCKETS] < 0
                                                       else s.wake_ns[b + NORMOPS_GAP_BUCKETS] / 1000.0)
                         for b in range(NORMOPS_IDLE_FROM_BUCKET, NORMOPS_GAP_BUCKETS)},
        "stretch_by_size": {
            FAMILY_NAMES[f]: {label: (s.stretch_pm[LEVEL][f][k] / 1000.0
                                      if s.stretch_count[LEVEL][f][k] > 0 or s.stretch_pinned[f]
                                      else None)
                              for k, label in enumerate(SIZE_CLASSES)}
            for f in range(NORMOPS_COST_FAMILIES)},
        "stretch_pinned": {FAMILY_NAMES[f]: bool(s.stretch_pinned[f]) for f in range(NORMOPS_COST_FAMILIES)},
        "wake_pinned": bool(s.wake_pinned),
        "join_us": normops_join_estimate() / 1000.0,
        "join_pinned": s.join_ns >= 0,
        "stretch_from_elements": 1 << (15 + normops_stretch_from_size()),
        "floor_us": NORMOPS_TEAM_FLOOR_PS / 1e6,
        "gain_percent": NORMOPS_GAIN_PERCENT,
    }


def learn_wake_up(gap_us, double wake_us, bint idle=False):
    """Teach L one measured wake-up of wake_us after a gap of gap_us (None:
    no team yet) that the caller spent idle or not, as a parallel loop
    does (tests)."""
    normops_wake_learn(normops_gap_slot(-1 if gap_us is None else <long long>(gap_us * 1000), idle),
                       <long long>(wake_us * 1000))


def learn_team_loop(str family, long long elements, gap_us, int n, double took_us, claimed_us, caller=None):
    """Teach the figures one loop of `family` over `elements` that took
    took_us on n threads after a busy gap of gap_us, another thread of the
    team first claiming work claimed_us after its start (None: none did),
    W being the family's figure for that size, at the chosen build's
    level; caller: (µs from the start
    to the caller's first claim, its claims before another thread's first,
    its claims after), or None for a caller that never worked alone (tests)."""
    cdef int f = FAMILY_NAMES.index(family)
    first_us, solo, shared = (None, 0, 0) if caller is None else caller
    normops_team_learn_loop(LEVEL, f, normops_gap_slot(<long long>(gap_us * 1000), 0), elements,
                            <double>normops_cost_ps(LEVEL, f, elements) * elements, n, <long long>(took_us * 1000),
                            -1 if claimed_us is None else <long long>(claimed_us * 1000),
                            -1 if first_us is None else <long long>(first_us * 1000), solo, shared)


def cost_settled(int samples, double w_us):
    """Whether a size class's one-thread figure, from `samples` timed serial
    loops of w_us, is settled enough for its parallel loops to teach L or
    s (tests)."""
    return bool(normops_cost_settled(samples, w_us * 1e6))


def gap_bucket_lower_edge_us(int bucket):
    """The shortest gap, in µs, of a gap bucket."""
    return 0 if bucket == 0 else 1 << (bucket - 1)


def pin_thread_costs(ns_per_element=None, wake_us=None, join_us=None, stretch=None):
    """Pin figures for every ISA level (None leaves one as it is, learned or
    pinned; an empty dict unpins): ns_per_element, family -> ns;
    stretch, family -> s (1: a team shares the work perfectly);
    wake_us, a step function as a dict: gap in µs -> L in µs for that gap
    and longer ones (the smallest key also covers shorter gaps); join_us,
    µs, or () to unpin. Pinned figures are not learned. Checked by normops._threads."""
    cdef normops_team_state* s = normops_team_figures()
    cdef int f, b, level, k
    if ns_per_element is not None:
        for f in range(NORMOPS_COST_FAMILIES):
            name = FAMILY_NAMES[f]
            s.cost_pinned[f] = name in ns_per_element
            for level in range(3):
                for k in range(NORMOPS_SIZES):
                    s.ps_per_element[level][f][k] = (max(1, round(float(ns_per_element[name]) * 1000))
                                                     if name in ns_per_element else 0)
                    s.cost_samples[level][f][k] = 0
    if wake_us is not None:
        s.wake_pinned = bool(wake_us)
        steps = sorted((float(gap), float(value)) for gap, value in wake_us.items())
        for b in range(2 * NORMOPS_GAP_BUCKETS):  # busy gaps, then idle ones alike
            value = steps[0][1] if steps else -1.0
            for gap, step in steps:
                if gap <= gap_bucket_lower_edge_us(b % NORMOPS_GAP_BUCKETS):
                    value = step
            s.wake_ns[b] = -1 if value < 0 else round(value * 1000)
            s.wake_count[b] = 0
    if join_us is not None:
        s.join_ns = -1 if join_us == () else max(0, round(float(join_us) * 1000))
    if stretch is not None:
        for f in range(NORMOPS_COST_FAMILIES):
            name = FAMILY_NAMES[f]
            s.stretch_pinned[f] = name in stretch
            for level in range(3):
                for k in range(NORMOPS_SIZES):
                    s.stretch_pm[level][f][k] = round(float(stretch[name]) * 1000) if name in stretch else 0
                    s.stretch_count[level][f][k] = 0


def set_core_cache_bytes(long long nbytes):
    """One core's own cache (L2) size as the system reports it (0: unknown):
    loops whose float32 data exceed it teach the team's stretch s, smaller
    ones the wake-up L (team.h). Shared by every ISA build."""
    normops_team_set_core_cache(nbytes)
