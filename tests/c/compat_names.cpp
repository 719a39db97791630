/*
 * compat_names.cpp - programs written against an earlier release of the original (its aclshmem_*
 * headers) still compile and run (tests/kernels.rs, earlier_release_names_2pes). One scenario:
 *   compat  host: aclshmem_put_<T>_mem, aclshmem_get_<T>_mem[_nbi], aclshmem_put_<T>_mem_signal with
 *           checked results; a kernel: the typed _mem_nbi names (GM and put-with-signal), the MTE
 *           engine's old names with an event id (GM<->GM with staging, non-contiguous, tensor and
 *           UB<->GM forms), the int8_t byte copy of aclshmemx_mte_put_mem_nbi, the RoCE old names
 *           and the half family, each into its own slot. Only PE 0 calls them (on PE 1), so a put that went the wrong way
 *           (a get) or a get that became a put leaves a different memory image.
 *           Every other old name is called in code that is compiled (and launched with
 *           really == false) but not run.
 */
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "acl/acl.h"
#include "kernel_operator.h"
#include "aclshmem.h"
#include "kernel_test_util.h"

using namespace AscendC;

constexpr int kN = 16;
constexpr int kSlots = 12;

/* ---- every old name, compiled ---- */

#define HOST_NAMES(NAME, T)                                                                     \
    aclshmem_put_##NAME##_mem(reinterpret_cast<T *>(a), reinterpret_cast<T *>(b), 1, peer);     \
    aclshmem_put_##NAME##_mem_nbi(reinterpret_cast<T *>(a), reinterpret_cast<T *>(b), 1, peer); \
    aclshmem_get_##NAME##_mem(reinterpret_cast<T *>(a), reinterpret_cast<T *>(b), 1, peer);     \
    aclshmem_get_##NAME##_mem_nbi(reinterpret_cast<T *>(a), reinterpret_cast<T *>(b), 1, peer); \
    aclshmem_put_##NAME##_mem_signal(reinterpret_cast<T *>(a), reinterpret_cast<T *>(b), 1, sig, 1, \
                                     ACLSHMEM_SIGNAL_SET, peer);                                \
    aclshmem_put_##NAME##_mem_signal_nbi(reinterpret_cast<T *>(a), reinterpret_cast<T *>(b), 1, sig, 1, \
                                         ACLSHMEM_SIGNAL_ADD, peer);

/* host code of every typed name of the earlier release's host/data_plane/aclshmem_host_rma.h */
void host_names(void *a, void *b, uint8_t *sig, int peer, bool really)
{
    if (!really) {
        return;
    }
    ACLSHMEM_TYPE_FUNC(HOST_NAMES);
}

#define ATOMIC_ADD_NAME(NAME, T, HW) aclshmem_##NAME##_atomic_add(reinterpret_cast<T *>(g), T(), peer)
#define TEST_NAME(NAME, T) (void)static_cast<int (*)(T *, int, T)>(&aclshmem_##NAME##_test);

