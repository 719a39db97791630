/* Reading a peer's copy of symmetric memory the same way on one node and across nodes, for the
 * multi-PE C test programs whose checks look at "the remote side" (rma_tests bad_input, sync_tests
 * edge_cases). A peer on this node is read through aclshmem_ptr (plain loads of its mapped heap);
 * a peer on another node has no mapping here (aclshmem_ptr is NULL for it, by design), so its
 * copy is read with aclshmem_getmem. Which peers share this node is found independently of the
 * library (host names, exchanged through the symmetric heap), so a NULL aclshmem_ptr towards a
 * same-node peer, or a non-NULL one towards another node, is reported rather than silently
 * switching the check mode. Include after <shmem.h>; the program provides fail(). */
#ifndef ACLSHMEM_PEER_UTIL_H
#define ACLSHMEM_PEER_UTIL_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PEER_HOST_LEN 64

/* 1 when PE `pe` runs on this node (same host name; the virtual cluster's nodes are UTS
 * namespaces), 0 when it runs on another. Collective: every PE calls it at the same point. */
static __attribute__((unused)) int peer_same_node(int pe)
{
    int me = aclshmem_my_pe();
    if (pe == me) {
        return 1;
    }
    char *names = aclshmem_malloc(PEER_HOST_LEN);
    if (names == NULL) {
        fail("peer_same_node: aclshmem_malloc(%d) returned NULL", PEER_HOST_LEN);
    }
    memset(names, 0, PEER_HOST_LEN);
    if (gethostname(names, PEER_HOST_LEN - 1) != 0) {
        fail("peer_same_node: gethostname failed");
    }
    aclshmem_barrier_all();
    char theirs[PEER_HOST_LEN] = {0};
    aclshmem_getmem(theirs, names, PEER_HOST_LEN, pe);
    int same = strncmp(theirs, names, PEER_HOST_LEN) == 0;
    aclshmem_barrier_all();
    aclshmem_free(names);
    return same;
}

/* The address of symmetric `sym` in PE `pe`'s copy when that copy is mapped here, NULL when `pe`
 * is on another node; fails the scenario when aclshmem_ptr disagrees with `same_node`. */
static __attribute__((unused)) void *peer_map(void *sym, int pe, int same_node)
{
    void *p = aclshmem_ptr(sym, pe);
    if (same_node && p == NULL) {
        fail("aclshmem_ptr(%p, %d) is NULL for a PE on this node", sym, pe);
    }
    if (!same_node && p != NULL) {
        fail("aclshmem_ptr(%p, %d) is not NULL for a PE on another node", sym, pe);
    }
    return p;
}

/* Copies `len` bytes of symmetric `sym` in PE `pe`'s copy into `out`: plain loads when `mapped`
 * (peer_map's result for `sym`) is not NULL, else a quiet (anything this PE issued has landed)
 * and aclshmem_getmem -- twice, into buffers filled with 0x00 and 0xff first, which must agree:
 * a get that silently wrote nothing cannot pass for "the remote side still holds X". */
static __attribute__((unused)) void peer_read(void *out, void *sym, const void *mapped, size_t len, int pe)
{
    if (mapped != NULL) {
        const volatile unsigned char *src = mapped;
        unsigned char *dst = out;
        for (size_t i = 0; i < len; i++) {
            dst[i] = src[i];
        }
    } else {
        unsigned char *other = malloc(len);
        if (other == NULL) {
            fail("peer_read: out of memory");
        }
        memset(out, 0x00, len);
        memset(other, 0xff, len);
        aclshmem_quiet();
        aclshmem_getmem(out, sym, len, pe);
        aclshmem_getmem(other, sym, len, pe);
        if (memcmp(out, other, len) != 0) {
            fail("aclshmem_getmem of %zu bytes at %p from pe %d did not fill the destination", len, sym, pe);
        }
        free(other);
    }
}

#endif
