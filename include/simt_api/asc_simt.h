/*
 * simt_api/asc_simt.h - the SIMT runtime of the CPU device mode of libaclshmem (spec device-api 4.9):
 * asc_vf_call<f>(dim3(x, y, z), args...) runs f on x*y*z OS threads and joins them before it
 * returns. Inside f: threadIdx and blockDim (the thread shape of the call) are thread-local,
 * warpSize is 32 and asc_syncthreads() is a real barrier across the call's threads.
 *
 * The SIMT threads are not kernel block threads: the library does not know them. What they need of
 * the calling block is carried here: the block's UB (so that UB offsets given to the simt:: shmem
 * calls resolve to the calling block's UB). AIV/AscendC calls that need the block context
 * (GetBlockIdx, SyncAll, the non-simt shmem calls with UB offsets) belong in the vector-core kernel
 * body, around asc_vf_call, not inside f.
 *
 * A C++ exception or a fault (SIGSEGV ...) in any SIMT thread breaks the call's barrier (its other
 * threads leave their asc_syncthreads() with an exception) and is rethrown in the calling block,
 * which then fails as a block that threw: the launch fails at the stream's next synchronize. Written for this project.
 */
#ifndef ACLSHMEM_SIMT_API_ASC_SIMT_H
#define ACLSHMEM_SIMT_API_ASC_SIMT_H
#if defined(__cplusplus) && __cplusplus < 201703L
#error "the SIMT API (asc_vf_call, simt::) needs C++17: compile with -std=c++17, as the original's device compiler does"
#endif

#include "../device/aclshmem_cpu.h"

#include <condition_variable>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

struct dim3 {
    uint32_t x, y, z;
    constexpr dim3(uint32_t vx = 1, uint32_t vy = 1, uint32_t vz = 1) : x(vx), y(vy), z(vz) {}
};

/* the 16-byte vector element of the 128-bit sized SIMT calls */
struct int4 {
    int32_t x, y, z, w;
};

/* per SIMT thread; outside asc_vf_call one thread of shape 1x1x1 */
inline thread_local dim3 threadIdx{0, 0, 0};
inline thread_local dim3 blockDim{1, 1, 1};
constexpr int32_t warpSize = 32;

namespace aclshmemi_simt {

/* the most threads one asc_vf_call may start */
constexpr uint64_t MAX_THREADS = 2048;

/* the threads of one asc_vf_call: barrier state, first failure, the calling block's UB */
struct group {
    std::mutex m;
    std::condition_variable cv;
    uint32_t n = 1;
    uint32_t arrived = 0;
    uint64_t generation = 0;
    bool broken = false;
    std::exception_ptr failure;
    void *ub = nullptr;

    void wait()
    {
        std::unique_lock<std::mutex> lk(m);
        if (broken) {
            throw std::runtime_error("asc_syncthreads: another thread of the asc_vf_call failed");
        }
        uint64_t gen = generation;
        if (++arrived == n) {
            arrived = 0;
            generation++;
            cv.notify_all();
            return;
        }
        cv.wait(lk, [&] { return generation != gen || broken; });
        if (generation == gen) {
            throw std::runtime_error("asc_syncthreads: another thread of the asc_vf_call failed");
        }
    }

    void fail(std::exception_ptr e)
    {
        std::lock_guard<std::mutex> lk(m);
        if (!failure) {
            failure = e;
        }
        broken = true;
        cv.notify_all();
    }
};

inline thread_local group *current = nullptr;

/* the UB of the block the calling thread runs or serves (SIMT thread), or null outside kernels */
inline void *ub_base()
{
    if (current != nullptr) {
        return current->ub;
    }
    return aclshmemx_dev_in_kernel() ? aclshmemx_dev_ub_base() : nullptr;
}

/* linear thread index x + y*bx + z*bx*by and thread count of the call */
inline uint32_t linear_id()
{
    return threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
}
inline uint32_t thread_count()
{
    return blockDim.x * blockDim.y * blockDim.z;
}

/* one SIMT thread: runs `body`, turning an exception or a fault (the launcher's fault handler,
   device/aclshmem_cpu.h, jumps back here) into a failure of the group */
template <typename Body>
inline void run_thread(group *g, const Body &body)
{
    aclshmemi::fault_state &s = aclshmemi::fault_tls();
    sigjmp_buf jump;
    if (sigsetjmp(jump, 1) != 0) {
        char msg[160];
        std::snprintf(msg, sizeof msg, "fault in a SIMT thread: signal %d (%s) at address %p", s.sig,
                      strsignal(s.sig), s.addr);
        g->fail(std::make_exception_ptr(std::runtime_error(msg)));
        current = nullptr;
        return;
    }
    s.jump = &jump;
    try {
        body();
    } catch (...) {
        g->fail(std::current_exception());
    }
    s.jump = nullptr;
    current = nullptr;
}

}  // namespace aclshmemi_simt

/* a barrier of every thread of the current asc_vf_call (nothing outside one) */
inline void asc_syncthreads()
{
    if (aclshmemi_simt::current != nullptr) {
        aclshmemi_simt::current->wait();
    }
}

/* write-through store and cached load: plain accesses on the CPU */
template <typename T>
inline void asc_stwt(T *ptr, T value)
{
    std::memcpy(static_cast<void *>(ptr), &value, sizeof(T));
}
template <typename T>
inline T asc_ldca(const T *ptr)
{
    T v;
    std::memcpy(&v, static_cast<const void *>(ptr), sizeof(T));
    return v;
}

template <auto F, typename... Args>
inline void asc_vf_call(dim3 shape, Args... args)
{
    uint64_t n = uint64_t(shape.x) * shape.y * shape.z;
    if (n == 0 || n > aclshmemi_simt::MAX_THREADS) {
        throw std::invalid_argument("asc_vf_call: thread shape " + std::to_string(shape.x) + "x" +
                                    std::to_string(shape.y) + "x" + std::to_string(shape.z) +
                                    " must hold 1.." + std::to_string(aclshmemi_simt::MAX_THREADS) + " threads");
    }
    aclshmemi_simt::group g;
    g.n = static_cast<uint32_t>(n);
    g.ub = aclshmemi_simt::ub_base();
    std::vector<std::thread> threads;
    threads.reserve(n);
    try {
        for (uint32_t i = 0; i < g.n; i++) {
            threads.emplace_back([&g, shape, i, args...]() {
                threadIdx = dim3(i % shape.x, (i / shape.x) % shape.y, i / (shape.x * shape.y));
                blockDim = shape;
                aclshmemi_simt::current = &g;
                aclshmemi_simt::run_thread(&g, [&]() { F(args...); });
            });
        }
    } catch (...) {
        /* could not start every thread: the started ones must not wait for the rest */
        g.fail(std::current_exception());
    }
    for (auto &t : threads) {
        t.join();
    }
    if (g.failure) {
        std::rethrow_exception(g.failure);
    }
}

#endif
