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
 * A block is malloc'd 4096 + 16 bytes larger than asked; the address
 * handed out is the first one past a 16-byte header that is congruent to
 * the hint modulo 4096, and the header keeps the malloc'd address and the
 * size (for realloc). The hint is read when a block is allocated; the
 * caller sets it (holding the GIL) just before. Two threads racing on it
 * could only move a block, never change what is stored in it. */
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

#define NORMOPS_PLACE_HEADER 16
#define NORMOPS_PLACE_SPAN 4096
/* NumPy's own handler asks for huge pages from this size (its
 * madvise_hugepage default); the placed blocks do the same */
#define NORMOPS_PLACE_HUGE (((size_t)1) << 22)

static uintptr_t normops_place_hint = 0;

static void normops_set_place_hint(uintptr_t address) {
    normops_place_hint = address & (NORMOPS_PLACE_SPAN - 64);  /* a whole line */
}

static void* normops_placed_malloc(void* ctx, size_t size) {
    (void)ctx;
    if (size > SIZE_MAX - NORMOPS_PLACE_SPAN - NORMOPS_PLACE_HEADER)
        return NULL;
    char* raw = (char*)malloc(size + NORMOPS_PLACE_SPAN + NORMOPS_PLACE_HEADER);
    if (raw == NULL)
        return NULL;
    uintptr_t low = (uintptr_t)raw + NORMOPS_PLACE_HEADER;
    char* p = (char*)(low + ((normops_place_hint - low) & (NORMOPS_PLACE_SPAN - 1)));
    memcpy(p - 16, &size, sizeof(size_t));
    memcpy(p - 8, &raw, sizeof(char*));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (size >= NORMOPS_PLACE_HUGE) {
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
        memcpy(&raw, (char*)p - 8, sizeof(char*));
        free(raw);
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
