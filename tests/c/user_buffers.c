/* aclshmemx_init_attr_with_buffers / aclshmemx_get_buffer_ptr: device buffers of the program
 * (aclrtMallocPhysical + aclrtMapMem of the CPU libascendcl) as a fixed part of the symmetric heap.
 * Run by tests/user_buffers.rs under aclshmrun.
 *
 *   basic     (any PEs on one node; basic_nodes across nodes) 5 init/finalize cycles, each with two buffers (one given its mem_handle, one
 *             by address only, whose own mapping and handle the program drops after init): data
 *             written before init is there; the heap part and the program's view are the same
 *             bytes; aclshmem_ptr, put, get, atomics and put-with-signal reach every PE's buffers;
 *             aclshmem_malloc still hands out local_mem_size, after the buffers (the heap's fixed part
 *             comes first); the buffers cannot be freed;
 *             aclshmemx_get_buffer_ptr of other addresses and after finalize is NULL
 *   errors    (1 PE) every refusal and its return code, the library left uninitialised; then a good
 *             init
 *   mismatch  (2+ PEs) PE 1 gives another size: INVALID_PARAM on every PE (another local_mem_size:
 *             SMEM_ERROR); then a matching init
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "shmem.h"
#include "test_util.h"

#define MB2 ((size_t)2 << 20)

static int me, npes;

/* One buffer of the program: a reservation with one physical allocation mapped over all of it. */
struct buf {
    void *va;
    aclrtDrvMemHandle h;
    size_t size;
};

static struct buf make_buf(size_t size)
{
    struct buf b = {NULL, NULL, size};
    aclrtPhysicalMemProp prop;
    aclrtMemAccessDesc acc;
    size_t g = 0;
    memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CHECK_RC(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g), ACL_SUCCESS);
    CHECK(g == MB2 && size % g == 0, "granularity %zu", g);
    CHECK_RC(aclrtMallocPhysical(&b.h, size, &prop, 0), ACL_SUCCESS);
    CHECK_RC(aclrtReserveMemAddress(&b.va, size, 0, NULL, 0), ACL_SUCCESS);
    CHECK_RC(aclrtMapMem(b.va, size, 0, b.h, 0), ACL_SUCCESS);
    memset(&acc, 0, sizeof acc);
    acc.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
    acc.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    acc.location.id = 0;
    CHECK_RC(aclrtMemSetAccess(b.va, size, &acc, 1), ACL_SUCCESS);
    return b;
}

static void drop_buf(struct buf *b)
{
    if (b->va != NULL) {
        CHECK_RC(aclrtUnmapMem(b->va), ACL_SUCCESS);
        CHECK_RC(aclrtReleaseMemAddress(b->va), ACL_SUCCESS);
        b->va = NULL;
    }
    if (b->h != NULL) {
        CHECK_RC(aclrtFreePhysical(b->h), ACL_SUCCESS);
        b->h = NULL;
    }
}

static aclshmemx_init_attr_t attrs(uint64_t local)
{
    aclshmemx_init_attr_t a = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    CHECK_RC(aclshmemx_set_attr_from_env(&a), 0);
    a.local_mem_size = local;
    return a;
}

static aclshmemx_buffer_desc_t desc(void *addr, uint64_t size, const aclshmemx_buffer_optional_attr_t *opt)
{
    aclshmemx_buffer_desc_t d;
    memset(&d, 0, sizeof d);
    d.addr = addr;
    d.size = size;
    d.optional_attr = opt;
    return d;
}

