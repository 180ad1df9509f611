/* Outputs placed for the kernels' stores: a NumPy allocation handler
 * (NEP 49) whose blocks start at a chosen address modulo 4096.
 *
 * Why: a row kernel that loads x[i] and stores y[i] runs 10-15% slower
 * when y starts off a 64-byte line (every vector store then touches two
 * lines) or when y's address modulo 4096 lies just ahead of x's (a load
 * then looks like a recent store to the core's 4 KiB alias check and
 * waits for it). malloc places large blocks 16 bytes into a page, so two
 * fresh NumPy arrays often meet both. The values stored do not depend on
 * where y is; only the time does (docs/performance-analysis.md).
 *
 * A block is malloc'd 4096 + 32 bytes larger than asked; the address
 * handed out is the first one past a 32-byte header that is congruent to
 * the hint modulo 4096, and the header keeps the malloc'd address, its
 * size and the size asked (for realloc). The hint is read when a block is
 * allocated; the caller sets it (holding the GIL) just before. Two threads
 * racing on it could only move a block, never change what is stored in it.
 *
 * Freed blocks of 1 MiB and more are kept, up to a byte limit (the
 * configuration's output_cache_bytes), for the next output of about their
 * size. Why: glibc hands large freed blocks back to the system, and a
 * fresh 16 MiB output is then faulted in page by page during the kernel:
 * 1000 page faults, which doubled exact Softmax on 1024x4096 in a process
 * that also ran NumPy (docs/performance-analysis.md). ONNX Runtime's arena
 * keeps its memory the same way. */
#ifndef NORMOPS_PLACED_ALLOC_H
#define NORMOPS_PLACED_ALLOC_H

#include <Python.h>
#include <numpy/ndarraytypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define NORMOPS_PLACE_HEADER 32
#define NORMOPS_PLACE_SPAN 4096
/* NumPy's own handler asks for huge pages from this size (its
 * madvise_hugepage default); the placed blocks do the same */
#define NORMOPS_PLACE_HUGE (((size_t)1) << 22)

static uintptr_t normops_place_hint = 0;

static void normops_set_place_hint(uintptr_t address) {
    normops_place_hint = address & (NORMOPS_PLACE_SPAN - 64);  /* a whole line */
}

/* ---- the kept blocks: a few slots under a spin lock (the GIL is held on
 * every path NumPy frees through today; the lock keeps it safe without) */
#define NORMOPS_KEEP_SLOTS 4
#define NORMOPS_KEEP_FROM (((size_t)1) << 20)
typedef struct { char* raw; size_t capacity; } normops_kept_block;
static normops_kept_block normops_kept[NORMOPS_KEEP_SLOTS];  /* oldest first */
static int normops_kept_count = 0;
static size_t normops_kept_bytes = 0;
static size_t normops_keep_limit = ((size_t)64) << 20;
#if defined(__SANITIZE_ADDRESS__)
/* an AddressSanitizer build keeps nothing: every freed output goes back to
 * ASan, which then sees any use of it after the free */
#define NORMOPS_KEEP_LOCK()
#define NORMOPS_KEEP_UNLOCK()
#define NORMOPS_CAN_KEEP 0
#elif defined(__GNUC__) || defined(__clang__)
static int normops_kept_lock = 0;
#define NORMOPS_KEEP_LOCK() while (__atomic_exchange_n(&normops_kept_lock, 1, __ATOMIC_ACQUIRE)) {}
#define NORMOPS_KEEP_UNLOCK() __atomic_store_n(&normops_kept_lock, 0, __ATOMIC_RELEASE)
#define NORMOPS_CAN_KEEP 1
#else
#define NORMOPS_KEEP_LOCK()
#define NORMOPS_KEEP_UNLOCK()
#define NORMOPS_CAN_KEEP 0  /* no atomics known: nothing is kept */
#endif

/* slot i taken out (the lock held): its block, the later slots moved up */
static char* normops_pop_kept(int i) {
    char* raw = normops_kept[i].raw;
    normops_kept_bytes -= normops_kept[i].capacity;
    for (int k = i + 1; k < normops_kept_count && k < NORMOPS_KEEP_SLOTS; k++)
        normops_kept[k - 1] = normops_kept[k];
    normops_kept_count--;
    return raw;
}

/* a kept block of at least need bytes and at most a quarter more (the
 * smallest such), taken out of the slots; NULL if none */
static char* normops_take_kept(size_t need, size_t* capacity) {
    char* raw = NULL;
    if (!NORMOPS_CAN_KEEP || need < NORMOPS_KEEP_FROM)
        return NULL;
    NORMOPS_KEEP_LOCK();
    int best = -1;
    for (int i = 0; i < normops_kept_count; i++)
        if (normops_kept[i].capacity >= need && normops_kept[i].capacity - need <= need / 4
                && (best < 0 || normops_kept[i].capacity < normops_kept[best].capacity))
            best = i;
    if (best >= 0) {
        *capacity = normops_kept[best].capacity;
        raw = normops_pop_kept(best);
    }
    NORMOPS_KEEP_UNLOCK();
    return raw;
}

