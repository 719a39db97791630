/* Pointers into the symmetric heap mean the same object on every PE, as with OSHMEM's fixed heap
 * address, which some programs rely on (DMM-GAPBS keeps the addresses of its adjacency lists in
 * symmetric arrays and reads them from other PEs): PE 0 builds a linked list in the heap whose
 * links are plain pointers, and every PE walks it with gets, following PE 0's pointers. Also checks
 * that every PE's heap starts at PE 0's address. Prints a FAIL line when the heaps lie at different
 * addresses (ACLSHMEM_HEAP_SAME_ADDRESS=0). */
#include <stdint.h>
#include "osh_util.h"

struct node {
    long value;
    struct node *next;
};

static uintptr_t first_of_pe0;

int main(void) {
    shmem_init();
    int me = shmem_my_pe();
    struct node *nodes = shmem_malloc(8 * sizeof(struct node));
    struct node **head = shmem_malloc(sizeof *head);
    long *later = shmem_calloc(1 << 16, sizeof(long));
    if (me == 0) {
        for (int i = 0; i < 8; i++) {
            nodes[i].value = 100 + i;
            nodes[i].next = i < 7 ? &nodes[i + 1] : NULL;
        }
        *head = &nodes[0];
        first_of_pe0 = (uintptr_t)nodes;
    }
    shmem_barrier_all();
    uintptr_t theirs;
    shmem_getmem(&theirs, &first_of_pe0, sizeof theirs, 0);
    CHECK(theirs == (uintptr_t)nodes, "the heap block is at %#lx here, at %#lx on PE 0", (unsigned long)(uintptr_t)nodes,
          (unsigned long)theirs);
    if (theirs == (uintptr_t)nodes) {
        struct node *p;
        shmem_getmem(&p, head, sizeof p, 0);
        long sum = 0;
        int count = 0;
        while (p != NULL && count < 9) {
            struct node local;
            shmem_getmem(&local, p, sizeof local, 0);
            sum += local.value;
            count++;
            p = local.next;
        }
        CHECK(count == 8 && sum == 8 * 100 + 28, "walked %d nodes of PE 0's list, sum %ld", count, sum);
    }
    shmem_barrier_all();
    shmem_free(later);
    shmem_free(head);
    shmem_free(nodes);
    return osh_done("heap_address");
}