/* device code of every other old name; really == false only compiles it */
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void CompileOnly(int32_t *g, half *h, bfloat16_t *bf, int32_t *sig,
                                                                     int peer, bool really)
{
    if (!really) {
        return;
    }
    ACLSHMEM_TYPE_FUNC_ATOMIC_INT(ATOMIC_ADD_NAME);
    ACLSHMEM_TYPE_FUNC_ATOMIC_FLOAT(ATOMIC_ADD_NAME);
    ACLSHMEM_TEST_TYPE_FUNC(TEST_NAME)
    GlobalTensor<int32_t> gd, gs;
    gd.SetGlobalBuffer(g);
    gs.SetGlobalBuffer(g + kN);
    LocalTensor<int32_t> ub;
    ub.address_.logicPos = static_cast<uint8_t>(TPosition::VECOUT);
    ub.address_.bufferAddr = 4096;
    ub.address_.dataLen = kN * sizeof(int32_t);
    non_contiguous_copy_param p{2, 4, 8, 8};
    auto *ubp = reinterpret_cast<int32_t *>(uintptr_t{4096});
    /* typed device overloads through the host macros */
    aclshmem_put_int32_mem_nbi(gd, gs, kN, peer);
    aclshmem_get_int32_mem_nbi(gd, gs, p, peer);
    aclshmem_get_int32_mem_nbi(ub, gs, kN, peer);
    aclshmem_put_int32_mem_nbi(gd, ub, p, peer);
    aclshmem_put_int32_mem_signal(gd, gs, kN, sig, 1, ACLSHMEM_SIGNAL_SET, peer);
    aclshmem_put_int32_mem_signal_nbi(g, g + kN, p, sig, 1, ACLSHMEM_SIGNAL_ADD, peer);
    /* half and bfloat16 */
    aclshmem_put_half_mem(h, h + kN, kN, peer);
    aclshmem_get_half_mem(h, h + kN, kN, peer);
    aclshmem_put_half_mem_nbi(h, h + kN, kN, peer);
    aclshmem_get_half_mem_nbi(h, h + kN, kN, peer);
    aclshmem_put_half_mem_signal(h, h + kN, kN, sig, 1, ACLSHMEM_SIGNAL_SET, peer);
    aclshmem_put_half_mem_signal_nbi(h, h + kN, kN, sig, 1, ACLSHMEM_SIGNAL_SET, peer);
    aclshmem_put_bfloat16_mem(bf, bf + kN, kN, peer);
    aclshmem_get_bfloat16_mem(bf, bf + kN, kN, peer);
    aclshmem_put_bfloat16_mem_nbi(bf, bf + kN, kN, peer);
    aclshmem_get_bfloat16_mem_nbi(bf, bf + kN, kN, peer);
    aclshmem_put_bfloat16_mem_signal(bf, bf + kN, kN, sig, 1, ACLSHMEM_SIGNAL_SET, peer);
    aclshmem_put_bfloat16_mem_signal_nbi(bf, bf + kN, kN, sig, 1, ACLSHMEM_SIGNAL_SET, peer);
    /* MTE, every form, both old spellings */
    TEventID ev = EVENT_ID1;
    aclshmem_mte_get_mem_nbi(g, g + kN, ubp, 4096u, kN, peer, ev);
    aclshmem_mte_get_mem_nbi(g, g + kN, ubp, 4096u, p, peer, ev);
    aclshmem_mte_get_mem_nbi(gd, gs, ub, kN, peer, ev);
    aclshmem_mte_get_mem_nbi(gd, gs, ub, p, peer, ev);
    aclshmem_mte_get_mem_nbi(ubp, g, kN, peer, ev);
    aclshmem_mte_get_mem_nbi(ub, gs, kN, peer, ev);
    aclshmem_mte_get_mem_nbi(ubp, g, p, peer, ev);
    aclshmem_mte_get_mem_nbi(ub, gs, p, peer, ev);
    aclshmem_mte_put_mem_nbi(gd, gs, ub, p, peer, ev);
    aclshmem_mte_put_mem_nbi(gd, ub, kN, peer, ev);
    aclshmem_mte_put_mem_nbi(g, ubp, p, peer, ev);
    aclshmem_mte_put_mem_nbi(gd, ub, p, peer, ev);
    aclshmemx_mte_get_mem_nbi(g, g + kN, ubp, 4096u, kN, peer, ev);
    aclshmemx_mte_get_mem_nbi(reinterpret_cast<int8_t *>(g), reinterpret_cast<int8_t *>(g + kN), 64u, peer, true);
    aclshmemx_mte_get_mem_nbi(reinterpret_cast<int8_t *>(g), reinterpret_cast<int8_t *>(g + kN),
                              reinterpret_cast<int8_t *>(ubp), 4096u, 64u, peer, ev, true);
    aclshmemx_mte_put_mem_nbi(reinterpret_cast<int8_t *>(g), reinterpret_cast<int8_t *>(g + kN), 64u, peer, false);
    aclshmemx_mte_put_mem_nbi(gd, gs, ub, kN, peer, ev);
    /* RoCE, with and without an event id */
    aclshmem_roce_get_mem_nbi(gd, gs, ub, kN, peer);
    aclshmem_roce_put_mem_nbi(gd, gs, ub, kN, peer, ev);
    aclshmemx_roce_get_mem_nbi(g, g + kN, ubp, kN, peer, 0u);
    aclshmemx_roce_put_mem_nbi(gd, gs, ub, kN, peer);
    shmem_roce_get_mem_nbi(gd, gs, ub, kN, peer);
    shmem_roce_put_mem_nbi(gd, gs, ub, kN, peer);
    /* the atomics' type-list macros, each generating calls of the functions they list */
#define CALL_ADD(NAME, TYPE) aclshmem_##NAME##_atomic_add(reinterpret_cast<TYPE *>(g), static_cast<TYPE>(1), peer)
#define CALL_FETCH_ADD(NAME, TYPE) \
    (void)aclshmem_##NAME##_atomic_fetch_add(reinterpret_cast<TYPE *>(g), static_cast<TYPE>(1), peer)
#define CALL_SWAP(NAME, TYPE) (void)aclshmem_##NAME##_atomic_swap(reinterpret_cast<TYPE *>(g), TYPE{}, peer)
#define CALL_SWAP_CAST(NAME, TYPE, CAST)                                                       \
    static_assert(sizeof(TYPE) == sizeof(CAST), #NAME);                                         \
    (void)aclshmem_##NAME##_atomic_swap(reinterpret_cast<TYPE *>(g), TYPE{}, peer)
#define CALL_CAS_CAST(NAME, TYPE, CAST) \
    (void)aclshmem_##NAME##_atomic_compare_swap(reinterpret_cast<TYPE *>(g), TYPE{}, TYPE{}, peer)
#define CALL_AND(NAME, TYPE) aclshmem_##NAME##_atomic_and(reinterpret_cast<TYPE *>(g), TYPE{}, peer)
    ACLSHMEM_TYPE_FUNC_ATOMIC_ADD(CALL_ADD);
    ACLSHMEM_TYPE_FUNC_ATOMIC_ADD_910(CALL_ADD);
    ACLSHMEM_TYPE_FUNC_ATOMIC_ADD_EXT(CALL_ADD);
    ACLSHMEM_TYPE_FUNC_ATOMIC_ADD_950(CALL_FETCH_ADD);
    ACLSHMEM_TYPE_FUNC_ATOMIC_SWAP(CALL_SWAP);
    ACLSHMEM_TYPE_FUNC_ATOMIC_SWAP_CAST(CALL_SWAP_CAST);
    ACLSHMEM_TYPE_FUNC_ATOMIC_CAS_CAST(CALL_CAS_CAST);
    ACLSHMEM_TYPE_FUNC_ATOMIC_LOGIC(CALL_AND);
    aclshmem_quiet();
}

/* ---- compat: old names at run time ---- */

/* operation k fills slot k of `sym` (kN int32 each): on the peer for puts, here for gets; slot 0
   is the source, src[i] = 1000 * (pe + 1) + i */
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void Compat(int32_t *sym, int32_t *sig, half *hsym,
                                                                int8_t *b8, int next)
{
    int32_t *src = sym;
    auto slot = [sym](int k) { return sym + k * kN; };
    auto *staging = reinterpret_cast<int32_t *>(uintptr_t{1024});
    TEventID ev = EVENT_ID0;
    aclshmem_put_int32_mem_nbi(slot(1), src, kN, next);
    aclshmem_get_int32_mem_nbi(slot(2), src, kN, next); /* mine: the next PE's source */
    aclshmem_mte_put_mem_nbi(slot(3), src, staging, 4096u, kN, next, ev);
    aclshmem_mte_get_mem_nbi(slot(4), src, staging, 4096u, kN, next, ev);
    non_contiguous_copy_param rows{2, 4, 8, 8}; /* elements 0..3 and 8..11 */
    aclshmem_mte_put_mem_nbi(slot(5), src, staging, 4096u, rows, next, ev);
    GlobalTensor<int32_t> gd, gs;
    gd.SetGlobalBuffer(slot(6));
    gs.SetGlobalBuffer(src);
    LocalTensor<int32_t> buf;
    buf.address_.logicPos = static_cast<uint8_t>(TPosition::VECOUT);
    buf.address_.bufferAddr = 1024;
    buf.address_.dataLen = kN * sizeof(int32_t);
    aclshmem_mte_put_mem_nbi(gd, gs, buf, kN, next, ev);
    /* UB <-> GM: the next PE's source into UB, and back into its slot 7 */
    auto *ub = reinterpret_cast<int32_t *>(uintptr_t{8192});
    aclshmem_mte_get_mem_nbi(ub, src, kN, next, ev);
    PipeBarrier<PIPE_ALL>();
    aclshmem_mte_put_mem_nbi(slot(7), ub, kN, next, ev);
    aclshmem_roce_put_mem_nbi(slot(8), src, staging, kN, next);
    aclshmemx_roce_get_mem_nbi(slot(9), src, staging, kN, next);
    aclshmemx_mte_put_mem_nbi(b8 + kN, b8, reinterpret_cast<int8_t *>(staging), 4096u, kN, next, ev, false);
    aclshmem_put_half_mem(hsym + kN, hsym, kN, next);
    aclshmem_quiet();
    aclshmem_put_int32_mem_signal(slot(10), src, kN, sig, 5, ACLSHMEM_SIGNAL_SET, next);
    /* the state member's name of the earlier release */
    slot(11)[0] = static_cast<int32_t>(aclshmemi_get_state()->mte_config.event_id) + 1;
}

static int32_t src_of(int pe, int i)
{
    return 1000 * (pe + 1) + i;
}

static void compat(aclrtStream stream)
{
    int me = aclshmem_my_pe();
    int n = aclshmem_n_pes();
    int peer = (me + 1) % n;
    bool active = me == 0;  /* PE 0 calls, PE 1 is the target */
    bool target = me == 1;

    /* host: typed names of the earlier release */
    auto *h32 = static_cast<int32_t *>(aclshmem_calloc(4 * kN, sizeof(int32_t)));
    auto *hf = static_cast<float *>(aclshmem_calloc(2 * kN, sizeof(float)));
    auto *h64 = static_cast<int64_t *>(aclshmem_calloc(2 * kN, sizeof(int64_t)));
    auto *hsig = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    for (int i = 0; i < kN; i++) {
        h32[i] = src_of(me, i);
        hf[i] = static_cast<float>(src_of(me, i)) + 0.5f;
        h64[i] = (int64_t(1) << 40) + src_of(me, i);
    }
    aclshmem_barrier_all();
    float fget[kN] = {};
    if (active) {
        aclshmem_put_int32_mem(h32 + kN, h32, kN, peer);
        aclshmem_get_float_mem(fget, hf, kN, peer);
        aclshmem_get_int64_mem_nbi(h64 + kN, h64, kN, peer);
        aclshmem_quiet();
        aclshmem_put_uint32_mem_signal(reinterpret_cast<uint32_t *>(h32 + 2 * kN), reinterpret_cast<uint32_t *>(h32),
                                       kN, reinterpret_cast<uint8_t *>(hsig), 9, ACLSHMEM_SIGNAL_SET, peer);
    }
    if (target) {
        aclshmem_signal_wait_until(hsig, ACLSHMEM_CMP_EQ, 9);
    }
    for (int i = 0; i < kN; i++) {
        CHECK(h32[2 * kN + i] == (target ? src_of(0, i) : 0), "put_uint32_mem_signal: [%d] = %d", i, h32[2 * kN + i]);
        CHECK(fget[i] == (active ? static_cast<float>(src_of(1, i)) + 0.5f : 0.0f), "get_float_mem: [%d] = %f", i,
              fget[i]);
        CHECK(h64[kN + i] == (active ? (int64_t(1) << 40) + src_of(1, i) : 0), "get_int64_mem_nbi: [%d] = %lld", i,
              static_cast<long long>(h64[kN + i]));
    }
    aclshmem_barrier_all();
    for (int i = 0; i < kN; i++) {
        CHECK(h32[kN + i] == (target ? src_of(0, i) : 0), "put_int32_mem: [%d] = %d", i, h32[kN + i]);
    }

    /* kernel: the device names */
    auto *sym = static_cast<int32_t *>(aclshmem_calloc(kSlots * kN, sizeof(int32_t)));
    auto *sig = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    auto *hsym = static_cast<half *>(aclshmem_calloc(2 * kN, sizeof(half)));
    auto *b8 = static_cast<int8_t *>(aclshmem_calloc(2 * kN, 1));
    for (int i = 0; i < kN; i++) {
        sym[i] = src_of(me, i);
        int16_t bits = static_cast<int16_t>(src_of(me, i));
        std::memcpy(&hsym[i], &bits, 2);
        b8[i] = static_cast<int8_t>(10 * me + i);
    }
    aclshmem_barrier_all();
    if (active) {
        Compat<<<1, nullptr, stream>>>(sym, sig, hsym, b8, peer);
    }
    CompileOnly<<<1, nullptr, stream>>>(sym, hsym, nullptr, sig, peer, false);
    ACL_OK(aclrtSynchronizeStream(stream));
    if (target) {
        aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_EQ, 5);
    }
    aclshmem_barrier_all();
    const char *what[kSlots] = {"src",          "put_int32_mem_nbi",   "get_int32_mem_nbi", "mte_put_mem_nbi",
                                "mte_get_mem_nbi", "mte_put_mem_nbi rows", "mte_put_mem_nbi tensors",
                                "mte UB get/put", "roce_put_mem_nbi", "aclshmemx_roce_get_mem_nbi",
                                "put_int32_mem_signal", "mte_config.event_id + 1 (element 0)"};
    for (int i = 0; i < kN; i++) {
        /* puts land on the target, gets on the active PE; slot 7: the target's own source */
        int32_t put = target ? src_of(0, i) : 0;
        int32_t get = active ? src_of(1, i) : 0;
        int32_t want[kSlots] = {src_of(me, i), put, get, put, get, (i % 8) < 4 ? put : 0, put,
                                target ? src_of(1, i) : 0, put, get, put,
                                active && i == 0 ? static_cast<int32_t>(aclshmemx_dev_state()->mte_config.sync_id) + 1 : 0};
        for (int k = 0; k < kSlots; k++) {
            CHECK(sym[k * kN + i] == want[k], "%s: slot %d [%d] = %d, expected %d", what[k], k, i, sym[k * kN + i],
                  want[k]);
        }
        int16_t bits;
        std::memcpy(&bits, &hsym[kN + i], 2);
        CHECK(bits == (target ? static_cast<int16_t>(src_of(0, i)) : 0), "put_half_mem: [%d] = %d", i, bits);
        CHECK(b8[kN + i] == (target ? static_cast<int8_t>(i) : 0), "aclshmemx_mte_put_mem_nbi int8: [%d] = %d", i,
              b8[kN + i]);
    }
    host_names(h32 + 3 * kN, h32, reinterpret_cast<uint8_t *>(hsig), peer, false);
    aclshmem_barrier_all();
    aclshmem_free(b8);
    aclshmem_free(hsym);
    aclshmem_free(sig);
    aclshmem_free(sym);
    aclshmem_free(hsig);
    aclshmem_free(h64);
    aclshmem_free(hf);
    aclshmem_free(h32);
}

int main(int argc, char **argv)
{
    return kernel_test_main(argc, argv, "compat_names", [](const std::string &scenario, aclrtStream stream,
                                                            aclshmemx_init_attr_t &) {
        if (scenario == "compat") {
            compat(stream);
            return true;
        }
        return false;
    });
}
