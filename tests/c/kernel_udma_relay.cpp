/*
 * kernel_udma_relay.cpp - the UDMA relay calls of a build with ACLSHMEM_RELAY_SUPPORT (defined
 * below, as -DACLSHMEM_RELAY_SUPPORT would), 3 or more PEs (tests/kernels.rs, udma_relay_*). One
 * scenario:
 *   udma_relay  relay puts and gets to the next PE through the one after it (pointer and tensor
 *               forms, a CONFIG or the default), batches of relay operations with pending_count;
 *               then kernels that end their block with a logged error and write nothing: a relay
 *               PE equal to the target, a target equal to the caller, and a queue-pair call and
 *               queue-pair quiet, which need a build without ACLSHMEM_RELAY_SUPPORT.
 */
#define ACLSHMEM_RELAY_SUPPORT 1

#include <cstdint>
#include <string>

#include "acl/acl.h"
#include "kernel_operator.h"
#include "kernel_test_util.h"
#include "shmem.h"

using namespace AscendC;

constexpr int kN = 32;
enum Region { R_PUT, R_GET, R_PUT_TENSOR, R_GET_TENSOR, R_PUT_BATCH, R_GET_BATCH, R_REGIONS };
inline bool is_get(int r)
{
    return r == R_GET || r == R_GET_TENSOR || r == R_GET_BATCH;
}

inline GlobalTensor<int32_t> gt(int32_t *p)
{
    GlobalTensor<int32_t> t;
    t.SetGlobalBuffer(p);
    return t;
}

