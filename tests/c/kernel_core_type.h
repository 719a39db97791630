/*
 * kernel_core_type.h - device code of kernel_core_type.cpp that picks its cube-core or vector-core
 * variant at compile time through g_coreType, in the forms Ascend950 kernels use (a member template
 * whose default argument is g_coreType with one specialization per core kind, `if constexpr`,
 * std::conditional), in a header of the program's own, as the original's transpose_alltoall
 * example has it.
 */
#ifndef KERNEL_CORE_TYPE_H
#define KERNEL_CORE_TYPE_H

#include <cstdint>
#include <type_traits>

#include "kernel_operator.h"
#include "shmem.h"

namespace core_type {

/* words of the counts array */
enum : int { kAicTag, kAivTag, kAicOp, kAivOp, kInline, kConditional, kRuntimeAic, kCubeMacro, kAicC, kAivC, kRemote,
             kAivOnly, kWords };

template <int32_t CORE = g_coreType>
struct Tag;
template <>
struct Tag<AscendC::AIC> {
    static constexpr int word = kAicTag;
};
template <>
struct Tag<AscendC::AIV> {
    static constexpr int word = kAivTag;
};

struct Op {
    template <int32_t CORE = g_coreType>
    void operator()(int32_t *c);
};
template <>
inline void Op::operator()<AscendC::AIC>(int32_t *c)
{
    __atomic_fetch_add(&c[kAicOp], 1, __ATOMIC_SEQ_CST);
}
template <>
inline void Op::operator()<AscendC::AIV>(int32_t *c)
{
    __atomic_fetch_add(&c[kAivOp], 1, __ATOMIC_SEQ_CST);
    /* the device API from the vector variant: one add on the next PE per AIV context */
    aclshmem_int32_atomic_add(&c[kRemote], 1, (aclshmem_my_pe() + 1) % aclshmem_n_pes());
}

/* an inline function (not a template) whose body differs between the two builds */
inline int32_t kind_value()
{
    if constexpr (g_coreType == AscendC::AIC) {
        return 10;
    } else {
        return 20;
    }
}

} // namespace core_type

template <typename T>
__global__ __mix__(1, 2) __schedmode__(1) void CoreTypeKernel(T *c)
{
    __atomic_fetch_add(&c[core_type::Tag<>::word], 1, __ATOMIC_SEQ_CST);
    core_type::Op op;
    op(c);
    __atomic_fetch_add(&c[core_type::kInline], core_type::kind_value(), __ATOMIC_SEQ_CST);
    using Pick = typename std::conditional<g_coreType == AscendC::AIC, std::integral_constant<int, 100>,
                                           std::integral_constant<int, 1000>>::type;
    __atomic_fetch_add(&c[core_type::kConditional], Pick::value, __ATOMIC_SEQ_CST);
    if ASCEND_IS_AIC {
        __atomic_fetch_add(&c[core_type::kRuntimeAic], 1, __ATOMIC_SEQ_CST);
    }
#ifdef __DAV_C220_CUBE__
    __atomic_fetch_add(&c[core_type::kCubeMacro], 1, __ATOMIC_SEQ_CST);
#endif
}

extern "C" __global__ __aicore__ void CoreTypeC(int32_t *c)
{
    if constexpr (g_coreType == AscendC::AIC) {
        __atomic_fetch_add(&c[core_type::kAicC], 1, __ATOMIC_SEQ_CST);
    } else {
        __atomic_fetch_add(&c[core_type::kAivC], 1, __ATOMIC_SEQ_CST);
    }
}

/* an AIV-only kernel sees the vector core */
extern "C" [[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void CoreTypeAivOnly(int32_t *c)
{
    __atomic_fetch_add(&c[core_type::kAivOnly], core_type::kind_value(), __ATOMIC_SEQ_CST);
}

/* DataCopyPad<T, PaddingMode::Compact> (Ascend950): 5 rows of 7 int32 (28 bytes, not a 32-byte
   multiple) with a 4-byte gap between them in GM are packed back to back in UB; out1 gets the UB
   bytes as they lie (a plain DataCopy), out2 the rows written back with a 12-byte gap between them */
extern "C" [[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void CompactCopy(int32_t *src, int32_t *out1,
                                                                                int32_t *out2, uint32_t *ub_size)
{
    if (AscendC::GetBlockIdx() != 0) {
        return;
    }
    *ub_size = AscendC::GetUBSizeInBytes();
    AscendC::GlobalTensor<int32_t> gsrc, g1, g2;
    gsrc.SetGlobalBuffer(src);
    g1.SetGlobalBuffer(out1);
    g2.SetGlobalBuffer(out2);
    AscendC::LocalTensor<int32_t> ub(AscendC::TPosition::VECCALC, 0, 64);
    AscendC::DataCopyExtParams in(5, 7 * sizeof(int32_t), sizeof(int32_t), 0, 0);
    AscendC::DataCopyPadExtParams<int32_t> pad(false, 0, 0, 0);
    AscendC::DataCopyPad<int32_t, AscendC::PaddingMode::Compact>(ub, gsrc, in, pad);
    AscendC::DataCopy(g1, ub, 40);
    AscendC::DataCopyExtParams out(5, 7 * sizeof(int32_t), 0, 3 * sizeof(int32_t), 0);
    AscendC::DataCopyPad<int32_t, AscendC::PaddingMode::Compact>(g2, ub, out);
}

#endif
