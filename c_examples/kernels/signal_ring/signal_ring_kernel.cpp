/*
 * signal_ring_kernel.cpp - a ring pass with put-with-signal and device-side waits. A MIX kernel (no
 * core_ratio: two AIV contexts and one AIC per block; the AIC returns); AIV context c owns lane c.
 * At hop h every lane puts what it holds at stage h-1 into stage h of the next PE, with the lane's
 * signal of stage h set to h on arrival, then waits until its own signal of stage h (written by the previous PE) says h.
 */
#include "kernel_operator.h"
#include "shmem.h"

extern "C" __global__ __aicore__ void SignalRing(GM_ADDR stages, GM_ADDR signals, int lane_elems, int hops)
{
    if ASCEND_IS_AIC {
        return; /* a MIX kernel: the lanes are the AIV contexts */
    }
    int my_pe = aclshmem_my_pe();
    int n_pes = aclshmem_n_pes();
    int next = (my_pe + 1) % n_pes;
    int lanes = static_cast<int>(AscendC::GetBlockNum() * AscendC::GetSubBlockNum());
    int lane = static_cast<int>(AscendC::GetBlockIdx());
    __gm__ int32_t *data = (__gm__ int32_t *)stages;
    __gm__ int32_t *sig = (__gm__ int32_t *)signals;
    size_t stage_elems = static_cast<size_t>(lanes) * lane_elems;
    for (int h = 1; h <= hops; h++) {
        __gm__ int32_t *from = data + (h - 1) * stage_elems + lane * lane_elems;
        __gm__ int32_t *to = data + h * stage_elems + lane * lane_elems;
        __gm__ int32_t *word = sig + h * lanes + lane;
        aclshmem_int32_put_signal_nbi(to, from, lane_elems, word, h, ACLSHMEM_SIGNAL_SET, next);
        aclshmem_signal_wait_until(word, ACLSHMEM_CMP_EQ, h);
    }
}

void signal_ring_demo(uint32_t block_dim, void *stream, uint8_t *stages, uint8_t *signals, int lane_elems, int hops)
{
    SignalRing<<<block_dim, nullptr, stream>>>(stages, signals, lane_elems, hops);
}