/* one_node: every PE runs on this node, so aclshmem_ptr reaches every peer */
static void basic(int one_node)
{
    for (int cycle = 0; cycle < 5; cycle++) {
        struct buf a = make_buf(MB2), b = make_buf(2 * MB2);
        aclshmemx_buffer_optional_attr_t opt;
        aclshmemx_buffer_desc_t d[2];
        int64_t *pa, *pb, *pa_user = (int64_t *)a.va, *pb_user = (int64_t *)b.va;
        const size_t na = MB2 / sizeof(int64_t);
        /* data the program put there before init stays */
        for (size_t i = 0; i < na; i += 4099) {
            pa_user[i] = (int64_t)me * 1000003 + (int64_t)i + cycle;
        }
        memset(&opt, 0, sizeof opt);
        opt.mem_handle = b.h;
        d[0] = desc(a.va, MB2, NULL);
        d[1] = desc(b.va, 2 * MB2, &opt);
        aclshmemx_init_attr_t at = attrs(4 * MB2);
        CHECK_RC(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 2), 0);
        CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_IS_INITIALIZED);
        CHECK(aclshmem_my_pe() == me && aclshmem_n_pes() == npes, "pe");

        pa = (int64_t *)aclshmemx_get_buffer_ptr(a.va);
        pb = (int64_t *)aclshmemx_get_buffer_ptr(b.va);
        CHECK(pa != NULL && pb != NULL && pa != pa_user && pb != pb_user, "buffer pointers %p %p", (void *)pa,
              (void *)pb);
        CHECK((char *)aclshmemx_get_buffer_ptr((char *)a.va + 8) == (char *)pa + 8, "interior pointer");
        CHECK((char *)aclshmemx_get_buffer_ptr((char *)b.va + 2 * MB2 - 1) == (char *)pb + 2 * MB2 - 1, "last byte");
        CHECK((char *)pb == (char *)pa + MB2, "buffers in descriptor order, one after the other");
        CHECK(aclshmemx_get_buffer_ptr((char *)b.va + 2 * MB2) == NULL, "past the end");
        CHECK(aclshmemx_get_buffer_ptr(&cycle) == NULL, "not a buffer");
        CHECK(aclshmemx_get_buffer_ptr(NULL) == NULL, "NULL");
        CHECK(aclshmemx_get_buffer_ptr(pa) == NULL, "a heap address is not a buffer address");

        /* the heap part and the program's view are the same bytes */
        for (size_t i = 0; i < na; i += 4099) {
            CHECK(pa[i] == (int64_t)me * 1000003 + (int64_t)i + cycle, "pre-init data at %zu", i);
        }
        pb[7] = 77 + me;
        CHECK(pb_user[7] == 77 + me, "heap write not seen by the program's mapping");
        pb_user[8] = 88 + me;
        CHECK(pb[8] == 88 + me, "program write not seen in the heap");
        memset(pb_user + 16, 0, 64 * sizeof(int64_t));
        pb[100] = 0;

        /* buffer a by address only: the program drops its own mapping and handle now; the heap
         * keeps the memory until finalize */
        drop_buf(&a);
        CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_IS_INITIALIZED);
        aclshmem_barrier_all();

        int peer = (me + 1) % npes, from = (me + npes - 1) % npes;
        int64_t *rp = (int64_t *)aclshmem_ptr(pa, peer);
        CHECK(rp != NULL || !one_node, "aclshmem_ptr of a same-node peer's buffer is NULL");
        CHECK(rp == NULL || rp[4099] == (int64_t)peer * 1000003 + 4099 + cycle,
              "peer data through aclshmem_ptr: %lld", (long long)rp[4099]);

        /* put into the peer's buffer b (its program sees it), get from its buffer a */
        int64_t src[64], got = -1;
        for (int i = 0; i < 64; i++) {
            src[i] = (int64_t)me << 32 | (int64_t)i;
        }
        aclshmem_putmem(pb + 16, src, sizeof src, peer);
        aclshmem_getmem(&got, pa + 2 * 4099, sizeof got, peer);
        CHECK(got == (int64_t)peer * 1000003 + 2 * 4099 + cycle, "get from the peer's buffer: %lld", (long long)got);
        /* every PE adds to PE 0's word 100 of buffer b */
        aclshmem_int64_atomic_add(pb + 100, me + 1, 0);
        aclshmem_barrier_all();
        for (int i = 0; i < 64; i++) {
            CHECK(pb_user[16 + i] == ((int64_t)from << 32 | (int64_t)i), "put from PE %d not in the program's view",
                  from);
        }
        if (me == 0) {
            CHECK(pb_user[100] == (int64_t)npes * (npes + 1) / 2, "atomics: %lld", (long long)pb_user[100]);
        }

        /* put-with-signal into the buffer */
        aclshmem_barrier_all();
        int32_t *sig = (int32_t *)(pb + 200);
        *sig = 0;
        aclshmem_barrier_all();
        int64_t token = 4242 + me;
        aclshmemx_putmem_signal(pb + 201, &token, sizeof token, sig, me + 1, ACLSHMEM_SIGNAL_SET, peer);
        aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_EQ, from + 1);
        CHECK(pb[201] == 4242 + from, "put-with-signal payload %lld", (long long)pb[201]);

        /* aclshmem_malloc: local_mem_size as without buffers, and never inside the buffers */
        char *big = (char *)aclshmem_malloc(4 * MB2);
        CHECK(big != NULL, "local_mem_size bytes cannot be allocated");
        CHECK(big >= (char *)pb + 2 * MB2, "allocation not after the buffers (the heap's fixed part comes first)");
        memset(big, 1, 4 * MB2);
        CHECK(pa[4099] == (int64_t)me * 1000003 + 4099 + cycle, "allocation wrote into the buffers");
        aclshmem_free(big);
        char *small = (char *)aclshmem_malloc(64);
        CHECK(small != NULL && small >= (char *)pb + 2 * MB2, "a small allocation before the buffers");
        aclshmem_free(small);
        aclshmem_free(pa); /* refused, logged */
        {
            char *too_big = (char *)aclshmem_malloc(6 * MB2);
            CHECK(too_big == NULL, "more than local_mem_size allocated: %p (buffers %p %p, big %p, base %p)", (void *)too_big, (void *)pa, (void *)pb, (void *)big, aclshmemx_get_heap_base(DEVICE_SIDE));
        }
        CHECK(pa[4099] == (int64_t)me * 1000003 + 4099 + cycle, "buffer changed");

        aclshmem_barrier_all();
        CHECK_RC(aclshmem_finalize(), 0);
        CHECK(aclshmemx_get_buffer_ptr(b.va) == NULL, "buffer pointer after finalize");
        /* the program's memory is its own again, with what the job wrote */
        CHECK(pb_user[16] == ((int64_t)from << 32), "the program's view after finalize");
        drop_buf(&b);
    }
}

