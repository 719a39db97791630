/*
 * stream_allgather.cpp - an allgather with signals on a stream, in the style of a CANN SHMEM host
 * program (C++): every PE puts its block into its own slot of every PE's output buffer, each put
 * followed by a signal ADD on the target; then it waits on the stream until its own signal word
 * says that all n blocks of this round arrived, and the host copies the output back with
 * aclrtMemcpy after synchronizing the stream. The host never blocks on a peer: all waiting happens
 * in stream order.
 *
 *   aclshmrun -n 4 ./stream_allgather
 *
 * Links libaclshmem and libascendcl (CMake: aclshmem::aclshmem and aclshmem::ascendcl).
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "acl/acl.h"
#include "shmem.h"

#define ACL_CHECK(call)                                                                            \
    do {                                                                                           \
        aclError ret_ = (call);                                                                    \
        if (ret_ != ACL_SUCCESS) {                                                                 \
            std::printf("FAIL: %s:%d: %s returned %d\n", __FILE__, __LINE__, #call, (int)ret_); \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

#define SHMEM_CHECK(call)                                                                          \
    do {                                                                                           \
        int ret_ = (call);                                                                         \
        if (ret_ != 0) {                                                                           \
            std::printf("FAIL: %s:%d: %s returned %d\n", __FILE__, __LINE__, #call, ret_);       \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

namespace {

constexpr size_t kElems = 2048;  // float elements per PE
constexpr int kRounds = 5;

float value_of(int pe, int round, size_t i)
{
    return static_cast<float>(pe) * 10000.0f + static_cast<float>(round) * 100.0f + static_cast<float>(i % 97);
}

}  // namespace

int main()
{
    const char *pe_env = std::getenv("ACLSHMEM_MY_PE");
    int32_t device_id = pe_env != nullptr ? std::atoi(pe_env) % 16 : 0;

    ACL_CHECK(aclInit(nullptr));
    ACL_CHECK(aclrtSetDevice(device_id));
    aclrtStream stream = nullptr;
    ACL_CHECK(aclrtCreateStream(&stream));

    aclshmemx_init_attr_t attr;  // C++: the header's member initialisers give the defaults
    SHMEM_CHECK(aclshmemx_set_attr_from_env(&attr));
    attr.local_mem_size = 64ULL << 20;
    SHMEM_CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr));
    const int my_pe = aclshmem_my_pe();
    const int n_pes = aclshmem_n_pes();
    const size_t block_bytes = kElems * sizeof(float);
    const size_t out_bytes = block_bytes * static_cast<size_t>(n_pes);

    // symmetric buffers (device heap): input block, output (one slot per PE), signal word
    auto *input = static_cast<float *>(aclshmem_malloc(block_bytes));
    auto *output = static_cast<float *>(aclshmem_malloc(out_bytes));
    auto *signal = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    if (input == nullptr || output == nullptr || signal == nullptr) {
        std::printf("FAIL: aclshmem_malloc\n");
        return 1;
    }

    // host buffers
    float *host_in = nullptr;
    float *host_out = nullptr;
    ACL_CHECK(aclrtMallocHost(reinterpret_cast<void **>(&host_in), block_bytes));
    ACL_CHECK(aclrtMallocHost(reinterpret_cast<void **>(&host_out), out_bytes));
    aclshmem_handle_t world{ACLSHMEM_TEAM_WORLD};

    std::vector<int> errors_per_round;
    for (int round = 0; round < kRounds; ++round) {
        for (size_t i = 0; i < kElems; ++i) {
            host_in[i] = value_of(my_pe, round, i);
        }
        ACL_CHECK(aclrtMemcpy(input, block_bytes, host_in, block_bytes, ACL_MEMCPY_HOST_TO_DEVICE));

        // everyone finished reading the previous round's output before it is overwritten
        aclshmemx_barrier_all_on_stream(stream);
        for (int k = 0; k < n_pes; ++k) {
            int peer = (my_pe + k) % n_pes;  // start with myself, then the others in ring order
            aclshmemx_putmem_on_stream(output + static_cast<size_t>(my_pe) * kElems, input, block_bytes, peer, stream);
            aclshmemx_signal_op_on_stream(signal, 1, ACLSHMEM_SIGNAL_ADD, peer, stream);
        }
        aclshmemx_handle_wait(world, stream);  // completes RDMA puts on a real NPU; a fence here
        // all n blocks of this round are here when the word reaches n * (round + 1)
        aclshmemx_signal_wait_until_on_stream(signal, ACLSHMEM_CMP_GE, n_pes * (round + 1), stream);
        ACL_CHECK(aclrtSynchronizeStream(stream));

        ACL_CHECK(aclrtMemcpy(host_out, out_bytes, output, out_bytes, ACL_MEMCPY_DEVICE_TO_HOST));
        int errors = 0;
        for (int pe = 0; pe < n_pes; ++pe) {
            for (size_t i = 0; i < kElems; ++i) {
                float got = host_out[static_cast<size_t>(pe) * kElems + i];
                if (got != value_of(pe, round, i) && errors++ < 5) {
                    std::printf("FAIL: [pe %d] round %d: element %zu of pe %d's block is %g, expected %g\n", my_pe,
                                round, i, pe, static_cast<double>(got), static_cast<double>(value_of(pe, round, i)));
                }
            }
        }
        errors_per_round.push_back(errors);
    }

    int total = 0;
    for (int e : errors_per_round) {
        total += e;
    }
    std::printf("stream_allgather: PE %d: %d rounds of %d x %zu floats, signal %d, %d errors\n", my_pe, kRounds,
                n_pes, kElems, *signal, total);
    if (*signal != n_pes * kRounds) {
        std::printf("FAIL: [pe %d] signal word %d, expected %d\n", my_pe, *signal, n_pes * kRounds);
        total++;
    }

    aclshmemx_barrier_all_on_stream(stream);
    ACL_CHECK(aclrtSynchronizeStream(stream));
    ACL_CHECK(aclrtFreeHost(host_in));
    ACL_CHECK(aclrtFreeHost(host_out));
    aclshmem_free(signal);
    aclshmem_free(output);
    aclshmem_free(input);
    SHMEM_CHECK(aclshmem_finalize());
    ACL_CHECK(aclrtDestroyStream(stream));
    ACL_CHECK(aclrtResetDevice(device_id));
    ACL_CHECK(aclFinalize());
    if (total == 0 && my_pe == 0) {
        std::printf("stream_allgather: OK on %d PEs\n", n_pes);
    }
    return total == 0 ? 0 : 1;
}
