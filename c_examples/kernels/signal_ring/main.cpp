/*
 * main.cpp - host side of the put-signal ring: stage 0 of lane c on PE p holds p*1000000 + c*1000 +
 * i; after hops = n_pes - 1 passes, stage hops on PE p must hold the data PE p+1 started with.
 *
 *   aclshmrun -n 4 ./kernel_signal_ring
 */
#include <cstdint>
#include <vector>

#include "../common.h"

void signal_ring_demo(uint32_t block_dim, void *stream, uint8_t *stages, uint8_t *signals, int lane_elems, int hops);

int main()
{
    constexpr uint32_t kBlocks = 4; /* MIX kernel: 8 lanes */
    constexpr int kLanes = 2 * kBlocks;
    constexpr int kLaneElems = 1000;
    int32_t device_id = 0;
    aclrtStream stream = example_init(&device_id, 64ULL << 20);
    int my_pe = aclshmem_my_pe();
    int n_pes = aclshmem_n_pes();
    int hops = n_pes > 1 ? n_pes - 1 : 1;
    size_t stage_elems = static_cast<size_t>(kLanes) * kLaneElems;
    auto *stages = static_cast<int32_t *>(aclshmem_calloc((hops + 1) * stage_elems, sizeof(int32_t)));
    auto *signals = static_cast<int32_t *>(aclshmem_calloc((hops + 1) * kLanes, sizeof(int32_t)));
    if (stages == nullptr || signals == nullptr) {
        std::printf("FAIL: aclshmem_calloc\n");
        return 1;
    }
    std::vector<int32_t> host(stage_elems);
    for (size_t i = 0; i < stage_elems; i++) {
        host[i] = my_pe * 1000000 + static_cast<int32_t>(i);
    }
    ACL_CHECK(aclrtMemcpy(stages, stage_elems * 4, host.data(), stage_elems * 4, ACL_MEMCPY_HOST_TO_DEVICE));
    aclshmem_barrier_all();
    signal_ring_demo(kBlocks, stream, reinterpret_cast<uint8_t *>(stages), reinterpret_cast<uint8_t *>(signals),
                     kLaneElems, hops);
    ACL_CHECK(aclrtSynchronizeStream(stream));
    ACL_CHECK(aclrtMemcpy(host.data(), stage_elems * 4, stages + hops * stage_elems, stage_elems * 4,
                          ACL_MEMCPY_DEVICE_TO_HOST));
    int origin = (my_pe + hops * (n_pes - 1)) % n_pes; /* hops steps back along the ring */
    int errors = 0;
    for (size_t i = 0; i < stage_elems; i++) {
        int32_t want = origin * 1000000 + static_cast<int32_t>(i);
        if (host[i] != want && errors++ < 5) {
            std::printf("FAIL: [PE %d] element %zu is %d, expected %d\n", my_pe, i, host[i], want);
        }
    }
    for (int h = 1; h <= hops; h++) {
        for (int l = 0; l < kLanes; l++) {
            if (signals[h * kLanes + l] != h && errors++ < 10) {
                std::printf("FAIL: [PE %d] signal of hop %d lane %d is %d\n", my_pe, h, l, signals[h * kLanes + l]);
            }
        }
    }
    aclshmem_barrier_all();
    aclshmem_free(signals);
    aclshmem_free(stages);
    example_finalize(stream, device_id);
    if (errors == 0) {
        std::printf("kernel_signal_ring: PE %d of %d: %d hops x %d lanes OK\n", my_pe, n_pes, hops, kLanes);
    }
    return errors == 0 ? 0 : 1;
}
