/*
 * stream_ring.c - a ring allgather driven entirely through a stream, in the style of a CANN SHMEM
 * host program: ACL runtime and device first, then the SHMEM instance; the data moves with
 * stream-ordered puts separated by stream-ordered barriers; the host only synchronizes the stream
 * once and copies the result back with aclrtMemcpy.
 *
 * Step s (0 <= s < n-1): every PE puts the block it received at step s-1 (its own block at step 0)
 * into slot s of its right neighbour, then a barrier on the stream. After n-1 steps slot s of PE p
 * holds the block of PE p-s-1, i.e. every PE has every other PE's block.
 *
 *   aclshmrun -n 4 ./stream_ring
 *
 * Links libaclshmem and libascendcl (CMake: aclshmem::aclshmem and aclshmem::ascendcl).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "shmem.h"

#define BLOCK_ELEMS 4096 /* int32 elements per block */
#define ITERATIONS 4

#define ACL_CHECK(call)                                                                       \
    do {                                                                                      \
        aclError ret_ = (call);                                                               \
        if (ret_ != ACL_SUCCESS) {                                                            \
            printf("FAIL: %s:%d: %s returned %d\n", __FILE__, __LINE__, #call, (int)ret_); \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

#define SHMEM_CHECK(call)                                                                     \
    do {                                                                                      \
        int ret_ = (call);                                                                    \
        if (ret_ != 0) {                                                                      \
            printf("FAIL: %s:%d: %s returned %d\n", __FILE__, __LINE__, #call, ret_);       \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

static int32_t value_of(int pe, int iteration, int i)
{
    return pe * 1000003 + iteration * 7919 + i;
}

int main(void)
{
    /* which PE am I: the launcher's variables (aclshmemx_set_attr_from_env reads them too) */
    const char *pe_env = getenv("ACLSHMEM_MY_PE");
    int32_t device_id = pe_env != NULL ? atoi(pe_env) % 16 : 0;

    ACL_CHECK(aclInit(NULL));
    ACL_CHECK(aclrtSetDevice(device_id));
    aclrtStream stream = NULL;
    ACL_CHECK(aclrtCreateStream(&stream));

    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    SHMEM_CHECK(aclshmemx_set_attr_from_env(&attr));
    attr.local_mem_size = 64ULL << 20;
    SHMEM_CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr));
    int my_pe = aclshmem_my_pe();
    int n_pes = aclshmem_n_pes();
    int right = (my_pe + 1) % n_pes;
    size_t block_bytes = BLOCK_ELEMS * sizeof(int32_t);
    int slots = n_pes > 1 ? n_pes - 1 : 1;

    /* symmetric "device" buffers: my block and one receive slot per step */
    int32_t *mine = (int32_t *)aclshmem_malloc(block_bytes);
    int32_t *slot = (int32_t *)aclshmem_malloc(block_bytes * (size_t)slots);
    if (mine == NULL || slot == NULL) {
        printf("FAIL: aclshmem_malloc\n");
        return 1;
    }

    /* host staging buffer */
    int32_t *host = NULL;
    ACL_CHECK(aclrtMallocHost((void **)&host, block_bytes * (size_t)slots));

    int errors = 0;
    for (int it = 0; it < ITERATIONS; it++) {
        for (int i = 0; i < BLOCK_ELEMS; i++) {
            host[i] = value_of(my_pe, it, i);
        }
        ACL_CHECK(aclrtMemcpy(mine, block_bytes, host, block_bytes, ACL_MEMCPY_HOST_TO_DEVICE));
        /* nobody may overwrite a slot its owner is still reading from the previous iteration */
        aclshmemx_barrier_all_on_stream(stream);

        for (int s = 0; s < n_pes - 1; s++) {
            int32_t *from = s == 0 ? mine : slot + (size_t)(s - 1) * BLOCK_ELEMS;
            aclshmemx_putmem_on_stream(slot + (size_t)s * BLOCK_ELEMS, from, block_bytes, right, stream);
            aclshmemx_barrier_all_on_stream(stream);
        }
        aclshmemx_quiet_on_stream(stream);
        ACL_CHECK(aclrtSynchronizeStream(stream));

        ACL_CHECK(aclrtMemcpy(host, block_bytes * (size_t)slots, slot, block_bytes * (size_t)(n_pes - 1),
                              ACL_MEMCPY_DEVICE_TO_HOST));
        for (int s = 0; s < n_pes - 1; s++) {
            int from_pe = ((my_pe - s - 1) % n_pes + n_pes) % n_pes;
            for (int i = 0; i < BLOCK_ELEMS; i++) {
                int32_t got = host[(size_t)s * BLOCK_ELEMS + i];
                if (got != value_of(from_pe, it, i)) {
                    if (errors++ < 5) {
                        printf("FAIL: [pe %d] iteration %d slot %d element %d: %d, expected %d (pe %d)\n", my_pe, it,
                               s, i, got, value_of(from_pe, it, i), from_pe);
                    }
                }
            }
        }
    }
    printf("stream_ring: PE %d: %d iterations, blocks of %d other PEs received, %d errors\n", my_pe, ITERATIONS,
           n_pes - 1, errors);

    aclshmemx_barrier_all_on_stream(stream);
    ACL_CHECK(aclrtSynchronizeStream(stream));
    ACL_CHECK(aclrtFreeHost(host));
    aclshmem_free(slot);
    aclshmem_free(mine);
    SHMEM_CHECK(aclshmem_finalize());
    ACL_CHECK(aclrtDestroyStream(stream));
    ACL_CHECK(aclrtResetDevice(device_id));
    ACL_CHECK(aclFinalize());
    if (errors == 0 && my_pe == 0) {
        printf("stream_ring: OK on %d PEs\n", n_pes);
    }
    return errors == 0 ? 0 : 1;
}