static void errors(void)
{
    struct buf b = make_buf(2 * MB2), c = make_buf(MB2);
    aclshmemx_buffer_optional_attr_t opt;
    aclshmemx_buffer_desc_t d[3];
    aclshmemx_init_attr_t at = attrs(MB2);
    static aclshmemx_buffer_desc_t many[1025];
    void *heap = malloc(4 * MB2);
    char *host = (char *)(((uintptr_t)heap + MB2 - 1) & ~(uintptr_t)(MB2 - 1));

    d[0] = desc(b.va, 2 * MB2, NULL);
#define REFUSED(call, code)                                                      \
    do {                                                                         \
        CHECK_RC(call, code);                                                    \
        CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);      \
    } while (0)
    REFUSED(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, NULL, d, 1), ACLSHMEM_INVALID_PARAM);
    REFUSED(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, NULL, 1), ACLSHMEM_INVALID_PARAM);
    REFUSED(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 0), ACLSHMEM_INVALID_PARAM);
    for (int i = 0; i < 1025; i++) {
        many[i] = desc(b.va, 2 * MB2, NULL);
    }
    REFUSED(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, many, 1025), ACLSHMEM_INVALID_VALUE);
    /* attributes: local_mem_size not a page multiple, another engine, the usual checks */
    at.local_mem_size = ACLSHMEM_PAGE_SIZE - 1;
    REFUSED(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 1), ACLSHMEM_INVALID_PARAM);
    at.local_mem_size = ACLSHMEM_PAGE_SIZE;
    at.option_attr.data_op_engine_type = ACLSHMEM_DATA_OP_SDMA;
    REFUSED(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 1), ACLSHMEM_NOT_SUPPORTED);
    at.option_attr.data_op_engine_type = ACLSHMEM_DATA_OP_ROCE;
    REFUSED(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 1), ACLSHMEM_NOT_SUPPORTED);
    at.option_attr.data_op_engine_type = ACLSHMEM_DATA_OP_MTE | ACLSHMEM_DATA_OP_SDMA;
    REFUSED(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 1), ACLSHMEM_NOT_SUPPORTED);
    at.option_attr.data_op_engine_type = ACLSHMEM_DATA_OP_MTE;
    at.n_pes = 0;
    REFUSED(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 1), ACLSHMEM_INVALID_VALUE);
    at = attrs(MB2);
    /* descriptors */
    d[0] = desc(NULL, 2 * MB2, NULL);
    REFUSED(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 1), ACLSHMEM_INVALID_PARAM);
    d[0] = desc(b.va, 0, NULL);
    REFUSED(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 1), ACLSHMEM_INVALID_PARAM);
    d[0] = desc(b.va, MB2 + 4096, NULL);
    REFUSED(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 1), ACLSHMEM_INVALID_PARAM);
    d[0] = desc(b.va, 2 * MB2, NULL);
    d[0].reserved[4] = 1;
    REFUSED(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 1), ACLSHMEM_INVALID_PARAM);
    memset(&opt, 0, sizeof opt);
    opt.reserved[0] = 3;
    d[0] = desc(b.va, 2 * MB2, &opt);
    REFUSED(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 1), ACLSHMEM_INVALID_PARAM);
    memset(&opt, 0, sizeof opt);
    opt.fabric_handle = &opt;
    REFUSED(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 1), ACLSHMEM_NOT_SUPPORTED);
    /* the memory behind: not mapped device memory, past the mapping, another handle, overlap */
    d[0] = desc(host, 2 * MB2, NULL);
    REFUSED(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 1), ACLSHMEM_INVALID_PARAM);
    d[0] = desc(c.va, 2 * MB2, NULL);
    REFUSED(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 1), ACLSHMEM_INVALID_PARAM);
    memset(&opt, 0, sizeof opt);
    opt.mem_handle = c.h;
    d[0] = desc(b.va, 2 * MB2, &opt);
    REFUSED(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 1), ACLSHMEM_INVALID_PARAM);
    d[0] = desc(b.va, 2 * MB2, NULL);
    d[1] = desc((char *)b.va + MB2, MB2, NULL);
    REFUSED(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 2), ACLSHMEM_INVALID_PARAM);
    CHECK(aclshmemx_get_buffer_ptr(b.va) == NULL, "before init");
    free(heap);

    /* a sub-range of a mapping is a buffer too; local_mem_size 0 */
    d[0] = desc((char *)b.va + MB2, MB2, NULL);
    d[1] = desc(c.va, MB2, NULL);
    at = attrs(0);
    at.option_attr.data_op_engine_type = ACLSHMEM_DATA_OP_MTE | ACLSHMEM_DATA_OP_UDMA; /* accepted */
    CHECK_RC(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 2), 0);
    char *p = (char *)aclshmemx_get_buffer_ptr((char *)b.va + MB2);
    CHECK(p != NULL && aclshmemx_get_buffer_ptr(b.va) == NULL, "sub-range");
    p[5] = 55;
    CHECK(((char *)b.va)[MB2 + 5] == 55, "sub-range view");
    /* local_mem_size 0: nothing to allocate besides the buffers (the allocatable part follows them) */
    CHECK(aclshmem_malloc(64) == NULL, "an allocation with local_mem_size 0");
    CHECK_RC(aclshmem_finalize(), 0);
    drop_buf(&b);
    drop_buf(&c);
}

