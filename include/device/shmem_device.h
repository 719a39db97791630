/*
 * device/shmem_device.h - the device-side SHMEM API of the CPU device mode of libaclshmem (spec
 * device-api section 2), for kernels compiled with a host C++ compiler (aclshmem-cxx).
 *
 * The headers at the original device include paths (device/gm2gm/..., device/ub2gm/...,
 * device/team/..., device/shmem_def.h) all lead here; shmem.h includes it in kernel builds
 * (ACLSHMEM_CPU_KERNELS, set by aclshmem-cxx).
 *
 * One declaration per name (spec 2.19): a device function with the same parameters as a host
 * function IS the host function (shmem.h). The library gives it device semantics when the calling
 * thread runs a kernel block: barriers span every block of the launch on every PE, and a local
 * operand below 192 KiB is a UB offset of the calling block. Pointer forms keep the host parameter
 * list (size_t counts, so int arguments are never ambiguous); device-only forms (tensors,
 * non-contiguous copies, result-returning tests, engine templates, half/bfloat16) are C++
 * overloads and templates below, written on top of the host entry points.
 *
 * Every transfer completes before it returns (the _nbi forms too); quiet and fence are full
 * memory fences. Written for this project, not the original's header.
 */
#ifndef ACLSHMEM_DEVICE_SHMEM_DEVICE_H
#define ACLSHMEM_DEVICE_SHMEM_DEVICE_H

#include "../kernel_operator.h"
#include "../shmem.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <type_traits>

extern "C" {
void aclshmemx_dev_signal_op(int32_t *sig_addr, int32_t signal, int sig_op, int pe);
int aclshmemx_dev_pe_barrier(aclshmem_team_t team);
aclshmem_device_host_state_t *aclshmemx_dev_state(void);
void aclshmemx_dev_notify_record(void);
int aclshmemx_dev_qp_check(uint32_t qp_idx);
void aclshmemx_dev_qp_notify_record(uint32_t qp_idx);
}
/* the host-visible state (default stream, per-core notifies), as the original's host programs
   declare it themselves */
extern aclshmem_host_state_t g_state_host;

/* ---- device/shmem_def.h ---- */
#define ACLSHMEM_DEVICE __attribute__((always_inline)) __aicore__ __inline__
#define ACLSHMEM_GLOBAL __global__ __aicore__
#ifndef ACLSHMEMI_AIV_ONLY
#define ACLSHMEMI_AIV_ONLY
#endif
#define ACLSHMEM_GLOBAL_VECTOR __global__ __aicore__ ACLSHMEMI_AIV_ONLY

constexpr uint64_t ACLSHMEM_INTERNAL_UB_BUF_START_ADDR = 188 * 1024;
constexpr uint32_t UB_ALIGN_SIZE = 32;
constexpr uint32_t UB_ALIGN_SIZE_64 = 64;
constexpr uint32_t ACLSHMEM_NUM_CQE_PER_POLL_CQ = 100;

struct non_contiguous_copy_param {
    uint32_t repeat;  /* rows */
    uint32_t length;  /* elements per row */
    uint32_t src_ld;  /* source row pitch, elements */
    uint32_t dst_ld;  /* destination row pitch, elements */
};

enum class ACLSHMEMCMOTYPE : uint32_t {
    CMO_TYPE_PREFETCH = 6,
    CMO_TYPE_WRITEBACK,
    CMO_TYPE_INVALID,
    CMO_TYPE_FLUSH,
    CMO_TYPE_MAX,
};

/* A batch of deferred engine operations (RoCE and UDMA, newer original headers): the kernel value-
   initializes one state per batch (aclshmemx_submit_state_t state{}), passes aclshmemx_defer_t(state)
   to every operation but the last and aclshmemx_submit_t(state) to the last. pending_count is the
   number of deferred operations of the batch (the library's; the submit sets it back to 0);
   reserved stays 0. The actions hold a reference: the state must outlive them. */
struct aclshmemx_submit_state_t {
    uint32_t pending_count = 0;
    uint32_t reserved = 0;
};
struct aclshmemx_defer_t {
    aclshmemx_submit_state_t &state;
    explicit aclshmemx_defer_t(aclshmemx_submit_state_t &st) : state(st) {}
};
struct aclshmemx_submit_t {
    aclshmemx_submit_state_t &state;
    explicit aclshmemx_submit_t(aclshmemx_submit_state_t &st) : state(st) {}
};

namespace aclshmemi_dev {
template <typename T>
inline T *ub(const AscendC::LocalTensor<T> &t)
{
    return reinterpret_cast<T *>(static_cast<uintptr_t>(t.GetPhyAddr()));
}
inline char *at(void *p, uint64_t bytes)
{
    return reinterpret_cast<char *>(reinterpret_cast<uintptr_t>(p) + bytes);
}
/* row r: local side at src + r * src_ld, remote side at dst + r * dst_ld (elements) */
inline void rows_put(void *dst, void *src, size_t esz, const non_contiguous_copy_param &p, int pe)
{
    for (uint32_t r = 0; r < p.repeat; r++) {
        aclshmem_putmem_nbi(at(dst, uint64_t(r) * p.dst_ld * esz), at(src, uint64_t(r) * p.src_ld * esz),
                            size_t(p.length) * esz, pe);
    }
}
inline void rows_get(void *dst, void *src, size_t esz, const non_contiguous_copy_param &p, int pe)
{
    for (uint32_t r = 0; r < p.repeat; r++) {
        aclshmem_getmem_nbi(at(dst, uint64_t(r) * p.dst_ld * esz), at(src, uint64_t(r) * p.src_ld * esz),
                            size_t(p.length) * esz, pe);
    }
}
/* data complete and visible, then the signal (release) */
inline void signal_after(int32_t *sig, int32_t signal, int sig_op, int pe)
{
    aclshmem_quiet();
    aclshmemx_dev_signal_op(sig, signal, sig_op, pe);
}

template <typename T>
inline T *remote(T *p, int pe)
{
    return static_cast<T *>(aclshmem_ptr(const_cast<void *>(static_cast<const void *>(p)), pe));
}

/* read-modify-write of any 1/2/4/8-byte T on its bit pattern (floating types by compare-exchange) */
template <typename T, typename F>
inline T rmw(T *p, F f)
{
    typedef typename std::conditional<
        sizeof(T) == 1, uint8_t,
        typename std::conditional<sizeof(T) == 2, uint16_t,
                                  typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type>::type>::type
        W;
    static_assert(sizeof(T) == sizeof(W), "atomics on 1, 2, 4 or 8 bytes");
    W *w = reinterpret_cast<W *>(p);
    W old = __atomic_load_n(w, __ATOMIC_RELAXED);
    for (;;) {
        T cur;
        std::memcpy(&cur, &old, sizeof(T));
        T next = f(cur);
        W nw;
        std::memcpy(&nw, &next, sizeof(T));
        if (__atomic_compare_exchange_n(w, &old, nw, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
            return cur;
        }
    }
}
/* the same read-modify-write on PE pe's copy when this process does not map it (a PE on another
   node): compare-and-swap rounds through the transport on the naturally aligned 64-bit word (8-byte
   T) or 32-bit word (1, 2 and 4-byte T, which lie inside one: the other bytes of the word are
   written back as they were). A symmetric address is what the host atomics take; a bad address or
   PE is refused by them with a logged error (the result is then 0). */
template <typename T, typename F>
inline T rmw_transport(T *p, int pe, F f, std::true_type /* 8 bytes */)
{
    uint64_t *w = reinterpret_cast<uint64_t *>(p);
    uint64_t old = aclshmem_uint64_atomic_fetch(w, pe);
    for (;;) {
        T cur;
        std::memcpy(&cur, &old, sizeof(T));
        T next = f(cur);
        uint64_t nw;
        std::memcpy(&nw, &next, sizeof(T));
        uint64_t seen = aclshmem_uint64_atomic_compare_swap(w, old, nw, pe);
        if (seen == old) {
            return cur;
        }
        old = seen;
    }
}
template <typename T, typename F>
inline T rmw_transport(T *p, int pe, F f, std::false_type /* 1, 2 or 4 bytes */)
{
    static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "byte lanes of a little-endian word");
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    uint32_t *w = reinterpret_cast<uint32_t *>(a & ~uintptr_t(3));
    const unsigned shift = unsigned(a & 3) * 8;
    const uint32_t lane = sizeof(T) == 4 ? 0xffffffffu : ((1u << (8 * sizeof(T))) - 1u) << shift;
    uint32_t old = aclshmem_uint32_atomic_fetch(w, pe);
    for (;;) {
        const uint32_t bits = (old & lane) >> shift;
        T cur;
        std::memcpy(&cur, &bits, sizeof(T));
        T next = f(cur);
        uint32_t nb = 0;
        std::memcpy(&nb, &next, sizeof(T));
        const uint32_t nw = (old & ~lane) | ((nb << shift) & lane);
        uint32_t seen = aclshmem_uint32_atomic_compare_swap(w, old, nw, pe);
        if (seen == old) {
            return cur;
        }
        old = seen;
    }
}
/* f on PE pe's T at dst: inline on a mapped copy, through the transport otherwise */
template <typename T, typename F>
inline T apply(T *dst, int pe, F f)
{
    T *p = remote(dst, pe);
    return p != nullptr ? rmw(p, f) : rmw_transport(dst, pe, f, std::integral_constant<bool, sizeof(T) == 8>());
}
template <typename T>
inline T fetch_add(T *dst, T v, int pe)
{
    return apply(dst, pe, [v](T c) { return static_cast<T>(c + v); });
}
template <typename T>
inline T swap(T *dst, T v, int pe)
{
    return apply(dst, pe, [v](T) { return v; });
}
template <typename T>
inline T compare_swap(T *dst, T cond, T v, int pe)
{
    return apply(dst, pe, [cond, v](T c) { return std::memcmp(&c, &cond, sizeof(T)) == 0 ? v : c; });
}
template <typename T>
inline T fetch_and(T *dst, T v, int pe)
{
    return apply(dst, pe, [v](T c) { return static_cast<T>(c & v); });
}
template <typename T>
inline T fetch_or(T *dst, T v, int pe)
{
    return apply(dst, pe, [v](T c) { return static_cast<T>(c | v); });
}
template <typename T>
inline T fetch_xor(T *dst, T v, int pe)
{
    return apply(dst, pe, [v](T c) { return static_cast<T>(c ^ v); });
}
template <typename T>
inline T fetch(T *src, int pe)
{
    return apply(src, pe, [](T c) { return c; });
}
} // namespace aclshmemi_dev

/* ---- type lists (spec 2.0.1) ---- */
#define ACLSHMEMI_DEV_T11(X)                                                                                  \
    X(float, float)                                                                                           \
    X(double, double)                                                                                         \
    X(int8, int8_t)                                                                                           \
    X(int16, int16_t)                                                                                         \
    X(int32, int32_t)                                                                                         \
    X(int64, int64_t)                                                                                         \
    X(uint8, uint8_t)                                                                                         \
    X(uint16, uint16_t)                                                                                       \
    X(uint32, uint32_t)                                                                                       \
    X(uint64, uint64_t)                                                                                       \
    X(char, char)
#define ACLSHMEMI_DEV_T2(X)                                                                                   \
    X(half, half)                                                                                             \
    X(bfloat16, bfloat16_t)
#define ACLSHMEMI_DEV_T13(X) ACLSHMEMI_DEV_T11(X) ACLSHMEMI_DEV_T2(X)
#define ACLSHMEMI_DEV_T10(X)                                                                                  \
    X(float, float)                                                                                           \
    X(int8, int8_t)                                                                                           \
    X(int16, int16_t)                                                                                         \
    X(int32, int32_t)                                                                                         \
    X(int64, int64_t)                                                                                         \
    X(uint8, uint8_t)                                                                                         \
    X(uint16, uint16_t)                                                                                       \
    X(uint32, uint32_t)                                                                                       \
    X(uint64, uint64_t)                                                                                       \
    X(char, char)

/* ---- device-only types half and bfloat16: the pointer forms (the host has no such names) ---- */
#define ACLSHMEMI_DEV_2BYTE(NAME, T)                                                                          \
    inline void aclshmem_##NAME##_put(T *dst, T *src, size_t n, int pe)                                       \
    {                                                                                                         \
        aclshmem_putmem(dst, src, n * sizeof(T), pe);                                                         \
    }                                                                                                         \
    inline void aclshmem_##NAME##_get(T *dst, T *src, size_t n, int pe)                                       \
    {                                                                                                         \
        aclshmem_getmem(dst, src, n * sizeof(T), pe);                                                         \
    }                                                                                                         \
    inline void aclshmem_##NAME##_put_nbi(T *dst, T *src, size_t n, int pe)                                   \
    {                                                                                                         \
        aclshmem_putmem_nbi(dst, src, n * sizeof(T), pe);                                                     \
    }                                                                                                         \
    inline void aclshmem_##NAME##_get_nbi(T *dst, T *src, size_t n, int pe)                                   \
    {                                                                                                         \
        aclshmem_getmem_nbi(dst, src, n * sizeof(T), pe);                                                     \
    }                                                                                                         \
    inline void aclshmem_##NAME##_p(T *dst, const T value, int pe)                                            \
    {                                                                                                         \
        int16_t bits;                                                                                         \
        std::memcpy(&bits, &value, 2);                                                                        \
        aclshmem_int16_p(reinterpret_cast<int16_t *>(dst), bits, pe);                                         \
    }                                                                                                         \
    inline T aclshmem_##NAME##_g(T *src, int32_t pe)                                                          \
    {                                                                                                         \
        int16_t bits = aclshmem_int16_g(reinterpret_cast<int16_t *>(src), pe);                                \
        T v;                                                                                                  \
        std::memcpy(&v, &bits, 2);                                                                            \
        return v;                                                                                             \
    }                                                                                                         \
    inline void aclshmem_##NAME##_iput(T *dest, T *source, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe)    \
    {                                                                                                         \
        aclshmem_iput16(dest, source, dst, sst, n, pe);                                                       \
    }                                                                                                         \
    inline void aclshmem_##NAME##_iget(T *dest, T *source, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe)    \
    {                                                                                                         \
        aclshmem_iget16(dest, source, dst, sst, n, pe);                                                       \
    }                                                                                                         \
    inline void aclshmem_##NAME##_put_signal(T *dst, T *src, size_t n, int32_t *sig, int32_t signal,          \
                                             int sig_op, int pe)                                              \
    {                                                                                                         \
        aclshmemx_putmem_signal(dst, src, n * sizeof(T), sig, signal, sig_op, pe);                            \
    }                                                                                                         \
    inline void aclshmem_##NAME##_put_signal_nbi(T *dst, T *src, size_t n, int32_t *sig, int32_t signal,      \
                                                 int sig_op, int pe)                                          \
    {                                                                                                         \
        aclshmemx_putmem_signal_nbi(dst, src, n * sizeof(T), sig, signal, sig_op, pe);                        \
    }
ACLSHMEMI_DEV_T2(ACLSHMEMI_DEV_2BYTE)

/* the host put-with-signal takes the signal word as uint8_t*; the device form as int32_t* */
#define ACLSHMEMI_DEV_SIGNAL_PTR(NAME, T)                                                                     \
    inline void aclshmem_##NAME##_put_signal(T *dst, T *src, size_t n, int32_t *sig, int32_t signal,          \
                                             int sig_op, int pe)                                              \
    {                                                                                                         \
        aclshmem_##NAME##_put_signal(dst, src, n, reinterpret_cast<uint8_t *>(sig), signal, sig_op, pe);      \
    }                                                                                                         \
    inline void aclshmem_##NAME##_put_signal_nbi(T *dst, T *src, size_t n, int32_t *sig, int32_t signal,      \
                                                 int sig_op, int pe)                                          \
    {                                                                                                         \
        aclshmem_##NAME##_put_signal_nbi(dst, src, n, reinterpret_cast<uint8_t *>(sig), signal, sig_op, pe);  \
    }
ACLSHMEMI_DEV_T11(ACLSHMEMI_DEV_SIGNAL_PTR)

