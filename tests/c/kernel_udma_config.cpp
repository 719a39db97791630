/*
 * kernel_udma_config.cpp - the UDMA calls with a request-option template argument (CONFIG, an
 * aclshmemx_udma_op_config_t of newer original headers), in a build without ACLSHMEM_RELAY_SUPPORT
 * (tests/kernels.rs, udma_config_*; kernel_udma_relay.cpp is the relay build). One scenario:
 *   udma_config  single puts and gets (pointer, tensor; PIPE_S, PIPE_MTE3) with the library's
 *                constants and with the program's own constexpr configs; batches whose deferred
 *                operations take a cqe-0 config (explicit or the default of those forms) and whose
 *                submit a cqe-1 one, with pending_count; queue-pair puts, gets and batches; the
 *                three signal puts; atomics with and without a CONFIG. Every region, signal and
 *                fetched value is checked on the host.
 */
#include <cstdint>
#include <cstring>
#include <string>

#include "acl/acl.h"
#include "kernel_operator.h"
#include "kernel_test_util.h"
#include "shmem.h"

using namespace AscendC;

/* a program's own options, as kernels of newer releases define them */
constexpr aclshmemx_udma_op_config_t kFencedStrong{1U, 0U, 1U, ACLSHMEMX_UDMA_ODR_SO};
constexpr aclshmemx_udma_op_config_t kRelaxedNoCqe{0U, 0U, 0U, ACLSHMEMX_UDMA_ODR_RO};

static_assert(ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT.cqe == 1U && ACLSHMEMX_UDMA_OP_CONFIG_SO.cqe == 1U &&
                  ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE.cqe == 0U,
              "the single calls' defaults write a completion entry, the deferred ones' do not");
static_assert(ACLSHMEMX_UDMA_OP_CONFIG_SO.odr == ACLSHMEMX_UDMA_ODR_SO, "CONFIG_SO orders strongly");

constexpr int kN = 32;   /* elements per region */
constexpr int kQp = 4;   /* queue pairs configured before init */
constexpr int kWords = 8;
enum Region {
    R_PUT_SO,          /* put_nbi<T, PIPE_MTE3, CONFIG_SO>, pointers */
    R_GET_OWN,         /* get_nbi<T, PIPE_S, kFencedStrong>, pointers */
    R_PUT_TENSOR,      /* put_nbi<T, PIPE_MTE3, CONFIG_SO>, tensors */
    R_GET_TENSOR,      /* get_nbi<T, PIPE_MTE3, CONFIG_DEFAULT>, tensors */
    R_PUT_BATCH,       /* deferred puts (CONFIG_NO_CQE, then the forms' default), submit with CONFIG_SO */
    R_GET_BATCH,       /* deferred tensor gets with kRelaxedNoCqe, submit with the default */
    R_QP_PUT,          /* qp_put_nbi<T, PIPE_MTE3, CONFIG_SO> on queue pair 1 */
    R_QP_GET_BATCH,    /* qp_get_nbi batch on queue pair 2 */
    R_SIGNAL,          /* put_signal_nbi<T, CONFIG_SO> */
    R_SIGNAL_BUF,      /* put_signal_nbi<T, PIPE_MTE3, kFencedStrong>(..., buf, sync_id) */
    R_QP_SIGNAL,       /* qp_put_signal_nbi<T, CONFIG_SO> on queue pair 3 */
    R_REGIONS
};
inline bool is_get(int r)
{
    return r == R_GET_OWN || r == R_GET_TENSOR || r == R_GET_BATCH || r == R_QP_GET_BATCH;
}

inline GlobalTensor<int32_t> gt(int32_t *p)
{
    GlobalTensor<int32_t> t;
    t.SetGlobalBuffer(p);
    return t;
}

