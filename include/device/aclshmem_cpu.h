/*
 * device/aclshmem_cpu.h - CPU device mode of libaclshmem: the kernel qualifiers, the 2-byte
 * floating types and the kernel launcher behind the rewritten launch syntax.
 *
 * The compiler wrapper aclshmem-cxx includes this header first in every C++ translation unit and
 * rewrites   kernel<<<blockDim, l2ctrl, stream>>>(args...);   into
 *            ::aclshmemi::launch(KIND, [](auto... a) { kernel(a...); }, blockDim, l2ctrl, stream)(args...);
 * KIND is ::aclshmemi::kernel_aiv for kernels marked [[bisheng::core_ratio(0, 1)]] or
 * ACLSHMEM_GLOBAL_VECTOR, else ::aclshmemi::kernel_mix. The launch is queued on the ACL stream; each
 * block context calls the kernel with copies of the arguments on its own thread. The AIC contexts of
 * a MIX kernel whose body has #if's on the vector-core macros call its copy KERNEL__aclshmemi_aic,
 * which the wrapper compiles with those macros undefined.
 *
 * Not part of the original API; C++14 or later.
 */
#ifndef ACLSHMEM_DEVICE_ACLSHMEM_CPU_H
#define ACLSHMEM_DEVICE_ACLSHMEM_CPU_H

#ifndef __cplusplus
#error "the CPU device mode needs C++ (C++14 or later)"
#elif __cplusplus < 201402L
#error "the CPU device mode needs C++14 or later: compile with -std=c++14 (or newer)"
#endif

#include <csetjmp>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <tuple>
#include <type_traits>
#include <utility>

#ifndef ACLSHMEM_CPU_KERNELS
#define ACLSHMEM_CPU_KERNELS 1
#endif

/* ---- qualifiers and markers of the device dialect (no meaning on the CPU) ---- */
/* aclshmem-cxx's preprocessing passes define ACLSHMEMI_GLOBAL_MARK to find the kernels after
   macro expansion (the mark never reaches the compiler) */
#ifdef ACLSHMEMI_GLOBAL_MARK
#define __global__ ACLSHMEMI_GLOBAL_MARK
#else
#define __global__
#endif
#define __aicore__
/* MIX kernels with their cube : vector core ratio and schedule mode (every MIX launch runs one AIC
   and two AIV contexts per block here) */
#define __mix__(cube, vec)
#define __schedmode__(mode)
/* ACLSHMEMI_AIV_ONLY marks vector-only kernels; it is empty when compiling, and aclshmem-cxx's
   preprocessing pass (which finds the AIV-only kernels after macro expansion) defines it as the
   core_ratio attribute */
#ifndef ACLSHMEMI_AIV_ONLY
#define ACLSHMEMI_AIV_ONLY
#endif
#define __vector__ ACLSHMEMI_AIV_ONLY
#define __gm__
/* UB pointers. With clang++ on x86-64, __ubuf__ is the %gs-relative address space 256 and the
   library points each block thread's GS base at that block's UB: a __ubuf__ pointer's value stays
   the UB byte offset (what the shmem calls take), and kernels may load and store through it
   (*(__ubuf__ int32_t *)32 = 0 writes the calling block's UB). ACLSHMEM_UB_DEREF is 1 then.
   Elsewhere (g++, or not x86-64) __ubuf__ is empty: UB offsets passed to shmem/AscendC calls work,
   but a direct dereference faults and the launch reports it. -DACLSHMEM_UB_DEREF=1 turns that
   into a compile-time error for sources that need it; -DACLSHMEM_UB_DEREF=0 opts out. SIMT sources
   (USE_SIMT) default to 0 with either compiler: their __ubuf__ local arrays are ordinary stack arrays. */
#ifndef ACLSHMEM_UB_DEREF
#if defined(__clang__) && defined(__x86_64__) && !defined(USE_SIMT)
#define ACLSHMEM_UB_DEREF 1
#else
#define ACLSHMEM_UB_DEREF 0
#endif
#endif
#if ACLSHMEM_UB_DEREF
#if !(defined(__clang__) && defined(__x86_64__))
#error "direct UB dereference (ACLSHMEM_UB_DEREF=1) needs clang++ on x86-64 (__ubuf__ as the %gs address space)"
#endif
#define __ubuf__ __attribute__((address_space(256)))
#else
#define __ubuf__
#endif
#define __simt_vf__
#define __simt_callee__
#define __launch_bounds__(n)
#ifndef __inline__
#define __inline__ inline
#endif
/* kernels redefine `inline` as `inline attribute((always_inline))` around some includes */
#define attribute(x) __attribute__(x)

typedef uint8_t *GM_ADDR;