/* ---- tensor, non-contiguous and UB forms of every T13 type (spec 2.3, 2.4, 2.9) ---- */
#define ACLSHMEMI_DEV_OVERLOADS(NAME, T)                                                                      \
    inline void aclshmem_##NAME##_put_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,        \
                                          uint32_t n, int pe)                                                 \
    {                                                                                                         \
        aclshmem_##NAME##_put_nbi(dst.GetPhyAddr(), src.GetPhyAddr(), size_t(n), pe);                         \
    }                                                                                                         \
    inline void aclshmem_##NAME##_get_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,        \
                                          uint32_t n, int pe)                                                 \
    {                                                                                                         \
        aclshmem_##NAME##_get_nbi(dst.GetPhyAddr(), src.GetPhyAddr(), size_t(n), pe);                         \
    }                                                                                                         \
    inline void aclshmem_##NAME##_put_nbi(T *dst, T *src, const non_contiguous_copy_param &p, int pe)         \
    {                                                                                                         \
        aclshmemi_dev::rows_put(dst, src, sizeof(T), p, pe);                                                  \
    }                                                                                                         \
    inline void aclshmem_##NAME##_get_nbi(T *dst, T *src, const non_contiguous_copy_param &p, int pe)         \
    {                                                                                                         \
        aclshmemi_dev::rows_get(dst, src, sizeof(T), p, pe);                                                  \
    }                                                                                                         \
    inline void aclshmem_##NAME##_put_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,        \
                                          const non_contiguous_copy_param &p, int pe)                         \
    {                                                                                                         \
        aclshmemi_dev::rows_put(dst.GetPhyAddr(), src.GetPhyAddr(), sizeof(T), p, pe);                        \
    }                                                                                                         \
    inline void aclshmem_##NAME##_get_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,        \
                                          const non_contiguous_copy_param &p, int pe)                         \
    {                                                                                                         \
        aclshmemi_dev::rows_get(dst.GetPhyAddr(), src.GetPhyAddr(), sizeof(T), p, pe);                        \
    }                                                                                                         \
    inline void aclshmem_##NAME##_put_nbi(AscendC::GlobalTensor<T> dst, AscendC::LocalTensor<T> src,         \
                                          uint32_t n, int32_t pe)                                             \
    {                                                                                                         \
        aclshmem_##NAME##_put_nbi(dst.GetPhyAddr(), aclshmemi_dev::ub(src), size_t(n), pe);                   \
    }                                                                                                         \
    inline void aclshmem_##NAME##_get_nbi(AscendC::LocalTensor<T> dst, AscendC::GlobalTensor<T> src,         \
                                          uint32_t n, int pe)                                                 \
    {                                                                                                         \
        aclshmem_##NAME##_get_nbi(aclshmemi_dev::ub(dst), src.GetPhyAddr(), size_t(n), pe);                   \
    }                                                                                                         \
    inline void aclshmem_##NAME##_put_nbi(AscendC::GlobalTensor<T> dst, AscendC::LocalTensor<T> src,         \
                                          const non_contiguous_copy_param &p, int32_t pe)                     \
    {                                                                                                         \
        aclshmemi_dev::rows_put(dst.GetPhyAddr(), aclshmemi_dev::ub(src), sizeof(T), p, pe);                  \
    }                                                                                                         \
    inline void aclshmem_##NAME##_get_nbi(AscendC::LocalTensor<T> dst, AscendC::GlobalTensor<T> src,         \
                                          const non_contiguous_copy_param &p, int pe)                         \
    {                                                                                                         \
        aclshmemi_dev::rows_get(aclshmemi_dev::ub(dst), src.GetPhyAddr(), sizeof(T), p, pe);                  \
    }                                                                                                         \
    inline void aclshmem_##NAME##_put_signal(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,     \
                                             size_t n, int32_t *sig, int32_t signal, int sig_op, int pe)      \
    {                                                                                                         \
        aclshmem_##NAME##_put_signal(dst.GetPhyAddr(), src.GetPhyAddr(), n, sig, signal, sig_op, pe);         \
    }                                                                                                         \
    inline void aclshmem_##NAME##_put_signal_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src, \
                                                 size_t n, int32_t *sig, int32_t signal, int sig_op, int pe)  \
    {                                                                                                         \
        aclshmem_##NAME##_put_signal_nbi(dst.GetPhyAddr(), src.GetPhyAddr(), n, sig, signal, sig_op, pe);     \
    }                                                                                                         \
    inline void aclshmem_##NAME##_put_signal(T *dst, T *src, const non_contiguous_copy_param &p, int32_t *sig, \
                                             int32_t signal, int sig_op, int pe)                              \
    {                                                                                                         \
        aclshmemi_dev::rows_put(dst, src, sizeof(T), p, pe);                                                  \
        aclshmemi_dev::signal_after(sig, signal, sig_op, pe);                                                 \
    }                                                                                                         \
    inline void aclshmem_##NAME##_put_signal_nbi(T *dst, T *src, const non_contiguous_copy_param &p,          \
                                                 int32_t *sig, int32_t signal, int sig_op, int pe)            \
    {                                                                                                         \
        aclshmem_##NAME##_put_signal(dst, src, p, sig, signal, sig_op, pe);                                   \
    }                                                                                                         \
    inline void aclshmem_##NAME##_put_signal(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,     \
                                             const non_contiguous_copy_param &p, int32_t *sig, int32_t signal, \
                                             int sig_op, int pe)                                              \
    {                                                                                                         \
        aclshmem_##NAME##_put_signal(dst.GetPhyAddr(), src.GetPhyAddr(), p, sig, signal, sig_op, pe);         \
    }                                                                                                         \
    inline void aclshmem_##NAME##_put_signal_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src, \
                                                 const non_contiguous_copy_param &p, int32_t *sig,            \
                                                 int32_t signal, int sig_op, int pe)                          \
    {                                                                                                         \
        aclshmem_##NAME##_put_signal(dst.GetPhyAddr(), src.GetPhyAddr(), p, sig, signal, sig_op, pe);         \
    }
ACLSHMEMI_DEV_T13(ACLSHMEMI_DEV_OVERLOADS)

/* byte forms of put-with-signal (device names without the x) */
inline void aclshmem_putmem_signal(void *dst, void *src, size_t n, int32_t *sig, int32_t signal, int sig_op, int pe)
{
    aclshmemx_putmem_signal(dst, src, n, sig, signal, sig_op, pe);
}
inline void aclshmem_putmem_signal_nbi(void *dst, void *src, size_t n, int32_t *sig, int32_t signal, int sig_op,
                                       int pe)
{
    aclshmemx_putmem_signal_nbi(dst, src, n, sig, signal, sig_op, pe);
}

/* ---- signals (spec 2.10) ---- */
inline void aclshmemx_signal_op(int32_t *sig_addr, int32_t signal, int sig_op, int pe)
{
    aclshmemx_dev_signal_op(sig_addr, signal, sig_op, pe);
}

/* ---- wait/test forms that return their result (spec 2.10; the host forms take res_out) ---- */
#define ACLSHMEMI_DEV_TESTS(NAME, T)                                                                          \
    inline int aclshmem_##NAME##_test(T *ivars, int cmp, T v)                                                 \
    {                                                                                                         \
        int r = 0;                                                                                            \
        aclshmem_##NAME##_test(ivars, cmp, v, &r);                                                            \
        return r;                                                                                             \
    }                                                                                                         \
    inline size_t aclshmem_##NAME##_test_any(T *ivars, size_t n, const int *status, int cmp, T v)             \
    {                                                                                                         \
        size_t r = SIZE_MAX;                                                                                  \
        aclshmem_##NAME##_test_any(ivars, n, status, cmp, v, &r);                                             \
        return r;                                                                                             \
    }                                                                                                         \
    inline size_t aclshmem_##NAME##_test_some(T *ivars, size_t n, size_t *idx, const int *status, int cmp, T v) \
    {                                                                                                         \
        size_t r = 0;                                                                                         \
        aclshmem_##NAME##_test_some(ivars, n, idx, status, cmp, v, &r);                                       \
        return r;                                                                                             \
    }                                                                                                         \
    inline int aclshmem_##NAME##_test_all_vector(T *ivars, size_t n, const int *status, int cmp, T *vals)    \
    {                                                                                                         \
        int r = 0;                                                                                            \
        aclshmem_##NAME##_test_all_vector(ivars, n, status, cmp, vals, &r);                                   \
        return r;                                                                                             \
    }                                                                                                         \
    inline size_t aclshmem_##NAME##_test_any_vector(T *ivars, size_t n, const int *status, int cmp, T *vals)  \
    {                                                                                                         \
        size_t r = SIZE_MAX;                                                                                  \
        aclshmem_##NAME##_test_any_vector(ivars, n, status, cmp, vals, &r);                                   \
        return r;                                                                                             \
    }                                                                                                         \
    inline size_t aclshmem_##NAME##_test_some_vector(T *ivars, size_t n, size_t *idx, const int *status,      \
                                                     int cmp, T *vals)                                        \
    {                                                                                                         \
        size_t r = 0;                                                                                         \
        aclshmem_##NAME##_test_some_vector(ivars, n, idx, status, cmp, vals, &r);                             \
        return r;                                                                                             \
    }                                                                                                         \
    inline size_t aclshmem_##NAME##_wait_until_any(T *ivars, size_t n, const int *status, int cmp, T v)       \
    {                                                                                                         \
        size_t r = SIZE_MAX;                                                                                  \
        aclshmem_##NAME##_wait_until_any(ivars, n, status, cmp, v, &r);                                       \
        return r;                                                                                             \
    }                                                                                                         \
    inline size_t aclshmem_##NAME##_wait_until_some(T *ivars, size_t n, size_t *idx, const int *status,       \
                                                    int cmp, T v)                                             \
    {                                                                                                         \
        size_t r = 0;                                                                                         \
        aclshmem_##NAME##_wait_until_some(ivars, n, idx, status, cmp, v, &r);                                 \
        return r;                                                                                             \
    }                                                                                                         \
    inline size_t aclshmem_##NAME##_wait_until_any_vector(T *ivars, size_t n, const int *status, int cmp,     \
                                                          T *vals)                                            \
    {                                                                                                         \
        size_t r = SIZE_MAX;                                                                                  \
        aclshmem_##NAME##_wait_until_any_vector(ivars, n, status, cmp, vals, &r);                             \
        return r;                                                                                             \
    }                                                                                                         \
    inline size_t aclshmem_##NAME##_wait_until_some_vector(T *ivars, size_t n, size_t *idx, const int *status, \
                                                           int cmp, T *vals)                                  \
    {                                                                                                         \
        size_t r = 0;                                                                                         \
        aclshmem_##NAME##_wait_until_some_vector(ivars, n, idx, status, cmp, vals, &r);                       \
        return r;                                                                                             \
    }
ACLSHMEMI_DEV_T10(ACLSHMEMI_DEV_TESTS)

/* In kernels aclshmem_signal_wait_until returns the signal word's value once the condition held
   (int32_t, spec device-api 2.10), where the host declaration returns nothing: one name for both
   (2.19.3), the value read after the wait, which host code of the same file may ignore. */
inline int32_t aclshmemi_dev_signal_wait_until(int32_t *sig_addr, int cmp, int32_t cmp_val)
{
    aclshmem_signal_wait_until(sig_addr, cmp, cmp_val);
    if (sig_addr == nullptr || reinterpret_cast<uintptr_t>(sig_addr) % alignof(int32_t) != 0) {
        return 0; /* logged by the wait */
    }
    return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}
#define aclshmem_signal_wait_until aclshmemi_dev_signal_wait_until

/* ---- the device atomics' type lists (the original's amo header leaves them defined for programs
   that generate their own wrappers): FUNC(NAME, TYPE), the CAST lists FUNC(NAME, TYPE, CAST_TYPE) ---- */
#define ACLSHMEM_TYPE_FUNC_ATOMIC_ADD(FUNC) \
    FUNC(int8, int8_t);                     \
    FUNC(int16, int16_t);                   \
    FUNC(bfloat16, bfloat16_t);             \
    FUNC(half, half)
#define ACLSHMEM_TYPE_FUNC_ATOMIC_ADD_910(FUNC) \
    FUNC(int32, int32_t);                       \
    FUNC(float, float)
#define ACLSHMEM_TYPE_FUNC_ATOMIC_ADD_EXT(FUNC) \
    FUNC(uint32, uint32_t);                     \
    FUNC(uint64, uint64_t);                     \
    FUNC(int64, int64_t)
#define ACLSHMEM_TYPE_FUNC_ATOMIC_SWAP(FUNC) \
    FUNC(uint32, uint32_t);                  \
    FUNC(uint64, uint64_t)
#define ACLSHMEM_TYPE_FUNC_ATOMIC_SWAP_CAST(FUNC) \
    FUNC(int32, int32_t, uint32_t);               \
    FUNC(int64, int64_t, uint64_t);               \
    FUNC(float, float, uint32_t)
#define ACLSHMEM_TYPE_FUNC_ATOMIC_CAS_CAST(FUNC) \
    FUNC(int32, int32_t, uint32_t);              \
    FUNC(int64, int64_t, uint64_t)
#define ACLSHMEM_TYPE_FUNC_ATOMIC_ADD_950(FUNC) \
    FUNC(uint32, uint32_t);                     \
    FUNC(uint64, uint64_t);                     \
    FUNC(int32, int32_t);                       \
    FUNC(int64, int64_t)
#define ACLSHMEM_TYPE_FUNC_ATOMIC_LOGIC(FUNC) \
    FUNC(uint32, uint32_t);                   \
    FUNC(uint64, uint64_t);                   \
    FUNC(int32, int32_t);                     \
    FUNC(int64, int64_t)

/* ---- atomics the host does not have (spec 2.11): adds of 1/2-byte and floating types ---- */
#define ACLSHMEMI_DEV_ADD(NAME, T)                                                                            \
    inline void aclshmem_##NAME##_atomic_add(T *dst, T value, int32_t pe)                                     \
    {                                                                                                         \
        (void)aclshmemi_dev::fetch_add(dst, value, pe);                                                       \
    }
ACLSHMEMI_DEV_ADD(int8, int8_t)
ACLSHMEMI_DEV_ADD(int16, int16_t)
ACLSHMEMI_DEV_ADD(half, half)
ACLSHMEMI_DEV_ADD(bfloat16, bfloat16_t)
ACLSHMEMI_DEV_ADD(float, float)

/* ---- barriers (spec 2.12): the host names act on the whole launch inside a kernel ---- */
inline void util_set_ffts_config(uint64_t)
{
}
/* the AIV contexts of the launch synchronise (newer original headers: the _vec barriers below are
   these under their old names) */
inline void aclshmemx_sync_vec(aclshmem_team_t team)
{
    (void)aclshmemx_dev_barrier_vec(team, 0); /* AIV contexts only */
}
inline void aclshmemx_sync_vec_all(void)
{
    (void)aclshmemx_dev_barrier_vec(0, 1); /* AIV contexts only */
}
[[deprecated("aclshmemx_barrier_all_vec is deprecated, please use aclshmem_barrier instead.")]] inline void
aclshmemx_barrier_vec(aclshmem_team_t team)
{
    (void)aclshmemx_dev_barrier_vec(team, 0); /* AIV contexts only */
}
[[deprecated("aclshmemx_barrier_all_vec is deprecated, please use aclshmem_barrier_all instead.")]] inline void
aclshmemx_barrier_all_vec(void)
{
    (void)aclshmemx_dev_barrier_vec(0, 1); /* AIV contexts only */
}

/* ---- teams (spec 2.14) ---- */
inline int aclshmem_team_pe_mapping(aclshmem_team_t team, int pe)
{
    return aclshmem_team_translate_pe(team, pe, ACLSHMEM_TEAM_WORLD);
}

