/*
 * main.cpp - host side of the allgather kernel example (upstream layout: main.cpp + a kernel file
 * with its launch wrapper). Every PE fills its input, launches the kernel on its stream with 8
 * blocks, synchronizes, and checks every PE's slot of its output; three rounds each of int32_t,
 * half and bfloat16_t.
 *
 *   aclshmrun -n 4 ./kernel_allgather
 */
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../common.h"
#include "allgather_kernel.h"
#include "opdev/bfloat16.h"
#include "opdev/fp16_t.h"

namespace {
constexpr int kElems = 5000;
constexpr uint32_t kBlocks = 8;

float value_of(int pe, int round, int i)
{
    return static_cast<float>(pe * 16 + round * 4 + (i % 7)); /* exact in half and bfloat16 */
}

/* the element as stored on the NPU: int32, IEEE half or bfloat16 bits */
void store(uint8_t *p, int dtype, float v)
{
    if (dtype == AG_INT32) {
        int32_t x = static_cast<int32_t>(v);
        std::memcpy(p, &x, 4);
    } else if (dtype == AG_HALF) {
        op::fp16_t h = v;
        std::memcpy(p, &h, 2);
    } else {
        op::bfloat16 b = v;
        std::memcpy(p, &b, 2);
    }
}

float load(const uint8_t *p, int dtype)
{
    if (dtype == AG_INT32) {
        int32_t x;
        std::memcpy(&x, p, 4);
        return static_cast<float>(x);
    }
    if (dtype == AG_HALF) {
        op::fp16_t h;
        std::memcpy(&h, p, 2);
        return h;
    }
    op::bfloat16 b;
    std::memcpy(&b, p, 2);
    return b;
}
} // namespace

int main()
{
    int32_t device_id = 0;
    aclrtStream stream = example_init(&device_id, 64ULL << 20);
    int my_pe = aclshmem_my_pe();
    int n_pes = aclshmem_n_pes();

    const size_t max_bytes = kElems * sizeof(int32_t);
    auto *input = static_cast<uint8_t *>(aclshmem_malloc(max_bytes));
    auto *output = static_cast<uint8_t *>(aclshmem_malloc(max_bytes * n_pes));
    auto *flags = static_cast<uint8_t *>(aclshmem_calloc(n_pes, sizeof(int32_t)));
    if (input == nullptr || output == nullptr || flags == nullptr) {
        std::printf("FAIL: aclshmem_malloc\n");
        return 1;
    }
    std::vector<uint8_t> host(max_bytes * n_pes);
    int errors = 0;
    int round = 0;
    const int dtypes[] = {AG_INT32, AG_HALF, AG_BF16};
    for (int dtype : dtypes) {
        size_t esz = dtype == AG_INT32 ? 4 : 2;
        for (int r = 0; r < 3; r++) {
            round++;
            for (int i = 0; i < kElems; i++) {
                store(host.data() + i * esz, dtype, value_of(my_pe, round, i));
            }
            ACL_CHECK(aclrtMemcpy(input, kElems * esz, host.data(), kElems * esz, ACL_MEMCPY_HOST_TO_DEVICE));
            aclshmem_barrier_all();
            allgather_demo(kBlocks, stream, dtype, input, output, flags, kElems, round);
            ACL_CHECK(aclrtSynchronizeStream(stream));
            ACL_CHECK(aclrtMemcpy(host.data(), kElems * esz * n_pes, output, kElems * esz * n_pes,
                                  ACL_MEMCPY_DEVICE_TO_HOST));
            for (int pe = 0; pe < n_pes; pe++) {
                for (int i = 0; i < kElems; i++) {
                    float got = load(host.data() + (static_cast<size_t>(pe) * kElems + i) * esz, dtype);
                    if (got != value_of(pe, round, i) && errors++ < 5) {
                        std::printf("FAIL: [PE %d] dtype %d round %d: element %d from PE %d is %g, expected %g\n",
                                    my_pe, dtype, round, i, pe, static_cast<double>(got),
                                    static_cast<double>(value_of(pe, round, i)));
                    }
                }
            }
        }
    }
    aclshmem_barrier_all();
    aclshmem_free(flags);
    aclshmem_free(output);
    aclshmem_free(input);
    example_finalize(stream, device_id);
    if (errors == 0) {
        std::printf("kernel_allgather: PE %d of %d: %d rounds OK\n", my_pe, n_pes, round);
    }
    return errors == 0 ? 0 : 1;
}
