/*
 * allgather_kernel.cpp - an allgather kernel written as for the NPU: each block copies its share of
 * this PE's input into this PE's slot of every PE's output through UB staging
 * (aclshmemx_mte_put_nbi), then one block sets a flag on every PE, and the blocks wait until
 * every PE's flag says this round's data arrived. Built by aclshmem-cxx (CPU device mode).
 */
#include "kernel_operator.h"
#include "shmem.h"

#include "allgather_kernel.h"

constexpr uint32_t kStagingBytes = 16 * 1024;

template <typename T>
class AllGather {
public:
    __aicore__ inline void Init(GM_ADDR input, GM_ADDR output, GM_ADDR flags, int elems, int round)
    {
        input_ = (__gm__ T *)input;
        output_ = (__gm__ T *)output;
        flags_ = (__gm__ int32_t *)flags;
        elems_ = elems;
        round_ = round;
    }

    __aicore__ inline void Process()
    {
        int my_pe = aclshmem_my_pe();
        int n_pes = aclshmem_n_pes();
        int64_t block = AscendC::GetBlockIdx();
        int64_t blocks = AscendC::GetBlockNum();
        int per = (elems_ + blocks - 1) / blocks;
        int start = static_cast<int>(block) * per;
        int len = start >= elems_ ? 0 : (start + per > elems_ ? elems_ - start : per);
        __ubuf__ T *staging = (__ubuf__ T *)(static_cast<uint64_t>(block % 2) * kStagingBytes);

        if (len > 0) {
            for (int k = 0; k < n_pes; k++) {
                int peer = (my_pe + k) % n_pes;
                aclshmemx_mte_put_nbi(output_ + my_pe * elems_ + start, input_ + start, staging, kStagingBytes, len,
                                      peer, EVENT_ID0);
            }
        }
        AscendC::SetFlag<AscendC::HardEvent::MTE3_S>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_S>(EVENT_ID0);
        aclshmem_quiet();
        AscendC::SyncAll();

        if (block == 0) {
            for (int peer = 0; peer < n_pes; peer++) {
                aclshmemx_signal_op(flags_ + my_pe, round_, ACLSHMEM_SIGNAL_SET, peer);
            }
        }
        /* block b waits for PE b (and b + blocks, ...) through the translated local address */
        for (int pe = static_cast<int>(block); pe < n_pes; pe += static_cast<int>(blocks)) {
            __gm__ int32_t *flag = (__gm__ int32_t *)aclshmem_ptr(flags_ + pe, my_pe);
            aclshmem_signal_wait_until(flag, ACLSHMEM_CMP_GE, round_);
        }
        aclshmem_barrier_all();
    }

private:
    __gm__ T *input_;
    __gm__ T *output_;
    __gm__ int32_t *flags_;
    int elems_;
    int round_;
};

template <typename T>
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void ShmemAllGather(GM_ADDR input, GM_ADDR output, GM_ADDR flags,
                                                                      int elems, int round)
{
    AllGather<T> op;
    op.Init(input, output, flags, elems, round);
    op.Process();
}

void allgather_demo(uint32_t block_dim, void *stream, int dtype, uint8_t *input, uint8_t *output, uint8_t *flags,
                    int elems, int round)
{
    switch (dtype) {
        case AG_HALF:
            ShmemAllGather<float16_t><<<block_dim, nullptr, stream>>>(input, output, flags, elems, round);
            break;
        case AG_BF16:
            ShmemAllGather<bfloat16_t><<<block_dim, nullptr, stream>>>(input, output, flags, elems, round);
            break;
        default:
            ShmemAllGather<int32_t><<<block_dim, nullptr, stream>>>(input, output, flags, elems, round);
            break;
    }
}