/* Keep raw (capacity bytes) if the limit allows, the oldest kept blocks
 * making room; the blocks left out are freed after the lock is let go.
 * limit: a new limit (normops_set_keep_limit, which passes no block) or
 * NORMOPS_SAME_LIMIT. Returns the old limit. */
#define NORMOPS_SAME_LIMIT SIZE_MAX
static size_t normops_keep_within(char* raw, size_t capacity, size_t limit) {
    char* freed[NORMOPS_KEEP_SLOTS + 1];
    int n_freed = 0;
    NORMOPS_KEEP_LOCK();
    size_t old = normops_keep_limit;
    if (limit != NORMOPS_SAME_LIMIT)
        normops_keep_limit = limit;
    limit = normops_keep_limit;
    int keep = raw != NULL && NORMOPS_CAN_KEEP && capacity >= NORMOPS_KEEP_FROM && capacity <= limit;
    size_t room = keep ? capacity : 0;
    while (normops_kept_count > 0 && (normops_kept_bytes + room > limit
                                      || (keep && normops_kept_count == NORMOPS_KEEP_SLOTS)))
        freed[n_freed++] = normops_pop_kept(0);
    if (keep) {
        normops_kept[normops_kept_count].raw = raw;
        normops_kept[normops_kept_count].capacity = capacity;
        normops_kept_count++;
        normops_kept_bytes += capacity;
    } else if (raw != NULL) {
        freed[n_freed++] = raw;
    }
    NORMOPS_KEEP_UNLOCK();
    for (int i = 0; i < n_freed; i++)
        free(freed[i]);
    return old;
}

/* Change the byte limit of the kept blocks (0: keep none), freeing the
 * oldest ones above it; returns the old limit. */
static size_t normops_set_keep_limit(size_t limit) {
    return normops_keep_within(NULL, 0, limit);
}

/* the bytes held in kept blocks now */
static size_t normops_kept_total(void) {
    NORMOPS_KEEP_LOCK();
    size_t total = normops_kept_bytes;
    NORMOPS_KEEP_UNLOCK();
    return total;
}

static void* normops_placed_malloc(void* ctx, size_t size) {
    (void)ctx;
    if (size > SIZE_MAX - NORMOPS_PLACE_SPAN - NORMOPS_PLACE_HEADER)
        return NULL;
    size_t need = size + NORMOPS_PLACE_SPAN + NORMOPS_PLACE_HEADER, capacity = need;
    char* raw = normops_take_kept(need, &capacity);
    int fresh = raw == NULL;
    if (fresh)
        raw = (char*)malloc(need);
    if (raw == NULL)
        return NULL;
    uintptr_t low = (uintptr_t)raw + NORMOPS_PLACE_HEADER;
    char* p = (char*)(low + ((normops_place_hint - low) & (NORMOPS_PLACE_SPAN - 1)));
    memcpy(p - 24, &capacity, sizeof(size_t));
    memcpy(p - 16, &size, sizeof(size_t));
    memcpy(p - 8, &raw, sizeof(char*));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (fresh && size >= NORMOPS_PLACE_HUGE) {
        uintptr_t first = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
        uintptr_t end = ((uintptr_t)p + size) & ~(uintptr_t)4095;
        if (end > first)
            madvise((void*)first, end - first, MADV_HUGEPAGE);  /* a hint: failure is harmless */
    }
#endif
    return p;
}

static void* normops_placed_calloc(void* ctx, size_t nelem, size_t elsize) {
    if (elsize != 0 && nelem > SIZE_MAX / elsize)
        return NULL;
    void* p = normops_placed_malloc(ctx, nelem * elsize);
    if (p != NULL)
        memset(p, 0, nelem * elsize);
    return p;
}

static void normops_placed_free(void* ctx, void* p, size_t size) {
    (void)ctx;
    (void)size;
    if (p != NULL) {
        char* raw;
        size_t capacity;
        memcpy(&raw, (char*)p - 8, sizeof(char*));
        memcpy(&capacity, (char*)p - 24, sizeof(size_t));
        normops_keep_within(raw, capacity, NORMOPS_SAME_LIMIT);
    }
}

static void* normops_placed_realloc(void* ctx, void* p, size_t new_size) {
    if (p == NULL)
        return normops_placed_malloc(ctx, new_size);
    size_t old_size;
    memcpy(&old_size, (char*)p - 16, sizeof(size_t));
    void* q = normops_placed_malloc(ctx, new_size);
    if (q == NULL)
        return NULL;
    memcpy(q, p, old_size < new_size ? old_size : new_size);
    normops_placed_free(ctx, p, old_size);
    return q;
}

static PyDataMem_Handler normops_placed_handler = {
    "normops_placed",
    1,
    {NULL, normops_placed_malloc, normops_placed_calloc, normops_placed_realloc, normops_placed_free},
};

/* a new reference to the capsule NumPy takes as a handler */
static PyObject* normops_placed_handler_capsule(void) {
    return PyCapsule_New(&normops_placed_handler, "mem_handler", NULL);
}

#endif
