/* Thread teams: the process-wide thread budget, and how many threads a
 * parallel loop takes, from costs measured on this machine
 * (docs/design.md, "Threads"; docs/specification.md, "Chunks and threads").
 *
 * An OpenMP loop returns when every thread of its team has arrived at its
 * end. The chunks are claimed, so the calling thread does all of them if
 * it must; but it still waits for a worker that has not yet had a CPU:
 * a microsecond while OpenMP's idle threads spin, tens of microseconds
 * once they sleep, milliseconds on a virtual machine whose idle CPU the
 * host has lent to someone else. So a loop takes a second (or n-th)
 * thread only where the time that saves is larger than what the team
 * costs at that moment:
 *
 *   W  the loop's time on one thread: its elements times the cost of an
 *      element of its kernel family at this ISA level and for inputs of
 *      its size class (in the caches or not), learned from the serial
 *      loops this process runs: one in four above a floor; the first
 *      three loops of a family and size class above it run serially to be
 *      timed (one, where it shows them over 2 ms; up to 20 ms), and then one loop in
 *      eight that would have had a team,
 *      until sixteen are timed (unless they are long); the figure is the
 *      lower median of the last five, and never more than n times what a
 *      loop on n threads took;
 *   L  the delay before a woken team takes work, measured in every
 *      parallel loop this process runs: from its start to the first chunk
 *      a thread other than the caller claims (normops_team_claims; a team
 *      whose other threads claimed nothing counts its whole time),
 *      separately for each "gap": the time since
 *      the calling thread's last parallel loop ended, in powers of two of
 *      microseconds (OpenMP's threads spin for a while after a loop, then
 *      sleep, and a CPU left idle long enough may have to be won back);
 *      gaps of 1 ms or more apart by whether the caller idled lately
 *      (both cores idle: milliseconds on a VM) or kept busy (tens of µs):
 *      busy if it planned a loop in the last millisecond, else if it was
 *      on the CPU half the time since its last reading (normops_caller_idled);
 *      a wake-up of 1 ms or more after such a gap counts as an idle gap's
 *      (only the host giving back an idle vCPU takes that long);
 *   s  the team's stretch, by family and size class: how much longer
 *      than the ideal (W - L) / n the team takes over the work it shares
 *      (1: perfectly; n: no gain, its threads only shared the caches and
 *      the memory bus), learned from parallel loops whose float32 data
 *      exceed one core's L2 (normops_team_set_core_cache; 2^18 elements
 *      where the system does not say): measured where the caller worked
 *      alone a while (its rate alone against its rate beside the team, in
 *      the same loop), else inferred from the loop's time, its L and W
 *      where W is at least twice that L; the lower median of the last
 *      five; 1 until measured;
 *   E  the team's end, by gap: what a small loop's team took beyond L and
 *      its share of the work, max(busiest chunks, L + (W - L) / n): the
 *      barrier at the end (a worker's last chunk, a caller that slept
 *      there, the results crossing cores); the lower median of the last
 *      five, 0 until measured and where L is pinned;
 *   j  the cost of each thread beyond the second: half the least L
 *      measured (the team at its quickest), unless pinned.
 *
 * With claimed chunks, n threads take about
 *   T(n) = max(busiest thread's chunks x s, L + (W - L) s / n) + E + (n - 2) j
 * and a loop takes the n that minimises T(n), if T(n) <= 85% of W (the
 * margin keeps noise in the estimates from making a call slower); else one
 * thread. L for a gap is the lower median of its last five measurements
 * (a loop that the host happened to hold up does not decide alone), for
 * a gap the caller spent idle their largest (a stall there costs more
 * than a team saves). Where L is not yet known for a gap, the nearest shorter
 * gap's stands in, so the first such loop measures it. A gap found slow
 * is tried again now and then (within a burst of calls, calls at most
 * 2 ms + 8 W apart, once what a
 * quick team would have saved adds up to the gap's L; between single
 * calls every 64th loop, rarer where L is large against W), so a team
 * that has become fast is noticed; a size class that s alone keeps serial
 * takes a team every 4th loop of a loop of calls (the caller kept busy).
 *
 * Every figure can be pinned (set from Python: normops.set_config(
 * thread_costs=...), NORMOPS_THREAD_COSTS); pinned figures are not
 * learned. Thread counts never change a bit of any result: this only
 * moves time. */
#ifndef NORMOPS_TEAM_H
#define NORMOPS_TEAM_H

#include <time.h>

/* Kernel families whose elements cost alike. */
enum {
    NORMOPS_COST_ROWS,           /* centred row normalisations (LayerNormalization), row divides, Hardmax */
    NORMOPS_COST_REDUCE,         /* reductions, ArgMax/ArgMin */
    NORMOPS_COST_SOFTMAX_EXACT,  /* Softmax, LogSoftmax rows, exact */
    NORMOPS_COST_SOFTMAX_FAST,
    NORMOPS_COST_MAP_EXACT,      /* element-wise transcendentals: Sigmoid, Gelu, exp32/log32 maps, exact */
    NORMOPS_COST_MAP_FAST,
    NORMOPS_COST_SCAN,           /* CumSum, CumProd along other axes: lines side by side in vectors */
    NORMOPS_COST_MOVE,           /* transposes */
    NORMOPS_COST_ROWS_RMS,       /* uncentred row normalisations (RMSNormalization): a third cheaper */
    NORMOPS_COST_REDUCE_EXP_EXACT,  /* ReduceLogSumExp, exact: 5-10x a sum's element */
    NORMOPS_COST_REDUCE_EXP_FAST,
    NORMOPS_COST_SCAN_LINES,     /* CumSum, CumProd along the last axis: one dependent chain a line */
    NORMOPS_COST_FAMILIES
};
#define NORMOPS_GAP_BUCKETS 24   /* gaps < 1 µs, [1, 2) µs, ... [2^21, 2^22) µs, >= 2^22 µs or none */
#define NORMOPS_IDLE_FROM_BUCKET 11  /* gaps from 1 ms on are told apart by whether the caller idled */
#define NORMOPS_IDLE_FROM_NS (1000LL << (NORMOPS_IDLE_FROM_BUCKET - 1))
#define NORMOPS_BURST_GAP_NS 2000000LL  /* calls this close (plus 8 W) are a burst */
#define NORMOPS_WAKE_SLOTS (2 * NORMOPS_GAP_BUCKETS)  /* busy gaps, then idle ones */
#define NORMOPS_LEVELS 3         /* baseline, AVX2, AVX-512 */
#define NORMOPS_WAKE_SEEN 5
#define NORMOPS_SIZES 12          /* elements < 2^16, < 2^17, ... < 2^26, more: a class spans 2x (its
                                     loops differ by where they sit in the caches) */

