/*
 * kernel_vec_arch.cpp - built by tests/kernels.rs `wrapper_vector_arch_builds_aiv_only_kernels`
 * with the original device compiler's options for a vector-only build (`-xcce
 * --cce-aicore-arch=dav-c220-vec --cce-auto-sync`), as the original's CMake builds its vector-only
 * examples: aclshmem-cxx takes those options out and runs every kernel of the file as AIV-only
 * (blockDim contexts), also one without a core_ratio attribute, which would otherwise be MIX.
 *   vec_arch  a kernel without a ratio counts its contexts and their highest GetBlockIdx()
 */
#include <cstdint>
#include <cstdio>
#include <string>

#include "acl/acl.h"
#include "kernel_operator.h"
#include "shmem.h"
#include "kernel_test_util.h"

__global__ __aicore__ void CountContexts(int32_t *out)
{
    __atomic_fetch_add(&out[0], 1, __ATOMIC_SEQ_CST);
    int32_t idx = static_cast<int32_t>(AscendC::GetBlockIdx());
    int32_t cur = __atomic_load_n(&out[1], __ATOMIC_SEQ_CST);
    while (idx > cur && !__atomic_compare_exchange_n(&out[1], &cur, idx, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
}

static void vec_arch(aclrtStream stream)
{
    constexpr uint32_t kBlocks = 6;
    auto *out = static_cast<int32_t *>(aclshmem_calloc(2, sizeof(int32_t)));
    CountContexts<<<kBlocks, nullptr, stream>>>(out);
    ACL_OK(aclrtSynchronizeStream(stream));
    CHECK(out[0] == static_cast<int32_t>(kBlocks), "%d contexts ran, expected %u (AIV-only)", out[0], kBlocks);
    CHECK(out[1] == static_cast<int32_t>(kBlocks) - 1, "highest GetBlockIdx %d, expected %u", out[1], kBlocks - 1);
    aclshmem_free(out);
}

int main(int argc, char **argv)
{
    auto run = [](const std::string &scenario, aclrtStream stream, aclshmemx_init_attr_t &) {
        if (scenario != "vec_arch") {
            return false;
        }
        vec_arch(stream);
        return true;
    };
    return kernel_test_main(argc, argv, "kernel_vec_arch", run);
}
