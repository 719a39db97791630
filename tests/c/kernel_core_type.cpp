/*
 * kernel_core_type.cpp - kernels that choose their cube-core or vector-core code at compile time
 * through g_coreType (kernel_core_type.h): aclshmem-cxx compiles such a source a second time as
 * the cube-core build, whose kernels the AIC contexts of MIX launches run (tests/kernels.rs,
 * wrapper_core_type_*). One scenario:
 *   core_type  each word of the counts shows which variant ran on which contexts: the AIC contexts
 *              (one per block) the cube-core variants, the AIV contexts (two per block) the vector
 *              ones, for a template kernel and an extern "C" kernel; an AIV-only kernel (blockDim AIV
 *              contexts) the vector one; the vector
 *              variant calls the device API (an atomic add on the next PE); and the Ascend950 AscendC
 *              calls GetUBSizeInBytes() and DataCopyPad<T, PaddingMode::Compact> in both directions;
 *              and two MIX kernels one macro makes, on one line after preprocessing
 */
#include <cstdint>
#include <string>

#include "acl/acl.h"
#include "kernel_core_type.h"
#include "kernel_test_util.h"

/* two MIX kernels that one macro makes (they stand on one line after preprocessing, as the
   original's unit tests make one kernel per type): each counts its AIC and AIV contexts through
   g_coreType */
#define CORE_TYPE_PAIR_KERNEL(NAME, SLOT)                                                            \
    extern "C" __global__ __aicore__ void CoreTypePair_##NAME(int32_t *c)                            \
    {                                                                                               \
        if (g_coreType == AscendC::AIC) {                                                           \
            __atomic_fetch_add(&c[2 * (SLOT)], 1, __ATOMIC_SEQ_CST);                                \
        } else {                                                                                    \
            __atomic_fetch_add(&c[2 * (SLOT) + 1], 1, __ATOMIC_SEQ_CST);                            \
        }                                                                                           \
    }
#define CORE_TYPE_PAIR(K) K(first, 0) K(second, 1)
CORE_TYPE_PAIR(CORE_TYPE_PAIR_KERNEL)

static void core_type_scenario(aclrtStream stream)
{
    using namespace core_type;
    constexpr int32_t kBlocks = 6;
    auto *c = static_cast<int32_t *>(aclshmem_calloc(kWords, sizeof(int32_t)));
    aclshmem_barrier_all();
    CoreTypeKernel<int32_t><<<kBlocks, nullptr, stream>>>(c);
    CoreTypeC<<<kBlocks, nullptr, stream>>>(c);
    CoreTypeAivOnly<<<kBlocks, nullptr, stream>>>(c);
    ACL_OK(aclrtSynchronizeStream(stream));
    aclshmem_barrier_all();
    const int32_t aic = kBlocks, aiv = 2 * kBlocks;
    const int32_t expect[kWords] = {aic, aiv, aic, aiv, 10 * aic + 20 * aiv, 100 * aic + 1000 * aiv, aic, aic,
                                    aic, aiv, aiv, 20 * kBlocks};
    const char *names[kWords] = {"Tag<AIC>", "Tag<AIV>", "Op<AIC>", "Op<AIV>", "inline kind_value",
                                 "std::conditional", "ASCEND_IS_AIC", "__DAV_C220_CUBE__", "extern C AIC",
                                 "extern C AIV", "remote adds", "AIV-only kernel"};
    for (int w = 0; w < kWords; w++) {
        CHECK(c[w] == expect[w], "%s: %d, expected %d (blocks %d)", names[w], c[w], expect[w], kBlocks);
    }
    aclshmem_free(c);

    auto *pair = static_cast<int32_t *>(aclshmem_calloc(4, sizeof(int32_t)));
    CoreTypePair_first<<<kBlocks, nullptr, stream>>>(pair);
    CoreTypePair_second<<<kBlocks, nullptr, stream>>>(pair);
    ACL_OK(aclrtSynchronizeStream(stream));
    for (int k = 0; k < 2; k++) {
        CHECK(pair[2 * k] == aic && pair[2 * k + 1] == aiv, "macro-made kernel %d: %d AIC / %d AIV, expected %d / %d",
              k, pair[2 * k], pair[2 * k + 1], aic, aiv);
    }
    aclshmem_free(pair);

    /* Compact rows: source rows r of 7 values 100 * r + k, one int32 gap after each */
    auto *src = static_cast<int32_t *>(aclshmem_calloc(64, sizeof(int32_t)));
    auto *out1 = static_cast<int32_t *>(aclshmem_calloc(64, sizeof(int32_t)));
    auto *out2 = static_cast<int32_t *>(aclshmem_calloc(64, sizeof(int32_t)));
    auto *ub_size = static_cast<uint32_t *>(aclshmem_calloc(1, sizeof(uint32_t)));
    for (int r = 0; r < 5; r++) {
        for (int k = 0; k < 8; k++) {
            src[r * 8 + k] = k < 7 ? 100 * r + k : -1;
        }
    }
    CompactCopy<<<2, nullptr, stream>>>(src, out1, out2, ub_size);
    ACL_OK(aclrtSynchronizeStream(stream));
    CHECK(*ub_size == ACLSHMEM_UB_SIZE, "GetUBSizeInBytes() %u", *ub_size);
    for (int r = 0; r < 5; r++) {
        for (int k = 0; k < 7; k++) {
            CHECK(out1[r * 7 + k] == 100 * r + k, "Compact UB layout: word %d holds %d, expected %d", r * 7 + k,
                  out1[r * 7 + k], 100 * r + k);
            CHECK(out2[r * 10 + k] == 100 * r + k, "Compact write-back: word %d holds %d", r * 10 + k,
                  out2[r * 10 + k]);
        }
        for (int k = 7; k < 10 && r < 4; k++) {
            CHECK(out2[r * 10 + k] == 0, "Compact write-back wrote into the gap (word %d)", r * 10 + k);
        }
    }
    aclshmem_free(ub_size);
    aclshmem_free(out2);
    aclshmem_free(out1);
    aclshmem_free(src);
}

int main(int argc, char **argv)
{
    auto run = [](const std::string &scenario, aclrtStream stream, aclshmemx_init_attr_t &) {
        if (scenario != "core_type") {
            return false;
        }
        core_type_scenario(stream);
        return true;
    };
    return kernel_test_main(argc, argv, "kernel_core_type", run);
}