/* counts: pending_count after the deferred operations and after the submit of each of the three
   batches; fetched: the values the fetching atomics returned */
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void UdmaConfig(int32_t *dst, int32_t *src, uint64_t *sig,
                                                                    int64_t *words, int32_t *counts, int64_t *fetched,
                                                                    int next)
{
    auto at = [&](int r) { return dst + r * kN; };
    auto *ub = reinterpret_cast<int32_t *>(uintptr_t{1024});
    LocalTensor<int32_t> buf;
    buf.address_.logicPos = static_cast<uint8_t>(TPosition::VECOUT);
    buf.address_.bufferAddr = 1024;
    buf.address_.dataLen = 2048;
    constexpr uint32_t c = kN / 4;

    aclshmemx_udma_put_nbi<int32_t, PIPE_MTE3, ACLSHMEMX_UDMA_OP_CONFIG_SO>(at(R_PUT_SO), src, ub, kN, next, 0);
    aclshmemx_udma_get_nbi<int32_t, PIPE_S, kFencedStrong>(at(R_GET_OWN), src, ub, kN, next);
    aclshmemx_udma_put_nbi<int32_t, PIPE_MTE3, ACLSHMEMX_UDMA_OP_CONFIG_SO>(gt(at(R_PUT_TENSOR)), gt(src), buf, kN,
                                                                             next, 0);
    aclshmemx_udma_get_nbi<int32_t, PIPE_MTE3, ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>(gt(at(R_GET_TENSOR)), gt(src), buf,
                                                                                  kN, next, 0);
    {
        aclshmemx_submit_state_t state{};
        aclshmemx_defer_t defer(state);
        aclshmemx_submit_t submit(state);
        int32_t *d = at(R_PUT_BATCH);
        aclshmemx_udma_put_nbi<int32_t, PIPE_MTE3, ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>(d, src, ub, c, next, 0, defer);
        aclshmemx_udma_put_nbi<int32_t, PIPE_MTE3, kRelaxedNoCqe>(d + c, src + c, ub, c, next, 0, defer);
        aclshmemx_udma_put_nbi<int32_t, PIPE_MTE3>(d + 2 * c, src + 2 * c, ub, c, next, 0, defer);
        counts[0] = static_cast<int32_t>(state.pending_count);
        aclshmemx_udma_put_nbi<int32_t, PIPE_MTE3, ACLSHMEMX_UDMA_OP_CONFIG_SO>(d + 3 * c, src + 3 * c, ub, c, next,
                                                                                 0, submit);
        counts[1] = static_cast<int32_t>(state.pending_count);
    }
    {
        aclshmemx_submit_state_t state{};
        aclshmemx_defer_t defer(state);
        aclshmemx_submit_t submit(state);
        int32_t *d = at(R_GET_BATCH);
        for (int i = 0; i < 3; i++) {
            aclshmemx_udma_get_nbi<int32_t, PIPE_MTE3, kRelaxedNoCqe>(gt(d + i * c), gt(src + i * c), buf, c, next, 0,
                                                                      defer);
        }
        counts[2] = static_cast<int32_t>(state.pending_count);
        aclshmemx_udma_get_nbi(gt(d + 3 * c), gt(src + 3 * c), buf, c, next, 0, submit);
        counts[3] = static_cast<int32_t>(state.pending_count);
    }
    aclshmemx_udma_qp_put_nbi<int32_t, PIPE_MTE3, ACLSHMEMX_UDMA_OP_CONFIG_SO>(at(R_QP_PUT), src, ub, kN, next, 1, 0);
    {
        aclshmemx_submit_state_t state{};
        aclshmemx_defer_t defer(state);
        aclshmemx_submit_t submit(state);
        int32_t *d = at(R_QP_GET_BATCH);
        for (int i = 0; i < 3; i++) {
            aclshmemx_udma_qp_get_nbi<int32_t, PIPE_MTE3, ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>(d + i * c, src + i * c, ub,
                                                                                            c, next, 2, 0, defer);
        }
        counts[4] = static_cast<int32_t>(state.pending_count);
        aclshmemx_udma_qp_get_nbi<int32_t, PIPE_MTE3, kFencedStrong>(d + 3 * c, src + 3 * c, ub, c, next, 2, 0,
                                                                     submit);
        counts[5] = static_cast<int32_t>(state.pending_count);
    }
    aclshmemx_udma_put_signal_nbi<int32_t, ACLSHMEMX_UDMA_OP_CONFIG_SO>(at(R_SIGNAL), src, kN, sig, 77, next);
    aclshmemx_udma_put_signal_nbi<int32_t, PIPE_MTE3, kFencedStrong>(at(R_SIGNAL_BUF), src, kN, sig + 1, 88, next,
                                                                     reinterpret_cast<uint8_t *>(uintptr_t{4096}), 0);
    aclshmemx_udma_qp_put_signal_nbi<int32_t, ACLSHMEMX_UDMA_OP_CONFIG_SO>(at(R_QP_SIGNAL), src, kN, sig + 2, 99, next,
                                                                           3);
    aclshmemx_udma_qp_quiet(next, 1);
    aclshmemx_udma_quiet(next);

    /* atomics on the next PE's words (each PE is the only one to touch its next PE's words) */
    fetched[0] = aclshmemx_udma_atomic_fetch_add<int64_t, ACLSHMEMX_UDMA_OP_CONFIG_SO>(words, 5, next);
    aclshmemx_udma_atomic_inc<int64_t, kFencedStrong>(words, next);
    aclshmemx_udma_atomic_add(words, static_cast<int64_t>(10), next); /* the default CONFIG */
    fetched[1] = aclshmemx_udma_atomic_compare_swap<int64_t, ACLSHMEMX_UDMA_OP_CONFIG_SO>(words + 1, 0, 42, next);
    fetched[2] = aclshmemx_udma_atomic_swap<int64_t, kFencedStrong>(words + 2, 7, next);
    aclshmemx_udma_atomic_set<int64_t, ACLSHMEMX_UDMA_OP_CONFIG_SO>(words + 3, 123, next);
    fetched[3] = aclshmemx_udma_atomic_fetch_or<int64_t, ACLSHMEMX_UDMA_OP_CONFIG_SO>(words + 4, 0x30, next);
    aclshmemx_udma_atomic_xor<int64_t, ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>(words + 5, 0xff, next);
    fetched[4] = aclshmemx_udma_atomic_fetch_inc<int64_t, ACLSHMEMX_UDMA_OP_CONFIG_SO>(words + 6, next);
    fetched[5] = aclshmemx_udma_atomic_fetch<int64_t, kFencedStrong>(words + 7, next);
}

