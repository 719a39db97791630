/*
 * main.cpp - host side of the UB staging example. input[i] on PE p is p * 100000 + i. Afterwards on
 * PE p: output[i] = 2 * input_of(p+1)[i] + p; mirror[i] = what PE p+1 computed = 2 * input_of(p+2)[i]
 * + (p+1); copy[i] = input_of(p-1)[i] (PE p-1 copied its input into PE p's copy buffer).
 *
 *   aclshmrun -n 4 ./kernel_ub_mix
 */
#include <cstdint>
#include <vector>

#include "../common.h"

void ub_mix_demo(uint32_t block_dim, void *stream, uint8_t *input, uint8_t *output, uint8_t *mirror, uint8_t *copy,
                 int elems);

int main()
{
    constexpr uint32_t kBlocks = 16;
    constexpr int kElems = 16 * 1024; /* 1024 floats (4 KiB of UB) per block */
    int32_t device_id = 0;
    aclrtStream stream = example_init(&device_id, 64ULL << 20);
    int my_pe = aclshmem_my_pe();
    int n_pes = aclshmem_n_pes();
    size_t bytes = kElems * sizeof(float);
    auto *input = static_cast<float *>(aclshmem_malloc(bytes));
    auto *output = static_cast<float *>(aclshmem_calloc(kElems, sizeof(float)));
    auto *mirror = static_cast<float *>(aclshmem_calloc(kElems, sizeof(float)));
    auto *copy = static_cast<float *>(aclshmem_calloc(kElems, sizeof(float)));
    if (input == nullptr || output == nullptr || mirror == nullptr || copy == nullptr) {
        std::printf("FAIL: aclshmem_malloc\n");
        return 1;
    }
    auto in_of = [](int pe, int i) { return static_cast<float>(pe * 100000 + i); };
    std::vector<float> host(kElems);
    for (int i = 0; i < kElems; i++) {
        host[i] = in_of(my_pe, i);
    }
    ACL_CHECK(aclrtMemcpy(input, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    aclshmem_barrier_all();
    ub_mix_demo(kBlocks, stream, reinterpret_cast<uint8_t *>(input), reinterpret_cast<uint8_t *>(output),
                reinterpret_cast<uint8_t *>(mirror), reinterpret_cast<uint8_t *>(copy), kElems);
    ACL_CHECK(aclrtSynchronizeStream(stream));
    aclshmem_barrier_all();
    int next = (my_pe + 1) % n_pes;
    int next2 = (my_pe + 2) % n_pes;
    int prev = (my_pe + n_pes - 1) % n_pes;
    int errors = 0;
    for (int i = 0; i < kElems; i++) {
        float want_out = 2 * in_of(next, i) + my_pe;
        float want_mirror = 2 * in_of(next2, i) + next;
        float want_copy = in_of(prev, i);
        if ((output[i] != want_out || mirror[i] != want_mirror || copy[i] != want_copy) && errors++ < 5) {
            std::printf("FAIL: [PE %d] element %d: output %g (want %g) mirror %g (want %g) copy %g (want %g)\n",
                        my_pe, i, static_cast<double>(output[i]), static_cast<double>(want_out),
                        static_cast<double>(mirror[i]), static_cast<double>(want_mirror),
                        static_cast<double>(copy[i]), static_cast<double>(want_copy));
        }
    }
    aclshmem_barrier_all();
    aclshmem_free(copy);
    aclshmem_free(mirror);
    aclshmem_free(output);
    aclshmem_free(input);
    example_finalize(stream, device_id);
    if (errors == 0) {
        std::printf("kernel_ub_mix: PE %d of %d OK\n", my_pe, n_pes);
    }
    return errors == 0 ? 0 : 1;
}