#if defined(__AVX512F__)
#define NORMOPS_THIS_LEVEL 2
#elif defined(__AVX2__)
#define NORMOPS_THIS_LEVEL 1
#else
#define NORMOPS_THIS_LEVEL 0
#endif

/* Loops whose one-thread time is estimated below this never start a team
 * (no thread can pay for itself there on any machine) and are neither
 * timed nor counted: small calls pay nothing for the model. */
#define NORMOPS_TEAM_FLOOR_PS 2000000LL      /* 2 µs */
#define NORMOPS_GAIN_PERCENT 85
#define NORMOPS_WAKE_PRIOR_NS 5000LL          /* L before any loop measured it */
#define NORMOPS_PROBE_MAX_PS 2000000000LL     /* a family's first loops run serially up to 2 ms, */
#define NORMOPS_PROBE_FIRST_MAX_PS 20000000000LL  /* its first one up to 20 ms: without it a team's
                                                     time tells neither L nor s (past 20 ms a team
                                                     pays for the slowest wake-up known, 4-8 ms) */
#define NORMOPS_PROBES 3                      /* ... this many (a first call is cold) */
#define NORMOPS_PROBES_MORE 16                 /* then one parallel loop in 8 runs serially, up to this many samples */
#define NORMOPS_STRETCH_FROM_SIZE 3            /* loops of 2^18 elements or more also teach s, */
                                               /* until normops_team_set_core_cache says otherwise */
#define NORMOPS_STRETCH_SOLO 4                 /* ... measured where the caller made 4 claims alone, */
#define NORMOPS_STRETCH_SHARED 4               /* ... and 4 beside the team (each rate within a claim's */
                                               /* half: under a sixth off), */
#define NORMOPS_STRETCH_FROM_WAKES 2           /* ... else inferred where W is at least twice their own L */
#define NORMOPS_STRETCH_RETRY 4                /* a size class that s keeps serial takes a team every 4th loop:
                                                  where s is right such a team costs about W, no more, and s
                                                  taken against a W timed while the host ran faster heals */

/* The state shared by every ISA build loaded in the process. Figures are
 * 64-bit integers read and written with relaxed atomics: a lost update
 * between two racing calls only delays learning. */
typedef struct {
    int in_use;                    /* threads inside parallel loops now (the budget) */
    long long ps_per_element[NORMOPS_LEVELS][NORMOPS_COST_FAMILIES][NORMOPS_SIZES];  /* 0: not measured */
    long long cost_seen[NORMOPS_LEVELS][NORMOPS_COST_FAMILIES][NORMOPS_SIZES][NORMOPS_WAKE_SEEN];
    int cost_samples[NORMOPS_LEVELS][NORMOPS_COST_FAMILIES][NORMOPS_SIZES];
    int cost_pinned[NORMOPS_COST_FAMILIES];
    long long wake_ns[NORMOPS_WAKE_SLOTS];   /* L by gap slot; -1: not measured */
    long long wake_seen[NORMOPS_WAKE_SLOTS][NORMOPS_WAKE_SEEN];  /* the last measurements */
    unsigned wake_count[NORMOPS_WAKE_SLOTS];
    int wake_pinned;
    long long join_ns;             /* j when pinned; -1: half the awake L */
    unsigned retry[NORMOPS_WAKE_SLOTS];
    /* s by family and size class, in thousandths; 0: not measured (1) */
    long long stretch_pm[NORMOPS_LEVELS][NORMOPS_COST_FAMILIES][NORMOPS_SIZES];
    long long stretch_seen[NORMOPS_LEVELS][NORMOPS_COST_FAMILIES][NORMOPS_SIZES][NORMOPS_WAKE_SEEN];
    unsigned stretch_count[NORMOPS_LEVELS][NORMOPS_COST_FAMILIES][NORMOPS_SIZES];
    unsigned stretch_retry[NORMOPS_COST_FAMILIES][NORMOPS_SIZES];
    int stretch_pinned[NORMOPS_COST_FAMILIES];
    int stretch_from_size;         /* loops of this size class and larger teach s; 0: NORMOPS_STRETCH_FROM_SIZE */
    int threads_always;            /* tests: every loop with chunks to share takes its whole team, however small */
    /* E by gap slot: what a small loop's team took beyond L and its share
     * of the work (the barrier at its end: a worker's last chunk, a caller
     * that slept there); counted where end_count > 0 */
    long long end_ns[NORMOPS_WAKE_SLOTS];
    long long end_seen[NORMOPS_WAKE_SLOTS][NORMOPS_WAKE_SEEN];
    unsigned end_count[NORMOPS_WAKE_SLOTS];
} normops_team_state;

