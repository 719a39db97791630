/*
 * kernel_core_type.cpp - kernels that choose their cube-core or vector-core code at compile time
 * through g_coreType (kernel_core_type.h): aclshmem-cxx compiles such a source a second time as
 * the cube-core build, whose kernels the AIC contexts of MIX launches run (tests/kernels.rs,
 * wrapper_core_type_*). One scenario:
 *   core_type  each word of the counts shows which variant ran on which contexts: the AIC contexts
 *              (one per block) the cube-core variants, the AIV contexts (two per block) the vector
 *              ones, for a template kernel and an extern "C" kernel; an AIV-only kernel (blockDim AIV
 *              contexts) the vector one; the vector
 *              variant calls the device API (an atomic add on the next PE)
 */
#include <cstdint>
#include <string>

#include "acl/acl.h"
#include "kernel_core_type.h"
#include "kernel_test_util.h"

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