static void mismatch(void)
{
    struct buf b = make_buf(2 * MB2);
    aclshmemx_buffer_desc_t d[1];
    aclshmemx_init_attr_t at = attrs(MB2);
    d[0] = desc(b.va, me == 1 ? MB2 : 2 * MB2, NULL);
    CHECK_RC(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 1), ACLSHMEM_INVALID_PARAM);
    CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    /* the same sizes but another local_mem_size on PE 1: the heap layer's error (spec 8.1 step 8) */
    d[0] = desc(b.va, 2 * MB2, NULL);
    at = attrs(me == 1 ? 2 * MB2 : MB2);
    CHECK_RC(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 1), ACLSHMEM_SMEM_ERROR);
    CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    /* and through the plain init */
    at = attrs(me == 1 ? 2 * MB2 : MB2);
    CHECK_RC(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &at), ACLSHMEM_SMEM_ERROR);
    CHECK_RC(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    at = attrs(MB2);
    at.option_attr.data_op_engine_type = ACLSHMEM_DATA_OP_UDMA; /* accepted, as on Ascend950 */
    CHECK_RC(aclshmemx_init_attr_with_buffers(ACLSHMEMX_INIT_WITH_DEFAULT, &at, d, 1), 0);
    int64_t *p = (int64_t *)aclshmemx_get_buffer_ptr(b.va);
    CHECK(p != NULL, "buffer pointer");
    aclshmem_int64_p(p, me, (me + 1) % npes);
    aclshmem_barrier_all();
    CHECK(((int64_t *)b.va)[0] == (me + npes - 1) % npes, "p into the buffer");
    CHECK_RC(aclshmem_finalize(), 0);
    drop_buf(&b);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        return 2;
    }
    g_scenario = argv[1];
    me = g_pe = env_int("ACLSHMEM_MY_PE");
    npes = env_int("ACLSHMEM_N_PES");
    CHECK_RC(aclInit(NULL), ACL_SUCCESS);
    CHECK_RC(aclrtSetDevice(0), ACL_SUCCESS);
    if (strcmp(g_scenario, "basic") == 0) {
        basic(1);
    } else if (strcmp(g_scenario, "basic_nodes") == 0) {
        basic(0);
    } else if (strcmp(g_scenario, "errors") == 0) {
        errors();
    } else if (strcmp(g_scenario, "mismatch") == 0) {
        mismatch();
    } else {
        fail("unknown scenario");
    }
    CHECK_RC(aclrtResetDevice(0), ACL_SUCCESS);
    CHECK_RC(aclFinalize(), ACL_SUCCESS);
    if (me == 0) {
        printf("OK %s\n", g_scenario);
    }
    return 0;
}