static normops_team_state normops_team_own = {
    0, {{{0}}}, {{{{0}}}}, {{{0}}}, {0},
    {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
     -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
    {{0}}, {0}, 0, -1, {0}};
static normops_team_state* normops_team = &normops_team_own;
static inline int normops_set_threads_always(int always) {
    return __atomic_exchange_n(&normops_team->threads_always, always, __ATOMIC_RELAXED);
}
#define normops_budget (&normops_team->in_use)

/* Costs assumed before a family's first measured loop: a fast machine's
 * (so that a first call errs towards one thread, and gets timed). */
static const long long normops_cost_prior_ps[NORMOPS_COST_FAMILIES] = {100, 30, 200, 100, 150, 80, 150, 50, 70,
                                                                        250, 150, 250};

/* ------------------------------------------------------------- the budget
 * How many threads are inside normops's parallel loops right now, summed
 * over every calling thread (a map_batch pool, dask's threaded scheduler,
 * a user's threads). A loop whose count was left to the configuration
 * gets at most the cores the others leave free (at least 1; its whole
 * team when nothing else runs); an explicit per-call count is granted as
 * asked, and counted. */
static inline int normops_budget_grant(int team, int in_use, int cores) {
    if (in_use <= 0)
        return team;
    if (team > cores - in_use)
        team = cores - in_use;
    return team < 1 ? 1 : team;
}

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

static inline int normops_budget_in_use(void) {
    return __atomic_load_n(normops_budget, __ATOMIC_ACQUIRE);
}

static inline void normops_budget_share(void* state) {
    normops_team = (normops_team_state*)state;
}

static inline void* normops_budget_state(void) {
    return normops_team;
}

/* --------------------------------------------------------------- figures */
/* CPU time of the calling thread (a system call, about 0.3 µs: read only
 * around parallel loops and before a long gap's decision). */
static inline long long normops_thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline long long normops_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#define NORMOPS_LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define NORMOPS_STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

static inline int normops_size_class(long long elements) {
    int s = 0;
    for (elements >>= 16; elements > 0 && s < NORMOPS_SIZES - 1; elements >>= 1)
        s++;
    return s;
}

/* The size class from which a loop's data no longer fits one core's own
 * cache (its L2): float32 inputs of at least that many bytes. Those loops
 * share the last-level cache and the memory bus, so what a team loses
 * there is s; smaller loops tell L. */
static inline int normops_stretch_from_size(void) {
    int k = NORMOPS_LOAD(normops_team->stretch_from_size);
    return k > 0 ? k : NORMOPS_STRETCH_FROM_SIZE;
}

/* Set from the L2 size the system reports (normops/_threads.py, at
 * import); 0 or less: unknown, NORMOPS_STRETCH_FROM_SIZE. */
static inline void normops_team_set_core_cache(long long bytes) {
    /* the first class all of whose loops exceed it */
    int k = bytes > 0 ? normops_size_class(bytes / 4 - 1) + 1 : 0;
    if (k > NORMOPS_SIZES - 1)
        k = NORMOPS_SIZES - 1;
    NORMOPS_STORE(normops_team->stretch_from_size, k);
}

/* ps per element of a family for inputs of this many elements: measured
 * for their size class, else for the nearest smaller class measured, else
 * the nearest larger one, else the prior. */
static inline long long normops_cost_ps(int level, int family, long long elements) {
    int size = normops_size_class(elements), s;
    long long ps;
    for (s = size; s >= 0; s--)
        if ((ps = NORMOPS_LOAD(normops_team->ps_per_element[level][family][s])) > 0)
            return ps;
    for (s = size + 1; s < NORMOPS_SIZES; s++)
        if ((ps = NORMOPS_LOAD(normops_team->ps_per_element[level][family][s])) > 0)
            return ps;
    return normops_cost_prior_ps[family];
}

static inline int normops_gap_bucket(long long gap_ns) {
    long long us;
    int b = 0;
    if (gap_ns < 0)
        return NORMOPS_GAP_BUCKETS - 1;
    us = gap_ns / 1000;
    while (us > 0 && b < NORMOPS_GAP_BUCKETS - 1) {
        us >>= 1;
        b++;
    }
    return b;
}

/* The slot of L's figures for a gap (-1: no team yet, which counts as
 * idle) that the caller spent idle or busy: its bucket, plus
 * NORMOPS_GAP_BUCKETS for an idle gap of 1 ms or more. */
static inline int normops_gap_slot(long long gap_ns, int idle) {
    int b = normops_gap_bucket(gap_ns);
    return (idle || gap_ns < 0) && b >= NORMOPS_IDLE_FROM_BUCKET ? b + NORMOPS_GAP_BUCKETS : b;
}

/* L for a gap slot (a bucket, plus NORMOPS_GAP_BUCKETS for a gap the
 * caller spent idle): its figure, else the nearest shorter gap's of the
 * same kind, else (an idle gap) the busy gap's of the same length. */
static inline long long normops_wake_estimate(int slot) {
    long long w;
    int b, first = slot >= NORMOPS_GAP_BUCKETS ? NORMOPS_GAP_BUCKETS + NORMOPS_IDLE_FROM_BUCKET : 0;
    for (b = slot; b >= first; b--) {
        w = NORMOPS_LOAD(normops_team->wake_ns[b]);
        if (w >= 0)
            return w;
    }
    return slot >= NORMOPS_GAP_BUCKETS ? normops_wake_estimate(slot - NORMOPS_GAP_BUCKETS)
                                       : NORMOPS_WAKE_PRIOR_NS;
}

/* The least L measured for any gap (the prior when none is), among the
 * gaps measured three times or more if any is: one loop whose W was
 * misjudged does not set it alone. */
static inline long long normops_wake_least(void) {
    long long least = -1, settled = -1, w;
    int b;
    for (b = 0; b < NORMOPS_WAKE_SLOTS; b++) {
        w = NORMOPS_LOAD(normops_team->wake_ns[b]);
        if (w >= 0 && (least < 0 || w < least))
            least = w;
        if (w >= 0 && NORMOPS_LOAD(normops_team->wake_count[b]) >= 3 && (settled < 0 || w < settled))
            settled = w;
    }
    return settled >= 0 ? settled : least >= 0 ? least : NORMOPS_WAKE_PRIOR_NS;
}

/* Record the k-th measurement (0-based) in a ring of the last
 * NORMOPS_WAKE_SEEN and return their lower median (worst: their largest). */
static inline long long normops_ring_learn(long long* seen_ring, unsigned k, long long obs, int worst) {
    long long seen[NORMOPS_WAKE_SEEN], v;
    int n = k + 1 < NORMOPS_WAKE_SEEN ? (int)k + 1 : NORMOPS_WAKE_SEEN, i, q;
    NORMOPS_STORE(seen_ring[k % NORMOPS_WAKE_SEEN], obs);
    for (i = 0; i < n; i++) {  /* insertion sort of at most five */
        v = NORMOPS_LOAD(seen_ring[i]);
        for (q = i; q > 0 && seen[q - 1] > v; q--)
            seen[q] = seen[q - 1];
        seen[q] = v;
    }
    return worst ? seen[n - 1] : seen[(n - 1) / 2];
}

/* The lower median of the last five: a figure that one loop the host or
 * a cold cache happened to slow does not decide alone. */
static inline long long normops_median_learn(long long* seen_ring, unsigned k, long long obs) {
    return normops_ring_learn(seen_ring, k, obs, 0);
}

/* A new measurement of L for a gap slot. A gap the caller spent idle
 * keeps the largest of its last five: there a wake-up that stalls one
 * time in five (the host giving back an idle vCPU: milliseconds) costs a
 * call many times what a team could save it, so calls after idle time
 * take a team only where every recent wake-up would have paid. */
static inline void normops_wake_learn(int b, long long obs) {
    unsigned k = __atomic_fetch_add(&normops_team->wake_count[b], 1u, __ATOMIC_RELAXED);
    NORMOPS_STORE(normops_team->wake_ns[b],
                  normops_ring_learn(normops_team->wake_seen[b], k, obs, b >= NORMOPS_GAP_BUCKETS));
}

/* E for a gap slot: its own, else the nearest shorter gap's of the same
 * kind (busy or idle), else 0; 0 where L is pinned (pinned figures decide
 * alone). */
static inline long long normops_end_estimate(int slot) {
    int b, first = slot >= NORMOPS_GAP_BUCKETS ? NORMOPS_GAP_BUCKETS : 0;
    if (NORMOPS_LOAD(normops_team->wake_pinned))
        return 0;
    for (b = slot; b >= first; b--)
        if (NORMOPS_LOAD(normops_team->end_count[b]) > 0)
            return NORMOPS_LOAD(normops_team->end_ns[b]);
    return 0;
}

/* j: pinned, or half an awake team's L. */
static inline long long normops_join_estimate(void) {
    long long j = NORMOPS_LOAD(normops_team->join_ns);
    return j >= 0 ? j : normops_wake_least() / 2;
}

/* s of a family's loops of this many elements: measured for their size
 * class, else 1 (a class's first team measures its own). */
static inline double normops_stretch(int level, int family, long long elements) {
    long long pm = NORMOPS_LOAD(normops_team->stretch_pm[level][family][normops_size_class(elements)]);
    return pm > 1000 ? (double)pm / 1000.0 : 1.0;
}

/* Whether a size class's W, from this many timed serial loops, is its
 * own: after its probes; a class whose loops take longer than
 * NORMOPS_PROBE_MAX_PS is probed only until one serial loop shows it, and
 * that one timing (of a loop that long) does. */
static inline int normops_cost_settled(int samples, double w_ps) {
    return samples >= NORMOPS_PROBES || (samples >= 1 && w_ps > (double)NORMOPS_PROBE_MAX_PS);
}

/* Expected time of n threads, in ps (see the top of this file). */
static inline double normops_team_time(int n, double w, double l, double busiest, double j, double s, double e) {
    double t = l >= w ? l : l + (w - l) * s / n;
    if (busiest * s > t)
        t = busiest * s;
    return t + e + (n - 2) * j;
}

/* The team for a loop of `chunks` chunks of about chunk_elements elements
 * each (elements in all) of a family, on at most `cap` threads, when the
 * calling thread's last parallel loop ended gap_ns ago (-1: never). Also
 * returns, in *w_ps, the one-thread estimate, in *slow_gap whether a team
 * would have paid but for this gap's wake-up, and in *stretched whether
 * it would have but for s. A pure function of the figures: tests drive it
 * with injected ones. */
static inline int normops_team_choose(int cap, long long chunks, long long chunk_elements, long long elements,
                                      int family, int level, int slot, double* w_ps, int* slow_gap,
                                      int* stretched) {
    double w, l, j, busiest, best_t, t, per_chunk, s, e;
    int n, best_n = 1;
    *slow_gap = 0;
    *stretched = 0;
    per_chunk = (double)normops_cost_ps(level, family, elements);
    w = (double)elements * per_chunk;
    *w_ps = w;
    if (cap <= 1 || chunks <= 1)
        return 1;
    if (NORMOPS_LOAD(normops_team->threads_always))
        return cap;
    if (w < (double)NORMOPS_TEAM_FLOOR_PS)
        return 1;
    l = 1000.0 * (double)normops_wake_estimate(slot);
    j = 1000.0 * (double)normops_join_estimate();
    s = normops_stretch(level, family, elements);
    e = 1000.0 * (double)normops_end_estimate(slot);
    best_t = w;
    for (n = 2; n <= cap; n++) {
        busiest = (double)((chunks + n - 1) / n) * (double)chunk_elements * per_chunk;
        t = normops_team_time(n, w, l, busiest, j, s, e);
        if (t >= best_t && n > 2)
            break;  /* past the best: more threads only add their cost */
        if (t < best_t) {
            best_t = t;
            best_n = n;
        }
    }
    if (best_t * 100.0 > w * NORMOPS_GAIN_PERCENT) {
        busiest = (double)((chunks + 1) / 2) * (double)chunk_elements * per_chunk;
        *stretched = s > 1.0 && normops_team_time(2, w, l, busiest, j, 1.0, e) * 100.0 <= w * NORMOPS_GAIN_PERCENT;
        /* would a quick team (the least L measured, or the prior if less)
         * have paid? then the gap's figure is worth measuring again */
        l = (double)normops_wake_least();
        l = 1000.0 * (l < NORMOPS_WAKE_PRIOR_NS ? l : (double)NORMOPS_WAKE_PRIOR_NS);
        *slow_gap = normops_team_time(2, w, l, busiest, j, s, e) * 100.0 <= w * NORMOPS_GAIN_PERCENT;
        return 1;
    }
    return best_n;
}

/* ------------------------------------------------ the calling thread's loop
 * What team_plan decided for the loop about to run, for team_take and
 * team_release: they time it and learn from it. */
typedef struct {
    int family, bucket, active, timed, first_team;
    int level;  /* the ISA level whose figures it teaches: this build's (tests choose one) */
    long long elements, start_ns, chunks, chunk_elements;
    long long claim_ns;  /* when another thread of the team first claimed work; -1: none yet */
    double w_ps;
    /* the caller's own claims: when it made its first, and how many it
     * made before and after another thread's first (normops_team_claims) */
    long long caller_first_ns;
    unsigned solo_claims, shared_claims;
} normops_loop_plan;
static __thread normops_loop_plan normops_plan = {0, 0, 0, 0, 0, NORMOPS_THIS_LEVEL, 0, 0, 0, 0, -1, 0.0, -1, 0, 0};
static __thread long long normops_last_region_end_ns = -1;
/* when this thread last planned a loop, and its CPU time at a moment
 * (the end of its last team, or its last reading) */
static __thread long long normops_last_plan_ns = -1, normops_cpu_mark_ns = -1, normops_cpu_mark = 0;
static __thread long long normops_last_slow_ns = -1;
static __thread double normops_forgone_ps = 0.0;  /* what a quick team would have saved this burst, ps */
static __thread double normops_retry_scale = 1.0;  /* doubles with every retry until a team is chosen again */
static __thread unsigned normops_serial_sample = 0, normops_probe_turn = 0;

/* Whether the calling thread has lately been mostly off the CPU (asleep,
 * waiting): then both cores idled. A thread that planned a loop within
 * the last millisecond is busy; else its CPU time since the last mark
 * (its last team's end, or the last reading) decides, over that window
 * only: a thread that idled once and has been calling since is busy. */
static inline int normops_caller_idled(long long now) {
    long long cpu;
    int idle;
    if (normops_last_plan_ns >= 0 && now - normops_last_plan_ns < NORMOPS_IDLE_FROM_NS)
        return 0;
    cpu = normops_thread_cpu_ns();
    idle = normops_cpu_mark_ns < 0 || 2 * (cpu - normops_cpu_mark) < now - normops_cpu_mark_ns;
    normops_cpu_mark_ns = now;
    normops_cpu_mark = cpu;
    return idle;
}

/* Decide the team of the loop about to run (cap: the requested count,
 * already capped at the chunks). */
static inline int normops_team_plan(int cap, long long chunks, long long chunk_elements, long long elements,
                                    int family) {
    long long now, gap;
    double w;
    int slow, slow_busy = 0, slow_idle = 0, n, n_idle, bucket, samples, undecided, retry, stretched, unused;
    unsigned due;
    double ratio, l_now, l_quick;
    normops_plan.active = 0;
    normops_plan.timed = 0;
    if (cap <= 1 || chunks <= 1)
        return 1;
    if ((double)elements * (double)normops_cost_ps(NORMOPS_THIS_LEVEL, family, elements)
        < (double)NORMOPS_TEAM_FLOOR_PS
        && !NORMOPS_LOAD(normops_team->threads_always))
        return 1;  /* small: no clock read */
    now = normops_now_ns();
    gap = normops_last_region_end_ns < 0 ? -1 : now - normops_last_region_end_ns;
    bucket = normops_gap_slot(gap, 0);
    /* a long gap the calling thread spent mostly off the CPU (asleep,
     * waiting) leaves both cores idle, which costs far more to wake from
     * on a virtual machine: such gaps have figures of their own. Telling
     * them apart reads the thread's CPU time, a system call (0.5 µs on
     * this VM, a tenth of a small call): made only where a team may start
     * (either figure gives one, or a retry is due below). */
    n = normops_team_choose(cap, chunks, chunk_elements, elements, family, NORMOPS_THIS_LEVEL, bucket, &w, &slow,
                            &stretched);
    undecided = 0;
    if (bucket >= NORMOPS_IDLE_FROM_BUCKET && bucket < NORMOPS_GAP_BUCKETS) {
        n_idle = normops_team_choose(cap, chunks, chunk_elements, elements, family, NORMOPS_THIS_LEVEL,
                                     bucket + NORMOPS_GAP_BUCKETS, &w, &slow_idle, &unused);
        if (n > 1 || n_idle > 1) {
            if (normops_caller_idled(now)) {
                bucket += NORMOPS_GAP_BUCKETS;
                n = n_idle;
                slow = slow_idle;
            }
        } else if (slow || slow_idle) {
            undecided = 1;  /* which gap this is, told when a retry is due */
            slow_busy = slow;
            slow = 1;
        }
    }
    samples = NORMOPS_LOAD(normops_team->cost_samples[NORMOPS_THIS_LEVEL][family][normops_size_class(elements)]);
    if ((samples < NORMOPS_PROBES || (samples < NORMOPS_PROBES_MORE && n > 1 && (normops_probe_turn++ & 7) == 0))
        && !NORMOPS_LOAD(normops_team->cost_pinned[family]) && !NORMOPS_LOAD(normops_team->threads_always)
        && (w <= (double)NORMOPS_PROBE_MAX_PS || (samples == 0 && w <= (double)NORMOPS_PROBE_FIRST_MAX_PS))) {
        n = 1;  /* timed below: what an element of this family costs here */
        normops_serial_sample = 0;
    } else if (n <= 1 && slow && !NORMOPS_LOAD(normops_team->wake_pinned)) {
        /* Try a slow gap again now and then, so that a team that has become
         * fast is noticed. A retry costs about the gap's L. Within a burst
         * of calls, retry once the time a quick team would have saved the
         * burst's calls adds up to that cost (so a burst loses at most
         * twice what the best choice in hindsight would: a long wake-up
         * paid once where the burst is long, never where it is short),
         * times 2^k after k retries that found the team still slow;
         * between single calls, every 64th, and rarer where L is large
         * against W (retries then cost at most a sixteenth of W). */
        l_now = 1000.0 * (double)normops_wake_estimate(bucket);
        if (normops_last_slow_ns >= 0 && now - normops_last_slow_ns < NORMOPS_BURST_GAP_NS + (long long)(w / 125.0)) {
            l_quick = 1000.0 * (double)normops_wake_least();
            if (l_quick > 1000.0 * (double)NORMOPS_WAKE_PRIOR_NS)
                l_quick = 1000.0 * (double)NORMOPS_WAKE_PRIOR_NS;
            normops_forgone_ps += (w - l_quick) / 2.0;
            retry = normops_forgone_ps >= l_now * normops_retry_scale;
        } else {
            normops_forgone_ps = 0.0;
            ratio = 16.0 * l_now / (w > 1.0 ? w : 1.0);
            due = ratio < 64.0 ? 64u : ratio < 4096.0 ? (unsigned)ratio : 4096u;
            retry = __atomic_add_fetch(&normops_team->retry[bucket], 1, __ATOMIC_RELAXED) % due == 0;
        }
        normops_last_slow_ns = now;
        if (retry) {
            normops_forgone_ps = 0.0;
            if (normops_retry_scale < 1024.0)
                normops_retry_scale *= 2.0;
            n = 2;
            if (undecided) {  /* retry only the gap this is, if it is slow */
                if (normops_caller_idled(now)) {
                    bucket += NORMOPS_GAP_BUCKETS;
                    n = slow_idle ? 2 : 1;
                } else {
                    n = slow_busy ? 2 : 1;
                }
            }
        }
    } else if (n <= 1 && stretched && !NORMOPS_LOAD(normops_team->stretch_pinned[family])
               && (bucket < NORMOPS_IDLE_FROM_BUCKET
                   || (bucket < NORMOPS_GAP_BUCKETS && !normops_caller_idled(now)))) {
        /* s alone keeps this size class serial: measure it again now and
         * then, in a loop of calls (the caller kept busy, however long ago
         * its last team: where s keeps every loop serial that is long ago);
         * after idle time the wake-up would cost more than the retry tells */
        if (__atomic_add_fetch(&normops_team->stretch_retry[family][normops_size_class(elements)], 1,
                               __ATOMIC_RELAXED) % NORMOPS_STRETCH_RETRY == 0)
            n = 2;
    } else if (n > 1) {
        normops_retry_scale = 1.0;  /* the figures give a team again */
    }
    normops_plan.active = 1;
    normops_plan.level = NORMOPS_THIS_LEVEL;
    normops_plan.family = family;
    normops_plan.bucket = bucket;
    normops_plan.first_team = gap < 0;
    normops_plan.elements = elements;
    normops_plan.chunks = chunks;
    normops_plan.chunk_elements = chunk_elements;
    normops_plan.w_ps = w;
    normops_plan.start_ns = now;
    normops_last_plan_ns = now;
    return n;
}

/* Learn from the loop that just ended, took_ns long, on n threads. */
static inline void normops_team_learn(int n, long long took_ns) {
    long long old, obs, j, solo_ns, shared_ns;
    unsigned k;
    double w_ns = normops_plan.w_ps / 1000.0, t, l, s, busiest, share;
    int b = normops_plan.bucket, family = normops_plan.family, lv = normops_plan.level, size;
    if (n <= 1) {
        if (NORMOPS_LOAD(normops_team->cost_pinned[family]) || normops_plan.elements <= 0)
            return;
        obs = (long long)((double)took_ns * 1000.0 / (double)normops_plan.elements);
        if (obs < 1)
            obs = 1;
        size = normops_size_class(normops_plan.elements);
        k = (unsigned)__atomic_fetch_add(&normops_team->cost_samples[lv][family][size], 1,
                                         __ATOMIC_RELAXED);
        NORMOPS_STORE(normops_team->ps_per_element[lv][family][size],
                      normops_median_learn(normops_team->cost_seen[lv][family][size], k, obs));
        return;
    }
    /* n threads did the work in took_ns: W is at most n times that */
    if (!NORMOPS_LOAD(normops_team->cost_pinned[family]) && normops_plan.elements > 0) {
        size = normops_size_class(normops_plan.elements);
        obs = (long long)((double)took_ns * 1000.0 * n / (double)normops_plan.elements);
        old = NORMOPS_LOAD(normops_team->ps_per_element[lv][family][size]);
        if (old > obs && obs > 0) {
            NORMOPS_STORE(normops_team->ps_per_element[lv][family][size], obs);
            w_ns = (double)took_ns * n;
        }
    }
    /* a thread's first team may include OpenMP starting its threads: a
     * one-time cost, not a wake-up */
    if (normops_plan.first_team)
        return;
    j = normops_join_estimate();
    t = (double)took_ns - (double)((n - 2) * j);
    /* L is measured, not inferred: when another thread of the team first
     * claimed work (normops_team_claims). A team whose other threads
     * claimed nothing woke them too late to help: L was at least T. */
    if (normops_plan.claim_ns >= 0) {
        obs = normops_plan.claim_ns - normops_plan.start_ns;
        if (obs < 0)
            obs = 0;
    } else {
        obs = (long long)t;
    }
    l = (double)obs;
    if (!NORMOPS_LOAD(normops_team->wake_pinned)) {
        /* a wake-up of a millisecond or more is the host giving back a
         * vCPU that idled, whatever the caller did just before: an idle
         * gap's */
        if (b >= NORMOPS_IDLE_FROM_BUCKET && b < NORMOPS_GAP_BUCKETS && obs >= NORMOPS_IDLE_FROM_NS)
            b += NORMOPS_GAP_BUCKETS;
        normops_wake_learn(b, obs);
    } else {
        l = (double)normops_wake_estimate(b);
    }
    size = normops_size_class(normops_plan.elements);
    /* A small loop (its data in a core's own cache, shared perfectly)
     * teaches E: what it took beyond L and its share of the work, where W
     * is its size class's own */
    if (size < normops_stretch_from_size() && normops_plan.claim_ns >= 0 && !NORMOPS_LOAD(normops_team->wake_pinned)
        && (NORMOPS_LOAD(normops_team->cost_pinned[family])
            || normops_cost_settled(NORMOPS_LOAD(normops_team->cost_samples[lv][family][size]), w_ns * 1000.0))) {
        busiest = (double)((normops_plan.chunks + n - 1) / n) * (double)normops_plan.chunk_elements * w_ns
                  / (double)normops_plan.elements;
        share = l >= w_ns ? l : l + (w_ns - l) / n;
        obs = (long long)(t - (busiest > share ? busiest : share));
        k = __atomic_fetch_add(&normops_team->end_count[b], 1u, __ATOMIC_RELAXED);
        NORMOPS_STORE(normops_team->end_ns[b], normops_median_learn(normops_team->end_seen[b], k, obs < 0 ? 0 : obs));
        return;
    }
    /* A larger loop (its data beyond a core's own cache) also teaches s:
     * how much slower each thread works once the team shares the caches
     * and the memory bus. Measured in the loop itself where the caller
     * worked alone for a while (NORMOPS_STRETCH_SOLO claims before
     * another thread's first, as under a sleeping wait policy): its rate
     * alone against its rate beside the team, both timed in this loop, so
     * a host that ran faster or slower when W was timed does not enter.
     * At the mark, the caller has done about all but half of its solo
     * claims; its shared claims end at about the loop's end. Elsewhere
     * inferred: invert T = L + (W - L) s / n with this loop's own L, where
     * W is this size class's own and at least 2 L (below that s is
     * ill-conditioned). Either way from 1 (a team sharing perfectly) to n
     * (a team that gained nothing). */
    if (size < normops_stretch_from_size() || NORMOPS_LOAD(normops_team->stretch_pinned[family])
        || normops_plan.claim_ns < 0)
        return;
    solo_ns = normops_plan.claim_ns - normops_plan.caller_first_ns;
    shared_ns = normops_plan.start_ns + took_ns - normops_plan.claim_ns;
    if (normops_plan.caller_first_ns >= 0 && normops_plan.solo_claims >= NORMOPS_STRETCH_SOLO
        && normops_plan.shared_claims >= NORMOPS_STRETCH_SHARED && solo_ns > 0 && shared_ns > 0) {
        s = ((double)normops_plan.solo_claims - 0.5) * (double)shared_ns
            / ((double)solo_ns * (double)normops_plan.shared_claims);
    } else {
        if (w_ns < NORMOPS_STRETCH_FROM_WAKES * l)
            return;
        if (!NORMOPS_LOAD(normops_team->cost_pinned[family])
            && !normops_cost_settled(
                NORMOPS_LOAD(normops_team->cost_samples[lv][family][size]), w_ns * 1000.0))
            return;
        s = (t - l) * n / (w_ns - l);
    }
    obs = (long long)(1000.0 * (s < 1.0 ? 1.0 : s > n ? n : s));
    k = __atomic_fetch_add(&normops_team->stretch_count[lv][family][size], 1u, __ATOMIC_RELAXED);
    NORMOPS_STORE(normops_team->stretch_pm[lv][family][size],
                  normops_median_learn(normops_team->stretch_seen[lv][family][size], k, obs));
}

/* Learn from a loop as if team_plan had sized it (family, gap slot,
 * elements, W) and it took took_ns on n threads: tests drive the learning
 * with it. */
static inline void normops_team_learn_loop(int level, int family, int slot, long long elements, double w_ps, int n,
                                           long long took_ns, long long claimed_ns, long long caller_first_ns,
                                           unsigned solo_claims, unsigned shared_claims) {
    normops_plan.level = level;
    normops_plan.family = family;
    normops_plan.bucket = slot;
    normops_plan.first_team = 0;
    normops_plan.elements = elements;
    normops_plan.chunks = 0;  /* no chunk is the busiest: the share is (W - L) / n */
    normops_plan.chunk_elements = 0;
    normops_plan.w_ps = w_ps;
    normops_plan.start_ns = 0;
    normops_plan.claim_ns = claimed_ns;
    normops_plan.caller_first_ns = caller_first_ns;
    normops_plan.solo_claims = solo_claims;
    normops_plan.shared_claims = shared_claims;
    normops_team_learn(n, took_ns);
}

/* Around every loop that team_plan sized: loop_begin(n) and loop_end(n)
 * time it where it teaches something (every parallel loop; one serial
 * loop in four), and note when the calling thread's last team stopped. */
static inline void normops_loop_begin(int n) {
    normops_plan.timed = normops_plan.active && (n > 1 || (normops_serial_sample++ & 3) == 0);
    normops_plan.claim_ns = -1;
    normops_plan.caller_first_ns = -1;
    normops_plan.solo_claims = 0;
    normops_plan.shared_claims = 0;
    if (normops_plan.timed)
        normops_plan.start_ns = normops_now_ns();
}

/* Where the team's other threads note when they first claim work in the
 * calling thread's current loop: its own plan, which they write through
 * this pointer (the loop ends at a barrier before the caller reads it). */
static inline long long* normops_claim_slot(void) {
    return &normops_plan.claim_ns;
}

/* In a parallel loop's body, for every chunk: the first chunk a thread
 * other than the caller claims marks the team's wake-up; the caller
 * (thread 0, whose plan this is) counts its own claims before and after
 * that mark, which tells s (normops_team_learn). Two clock reads per loop,
 * a relaxed load otherwise. */
static inline void normops_team_claims(long long* slot) {
    long long none = -1;
    if (omp_get_thread_num() != 0) {
        if (__atomic_load_n(slot, __ATOMIC_RELAXED) < 0)
            __atomic_compare_exchange_n(slot, &none, normops_now_ns(), 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    } else if (__atomic_load_n(slot, __ATOMIC_RELAXED) >= 0) {
        normops_plan.shared_claims++;
    } else if (normops_plan.solo_claims++ == 0) {
        normops_plan.caller_first_ns = normops_now_ns();
    }
}

static inline void normops_loop_end(int n) {
    long long end;
    if (n > 1 || normops_plan.timed) {
        end = normops_now_ns();
        if (normops_plan.timed)
            normops_team_learn(n, end - normops_plan.start_ns);
        if (n > 1) {
            normops_last_region_end_ns = end;
            normops_cpu_mark_ns = end;
            normops_cpu_mark = normops_thread_cpu_ns();
        }
    }
    normops_plan.active = 0;
    normops_plan.timed = 0;
}

/* The threads a loop sized by team_plan starts now, taken from the budget
 * (budgeted: the count was left to the configuration), and timed. */
static inline int normops_team_take(int team, int budgeted) {
    int taken = normops_budget_take(team < 1 ? 1 : team, budgeted);
    normops_loop_begin(taken);
    return taken;
}

static inline void normops_team_release(int taken) {
    normops_loop_end(taken);
    normops_budget_release(taken);
}

/* Tests and pinning: read and set the figures. */
static inline void normops_team_forget(void) {
    int b, f, l, s;
    for (b = 0; b < NORMOPS_WAKE_SLOTS; b++) {
        NORMOPS_STORE(normops_team->wake_ns[b], -1LL);
        NORMOPS_STORE(normops_team->wake_count[b], 0u);
        NORMOPS_STORE(normops_team->end_count[b], 0u);
        NORMOPS_STORE(normops_team->retry[b], 0u);
    }
    for (l = 0; l < NORMOPS_LEVELS; l++)
        for (f = 0; f < NORMOPS_COST_FAMILIES; f++)
            for (s = 0; s < NORMOPS_SIZES; s++) {
                if (!normops_team->cost_pinned[f]) {
                    NORMOPS_STORE(normops_team->ps_per_element[l][f][s], 0LL);
                    NORMOPS_STORE(normops_team->cost_samples[l][f][s], 0);
                }
                if (!normops_team->stretch_pinned[f]) {
                    NORMOPS_STORE(normops_team->stretch_pm[l][f][s], 0LL);
                    NORMOPS_STORE(normops_team->stretch_count[l][f][s], 0u);
                    NORMOPS_STORE(normops_team->stretch_retry[f][s], 0u);
                }
            }
    normops_team->wake_pinned = 0;
}

static inline normops_team_state* normops_team_figures(void) {
    return normops_team;
}

static inline void normops_plan_drop(void) {
    normops_plan.active = 0;
    normops_plan.timed = 0;
}

static inline void normops_team_note_region_end(long long ns_ago) {
    normops_last_region_end_ns = ns_ago < 0 ? -1 : normops_now_ns() - ns_ago;
    normops_last_plan_ns = -1;
    normops_cpu_mark_ns = -1;
}

#endif