/* ---- entry points of libaclshmem used by the headers (also declared in shmem.h) ---- */
extern "C" {
int aclshmemx_dev_launch(void *stream, uint32_t kind, uint32_t block_dim, int (*func)(void *closure),
                         void *closure, void (*free)(void *closure));
void aclshmemx_dev_block_fail(const char *why);
void aclshmemx_dev_set_abandon(void (*hook)(void));
int aclshmemx_dev_in_kernel(void);
int64_t aclshmemx_dev_block_idx(void);
int64_t aclshmemx_dev_block_num(void);
int64_t aclshmemx_dev_sub_block_idx(void);
int64_t aclshmemx_dev_sub_block_num(void);
void *aclshmemx_dev_ub_base(void);
int aclshmemx_dev_sync_all(void);
int aclshmemx_dev_is_aic(void);
int aclshmemx_dev_sync_all_cores(void);
int aclshmemx_dev_barrier_vec(int team, int all);
}

/* ---- half (IEEE binary16) and bfloat16_t ---- */
namespace aclshmemi {
inline uint16_t float_to_half_bits(float f)
{
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t mant = x & 0x7fffffu;
    int32_t exp = static_cast<int32_t>((x >> 23) & 0xffu);
    if (exp == 0xff) {
        return static_cast<uint16_t>(sign | 0x7c00u | (mant ? (0x200u | (mant >> 13)) : 0u));
    }
    int32_t e = exp - 127 + 15;
    if (e >= 0x1f) {
        return static_cast<uint16_t>(sign | 0x7c00u);
    }
    if (e <= 0) {
        if (e < -10) {
            return static_cast<uint16_t>(sign);
        }
        mant |= 0x800000u;
        uint32_t shift = static_cast<uint32_t>(14 - e);
        uint32_t h = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1u);
        if (rem > halfway || (rem == halfway && (h & 1u))) {
            h++;
        }
        return static_cast<uint16_t>(sign | h);
    }
    uint32_t h = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) {
        h++; /* a carry into the exponent rounds up correctly, up to infinity */
    }
    return static_cast<uint16_t>(sign | h);
}