/* ---- MTE engine (spec 2.5): staging buffers and sync ids have no effect on the CPU ---- */
template <typename T>
inline void aclshmemx_mte_put_nbi(T *dst, T *src, T *buf, uint32_t ub_size, uint32_t n, int pe, uint32_t sync_id)
{
    (void)buf, (void)ub_size, (void)sync_id;
    aclshmem_putmem_nbi(dst, src, size_t(n) * sizeof(T), pe);
}
template <typename T>
inline void aclshmemx_mte_get_nbi(T *dst, T *src, T *buf, uint32_t ub_size, uint32_t n, int pe, uint32_t sync_id)
{
    (void)buf, (void)ub_size, (void)sync_id;
    aclshmem_getmem_nbi(dst, src, size_t(n) * sizeof(T), pe);
}
template <typename T>
inline void aclshmemx_mte_put_nbi(T *dst, T *src, T *buf, uint32_t ub_size, const non_contiguous_copy_param &p,
                                  int pe, uint32_t sync_id)
{
    (void)buf, (void)ub_size, (void)sync_id;
    aclshmemi_dev::rows_put(dst, src, sizeof(T), p, pe);
}
template <typename T>
inline void aclshmemx_mte_get_nbi(T *dst, T *src, T *buf, uint32_t ub_size, const non_contiguous_copy_param &p,
                                  int pe, uint32_t sync_id)
{
    (void)buf, (void)ub_size, (void)sync_id;
    aclshmemi_dev::rows_get(dst, src, sizeof(T), p, pe);
}
template <typename T>
inline void aclshmemx_mte_put_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,
                                  AscendC::LocalTensor<T> buf, uint32_t n, int pe, uint32_t sync_id)
{
    (void)buf, (void)sync_id;
    aclshmem_putmem_nbi(dst.GetPhyAddr(), src.GetPhyAddr(), size_t(n) * sizeof(T), pe);
}
template <typename T>
inline void aclshmemx_mte_get_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,
                                  AscendC::LocalTensor<T> buf, uint32_t n, int pe, uint32_t sync_id)
{
    (void)buf, (void)sync_id;
    aclshmem_getmem_nbi(dst.GetPhyAddr(), src.GetPhyAddr(), size_t(n) * sizeof(T), pe);
}
template <typename T>
inline void aclshmemx_mte_put_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,
                                  AscendC::LocalTensor<T> buf, const non_contiguous_copy_param &p, int pe,
                                  uint32_t sync_id)
{
    (void)buf, (void)sync_id;
    aclshmemi_dev::rows_put(dst.GetPhyAddr(), src.GetPhyAddr(), sizeof(T), p, pe);
}
template <typename T>
inline void aclshmemx_mte_get_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,
                                  AscendC::LocalTensor<T> buf, const non_contiguous_copy_param &p, int pe,
                                  uint32_t sync_id)
{
    (void)buf, (void)sync_id;
    aclshmemi_dev::rows_get(dst.GetPhyAddr(), src.GetPhyAddr(), sizeof(T), p, pe);
}
/* UB <-> GM (spec 2.5.2): the UB operand is an offset into the calling block's UB */
template <typename T>
inline void aclshmemx_mte_put_nbi(T *dst, T *src, uint32_t n, int pe, uint32_t sync_id)
{
    (void)sync_id;
    aclshmem_putmem_nbi(dst, src, size_t(n) * sizeof(T), pe);
}
template <typename T>
inline void aclshmemx_mte_get_nbi(T *dst, T *src, uint32_t n, int pe, uint32_t sync_id)
{
    (void)sync_id;
    aclshmem_getmem_nbi(dst, src, size_t(n) * sizeof(T), pe);
}
template <typename T>
inline void aclshmemx_mte_put_nbi(T *dst, T *src, const non_contiguous_copy_param &p, int pe, uint32_t sync_id)
{
    (void)sync_id;
    aclshmemi_dev::rows_put(dst, src, sizeof(T), p, pe);
}
template <typename T>
inline void aclshmemx_mte_get_nbi(T *dst, T *src, const non_contiguous_copy_param &p, int pe, uint32_t sync_id)
{
    (void)sync_id;
    aclshmemi_dev::rows_get(dst, src, sizeof(T), p, pe);
}
template <typename T>
inline void aclshmemx_mte_put_nbi(AscendC::GlobalTensor<T> dst, AscendC::LocalTensor<T> src, uint32_t n, int pe,
                                  uint32_t sync_id)
{
    (void)sync_id;
    aclshmem_putmem_nbi(dst.GetPhyAddr(), aclshmemi_dev::ub(src), size_t(n) * sizeof(T), pe);
}
template <typename T>
inline void aclshmemx_mte_get_nbi(AscendC::LocalTensor<T> dst, AscendC::GlobalTensor<T> src, uint32_t n, int pe,
                                  uint32_t sync_id)
{
    (void)sync_id;
    aclshmem_getmem_nbi(aclshmemi_dev::ub(dst), src.GetPhyAddr(), size_t(n) * sizeof(T), pe);
}
template <typename T>
inline void aclshmemx_mte_put_nbi(AscendC::GlobalTensor<T> dst, AscendC::LocalTensor<T> src,
                                  const non_contiguous_copy_param &p, int pe, uint32_t sync_id)
{
    (void)sync_id;
    aclshmemi_dev::rows_put(dst.GetPhyAddr(), aclshmemi_dev::ub(src), sizeof(T), p, pe);
}
template <typename T>
inline void aclshmemx_mte_get_nbi(AscendC::LocalTensor<T> dst, AscendC::GlobalTensor<T> src,
                                  const non_contiguous_copy_param &p, int pe, uint32_t sync_id)
{
    (void)sync_id;
    aclshmemi_dev::rows_get(aclshmemi_dev::ub(dst), src.GetPhyAddr(), sizeof(T), p, pe);
}
/* the int8_t overloads with an L2 hint (spec 2.5.3) */
inline void aclshmemx_mte_put_nbi(int8_t *dst, int8_t *src, uint32_t n, int32_t pe, bool enable_L2)
{
    (void)enable_L2;
    aclshmem_putmem_nbi(dst, src, n, pe);
}
inline void aclshmemx_mte_get_nbi(int8_t *dst, int8_t *src, uint32_t n, int32_t pe, bool enable_L2)
{
    (void)enable_L2;
    aclshmem_getmem_nbi(dst, src, n, pe);
}
inline void aclshmemx_mte_put_nbi(int8_t *dst, int8_t *src, int8_t *buf, uint32_t ub_size, uint32_t n, int pe,
                                  uint32_t sync_id, bool enable_L2)
{
    (void)enable_L2;
    aclshmemx_mte_put_nbi<int8_t>(dst, src, buf, ub_size, n, pe, sync_id);
}
inline void aclshmemx_mte_get_nbi(int8_t *dst, int8_t *src, int8_t *buf, uint32_t ub_size, uint32_t n, int pe,
                                  uint32_t sync_id, bool enable_L2)
{
    (void)enable_L2;
    aclshmemx_mte_get_nbi<int8_t>(dst, src, buf, ub_size, n, pe, sync_id);
}
inline void aclshmemx_mte_quiet(void)
{
    aclshmem_quiet();
}
/* MTE atomics (spec 2.5.4), on the peer's word through aclshmem_ptr */
template <typename T>
inline T aclshmemx_mte_atomic_fetch(T *src, int32_t pe)
{
    return aclshmemi_dev::fetch(src, pe);
}
template <typename T>
inline void aclshmemx_mte_atomic_set(T *dst, T value, int32_t pe)
{
    (void)aclshmemi_dev::swap(dst, value, pe);
}
template <typename T>
inline T aclshmemx_mte_atomic_compare_swap(T *dst, T cond, T value, int32_t pe)
{
    return aclshmemi_dev::compare_swap(dst, cond, value, pe);
}
template <typename T>
inline T aclshmemx_mte_atomic_swap(T *dst, T value, int32_t pe)
{
    return aclshmemi_dev::swap(dst, value, pe);
}
template <typename T>
inline void aclshmemx_mte_atomic_inc(T *dst, int32_t pe)
{
    (void)aclshmemi_dev::fetch_add(dst, static_cast<T>(1), pe);
}
template <typename T>
inline void aclshmemx_mte_atomic_add(T *dst, T value, int32_t pe)
{
    (void)aclshmemi_dev::fetch_add(dst, value, pe);
}
template <typename T>
inline T aclshmemx_mte_atomic_fetch_inc(T *dst, int32_t pe)
{
    return aclshmemi_dev::fetch_add(dst, static_cast<T>(1), pe);
}
template <typename T>
inline T aclshmemx_mte_atomic_fetch_add(T *dst, T value, int32_t pe)
{
    return aclshmemi_dev::fetch_add(dst, value, pe);
}

/* ---- SDMA engine (spec 2.6): copies complete at once; sdma_quiet is a fence ---- */
template <typename T>
inline void aclshmemx_sdma_put_nbi(T *dst, T *src, T *buf, uint32_t ub_size, uint32_t n, int pe, uint32_t sync_id)
{
    aclshmemx_mte_put_nbi(dst, src, buf, ub_size, n, pe, sync_id);
}
template <typename T>
inline void aclshmemx_sdma_get_nbi(T *dst, T *src, T *buf, uint32_t ub_size, uint32_t n, int pe, uint32_t sync_id)
{
    aclshmemx_mte_get_nbi(dst, src, buf, ub_size, n, pe, sync_id);
}
template <typename T>
inline void aclshmemx_sdma_put_nbi(AscendC::GlobalTensor<T> &dst, AscendC::GlobalTensor<T> &src,
                                   AscendC::LocalTensor<T> &buf, uint32_t n, int pe, uint32_t sync_id)
{
    aclshmemx_mte_put_nbi(dst, src, buf, n, pe, sync_id);
}
template <typename T>
inline void aclshmemx_sdma_get_nbi(AscendC::GlobalTensor<T> &dst, AscendC::GlobalTensor<T> &src,
                                   AscendC::LocalTensor<T> &buf, uint32_t n, int pe, uint32_t sync_id)
{
    aclshmemx_mte_get_nbi(dst, src, buf, n, pe, sync_id);
}
template <typename T>
inline void aclshmemx_sdma_quiet(AscendC::LocalTensor<T> &, uint32_t)
{
    aclshmem_quiet();
}
template <typename T>
inline void aclshmemx_sdma_quiet(T *, uint32_t, uint32_t)
{
    aclshmem_quiet();
}
/* the calling core's notify in g_state_host.notify_arr is set after its earlier copies (complete) */
template <typename T>
inline void aclshmemx_sdma_notify_record(AscendC::LocalTensor<T> &, uint32_t)
{
    aclshmem_quiet();
    aclshmemx_dev_notify_record();
}
template <typename T>
inline void aclshmemx_sdma_notify_record(T *, uint32_t, uint32_t)
{
    aclshmem_quiet();
    aclshmemx_dev_notify_record();
}
/* an L2 prefetch: no data effect */
template <typename T>
inline void aclshmemx_cmo_nbi(T *, uint32_t, ACLSHMEMCMOTYPE, T *, uint32_t, uint32_t)
{
}
template <typename T>
inline void aclshmemx_cmo_nbi(AscendC::GlobalTensor<T> &, uint32_t, ACLSHMEMCMOTYPE, AscendC::LocalTensor<T> &,
                              uint32_t)
{
}
/* the original's internal name of the SDMA quiet, used by its examples */
template <typename T>
inline void aclshmemi_sdma_quiet(T *buf, uint32_t ub_size, uint32_t sync_id)
{
    aclshmemx_sdma_quiet(buf, ub_size, sync_id);
}
template <typename T>
inline void aclshmemi_sdma_quiet(AscendC::LocalTensor<T> &buf, uint32_t sync_id)
{
    aclshmemx_sdma_quiet(buf, sync_id);
}

/* ---- SDMA on an explicit queue pair (aclshmemx_set_qp_num): the same copies; qp_idx must be a
   configured queue pair (else the call logs an error and does nothing); a queue pair's notify
   record sets g_state_host.notify_arr[qp_idx] ---- */
template <typename T>
inline void aclshmemx_sdma_qp_put_nbi(T *dst, T *src, T *buf, uint32_t ub_size, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id)
{
    if (aclshmemx_dev_qp_check(qp_idx) == 0) {
        aclshmemx_mte_put_nbi(dst, src, buf, ub_size, n, pe, sync_id);
    }
}
template <typename T>
inline void aclshmemx_sdma_qp_get_nbi(T *dst, T *src, T *buf, uint32_t ub_size, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id)
{
    if (aclshmemx_dev_qp_check(qp_idx) == 0) {
        aclshmemx_mte_get_nbi(dst, src, buf, ub_size, n, pe, sync_id);
    }
}
template <typename T>
inline void aclshmemx_sdma_qp_put_nbi(AscendC::GlobalTensor<T> &dst, AscendC::GlobalTensor<T> &src,
                                      AscendC::LocalTensor<T> &buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id)
{
    if (aclshmemx_dev_qp_check(qp_idx) == 0) {
        aclshmemx_mte_put_nbi(dst, src, buf, n, pe, sync_id);
    }
}
template <typename T>
inline void aclshmemx_sdma_qp_get_nbi(AscendC::GlobalTensor<T> &dst, AscendC::GlobalTensor<T> &src,
                                      AscendC::LocalTensor<T> &buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id)
{
    if (aclshmemx_dev_qp_check(qp_idx) == 0) {
        aclshmemx_mte_get_nbi(dst, src, buf, n, pe, sync_id);
    }
}
template <typename T>
inline void aclshmemx_sdma_qp_quiet(AscendC::LocalTensor<T> &, uint32_t qp_idx, uint32_t)
{
    if (aclshmemx_dev_qp_check(qp_idx) == 0) {
        aclshmem_quiet();
    }
}
template <typename T>
inline void aclshmemx_sdma_qp_quiet(T *, uint32_t, uint32_t qp_idx, uint32_t)
{
    if (aclshmemx_dev_qp_check(qp_idx) == 0) {
        aclshmem_quiet();
    }
}
template <typename T>
inline void aclshmemx_sdma_qp_notify_record(AscendC::LocalTensor<T> &, uint32_t qp_idx, uint32_t)
{
    aclshmem_quiet();
    aclshmemx_dev_qp_notify_record(qp_idx);
}
template <typename T>
inline void aclshmemx_sdma_qp_notify_record(T *, uint32_t, uint32_t qp_idx, uint32_t)
{
    aclshmem_quiet();
    aclshmemx_dev_qp_notify_record(qp_idx);
}
template <typename T>
inline void aclshmemx_cmo_qp_nbi(T *, uint32_t, ACLSHMEMCMOTYPE, T *, uint32_t, uint32_t qp_idx, uint32_t)
{
    (void)aclshmemx_dev_qp_check(qp_idx);
}
template <typename T>
inline void aclshmemx_cmo_qp_nbi(AscendC::GlobalTensor<T> &, uint32_t, ACLSHMEMCMOTYPE, AscendC::LocalTensor<T> &,
                                 uint32_t qp_idx, uint32_t)
{
    (void)aclshmemx_dev_qp_check(qp_idx);
}

/* ---- RoCE engine (spec 2.7): same copies; team syncs and barriers are PE-level (one block) ---- */
/* a PE mapped here: its copy's address (aclshmem_ptr); a PE reached through a transport (another
   node), whose copy has no address here: the symmetric address itself, which
   aclshmemi_roce_write / _read and the RoCE put / get take for that PE (never to be dereferenced:
   on the device, the original's value is a remote address too); NULL for an address outside the
   heap or a PE out of range */
inline void *aclshmem_roce_ptr(void *ptr, int pe)
{
    void *p = aclshmem_ptr(ptr, pe);
    aclshmem_device_host_state_t *s = aclshmemx_dev_state();
    if (p != nullptr || s == nullptr || pe < 0 || pe >= s->npes || s->heap_base == nullptr) {
        return p;
    }
    const uintptr_t a = reinterpret_cast<uintptr_t>(ptr), base = reinterpret_cast<uintptr_t>(s->heap_base);
    return a >= base && a - base < s->heap_size ? ptr : nullptr;
}
template <typename T>
inline void aclshmemx_roce_put_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t sync_id = 0)
{
    (void)buf, (void)sync_id;
    aclshmem_putmem_nbi(dst, src, size_t(n) * sizeof(T), pe);
}
template <typename T>
inline void aclshmemx_roce_get_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t sync_id = 0)
{
    (void)buf, (void)sync_id;
    aclshmem_getmem_nbi(dst, src, size_t(n) * sizeof(T), pe);
}
template <typename T>
inline void aclshmemx_roce_put_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,
                                   AscendC::LocalTensor<T> buf, uint32_t n, int pe, uint32_t sync_id = 0)
{
    (void)buf, (void)sync_id;
    aclshmem_putmem_nbi(dst.GetPhyAddr(), src.GetPhyAddr(), size_t(n) * sizeof(T), pe);
}
template <typename T>
inline void aclshmemx_roce_get_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,
                                   AscendC::LocalTensor<T> buf, uint32_t n, int pe, uint32_t sync_id = 0)
{
    (void)buf, (void)sync_id;
    aclshmem_getmem_nbi(dst.GetPhyAddr(), src.GetPhyAddr(), size_t(n) * sizeof(T), pe);
}
template <typename T>
inline void aclshmemx_roce_quiet(uint32_t, T *, uint32_t)
{
    aclshmem_quiet();
}
inline int aclshmemx_roce_team_sync(aclshmemx_team_t *team)
{
    return aclshmemx_dev_pe_barrier(team != nullptr ? team->team_idx : ACLSHMEM_TEAM_INVALID);
}
template <typename T>
inline int aclshmemx_roce_team_sync(aclshmemx_team_t *team, T *, uint32_t)
{
    return aclshmemx_roce_team_sync(team);
}
inline int aclshmemx_roce_barrier(aclshmemx_team_t *team)
{
    aclshmem_quiet();
    return aclshmemx_roce_team_sync(team);
}
template <typename T>
inline int aclshmemx_roce_barrier(aclshmemx_team_t *team, T *, uint32_t)
{
    return aclshmemx_roce_barrier(team);
}
inline void aclshmemx_roce_sync_all()
{
    (void)aclshmemx_dev_pe_barrier(ACLSHMEM_TEAM_WORLD);
}
template <typename T>
inline void aclshmemx_roce_sync_all(T *, uint32_t)
{
    aclshmemx_roce_sync_all();
}
inline void aclshmemx_roce_barrier_all()
{
    aclshmem_quiet();
    (void)aclshmemx_dev_pe_barrier(ACLSHMEM_TEAM_WORLD);
}
template <typename T>
inline void aclshmemx_roce_barrier_all(T *, uint32_t)
{
    aclshmemx_roce_barrier_all();
}
#define aclshmemx_roce_sync aclshmemx_roce_team_sync

