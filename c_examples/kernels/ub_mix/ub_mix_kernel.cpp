/*
 * ub_mix_kernel.cpp - a kernel that mixes UB staging with GM copies. Each block:
 *   1. gets its chunk of the next PE's input straight into UB (LocalTensor form of get_nbi),
 *   2. scales it in UB with AscendC::Muls and adds its PE number with AscendC::Adds,
 *   3. writes the result to this PE's output with DataCopyPad (UB -> GM),
 *   4. puts the same UB data into the previous PE's mirror buffer (UB-pointer form of put_nbi),
 *   5. copies GM -> GM with the MTE engine and a hand-built staging LocalTensor.
 */
#include "kernel_operator.h"
#include "shmem.h"

using namespace AscendC;

extern "C" [[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void UbMix(GM_ADDR input, GM_ADDR output,
                                                                         GM_ADDR mirror, GM_ADDR copy, int elems)
{
    int my_pe = aclshmem_my_pe();
    int n_pes = aclshmem_n_pes();
    int next = (my_pe + 1) % n_pes;
    int prev = (my_pe + n_pes - 1) % n_pes;
    int per = elems / static_cast<int>(GetBlockNum());
    int start = static_cast<int>(GetBlockIdx()) * per;

    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, per * sizeof(float));
    LocalTensor<float> ub = buf.Get<float>();

    GlobalTensor<float> in;
    in.SetGlobalBuffer((__gm__ float *)input + start, per);
    aclshmem_float_get_nbi(ub, in, per, next);
    PipeBarrier<PIPE_ALL>();

    Muls(ub, ub, 2.0f, per);
    Adds(ub, ub, static_cast<float>(my_pe), per);
    PipeBarrier<PIPE_ALL>();

    GlobalTensor<float> out;
    out.SetGlobalBuffer((__gm__ float *)output + start, per);
    DataCopyExtParams params(1, per * sizeof(float), 0, 0, 0);
    DataCopyPad(out, ub, params);

    __ubuf__ float *ub_ptr = (__ubuf__ float *)ub.GetPhyAddr();
    aclshmem_float_put_nbi((__gm__ float *)mirror + start, ub_ptr, per, prev);

    LocalTensor<float> staging;
    staging.address_.logicPos = static_cast<uint8_t>(TPosition::VECIN);
    staging.address_.bufferAddr = 64 * 1024;
    staging.address_.dataLen = 16 * 1024;
    GlobalTensor<float> cp;
    cp.SetGlobalBuffer((__gm__ float *)copy + start, per);
    aclshmemx_mte_put_nbi(cp, in, staging, per, next, EVENT_ID0);
    aclshmem_quiet();
}

void ub_mix_demo(uint32_t block_dim, void *stream, uint8_t *input, uint8_t *output, uint8_t *mirror, uint8_t *copy,
                 int elems)
{
    UbMix<<<block_dim, nullptr, stream>>>(input, output, mirror, copy, elems);
}