inline float half_bits_to_float(uint16_t h)
{
    uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t x;
    if (exp == 0) {
        if (mant == 0) {
            x = sign;
        } else {
            int32_t e = -1;
            do {
                e++;
                mant <<= 1;
            } while (!(mant & 0x400u));
            mant &= 0x3ffu;
            x = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | (mant << 13);
        }
    } else if (exp == 0x1f) {
        x = sign | 0x7f800000u | (mant << 13);
    } else {
        x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

inline uint16_t float_to_bf16_bits(float f)
{
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) {
        return static_cast<uint16_t>((x >> 16) | 0x40u); /* quiet NaN */
    }
    x += 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>(x >> 16);
}

inline float bf16_bits_to_float(uint16_t b)
{
    uint32_t x = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

/* A 2-byte floating type: storage bits, arithmetic in float. */
template <uint16_t (*ToBits)(float), float (*FromBits)(uint16_t)>
struct float16_storage {
    uint16_t bits_;
    float16_storage() = default;
    template <typename T, typename = typename std::enable_if<std::is_arithmetic<T>::value>::type>
    float16_storage(T v) : bits_(ToBits(static_cast<float>(v)))
    {
    }
    operator float() const
    {
        return FromBits(bits_);
    }
    float16_storage operator-() const
    {
        return float16_storage(-static_cast<float>(*this));
    }
    float16_storage &operator+=(float v)
    {
        return *this = float16_storage(static_cast<float>(*this) + v);
    }
    float16_storage &operator-=(float v)
    {
        return *this = float16_storage(static_cast<float>(*this) - v);
    }
    float16_storage &operator*=(float v)
    {
        return *this = float16_storage(static_cast<float>(*this) * v);
    }
    float16_storage &operator/=(float v)
    {
        return *this = float16_storage(static_cast<float>(*this) / v);
    }
};
} // namespace aclshmemi

typedef aclshmemi::float16_storage<aclshmemi::float_to_half_bits, aclshmemi::half_bits_to_float> half;
typedef aclshmemi::float16_storage<aclshmemi::float_to_bf16_bits, aclshmemi::bf16_bits_to_float> bfloat16_t;
typedef half float16_t;
static_assert(sizeof(half) == 2 && sizeof(bfloat16_t) == 2, "2-byte floating types");
static_assert(std::is_trivially_copyable<half>::value, "half is copied as bytes");

/* ---- the launcher ---- */
#define ACLSHMEMI_KERNEL_AIV 0u
#define ACLSHMEMI_KERNEL_MIX 1u
namespace aclshmemi {
/* the kinds as the rewritten launches name them */
constexpr uint32_t kernel_aiv = ACLSHMEMI_KERNEL_AIV;
constexpr uint32_t kernel_mix = ACLSHMEMI_KERNEL_MIX;
}

namespace aclshmemi {
/* Faults inside a block (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT) end that block instead of
   the process: the launcher's handler jumps back into the block's entry, which reports the fault to
   the library; the stream's next synchronize then fails. Outside a block the previous handler runs. */
struct fault_state {
    sigjmp_buf *jump;
    int sig;
    void *addr;
};
inline fault_state &fault_tls()
{
    static thread_local fault_state s = {nullptr, 0, nullptr};
    return s;
}
inline struct sigaction *previous_handlers()
{
    static struct sigaction prev[65];
    return prev;
}
inline void on_fault(int sig, siginfo_t *info, void *ctx)
{
    fault_state &s = fault_tls();
    if (s.jump != nullptr) {
        s.sig = sig;
        s.addr = info != nullptr ? info->si_addr : nullptr;
        sigjmp_buf *j = s.jump;
        s.jump = nullptr;
        siglongjmp(*j, 1);
    }
    struct sigaction &p = previous_handlers()[sig];
    if (p.sa_flags & SA_SIGINFO) {
        if (p.sa_sigaction != nullptr) {
            p.sa_sigaction(sig, info, ctx);
            return;
        }
    } else if (p.sa_handler != SIG_IGN && p.sa_handler != SIG_DFL) {
        p.sa_handler(sig);
        return;
    }
    signal(sig, SIG_DFL);
    raise(sig);
}
inline void install_fault_handlers()
{
    static bool done = [] {
        const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT};
        for (int s : sigs) {
            struct sigaction sa;
            std::memset(&sa, 0, sizeof sa);
            sa.sa_sigaction = on_fault;
            sa.sa_flags = SA_SIGINFO | SA_NODEFER;
            sigemptyset(&sa.sa_mask);
            sigaction(s, &sa, &previous_handlers()[s]);
        }
        return true;
    }();
    (void)done;
}

template <typename K, typename... A>
struct closure {
    K kernel;
    std::tuple<A...> args;
};

template <typename K, typename Tuple, std::size_t... I>
inline void call_kernel(const K &k, const Tuple &t, std::index_sequence<I...>)
{
    k(std::get<I>(t)...);
}

template <typename C, typename... A>
inline int run_block_inner(const C *c)
{
    try {
        call_kernel(c->kernel, c->args, std::index_sequence_for<A...>{});
        return 0;
    } catch (const std::exception &e) {
        char msg[512];
        std::snprintf(msg, sizeof msg, "C++ exception: %s", e.what());
        aclshmemx_dev_block_fail(msg);
    } catch (...) {
        aclshmemx_dev_block_fail("C++ exception of unknown type");
    }
    return 1;
}

/* the library ends a block this way when a device call of it fails because another block of the
   launch failed while it waited (its reason is recorded already) */
inline void abandon_block()
{
    fault_state &s = fault_tls();
    if (s.jump != nullptr) {
        sigjmp_buf *j = s.jump;
        s.jump = nullptr;
        s.sig = 0;
        siglongjmp(*j, 2);
    }
}

template <typename C, typename... A>
int run_block(void *p)
{
    fault_state &s = fault_tls();
    sigjmp_buf jump;
    if (sigsetjmp(jump, 1) != 0) {
        aclshmemx_dev_set_abandon(nullptr);
        if (s.sig == 0) {
            return 1; /* abandoned */
        }
        char msg[400];
        std::snprintf(msg, sizeof msg, "fault: signal %d (%s) at address %p%s", s.sig, strsignal(s.sig), s.addr,
                      s.addr != nullptr && reinterpret_cast<uintptr_t>(s.addr) < 192 * 1024 && !ACLSHMEM_UB_DEREF
                          ? " (a UB offset used as a pointer: dereferencing __ubuf__ pointers needs a clang++ "
                            "x86-64 build, see README 'Kernels on the CPU')"
                          : "");
        aclshmemx_dev_block_fail(msg);
        return 1;
    }
    s.jump = &jump;
    aclshmemx_dev_set_abandon(&abandon_block);
    int rc = run_block_inner<C, A...>(static_cast<const C *>(p));
    aclshmemx_dev_set_abandon(nullptr);
    s.jump = nullptr;
    return rc;
}

template <typename C>
void free_closure(void *p)
{
    delete static_cast<C *>(p);
}

template <typename K>
struct launcher {
    uint32_t kind;
    uint32_t block_dim;
    void *stream;
    K kernel;

    template <typename... A>
    void operator()(A &&...args) const
    {
        typedef closure<K, typename std::decay<A>::type...> C;
        install_fault_handlers();
        C *c = new C{kernel, std::tuple<typename std::decay<A>::type...>(std::forward<A>(args)...)};
        /* errors (bad blockDim, a refused stream) are logged by the library, as upstream launches
           report them through the runtime rather than to the caller */
        (void)aclshmemx_dev_launch(stream, kind, block_dim, &run_block<C, typename std::decay<A>::type...>, c,
                                   &free_closure<C>);
    }
};

template <typename K, typename D, typename L, typename S>
inline launcher<K> launch(uint32_t kind, K kernel, D block_dim, L l2ctrl, S stream)
{
    (void)l2ctrl;
    return launcher<K>{kind, static_cast<uint32_t>(block_dim), (void *)(stream), kernel};
}
} // namespace aclshmemi

#endif /* ACLSHMEM_DEVICE_ACLSHMEM_CPU_H */