/* The RoCE engine's internal whole-message operations (the original's RDMA engine header; its
   performance demo and the fused examples' tile copies call them): a write of message_len bytes
   from this PE's src to PE pe, a read of message_len bytes from PE pe into this PE's dst, issued
   as a non-blocking put / get and complete at aclshmemi_roce_quiet (here, on shared memory, at
   once). The remote operand is named as those callers name it, by its address in PE pe's copy
   (what aclshmem_roce_ptr / aclshmem_ptr return), or by its symmetric address; any other address
   is refused by the put / get with a logged error and nothing is written. The queue index, the
   UB work tensors and the event id change nothing here. */
namespace aclshmemi_dev {
inline void *roce_symmetric(const void *p, uint32_t pe)
{
    aclshmem_device_host_state_t *s = aclshmemx_dev_state();
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    if (s != nullptr && s->p2p_device_heap_base != nullptr && s->npes > 0 && pe < uint32_t(s->npes)) {
        const uintptr_t base = reinterpret_cast<uintptr_t>(s->p2p_device_heap_base[pe]);
        if (base != 0 && a >= base && a - base < s->heap_size) {
            return static_cast<uint8_t *>(s->heap_base) + (a - base);
        }
    }
    return const_cast<void *>(p);
}
} // namespace aclshmemi_dev
template <typename T>
inline void aclshmemi_roce_write(T *dst, T *src, uint32_t pe, uint32_t qp_idx, uint64_t message_len,
                                 AscendC::LocalTensor<uint64_t> ub_local64, AscendC::LocalTensor<uint32_t> ub_local32,
                                 uint32_t sync_id = 0)
{
    (void)qp_idx, (void)ub_local64, (void)ub_local32, (void)sync_id;
    aclshmem_putmem_nbi(aclshmemi_dev::roce_symmetric(dst, pe), src, size_t(message_len), int(pe));
}
template <typename T>
inline void aclshmemi_roce_read(T *dst, T *src, uint32_t pe, uint32_t qp_idx, uint64_t message_len,
                                AscendC::LocalTensor<uint64_t> ub_local64, AscendC::LocalTensor<uint32_t> ub_local32,
                                uint32_t sync_id = 0)
{
    (void)qp_idx, (void)ub_local64, (void)ub_local32, (void)sync_id;
    aclshmem_getmem_nbi(dst, aclshmemi_dev::roce_symmetric(src, pe), size_t(message_len), int(pe));
}
inline void aclshmemi_roce_quiet(uint32_t pe, uint32_t qp_idx, AscendC::LocalTensor<uint64_t> ub_local64,
                                 AscendC::LocalTensor<uint32_t> ub_local32, uint32_t sync_id = 0)
{
    (void)pe, (void)qp_idx, (void)ub_local64, (void)ub_local32, (void)sync_id;
    aclshmem_quiet();
}

/* ---- RoCE queue pairs and batches of deferred operations (newer original headers) ----
   Backend of the build. The original chooses it at compile time (-DACLSHMEMI_RDMA_K_BACKEND_XSCALE
   or -DACLSHMEMI_RDMA_K_BACKEND_HNS_1825; IN_DIE otherwise) and has the queue-pair calls only with
   XSCALE and HNS_1825, the batches of the queue-pair calls only with XSCALE; upstream kernels pick
   their paths with if constexpr on ACLSHMEMI_K_RDMA_BACKEND or #if on the XSCALE macro. The CPU
   engine runs every call with every backend, so without a choice it is XSCALE (the backend that
   has everything: the macro is defined too) and upstream kernels take their queue-pair and batch
   paths; a choice on the command line only changes what the two names say. */
enum class aclshmemi_rdma_backend_t : uint32_t {
    IN_DIE = 0,
    XSCALE = 1,
    HNS_1825 = 2,
};
#if !defined(ACLSHMEMI_RDMA_K_BACKEND_XSCALE) && !defined(ACLSHMEMI_RDMA_K_BACKEND_HNS_1825) &&             \
    !defined(ACLSHMEMI_RDMA_K_BACKEND_IN_DIE)
#define ACLSHMEMI_RDMA_K_BACKEND_XSCALE 1
#endif
#ifndef ACLSHMEMI_K_RDMA_BACKEND
#if defined(ACLSHMEMI_RDMA_K_BACKEND_XSCALE)
#define ACLSHMEMI_K_RDMA_BACKEND (aclshmemi_rdma_backend_t::XSCALE)
#elif defined(ACLSHMEMI_RDMA_K_BACKEND_HNS_1825)
#define ACLSHMEMI_K_RDMA_BACKEND (aclshmemi_rdma_backend_t::HNS_1825)
#else
#define ACLSHMEMI_K_RDMA_BACKEND (aclshmemi_rdma_backend_t::IN_DIE)
#endif
#endif

/* The RoCE queue pairs' metadata the original's device code reads (its RDMA engine header):
   aclshmemi_qp_info_fetch() returns the record the state's qp_info points at, of the current
   instance: qp_num is the queue pairs per connection (aclshmemx_set_qp_num, 1 unless set); the
   hardware queue addresses are 0 (the CPU engines have no queues). */
struct aclshmemi_rdma_info {
    uint32_t qp_num;
    uint64_t sq_ptr;
    uint64_t rq_ptr;
    uint64_t scq_ptr;
    uint64_t rcq_ptr;
    uint64_t mem_ptr;
};
/* the queue-pair metadata of shmem object `id` (0: the current instance; others: NULL) */
inline void *aclshmemi_get_qp_info_address(uint32_t id)
{
    aclshmem_device_host_state_t *s = aclshmemx_dev_state();
    return id == 0 && s != nullptr ? reinterpret_cast<void *>(static_cast<uintptr_t>(s->qp_info)) : nullptr;
}
inline aclshmemi_rdma_info *aclshmemi_qp_info_fetch()
{
    return static_cast<aclshmemi_rdma_info *>(aclshmemi_get_qp_info_address(0));
}

/* the most operations one batch of the RoCE queue-pair calls may hold, its submit included */
constexpr uint32_t ACLSHMEM_ROCE_QP_AGGREGATE_MAX_OPS = 1023;

namespace aclshmemi_dev {
/* Every engine operation is carried out when it is issued, a deferred one too: after the submit
   and a quiet the whole batch is complete, as on the NPU. A deferred operation counts in
   pending_count, a submit resets it. Queue-pair calls first check qp_idx against the configured
   count (aclshmemx_set_qp_num, one count for every engine): a queue pair not configured is logged
   and the call does nothing (no copy, no count, no reset). A bad PE is logged and refused by the
   copy itself. */
inline bool qp_ok(uint32_t qp_idx)
{
    return aclshmemx_dev_qp_check(qp_idx) == 0;
}
inline void deferred(aclshmemx_defer_t a)
{
    a.state.pending_count++;
}
inline void submitted(aclshmemx_submit_t a)
{
    a.state.pending_count = 0;
}
/* A batch of a RoCE queue-pair call may not exceed ACLSHMEM_ROCE_QP_AGGREGATE_MAX_OPS operations,
   the submit included. The original aborts the kernel when a batch fails its checks; here the
   operation that makes the batch too long (a deferred one that leaves no room for the submit, or
   a submit after too many) is not carried out and ends its block: the launch logs this message
   and the stream's next synchronize fails. The state is left as it was. */
inline void roce_qp_room(const aclshmemx_submit_state_t &s, uint32_t still_to_come, const char *call)
{
    uint64_t ops = uint64_t(s.pending_count) + 1 + still_to_come;
    if (ops > ACLSHMEM_ROCE_QP_AGGREGATE_MAX_OPS) {
        char msg[320];
        std::snprintf(msg, sizeof msg,
                      "%s: the batch would hold at least %llu operations with its submit (%u deferred before this "
                      "one), more than ACLSHMEM_ROCE_QP_AGGREGATE_MAX_OPS (%u): split it into batches",
                      call, static_cast<unsigned long long>(ops), s.pending_count, ACLSHMEM_ROCE_QP_AGGREGATE_MAX_OPS);
        throw std::runtime_error(msg);
    }
}
} // namespace aclshmemi_dev

/* deferred / submitting forms of the QP 0 calls (the original's batches of one core on QP 0) */
template <typename T>
inline void aclshmemx_roce_put_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t sync_id, aclshmemx_defer_t a)
{
    aclshmemx_roce_put_nbi(dst, src, buf, n, pe, sync_id);
    aclshmemi_dev::deferred(a);
}
template <typename T>
inline void aclshmemx_roce_put_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t sync_id, aclshmemx_submit_t a)
{
    aclshmemx_roce_put_nbi(dst, src, buf, n, pe, sync_id);
    aclshmemi_dev::submitted(a);
}
template <typename T>
inline void aclshmemx_roce_get_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t sync_id, aclshmemx_defer_t a)
{
    aclshmemx_roce_get_nbi(dst, src, buf, n, pe, sync_id);
    aclshmemi_dev::deferred(a);
}
template <typename T>
inline void aclshmemx_roce_get_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t sync_id, aclshmemx_submit_t a)
{
    aclshmemx_roce_get_nbi(dst, src, buf, n, pe, sync_id);
    aclshmemi_dev::submitted(a);
}
template <typename T>
inline void aclshmemx_roce_put_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,
                                   AscendC::LocalTensor<T> buf, uint32_t n, int pe, uint32_t sync_id,
                                   aclshmemx_defer_t a)
{
    aclshmemx_roce_put_nbi(dst, src, buf, n, pe, sync_id);
    aclshmemi_dev::deferred(a);
}
template <typename T>
inline void aclshmemx_roce_put_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,
                                   AscendC::LocalTensor<T> buf, uint32_t n, int pe, uint32_t sync_id,
                                   aclshmemx_submit_t a)
{
    aclshmemx_roce_put_nbi(dst, src, buf, n, pe, sync_id);
    aclshmemi_dev::submitted(a);
}
template <typename T>
inline void aclshmemx_roce_get_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,
                                   AscendC::LocalTensor<T> buf, uint32_t n, int pe, uint32_t sync_id,
                                   aclshmemx_defer_t a)
{
    aclshmemx_roce_get_nbi(dst, src, buf, n, pe, sync_id);
    aclshmemi_dev::deferred(a);
}
template <typename T>
inline void aclshmemx_roce_get_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,
                                   AscendC::LocalTensor<T> buf, uint32_t n, int pe, uint32_t sync_id,
                                   aclshmemx_submit_t a)
{
    aclshmemx_roce_get_nbi(dst, src, buf, n, pe, sync_id);
    aclshmemi_dev::submitted(a);
}

/* on queue pair qp_idx of the connection to pe */
template <typename T>
inline void aclshmemx_roce_qp_put_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t qp_idx, uint32_t sync_id)
{
    if (aclshmemi_dev::qp_ok(qp_idx)) {
        aclshmemx_roce_put_nbi(dst, src, buf, n, pe, sync_id);
    }
}
template <typename T>
inline void aclshmemx_roce_qp_get_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t qp_idx, uint32_t sync_id)
{
    if (aclshmemi_dev::qp_ok(qp_idx)) {
        aclshmemx_roce_get_nbi(dst, src, buf, n, pe, sync_id);
    }
}
template <typename T>
inline void aclshmemx_roce_qp_put_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t qp_idx, uint32_t sync_id,
                                      aclshmemx_defer_t a)
{
    if (aclshmemi_dev::qp_ok(qp_idx)) {
        aclshmemi_dev::roce_qp_room(a.state, 1, "aclshmemx_roce_qp_put_nbi (defer)");
        aclshmemx_roce_put_nbi(dst, src, buf, n, pe, sync_id);
        aclshmemi_dev::deferred(a);
    }
}
template <typename T>
inline void aclshmemx_roce_qp_put_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t qp_idx, uint32_t sync_id,
                                      aclshmemx_submit_t a)
{
    if (aclshmemi_dev::qp_ok(qp_idx)) {
        aclshmemi_dev::roce_qp_room(a.state, 0, "aclshmemx_roce_qp_put_nbi (submit)");
        aclshmemx_roce_put_nbi(dst, src, buf, n, pe, sync_id);
        aclshmemi_dev::submitted(a);
    }
}
template <typename T>
inline void aclshmemx_roce_qp_get_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t qp_idx, uint32_t sync_id,
                                      aclshmemx_defer_t a)
{
    if (aclshmemi_dev::qp_ok(qp_idx)) {
        aclshmemi_dev::roce_qp_room(a.state, 1, "aclshmemx_roce_qp_get_nbi (defer)");
        aclshmemx_roce_get_nbi(dst, src, buf, n, pe, sync_id);
        aclshmemi_dev::deferred(a);
    }
}
template <typename T>
inline void aclshmemx_roce_qp_get_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t qp_idx, uint32_t sync_id,
                                      aclshmemx_submit_t a)
{
    if (aclshmemi_dev::qp_ok(qp_idx)) {
        aclshmemi_dev::roce_qp_room(a.state, 0, "aclshmemx_roce_qp_get_nbi (submit)");
        aclshmemx_roce_get_nbi(dst, src, buf, n, pe, sync_id);
        aclshmemi_dev::submitted(a);
    }
}
template <typename T>
inline void aclshmemx_roce_qp_put_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,
                                      AscendC::LocalTensor<T> buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id)
{
    aclshmemx_roce_qp_put_nbi(dst.GetPhyAddr(), src.GetPhyAddr(), aclshmemi_dev::ub(buf), n, pe, qp_idx, sync_id);
}
template <typename T>
inline void aclshmemx_roce_qp_get_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,
                                      AscendC::LocalTensor<T> buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id)
{
    aclshmemx_roce_qp_get_nbi(dst.GetPhyAddr(), src.GetPhyAddr(), aclshmemi_dev::ub(buf), n, pe, qp_idx, sync_id);
}
template <typename T>
inline void aclshmemx_roce_qp_put_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,
                                      AscendC::LocalTensor<T> buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id, aclshmemx_defer_t a)
{
    aclshmemx_roce_qp_put_nbi(dst.GetPhyAddr(), src.GetPhyAddr(), aclshmemi_dev::ub(buf), n, pe, qp_idx, sync_id,
                              a);
}
template <typename T>
inline void aclshmemx_roce_qp_put_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,
                                      AscendC::LocalTensor<T> buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id, aclshmemx_submit_t a)
{
    aclshmemx_roce_qp_put_nbi(dst.GetPhyAddr(), src.GetPhyAddr(), aclshmemi_dev::ub(buf), n, pe, qp_idx, sync_id,
                              a);
}
template <typename T>
inline void aclshmemx_roce_qp_get_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,
                                      AscendC::LocalTensor<T> buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id, aclshmemx_defer_t a)
{
    aclshmemx_roce_qp_get_nbi(dst.GetPhyAddr(), src.GetPhyAddr(), aclshmemi_dev::ub(buf), n, pe, qp_idx, sync_id,
                              a);
}
template <typename T>
inline void aclshmemx_roce_qp_get_nbi(AscendC::GlobalTensor<T> dst, AscendC::GlobalTensor<T> src,
                                      AscendC::LocalTensor<T> buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id, aclshmemx_submit_t a)
{
    aclshmemx_roce_qp_get_nbi(dst.GetPhyAddr(), src.GetPhyAddr(), aclshmemi_dev::ub(buf), n, pe, qp_idx, sync_id,
                              a);
}
/* completion of one queue pair: a full fence here (the copies are already complete) */
template <typename T>
inline void aclshmemx_roce_qp_quiet(uint32_t pe, uint32_t qp_idx, T *buf, uint32_t sync_id)
{
    (void)pe, (void)buf, (void)sync_id;
    if (aclshmemi_dev::qp_ok(qp_idx)) {
        aclshmem_quiet();
    }
}
template <typename T>
inline void aclshmemx_roce_qp_quiet(uint32_t pe, uint32_t qp_idx, AscendC::LocalTensor<T> buf, uint32_t sync_id)
{
    aclshmemx_roce_qp_quiet(pe, qp_idx, aclshmemi_dev::ub(buf), sync_id);
}