[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void UdmaRelay(int32_t *dst, int32_t *src, int32_t *counts,
                                                                   int next, int relay)
{
    auto at = [&](int r) { return dst + r * kN; };
    auto *ub = reinterpret_cast<int32_t *>(uintptr_t{1024});
    LocalTensor<int32_t> buf;
    buf.address_.logicPos = static_cast<uint8_t>(TPosition::VECOUT);
    buf.address_.bufferAddr = 1024;
    buf.address_.dataLen = 2048;
    constexpr uint32_t c = kN / 4;

    aclshmemx_udma_relay_put_nbi<int32_t, PIPE_MTE3, ACLSHMEMX_UDMA_OP_CONFIG_SO>(at(R_PUT), src, ub, kN, next, relay,
                                                                                   0);
    aclshmemx_udma_relay_get_nbi<int32_t, PIPE_S>(at(R_GET), src, ub, kN, next, relay);
    aclshmemx_udma_relay_put_nbi(gt(at(R_PUT_TENSOR)), gt(src), buf, kN, next, relay);
    aclshmemx_udma_relay_get_nbi<int32_t, PIPE_MTE3, ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>(gt(at(R_GET_TENSOR)), gt(src),
                                                                                        buf, kN, next, relay, 0);
    {
        aclshmemx_submit_state_t state{};
        aclshmemx_defer_t defer(state);
        aclshmemx_submit_t submit(state);
        int32_t *d = at(R_PUT_BATCH);
        for (int i = 0; i < 3; i++) {
            aclshmemx_udma_relay_put_nbi<int32_t, PIPE_MTE3>(d + i * c, src + i * c, ub, c, next, relay, 0, defer);
        }
        counts[0] = static_cast<int32_t>(state.pending_count);
        aclshmemx_udma_relay_put_nbi<int32_t, PIPE_MTE3, ACLSHMEMX_UDMA_OP_CONFIG_SO>(d + 3 * c, src + 3 * c, ub, c,
                                                                                       next, relay, 0, submit);
        counts[1] = static_cast<int32_t>(state.pending_count);
    }
    {
        aclshmemx_submit_state_t state{};
        aclshmemx_defer_t defer(state);
        aclshmemx_submit_t submit(state);
        int32_t *d = at(R_GET_BATCH);
        for (int i = 0; i < 3; i++) {
            aclshmemx_udma_relay_get_nbi<int32_t, PIPE_MTE3, ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>(
                gt(d + i * c), gt(src + i * c), buf, c, next, relay, 0, defer);
        }
        counts[2] = static_cast<int32_t>(state.pending_count);
        aclshmemx_udma_relay_get_nbi(gt(d + 3 * c), gt(src + 3 * c), buf, c, next, relay, 0, submit);
        counts[3] = static_cast<int32_t>(state.pending_count);
    }
    aclshmemx_udma_quiet(next);
}

/* what = 0: relay_pe equal to the target; 1: the caller as the target; 2: a queue-pair put;
   3: a queue-pair quiet. Each ends the block before the store after it. */
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void UdmaRelayRefused(int32_t *dst, int32_t *src, int32_t *reached,
                                                                          int what, int me, int next)
{
    auto *ub = reinterpret_cast<int32_t *>(uintptr_t{1024});
    if (what == 0) {
        aclshmemx_udma_relay_put_nbi(dst, src, ub, kN, next, next);
    } else if (what == 1) {
        aclshmemx_udma_relay_get_nbi(dst, src, ub, kN, me, next);
    } else if (what == 2) {
        aclshmemx_udma_qp_put_nbi(dst, src, ub, kN, next, 0);
    } else {
        aclshmemx_udma_qp_quiet(next, 0);
    }
    reached[what] = 1;
}

static void udma_relay(aclrtStream stream)
{
    const int me = aclshmem_my_pe();
    const int npes = aclshmem_n_pes();
    const int next = (me + 1) % npes;
    const int prev = (me + npes - 1) % npes;
    const int relay = (me + 2) % npes;
    auto *src = static_cast<int32_t *>(aclshmem_calloc(kN, sizeof(int32_t)));
    auto *dst = static_cast<int32_t *>(aclshmem_calloc(R_REGIONS * kN, sizeof(int32_t)));
    auto *counts = static_cast<int32_t *>(aclshmem_calloc(4, sizeof(int32_t)));
    auto *reached = static_cast<int32_t *>(aclshmem_calloc(4, sizeof(int32_t)));
    for (int i = 0; i < kN; i++) {
        src[i] = me * 1000 + i;
    }
    for (int i = 0; i < 4; i++) {
        counts[i] = -1;
    }
    aclshmem_barrier_all();
    UdmaRelay<<<1, nullptr, stream>>>(dst, src, counts, next, relay);
    ACL_OK(aclrtSynchronizeStream(stream));
    aclshmem_barrier_all();
    check_pattern_regions(dst, R_REGIONS, kN, 1000, [&](int r) { return is_get(r) ? next : prev; });
    const int32_t want_counts[4] = {3, 0, 3, 0};
    for (int i = 0; i < 4; i++) {
        CHECK(counts[i] == want_counts[i], "pending_count %d is %d, expected %d", i, counts[i], want_counts[i]);
    }

    /* refused calls: the block ends (the synchronize reports it), nothing is written */
    aclshmem_barrier_all();
    for (int what = 0; what < 4; what++) {
        auto *target = dst + (what % 2 == 0 ? R_PUT : R_GET) * kN;
        for (int i = 0; i < kN; i++) {
            target[i] = -5;
        }
        aclshmem_barrier_all();
        UdmaRelayRefused<<<1, nullptr, stream>>>(target, src, reached, what, me, next);
        aclError rc = aclrtSynchronizeStream(stream);
        CHECK(rc != ACL_SUCCESS, "refused call %d: the synchronize returned success", what);
        aclshmem_barrier_all();
        CHECK(reached[what] == 0, "refused call %d: the block went on after it", what);
        int changed = 0;
        for (int i = 0; i < kN; i++) {
            changed += target[i] != -5;
        }
        CHECK(changed == 0, "refused call %d: %d elements written", what, changed);
    }
    aclshmem_barrier_all();
    aclshmem_free(reached);
    aclshmem_free(counts);
    aclshmem_free(dst);
    aclshmem_free(src);
}

int main(int argc, char **argv)
{
    auto run = [](const std::string &scenario, aclrtStream stream, aclshmemx_init_attr_t &) {
        if (scenario != "udma_relay") {
            return false;
        }
        if (aclshmem_n_pes() < 3) {
            std::printf("FAIL: udma_relay needs 3 or more PEs\n");
            g_errors++;
            return true;
        }
        udma_relay(stream);
        return true;
    };
    return kernel_test_main(argc, argv, "kernel_udma_relay", run);
}