static void udma_config(aclrtStream stream)
{
    const int me = aclshmem_my_pe();
    const int npes = aclshmem_n_pes();
    const int next = (me + 1) % npes;
    const int prev = (me + npes - 1) % npes;
    auto *src = static_cast<int32_t *>(aclshmem_calloc(kN, sizeof(int32_t)));
    auto *dst = static_cast<int32_t *>(aclshmem_calloc(R_REGIONS * kN, sizeof(int32_t)));
    auto *sig = static_cast<uint64_t *>(aclshmem_calloc(3, sizeof(uint64_t)));
    auto *words = static_cast<int64_t *>(aclshmem_calloc(kWords, sizeof(int64_t)));
    auto *counts = static_cast<int32_t *>(aclshmem_calloc(6, sizeof(int32_t)));
    auto *fetched = static_cast<int64_t *>(aclshmem_calloc(6, sizeof(int64_t)));
    for (int i = 0; i < kN; i++) {
        src[i] = me * 1000 + i;
    }
    const int64_t init[kWords] = {100, 0, 3, 0, 0x0f, 0x0f, 40, 1000 + me};
    std::memcpy(words, init, sizeof init);
    for (int i = 0; i < 6; i++) {
        counts[i] = -1;
    }
    aclshmem_barrier_all();
    UdmaConfig<<<1, nullptr, stream>>>(dst, src, sig, words, counts, fetched, next);
    ACL_OK(aclrtSynchronizeStream(stream));
    aclshmem_barrier_all();
    check_pattern_regions(dst, R_REGIONS, kN, 1000, [&](int r) { return is_get(r) ? next : prev; });
    CHECK(sig[0] == 77 && sig[1] == 88 && sig[2] == 99, "signals %llu %llu %llu",
          static_cast<unsigned long long>(sig[0]), static_cast<unsigned long long>(sig[1]),
          static_cast<unsigned long long>(sig[2]));
    const int32_t want_counts[6] = {3, 0, 3, 0, 3, 0};
    for (int i = 0; i < 6; i++) {
        CHECK(counts[i] == want_counts[i], "pending_count %d is %d, expected %d", i, counts[i], want_counts[i]);
    }
    /* what the previous PE did to this PE's words, and what this PE fetched from the next one */
    const int64_t want_words[kWords] = {116, 42, 7, 123, 0x3f, 0xf0, 41, 1000 + me};
    for (int i = 0; i < kWords; i++) {
        CHECK(words[i] == want_words[i], "word %d is %lld, expected %lld", i, static_cast<long long>(words[i]),
              static_cast<long long>(want_words[i]));
    }
    const int64_t want_fetched[6] = {100, 0, 3, 0x0f, 40, 1000 + next};
    for (int i = 0; i < 6; i++) {
        CHECK(fetched[i] == want_fetched[i], "fetched %d is %lld, expected %lld", i,
              static_cast<long long>(fetched[i]), static_cast<long long>(want_fetched[i]));
    }
    aclshmem_barrier_all();
    aclshmem_free(fetched);
    aclshmem_free(counts);
    aclshmem_free(words);
    aclshmem_free(sig);
    aclshmem_free(dst);
    aclshmem_free(src);
}

int main(int argc, char **argv)
{
    auto run = [](const std::string &scenario, aclrtStream stream, aclshmemx_init_attr_t &) {
        if (scenario != "udma_config") {
            return false;
        }
        udma_config(stream);
        return true;
    };
    if (aclshmemx_set_qp_num(ACLSHMEM_DATA_OP_UDMA, kQp) != 0) {
        std::printf("FAIL: aclshmemx_set_qp_num\n");
        return 1;
    }
    return kernel_test_main(argc, argv, "kernel_udma_config", run);
}