/* engine atomics (RoCE, UDMA): value-returning ones return the old value; all complete on return */
#define ACLSHMEMI_DEV_ENGINE_ATOMICS(ENGINE, TEMPLATE, CHECK)                                                 \
    TEMPLATE                                                                                                  \
    inline T aclshmemx_##ENGINE##_atomic_fetch(T *src, int32_t pe)                                            \
    {                                                                                                         \
        CHECK;                                                                                                \
        return aclshmemi_dev::fetch(src, pe);                                                                 \
    }                                                                                                         \
    TEMPLATE                                                                                                  \
    inline void aclshmemx_##ENGINE##_atomic_set(T *dst, T value, int32_t pe)                                  \
    {                                                                                                         \
        CHECK;                                                                                                \
        (void)aclshmemi_dev::swap(dst, value, pe);                                                            \
    }                                                                                                         \
    TEMPLATE                                                                                                  \
    inline T aclshmemx_##ENGINE##_atomic_compare_swap(T *dst, T cond, T value, int32_t pe)                    \
    {                                                                                                         \
        CHECK;                                                                                                \
        return aclshmemi_dev::compare_swap(dst, cond, value, pe);                                             \
    }                                                                                                         \
    TEMPLATE                                                                                                  \
    inline T aclshmemx_##ENGINE##_atomic_swap(T *dst, T value, int32_t pe)                                    \
    {                                                                                                         \
        CHECK;                                                                                                \
        return aclshmemi_dev::swap(dst, value, pe);                                                           \
    }                                                                                                         \
    TEMPLATE                                                                                                  \
    inline void aclshmemx_##ENGINE##_atomic_inc(T *dst, int32_t pe)                                           \
    {                                                                                                         \
        CHECK;                                                                                                \
        (void)aclshmemi_dev::fetch_add(dst, static_cast<T>(1), pe);                                           \
    }                                                                                                         \
    TEMPLATE                                                                                                  \
    inline void aclshmemx_##ENGINE##_atomic_add(T *dst, T value, int32_t pe)                                  \
    {                                                                                                         \
        CHECK;                                                                                                \
        (void)aclshmemi_dev::fetch_add(dst, value, pe);                                                       \
    }                                                                                                         \
    TEMPLATE                                                                                                  \
    inline T aclshmemx_##ENGINE##_atomic_fetch_inc(T *dst, int32_t pe)                                        \
    {                                                                                                         \
        CHECK;                                                                                                \
        return aclshmemi_dev::fetch_add(dst, static_cast<T>(1), pe);                                          \
    }                                                                                                         \
    TEMPLATE                                                                                                  \
    inline T aclshmemx_##ENGINE##_atomic_fetch_add(T *dst, T value, int32_t pe)                               \
    {                                                                                                         \
        CHECK;                                                                                                \
        return aclshmemi_dev::fetch_add(dst, value, pe);                                                      \
    }                                                                                                         \
    TEMPLATE                                                                                                  \
    inline void aclshmemx_##ENGINE##_atomic_and(T *dst, T value, int32_t pe)                                  \
    {                                                                                                         \
        CHECK;                                                                                                \
        (void)aclshmemi_dev::fetch_and(dst, value, pe);                                                       \
    }                                                                                                         \
    TEMPLATE                                                                                                  \
    inline void aclshmemx_##ENGINE##_atomic_or(T *dst, T value, int32_t pe)                                   \
    {                                                                                                         \
        CHECK;                                                                                                \
        (void)aclshmemi_dev::fetch_or(dst, value, pe);                                                        \
    }                                                                                                         \
    TEMPLATE                                                                                                  \
    inline void aclshmemx_##ENGINE##_atomic_xor(T *dst, T value, int32_t pe)                                  \
    {                                                                                                         \
        CHECK;                                                                                                \
        (void)aclshmemi_dev::fetch_xor(dst, value, pe);                                                       \
    }                                                                                                         \
    TEMPLATE                                                                                                  \
    inline T aclshmemx_##ENGINE##_atomic_fetch_and(T *dst, T value, int32_t pe)                               \
    {                                                                                                         \
        CHECK;                                                                                                \
        return aclshmemi_dev::fetch_and(dst, value, pe);                                                      \
    }                                                                                                         \
    TEMPLATE                                                                                                  \
    inline T aclshmemx_##ENGINE##_atomic_fetch_or(T *dst, T value, int32_t pe)                                \
    {                                                                                                         \
        CHECK;                                                                                                \
        return aclshmemi_dev::fetch_or(dst, value, pe);                                                       \
    }                                                                                                         \
    TEMPLATE                                                                                                  \
    inline T aclshmemx_##ENGINE##_atomic_fetch_xor(T *dst, T value, int32_t pe)                               \
    {                                                                                                         \
        CHECK;                                                                                                \
        return aclshmemi_dev::fetch_xor(dst, value, pe);                                                      \
    }
/* ---- UDMA request options (newer original headers): the UDMA calls take a template argument
   CONFIG, a reference to a constant aclshmemx_udma_op_config_t: cqe (the request writes a
   completion entry: 0 or 1), se (solicited event: 0, the only value the original supports),
   fence (0 or 1) and odr (ordering, at most 7: ACLSHMEMX_UDMA_ODR_RO relaxed, ACLSHMEMX_UDMA_ODR_SO
   strong). Deferred operations of a batch take cqe 0 (their default, ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE);
   single operations, submits, signal puts and atomics take cqe 1 (default
   ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT; ACLSHMEMX_UDMA_OP_CONFIG_SO orders strongly). A CONFIG against
   these rules does not compile, as with the original. The CPU engine completes each copy when it
   is issued, in program order, so the options change nothing else. ---- */
typedef enum {
    ACLSHMEMX_UDMA_ODR_RO = 1,
    ACLSHMEMX_UDMA_ODR_SO = 2,
} aclshmemx_udma_odr_t;
typedef struct {
    uint32_t cqe;
    uint32_t se;
    uint32_t fence;
    uint32_t odr;
} aclshmemx_udma_op_config_t;
#if __cplusplus >= 201703L
#define ACLSHMEMI_UDMA_CONFIG_CONSTANT inline constexpr
#else
#define ACLSHMEMI_UDMA_CONFIG_CONSTANT static constexpr
#endif
ACLSHMEMI_UDMA_CONFIG_CONSTANT aclshmemx_udma_op_config_t ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT{1U, 0U, 0U,
                                                                                         ACLSHMEMX_UDMA_ODR_RO};
ACLSHMEMI_UDMA_CONFIG_CONSTANT aclshmemx_udma_op_config_t ACLSHMEMX_UDMA_OP_CONFIG_SO{1U, 0U, 0U,
                                                                                    ACLSHMEMX_UDMA_ODR_SO};
ACLSHMEMI_UDMA_CONFIG_CONSTANT aclshmemx_udma_op_config_t ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE{0U, 0U, 0U,
                                                                                        ACLSHMEMX_UDMA_ODR_RO};
#undef ACLSHMEMI_UDMA_CONFIG_CONSTANT
namespace aclshmemi_dev {
template <const aclshmemx_udma_op_config_t &C>
constexpr bool udma_config_ok()
{
    return C.cqe <= 1U && C.se == 0U && C.fence <= 1U && C.odr <= 7U;
}
} // namespace aclshmemi_dev
#define ACLSHMEMI_UDMA_CONFIG_OK                                                                              \
    static_assert(aclshmemi_dev::udma_config_ok<CONFIG>(),                                                    \
                  "UDMA CONFIG: cqe and fence must be 0 or 1, se must be 0, odr at most 7")
/* single operations, submits, signal puts and atomics */
#define ACLSHMEMI_UDMA_WITH_CQE                                                                               \
    ACLSHMEMI_UDMA_CONFIG_OK;                                                                                 \
    static_assert(CONFIG.cqe != 0U, "this UDMA call needs a CONFIG with cqe 1 (deferred operations take cqe 0)")
/* deferred operations of a batch */
#define ACLSHMEMI_UDMA_NO_CQE                                                                                 \
    ACLSHMEMI_UDMA_CONFIG_OK;                                                                                 \
    static_assert(CONFIG.cqe == 0U, "a deferred UDMA operation needs a CONFIG with cqe 0 (the submit has the entry)")

#define ACLSHMEMI_ROCE_AMO template <typename T>
#define ACLSHMEMI_UDMA_AMO                                                                                    \
    template <typename T, const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
ACLSHMEMI_DEV_ENGINE_ATOMICS(roce, ACLSHMEMI_ROCE_AMO, (void)0)
ACLSHMEMI_DEV_ENGINE_ATOMICS(udma, ACLSHMEMI_UDMA_AMO, ACLSHMEMI_UDMA_WITH_CQE)
#undef ACLSHMEMI_ROCE_AMO
#undef ACLSHMEMI_UDMA_AMO

