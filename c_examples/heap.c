/*
 * heap.c - the symmetric heap seen from the host.
 *
 * Start it with the launcher, e.g.  aclshmrun -n 4 ./heap
 *
 * Every PE allocates the same objects in the same order, so each object has a copy at the same offset
 * in every PE's heap; aclshmem_ptr(obj, pe) gives a CPU address of PE pe's copy (all PEs of this
 * example run on one machine). The program checks:
 *   - reading every peer's copy, and writing into the right neighbour's copy;
 *   - aclshmem_calloc zeroes, aclshmem_align aligns, aclshmem_malloc(0) is NULL;
 *   - HOST_SIDE memory (aclshmemx_malloc(size, HOST_SIDE)) lives in its own symmetric heap;
 *   - an asymmetric request (size depends on the PE) returns NULL on every PE and leaves the heap
 *     symmetric for later allocations.
 * Exits non-zero and prints "FAIL: ..." on any error.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shmem.h"

#define N_INTS 1024

static int g_pe = -1;

static void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FAIL: [heap, PE %d] ", g_pe);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(NULL);
    exit(1);
}

static int pattern(int pe, int i)
{
    return pe * 1000000 + i;
}

/* True if p lies in [base, base + size). */
static int in_range(const void *p, const void *base, uint64_t size)
{
    uintptr_t a = (uintptr_t)p;
    uintptr_t b = (uintptr_t)base;
    return base != NULL && a >= b && (uint64_t)(a - b) < size;
}

