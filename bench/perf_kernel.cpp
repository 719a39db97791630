/*
 * perf_kernel.cpp - benchmark of the CPU device mode (issue 13), 2 PEs:
 *
 *   launch   launch + synchronize of an empty kernel with 1, 8 and 64 blocks, against
 *            aclrtLaunchHostFunc of an empty host function + synchronize on the same stream
 *            (median microseconds per launch over BENCH_LAUNCHES launches)
 *   rma      device putmem / getmem / putmem_signal from 1..64 blocks of one kernel, 8 B .. 4 MiB
 *            per call, against the same calls made by the host API from one thread; per-call
 *            latency (ns) and aggregate bandwidth (GB/s), timed inside the kernel between two
 *            SyncAll()s, median of BENCH_RUNS kernels
 *
 *   scripts/aclshmem-cxx -O2 bench/perf_kernel.cpp -o perf_kernel && aclshmrun -n 2 ./perf_kernel
 *
 * PE 0 does the transfers to PE 1; PE 1 waits in a barrier. Prints one table per part on PE 0.
 */
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "kernel_operator.h"
#include "shmem.h"

using namespace AscendC;

static double now_ns()
{
    return static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

static int env_int(const char *name, int dflt)
{
    const char *v = std::getenv(name);
    return v != nullptr ? std::atoi(v) : dflt;
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void Empty() {}

static void empty_host_fn(void *) {}

enum Op { OP_PUT = 0, OP_GET = 1, OP_PUT_SIGNAL = 2 };

/* each block moves `bytes` per call, `iters` calls, into its own slice; every block records when it
   started and ended, and block 0 reports first start .. last end (blocks may be scheduled late) */
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void Rma(uint8_t *dst, uint8_t *src, int32_t *sig, uint64_t bytes,
                                                             int iters, int op, int peer, double *ns_out)
{
    int64_t blk = GetBlockIdx();
    uint64_t off = static_cast<uint64_t>(blk) * bytes;
    SyncAll();
    double t0 = now_ns();
    ns_out[2 + 2 * blk] = t0;
    for (int i = 0; i < iters; i++) {
        switch (op) {
            case OP_PUT:
                aclshmem_putmem(dst + off, src + off, bytes, peer);
                break;
            case OP_GET:
                aclshmem_getmem(dst + off, src + off, bytes, peer);
                break;
            default:
                aclshmem_putmem_signal(dst + off, src + off, bytes, sig + GetBlockIdx(), i, ACLSHMEM_SIGNAL_SET,
                                       peer);
                break;
        }
    }
    ns_out[3 + 2 * blk] = now_ns();
    SyncAll();
    if (blk == 0) {
        double first = ns_out[2], last = ns_out[3];
        for (int64_t b = 1; b < GetBlockNum(); b++) {
            first = std::min(first, ns_out[2 + 2 * b]);
            last = std::max(last, ns_out[3 + 2 * b]);
        }
        ns_out[0] = last - first;
    }
}

static double host_rma(uint8_t *dst, uint8_t *src, int32_t *sig, uint64_t bytes, int iters, int op, int peer)
{
    double t0 = now_ns();
    for (int i = 0; i < iters; i++) {
        switch (op) {
            case OP_PUT:
                aclshmem_putmem(dst, src, bytes, peer);
                break;
            case OP_GET:
                aclshmem_getmem(dst, src, bytes, peer);
                break;
            default:
                aclshmemx_putmem_signal(dst, src, bytes, sig, i, ACLSHMEM_SIGNAL_SET, peer);
                break;
        }
    }
    return now_ns() - t0;
}

int main()
{
    const char *pe_env = std::getenv("ACLSHMEM_MY_PE");
    int32_t device = pe_env != nullptr ? std::atoi(pe_env) % 16 : 0;
    aclInit(nullptr);
    aclrtSetDevice(device);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    aclshmemx_init_attr_t attr;
    aclshmemx_set_attr_from_env(&attr);
    attr.local_mem_size = 600ULL << 20;
    if (aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr) != 0) {
        std::printf("FAIL: init\n");
        return 1;
    }
    int me = aclshmem_my_pe();
    int peer = 1 - me;
    const int runs = env_int("BENCH_RUNS", 5);
    const int launches = env_int("BENCH_LAUNCHES", 200);
    const uint64_t max_bytes = 4ULL << 20;
    const int max_blocks = 64;
    auto *dst = static_cast<uint8_t *>(aclshmem_calloc(max_blocks * max_bytes / 8, 8));
    auto *src = static_cast<uint8_t *>(aclshmem_calloc(max_blocks * max_bytes / 8, 8));
    auto *sig = static_cast<int32_t *>(aclshmem_calloc(max_blocks, sizeof(int32_t)));
    auto *ns = static_cast<double *>(aclshmem_calloc(2 + 2 * max_blocks, sizeof(double)));
    if (dst == nullptr || src == nullptr || sig == nullptr || ns == nullptr) {
        std::printf("FAIL: aclshmem_calloc (needs a 600 MiB heap)\n");
        return 1;
    }

    /* real pages behind the source (not the shared zero page of an untouched allocation) */
    std::memset(src, 1, max_blocks * max_bytes);
    std::memset(dst, 2, max_blocks * max_bytes);
    aclshmem_barrier_all();
    if (me == 0) {
        std::printf("## launch overhead (launch + aclrtSynchronizeStream, median of %d, microseconds)\n", launches);
        std::printf("| what | us per launch |\n|---|---:|\n");
        for (int rep = 0; rep < 3; rep++) { /* warm the thread pool */
            Empty<<<64, nullptr, stream>>>();
            aclrtSynchronizeStream(stream);
        }
        std::vector<double> t;
        for (int i = 0; i < launches; i++) {
            double t0 = now_ns();
            aclrtLaunchHostFunc(stream, empty_host_fn, nullptr);
            aclrtSynchronizeStream(stream);
            t.push_back(now_ns() - t0);
        }
        std::printf("| aclrtLaunchHostFunc (empty) | %.1f |\n", median(t) / 1000);
        for (uint32_t blocks : {1u, 8u, 64u}) {
            t.clear();
            for (int i = 0; i < launches; i++) {
                double t0 = now_ns();
                Empty<<<blocks, nullptr, stream>>>();
                aclrtSynchronizeStream(stream);
                t.push_back(now_ns() - t0);
            }
            std::printf("| empty kernel, %u blocks | %.1f |\n", blocks, median(t) / 1000);
        }

        const char *names[] = {"putmem", "getmem", "putmem_signal"};
        std::printf("\n## device RMA from a kernel vs the host API (PE 0 -> PE 1, median of %d runs)\n", runs);
        std::printf("| op | bytes | blocks | device ns/call | host ns/call (1 thread) | device/host | device GB/s |\n");
        std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
        for (int op = 0; op < 3; op++) {
            for (uint64_t bytes : {8ULL, 64ULL, 512ULL, 4096ULL, 32768ULL, 262144ULL, 2097152ULL, 4194304ULL}) {
                int iters = bytes <= 4096 ? 20000 : static_cast<int>(std::max<uint64_t>(4, (64ULL << 20) / bytes));
                std::vector<double> host;
                for (int r = 0; r < runs; r++) {
                    host.push_back(host_rma(dst, src, sig, bytes, iters, op, peer) / iters);
                }
                double host_ns = median(host);
                for (uint32_t blocks : {1u, 8u, 64u}) {
                    if (blocks * bytes > max_blocks * max_bytes) {
                        continue;
                    }
                    /* about the same bytes per kernel whatever the block count */
                    int dev_iters = std::max(4, iters / static_cast<int>(blocks));
                    std::vector<double> dev;
                    for (int r = 0; r < runs; r++) {
                        Rma<<<blocks, nullptr, stream>>>(dst, src, sig, bytes, dev_iters, op, peer, ns);
                        aclrtSynchronizeStream(stream);
                        dev.push_back(*ns / dev_iters);
                    }
                    double dev_ns = median(dev);
                    double gbs = static_cast<double>(bytes) * blocks / dev_ns;
                    char ratio[32] = "-";
                    if (blocks == 1) {
                        std::snprintf(ratio, sizeof ratio, "%.2f", dev_ns / host_ns);
                    }
                    /* with several blocks, "ns/call" is the time of one round of calls of all blocks */
                    std::printf("| %s | %llu | %u | %.0f | %.0f | %s | %.2f |\n", names[op],
                                static_cast<unsigned long long>(bytes), blocks, dev_ns, host_ns, ratio, gbs);
                }
            }
        }
    }
    aclshmem_barrier_all();
    aclshmem_free(ns);
    aclshmem_free(sig);
    aclshmem_free(src);
    aclshmem_free(dst);
    aclshmem_finalize();
    aclrtDestroyStream(stream);
    aclrtResetDevice(device);
    aclFinalize();
    return 0;
}