/* ---- UDMA engine (spec 2.8): the same copies; work-request pipes and staging have no effect ---- */
#define ACLSHMEMI_UDMA_PIPE                                                                                   \
    static_assert(WQE_PIPE == PIPE_S || WQE_PIPE == PIPE_MTE3, "the UDMA calls take WQE_PIPE PIPE_S or PIPE_MTE3")
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_get_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t sync_id = 0)
{
    ACLSHMEMI_UDMA_WITH_CQE;
    ACLSHMEMI_UDMA_PIPE;
    (void)buf, (void)sync_id;
    aclshmem_getmem_nbi(dst, src, size_t(n) * sizeof(T), pe);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_put_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t sync_id = 0)
{
    ACLSHMEMI_UDMA_WITH_CQE;
    ACLSHMEMI_UDMA_PIPE;
    (void)buf, (void)sync_id;
    aclshmem_putmem_nbi(dst, src, size_t(n) * sizeof(T), pe);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_get_nbi(const AscendC::GlobalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                   const AscendC::LocalTensor<T> &buf, uint32_t n, int pe, uint32_t sync_id = 0)
{
    ACLSHMEMI_UDMA_WITH_CQE;
    ACLSHMEMI_UDMA_PIPE;
    (void)buf, (void)sync_id;
    aclshmem_getmem_nbi(dst.GetPhyAddr(), src.GetPhyAddr(), size_t(n) * sizeof(T), pe);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_put_nbi(const AscendC::GlobalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                   const AscendC::LocalTensor<T> &buf, uint32_t n, int pe, uint32_t sync_id)
{
    ACLSHMEMI_UDMA_WITH_CQE;
    ACLSHMEMI_UDMA_PIPE;
    (void)buf, (void)sync_id;
    aclshmem_putmem_nbi(dst.GetPhyAddr(), src.GetPhyAddr(), size_t(n) * sizeof(T), pe);
}
/* data, then the 64-bit signal word set on the target (SET semantics) */
template <typename T, const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_put_signal_nbi(T *dst, T *src, uint32_t n, uint64_t *sig_addr, uint64_t signal, int pe)
{
    ACLSHMEMI_UDMA_WITH_CQE;
    aclshmem_putmem(dst, src, size_t(n) * sizeof(T), pe);
    aclshmem_quiet();
    aclshmem_uint64_atomic_set(sig_addr, signal, pe);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_put_signal_nbi(T *dst, T *src, uint32_t n, uint64_t *sig_addr, uint64_t signal, int pe,
                                          uint8_t *buf, uint32_t sync_id = 0)
{
    ACLSHMEMI_UDMA_PIPE;
    (void)buf, (void)sync_id;
    aclshmemx_udma_put_signal_nbi<T, CONFIG>(dst, src, n, sig_addr, signal, pe);
}
inline void aclshmemx_udma_quiet(int pe)
{
    (void)pe;
    aclshmem_quiet();
}

/* ---- UDMA queue pairs and batches of deferred operations (newer original headers): the same
   copies and the batch rules of the RoCE forms above, without a batch-length limit (on the NPU
   the send queue's depth, which the CPU engine does not have). As in the original, the forms
   with an action take WQE_PIPE = PIPE_MTE3 only, and the queue-pair forms work in builds without
   ACLSHMEM_RELAY_SUPPORT: in a relay build they compile, and a call ends its block with a logged
   error (the original aborts the kernel). ---- */
namespace aclshmemi_dev {
#ifdef ACLSHMEM_RELAY_SUPPORT
constexpr bool udma_qp_build = false;
#else
constexpr bool udma_qp_build = true;
#endif
} // namespace aclshmemi_dev
#define ACLSHMEMI_UDMA_ACTION_PIPE                                                                            \
    static_assert(WQE_PIPE == PIPE_MTE3, "the UDMA calls with a defer/submit action take PIPE_MTE3 only")
namespace aclshmemi_dev {
inline void udma_qp_build_check(const char *call)
{
    if (!udma_qp_build) {
        throw std::runtime_error(std::string(call) +
                                 ": the queue-pair UDMA calls need a build without ACLSHMEM_RELAY_SUPPORT");
    }
}
} // namespace aclshmemi_dev
#define ACLSHMEMI_UDMA_QP_BUILD aclshmemi_dev::udma_qp_build_check(__func__)

template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>
inline void aclshmemx_udma_get_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t sync_id, aclshmemx_defer_t a)
{
    ACLSHMEMI_UDMA_ACTION_PIPE;
    ACLSHMEMI_UDMA_NO_CQE;
    (void)buf, (void)sync_id;
    aclshmem_getmem_nbi(dst, src, size_t(n) * sizeof(T), pe);
    aclshmemi_dev::deferred(a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_get_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t sync_id, aclshmemx_submit_t a)
{
    ACLSHMEMI_UDMA_ACTION_PIPE;
    aclshmemx_udma_get_nbi<T, WQE_PIPE, CONFIG>(dst, src, buf, n, pe, sync_id);
    aclshmemi_dev::submitted(a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>
inline void aclshmemx_udma_put_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t sync_id, aclshmemx_defer_t a)
{
    ACLSHMEMI_UDMA_ACTION_PIPE;
    ACLSHMEMI_UDMA_NO_CQE;
    (void)buf, (void)sync_id;
    aclshmem_putmem_nbi(dst, src, size_t(n) * sizeof(T), pe);
    aclshmemi_dev::deferred(a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_put_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t sync_id, aclshmemx_submit_t a)
{
    ACLSHMEMI_UDMA_ACTION_PIPE;
    aclshmemx_udma_put_nbi<T, WQE_PIPE, CONFIG>(dst, src, buf, n, pe, sync_id);
    aclshmemi_dev::submitted(a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>
inline void aclshmemx_udma_get_nbi(const AscendC::GlobalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                   const AscendC::LocalTensor<T> &buf, uint32_t n, int pe, uint32_t sync_id,
                                   aclshmemx_defer_t a)
{
    aclshmemx_udma_get_nbi<T, WQE_PIPE, CONFIG>(dst.GetPhyAddr(), src.GetPhyAddr(), aclshmemi_dev::ub(buf), n, pe,
                                                sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_get_nbi(const AscendC::GlobalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                   const AscendC::LocalTensor<T> &buf, uint32_t n, int pe, uint32_t sync_id,
                                   aclshmemx_submit_t a)
{
    aclshmemx_udma_get_nbi<T, WQE_PIPE, CONFIG>(dst.GetPhyAddr(), src.GetPhyAddr(), aclshmemi_dev::ub(buf), n, pe,
                                                sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>
inline void aclshmemx_udma_put_nbi(const AscendC::GlobalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                   const AscendC::LocalTensor<T> &buf, uint32_t n, int pe, uint32_t sync_id,
                                   aclshmemx_defer_t a)
{
    aclshmemx_udma_put_nbi<T, WQE_PIPE, CONFIG>(dst.GetPhyAddr(), src.GetPhyAddr(), aclshmemi_dev::ub(buf), n, pe,
                                                sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_put_nbi(const AscendC::GlobalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                   const AscendC::LocalTensor<T> &buf, uint32_t n, int pe, uint32_t sync_id,
                                   aclshmemx_submit_t a)
{
    aclshmemx_udma_put_nbi<T, WQE_PIPE, CONFIG>(dst.GetPhyAddr(), src.GetPhyAddr(), aclshmemi_dev::ub(buf), n, pe,
                                                sync_id, a);
}

/* on queue pair qp_idx of the connection to pe */
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_qp_get_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id = 0)
{
    ACLSHMEMI_UDMA_QP_BUILD;
    if (aclshmemi_dev::qp_ok(qp_idx)) {
        aclshmemx_udma_get_nbi<T, WQE_PIPE, CONFIG>(dst, src, buf, n, pe, sync_id);
    }
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_qp_put_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id = 0)
{
    ACLSHMEMI_UDMA_QP_BUILD;
    if (aclshmemi_dev::qp_ok(qp_idx)) {
        aclshmemx_udma_put_nbi<T, WQE_PIPE, CONFIG>(dst, src, buf, n, pe, sync_id);
    }
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>
inline void aclshmemx_udma_qp_get_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t qp_idx, uint32_t sync_id,
                                      aclshmemx_defer_t a)
{
    ACLSHMEMI_UDMA_ACTION_PIPE;
    ACLSHMEMI_UDMA_QP_BUILD;
    if (aclshmemi_dev::qp_ok(qp_idx)) {
        aclshmemx_udma_get_nbi<T, WQE_PIPE, CONFIG>(dst, src, buf, n, pe, sync_id, a);
    }
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_qp_get_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t qp_idx, uint32_t sync_id,
                                      aclshmemx_submit_t a)
{
    ACLSHMEMI_UDMA_ACTION_PIPE;
    ACLSHMEMI_UDMA_QP_BUILD;
    if (aclshmemi_dev::qp_ok(qp_idx)) {
        aclshmemx_udma_get_nbi<T, WQE_PIPE, CONFIG>(dst, src, buf, n, pe, sync_id, a);
    }
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>
inline void aclshmemx_udma_qp_put_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t qp_idx, uint32_t sync_id,
                                      aclshmemx_defer_t a)
{
    ACLSHMEMI_UDMA_ACTION_PIPE;
    ACLSHMEMI_UDMA_QP_BUILD;
    if (aclshmemi_dev::qp_ok(qp_idx)) {
        aclshmemx_udma_put_nbi<T, WQE_PIPE, CONFIG>(dst, src, buf, n, pe, sync_id, a);
    }
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_qp_put_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, uint32_t qp_idx, uint32_t sync_id,
                                      aclshmemx_submit_t a)
{
    ACLSHMEMI_UDMA_ACTION_PIPE;
    ACLSHMEMI_UDMA_QP_BUILD;
    if (aclshmemi_dev::qp_ok(qp_idx)) {
        aclshmemx_udma_put_nbi<T, WQE_PIPE, CONFIG>(dst, src, buf, n, pe, sync_id, a);
    }
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_qp_get_nbi(const AscendC::GlobalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                      const AscendC::LocalTensor<T> &buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id = 0)
{
    aclshmemx_udma_qp_get_nbi<T, WQE_PIPE, CONFIG>(dst.GetPhyAddr(), src.GetPhyAddr(), aclshmemi_dev::ub(buf), n, pe,
                                                   qp_idx,
                                           sync_id);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_qp_put_nbi(const AscendC::GlobalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                      const AscendC::LocalTensor<T> &buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id = 0)
{
    aclshmemx_udma_qp_put_nbi<T, WQE_PIPE, CONFIG>(dst.GetPhyAddr(), src.GetPhyAddr(), aclshmemi_dev::ub(buf), n, pe,
                                                   qp_idx,
                                           sync_id);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>
inline void aclshmemx_udma_qp_get_nbi(const AscendC::GlobalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                      const AscendC::LocalTensor<T> &buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id, aclshmemx_defer_t a)
{
    aclshmemx_udma_qp_get_nbi<T, WQE_PIPE, CONFIG>(dst.GetPhyAddr(), src.GetPhyAddr(), aclshmemi_dev::ub(buf), n, pe,
                                                   qp_idx,
                                           sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_qp_get_nbi(const AscendC::GlobalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                      const AscendC::LocalTensor<T> &buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id, aclshmemx_submit_t a)
{
    aclshmemx_udma_qp_get_nbi<T, WQE_PIPE, CONFIG>(dst.GetPhyAddr(), src.GetPhyAddr(), aclshmemi_dev::ub(buf), n, pe,
                                                   qp_idx,
                                           sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>
inline void aclshmemx_udma_qp_put_nbi(const AscendC::GlobalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                      const AscendC::LocalTensor<T> &buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id, aclshmemx_defer_t a)
{
    aclshmemx_udma_qp_put_nbi<T, WQE_PIPE, CONFIG>(dst.GetPhyAddr(), src.GetPhyAddr(), aclshmemi_dev::ub(buf), n, pe,
                                                   qp_idx,
                                           sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_qp_put_nbi(const AscendC::GlobalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                      const AscendC::LocalTensor<T> &buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id, aclshmemx_submit_t a)
{
    aclshmemx_udma_qp_put_nbi<T, WQE_PIPE, CONFIG>(dst.GetPhyAddr(), src.GetPhyAddr(), aclshmemi_dev::ub(buf), n, pe,
                                                   qp_idx,
                                           sync_id, a);
}
/* data, then the 64-bit signal word set on the target, on queue pair qp_idx */
template <typename T, const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_qp_put_signal_nbi(T *dst, T *src, uint32_t n, uint64_t *sig_addr, uint64_t signal, int pe,
                                             uint32_t qp_idx)
{
    ACLSHMEMI_UDMA_QP_BUILD;
    if (aclshmemi_dev::qp_ok(qp_idx)) {
        aclshmemx_udma_put_signal_nbi<T, CONFIG>(dst, src, n, sig_addr, signal, pe);
    }
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_qp_put_signal_nbi(T *dst, T *src, uint32_t n, uint64_t *sig_addr, uint64_t signal, int pe,
                                             uint32_t qp_idx, uint8_t *buf, uint32_t sync_id = 0)
{
    ACLSHMEMI_UDMA_PIPE;
    (void)buf, (void)sync_id;
    aclshmemx_udma_qp_put_signal_nbi<T, CONFIG>(dst, src, n, sig_addr, signal, pe, qp_idx);
}
/* completion of one queue pair: a full fence here (the copies are already complete) */
inline void aclshmemx_udma_qp_quiet(int pe, uint32_t qp_idx)
{
    (void)pe;
    ACLSHMEMI_UDMA_QP_BUILD;
    if (aclshmemi_dev::qp_ok(qp_idx)) {
        aclshmem_quiet();
    }
}
#undef ACLSHMEMI_UDMA_QP_BUILD
#ifdef ACLSHMEM_RELAY_SUPPORT
namespace aclshmemi_dev {
/* pe and relay_pe must be two different PEs of the job, neither of them this one: otherwise the call
   ends its block with a logged error (the original's debug builds abort the kernel; its other
   builds skip the call) */
inline void relay_check(int pe, int relay_pe, const char *call)
{
    int me = aclshmem_my_pe();
    int n = aclshmem_n_pes();
    if (!(pe >= 0 && pe < n && relay_pe >= 0 && relay_pe < n && pe != relay_pe && pe != me && relay_pe != me)) {
        char msg[256];
        std::snprintf(msg, sizeof msg,
                      "%s: pe %d and relay_pe %d must be two different PEs of the %d, neither of them this PE (%d)",
                      call, pe, relay_pe, n, me);
        throw std::runtime_error(msg);
    }
}
} // namespace aclshmemi_dev
/* through relay_pe on the NPU; a direct copy to pe here, after the same checks. The forms with an
   action batch as the direct ones (they count in pending_count). */
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_relay_put_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, int relay_pe,
                                         uint32_t sync_id = 0)
{
    aclshmemi_dev::relay_check(pe, relay_pe, __func__);
    aclshmemx_udma_put_nbi<T, WQE_PIPE, CONFIG>(dst, src, buf, n, pe, sync_id);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_relay_get_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, int relay_pe,
                                         uint32_t sync_id = 0)
{
    aclshmemi_dev::relay_check(pe, relay_pe, __func__);
    aclshmemx_udma_get_nbi<T, WQE_PIPE, CONFIG>(dst, src, buf, n, pe, sync_id);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_relay_put_nbi(const AscendC::GlobalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                         const AscendC::LocalTensor<T> &buf, uint32_t n, int pe, int relay_pe,
                                         uint32_t sync_id = 0)
{
    aclshmemi_dev::relay_check(pe, relay_pe, __func__);
    aclshmemx_udma_put_nbi<T, WQE_PIPE, CONFIG>(dst, src, buf, n, pe, sync_id);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_relay_get_nbi(const AscendC::GlobalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                         const AscendC::LocalTensor<T> &buf, uint32_t n, int pe, int relay_pe,
                                         uint32_t sync_id = 0)
{
    aclshmemi_dev::relay_check(pe, relay_pe, __func__);
    aclshmemx_udma_get_nbi<T, WQE_PIPE, CONFIG>(dst, src, buf, n, pe, sync_id);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>
inline void aclshmemx_udma_relay_put_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, int relay_pe, uint32_t sync_id,
                                         aclshmemx_defer_t a)
{
    aclshmemi_dev::relay_check(pe, relay_pe, __func__);
    aclshmemx_udma_put_nbi<T, WQE_PIPE, CONFIG>(dst, src, buf, n, pe, sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>
inline void aclshmemx_udma_relay_put_nbi(const AscendC::GlobalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                         const AscendC::LocalTensor<T> &buf, uint32_t n, int pe, int relay_pe,
                                         uint32_t sync_id, aclshmemx_defer_t a)
{
    aclshmemx_udma_relay_put_nbi<T, WQE_PIPE, CONFIG>(dst.GetPhyAddr(), src.GetPhyAddr(), aclshmemi_dev::ub(buf), n, pe,
                                                      relay_pe, sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_relay_put_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, int relay_pe, uint32_t sync_id,
                                         aclshmemx_submit_t a)
{
    aclshmemi_dev::relay_check(pe, relay_pe, __func__);
    aclshmemx_udma_put_nbi<T, WQE_PIPE, CONFIG>(dst, src, buf, n, pe, sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_relay_put_nbi(const AscendC::GlobalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                         const AscendC::LocalTensor<T> &buf, uint32_t n, int pe, int relay_pe,
                                         uint32_t sync_id, aclshmemx_submit_t a)
{
    aclshmemx_udma_relay_put_nbi<T, WQE_PIPE, CONFIG>(dst.GetPhyAddr(), src.GetPhyAddr(), aclshmemi_dev::ub(buf), n, pe,
                                                      relay_pe, sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>
inline void aclshmemx_udma_relay_get_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, int relay_pe, uint32_t sync_id,
                                         aclshmemx_defer_t a)
{
    aclshmemi_dev::relay_check(pe, relay_pe, __func__);
    aclshmemx_udma_get_nbi<T, WQE_PIPE, CONFIG>(dst, src, buf, n, pe, sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>
inline void aclshmemx_udma_relay_get_nbi(const AscendC::GlobalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                         const AscendC::LocalTensor<T> &buf, uint32_t n, int pe, int relay_pe,
                                         uint32_t sync_id, aclshmemx_defer_t a)
{
    aclshmemx_udma_relay_get_nbi<T, WQE_PIPE, CONFIG>(dst.GetPhyAddr(), src.GetPhyAddr(), aclshmemi_dev::ub(buf), n, pe,
                                                      relay_pe, sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_relay_get_nbi(T *dst, T *src, T *buf, uint32_t n, int pe, int relay_pe, uint32_t sync_id,
                                         aclshmemx_submit_t a)
{
    aclshmemi_dev::relay_check(pe, relay_pe, __func__);
    aclshmemx_udma_get_nbi<T, WQE_PIPE, CONFIG>(dst, src, buf, n, pe, sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_relay_get_nbi(const AscendC::GlobalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                         const AscendC::LocalTensor<T> &buf, uint32_t n, int pe, int relay_pe,
                                         uint32_t sync_id, aclshmemx_submit_t a)
{
    aclshmemx_udma_relay_get_nbi<T, WQE_PIPE, CONFIG>(dst.GetPhyAddr(), src.GetPhyAddr(), aclshmemi_dev::ub(buf), n, pe,
                                                      relay_pe, sync_id, a);
}
#endif

/* ---- __ubuf__ operands when UB pointers are an address space (clang++ on x86-64) ----
   A __ubuf__ T * does not convert to T * in C++: each call that takes a UB operand gets an
   overload that passes the same value (the UB byte offset) to the form above, which translates
   it to the calling block's UB. With g++ (__ubuf__ empty) the forms above take UB operands as is. */
#if ACLSHMEM_UB_DEREF
namespace aclshmemi_dev {
template <typename T>
inline T *plain(__ubuf__ T *p)
{
    return reinterpret_cast<T *>(reinterpret_cast<uintptr_t>(p));
}
} // namespace aclshmemi_dev
#define ACLSHMEMI_DEV_UB_FORMS(NAME, T)                                                                       \
    inline void aclshmem_##NAME##_put_nbi(T *dst, __ubuf__ T *src, size_t n, int pe)                          \
    {                                                                                                         \
        aclshmem_##NAME##_put_nbi(dst, aclshmemi_dev::plain(src), n, pe);                                     \
    }                                                                                                         \
    inline void aclshmem_##NAME##_get_nbi(__ubuf__ T *dst, T *src, size_t n, int pe)                          \
    {                                                                                                         \
        aclshmem_##NAME##_get_nbi(aclshmemi_dev::plain(dst), src, n, pe);                                     \
    }                                                                                                         \
    inline void aclshmem_##NAME##_put_nbi(T *dst, __ubuf__ T *src, const non_contiguous_copy_param &p, int pe) \
    {                                                                                                         \
        aclshmem_##NAME##_put_nbi(dst, aclshmemi_dev::plain(src), p, pe);                                     \
    }                                                                                                         \
    inline void aclshmem_##NAME##_get_nbi(__ubuf__ T *dst, T *src, const non_contiguous_copy_param &p, int pe) \
    {                                                                                                         \
        aclshmem_##NAME##_get_nbi(aclshmemi_dev::plain(dst), src, p, pe);                                     \
    }
ACLSHMEMI_DEV_T13(ACLSHMEMI_DEV_UB_FORMS)
#undef ACLSHMEMI_DEV_UB_FORMS

/* MTE: GM <-> GM with a staging buffer, and UB <-> GM */
template <typename T>
inline void aclshmemx_mte_put_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t ub_size, uint32_t n, int pe,
                                  uint32_t sync_id)
{
    aclshmemx_mte_put_nbi(dst, src, aclshmemi_dev::plain(buf), ub_size, n, pe, sync_id);
}
inline void aclshmemx_mte_put_nbi(int8_t *dst, int8_t *src, __ubuf__ int8_t *buf, uint32_t ub_size, uint32_t n,
                                  int pe, uint32_t sync_id, bool enable_L2)
{
    aclshmemx_mte_put_nbi(dst, src, aclshmemi_dev::plain(buf), ub_size, n, pe, sync_id, enable_L2);
}
inline void aclshmemx_mte_get_nbi(int8_t *dst, int8_t *src, __ubuf__ int8_t *buf, uint32_t ub_size, uint32_t n,
                                  int pe, uint32_t sync_id, bool enable_L2)
{
    aclshmemx_mte_get_nbi(dst, src, aclshmemi_dev::plain(buf), ub_size, n, pe, sync_id, enable_L2);
}
template <typename T>
inline void aclshmemx_mte_get_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t ub_size, uint32_t n, int pe,
                                  uint32_t sync_id)
{
    aclshmemx_mte_get_nbi(dst, src, aclshmemi_dev::plain(buf), ub_size, n, pe, sync_id);
}
template <typename T>
inline void aclshmemx_mte_put_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t ub_size, const non_contiguous_copy_param &p,
                                  int pe, uint32_t sync_id)
{
    aclshmemx_mte_put_nbi(dst, src, aclshmemi_dev::plain(buf), ub_size, p, pe, sync_id);
}
template <typename T>
inline void aclshmemx_mte_get_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t ub_size, const non_contiguous_copy_param &p,
                                  int pe, uint32_t sync_id)
{
    aclshmemx_mte_get_nbi(dst, src, aclshmemi_dev::plain(buf), ub_size, p, pe, sync_id);
}
template <typename T>
inline void aclshmemx_mte_put_nbi(T *dst, __ubuf__ T *src, uint32_t n, int pe, uint32_t sync_id)
{
    aclshmemx_mte_put_nbi(dst, aclshmemi_dev::plain(src), n, pe, sync_id);
}
template <typename T>
inline void aclshmemx_mte_get_nbi(__ubuf__ T *dst, T *src, uint32_t n, int pe, uint32_t sync_id)
{
    aclshmemx_mte_get_nbi(aclshmemi_dev::plain(dst), src, n, pe, sync_id);
}
template <typename T>
inline void aclshmemx_mte_put_nbi(T *dst, __ubuf__ T *src, const non_contiguous_copy_param &p, int pe, uint32_t sync_id)
{
    aclshmemx_mte_put_nbi(dst, aclshmemi_dev::plain(src), p, pe, sync_id);
}
template <typename T>
inline void aclshmemx_mte_get_nbi(__ubuf__ T *dst, T *src, const non_contiguous_copy_param &p, int pe, uint32_t sync_id)
{
    aclshmemx_mte_get_nbi(aclshmemi_dev::plain(dst), src, p, pe, sync_id);
}

/* SDMA, CMO */
template <typename T>
inline void aclshmemx_sdma_put_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t ub_size, uint32_t n, int pe,
                                   uint32_t sync_id)
{
    aclshmemx_sdma_put_nbi(dst, src, aclshmemi_dev::plain(buf), ub_size, n, pe, sync_id);
}
template <typename T>
inline void aclshmemx_sdma_get_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t ub_size, uint32_t n, int pe,
                                   uint32_t sync_id)
{
    aclshmemx_sdma_get_nbi(dst, src, aclshmemi_dev::plain(buf), ub_size, n, pe, sync_id);
}
template <typename T>
inline void aclshmemx_sdma_quiet(__ubuf__ T *buf, uint32_t ub_size, uint32_t sync_id)
{
    aclshmemx_sdma_quiet(aclshmemi_dev::plain(buf), ub_size, sync_id);
}
template <typename T>
inline void aclshmemx_sdma_notify_record(__ubuf__ T *buf, uint32_t ub_size, uint32_t sync_id)
{
    aclshmemx_sdma_notify_record(aclshmemi_dev::plain(buf), ub_size, sync_id);
}
template <typename T>
inline void aclshmemx_cmo_nbi(T *src, uint32_t n, ACLSHMEMCMOTYPE type, __ubuf__ T *buf, uint32_t ub_size,
                              uint32_t sync_id)
{
    aclshmemx_cmo_nbi(src, n, type, aclshmemi_dev::plain(buf), ub_size, sync_id);
}
template <typename T>
inline void aclshmemi_sdma_quiet(__ubuf__ T *buf, uint32_t ub_size, uint32_t sync_id)
{
    aclshmemx_sdma_quiet(aclshmemi_dev::plain(buf), ub_size, sync_id);
}
template <typename T>
inline void aclshmemx_sdma_qp_put_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t ub_size, uint32_t n, int pe,
                                      uint32_t qp_idx, uint32_t sync_id)
{
    aclshmemx_sdma_qp_put_nbi(dst, src, aclshmemi_dev::plain(buf), ub_size, n, pe, qp_idx, sync_id);
}
template <typename T>
inline void aclshmemx_sdma_qp_get_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t ub_size, uint32_t n, int pe,
                                      uint32_t qp_idx, uint32_t sync_id)
{
    aclshmemx_sdma_qp_get_nbi(dst, src, aclshmemi_dev::plain(buf), ub_size, n, pe, qp_idx, sync_id);
}
template <typename T>
inline void aclshmemx_sdma_qp_quiet(__ubuf__ T *buf, uint32_t ub_size, uint32_t qp_idx, uint32_t sync_id)
{
    aclshmemx_sdma_qp_quiet(aclshmemi_dev::plain(buf), ub_size, qp_idx, sync_id);
}
template <typename T>
inline void aclshmemx_sdma_qp_notify_record(__ubuf__ T *buf, uint32_t ub_size, uint32_t qp_idx, uint32_t sync_id)
{
    aclshmemx_sdma_qp_notify_record(aclshmemi_dev::plain(buf), ub_size, qp_idx, sync_id);
}
template <typename T>
inline void aclshmemx_cmo_qp_nbi(T *src, uint32_t n, ACLSHMEMCMOTYPE type, __ubuf__ T *buf, uint32_t ub_size,
                                 uint32_t qp_idx, uint32_t sync_id)
{
    aclshmemx_cmo_qp_nbi(src, n, type, aclshmemi_dev::plain(buf), ub_size, qp_idx, sync_id);
}

/* RoCE */
template <typename T>
inline void aclshmemx_roce_put_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t sync_id = 0)
{
    aclshmemx_roce_put_nbi(dst, src, aclshmemi_dev::plain(buf), n, pe, sync_id);
}
template <typename T>
inline void aclshmemx_roce_get_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t sync_id = 0)
{
    aclshmemx_roce_get_nbi(dst, src, aclshmemi_dev::plain(buf), n, pe, sync_id);
}
template <typename T>
inline void aclshmemx_roce_quiet(uint32_t pe, __ubuf__ T *buf, uint32_t sync_id)
{
    aclshmemx_roce_quiet(pe, aclshmemi_dev::plain(buf), sync_id);
}
template <typename T>
inline int aclshmemx_roce_team_sync(aclshmemx_team_t *team, __ubuf__ T *buf, uint32_t sync_id)
{
    return aclshmemx_roce_team_sync(team, aclshmemi_dev::plain(buf), sync_id);
}
template <typename T>
inline int aclshmemx_roce_barrier(aclshmemx_team_t *team, __ubuf__ T *buf, uint32_t sync_id)
{
    return aclshmemx_roce_barrier(team, aclshmemi_dev::plain(buf), sync_id);
}
template <typename T>
inline void aclshmemx_roce_sync_all(__ubuf__ T *buf, uint32_t sync_id)
{
    aclshmemx_roce_sync_all(aclshmemi_dev::plain(buf), sync_id);
}
template <typename T>
inline void aclshmemx_roce_barrier_all(__ubuf__ T *buf, uint32_t sync_id)
{
    aclshmemx_roce_barrier_all(aclshmemi_dev::plain(buf), sync_id);
}
template <typename T>
inline void aclshmemx_roce_put_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t sync_id,
                                   aclshmemx_defer_t a)
{
    aclshmemx_roce_put_nbi(dst, src, aclshmemi_dev::plain(buf), n, pe, sync_id, a);
}
template <typename T>
inline void aclshmemx_roce_put_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t sync_id,
                                   aclshmemx_submit_t a)
{
    aclshmemx_roce_put_nbi(dst, src, aclshmemi_dev::plain(buf), n, pe, sync_id, a);
}
template <typename T>
inline void aclshmemx_roce_get_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t sync_id,
                                   aclshmemx_defer_t a)
{
    aclshmemx_roce_get_nbi(dst, src, aclshmemi_dev::plain(buf), n, pe, sync_id, a);
}
template <typename T>
inline void aclshmemx_roce_get_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t sync_id,
                                   aclshmemx_submit_t a)
{
    aclshmemx_roce_get_nbi(dst, src, aclshmemi_dev::plain(buf), n, pe, sync_id, a);
}
template <typename T>
inline void aclshmemx_roce_qp_put_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id)
{
    aclshmemx_roce_qp_put_nbi(dst, src, aclshmemi_dev::plain(buf), n, pe, qp_idx, sync_id);
}
template <typename T>
inline void aclshmemx_roce_qp_get_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id)
{
    aclshmemx_roce_qp_get_nbi(dst, src, aclshmemi_dev::plain(buf), n, pe, qp_idx, sync_id);
}
template <typename T>
inline void aclshmemx_roce_qp_put_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id, aclshmemx_defer_t a)
{
    aclshmemx_roce_qp_put_nbi(dst, src, aclshmemi_dev::plain(buf), n, pe, qp_idx, sync_id, a);
}
template <typename T>
inline void aclshmemx_roce_qp_put_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id, aclshmemx_submit_t a)
{
    aclshmemx_roce_qp_put_nbi(dst, src, aclshmemi_dev::plain(buf), n, pe, qp_idx, sync_id, a);
}
template <typename T>
inline void aclshmemx_roce_qp_get_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id, aclshmemx_defer_t a)
{
    aclshmemx_roce_qp_get_nbi(dst, src, aclshmemi_dev::plain(buf), n, pe, qp_idx, sync_id, a);
}
template <typename T>
inline void aclshmemx_roce_qp_get_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id, aclshmemx_submit_t a)
{
    aclshmemx_roce_qp_get_nbi(dst, src, aclshmemi_dev::plain(buf), n, pe, qp_idx, sync_id, a);
}
template <typename T>
inline void aclshmemx_roce_qp_quiet(uint32_t pe, uint32_t qp_idx, __ubuf__ T *buf, uint32_t sync_id)
{
    aclshmemx_roce_qp_quiet(pe, qp_idx, aclshmemi_dev::plain(buf), sync_id);
}

/* UDMA */
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_put_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t sync_id = 0)
{
    aclshmemx_udma_put_nbi<T, WQE_PIPE, CONFIG>(dst, src, aclshmemi_dev::plain(buf), n, pe, sync_id);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_get_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t sync_id = 0)
{
    aclshmemx_udma_get_nbi<T, WQE_PIPE, CONFIG>(dst, src, aclshmemi_dev::plain(buf), n, pe, sync_id);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_put_signal_nbi(T *dst, T *src, uint32_t n, uint64_t *sig_addr, uint64_t signal, int pe,
                                          __ubuf__ uint8_t *buf, uint32_t sync_id = 0)
{
    aclshmemx_udma_put_signal_nbi<T, WQE_PIPE, CONFIG>(dst, src, n, sig_addr, signal, pe, aclshmemi_dev::plain(buf),
                                                       sync_id);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>
inline void aclshmemx_udma_put_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t sync_id,
                                   aclshmemx_defer_t a)
{
    aclshmemx_udma_put_nbi<T, WQE_PIPE, CONFIG>(dst, src, aclshmemi_dev::plain(buf), n, pe, sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_put_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t sync_id,
                                   aclshmemx_submit_t a)
{
    aclshmemx_udma_put_nbi<T, WQE_PIPE, CONFIG>(dst, src, aclshmemi_dev::plain(buf), n, pe, sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>
inline void aclshmemx_udma_get_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t sync_id,
                                   aclshmemx_defer_t a)
{
    aclshmemx_udma_get_nbi<T, WQE_PIPE, CONFIG>(dst, src, aclshmemi_dev::plain(buf), n, pe, sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_get_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t sync_id,
                                   aclshmemx_submit_t a)
{
    aclshmemx_udma_get_nbi<T, WQE_PIPE, CONFIG>(dst, src, aclshmemi_dev::plain(buf), n, pe, sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_qp_put_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id = 0)
{
    aclshmemx_udma_qp_put_nbi<T, WQE_PIPE, CONFIG>(dst, src, aclshmemi_dev::plain(buf), n, pe, qp_idx, sync_id);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_qp_get_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id = 0)
{
    aclshmemx_udma_qp_get_nbi<T, WQE_PIPE, CONFIG>(dst, src, aclshmemi_dev::plain(buf), n, pe, qp_idx, sync_id);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>
inline void aclshmemx_udma_qp_put_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id, aclshmemx_defer_t a)
{
    aclshmemx_udma_qp_put_nbi<T, WQE_PIPE, CONFIG>(dst, src, aclshmemi_dev::plain(buf), n, pe, qp_idx, sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_qp_put_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id, aclshmemx_submit_t a)
{
    aclshmemx_udma_qp_put_nbi<T, WQE_PIPE, CONFIG>(dst, src, aclshmemi_dev::plain(buf), n, pe, qp_idx, sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>
inline void aclshmemx_udma_qp_get_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id, aclshmemx_defer_t a)
{
    aclshmemx_udma_qp_get_nbi<T, WQE_PIPE, CONFIG>(dst, src, aclshmemi_dev::plain(buf), n, pe, qp_idx, sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_qp_get_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, uint32_t qp_idx,
                                      uint32_t sync_id, aclshmemx_submit_t a)
{
    aclshmemx_udma_qp_get_nbi<T, WQE_PIPE, CONFIG>(dst, src, aclshmemi_dev::plain(buf), n, pe, qp_idx, sync_id, a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_qp_put_signal_nbi(T *dst, T *src, uint32_t n, uint64_t *sig_addr, uint64_t signal, int pe,
                                             uint32_t qp_idx, __ubuf__ uint8_t *buf, uint32_t sync_id = 0)
{
    aclshmemx_udma_qp_put_signal_nbi<T, WQE_PIPE, CONFIG>(dst, src, n, sig_addr, signal, pe, qp_idx,
                                                          aclshmemi_dev::plain(buf), sync_id);
}
#ifdef ACLSHMEM_RELAY_SUPPORT
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_relay_put_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, int relay_pe,
                                         uint32_t sync_id = 0)
{
    aclshmemx_udma_relay_put_nbi<T, WQE_PIPE, CONFIG>(dst, src, aclshmemi_dev::plain(buf), n, pe, relay_pe, sync_id);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_relay_get_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, int relay_pe,
                                         uint32_t sync_id = 0)
{
    aclshmemx_udma_relay_get_nbi<T, WQE_PIPE, CONFIG>(dst, src, aclshmemi_dev::plain(buf), n, pe, relay_pe, sync_id);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>
inline void aclshmemx_udma_relay_put_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, int relay_pe,
                                         uint32_t sync_id, aclshmemx_defer_t a)
{
    aclshmemx_udma_relay_put_nbi<T, WQE_PIPE, CONFIG>(dst, src, aclshmemi_dev::plain(buf), n, pe, relay_pe, sync_id,
                                                      a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_relay_put_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, int relay_pe,
                                         uint32_t sync_id, aclshmemx_submit_t a)
{
    aclshmemx_udma_relay_put_nbi<T, WQE_PIPE, CONFIG>(dst, src, aclshmemi_dev::plain(buf), n, pe, relay_pe, sync_id,
                                                      a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_NO_CQE>
inline void aclshmemx_udma_relay_get_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, int relay_pe,
                                         uint32_t sync_id, aclshmemx_defer_t a)
{
    aclshmemx_udma_relay_get_nbi<T, WQE_PIPE, CONFIG>(dst, src, aclshmemi_dev::plain(buf), n, pe, relay_pe, sync_id,
                                                      a);
}
template <typename T, pipe_t WQE_PIPE = PIPE_MTE3,
          const aclshmemx_udma_op_config_t &CONFIG = ACLSHMEMX_UDMA_OP_CONFIG_DEFAULT>
inline void aclshmemx_udma_relay_get_nbi(T *dst, T *src, __ubuf__ T *buf, uint32_t n, int pe, int relay_pe,
                                         uint32_t sync_id, aclshmemx_submit_t a)
{
    aclshmemx_udma_relay_get_nbi<T, WQE_PIPE, CONFIG>(dst, src, aclshmemi_dev::plain(buf), n, pe, relay_pe, sync_id,
                                                      a);
}
#endif
#endif /* ACLSHMEM_UB_DEREF */
#undef ACLSHMEMI_UDMA_PIPE
#undef ACLSHMEMI_UDMA_ACTION_PIPE
#undef ACLSHMEMI_UDMA_WITH_CQE
#undef ACLSHMEMI_UDMA_NO_CQE
#undef ACLSHMEMI_UDMA_CONFIG_OK

/* ---- internal helpers the upstream examples call (spec 1.8.1) ---- */
inline aclshmem_device_host_state_t *aclshmemi_get_state()
{
    return aclshmemx_dev_state();
}
/* this PE, the PE count and the device heap's size as the record holds them (the UDMA relay
   checks of the original read them so); -1, 0 and 0 when no instance is initialised */
inline int aclshmemi_get_my_pe()
{
    aclshmem_device_host_state_t *s = aclshmemx_dev_state();
    return s != nullptr ? s->mype : -1;
}
inline int aclshmemi_get_total_pe()
{
    aclshmem_device_host_state_t *s = aclshmemx_dev_state();
    return s != nullptr ? s->npes : 0;
}
inline uint64_t aclshmemi_get_heap_size()
{
    aclshmem_device_host_state_t *s = aclshmemx_dev_state();
    return s != nullptr ? uint64_t(s->heap_size) : 0;
}
template <typename T>
inline T aclshmemi_load(T *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
template <typename T>
inline void aclshmemi_store(T *p, T v)
{
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
/* the internal signal helpers of the original's device p2p-sync header: a signal word set locally
   (release store), or set / added / updated on PE pe (as aclshmemx_signal_op) */
inline void aclshmemi_signal_set(int32_t *addr, int32_t val)
{
    __atomic_store_n(addr, val, __ATOMIC_RELEASE);
}
inline void aclshmemi_signal_set(int32_t *addr, int pe, int32_t val)
{
    aclshmemx_dev_signal_op(addr, val, ACLSHMEM_SIGNAL_SET, pe);
}
inline void aclshmemi_signal_add(int32_t *addr, int pe, int32_t val)
{
    aclshmemx_dev_signal_op(addr, val, ACLSHMEM_SIGNAL_ADD, pe);
}
inline void aclshmemi_signal_op(int32_t *sig_addr, int32_t signal, int sig_op, int pe)
{
    aclshmemx_dev_signal_op(sig_addr, signal, sig_op, pe);
}
/* the relay variant of the vector-core barrier of every PE (newer original releases): the same
   barrier on the CPU (AIV contexts only) */
inline void aclshmemx_barrier_all_vec_relay(void)
{
    (void)aclshmemx_dev_barrier_vec(0, 1);
}
/* and the relay forms of the vector-core syncs (a branch of the original) */
inline void aclshmemx_sync_vec_relay(aclshmem_team_t team)
{
    (void)aclshmemx_dev_barrier_vec(team, 0);
}
inline void aclshmemx_sync_all_vec_relay(void)
{
    (void)aclshmemx_dev_barrier_vec(0, 1);
}
/* cache maintenance: a compiler barrier and a full fence, so polling loops re-read memory */
inline void dcci_cacheline(uint8_t *)
{
    __asm__ __volatile__("" ::: "memory");
    std::atomic_thread_fence(std::memory_order_seq_cst);
}
inline void dcci_cachelines(uint8_t *, uint64_t)
{
    __asm__ __volatile__("" ::: "memory");
    std::atomic_thread_fence(std::memory_order_seq_cst);
}
inline void dcci_entire_cache()
{
    __asm__ __volatile__("" ::: "memory");
    std::atomic_thread_fence(std::memory_order_seq_cst);
}
/* the AIV contexts of the launch; an AIC returns at once (aclshmemi_sync_core_soft: the name of
   newer original releases) */
inline void aclshmemi_barrier_core_soft()
{
    AscendC::SyncAll();
}
inline void aclshmemi_sync_core_soft()
{
    AscendC::SyncAll();
}
/* every context of the launch (the AICs too) unless IS_AIV_ONLY, as SyncAll<IS_AIV_ONLY> */
template <bool IS_AIV_ONLY = true>
inline void aclshmemi_sync_core()
{
    AscendC::SyncAll<IS_AIV_ONLY>();
}
/* the original's internal team barrier / sync (gm2gm/shmemi_device_cc.h), which its unit tests'
   kernels call: over the AIV contexts of every member's launch, or with the AICs too */
template <bool is_aiv_only = true>
inline void aclshmemi_barrier(aclshmem_team_t team)
{
    if (is_aiv_only) {
        aclshmemx_sync_vec(team);
    } else {
        aclshmem_barrier(team);
    }
}
template <bool is_aiv_only = true>
inline void aclshmemi_sync(aclshmem_team_t team)
{
    aclshmemi_barrier<is_aiv_only>(team);
}
/* the versions of that team sync in newer releases (push-mode and dissemination variants on the
   NPU): on the CPU all of them are the same sync */
#define ACLSHMEMI_DEV_SYNC_VERSION(V)                                                                         \
    template <bool IS_AIV_ONLY = true>                                                                        \
    inline void aclshmemi_sync_npu_##V(aclshmem_team_t team)                                                  \
    {                                                                                                         \
        aclshmemi_sync<IS_AIV_ONLY>(team);                                                                    \
    }
ACLSHMEMI_DEV_SYNC_VERSION(v1)
ACLSHMEMI_DEV_SYNC_VERSION(v2)
ACLSHMEMI_DEV_SYNC_VERSION(v3)
ACLSHMEMI_DEV_SYNC_VERSION(v4)
#undef ACLSHMEMI_DEV_SYNC_VERSION
template <typename T>
inline void aclshmemi_set_value(uint8_t *addr, T x, AscendC::LocalTensor<T> &, uint32_t)
{
    std::atomic_thread_fence(std::memory_order_release);
    std::memcpy(addr, &x, sizeof(T));
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

/* cycle profiling (spec 2.17): when the host profiles this PE (SHMEM_CYCLE_PROF_PE), START subtracts
   and END adds GetSystemCycle() to profs->block_prof[GetBlockIdx()].cycles[pf_id] (END also counts
   in ccount[pf_id]); aclshmemx_get_prof reads the table. Frames >= ACLSHMEM_CYCLE_PROF_FRAME_CNT
   and blocks >= ACLSHMEM_CYCLE_PROF_MAX_BLOCK are not recorded. */
namespace aclshmemi_dev {
inline void prof_mark(int64_t pf_id, bool end)
{
    std::atomic_thread_fence(std::memory_order_seq_cst); /* the full pipe barrier */
    /* the interval excludes the state lookup: END reads the clock first, START last */
    int64_t end_cycle = end ? AscendC::GetSystemCycle() : 0;
    aclshmem_prof_pe_t *p = aclshmemi_get_state()->profs;
    int64_t b = AscendC::GetBlockIdx();
    if (p == nullptr || pf_id < 0 || pf_id >= ACLSHMEM_CYCLE_PROF_FRAME_CNT || b < 0 ||
        b >= ACLSHMEM_CYCLE_PROF_MAX_BLOCK || p->pe_id != aclshmem_my_pe()) {
        return;
    }
    int64_t now = end ? end_cycle : AscendC::GetSystemCycle();
    __atomic_fetch_add(&p->block_prof[b].cycles[pf_id], end ? now : -now, __ATOMIC_RELAXED);
    if (end) {
        __atomic_fetch_add(&p->block_prof[b].ccount[pf_id], 1, __ATOMIC_RELAXED);
    }
}
} // namespace aclshmemi_dev
#define SHMEMI_PROF_START(pf_id) ::aclshmemi_dev::prof_mark(static_cast<int64_t>(pf_id), false)
#define SHMEMI_PROF_END(pf_id) ::aclshmemi_dev::prof_mark(static_cast<int64_t>(pf_id), true)

/* ---- device-only aliases (spec 1.7) ---- */
#define shmem_barrier aclshmem_barrier
#define shmem_barrier_all aclshmem_barrier_all
#define shmem_fence aclshmem_fence
#define shmem_quiet aclshmem_quiet
#define shmem_signal_wait_until aclshmem_signal_wait_until
#define shmemx_signal_op aclshmemx_signal_op
/* the short names of the RoCE engine header (device/gm2gm/engine/shmem_device_rdma.h) */
#define shmem_roce_put_mem_nbi aclshmemx_roce_put_nbi
#define shmem_roce_get_mem_nbi aclshmemx_roce_get_nbi
#define shmemx_set_ffts_config util_set_ffts_config
#define shmemx_barrier_vec aclshmemx_barrier_vec
#define shmemx_barrier_all_vec aclshmemx_barrier_all_vec
#define shmem_team_pe_mapping aclshmem_team_pe_mapping
#define shmem_roce_ptr aclshmem_roce_ptr
#define shmem_mte_get_mem_nbi aclshmemx_mte_get_nbi
#define shmem_mte_put_mem_nbi aclshmemx_mte_put_nbi
#define shmem_int8_atomic_add aclshmem_int8_atomic_add
#define shmem_int16_atomic_add aclshmem_int16_atomic_add
#define shmem_int32_atomic_add aclshmem_int32_atomic_add
#define shmem_half_atomic_add aclshmem_half_atomic_add
#define shmem_bfloat16_atomic_add aclshmem_bfloat16_atomic_add
#define shmem_float_atomic_add aclshmem_float_atomic_add
#define shmem_half_p aclshmem_half_p
#define shmem_half_g aclshmem_half_g
#define shmem_bfloat16_p aclshmem_bfloat16_p
#define shmem_bfloat16_g aclshmem_bfloat16_g
#define shmem_put_half_mem aclshmem_half_put
#define shmem_get_half_mem aclshmem_half_get
#define shmem_put_bfloat16_mem aclshmem_bfloat16_put
#define shmem_get_bfloat16_mem aclshmem_bfloat16_get
#define shmem_put_half_mem_nbi aclshmem_half_put_nbi
#define shmem_get_half_mem_nbi aclshmem_half_get_nbi
#define shmem_put_bfloat16_mem_nbi aclshmem_bfloat16_put_nbi
#define shmem_get_bfloat16_mem_nbi aclshmem_bfloat16_get_nbi
#define shmem_put_half_mem_signal aclshmem_half_put_signal
#define shmem_put_bfloat16_mem_signal aclshmem_bfloat16_put_signal
#define shmem_put_half_mem_signal_nbi aclshmem_half_put_signal_nbi
#define shmem_put_bfloat16_mem_signal_nbi aclshmem_bfloat16_put_signal_nbi

/* SIMT (spec device-api section 3): the simt:: API and the SIMT runtime, with -DUSE_SIMT */
#ifdef USE_SIMT
#include "../device_simt/shmem_device_simt.h"
#endif

/* ==== names of earlier releases ====
   Kernels written against the aclshmem_* headers of an earlier release of the original use other
   names for operations this header has. Everything below only forwards to the current name; the
   typed host families (aclshmem_put_<T>_mem ...) are macros in shmem.h, which this header
   includes. tests/c/compat_names.cpp uses every name. */

/* the half/bfloat16 typed families (device-only types): same overloads as the current names */
#define aclshmem_put_half_mem aclshmem_half_put
#define aclshmem_get_half_mem aclshmem_half_get
#define aclshmem_put_half_mem_nbi aclshmem_half_put_nbi
#define aclshmem_get_half_mem_nbi aclshmem_half_get_nbi
#define aclshmem_put_half_mem_signal aclshmem_half_put_signal
#define aclshmem_put_half_mem_signal_nbi aclshmem_half_put_signal_nbi
#define aclshmem_put_bfloat16_mem aclshmem_bfloat16_put
#define aclshmem_get_bfloat16_mem aclshmem_bfloat16_get
#define aclshmem_put_bfloat16_mem_nbi aclshmem_bfloat16_put_nbi
#define aclshmem_get_bfloat16_mem_nbi aclshmem_bfloat16_get_nbi
#define aclshmem_put_bfloat16_mem_signal aclshmem_bfloat16_put_signal
#define aclshmem_put_bfloat16_mem_signal_nbi aclshmem_bfloat16_put_signal_nbi

/* generator macros of the old device headers: the atomic-add types (the third argument names the
   hardware atomic type and is passed through as a token) and the types of the device test forms */
#define ACLSHMEM_TYPE_FUNC_ATOMIC_INT(FUNC) \
    FUNC(int8, int8_t, ATOMIC_S8);          \
    FUNC(int16, int16_t, ATOMIC_S16);       \
    FUNC(int32, int32_t, ATOMIC_S32)
#define ACLSHMEM_TYPE_FUNC_ATOMIC_FLOAT(FUNC) \
    FUNC(half, half, ATOMIC_F16);             \
    FUNC(float, float, ATOMIC_F32)
#define ACLSHMEM_TEST_TYPE_FUNC(FUNC) \
    FUNC(float, float);               \
    FUNC(int8, int8_t);               \
    FUNC(int16, int16_t);             \
    FUNC(int32, int32_t);             \
    FUNC(int64, int64_t);             \
    FUNC(uint8, uint8_t);             \
    FUNC(uint16, uint16_t);           \
    FUNC(uint32, uint32_t);           \
    FUNC(uint64, uint64_t);           \
    FUNC(char, char);

/* Engine calls. The old MTE forms end in an AscendC::TEventID where the current ones take a
   uint32_t sync_id (same position, same role); the old RoCE forms are the current ones. Each old
   name forwards its whole argument list to the current name, so it has exactly the current
   overloads (GM<->GM with a staging buffer or tensor, UB<->GM, non-contiguous, __ubuf__ forms). */
#define ACLSHMEMI_DEV_OLD_NAME(OLD, NEW)                                                                      \
    template <typename... A>                                                                                  \
    inline auto OLD(A &&...a)->decltype(NEW(static_cast<A &&>(a)...))                                         \
    {                                                                                                         \
        return NEW(static_cast<A &&>(a)...);                                                                  \
    }
ACLSHMEMI_DEV_OLD_NAME(aclshmem_mte_put_mem_nbi, aclshmemx_mte_put_nbi)
ACLSHMEMI_DEV_OLD_NAME(aclshmem_mte_get_mem_nbi, aclshmemx_mte_get_nbi)
ACLSHMEMI_DEV_OLD_NAME(aclshmemx_mte_put_mem_nbi, aclshmemx_mte_put_nbi)
ACLSHMEMI_DEV_OLD_NAME(aclshmemx_mte_get_mem_nbi, aclshmemx_mte_get_nbi)
ACLSHMEMI_DEV_OLD_NAME(aclshmem_roce_put_mem_nbi, aclshmemx_roce_put_nbi)
ACLSHMEMI_DEV_OLD_NAME(aclshmem_roce_get_mem_nbi, aclshmemx_roce_get_nbi)
ACLSHMEMI_DEV_OLD_NAME(aclshmemx_roce_put_mem_nbi, aclshmemx_roce_put_nbi)
ACLSHMEMI_DEV_OLD_NAME(aclshmemx_roce_get_mem_nbi, aclshmemx_roce_get_nbi)
#undef ACLSHMEMI_DEV_OLD_NAME

/* the int8_t byte copies with an L2 hint and an explicit staging buffer (the hint has no effect on
   the CPU, as in aclshmemx_mte_put_nbi(int8_t *, int8_t *, uint32_t, int32_t, bool)) */
inline void aclshmemx_mte_put_mem_nbi(int8_t *dst, int8_t *src, int8_t *buf, uint32_t ub_size, uint32_t n, int pe,
                                      AscendC::TEventID event_id, bool enable_L2)
{
    (void)enable_L2;
    aclshmemx_mte_put_nbi(dst, src, buf, ub_size, n, pe, static_cast<uint32_t>(event_id));
}
inline void aclshmemx_mte_get_mem_nbi(int8_t *dst, int8_t *src, int8_t *buf, uint32_t ub_size, uint32_t n, int pe,
                                      AscendC::TEventID event_id, bool enable_L2)
{
    (void)enable_L2;
    aclshmemx_mte_get_nbi(dst, src, buf, ub_size, n, pe, static_cast<uint32_t>(event_id));
}
#if ACLSHMEM_UB_DEREF
inline void aclshmemx_mte_put_mem_nbi(int8_t *dst, int8_t *src, __ubuf__ int8_t *buf, uint32_t ub_size, uint32_t n,
                                      int pe, AscendC::TEventID event_id, bool enable_L2)
{
    aclshmemx_mte_put_mem_nbi(dst, src, aclshmemi_dev::plain(buf), ub_size, n, pe, event_id, enable_L2);
}
inline void aclshmemx_mte_get_mem_nbi(int8_t *dst, int8_t *src, __ubuf__ int8_t *buf, uint32_t ub_size, uint32_t n,
                                      int pe, AscendC::TEventID event_id, bool enable_L2)
{
    aclshmemx_mte_get_mem_nbi(dst, src, aclshmemi_dev::plain(buf), ub_size, n, pe, event_id, enable_L2);
}
#endif
/* ==== end of the names of earlier releases ==== */

#endif /* ACLSHMEM_DEVICE_SHMEM_DEVICE_H */