int main(void)
{
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    int ret;
    int me;
    int npes;
    int left;
    int right;
    int pe;
    int i;
    uint64_t heap_span;
    void *dev_base;
    void *host_base;
    int *arr;
    int *peer;
    unsigned char *scratch;
    long *zeroed;
    long *peer_long;
    void *aligned;
    void *aligned_big;
    int *host_obj;
    void *asym;
    int *after;

    ret = aclshmemx_set_attr_from_env(&attr);
    if (ret != 0) {
        fail("aclshmemx_set_attr_from_env returned %d (run this program through aclshmrun)", ret);
    }
    g_pe = attr.my_pe;
    ret = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
    if (ret != 0) {
        fail("aclshmemx_init_attr returned %d", ret);
    }
    me = aclshmem_my_pe();
    npes = aclshmem_n_pes();
    left = (me + npes - 1) % npes;
    right = (me + 1) % npes;
    /* user bytes plus the internal extra area: every device-heap address lies within this span */
    heap_span = attr.local_mem_size + (uint64_t)ACLSHMEM_EXTRA_SIZE;

    dev_base = aclshmemx_get_heap_base(DEVICE_SIDE);
    if (dev_base == NULL) {
        fail("aclshmemx_get_heap_base(DEVICE_SIDE) is NULL after init");
    }

    /* ---- 1. read every peer's copy ------------------------------------------------------------ */
    arr = (int *)aclshmem_malloc(N_INTS * sizeof(int));
    if (arr == NULL) {
        fail("aclshmem_malloc(%zu) returned NULL", (size_t)N_INTS * sizeof(int));
    }
    if (!in_range(arr, dev_base, heap_span)) {
        fail("aclshmem_malloc result %p is outside the device heap [%p, +%llu)", (void *)arr,
             dev_base, (unsigned long long)heap_span);
    }
    if (aclshmem_ptr(arr, me) != (void *)arr) {
        fail("aclshmem_ptr(arr, my_pe) = %p, expected arr = %p", aclshmem_ptr(arr, me), (void *)arr);
    }
    for (i = 0; i < N_INTS; i++) {
        arr[i] = pattern(me, i);
    }
    aclshmem_barrier_all();

    for (pe = 0; pe < npes; pe++) {
        peer = (int *)aclshmem_ptr(arr, pe);
        if (peer == NULL) {
            fail("aclshmem_ptr(arr, %d) returned NULL for a same-node peer", pe);
        }
        if ((int *)aclshmem_ptr(arr + 7, pe) != peer + 7) {
            fail("aclshmem_ptr does not preserve offsets inside an object (PE %d)", pe);
        }
        for (i = 0; i < N_INTS; i++) {
            if (peer[i] != pattern(pe, i)) {
                fail("PE %d's copy: element %d is %d, expected %d", pe, i, peer[i], pattern(pe, i));
            }
        }
    }
    if (aclshmem_ptr(arr, npes) != NULL || aclshmem_ptr(arr, -1) != NULL) {
        fail("aclshmem_ptr with an out-of-range PE did not return NULL");
    }
    aclshmem_barrier_all(); /* everyone has finished reading before anyone overwrites */

    /* ---- 2. write into the right neighbour's copy -------------------------------------------- */
    peer = (int *)aclshmem_ptr(arr, right);
    for (i = 0; i < N_INTS; i++) {
        peer[i] = -pattern(me, i) - 1;
    }
    aclshmem_barrier_all();
    for (i = 0; i < N_INTS; i++) {
        if (arr[i] != -pattern(left, i) - 1) {
            fail("after the neighbour write, element %d is %d, expected %d (from PE %d)", i, arr[i],
                 -pattern(left, i) - 1, left);
        }
    }

    /* ---- 3. calloc zeroes (the block reuses memory that was dirtied first) -------------------- */
    scratch = (unsigned char *)aclshmem_malloc(8192);
    if (scratch == NULL) {
        fail("aclshmem_malloc(8192) returned NULL");
    }
    memset(scratch, 0xAB, 8192);
    aclshmem_free(scratch);
    zeroed = (long *)aclshmem_calloc(8192 / sizeof(long), sizeof(long));
    if (zeroed == NULL) {
        fail("aclshmem_calloc(%zu, %zu) returned NULL", 8192 / sizeof(long), sizeof(long));
    }
    peer_long = (long *)aclshmem_ptr(zeroed, right);
    if (peer_long == NULL) {
        fail("aclshmem_ptr(zeroed, %d) returned NULL", right);
    }
    for (i = 0; i < (int)(8192 / sizeof(long)); i++) {
        if (zeroed[i] != 0) {
            fail("aclshmem_calloc: element %d is %ld, expected 0", i, zeroed[i]);
        }
        /* calloc returns after every PE has zeroed its copy */
        if (peer_long[i] != 0) {
            fail("aclshmem_calloc: PE %d's copy is not zeroed at element %d", right, i);
        }
    }

    /* ---- 4. alignment and size-0 requests ---------------------------------------------------- */
    aligned = aclshmem_align(4096, 100);
    if (aligned == NULL) {
        fail("aclshmem_align(4096, 100) returned NULL");
    }
    if ((uintptr_t)aligned % 4096 != 0) {
        fail("aclshmem_align(4096, 100) = %p is not 4096-byte aligned", aligned);
    }
    aligned_big = aclshmem_align((size_t)1 << 20, 64);
    if (aligned_big == NULL) {
        fail("aclshmem_align(1 MiB, 64) returned NULL");
    }
    if ((uintptr_t)aligned_big % ((uintptr_t)1 << 20) != 0) {
        fail("aclshmem_align(1 MiB, 64) = %p is not 1 MiB aligned", aligned_big);
    }
    if (aclshmem_malloc(0) != NULL) {
        fail("aclshmem_malloc(0) did not return NULL");
    }

    /* ---- 5. HOST_SIDE heap ------------------------------------------------------------------- */
    host_obj = (int *)aclshmemx_malloc(1024, HOST_SIDE);
    if (host_obj == NULL) {
        fail("aclshmemx_malloc(1024, HOST_SIDE) returned NULL");
    }
    host_base = aclshmemx_get_heap_base(HOST_SIDE);
    if (host_base == NULL) {
        fail("aclshmemx_get_heap_base(HOST_SIDE) is NULL after a HOST_SIDE allocation");
    }
    if (host_base == dev_base) {
        fail("HOST_SIDE and DEVICE_SIDE heaps share the base address %p", host_base);
    }
    if (!in_range(host_obj, host_base, heap_span)) {
        fail("HOST_SIDE allocation %p is outside the host heap [%p, +%llu)", (void *)host_obj,
             host_base, (unsigned long long)heap_span);
    }
    if (in_range(host_obj, dev_base, heap_span)) {
        fail("HOST_SIDE allocation %p lies inside the device heap", (void *)host_obj);
    }
    host_obj[0] = 4242 + me;
    aclshmem_barrier_all();
    peer = (int *)aclshmem_ptr(host_obj, left);
    if (peer == NULL) {
        fail("aclshmem_ptr(host_obj, %d) returned NULL", left);
    }
    if (peer[0] != 4242 + left) {
        fail("HOST_SIDE copy of PE %d holds %d, expected %d", left, peer[0], 4242 + left);
    }
    aclshmem_barrier_all();

    /* ---- 6. asymmetric request: NULL on every PE --------------------------------------------- */
    if (npes > 1) {
        asym = aclshmem_malloc(64 + 64 * (size_t)me);
        if (asym != NULL) {
            fail("aclshmem_malloc with a PE-dependent size (%zu) returned %p, expected NULL",
                 64 + 64 * (size_t)me, asym);
        }
    }
    /* the heap is still symmetric afterwards */
    after = (int *)aclshmem_malloc(sizeof(int));
    if (after == NULL) {
        fail("aclshmem_malloc(sizeof(int)) after the asymmetric request returned NULL");
    }
    *after = 777 + me;
    aclshmem_barrier_all();
    peer = (int *)aclshmem_ptr(after, left);
    if (peer == NULL || *peer != 777 + left) {
        fail("allocation after the asymmetric request is not symmetric: PE %d's copy holds %d, "
             "expected %d", left, peer ? *peer : -1, 777 + left);
    }

    /* ---- 7. free everything and finalize ----------------------------------------------------- */
    aclshmem_free(after);
    aclshmemx_free(host_obj, HOST_SIDE);
    aclshmem_free(aligned_big);
    aclshmem_free(aligned);
    aclshmem_free(zeroed);
    aclshmem_free(arr);
    aclshmem_free(NULL); /* local no-op */
    aclshmem_barrier_all();

    ret = aclshmem_finalize();
    if (ret != 0) {
        fail("aclshmem_finalize returned %d", ret);
    }
    if (me == 0) {
        printf("heap: OK (%d PEs, local_mem_size %llu bytes)\n", npes,
               (unsigned long long)attr.local_mem_size);
    }
    return 0;
}
