/*
 * kernel_tests.cpp - scenarios of the CPU device mode (tests/kernels.rs), one per argv[1]. A "fusion"
 * program: host code and kernels in one file, compiled by scripts/aclshmem-cxx, launched with
 * <<<...>>> on ACL streams of libascendcl. Prints "FAIL: ..." and exits non-zero on a failure.
 *
 *   families      every RMA / put-with-signal form of every T13 type, device vs host API results
 *   atomics       every device atomic of the 32/64-bit types vs the same sequence through the host API
 *   tests         the device wait/test families (result-returning forms too) of the ten T10 types vs
 *                 the host forms
 *   sized         put/get/_nbi/iput/iget/put_signal of 8..128 bits and the byte forms vs host reads
 *   many_blocks   4000 blocks: SyncAll, device atomics and a device barrier across thousands of threads
 *   two_streams   two kernels on two streams at once, one waiting for the other's flag
 *   cross_pe      a kernel on PE 1 waits for a signal set by a kernel on PE 0
 *   stream_order  two kernels and a host function on one stream run in order
 *   engines       MTE, SDMA, RoCE and UDMA copies, engine atomics, the UDMA signal put, the RoCE barrier
 *   notify        per-core SDMA notifies (g_state_host.notify_arr) waited for on the host's default
 *                 stream while the kernel still runs
 *   graph         kernels and a host function captured into an ACL graph, executed three times; then
 *                 on-stream host calls (a put and aclshmemx_handle_wait) captured and replayed
 *   state         the device-state record: PE, heap table, UB config, a split team from team_pools,
 *                 a RoCE (PE-level) barrier over it
 *   device_signals  put-with-signal with a bad sig_op (data copied, signal left alone), the value
 *                 aclshmem_signal_wait_until returns, the int8_t MTE copies with an L2 hint
 *   tque          a TQue's buffers handed out only when free (an accumulator kept while temporaries
 *                 come and go), a full queue refusing AllocTensor
 *   fault_in_barrier  PE 0's block faults before a device barrier: the job ends (status 1)
 *   fault         a kernel with a faulting block and one that traps: the stream's synchronize fails,
 *                 the process goes on, later kernels run
 *   qp            SDMA copies on explicit queue pairs (aclshmemx_set_qp_num before init), their quiets
 *                 and notifies, aclshmemx_sync_vec[_all], an out-of-range queue refused;
 *                 aclshmem_finalize(instance_id) (C++)
 *   engine_qp     RoCE and UDMA copies on explicit queue pairs (aclshmemx_set_qp_num before init) in
 *                 pointer and tensor forms, batches of deferred operations (defer x N + submit, their
 *                 pending_count), queue-pair quiets, the UDMA queue-pair signal put, the backend
 *                 (XSCALE) in static_assert and if constexpr; queue pairs and PEs out of range refused
 *                 without a write; a RoCE queue-pair batch longer than
 *                 ACLSHMEM_ROCE_QP_AGGREGATE_MAX_OPS ends its block
 *   kinds         AIV-only (core_ratio(0, 1), ACLSHMEM_GLOBAL_VECTOR) and MIX kernels whose names macros
 *                 paste: each runs the contexts of its kind
 *   mix_aic       MIX launches run one AIC context per block beside the two AIVs: index functions per
 *                 core type, SyncAll (AIV only) vs SyncAll<false> (all cores), the AIV-only barrier vs
 *                 the full device barrier; AICs that return at once hold up no rendezvous
 *   prof          SHMEMI_PROF_START/END (run with SHMEM_CYCLE_PROF_PE=0): per-block counts and cycles
 *                 in the table aclshmemx_get_prof returns on PE 0, nothing elsewhere
 *   bad_launch    blockDim 0: refused and logged, nothing runs, the stream stays usable
 *   multi_instance  (SHMEM_INSTANCE_PORT_RANGE set) blocks select their own instance with
 *                 aclshmemx_instance_ctx_set, as MULTI_INSTANCE kernels do: each block's calls use its
 *                 instance, the host's current instance is left alone
 */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "kernel_operator.h"
#include "shmem.h"
#include "kernel_test_util.h"
#include "shmemi_host_common.h"


using namespace AscendC;

/* ---------------------------------------------------------------------------------------------- */
/* families: one kernel per type                                                                    */
/* ---------------------------------------------------------------------------------------------- */

constexpr int kN = 96; /* elements per transfer */

template <typename T>
struct Bufs {
    T *src;      /* host-filled pattern */
    T *put;      /* peer's src lands here (pointer put, blocking) */
    T *get;      /* peer's src, fetched by get */
    T *gt;       /* GlobalTensor put_nbi */
    T *ub;       /* peer's own src, bounced through UB (get_nbi LocalTensor, put_nbi LocalTensor) */
    T *rows;     /* non-contiguous put: 4 rows of 8 with pitch 16 */
    T *strided;  /* iput: every second element */
    T *scalar;   /* p */
    T *g_out;    /* g result, stored locally */
    T *sig_data; /* put_signal data */
    int32_t *sig;
};

template <typename T>
struct Family;

template <typename T>
__global__ __aicore__ void Families(Bufs<T> b, int peer)
{
    /* a MIX kernel: the AIC contexts take part in the device barrier only */
    if (ASCEND_IS_AIC || GetBlockIdx() != 0) {
        aclshmem_barrier_all();
        return;
    }
    /* the typed names of T are reached through the generic helpers below */
    Family<T>::run(b, peer);
    aclshmem_barrier_all();
}

#define FAMILY(NAME, T)                                                                                       \
    template <>                                                                                               \
    struct Family<T> {                                                                                        \
        static void run(Bufs<T> b, int peer)                                                                  \
        {                                                                                                     \
            aclshmem_##NAME##_put(b.put, b.src, kN, peer);                                                     \
            aclshmem_##NAME##_get(b.get, b.src, kN, peer);                                                     \
            GlobalTensor<T> gd, gs;                                                                           \
            gd.SetGlobalBuffer(b.gt);                                                                         \
            gs.SetGlobalBuffer(b.src);                                                                        \
            aclshmem_##NAME##_put_nbi(gd, gs, kN, peer);                                                       \
            TPipe pipe;                                                                                       \
            TBuf<TPosition::VECCALC> buf;                                                                     \
            pipe.InitBuffer(buf, kN * sizeof(T));                                                             \
            LocalTensor<T> ub = buf.Get<T>();                                                                 \
            aclshmem_##NAME##_get_nbi(ub, gs, kN, peer);                                                       \
            PipeBarrier<PIPE_ALL>();                                                                          \
            GlobalTensor<T> gu;                                                                               \
            gu.SetGlobalBuffer(b.ub);                                                                         \
            aclshmem_##NAME##_put_nbi(gu, ub, kN, peer);                                                       \
            non_contiguous_copy_param p{4, 8, 16, 16};                                                        \
            aclshmem_##NAME##_put_nbi(b.rows, b.src, p, peer);                                                 \
            aclshmem_##NAME##_iput(b.strided, b.src, 2, 1, kN / 2, peer);                                      \
            aclshmem_##NAME##_p(b.scalar, b.src[5], peer);                                                     \
            *b.g_out = aclshmem_##NAME##_g(b.src + 7, peer);                                                   \
            aclshmem_##NAME##_put_signal(b.sig_data, b.src, kN, b.sig, 7, ACLSHMEM_SIGNAL_SET, peer);          \
            aclshmem_quiet();                                                                                 \
        }                                                                                                     \
    };

FAMILY(half, half)
FAMILY(float, float)
FAMILY(double, double)
FAMILY(int8, int8_t)
FAMILY(int16, int16_t)
FAMILY(int32, int32_t)
FAMILY(int64, int64_t)
FAMILY(uint8, uint8_t)
FAMILY(uint16, uint16_t)
FAMILY(uint32, uint32_t)
FAMILY(uint64, uint64_t)
FAMILY(char, char)
FAMILY(bfloat16, bfloat16_t)

template <typename T>
T pattern(int pe, int i)
{
    return static_cast<T>((pe * 37 + i * 3) % 100 + 1);
}

template <typename T>
bool same(const T &a, const T &b)
{
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <typename T>
void family_one(const char *name, aclrtStream stream)
{
    int me = aclshmem_my_pe();
    int n = aclshmem_n_pes();
    int peer = (me + 1) % n;
    int from = (me + n - 1) % n; /* the PE whose puts land here */
    Bufs<T> b;
    T **all[] = {&b.src, &b.put, &b.get, &b.gt, &b.ub, &b.rows, &b.strided, &b.scalar, &b.g_out, &b.sig_data};
    for (T **p : all) {
        *p = static_cast<T *>(aclshmem_calloc(kN, sizeof(T)));
    }
    b.sig = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    for (int i = 0; i < kN; i++) {
        b.src[i] = pattern<T>(me, i);
    }
    aclshmem_barrier_all();
    Families<T><<<2, nullptr, stream>>>(b, peer);
    ACL_OK(aclrtSynchronizeStream(stream));

    /* expected values from the host API: the source PE's src, read with aclshmem_getmem */
    std::vector<T> from_src(kN), peer_src(kN);
    aclshmem_getmem(from_src.data(), b.src, kN * sizeof(T), from);
    aclshmem_getmem(peer_src.data(), b.src, kN * sizeof(T), peer);
    for (int i = 0; i < kN; i++) {
        CHECK(same(b.put[i], from_src[i]), "%s put[%d]", name, i);
        CHECK(same(b.get[i], peer_src[i]), "%s get[%d]", name, i);
        CHECK(same(b.gt[i], from_src[i]), "%s GlobalTensor put_nbi[%d]", name, i);
        CHECK(same(b.ub[i], b.src[i]), "%s UB get_nbi + put_nbi[%d]", name, i);
        CHECK(same(b.sig_data[i], from_src[i]), "%s put_signal data[%d]", name, i);
        bool in_row = (i % 16) < 8 && i < 64;
        CHECK(same(b.rows[i], in_row ? from_src[i] : T()), "%s non-contiguous put[%d]", name, i);
        bool on_stride = i % 2 == 0;
        CHECK(same(b.strided[i], on_stride ? from_src[i / 2] : T()), "%s iput[%d]", name, i);
    }
    CHECK(same(b.scalar[0], from_src[5]), "%s p", name);
    CHECK(same(b.g_out[0], peer_src[7]), "%s g", name);
    CHECK(*b.sig == 7, "%s put_signal signal %d", name, *b.sig);
    aclshmem_barrier_all();
    aclshmem_free(b.sig);
    for (T **p : all) {
        aclshmem_free(*p);
    }
}

void families(aclrtStream stream)
{
    family_one<half>("half", stream);
    family_one<float>("float", stream);
    family_one<double>("double", stream);
    family_one<int8_t>("int8", stream);
    family_one<int16_t>("int16", stream);
    family_one<int32_t>("int32", stream);
    family_one<int64_t>("int64", stream);
    family_one<uint8_t>("uint8", stream);
    family_one<uint16_t>("uint16", stream);
    family_one<uint32_t>("uint32", stream);
    family_one<uint64_t>("uint64", stream);
    family_one<char>("char", stream);
    family_one<bfloat16_t>("bfloat16", stream);
}

/* ---------------------------------------------------------------------------------------------- */
/* atomics: the same sequence on the device (word 0) and through the host API (word 1)              */
/* ---------------------------------------------------------------------------------------------- */

template <typename T>
struct AtomicOps;

#define ATOMIC_OPS(NAME, T)                                                                                   \
    template <>                                                                                               \
    struct AtomicOps<T> {                                                                                     \
        /* returns a checksum of the fetched values */                                                        \
        static T run(T *w, int pe)                                                                            \
        {                                                                                                     \
            T sum = 0;                                                                                        \
            aclshmem_##NAME##_atomic_set(w, static_cast<T>(40), pe);                                           \
            sum += aclshmem_##NAME##_atomic_fetch_add(w, static_cast<T>(5), pe);                               \
            aclshmem_##NAME##_atomic_add(w, static_cast<T>(3), pe);                                            \
            aclshmem_##NAME##_atomic_inc(w, pe);                                                               \
            sum += aclshmem_##NAME##_atomic_fetch_inc(w, pe);                                                  \
            sum += aclshmem_##NAME##_atomic_swap(w, static_cast<T>(0x70f), pe);                                \
            sum += aclshmem_##NAME##_atomic_compare_swap(w, static_cast<T>(0x70f), static_cast<T>(0x3c3), pe); \
            sum += aclshmem_##NAME##_atomic_compare_swap(w, static_cast<T>(1), static_cast<T>(2), pe);         \
            aclshmem_##NAME##_atomic_and(w, static_cast<T>(0x0ff), pe);                                        \
            sum += aclshmem_##NAME##_atomic_fetch_or(w, static_cast<T>(0x400), pe);                            \
            aclshmem_##NAME##_atomic_or(w, static_cast<T>(0x800), pe);                                         \
            sum += aclshmem_##NAME##_atomic_fetch_xor(w, static_cast<T>(0x0f0), pe);                           \
            aclshmem_##NAME##_atomic_xor(w, static_cast<T>(0x001), pe);                                        \
            sum += aclshmem_##NAME##_atomic_fetch_and(w, static_cast<T>(0xfff), pe);                           \
            sum += aclshmem_##NAME##_atomic_fetch(w, pe);                                                      \
            return sum;                                                                                       \
        }                                                                                                     \
    };
ATOMIC_OPS(int32, int32_t)
ATOMIC_OPS(uint32, uint32_t)
ATOMIC_OPS(int64, int64_t)
ATOMIC_OPS(uint64, uint64_t)

template <typename T>
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void AtomicsKernel(T *words, T *sums, int peer)
{
    sums[0] = AtomicOps<T>::run(words, peer);
}

template <typename T>
void atomics_one(const char *name, aclrtStream stream)
{
    int me = aclshmem_my_pe();
    int n = aclshmem_n_pes();
    int peer = (me + 1) % n;
    T *words = static_cast<T *>(aclshmem_calloc(2, sizeof(T)));
    T *sums = static_cast<T *>(aclshmem_calloc(2, sizeof(T)));
    aclshmem_barrier_all();
    AtomicsKernel<T><<<1, nullptr, stream>>>(words, sums, peer);
    ACL_OK(aclrtSynchronizeStream(stream));
    sums[1] = AtomicOps<T>::run(words + 1, peer); /* host API, on the second word */
    aclshmem_barrier_all();
    CHECK(words[0] == words[1], "%s atomics: device word %lld, host word %lld", name, (long long)words[0],
          (long long)words[1]);
    CHECK(sums[0] == sums[1], "%s atomics: device fetched %lld, host fetched %lld", name, (long long)sums[0],
          (long long)sums[1]);
    aclshmem_barrier_all();
    aclshmem_free(sums);
    aclshmem_free(words);
}

/* the device-only adds (1/2-byte and floating types) and the MTE atomic templates */
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void SmallAdds(int8_t *i8, int16_t *i16, half *h, bfloat16_t *bf,
                                                                   float *f, int32_t *mte, int n_pes)
{
    for (int pe = 0; pe < n_pes; pe++) {
        aclshmem_int8_atomic_add(i8, static_cast<int8_t>(1), pe);
        aclshmem_int16_atomic_add(i16, static_cast<int16_t>(2), pe);
        aclshmem_half_atomic_add(h, half(0.5f), pe);
        aclshmem_bfloat16_atomic_add(bf, bfloat16_t(1.0f), pe);
        aclshmem_float_atomic_add(f, 0.25f, pe);
        aclshmemx_mte_atomic_add(mte, 3, pe);
        (void)aclshmemx_mte_atomic_fetch_inc(mte, pe);
    }
}

void atomics(aclrtStream stream)
{
    atomics_one<int32_t>("int32", stream);
    atomics_one<uint32_t>("uint32", stream);
    atomics_one<int64_t>("int64", stream);
    atomics_one<uint64_t>("uint64", stream);

    int n = aclshmem_n_pes();
    auto *i8 = static_cast<int8_t *>(aclshmem_calloc(1, 8));
    auto *i16 = static_cast<int16_t *>(aclshmem_calloc(1, 8));
    auto *h = static_cast<half *>(aclshmem_calloc(1, 8));
    auto *bf = static_cast<bfloat16_t *>(aclshmem_calloc(1, 8));
    auto *f = static_cast<float *>(aclshmem_calloc(1, 8));
    auto *mte = static_cast<int32_t *>(aclshmem_calloc(1, 8));
    aclshmem_barrier_all();
    constexpr uint32_t kBlocks = 16;
    SmallAdds<<<kBlocks, nullptr, stream>>>(i8, i16, h, bf, f, mte, n);
    ACL_OK(aclrtSynchronizeStream(stream));
    aclshmem_barrier_all();
    int adds = n * static_cast<int>(kBlocks);
    CHECK(*i8 == static_cast<int8_t>(adds), "int8 add %d, expected %d", *i8, adds);
    CHECK(*i16 == 2 * adds, "int16 add %d, expected %d", *i16, 2 * adds);
    CHECK(static_cast<float>(*h) == 0.5f * adds, "half add %g", static_cast<double>(static_cast<float>(*h)));
    CHECK(static_cast<float>(*bf) == 1.0f * adds, "bfloat16 add %g", static_cast<double>(static_cast<float>(*bf)));
    CHECK(*f == 0.25f * adds, "float add %g", static_cast<double>(*f));
    CHECK(*mte == 4 * adds, "MTE atomics %d, expected %d", *mte, 4 * adds);
    aclshmem_barrier_all();
    aclshmem_free(mte);
    aclshmem_free(f);
    aclshmem_free(bf);
    aclshmem_free(h);
    aclshmem_free(i16);
    aclshmem_free(i8);
}

/* ---------------------------------------------------------------------------------------------- */
/* tests: device result-returning forms vs host forms                                               */
/* ---------------------------------------------------------------------------------------------- */

struct TestResults {
    int test;
    int all_vec;
    size_t any;
    size_t some;
    size_t any_vec;
    size_t some_vec;
    size_t wait_any;
    size_t wait_some;
    size_t idx[8];
    size_t idx_vec[8];
};

/* the device (result-returning) and host (res_out) forms of one T10 type */
template <typename T>
struct Waits;

#define WAITS(NAME, T)                                                                                         \
    template <>                                                                                                \
    struct Waits<T> {                                                                                          \
        static void device(T *iv, int *st, T *cv, TestResults *r)                                              \
        {                                                                                                      \
            r->test = aclshmem_##NAME##_test(iv + 2, ACLSHMEM_CMP_EQ, static_cast<T>(5));                       \
            r->any = aclshmem_##NAME##_test_any(iv, 8, st, ACLSHMEM_CMP_GE, static_cast<T>(5));                 \
            r->some = aclshmem_##NAME##_test_some(iv, 8, r->idx, st, ACLSHMEM_CMP_GE, static_cast<T>(5));       \
            r->all_vec = aclshmem_##NAME##_test_all_vector(iv, 8, st, ACLSHMEM_CMP_LE, cv);                     \
            r->any_vec = aclshmem_##NAME##_test_any_vector(iv, 8, st, ACLSHMEM_CMP_EQ, cv);                     \
            r->some_vec = aclshmem_##NAME##_test_some_vector(iv, 8, r->idx_vec, st, ACLSHMEM_CMP_EQ, cv);       \
            r->wait_any = aclshmem_##NAME##_wait_until_any(iv, 8, st, ACLSHMEM_CMP_GE, static_cast<T>(5));      \
            size_t idx[8];                                                                                     \
            r->wait_some = aclshmem_##NAME##_wait_until_some(iv, 8, idx, st, ACLSHMEM_CMP_GE, static_cast<T>(5)); \
            (void)aclshmem_##NAME##_wait_until_any_vector(iv, 8, st, ACLSHMEM_CMP_EQ, cv);                     \
            (void)aclshmem_##NAME##_wait_until_some_vector(iv, 8, idx, st, ACLSHMEM_CMP_EQ, cv);               \
            aclshmem_##NAME##_wait_until(iv + 2, ACLSHMEM_CMP_EQ, static_cast<T>(5));                           \
            aclshmem_##NAME##_wait(iv + 1, static_cast<T>(0));                                                  \
            aclshmem_##NAME##_wait_until_all(iv, 8, st, ACLSHMEM_CMP_GT, static_cast<T>(0));                    \
        }                                                                                                      \
        static void host(T *iv, int *st, T *cv, TestResults *r)                                                \
        {                                                                                                      \
            aclshmem_##NAME##_test(iv + 2, ACLSHMEM_CMP_EQ, static_cast<T>(5), &r->test);                       \
            aclshmem_##NAME##_test_any(iv, 8, st, ACLSHMEM_CMP_GE, static_cast<T>(5), &r->any);                 \
            aclshmem_##NAME##_test_some(iv, 8, r->idx, st, ACLSHMEM_CMP_GE, static_cast<T>(5), &r->some);       \
            aclshmem_##NAME##_test_all_vector(iv, 8, st, ACLSHMEM_CMP_LE, cv, &r->all_vec);                     \
            aclshmem_##NAME##_test_any_vector(iv, 8, st, ACLSHMEM_CMP_EQ, cv, &r->any_vec);                     \
            aclshmem_##NAME##_test_some_vector(iv, 8, r->idx_vec, st, ACLSHMEM_CMP_EQ, cv, &r->some_vec);       \
            aclshmem_##NAME##_wait_until_any(iv, 8, st, ACLSHMEM_CMP_GE, static_cast<T>(5), &r->wait_any);      \
            size_t idx[8];                                                                                     \
            aclshmem_##NAME##_wait_until_some(iv, 8, idx, st, ACLSHMEM_CMP_GE, static_cast<T>(5), &r->wait_some); \
        }                                                                                                      \
    };
WAITS(float, float)
WAITS(int8, int8_t)
WAITS(int16, int16_t)
WAITS(int32, int32_t)
WAITS(int64, int64_t)
WAITS(uint8, uint8_t)
WAITS(uint16, uint16_t)
WAITS(uint32, uint32_t)
WAITS(uint64, uint64_t)
WAITS(char, char)

template <typename T>
__global__ __aicore__ void TestsKernel(T *ivars, int *status, T *cmp_values, TestResults *r)
{
    if (ASCEND_IS_AIC || GetBlockIdx() != 0) {
        return;
    }
    Waits<T>::device(ivars, status, cmp_values, r);
}

template <typename T>
void tests_one(const char *name, aclrtStream stream)
{
    auto *ivars = static_cast<T *>(aclshmem_calloc(8, sizeof(T)));
    auto *status = static_cast<int *>(aclshmem_calloc(8, sizeof(int)));
    auto *cmp_values = static_cast<T *>(aclshmem_calloc(8, sizeof(T)));
    auto *r = static_cast<TestResults *>(aclshmem_calloc(1, sizeof(TestResults)));
    const int vals[8] = {1, 9, 5, 3, 7, 6, 2, 8};
    const int st[8] = {0, 1, 0, 0, 0, 1, 0, 0};
    const int cv[8] = {1, 0, 4, 3, 9, 6, 2, 0};
    for (int i = 0; i < 8; i++) {
        ivars[i] = static_cast<T>(vals[i]);
        status[i] = st[i];
        cmp_values[i] = static_cast<T>(cv[i]);
    }
    TestsKernel<T><<<3, nullptr, stream>>>(ivars, status, cmp_values, r);
    ACL_OK(aclrtSynchronizeStream(stream));
    TestResults h;
    std::memset(&h, 0, sizeof h);
    Waits<T>::host(ivars, status, cmp_values, &h);
    CHECK(r->test == h.test && h.test == 1, "%s test %d vs host %d", name, r->test, h.test);
    CHECK(r->any == h.any, "%s test_any %zu vs host %zu", name, r->any, h.any);
    CHECK(r->some == h.some && h.some > 0, "%s test_some %zu vs host %zu", name, r->some, h.some);
    for (size_t i = 0; i < h.some && i < 8; i++) {
        CHECK(r->idx[i] == h.idx[i], "%s test_some index %zu: %zu vs host %zu", name, i, r->idx[i], h.idx[i]);
    }
    CHECK(r->all_vec == h.all_vec, "%s test_all_vector %d vs host %d", name, r->all_vec, h.all_vec);
    CHECK(r->any_vec == h.any_vec, "%s test_any_vector %zu vs host %zu", name, r->any_vec, h.any_vec);
    CHECK(r->some_vec == h.some_vec, "%s test_some_vector %zu vs host %zu", name, r->some_vec, h.some_vec);
    for (size_t i = 0; i < h.some_vec && i < 8; i++) {
        CHECK(r->idx_vec[i] == h.idx_vec[i], "%s test_some_vector index %zu", name, i);
    }
    CHECK(r->wait_any == h.wait_any, "%s wait_until_any %zu vs host %zu", name, r->wait_any, h.wait_any);
    CHECK(r->wait_some == h.wait_some, "%s wait_until_some %zu vs host %zu", name, r->wait_some, h.wait_some);
    aclshmem_barrier_all();
    aclshmem_free(r);
    aclshmem_free(cmp_values);
    aclshmem_free(status);
    aclshmem_free(ivars);
}

void tests(aclrtStream stream)
{
    tests_one<float>("float", stream);
    tests_one<int8_t>("int8", stream);
    tests_one<int16_t>("int16", stream);
    tests_one<int32_t>("int32", stream);
    tests_one<int64_t>("int64", stream);
    tests_one<uint8_t>("uint8", stream);
    tests_one<uint16_t>("uint16", stream);
    tests_one<uint32_t>("uint32", stream);
    tests_one<uint64_t>("uint64", stream);
    tests_one<char>("char", stream);
}

/* ---------------------------------------------------------------------------------------------- */
/* sized: put/get/nbi/iput/iget/put_signal of 8..128 bits, and the byte forms                       */
/* ---------------------------------------------------------------------------------------------- */

constexpr int kSizedBytes = 512;

#define SIZED_CALLS(BITS)                                                                                      \
    aclshmem_put##BITS(d + 0 * kSizedBytes, s, kSizedBytes / (BITS / 8) / 2, peer);                           \
    aclshmem_get##BITS(d + 1 * kSizedBytes, s, kSizedBytes / (BITS / 8) / 2, peer);                            \
    aclshmem_put##BITS##_nbi(d + 2 * kSizedBytes, s, kSizedBytes / (BITS / 8) / 2, peer);                      \
    aclshmem_get##BITS##_nbi(d + 3 * kSizedBytes, s, kSizedBytes / (BITS / 8) / 2, peer);                      \
    aclshmem_iput##BITS(d + 4 * kSizedBytes, s, 2, 1, kSizedBytes / (BITS / 8) / 4, peer);                     \
    aclshmem_iget##BITS(d + 5 * kSizedBytes, s, 1, 2, kSizedBytes / (BITS / 8) / 4, peer);                     \
    aclshmem_put##BITS##_signal(d + 6 * kSizedBytes, s, kSizedBytes / (BITS / 8) / 2, sig, BITS, ACLSHMEM_SIGNAL_ADD, peer);

[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void Sized(uint8_t *dst, uint8_t *src, int32_t *sig, int bits,
                                                               int peer)
{
    uint8_t *d = dst;
    uint8_t *s = src;
    switch (bits) {
        case 8: SIZED_CALLS(8) break;
        case 16: SIZED_CALLS(16) break;
        case 32: SIZED_CALLS(32) break;
        case 64: SIZED_CALLS(64) break;
        default: SIZED_CALLS(128) break;
    }
    aclshmem_putmem(d + 7 * kSizedBytes, s, kSizedBytes / 2, peer);
    aclshmem_getmem_nbi(d + 8 * kSizedBytes, s, kSizedBytes / 2, peer);
    aclshmem_putmem_signal_nbi(d + 9 * kSizedBytes, s, kSizedBytes / 2, sig, 1000, ACLSHMEM_SIGNAL_ADD, peer);
    aclshmem_quiet();
}

void sized(aclrtStream stream)
{
    int me = aclshmem_my_pe();
    int n = aclshmem_n_pes();
    int peer = (me + 1) % n;
    int from = (me + n - 1) % n;
    auto *src = static_cast<uint8_t *>(aclshmem_calloc(kSizedBytes, 1));
    auto *dst = static_cast<uint8_t *>(aclshmem_calloc(10 * kSizedBytes, 1));
    auto *sig = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    for (int i = 0; i < kSizedBytes; i++) {
        src[i] = static_cast<uint8_t>(me * 50 + i);
    }
    std::vector<uint8_t> from_src(kSizedBytes), peer_src(kSizedBytes);
    int expected_sig = 0;
    for (int bits : {8, 16, 32, 64, 128}) {
        std::memset(dst, 0, 10 * kSizedBytes);
        aclshmem_barrier_all();
        Sized<<<1, nullptr, stream>>>(dst, src, sig, bits, peer);
        ACL_OK(aclrtSynchronizeStream(stream));
        aclshmem_barrier_all();
        expected_sig += bits + 1000;
        aclshmem_getmem(from_src.data(), src, kSizedBytes, from);
        aclshmem_getmem(peer_src.data(), src, kSizedBytes, peer);
        int e = bits / 8;
        for (int i = 0; i < kSizedBytes / 2; i++) {
            CHECK(dst[i] == from_src[i], "put%d byte %d", bits, i);
            CHECK(dst[kSizedBytes + i] == peer_src[i], "get%d byte %d", bits, i);
            CHECK(dst[2 * kSizedBytes + i] == from_src[i], "put%d_nbi byte %d", bits, i);
            CHECK(dst[3 * kSizedBytes + i] == peer_src[i], "get%d_nbi byte %d", bits, i);
            CHECK(dst[6 * kSizedBytes + i] == from_src[i], "put%d_signal byte %d", bits, i);
            CHECK(dst[7 * kSizedBytes + i] == from_src[i], "putmem byte %d", i);
            CHECK(dst[8 * kSizedBytes + i] == peer_src[i], "getmem_nbi byte %d", i);
            CHECK(dst[9 * kSizedBytes + i] == from_src[i], "putmem_signal_nbi byte %d", i);
        }
        for (int k = 0; k < kSizedBytes / e / 4; k++) {
            for (int b = 0; b < e; b++) {
                CHECK(dst[4 * kSizedBytes + 2 * k * e + b] == from_src[k * e + b], "iput%d elem %d", bits, k);
                CHECK(dst[5 * kSizedBytes + k * e + b] == peer_src[2 * k * e + b], "iget%d elem %d", bits, k);
            }
        }
        CHECK(*sig == expected_sig, "signal %d after %d-bit round, expected %d", *sig, bits, expected_sig);
    }
    aclshmem_barrier_all();
    aclshmem_free(sig);
    aclshmem_free(dst);
    aclshmem_free(src);
}

/* ---------------------------------------------------------------------------------------------- */
/* many_blocks                                                                                      */
/* ---------------------------------------------------------------------------------------------- */

[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void ManyBlocks(int32_t *arrived, int32_t *after_sync,
                                                                    int32_t *world, int32_t *seen_by_block)
{
    int n_pes = aclshmem_n_pes();
    aclshmemx_mte_atomic_add(arrived, 1, aclshmem_my_pe());
    SyncAll();
    /* every block sees all arrivals of this PE after SyncAll */
    seen_by_block[GetBlockIdx()] = aclshmemx_mte_atomic_fetch(arrived, aclshmem_my_pe());
    aclshmemx_mte_atomic_add(after_sync, 1, aclshmem_my_pe());
    for (int pe = 0; pe < n_pes; pe++) {
        (void)aclshmem_int32_atomic_fetch_add(world, 1, pe);
    }
    aclshmem_barrier_all();
    /* after the device barrier every PE's world counter holds every block of every PE */
    if (aclshmem_int32_atomic_fetch(world, aclshmem_my_pe()) != 4000 * n_pes) {
        throw std::runtime_error("world counter incomplete after the device barrier");
    }
}

void many_blocks(aclrtStream stream)
{
    constexpr uint32_t kBlocks = 4000;
    auto *arrived = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    auto *after = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    auto *world = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    auto *seen = static_cast<int32_t *>(aclshmem_calloc(kBlocks, sizeof(int32_t)));
    aclshmem_barrier_all();
    ManyBlocks<<<kBlocks, nullptr, stream>>>(arrived, after, world, seen);
    ACL_OK(aclrtSynchronizeStream(stream));
    CHECK(*arrived == static_cast<int32_t>(kBlocks), "arrived %d", *arrived);
    CHECK(*after == static_cast<int32_t>(kBlocks), "after_sync %d", *after);
    int short_views = 0;
    for (uint32_t b = 0; b < kBlocks; b++) {
        short_views += seen[b] != static_cast<int32_t>(kBlocks);
    }
    CHECK(short_views == 0, "%d blocks saw fewer than %u arrivals after SyncAll", short_views, kBlocks);
    aclshmem_barrier_all();
    CHECK(*world == static_cast<int32_t>(kBlocks) * aclshmem_n_pes(), "world %d", *world);
    /* a second launch reuses the pooled threads */
    *arrived = 0;
    *after = 0;
    *world = 0;
    aclshmem_barrier_all();
    ManyBlocks<<<kBlocks, nullptr, stream>>>(arrived, after, world, seen);
    ACL_OK(aclrtSynchronizeStream(stream));
    CHECK(*arrived == static_cast<int32_t>(kBlocks), "second launch: arrived %d", *arrived);
    aclshmem_barrier_all();
    aclshmem_free(seen);
    aclshmem_free(world);
    aclshmem_free(after);
    aclshmem_free(arrived);
}

/* ---------------------------------------------------------------------------------------------- */
/* two_streams, cross_pe, stream_order                                                              */
/* ---------------------------------------------------------------------------------------------- */

[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void WaitFor(int32_t *flag, int32_t value, int32_t *out)
{
    aclshmem_signal_wait_until(flag, ACLSHMEM_CMP_EQ, value);
    *out = value + 1;
}

[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void SetFlagKernel(int32_t *flag, int32_t value, int pe)
{
    aclshmemx_signal_op(flag, value, ACLSHMEM_SIGNAL_SET, pe);
}

void two_streams(aclrtStream stream)
{
    aclrtStream other = nullptr;
    ACL_OK(aclrtCreateStream(&other));
    auto *flag = static_cast<int32_t *>(aclshmem_calloc(2, sizeof(int32_t)));
    /* the waiter first: it only finishes if the setter runs at the same time on the other stream */
    WaitFor<<<2, nullptr, stream>>>(flag, 42, flag + 1);
    SetFlagKernel<<<1, nullptr, other>>>(flag, 42, aclshmem_my_pe());
    ACL_OK(aclrtSynchronizeStream(stream));
    ACL_OK(aclrtSynchronizeStream(other));
    CHECK(flag[1] == 43, "waiter wrote %d", flag[1]);
    ACL_OK(aclrtDestroyStream(other));
    aclshmem_barrier_all();
    aclshmem_free(flag);
}

void cross_pe(aclrtStream stream)
{
    int me = aclshmem_my_pe();
    int n = aclshmem_n_pes();
    auto *flag = static_cast<int32_t *>(aclshmem_calloc(2, sizeof(int32_t)));
    aclshmem_barrier_all();
    if (me != 0) {
        WaitFor<<<4, nullptr, stream>>>(flag, 1000 + me, flag + 1); /* queued and waiting */
    }
    aclshmem_barrier_all();
    if (me == 0) {
        for (int pe = 1; pe < n; pe++) {
            SetFlagKernel<<<1, nullptr, stream>>>(flag, 1000 + pe, pe);
        }
    }
    ACL_OK(aclrtSynchronizeStream(stream));
    if (me != 0) {
        CHECK(flag[1] == 1001 + me, "PE %d's waiter wrote %d", me, flag[1]);
    }
    aclshmem_barrier_all();
    aclshmem_free(flag);
}

[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void Fill(int32_t *buf, int elems, int32_t value)
{
    int per = elems / static_cast<int>(GetBlockNum());
    for (int i = 0; i < per; i++) {
        buf[GetBlockIdx() * per + i] = value;
    }
}

[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void SumInto(int32_t *buf, int elems, int64_t *sum)
{
    int64_t s = 0;
    for (int i = 0; i < elems; i++) {
        s += buf[i];
    }
    *sum = s;
}

static int64_t g_host_saw = -1;
static void host_check(void *arg)
{
    g_host_saw = *static_cast<int64_t *>(arg);
}

void stream_order(aclrtStream stream)
{
    constexpr int kElems = 64 * 1024;
    auto *buf = static_cast<int32_t *>(aclshmem_calloc(kElems, sizeof(int32_t)));
    auto *sum = static_cast<int64_t *>(aclshmem_calloc(1, sizeof(int64_t)));
    for (int round = 1; round <= 3; round++) {
        Fill<<<64, nullptr, stream>>>(buf, kElems, round);
        SumInto<<<1, nullptr, stream>>>(buf, kElems, sum);
        ACL_OK(aclrtLaunchHostFunc(stream, host_check, sum));
        ACL_OK(aclrtSynchronizeStream(stream));
        CHECK(*sum == static_cast<int64_t>(kElems) * round, "round %d: sum %lld", round, (long long)*sum);
        CHECK(g_host_saw == *sum, "round %d: host function saw %lld", round, (long long)g_host_saw);
    }
    aclshmem_barrier_all();
    aclshmem_free(sum);
    aclshmem_free(buf);
}

/* ---------------------------------------------------------------------------------------------- */
/* engines: MTE, SDMA, RoCE and UDMA calls on one block                                             */
/* ---------------------------------------------------------------------------------------------- */

constexpr int kEngineN = 40;

struct EngineBufs {
    int32_t *src;     /* kEngineN */
    int32_t *dst;     /* 5 areas of kEngineN: MTE, SDMA, RoCE, UDMA puts from the previous PE, and the
                         internal RoCE write (half to the peer's address, half to the symmetric one) */
    int32_t *back;    /* 5 areas: gets from the next PE (the last: internal RoCE reads) */
    int32_t *ids;     /* 2: aclshmemi_get_my_pe(), aclshmemi_get_total_pe() in the kernel */
    int64_t *words;   /* 2: RoCE and UDMA atomics from every PE */
    uint64_t *sig;    /* UDMA put-with-signal word */
    int32_t *sig_dst; /* its data */
    int32_t *roce_arrived;
};

[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void Engines(EngineBufs b, int next, int n_pes)
{
    int32_t *staging = (int32_t *)(uintptr_t)1024; /* UB offset */
    aclshmemx_mte_put_nbi(b.dst, b.src, staging, 4096u, kEngineN, next, 0);
    aclshmemx_mte_get_nbi(b.back, b.src, staging, 4096u, kEngineN, next, 0);
    aclshmemx_sdma_put_nbi(b.dst + kEngineN, b.src, staging, 64u, kEngineN, next, 0);
    aclshmemx_sdma_get_nbi(b.back + kEngineN, b.src, staging, 64u, kEngineN, next, 0);
    aclshmemx_sdma_quiet(staging, 64u, 0);
    aclshmemx_roce_put_nbi(b.dst + 2 * kEngineN, b.src, staging, kEngineN, next);
    aclshmemx_roce_get_nbi(b.back + 2 * kEngineN, b.src, staging, kEngineN, next, 0);
    aclshmemx_roce_quiet(next, staging, 0);
    aclshmemx_udma_put_nbi(b.dst + 3 * kEngineN, b.src, staging, kEngineN, next);
    aclshmemx_udma_get_nbi(b.back + 3 * kEngineN, b.src, staging, kEngineN, next);
    aclshmemx_udma_quiet(next);
    for (int pe = 0; pe < n_pes; pe++) {
        aclshmemx_roce_atomic_add(b.words, static_cast<int64_t>(10), pe);
        (void)aclshmemx_roce_atomic_fetch_xor(b.words, static_cast<int64_t>(1), pe);
        (void)aclshmemx_udma_atomic_fetch_add(b.words + 1, static_cast<int64_t>(3), pe);
        aclshmemx_udma_atomic_or(b.words + 1, static_cast<int64_t>(1) << 40, pe);
    }
    aclshmemx_udma_put_signal_nbi(b.sig_dst, b.src, kEngineN, b.sig, 0x1234567890ull, next);
    /* the internal whole-message RoCE operations, with UB work tensors built as the original's
       examples build them; the remote operand by what aclshmem_roce_ptr returns (its address in
       the next PE's copy on this node; on another node the symmetric address), then (the older call
       form, without an event id) by its symmetric address */
    {
        AscendC::LocalTensor<uint32_t> ub32;
        ub32.address_.logicPos = static_cast<uint8_t>(AscendC::TPosition::VECOUT);
        ub32.address_.bufferAddr = reinterpret_cast<uint64_t>(ACLSHMEM_INTERNAL_UB_BUF_START_ADDR);
        ub32.address_.dataLen = UB_ALIGN_SIZE;
        AscendC::LocalTensor<uint64_t> ub64;
        ub64.address_.logicPos = static_cast<uint8_t>(AscendC::TPosition::VECOUT);
        ub64.address_.bufferAddr = reinterpret_cast<uint64_t>(ACLSHMEM_INTERNAL_UB_BUF_START_ADDR + UB_ALIGN_SIZE);
        ub64.address_.dataLen = UB_ALIGN_SIZE;
        constexpr int half = kEngineN / 2;
        constexpr uint64_t half_bytes = half * sizeof(int32_t);
        auto *peer_dst = static_cast<uint8_t *>(aclshmem_roce_ptr(b.dst + 4 * kEngineN, next));
        auto *peer_src = static_cast<uint8_t *>(aclshmem_roce_ptr(b.src, next));
        aclshmemi_roce_write(peer_dst, reinterpret_cast<uint8_t *>(b.src), next, 0, half_bytes, ub64, ub32, 0);
        aclshmemi_roce_read(reinterpret_cast<uint8_t *>(b.back + 4 * kEngineN), peer_src, next, 0, half_bytes, ub64,
                            ub32, 0);
        aclshmemi_roce_write(reinterpret_cast<uint8_t *>(b.dst + 4 * kEngineN + half),
                             reinterpret_cast<uint8_t *>(b.src + half), next, 0, half_bytes, ub64, ub32);
        aclshmemi_roce_read(reinterpret_cast<uint8_t *>(b.back + 4 * kEngineN + half),
                            reinterpret_cast<uint8_t *>(b.src + half), next, 0, half_bytes, ub64, ub32);
        aclshmemi_roce_quiet(next, 0, ub64, ub32, 0);
        aclshmemi_roce_quiet(next, 0, ub64, ub32);
        b.ids[0] = aclshmemi_get_my_pe();
        b.ids[1] = aclshmemi_get_total_pe();
        CHECK(aclshmemi_get_heap_size() == aclshmemi_get_state()->heap_size && aclshmemi_get_heap_size() > 0,
              "aclshmemi_get_heap_size %llu", (unsigned long long)aclshmemi_get_heap_size());
    }
    /* PE-level barrier of the RoCE engine, made by this single block on every PE */
    aclshmemx_roce_barrier_all();
    *b.roce_arrived = 1;
}

void engines(aclrtStream stream)
{
    int me = aclshmem_my_pe();
    int n = aclshmem_n_pes();
    int next = (me + 1) % n;
    int prev = (me + n - 1) % n;
    EngineBufs b;
    b.src = static_cast<int32_t *>(aclshmem_calloc(kEngineN, sizeof(int32_t)));
    b.dst = static_cast<int32_t *>(aclshmem_calloc(5 * kEngineN, sizeof(int32_t)));
    b.back = static_cast<int32_t *>(aclshmem_calloc(5 * kEngineN, sizeof(int32_t)));
    b.ids = static_cast<int32_t *>(aclshmem_calloc(2, sizeof(int32_t)));
    b.words = static_cast<int64_t *>(aclshmem_calloc(2, sizeof(int64_t)));
    b.sig = static_cast<uint64_t *>(aclshmem_calloc(1, sizeof(uint64_t)));
    b.sig_dst = static_cast<int32_t *>(aclshmem_calloc(kEngineN, sizeof(int32_t)));
    b.roce_arrived = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    for (int i = 0; i < kEngineN; i++) {
        b.src[i] = me * 1000 + i;
    }
    aclshmem_barrier_all();
    Engines<<<1, nullptr, stream>>>(b, next, n);
    ACL_OK(aclrtSynchronizeStream(stream));
    aclshmem_barrier_all();
    for (int e = 0; e < 5; e++) {
        for (int i = 0; i < kEngineN; i++) {
            CHECK(b.dst[e * kEngineN + i] == prev * 1000 + i, "engine %d put[%d] = %d", e, i, b.dst[e * kEngineN + i]);
            CHECK(b.back[e * kEngineN + i] == next * 1000 + i, "engine %d get[%d] = %d", e, i,
                  b.back[e * kEngineN + i]);
        }
    }
    for (int i = 0; i < kEngineN; i++) {
        CHECK(b.sig_dst[i] == prev * 1000 + i, "UDMA put_signal data[%d] = %d", i, b.sig_dst[i]);
    }
    CHECK(*b.sig == 0x1234567890ull, "UDMA signal %llx", (unsigned long long)*b.sig);
    /* every PE added 10 (bit 0 untouched) and flipped bit 0 once */
    CHECK(b.words[0] == 10 * n + (n % 2), "RoCE word %lld", (long long)b.words[0]);
    CHECK(b.words[1] == 3 * n + (static_cast<int64_t>(1) << 40), "UDMA word %lld", (long long)b.words[1]);
    CHECK(*b.roce_arrived == 1, "roce barrier not passed");
    CHECK(b.ids[0] == me && b.ids[1] == n, "aclshmemi_get_my_pe / _total_pe in a kernel: %d / %d", b.ids[0],
          b.ids[1]);
    aclshmem_barrier_all();
    aclshmem_free(b.ids);
    aclshmem_free(b.roce_arrived);
    aclshmem_free(b.sig_dst);
    aclshmem_free(b.sig);
    aclshmem_free(b.words);
    aclshmem_free(b.back);
    aclshmem_free(b.dst);
    aclshmem_free(b.src);
}

/* ---------------------------------------------------------------------------------------------- */
/* notify: per-core SDMA notifies tell the host the copies are done while the kernel still runs     */
/* ---------------------------------------------------------------------------------------------- */

template <typename T>
__global__ __aicore__ void NotifyCopy(T *dst, T *src, int per, int next, int32_t *go)
{
    if ASCEND_IS_AIV {
        int64_t idx = GetBlockIdx();
        aclshmemx_sdma_get_nbi(dst + idx * per, src + idx * per, (T *)(uintptr_t)1024, 64u, per, next, 0);
        LocalTensor<T> buf;
        buf.address_.logicPos = static_cast<uint8_t>(TPosition::VECOUT);
        buf.address_.bufferAddr = 1024;
        buf.address_.dataLen = 64;
        aclshmemx_sdma_notify_record(buf, 0);
        /* the kernel ends only after the host, told by the notifies, lets it */
        aclshmem_int32_wait_until(go, ACLSHMEM_CMP_EQ, 1);
    }
    if ASCEND_IS_AIC {
        return;
    }
}

void notify(aclrtStream stream)
{
    constexpr uint32_t kBlocks = 4; /* MIX kernel: 8 AIV cores */
    constexpr int kPer = 256;
    int me = aclshmem_my_pe();
    int next = (me + 1) % aclshmem_n_pes();
    auto *src = static_cast<int32_t *>(aclshmem_calloc(2 * kBlocks * kPer, sizeof(int32_t)));
    auto *dst = static_cast<int32_t *>(aclshmem_calloc(2 * kBlocks * kPer, sizeof(int32_t)));
    auto *go = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    for (int i = 0; i < 2 * static_cast<int>(kBlocks) * kPer; i++) {
        src[i] = me * 100000 + i;
    }
    aclshmem_barrier_all();
    NotifyCopy<int32_t><<<kBlocks, nullptr, stream>>>(dst, src, kPer, next, go);
    CHECK(g_state_host.default_stream != nullptr, "g_state_host.default_stream is NULL");
    for (uint32_t i = 0; i < 2 * kBlocks; i++) {
        CHECK(g_state_host.notify_arr[i] != nullptr, "no notify for core %u", i);
        ACL_OK(aclrtWaitAndResetNotify(g_state_host.notify_arr[i], g_state_host.default_stream, 0));
    }
    ACL_OK(aclrtSynchronizeStream(g_state_host.default_stream));
    /* every core's copy is complete although the kernel is still running */
    for (int i = 0; i < 2 * static_cast<int>(kBlocks) * kPer; i++) {
        CHECK(dst[i] == next * 100000 + i, "element %d is %d", i, dst[i]);
    }
    aclrtStreamStatus st = ACL_STREAM_STATUS_COMPLETE;
    ACL_OK(aclrtStreamQuery(stream, &st));
    CHECK(st == ACL_STREAM_STATUS_NOT_READY, "the kernel finished before the host released it");
    __atomic_store_n(go, 1, __ATOMIC_RELEASE);
    ACL_OK(aclrtSynchronizeStream(stream));
    aclshmem_barrier_all();
    aclshmem_free(go);
    aclshmem_free(dst);
    aclshmem_free(src);
}

/* ---------------------------------------------------------------------------------------------- */
/* qp: SDMA on explicit queue pairs (4 configured before init by main), their notifies, the vector    */
/* syncs, a queue index out of range                                                                 */
/* ---------------------------------------------------------------------------------------------- */

constexpr uint32_t kQps = 4;

#define QP_RC(call, want)                                                                          \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        CHECK(rc_ == static_cast<int>(want), "%s returned %d, expected %d", #call, rc_, static_cast<int>(want)); \
    } while (0)

/* block b copies its slice with queue pair b (as the original's multi-core SDMA examples), pointer
   and tensor forms alternating, waits for it with that queue's quiet and records its notify */
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void QpCopy(int32_t *dst, int32_t *src, int per, int next,
                                                                int32_t *go)
{
    uint32_t qp = static_cast<uint32_t>(GetBlockIdx());
    auto *ub = reinterpret_cast<int32_t *>(uintptr_t{1024});
    LocalTensor<int32_t> buf;
    buf.address_.logicPos = static_cast<uint8_t>(TPosition::VECOUT);
    buf.address_.bufferAddr = 1024;
    buf.address_.dataLen = 64;
    if (qp % 2 == 0) {
        aclshmemx_sdma_qp_get_nbi(dst + qp * per, src + qp * per, ub, 64u, static_cast<uint32_t>(per), next, qp, 0);
        aclshmemx_sdma_qp_quiet(ub, 64u, qp, 0);
        aclshmemx_sdma_qp_notify_record(ub, 64u, qp, 0);
    } else {
        GlobalTensor<int32_t> d, sg;
        d.SetGlobalBuffer(dst + qp * per);
        sg.SetGlobalBuffer(src + qp * per);
        aclshmemx_sdma_qp_get_nbi(d, sg, buf, static_cast<uint32_t>(per), next, qp, 0);
        aclshmemx_sdma_qp_quiet(buf, qp, 0);
        aclshmemx_sdma_qp_notify_record(buf, qp, 0);
    }
    aclshmemx_sync_vec_all();
    aclshmem_int32_wait_until(go, ACLSHMEM_CMP_EQ, 1);
}

/* queue pair kQps does not exist: the copy is refused (logged), nothing is written */
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void QpOutOfRange(int32_t *dst, int32_t *src, int per, int next)
{
    auto *ub = reinterpret_cast<int32_t *>(uintptr_t{1024});
    aclshmemx_sdma_qp_put_nbi(dst, src, ub, 64u, static_cast<uint32_t>(per), next, kQps, 0);
    aclshmemx_sdma_qp_get_nbi(dst, src, ub, 64u, static_cast<uint32_t>(per), next, kQps + 7, 0);
    aclshmemx_sync_vec(ACLSHMEM_TEAM_WORLD);
}

/* set before init (main): the rules of aclshmemx_set_qp_num */
int qp_before_init()
{
    QP_RC(aclshmemx_set_qp_num(ACLSHMEM_DATA_OP_MTE, 1), ACLSHMEM_NOT_SUPPORTED);
    QP_RC(aclshmemx_set_qp_num(ACLSHMEM_DATA_OP_SDMA, 0), ACLSHMEM_INVALID_VALUE);
    QP_RC(aclshmemx_set_qp_num(ACLSHMEM_DATA_OP_SDMA, ACLSHMEM_SDMA_MAX_CHAN + 1), ACLSHMEM_INVALID_VALUE);
    QP_RC(aclshmemx_set_qp_num(ACLSHMEM_DATA_OP_UDMA, ACLSHMEM_MAX_QP_NUM + 1), ACLSHMEM_INVALID_VALUE);
    QP_RC(aclshmemx_set_qp_num(ACLSHMEM_DATA_OP_SDMA, ACLSHMEM_SDMA_MAX_CHAN), 0);
    QP_RC(aclshmemx_set_qp_num(static_cast<data_op_engine_type_t>(0x10), 2), ACLSHMEM_INVALID_VALUE);
    QP_RC(aclshmemx_set_qp_num(ACLSHMEM_DATA_OP_UDMA, ACLSHMEM_MAX_QP_NUM), 0);
    QP_RC(aclshmemx_set_qp_num(ACLSHMEM_DATA_OP_ROCE, 2), 0);
    QP_RC(aclshmemx_set_qp_num(ACLSHMEM_DATA_OP_SDMA, kQps), 0);
    return 0;
}

void qp(aclrtStream stream)
{
    constexpr int kPer = 128;
    int me = aclshmem_my_pe();
    int next = (me + 1) % aclshmem_n_pes();
    /* frozen while initialized */
    QP_RC(aclshmemx_set_qp_num(ACLSHMEM_DATA_OP_SDMA, 2), ACLSHMEM_NOT_SUPPORTED);
    /* the C++ aclshmem_finalize(instance_id) of newer original headers: no such instance */
    CHECK(aclshmem_finalize(static_cast<uint64_t>(77)) != 0, "aclshmem_finalize(77) succeeded");
    auto *src = static_cast<int32_t *>(aclshmem_calloc(kQps * kPer, sizeof(int32_t)));
    auto *dst = static_cast<int32_t *>(aclshmem_calloc(kQps * kPer, sizeof(int32_t)));
    auto *go = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    for (int i = 0; i < static_cast<int>(kQps) * kPer; i++) {
        src[i] = me * 100000 + i;
    }
    aclshmem_barrier_all();
    QpCopy<<<kQps, nullptr, stream>>>(dst, src, kPer, next, go);
    for (uint32_t q = 0; q < kQps; q++) {
        ACL_OK(aclrtWaitAndResetNotify(g_state_host.notify_arr[q], g_state_host.default_stream, 0));
    }
    ACL_OK(aclrtSynchronizeStream(g_state_host.default_stream));
    /* every queue's copy is complete although the kernel is still running */
    for (int i = 0; i < static_cast<int>(kQps) * kPer; i++) {
        CHECK(dst[i] == next * 100000 + i, "qp copy: element %d is %d", i, dst[i]);
    }
    __atomic_store_n(go, 1, __ATOMIC_RELEASE);
    ACL_OK(aclrtSynchronizeStream(stream));
    aclshmem_barrier_all();
    std::memset(dst, 0, kQps * kPer * sizeof(int32_t));
    aclshmem_barrier_all();
    QpOutOfRange<<<2, nullptr, stream>>>(dst, src, kPer, next);
    ACL_OK(aclrtSynchronizeStream(stream));
    aclshmem_barrier_all();
    int written = 0;
    for (int i = 0; i < static_cast<int>(kQps) * kPer; i++) {
        written += dst[i] != 0;
    }
    CHECK(written == 0, "a copy on a queue pair that does not exist wrote %d elements", written);
    aclshmem_barrier_all();
    aclshmem_free(go);
    aclshmem_free(dst);
    aclshmem_free(src);
}

/* ---------------------------------------------------------------------------------------------- */
/* engine_qp: RoCE and UDMA copies on explicit queue pairs (4 configured before init by main),      */
/* batches of deferred operations, queue pairs and PEs out of range, the RoCE batch-length limit     */
/* ---------------------------------------------------------------------------------------------- */

/* upstream kernels pick their RDMA paths by the backend: the CPU device mode reports XSCALE, the
   backend that has queue-pair calls and batches */
static_assert(ACLSHMEMI_K_RDMA_BACKEND == aclshmemi_rdma_backend_t::XSCALE, "the CPU device mode is XSCALE");
#if !defined(ACLSHMEMI_RDMA_K_BACKEND_XSCALE)
#error "ACLSHMEMI_RDMA_K_BACKEND_XSCALE is not defined"
#endif
/* upstream kernels test the backend with if constexpr (C++17; the C++14 syntax check gets an if) */
#if __cplusplus >= 201703L
#define EQP_IF_CONSTEXPR if constexpr
#else
#define EQP_IF_CONSTEXPR if
#endif

constexpr uint32_t kEqpQps = 4;
constexpr int kEqpPer = 64;    /* elements of one block in one region */
constexpr int kEqpChunks = 4;  /* operations of one batch */
constexpr int kEqpCounts = 16; /* pending_count seen by a block: before and after each of 8 submits */
/* one region of dst per form; puts bring the previous PE's src, gets the next PE's */
enum EqpRegion {
    EQP_ROCE_QP_PUT,
    EQP_ROCE_QP_GET,
    EQP_ROCE_QP_PUT_BATCH,
    EQP_ROCE_QP_GET_BATCH,
    EQP_ROCE_PUT_BATCH,
    EQP_ROCE_GET_BATCH,
    EQP_UDMA_QP_PUT,
    EQP_UDMA_QP_GET,
    EQP_UDMA_QP_PUT_BATCH,
    EQP_UDMA_QP_GET_BATCH,
    EQP_UDMA_PUT_BATCH,
    EQP_UDMA_GET_BATCH,
    EQP_UDMA_QP_SIGNAL,
    EQP_REGIONS
};
inline bool eqp_is_get(int region)
{
    return region == EQP_ROCE_QP_GET || region == EQP_ROCE_QP_GET_BATCH || region == EQP_ROCE_GET_BATCH ||
           region == EQP_UDMA_QP_GET || region == EQP_UDMA_QP_GET_BATCH || region == EQP_UDMA_GET_BATCH;
}

inline GlobalTensor<int32_t> eqp_gt(int32_t *p)
{
    GlobalTensor<int32_t> t;
    t.SetGlobalBuffer(p);
    return t;
}

/* a batch over kEqpPer elements: kEqpChunks - 1 deferred operations and the submit; *cnt gets
   pending_count before and after the submit */
template <typename Op>
inline void eqp_batch(int32_t *d, int32_t *s, int32_t *&cnt, Op op)
{
    constexpr uint32_t c = kEqpPer / kEqpChunks;
    aclshmemx_submit_state_t state{};
    aclshmemx_defer_t defer(state);
    aclshmemx_submit_t submit(state);
    for (int i = 0; i + 1 < kEqpChunks; i++) {
        op(d + i * c, s + i * c, c, defer);
    }
    *cnt++ = static_cast<int32_t>(state.pending_count);
    op(d + (kEqpChunks - 1) * c, s + (kEqpChunks - 1) * c, c, submit);
    *cnt++ = static_cast<int32_t>(state.pending_count);
}

/* block b works on queue pair b: even blocks with the pointer forms, odd ones with the tensor forms */
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void EngineQp(int32_t *dst, int32_t *src, uint64_t *sig,
                                                                  int32_t *counts, int next)
{
    const uint32_t qp = static_cast<uint32_t>(GetBlockIdx());
    const bool tensors = qp % 2 == 1;
    const uint32_t n = kEqpPer;
    int32_t *cnt = counts + qp * kEqpCounts;
    int32_t *mine = src + qp * kEqpPer;
    auto at = [&](int region) { return dst + (region * static_cast<int>(kEqpQps) + static_cast<int>(qp)) * kEqpPer; };
    auto *ub = reinterpret_cast<int32_t *>(uintptr_t{1024});
    LocalTensor<int32_t> buf;
    buf.address_.logicPos = static_cast<uint8_t>(TPosition::VECOUT);
    buf.address_.bufferAddr = 1024;
    buf.address_.dataLen = 2048;

    /* RoCE: single operations and batches on queue pair qp, batches on QP 0, as the XSCALE paths of
       upstream kernels */
    EQP_IF_CONSTEXPR (ACLSHMEMI_K_RDMA_BACKEND == aclshmemi_rdma_backend_t::XSCALE) {
        if (tensors) {
            aclshmemx_roce_qp_put_nbi(eqp_gt(at(EQP_ROCE_QP_PUT)), eqp_gt(mine), buf, n, next, qp, 0);
            aclshmemx_roce_qp_get_nbi(eqp_gt(at(EQP_ROCE_QP_GET)), eqp_gt(mine), buf, n, next, qp, 0);
        } else {
            aclshmemx_roce_qp_put_nbi(at(EQP_ROCE_QP_PUT), mine, ub, n, next, qp, 0);
            aclshmemx_roce_qp_get_nbi(at(EQP_ROCE_QP_GET), mine, ub, n, next, qp, 0);
        }
        eqp_batch(at(EQP_ROCE_QP_PUT_BATCH), mine, cnt, [&](int32_t *d, int32_t *s, uint32_t c, auto action) {
            if (tensors) {
                aclshmemx_roce_qp_put_nbi(eqp_gt(d), eqp_gt(s), buf, c, next, qp, 0, action);
            } else {
                aclshmemx_roce_qp_put_nbi(d, s, ub, c, next, qp, 0, action);
            }
        });
        eqp_batch(at(EQP_ROCE_QP_GET_BATCH), mine, cnt, [&](int32_t *d, int32_t *s, uint32_t c, auto action) {
            if (tensors) {
                aclshmemx_roce_qp_get_nbi(eqp_gt(d), eqp_gt(s), buf, c, next, qp, 0, action);
            } else {
                aclshmemx_roce_qp_get_nbi(d, s, ub, c, next, qp, 0, action);
            }
        });
        eqp_batch(at(EQP_ROCE_PUT_BATCH), mine, cnt, [&](int32_t *d, int32_t *s, uint32_t c, auto action) {
            if (tensors) {
                aclshmemx_roce_put_nbi(eqp_gt(d), eqp_gt(s), buf, c, next, 0, action);
            } else {
                aclshmemx_roce_put_nbi(d, s, ub, c, next, 0, action);
            }
        });
        eqp_batch(at(EQP_ROCE_GET_BATCH), mine, cnt, [&](int32_t *d, int32_t *s, uint32_t c, auto action) {
            if (tensors) {
                aclshmemx_roce_get_nbi(eqp_gt(d), eqp_gt(s), buf, c, next, 0, action);
            } else {
                aclshmemx_roce_get_nbi(d, s, ub, c, next, 0, action);
            }
        });
        if (tensors) {
            aclshmemx_roce_qp_quiet(static_cast<uint32_t>(next), qp, buf, 0);
        } else {
            aclshmemx_roce_qp_quiet(static_cast<uint32_t>(next), qp, ub, 0);
        }
        aclshmemx_roce_quiet(static_cast<uint32_t>(next), ub, 0);
    }

    /* UDMA: the same on queue pair qp and QP 0, and the signal put on queue pair qp */
    if (tensors) {
        aclshmemx_udma_qp_put_nbi(eqp_gt(at(EQP_UDMA_QP_PUT)), eqp_gt(mine), buf, n, next, qp);
        aclshmemx_udma_qp_get_nbi<int32_t>(eqp_gt(at(EQP_UDMA_QP_GET)), eqp_gt(mine), buf, n, next, qp, 0);
    } else {
        aclshmemx_udma_qp_put_nbi<int32_t>(at(EQP_UDMA_QP_PUT), mine, ub, n, next, qp, 0);
        aclshmemx_udma_qp_get_nbi(at(EQP_UDMA_QP_GET), mine, ub, n, next, qp);
    }
    eqp_batch(at(EQP_UDMA_QP_PUT_BATCH), mine, cnt, [&](int32_t *d, int32_t *s, uint32_t c, auto action) {
        if (tensors) {
            aclshmemx_udma_qp_put_nbi(eqp_gt(d), eqp_gt(s), buf, c, next, qp, 0, action);
        } else {
            aclshmemx_udma_qp_put_nbi(d, s, ub, c, next, qp, 0, action);
        }
    });
    eqp_batch(at(EQP_UDMA_QP_GET_BATCH), mine, cnt, [&](int32_t *d, int32_t *s, uint32_t c, auto action) {
        if (tensors) {
            aclshmemx_udma_qp_get_nbi(eqp_gt(d), eqp_gt(s), buf, c, next, qp, 0, action);
        } else {
            aclshmemx_udma_qp_get_nbi<int32_t, PIPE_MTE3>(d, s, ub, c, next, qp, 0, action);
        }
    });
    eqp_batch(at(EQP_UDMA_PUT_BATCH), mine, cnt, [&](int32_t *d, int32_t *s, uint32_t c, auto action) {
        if (tensors) {
            aclshmemx_udma_put_nbi(eqp_gt(d), eqp_gt(s), buf, c, next, 0, action);
        } else {
            aclshmemx_udma_put_nbi<int32_t, PIPE_MTE3>(d, s, ub, c, next, 0, action);
        }
    });
    eqp_batch(at(EQP_UDMA_GET_BATCH), mine, cnt, [&](int32_t *d, int32_t *s, uint32_t c, auto action) {
        if (tensors) {
            aclshmemx_udma_get_nbi(eqp_gt(d), eqp_gt(s), buf, c, next, 0, action);
        } else {
            aclshmemx_udma_get_nbi(d, s, ub, c, next, 0, action);
        }
    });
    if (tensors) {
        aclshmemx_udma_qp_put_signal_nbi<int32_t, PIPE_MTE3>(at(EQP_UDMA_QP_SIGNAL), mine, n, sig + qp, 1000 + qp,
                                                             next, qp, reinterpret_cast<uint8_t *>(uintptr_t{4096}), 0);
    } else {
        aclshmemx_udma_qp_put_signal_nbi(at(EQP_UDMA_QP_SIGNAL), mine, n, sig + qp, 1000 + qp, next, qp);
    }
    aclshmemx_udma_qp_quiet(next, qp);
    aclshmemx_udma_quiet(next);
}

/* queue pairs that do not exist (kEqpQps and beyond) and PEs out of range: every call is refused
   (logged), nothing is written, a refused deferred operation is not counted */
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void EngineQpRefused(int32_t *dst, int32_t *src, uint64_t *sig,
                                                                         int32_t *counts, int next, int npes)
{
    const uint32_t bad = kEqpQps + static_cast<uint32_t>(GetBlockIdx()) * 7;
    const uint32_t n = kEqpPer;
    auto *ub = reinterpret_cast<int32_t *>(uintptr_t{1024});
    LocalTensor<int32_t> buf;
    buf.address_.logicPos = static_cast<uint8_t>(TPosition::VECOUT);
    buf.address_.bufferAddr = 1024;
    buf.address_.dataLen = 64;
    int32_t *d = dst + GetBlockIdx() * 4 * kEqpPer;
    aclshmemx_submit_state_t state{};
    aclshmemx_defer_t defer(state);
    aclshmemx_submit_t submit(state);
    aclshmemx_roce_qp_put_nbi(d, src, ub, n, next, bad, 0);
    aclshmemx_roce_qp_get_nbi(eqp_gt(d + kEqpPer), eqp_gt(src), buf, n, next, bad, 0);
    aclshmemx_roce_qp_put_nbi(d, src, ub, n, next, bad, 0, defer);
    aclshmemx_roce_qp_get_nbi(eqp_gt(d + kEqpPer), eqp_gt(src), buf, n, next, bad, 0, defer);
    aclshmemx_udma_qp_put_nbi(d, src, ub, n, next, bad, 0, defer);
    aclshmemx_udma_qp_get_nbi(eqp_gt(d + kEqpPer), eqp_gt(src), buf, n, next, bad, 0, defer);
    counts[GetBlockIdx()] = static_cast<int32_t>(state.pending_count);
    aclshmemx_roce_qp_get_nbi(d + kEqpPer, src, ub, n, next, bad, 0, submit);
    aclshmemx_udma_qp_put_nbi(eqp_gt(d), eqp_gt(src), buf, n, next, bad, 0, submit);
    aclshmemx_udma_qp_put_nbi(eqp_gt(d), eqp_gt(src), buf, n, next, bad);
    aclshmemx_udma_qp_get_nbi(d + kEqpPer, src, ub, n, next, bad);
    aclshmemx_udma_qp_put_signal_nbi(d, src, n, sig, 5, next, bad);
    aclshmemx_udma_qp_put_signal_nbi<int32_t, PIPE_MTE3>(d, src, n, sig, 5, next, bad,
                                                         reinterpret_cast<uint8_t *>(uintptr_t{4096}));
    aclshmemx_roce_qp_quiet(static_cast<uint32_t>(next), bad, ub, 0);
    aclshmemx_roce_qp_quiet(static_cast<uint32_t>(next), bad, buf, 0);
    aclshmemx_udma_qp_quiet(next, bad);
    /* a queue pair that exists, PEs that do not: refused by the copies */
    aclshmemx_roce_qp_put_nbi(d + 2 * kEqpPer, src, ub, n, npes, 0, 0);
    aclshmemx_roce_qp_get_nbi(d + 2 * kEqpPer, src, ub, n, -1, 1, 0, defer);
    aclshmemx_udma_qp_put_nbi(d + 3 * kEqpPer, src, ub, n, npes + 3, 2);
    aclshmemx_udma_qp_get_nbi(d + 3 * kEqpPer, src, ub, n, -2, 3, 0, submit);
}

/* the longest RoCE queue-pair batch (ACLSHMEM_ROCE_QP_AGGREGATE_MAX_OPS with its submit) works; the
   deferred operation that leaves no room for a submit after as many is not carried out and ends
   the block, as the original aborts the kernel */
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void RoceQpBatchLimit(int32_t *lim, int32_t *val, int32_t *counts,
                                                                          int next)
{
    constexpr uint32_t kMax = ACLSHMEM_ROCE_QP_AGGREGATE_MAX_OPS;
    auto *ub = reinterpret_cast<int32_t *>(uintptr_t{1024});
    aclshmemx_submit_state_t state{};
    aclshmemx_defer_t defer(state);
    aclshmemx_submit_t submit(state);
    for (uint32_t i = 0; i + 1 < kMax; i++) {
        aclshmemx_roce_qp_put_nbi(lim + i, val, ub, 1, next, 1, 0, defer);
    }
    counts[0] = static_cast<int32_t>(state.pending_count);
    aclshmemx_roce_qp_put_nbi(lim + kMax - 1, val, ub, 1, next, 1, 0, submit);
    counts[1] = static_cast<int32_t>(state.pending_count);
    aclshmemx_roce_qp_quiet(static_cast<uint32_t>(next), 1, ub, 0);
    for (uint32_t i = 0; i + 1 < kMax; i++) {
        aclshmemx_roce_qp_get_nbi(lim + kMax + i, val, ub, 1, next, 1, 0, defer);
    }
    counts[2] = static_cast<int32_t>(state.pending_count);
    aclshmemx_roce_qp_get_nbi(lim + 2 * kMax - 1, val, ub, 1, next, 1, 0, defer);
    counts[3] = static_cast<int32_t>(state.pending_count); /* not reached */
}

/* before init (main): four queue pairs for the RoCE and UDMA engines */
int engine_qp_before_init()
{
    QP_RC(aclshmemx_set_qp_num(ACLSHMEM_DATA_OP_ROCE, kEqpQps), 0);
    QP_RC(aclshmemx_set_qp_num(ACLSHMEM_DATA_OP_UDMA, kEqpQps), 0);
    return 0;
}

void engine_qp(aclrtStream stream)
{
    const int me = aclshmem_my_pe();
    const int npes = aclshmem_n_pes();
    const int next = (me + 1) % npes;
    const int prev = (me + npes - 1) % npes;
    constexpr int kSrc = static_cast<int>(kEqpQps) * kEqpPer;
    constexpr int kDst = EQP_REGIONS * kSrc;
    constexpr int kCounts = static_cast<int>(kEqpQps) * kEqpCounts;
    auto *src = static_cast<int32_t *>(aclshmem_calloc(kSrc, sizeof(int32_t)));
    auto *dst = static_cast<int32_t *>(aclshmem_calloc(kDst, sizeof(int32_t)));
    auto *sig = static_cast<uint64_t *>(aclshmem_calloc(kEqpQps, sizeof(uint64_t)));
    auto *counts = static_cast<int32_t *>(aclshmem_calloc(kCounts, sizeof(int32_t)));
    for (int i = 0; i < kSrc; i++) {
        src[i] = me * 100000 + i;
    }
    for (int i = 0; i < kCounts; i++) {
        counts[i] = -1;
    }
    /* the queue-pair metadata the original's device code reads (aclshmemi_qp_info_fetch) */
    {
        aclshmemi_rdma_info *info = aclshmemi_qp_info_fetch();
        CHECK(info != nullptr && info->qp_num == kEqpQps && info->sq_ptr == 0 && info->mem_ptr == 0,
              "aclshmemi_qp_info_fetch: %p, qp_num %u", static_cast<void *>(info), info ? info->qp_num : 0u);
        CHECK(aclshmemi_get_qp_info_address(0) == static_cast<void *>(info) &&
                  aclshmemi_get_qp_info_address(1) == nullptr,
              "aclshmemi_get_qp_info_address");
    }
    aclshmem_barrier_all();
    EngineQp<<<kEqpQps, nullptr, stream>>>(dst, src, sig, counts, next);
    ACL_OK(aclrtSynchronizeStream(stream));
    aclshmem_barrier_all();
    check_pattern_regions(dst, EQP_REGIONS, kSrc, 100000, [&](int r) { return eqp_is_get(r) ? next : prev; });
    for (uint32_t q = 0; q < kEqpQps; q++) {
        CHECK(sig[q] == 1000 + q, "signal of queue pair %u is %llu", q, static_cast<unsigned long long>(sig[q]));
        for (int k = 0; k < kEqpCounts; k++) {
            int32_t want = k % 2 == 0 ? kEqpChunks - 1 : 0;
            CHECK(counts[q * kEqpCounts + k] == want, "block %u: pending_count %d is %d, expected %d", q, k,
                  counts[q * kEqpCounts + k], want);
        }
    }

    /* refused: queue pairs that do not exist, PEs that do not exist */
    std::memset(dst, 0, kDst * sizeof(int32_t));
    std::memset(sig, 0, kEqpQps * sizeof(uint64_t));
    for (int i = 0; i < kCounts; i++) {
        counts[i] = -1;
    }
    aclshmem_barrier_all();
    EngineQpRefused<<<2, nullptr, stream>>>(dst, src, sig, counts, next, npes);
    ACL_OK(aclrtSynchronizeStream(stream));
    aclshmem_barrier_all();
    int written = 0;
    for (int i = 0; i < kDst; i++) {
        written += dst[i] != 0;
    }
    CHECK(written == 0, "refused calls wrote %d elements", written);
    CHECK(sig[0] == 0, "a refused signal put set the signal to %llu", static_cast<unsigned long long>(sig[0]));
    CHECK(counts[0] == 0 && counts[1] == 0, "refused deferred operations counted: %d %d", counts[0], counts[1]);

    /* the batch-length limit of the RoCE queue-pair batches */
    constexpr int kMax = static_cast<int>(ACLSHMEM_ROCE_QP_AGGREGATE_MAX_OPS);
    auto *lim = static_cast<int32_t *>(aclshmem_calloc(2 * kMax, sizeof(int32_t)));
    for (int i = 0; i < kCounts; i++) {
        counts[i] = -1;
    }
    src[0] = me * 100000 + 1;
    aclshmem_barrier_all();
    RoceQpBatchLimit<<<1, nullptr, stream>>>(lim, src, counts, next);
    aclError rc = aclrtSynchronizeStream(stream);
    CHECK(rc != ACL_SUCCESS, "a batch longer than ACLSHMEM_ROCE_QP_AGGREGATE_MAX_OPS: synchronize returned success");
    aclshmem_barrier_all();
    CHECK(counts[0] == kMax - 1 && counts[1] == 0 && counts[2] == kMax - 1 && counts[3] == -1,
          "batch limit: pending counts %d %d %d %d", counts[0], counts[1], counts[2], counts[3]);
    int wrong = 0;
    for (int i = 0; i < kMax; i++) {
        wrong += lim[i] != prev * 100000 + 1;
    }
    for (int i = 0; i + 1 < kMax; i++) {
        wrong += lim[kMax + i] != next * 100000 + 1;
    }
    CHECK(wrong == 0, "batch limit: %d elements of the accepted operations wrong", wrong);
    CHECK(lim[2 * kMax - 1] == 0, "the operation beyond the batch limit wrote %d", lim[2 * kMax - 1]);
    aclshmem_barrier_all();
    aclshmem_free(lim);
    aclshmem_free(counts);
    aclshmem_free(sig);
    aclshmem_free(dst);
    aclshmem_free(src);
}

/* ---------------------------------------------------------------------------------------------- */
/* graph: kernels captured into an ACL graph run again with every execution                         */
/* ---------------------------------------------------------------------------------------------- */

[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void AddToPeers(int32_t *counter, int n_pes)
{
    for (int pe = 0; pe < n_pes; pe++) {
        aclshmem_int32_atomic_add(counter, 1, pe);
    }
}

static int g_graph_host_runs = 0;
static void graph_host_fn(void *)
{
    g_graph_host_runs++;
}

void graph(aclrtStream stream)
{
    constexpr uint32_t kBlocks = 8;
    int n = aclshmem_n_pes();
    auto *counter = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    aclshmem_barrier_all();
    aclmdlRI ri = nullptr;
    ACL_OK(aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    AddToPeers<<<kBlocks, nullptr, stream>>>(counter, n);
    ACL_OK(aclrtLaunchHostFunc(stream, graph_host_fn, nullptr));
    AddToPeers<<<kBlocks, nullptr, stream>>>(counter, n);
    ACL_OK(aclmdlRICaptureEnd(stream, &ri));
    ACL_OK(aclrtSynchronizeStream(stream));
    aclshmem_barrier_all();
    CHECK(*counter == 0, "a captured kernel ran at capture time (%d)", *counter);
    CHECK(g_graph_host_runs == 0, "a captured host function ran at capture time");
    aclshmem_barrier_all();
    for (int i = 1; i <= 3; i++) {
        ACL_OK(aclmdlRIExecuteAsync(ri, stream));
        ACL_OK(aclrtSynchronizeStream(stream));
        aclshmem_barrier_all();
        CHECK(*counter == i * 2 * static_cast<int>(kBlocks) * n, "after %d executions: %d", i, *counter);
        CHECK(g_graph_host_runs == i, "host function ran %d times after %d executions", g_graph_host_runs, i);
        aclshmem_barrier_all(); /* everyone checked before the next execution adds */
    }
    ACL_OK(aclmdlRIDestroy(ri));
    aclshmem_barrier_all();
    aclshmem_free(counter);

    /* on-stream host calls captured too (upstream graph demos capture aclshmemx_handle_wait): a put
       to the right neighbour and a handle wait, whose barrier makes the left neighbour's put visible
       as soon as this PE's execution ended */
    const int me = aclshmem_my_pe(), right = (me + 1) % n, left = (me + n - 1) % n;
    auto *src = static_cast<int32_t *>(aclshmem_calloc(4, sizeof(int32_t)));
    auto *dst = static_cast<int32_t *>(aclshmem_calloc(4, sizeof(int32_t)));
    aclshmem_handle_t world = {ACLSHMEM_TEAM_WORLD};
    aclshmem_barrier_all();
    ACL_OK(aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    aclshmemx_putmem_on_stream(dst, src, 4 * sizeof(int32_t), right, stream);
    aclshmemx_handle_wait(world, stream);
    aclshmemx_barrier_on_stream(ACLSHMEM_TEAM_WORLD, stream);
    ACL_OK(aclmdlRICaptureEnd(stream, &ri));
    ACL_OK(aclrtSynchronizeStream(stream));
    for (int i = 0; i < 4; i++) {
        src[i] = 7;
    }
    aclshmem_barrier_all();
    CHECK(dst[0] == 0, "a captured on-stream put ran at capture time (%d)", dst[0]);
    aclshmem_barrier_all();
    for (int r = 1; r <= 3; r++) {
        for (int i = 0; i < 4; i++) {
            src[i] = me * 1000 + r * 10 + i;
        }
        ACL_OK(aclmdlRIExecuteAsync(ri, stream));
        ACL_OK(aclrtSynchronizeStream(stream));
        for (int i = 0; i < 4; i++) {
            CHECK(dst[i] == left * 1000 + r * 10 + i, "execution %d: dst[%d] = %d, expected %d", r, i, dst[i],
                  left * 1000 + r * 10 + i);
        }
        aclshmem_barrier_all(); /* everyone checked before the next execution puts */
    }
    ACL_OK(aclmdlRIDestroy(ri));
    aclshmem_barrier_all();
    aclshmem_free(dst);
    aclshmem_free(src);
}

/* ---------------------------------------------------------------------------------------------- */
/* state: the device-state record (aclshmemi_get_state) and a team from team_pools                 */
/* ---------------------------------------------------------------------------------------------- */

struct StateSeen {
    int mype, npes, world_size, world_mype;
    int team_size, team_mype, team_start, team_stride, team_idx;
    int map0, map1, rev_me;
    int64_t mte_ub;
    uint32_t mte_size;
    int peer_base_ok;
    int topo_me;
    int topo_peer;
    int topo_agrees;
    int peer_mapped;
    int after_barrier;
    int sync_ok;
};

[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void ReadState(aclshmem_team_t team, StateSeen *out,
                                                                   int32_t *flag)
{
    aclshmem_device_host_state_t *st = aclshmemi_get_state();
    out->mype = st->mype;
    out->npes = st->npes;
    out->world_size = st->team_pools[ACLSHMEM_TEAM_WORLD]->size;
    out->world_mype = st->team_pools[ACLSHMEM_TEAM_WORLD]->mype;
    aclshmemx_team_t *t = st->team_pools[team];
    out->team_size = t->size;
    out->team_mype = t->mype;
    out->team_start = t->start;
    out->team_stride = t->stride;
    out->team_idx = t->team_idx;
    out->map0 = t->pe_mapping[0];
    out->map1 = t->size > 1 ? t->pe_mapping[1] : -2;
    out->rev_me = t->pe_mapping[ACLSHMEM_MAX_PES + st->mype];
    out->mte_ub = st->mte_config.aclshmem_ub;
    out->mte_size = st->mte_config.ub_size;
    int peer = (st->mype + 1) % st->npes;
    /* the peer's copy of `flag`, through the record's heap table and through aclshmem_ptr */
    /* (a peer without direct access, over UCX or with ACLSHMEM_DIRECT_ACCESS=0, has neither) */
    uint8_t *peer_base = (uint8_t *)st->p2p_device_heap_base[peer];
    uint8_t *via_table = peer_base ? peer_base + ((uint8_t *)flag - (uint8_t *)st->heap_base) : nullptr;
    out->peer_base_ok = via_table == (uint8_t *)aclshmem_ptr(flag, peer);
    out->topo_me = st->topo_list[st->mype];
    out->topo_peer = st->topo_list[peer];
    out->peer_mapped = aclshmem_ptr(flag, peer) != nullptr;
    /* topo_list's MTE bit marks exactly the PEs aclshmem_ptr reaches */
    out->topo_agrees = ((out->topo_me & ACLSHMEM_TRANSPORT_MTE) != 0) == (aclshmem_ptr(flag, st->mype) != nullptr) &&
                       ((out->topo_peer & ACLSHMEM_TRANSPORT_MTE) != 0) == (out->peer_mapped != 0);
    /* the barriers' sync pool and counters: distinct, in the heap's reserved region before user data */
    uint8_t *heap = (uint8_t *)st->heap_base;
    uint8_t *pool = (uint8_t *)(uintptr_t)st->sync_pool;
    uint8_t *counters = (uint8_t *)(uintptr_t)st->sync_counter;
    out->sync_ok = pool >= heap && counters >= heap && pool < (uint8_t *)flag && counters < (uint8_t *)flag &&
                   pool != counters && ((uintptr_t)pool % 64) == 0 && ((uintptr_t)counters % 64) == 0;
    /* a PE-level RoCE barrier over the team from this single block */
    aclshmem_int32_atomic_add(flag, 1, peer);
    aclshmemx_roce_barrier(t);
    out->after_barrier = aclshmem_int32_atomic_fetch(flag, st->mype);
}

/* The UB configurations in the record (offset, size, sync id of MTE, SDMA, RDMA, UDMA: out[0..12)),
   then, with `set`, after the device setters (SDMA, and UDMA below its 128-byte minimum, which
   changes nothing): out[12..24) */
static __aicore__ void read_ub(aclshmem_device_host_state_t *st, int64_t *out)
{
    const aclshmem_ub_config_t *c[4] = {&st->mte_config, &st->sdma_config, &st->rdma_config, &st->udma_config};
    for (int e = 0; e < 4; e++) {
        out[3 * e] = c[e]->aclshmem_ub;
        out[3 * e + 1] = c[e]->ub_size;
        out[3 * e + 2] = c[e]->sync_id;
    }
}

[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void ReadUbConfigs(int64_t *out, int32_t set)
{
    aclshmem_device_host_state_t *st = aclshmemi_get_state();
    read_ub(st, out);
    if (set != 0) {
        aclshmemx_set_sdma_config(4096, 512, 2);
        aclshmemx_set_udma_config(8192, 64, 3);
        read_ub(st, out + 12);
    }
}

/* The host setters republish the record, the device setters write it: the same kernel's later
   reads and later kernels see the values (the record kept those of its first use). */
static void ub_configs(aclrtStream stream)
{
    auto *out = static_cast<int64_t *>(aclshmem_calloc(24, sizeof(int64_t)));
    ReadUbConfigs<<<1, nullptr, stream>>>(out, 0);
    ACL_OK(aclrtSynchronizeStream(stream));
    const int64_t defaults[12] = {0, 16384, 0, 195584, 64, 0, 194560, 128, 0, 193536, 128, 0};
    for (int i = 0; i < 12; i++) {
        CHECK(out[i] == defaults[i], "default UB config word %d: %lld, expected %lld", i, (long long)out[i],
              (long long)defaults[i]);
    }
    CHECK(aclshmemx_set_mte_config(32768, 8192, 3) == 0, "host MTE setter");
    CHECK(aclshmemx_set_rdma_config(65536, 256, 1) == 0, "host RDMA setter");
    CHECK(aclshmemx_set_udma_config(1024, 100, 1) == ACLSHMEM_INVALID_VALUE, "host UDMA setter below 128 bytes");
    ReadUbConfigs<<<1, nullptr, stream>>>(out, 1);
    ACL_OK(aclrtSynchronizeStream(stream));
    const int64_t host_set[12] = {32768, 8192, 3, 195584, 64, 0, 65536, 256, 1, 193536, 128, 0};
    const int64_t device_set[12] = {32768, 8192, 3, 4096, 512, 2, 65536, 256, 1, 193536, 128, 0};
    for (int i = 0; i < 12; i++) {
        CHECK(out[i] == host_set[i], "after the host setters, word %d: %lld, expected %lld", i, (long long)out[i],
              (long long)host_set[i]);
        CHECK(out[12 + i] == device_set[i], "after the device setters, word %d: %lld, expected %lld", i,
              (long long)out[12 + i], (long long)device_set[i]);
    }
    ReadUbConfigs<<<1, nullptr, stream>>>(out, 0);
    ACL_OK(aclrtSynchronizeStream(stream));
    for (int i = 0; i < 12; i++) {
        CHECK(out[i] == device_set[i], "in the next kernel, word %d: %lld, expected %lld", i, (long long)out[i],
              (long long)device_set[i]);
    }
    /* back to the defaults for the scenarios that follow in this process */
    CHECK(aclshmemx_set_mte_config(0, 16384, 0) == 0 && aclshmemx_set_sdma_config(195584, 64, 0) == 0 &&
              aclshmemx_set_rdma_config(194560, 128, 0) == 0,
          "host setters back to the defaults");
    aclshmem_barrier_all();
    aclshmem_free(out);
}

void state(aclrtStream stream)
{
    int me = aclshmem_my_pe();
    int n = aclshmem_n_pes();
    aclshmem_team_t team = ACLSHMEM_TEAM_INVALID;
    /* a second team of every PE (a slot other than the world team's) */
    if (aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &team) != 0 ||
        team == ACLSHMEM_TEAM_INVALID) {
        std::printf("FAIL: team split\n");
        g_errors++;
        return;
    }
    auto *out = static_cast<StateSeen *>(aclshmem_calloc(1, sizeof(StateSeen)));
    auto *flag = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    aclshmem_barrier_all();
    ReadState<<<1, nullptr, stream>>>(team, out, flag);
    ACL_OK(aclrtSynchronizeStream(stream));
    CHECK(out->mype == me && out->npes == n, "mype %d npes %d", out->mype, out->npes);
    CHECK(out->world_size == n && out->world_mype == me, "world team %d %d", out->world_size, out->world_mype);
    CHECK(out->team_size == n && out->team_mype == me && out->team_start == 0 && out->team_stride == 1,
          "team size %d mype %d start %d stride %d", out->team_size, out->team_mype, out->team_start,
          out->team_stride);
    CHECK(out->team_idx == team, "team_idx %d, handle %d", out->team_idx, team);
    CHECK(out->map0 == 0 && out->map1 == 1 && out->rev_me == me, "pe_mapping %d %d %d", out->map0, out->map1,
          out->rev_me);
    CHECK(out->mte_ub == 0 && out->mte_size == 16384, "mte_config %lld %u", (long long)out->mte_ub, out->mte_size);
    CHECK(out->peer_base_ok == 1, "p2p_device_heap_base disagrees with aclshmem_ptr");
    CHECK(out->topo_agrees == 1, "topo_list[me] = %d / [peer] = %d disagree with aclshmem_ptr", out->topo_me,
          out->topo_peer);
    /* the engines chosen at init (KERNEL_TEST_ENGINES, else MTE): their transport bits for every
       mapped PE, the network ones (RoCE, UDMA) for a PE reached through a transport */
    {
        const char *e = std::getenv("KERNEL_TEST_ENGINES");
        long engines = e != nullptr ? std::strtol(e, nullptr, 0) : static_cast<long>(ACLSHMEM_DATA_OP_MTE);
        const int t_mte = ACLSHMEM_TRANSPORT_MTE, t_sdma = ACLSHMEM_TRANSPORT_SDMA, t_roce = ACLSHMEM_TRANSPORT_ROCE,
                  t_udma = ACLSHMEM_TRANSPORT_UDMA;
        int chosen = ((engines & ACLSHMEM_DATA_OP_SDMA) ? t_sdma : 0) | ((engines & ACLSHMEM_DATA_OP_ROCE) ? t_roce : 0) |
                     ((engines & ACLSHMEM_DATA_OP_UDMA) ? t_udma : 0);
        int mapped = t_mte | chosen;
        int remote = chosen & (t_roce | t_udma);
        CHECK(out->topo_me == mapped, "topo_list[me] = %d, expected %d", out->topo_me, mapped);
        CHECK(out->topo_peer == (out->peer_mapped ? mapped : remote), "topo_list[peer] = %d (mapped %d)",
              out->topo_peer, out->peer_mapped);
        if (std::getenv("ACLSHMEM_TRANSPORT") == nullptr && std::getenv("ACLSHMEM_DIRECT_ACCESS") == nullptr) {
            CHECK(out->peer_mapped == 1, "the peer is not mapped on shared memory");
        }
    }
    CHECK(out->sync_ok == 1, "sync_pool / sync_counter not in the heap's reserved region");
    CHECK(out->after_barrier == 1, "after the RoCE barrier the peer's add is visible: %d", out->after_barrier);
    aclshmem_barrier_all();
    aclshmem_team_destroy(team);
    aclshmem_free(flag);
    aclshmem_free(out);    ub_configs(stream);
}

/* ---------------------------------------------------------------------------------------------- */
/* device_signals                                                                                   */
/* ---------------------------------------------------------------------------------------------- */

/* Spec device-api 2.9: a put-with-signal whose sig_op is neither SET nor ADD copies the data and
   leaves the signal alone (every family: bytes, typed, typed _nbi, sized, non-contiguous); 2.10:
   aclshmem_signal_wait_until returns the signal's value; 2.5.3: the int8_t MTE copies with a
   staging buffer and an L2 hint. The kernel on each PE writes to the next PE's buffers. */
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void DeviceSignals(int32_t *dst, int32_t *src, int32_t *sig,
                                                                       int32_t *flag, int32_t *seen, int8_t *l2dst,
                                                                       int8_t *l2src)
{
    int me = aclshmem_my_pe();
    int next = (me + 1) % aclshmem_n_pes();
    aclshmem_putmem_signal(dst, src, 4 * sizeof(int32_t), sig, 77, 9, next);
    aclshmem_int32_put_signal(dst + 4, src + 4, 4, sig, 77, 2, next);
    aclshmem_int32_put_signal_nbi(dst + 8, src + 8, 4, sig, 77, -1, next);
    aclshmem_put32_signal(dst + 12, src + 12, 4, sig, 77, 5, next);
    non_contiguous_copy_param rows{2, 2, 4, 4}; /* elements 16, 17, 20, 21 */
    aclshmem_int32_put_signal(dst + 16, src + 16, rows, sig, 77, 3, next);
    aclshmem_quiet();
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    int8_t *staging = reinterpret_cast<int8_t *>(static_cast<uintptr_t>(buf.Get<int8_t>().GetPhyAddr()));
    aclshmemx_mte_put_nbi(l2dst, l2src, staging, 256, 100, next, 0, false);
    aclshmemx_mte_get_nbi(l2dst + 128, l2src, staging, 256, 50, next, 0, true);
    aclshmem_quiet();
    /* then the flag: the next PE waits for 41 or more and sees the value that ended its wait */
    aclshmemx_signal_op(flag, 42, ACLSHMEM_SIGNAL_SET, next);
    int32_t v = aclshmem_signal_wait_until(flag, ACLSHMEM_CMP_GE, 41);
    seen[0] = v;
    seen[1] = aclshmem_signal_wait_until(flag, 17, 0); /* an unknown cmp: no wait, the value */
    /* as the allgather kernels do: publish a block in this PE's own copy, set this PE's own flag,
       and poll the next PE's flag through aclshmem_ptr (the waits read the address as given,
       2.0.4); then its block, read through aclshmem_ptr too */
    int32_t *own = seen + 4, *block = seen + 8;
    for (int i = 0; i < 4; i++) {
        block[i] = 500 * (me + 1) + i;
    }
    aclshmemx_signal_op(own, 1, ACLSHMEM_SIGNAL_SET, me);
    auto *peer_flag = static_cast<int32_t *>(aclshmem_ptr(own, next));
    auto *peer_block = static_cast<int32_t *>(aclshmem_ptr(block, next));
    if (peer_flag != nullptr && peer_block != nullptr) {
        seen[2] = aclshmem_signal_wait_until(peer_flag, ACLSHMEM_CMP_EQ, 1);
        aclshmem_int32_wait_until(peer_flag, ACLSHMEM_CMP_GE, 1);
        seen[3] = aclshmem_int32_test(peer_flag, ACLSHMEM_CMP_EQ, 1) * 10 +
                  static_cast<int32_t>(aclshmem_int32_test_any(peer_flag, 1, nullptr, ACLSHMEM_CMP_EQ, 1) == 0);
        for (int i = 0; i < 4; i++) {
            seen[12 + i] = peer_block[i];
        }
    }
}

static void device_signals(aclrtStream stream)
{
    int me = aclshmem_my_pe();
    int n = aclshmem_n_pes();
    int prev = (me + n - 1) % n;
    int next = (me + 1) % n;
    auto *dst = static_cast<int32_t *>(aclshmem_calloc(24, sizeof(int32_t)));
    auto *src = static_cast<int32_t *>(aclshmem_calloc(24, sizeof(int32_t)));
    auto *sig = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    auto *flag = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    auto *seen = static_cast<int32_t *>(aclshmem_calloc(16, sizeof(int32_t)));
    auto *l2dst = static_cast<int8_t *>(aclshmem_calloc(256, 1));
    auto *l2src = static_cast<int8_t *>(aclshmem_calloc(128, 1));
    for (int i = 0; i < 24; i++) {
        src[i] = 1000 * (me + 1) + i;
    }
    for (int i = 0; i < 128; i++) {
        l2src[i] = static_cast<int8_t>(me * 16 + i % 100);
    }
    aclshmem_barrier_all();
    DeviceSignals<<<1, nullptr, stream>>>(dst, src, sig, flag, seen, l2dst, l2src);
    ACL_OK(aclrtSynchronizeStream(stream));
    aclshmem_barrier_all();
    for (int i = 0; i < 24; i++) {
        bool written = i < 16 || i == 16 || i == 17 || i == 20 || i == 21;
        int32_t want = written ? 1000 * (prev + 1) + i : 0;
        CHECK(dst[i] == want, "put-with-signal with a bad sig_op: element %d is %d, expected %d", i, dst[i], want);
    }
    CHECK(*sig == 0, "a bad sig_op changed the signal to %d", *sig);
    CHECK(seen[0] == 42 && seen[1] == 42, "aclshmem_signal_wait_until returned %d / %d, expected 42", seen[0],
          seen[1]);
    if (aclshmem_ptr(seen, next) != nullptr) {
        CHECK(seen[2] == 1, "the wait on the next PE's flag through aclshmem_ptr returned %d", seen[2]);
        CHECK(seen[3] == 11, "test / test_any on the next PE's flag through aclshmem_ptr: %d", seen[3]);
        for (int i = 0; i < 4; i++) {
            CHECK(seen[12 + i] == 500 * (next + 1) + i, "the next PE's block through aclshmem_ptr: [%d] = %d", i,
                  seen[12 + i]);
        }
    }
    for (int i = 0; i < 100; i++) {
        CHECK(l2dst[i] == static_cast<int8_t>(prev * 16 + i % 100), "MTE put with L2 hint: byte %d", i);
    }
    for (int i = 0; i < 50; i++) {
        CHECK(l2dst[128 + i] == static_cast<int8_t>(next * 16 + i % 100), "MTE get with L2 hint: byte %d", i);
    }
    CHECK(l2dst[100] == 0 && l2dst[178] == 0, "MTE copies with L2 hint wrote past their length");
    aclshmem_barrier_all();
    for (void *p : {(void *)dst, (void *)src, (void *)sig, (void *)flag, (void *)seen, (void *)l2dst, (void *)l2src}) {
        aclshmem_free(p);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* tque                                                                                             */
/* ---------------------------------------------------------------------------------------------- */

/* A queue of two buffers: an accumulator stays allocated while a temporary is allocated and freed
   four times; the temporaries never get the accumulator's buffer (AscendC's allocator hands out
   free buffers only). A third allocation while both are taken is refused. */
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void TqueAccumulate(float *in, float *out, int32_t *refused)
{
    constexpr int32_t n = 64;
    TPipe pipe;
    TQue<TPosition::VECIN, 2> q;
    pipe.InitBuffer(q, 2, n * sizeof(float));
    LocalTensor<float> acc = q.AllocTensor<float>();
    Duplicate(acc, 0.0f, n);
    for (int32_t r = 0; r < 4; r++) {
        LocalTensor<float> tmp = q.AllocTensor<float>();
        GlobalTensor<float> g;
        g.SetGlobalBuffer(in + r * n);
        DataCopy(tmp, g, n);
        Add(acc, acc, tmp, n);
        q.FreeTensor(tmp);
    }
    GlobalTensor<float> o;
    o.SetGlobalBuffer(out);
    DataCopy(o, acc, n);
    LocalTensor<float> second = q.AllocTensor<float>();
    try {
        (void)q.AllocTensor<float>();
    } catch (const std::runtime_error &) {
        *refused = 1;
    }
    q.FreeTensor(second);
    q.FreeTensor(acc);
}

static void tque(aclrtStream stream)
{
    auto *in = static_cast<float *>(aclshmem_malloc(4 * 64 * sizeof(float)));
    auto *out = static_cast<float *>(aclshmem_calloc(64, sizeof(float)));
    auto *refused = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    for (int r = 0; r < 4; r++) {
        for (int i = 0; i < 64; i++) {
            in[r * 64 + i] = static_cast<float>((r + 1) * 100 + i);
        }
    }
    TqueAccumulate<<<1, nullptr, stream>>>(in, out, refused);
    ACL_OK(aclrtSynchronizeStream(stream));
    for (int i = 0; i < 64; i++) {
        CHECK(out[i] == static_cast<float>(1000 + 4 * i), "accumulated [%d] = %g, expected %d", i, out[i], 1000 + 4 * i);
    }
    CHECK(*refused == 1, "a third AllocTensor of a two-buffer queue with both allocated was not refused");
    aclshmem_barrier_all();
    aclshmem_free(refused);
    aclshmem_free(out);
    aclshmem_free(in);
}

/* ---------------------------------------------------------------------------------------------- */
/* kinds                                                                                            */
/* ---------------------------------------------------------------------------------------------- */

/* Each context of a launch adds 1 to out[0] and raises out[1] to its GetBlockIdx(): an AIV-only
   launch of B blocks counts B contexts with indices below B; a MIX launch counts 3 per block. The
   kernels' names are pasted by macros (as upstream examples define one kernel per type), so
   aclshmem-cxx finds their kinds only after preprocessing. */
#define KIND_BODY                                                                                   \
    {                                                                                               \
        __atomic_fetch_add(&out[0], 1, __ATOMIC_SEQ_CST);                                           \
        int32_t idx = static_cast<int32_t>(GetBlockIdx());                                          \
        int32_t cur = __atomic_load_n(&out[1], __ATOMIC_SEQ_CST);                                   \
        while (idx > cur &&                                                                         \
               !__atomic_compare_exchange_n(&out[1], &cur, idx, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) { \
        }                                                                                           \
    }
#define KIND_RATIO(type) \
    extern "C" [[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void KindRatio_##type(int32_t *out) KIND_BODY
#define KIND_VECTOR(type) ACLSHMEM_GLOBAL_VECTOR void KindVector_##type(int32_t *out) KIND_BODY
#define KIND_MIX(type) __global__ __aicore__ void KindMix_##type(int32_t *out) KIND_BODY
KIND_RATIO(int32_t)
KIND_RATIO(float)
KIND_VECTOR(int64_t)
KIND_MIX(int8_t)
/* an attribute between core_ratio and the name */
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ __attribute__((noinline)) void KindAttr(int32_t *out) KIND_BODY

void kinds(aclrtStream stream)
{
    constexpr uint32_t kBlocks = 5;
    auto *out = static_cast<int32_t *>(aclshmem_malloc(2 * sizeof(int32_t)));
    struct {
        const char *name;
        int contexts;
    } cases[] = {{"KindRatio_int32_t", kBlocks}, {"KindRatio_float", kBlocks}, {"KindVector_int64_t", kBlocks},
                 {"KindAttr", kBlocks}, {"KindMix_int8_t", 3 * kBlocks}};
    for (int c = 0; c < 5; c++) {
        out[0] = 0;
        out[1] = -1;
        switch (c) {
        case 0: KindRatio_int32_t<<<kBlocks, nullptr, stream>>>(out); break;
        case 1: KindRatio_float<<<kBlocks, nullptr, stream>>>(out); break;
        case 2: KindVector_int64_t<<<kBlocks, nullptr, stream>>>(out); break;
        case 3: KindAttr<<<kBlocks, nullptr, stream>>>(out); break;
        default: KindMix_int8_t<<<kBlocks, nullptr, stream>>>(out); break;
        }
        ACL_OK(aclrtSynchronizeStream(stream));
        CHECK(out[0] == cases[c].contexts, "%s: %d contexts ran, expected %d", cases[c].name, out[0],
              cases[c].contexts);
        int max_idx = c == 4 ? 2 * static_cast<int>(kBlocks) - 1 : static_cast<int>(kBlocks) - 1;
        CHECK(out[1] == max_idx, "%s: highest GetBlockIdx %d, expected %d", cases[c].name, out[1], max_idx);
    }
    aclshmem_free(out);
}

/* ---------------------------------------------------------------------------------------------- */
/* mix_aic                                                                                          */
/* ---------------------------------------------------------------------------------------------- */

struct MixBufs {
    int32_t *aic_seen;   /* [blocks]: set by AIC i */
    int32_t *aiv_seen;   /* [2 * blocks]: set by AIV i */
    int32_t *aiv_errors; /* [2 * blocks] */
    int32_t *aic_errors; /* [blocks] */
    int32_t *counter;    /* symmetric: AIC adds before the device barrier, read after it */
    int32_t *late;       /* [1]: AIVs that passed the final rendezvous */
};

/* AIC and AIV contexts of one MIX launch: index functions per core type, SyncAll (AIV only) while
   the AICs wait elsewhere, SyncAll<false> (every core), the AIV-only barrier while the AICs are in
   the full device barrier, and the full device barrier with the AICs' stores visible after it */
__global__ __aicore__ void MixCores(MixBufs b)
{
    int me = aclshmem_my_pe();
    int next = (me + 1) % aclshmem_n_pes();
    int64_t blocks = GetBlockNum();
    int64_t idx = GetBlockIdx();
    if ASCEND_IS_AIC {
        int32_t bad = 0;
        bad += idx < 0 || idx >= blocks;
        bad += GetSubBlockIdx() != 0;
        bad += ASCEND_IS_AIV;
        b.aic_seen[idx] = 1;
        aclshmemi_sync_core<false>(); /* 1: with every AIV (the original's internal name) */
        aclshmem_int32_atomic_add(b.counter, 1, next);
        aclshmem_barrier_all(); /* the AIVs meet here after their AIV-only barrier */
        b.aic_errors[idx] = bad;
        return;
    }
    int32_t bad = 0;
    bad += idx < 0 || idx >= 2 * blocks;
    bad += GetSubBlockNum() != 2;
    bad += GetSubBlockIdx() != idx % 2;
    b.aiv_seen[idx] = 1;
    SyncAll(); /* AIV only: the AICs are waiting at SyncAll<false> */
    for (int64_t i = 0; i < 2 * blocks; i++) {
        bad += b.aiv_seen[i] != 1;
    }
    SyncAll(); /* everyone checked before anyone writes again */
    /* the original's internal core barriers of the AIVs (older and newer names), AIV only too */
    b.aiv_seen[idx] = 2;
    aclshmemi_barrier_core_soft();
    for (int64_t i = 0; i < 2 * blocks; i++) {
        bad += b.aiv_seen[i] != 2;
    }
    aclshmemi_sync_core_soft();
    b.aiv_seen[idx] = 3;
    aclshmemi_sync_core_soft();
    for (int64_t i = 0; i < 2 * blocks; i++) {
        bad += b.aiv_seen[i] != 3;
    }
    aclshmemi_sync_core();
    b.aiv_seen[idx] = 1;
    aclshmemi_sync_core<true>();
    for (int64_t i = 0; i < 2 * blocks; i++) {
        bad += b.aiv_seen[i] != 1;
    }
    aclshmemi_sync_core<false>(); /* 1 */
    for (int64_t i = 0; i < blocks; i++) {
        bad += b.aic_seen[i] != 1;
    }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    aclshmemx_barrier_all_vec(); /* AIV only: the AICs are in aclshmem_barrier_all */
#pragma GCC diagnostic pop
    aclshmem_barrier_all();      /* every core of every PE: the AICs' adds are done */
    bad += *b.counter != static_cast<int32_t>(blocks);
    b.aiv_errors[idx] = bad;
}

/* the AICs return at once; the AIVs' full device barrier and SyncAll<false> do not wait for them */
__global__ __aicore__ void MixAicReturns(int32_t *late)
{
    if ASCEND_IS_AIC {
        return;
    }
    aclshmem_barrier_all();
    SyncAll<false>();
    __atomic_add_fetch(late, 1, __ATOMIC_SEQ_CST);
}

void mix_aic(aclrtStream stream)
{
    constexpr uint32_t kBlocks = 3;
    MixBufs b;
    b.aic_seen = static_cast<int32_t *>(aclshmem_calloc(kBlocks, sizeof(int32_t)));
    b.aiv_seen = static_cast<int32_t *>(aclshmem_calloc(2 * kBlocks, sizeof(int32_t)));
    b.aiv_errors = static_cast<int32_t *>(aclshmem_calloc(2 * kBlocks, sizeof(int32_t)));
    b.aic_errors = static_cast<int32_t *>(aclshmem_calloc(kBlocks, sizeof(int32_t)));
    b.counter = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    b.late = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    for (uint32_t i = 0; i < 2 * kBlocks; i++) {
        b.aiv_errors[i] = -1;
    }
    for (uint32_t i = 0; i < kBlocks; i++) {
        b.aic_errors[i] = -1;
    }
    aclshmem_barrier_all();
    MixCores<<<kBlocks, nullptr, stream>>>(b);
    ACL_OK(aclrtSynchronizeStream(stream));
    for (uint32_t i = 0; i < kBlocks; i++) {
        CHECK(b.aic_seen[i] == 1, "AIC %u did not run", i);
        CHECK(b.aic_errors[i] == 0, "AIC %u: %d checks failed", i, b.aic_errors[i]);
    }
    for (uint32_t i = 0; i < 2 * kBlocks; i++) {
        CHECK(b.aiv_errors[i] == 0, "AIV %u: %d checks failed", i, b.aiv_errors[i]);
    }
    aclshmem_barrier_all();
    MixAicReturns<<<kBlocks, nullptr, stream>>>(b.late);
    ACL_OK(aclrtSynchronizeStream(stream));
    CHECK(*b.late == static_cast<int32_t>(2 * kBlocks), "%d AIVs finished", *b.late);
    aclshmem_barrier_all();
    aclshmem_free(b.late);
    aclshmem_free(b.counter);
    aclshmem_free(b.aic_errors);
    aclshmem_free(b.aiv_errors);
    aclshmem_free(b.aiv_seen);
    aclshmem_free(b.aic_seen);
}

/* ---------------------------------------------------------------------------------------------- */
/* prof                                                                                             */
/* ---------------------------------------------------------------------------------------------- */

/* frame 3 twice per block around a copy; frame 1023 once; frame 1024 (out of range) ignored */
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void Profiled(int32_t *dst, int32_t *src, int words, int peer)
{
    for (int i = 0; i < 2; i++) {
        SHMEMI_PROF_START(3);
        aclshmem_int32_put(dst, src, static_cast<size_t>(words), peer);
        SHMEMI_PROF_END(3);
    }
    SHMEMI_PROF_START(1023);
    SHMEMI_PROF_END(1023);
    SHMEMI_PROF_START(1024);
    SHMEMI_PROF_END(1024);
}

/* run with SHMEM_CYCLE_PROF_PE=0: PE 0's kernels record into the table aclshmemx_get_prof returns,
   per block (blocks beyond the table's 64 are not recorded); other PEs record nothing */
void prof(aclrtStream stream)
{
    constexpr int kWords = 4096;
    constexpr uint32_t kBlocks = 70;
    int me = aclshmem_my_pe();
    int peer = (me + 1) % aclshmem_n_pes();
    auto *dst = static_cast<int32_t *>(aclshmem_calloc(kWords, sizeof(int32_t)));
    auto *src = static_cast<int32_t *>(aclshmem_calloc(kWords, sizeof(int32_t)));
    aclshmem_barrier_all();
    Profiled<<<kBlocks, nullptr, stream>>>(dst, src, kWords, peer);
    ACL_OK(aclrtSynchronizeStream(stream));
    aclshmem_prof_pe_t *p = nullptr;
    aclshmemx_get_prof(&p, false);
    if (me == 0) {
        CHECK(p != nullptr, "PE 0 is profiled but aclshmemx_get_prof returned nothing");
        if (p != nullptr) {
            CHECK(p->pe_id == 0, "pe_id %d", p->pe_id);
            for (uint32_t b = 0; b < ACLSHMEM_CYCLE_PROF_MAX_BLOCK; b++) {
                CHECK(p->block_prof[b].ccount[3] == 2, "block %u frame 3 count %lld", b,
                      static_cast<long long>(p->block_prof[b].ccount[3]));
                CHECK(p->block_prof[b].cycles[3] > 0, "block %u frame 3 cycles %lld", b,
                      static_cast<long long>(p->block_prof[b].cycles[3]));
                CHECK(p->block_prof[b].ccount[1023] == 1, "block %u frame 1023 count %lld", b,
                      static_cast<long long>(p->block_prof[b].ccount[1023]));
                CHECK(p->block_prof[b].cycles[1023] >= 0, "block %u frame 1023 cycles %lld", b,
                      static_cast<long long>(p->block_prof[b].cycles[1023]));
            }
        }
        /* a second launch adds to the same table */
        Profiled<<<2, nullptr, stream>>>(dst, src, kWords, peer);
        ACL_OK(aclrtSynchronizeStream(stream));
        aclshmemx_get_prof(&p, false);
        CHECK(p != nullptr && p->block_prof[1].ccount[3] == 4 && p->block_prof[2].ccount[3] == 2,
              "second launch: counts %lld %lld", p != nullptr ? static_cast<long long>(p->block_prof[1].ccount[3]) : -1LL,
              p != nullptr ? static_cast<long long>(p->block_prof[2].ccount[3]) : -1LL);
    } else {
        CHECK(p == nullptr, "PE %d is not profiled but got a table", me);
    }
    aclshmem_barrier_all();
    aclshmem_free(src);
    aclshmem_free(dst);
}

/* ---------------------------------------------------------------------------------------------- */
/* fault, bad_launch                                                                                */
/* ---------------------------------------------------------------------------------------------- */

[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void Faulty(int32_t *done, int bad_block)
{
    if (GetBlockIdx() == bad_block) {
        volatile int32_t *p = nullptr;
        *p = 1; /* SIGSEGV in this block only */
    }
    aclshmemx_mte_atomic_add(done, 1, aclshmem_my_pe());
}

[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void Traps(int32_t *done)
{
    if (GetBlockIdx() == 1) {
        trap();
    }
    aclshmemx_mte_atomic_add(done, 1, aclshmem_my_pe());
}

[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void SyncAfterFault(int32_t *done)
{
    /* not block 0: the log must name the block that failed first, not the lowest-numbered one
       (whose SyncAll failed because of it) */
    if (GetBlockIdx() == 2) {
        volatile int32_t *p = nullptr;
        *p = 1;
    }
    SyncAll(); /* the other blocks must not wait for block 0 for ever */
    *done = 1;
}

/* Block 0 fails (mode 0: a C++ exception, the UB overflowed; 1: a fault) before it sets the flag
   the other blocks wait for, each with another wait family (signal_wait_until, a typed wait_until,
   wait_until_all, wait_until_any): the waiting blocks must end with the launch (they waited for
   ever: the launch never completed and nothing was logged). */
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void FailBeforeFlag(int32_t *flag, int32_t *done, int mode)
{
    if (GetBlockIdx() == 0) {
        if (mode == 0) {
            AscendC::TPipe pipe;
            AscendC::TQue<AscendC::TPosition::VECIN, 1> q;
            pipe.InitBuffer(q, 1, 400 * 1024); /* more than the UB: throws */
        } else {
            volatile int32_t *p = nullptr;
            *p = 1;
        }
        aclshmemx_signal_op(flag, 1, ACLSHMEM_SIGNAL_SET, aclshmem_my_pe());
        return;
    }
    switch (GetBlockIdx() % 4) {
    case 1: aclshmem_signal_wait_until(flag, ACLSHMEM_CMP_EQ, 1); break;
    case 2: aclshmem_int32_wait_until(flag, ACLSHMEM_CMP_EQ, 1); break;
    case 3: aclshmem_int32_wait_until_all(flag, 1, nullptr, ACLSHMEM_CMP_EQ, 1); break;
    default: (void)aclshmem_int32_wait_until_any(flag, 1, nullptr, ACLSHMEM_CMP_EQ, 1); break;
    }
    aclshmemx_mte_atomic_add(done, 1, aclshmem_my_pe());
}

void fail_while_waiting(aclrtStream stream)
{
    auto *flag = static_cast<int32_t *>(aclshmem_calloc(2, sizeof(int32_t)));
    int32_t *done = flag + 1;
    for (int mode = 0; mode < 2; mode++) {
        *flag = 0;
        *done = 0;
        FailBeforeFlag<<<8, nullptr, stream>>>(flag, done, mode);
        aclError rc = aclrtSynchronizeStream(stream);
        CHECK(rc != ACL_SUCCESS, "mode %d: the failed kernel's synchronize returned success", mode);
        CHECK(*done == 0, "mode %d: %d waiting blocks went on as if the flag had come", mode, *done);
        std::printf("fail_while_waiting: mode %d: synchronize returned %d\n", mode, rc);
    }
    /* the stream and the process go on */
    *flag = 0;
    *done = 0;
    Faulty<<<8, nullptr, stream>>>(done, -1);
    ACL_OK(aclrtSynchronizeStream(stream));
    CHECK(*done == 8, "healthy kernel after the failures: %d blocks finished", *done);
    aclshmem_barrier_all();
    aclshmem_free(flag);
}

/* PE 0's block 1 faults before the device barrier its other blocks and every block of the other
   PEs wait in */
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void FaultBeforeBarrier()
{
    if (aclshmem_my_pe() == 0 && GetBlockIdx() == 1) {
        volatile int32_t *p = nullptr;
        *p = 1;
    }
    aclshmem_barrier_all();
}

/* The job must end (PE 0 can no longer take part in that barrier; going on paired the others'
   device barrier with its next host barrier, and every later barrier was one off). */
void fault_in_barrier(aclrtStream stream)
{
    FaultBeforeBarrier<<<4, nullptr, stream>>>();
    aclError rc = aclrtSynchronizeStream(stream);
    std::printf("fault_in_barrier: PE %d: synchronize returned %d\n", aclshmem_my_pe(), rc);
    std::fflush(stdout);
    aclshmem_barrier_all();
    if (aclshmem_my_pe() == 1) sleep(2);
    aclshmem_barrier_all();
    std::printf("FAIL: fault_in_barrier: PE %d went on after the barrier it missed\n", aclshmem_my_pe());
}

void fault(aclrtStream stream)
{
    auto *done = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    Faulty<<<8, nullptr, stream>>>(done, 3);
    aclError rc = aclrtSynchronizeStream(stream);
    CHECK(rc != ACL_SUCCESS, "the faulting kernel's synchronize returned success");
    CHECK(*done == 7, "%d blocks finished, expected 7", *done);
    std::printf("fault: synchronize returned %d\n", rc);

    *done = 0;
    Traps<<<4, nullptr, stream>>>(done);
    rc = aclrtSynchronizeStream(stream);
    CHECK(rc != ACL_SUCCESS, "the trapping kernel's synchronize returned success");
    CHECK(*done == 3, "%d blocks finished, expected 3", *done);

    *done = 0;
    SyncAfterFault<<<4, nullptr, stream>>>(done);
    rc = aclrtSynchronizeStream(stream);
    CHECK(rc != ACL_SUCCESS, "SyncAll after a fault: synchronize returned success");

    /* the stream and the process go on */
    *done = 0;
    Faulty<<<8, nullptr, stream>>>(done, -1);
    ACL_OK(aclrtSynchronizeStream(stream));
    CHECK(*done == 8, "healthy kernel after faults: %d blocks finished", *done);
    aclshmem_barrier_all();
    aclshmem_free(done);
}

void bad_launch(aclrtStream stream)
{
    auto *done = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    uint32_t zero = 0;
    Faulty<<<zero, nullptr, stream>>>(done, -1);
    Faulty<<<70000, nullptr, stream>>>(done, -1);
    ACL_OK(aclrtSynchronizeStream(stream));
    CHECK(*done == 0, "a refused launch ran %d blocks", *done);
    Faulty<<<2, nullptr, stream>>>(done, -1);
    ACL_OK(aclrtSynchronizeStream(stream));
    CHECK(*done == 2, "launch after refused ones: %d blocks", *done);
    aclshmem_barrier_all();
    aclshmem_free(done);
}

/* ---------------------------------------------------------------------------------------------- */
/* multi_instance: a block's aclshmemx_instance_ctx_set selects the instance for that block only    */

[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void PerBlockInstance(int32_t *x0, int32_t *x1, int peer,
                                                                          int32_t *ok)
{
    int b = static_cast<int>(GetBlockIdx());
    uint64_t id = static_cast<uint64_t>(b % 2);
    int32_t *mine = id == 0 ? x0 : x1;
    int32_t *other = id == 0 ? x1 : x0;
    int good = aclshmemx_instance_ctx_set(id) == 0;
    /* each heap belongs to one instance: only this block's instance knows its buffer */
    good = good && aclshmem_ptr(mine, peer) != nullptr && aclshmem_ptr(other, peer) == nullptr;
    aclshmem_int32_p(mine + b, 100 + b, peer);
    /* switching again is the block's own business too */
    good = good && aclshmemx_instance_ctx_set(1 - id) == 0 && aclshmem_ptr(other, peer) != nullptr;
    good = good && aclshmemx_instance_ctx_set(id) == 0 && aclshmem_ptr(mine, peer) != nullptr;
    ok[b] = good;
}

void multi_instance(aclrtStream stream, const aclshmemx_init_attr_t &attr)
{
    constexpr int kBlocks = 16;
    int me = aclshmem_my_pe();
    int n = aclshmem_n_pes();
    int peer = (me + 1) % n;
    auto *x0 = static_cast<int32_t *>(aclshmem_calloc(kBlocks, sizeof(int32_t)));
    aclshmemx_init_attr_t a1 = attr;
    a1.instance_id = 1;
    std::strcpy(a1.ip_port, "tcp://127.0.0.1:0");
    CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &a1) == 0, "init of instance 1");
    auto *x1 = static_cast<int32_t *>(aclshmem_calloc(kBlocks, sizeof(int32_t)));
    CHECK(x0 != nullptr && x1 != nullptr && aclshmemx_instance_ctx_get()->id == 1, "instance 1 current");
    std::vector<int32_t> ok(kBlocks, 0);
    PerBlockInstance<<<kBlocks, nullptr, stream>>>(x0, x1, peer, ok.data());
    ACL_OK(aclrtSynchronizeStream(stream));
    for (int b = 0; b < kBlocks; b++) {
        CHECK(ok[b] == 1, "block %d did not see its own instance", b);
    }
    CHECK(aclshmemx_instance_ctx_get()->id == 1, "the kernel changed the host's current instance to %d",
          static_cast<int>(aclshmemx_instance_ctx_get()->id));
    /* every block's p landed in its own instance's heap on the peer */
    aclshmem_barrier_all();
    for (int b = 1; b < kBlocks; b += 2) {
        CHECK(x1[b] == 100 + b && x1[b - 1] == 0, "instance 1 heap: x1[%d] = %d, x1[%d] = %d", b, x1[b], b - 1,
              x1[b - 1]);
    }
    CHECK(aclshmemx_instance_ctx_set(0) == 0, "back to instance 0");
    aclshmem_barrier_all();
    for (int b = 0; b < kBlocks; b += 2) {
        CHECK(x0[b] == 100 + b && x0[b + 1] == 0, "instance 0 heap: x0[%d] = %d, x0[%d] = %d", b, x0[b], b + 1,
              x0[b + 1]);
    }
    CHECK(aclshmemx_finalize(1) == 0, "finalize of instance 1");
    CHECK(aclshmemx_instance_ctx_get()->id == 0, "instance 0 current at the end");
    aclshmem_free(x0);
}

int main(int argc, char **argv)
{
    auto run = [](const std::string &scenario, aclrtStream stream, const aclshmemx_init_attr_t &attr) {
        if (scenario == "families") {
            families(stream);
        } else if (scenario == "atomics") {
            atomics(stream);
        } else if (scenario == "tests") {
            tests(stream);
        } else if (scenario == "sized") {
            sized(stream);
        } else if (scenario == "many_blocks") {
            many_blocks(stream);
        } else if (scenario == "two_streams") {
            two_streams(stream);
        } else if (scenario == "cross_pe") {
            cross_pe(stream);
        } else if (scenario == "stream_order") {
            stream_order(stream);
        } else if (scenario == "engines") {
            engines(stream);
        } else if (scenario == "notify") {
            notify(stream);
        } else if (scenario == "graph") {
            graph(stream);
        } else if (scenario == "state") {
            state(stream);
        } else if (scenario == "device_signals") {
            device_signals(stream);
        } else if (scenario == "tque") {
            tque(stream);
        } else if (scenario == "fail_while_waiting") {
            fail_while_waiting(stream);
        } else if (scenario == "fault") {
            fault(stream);
        } else if (scenario == "fault_in_barrier") {
            fault_in_barrier(stream);
        } else if (scenario == "qp") {
            qp(stream);
        } else if (scenario == "engine_qp") {
            engine_qp(stream);
        } else if (scenario == "kinds") {
            kinds(stream);
        } else if (scenario == "mix_aic") {
            mix_aic(stream);
        } else if (scenario == "prof") {
            prof(stream);
        } else if (scenario == "bad_launch") {
            bad_launch(stream);
        } else if (scenario == "multi_instance") {
            multi_instance(stream, attr);
        } else {
            return false;
        }
        return true;
    };
    if (argc > 1 && std::string(argv[1]) == "qp") {
        qp_before_init();
    }
    if (argc > 1 && std::string(argv[1]) == "engine_qp") {
        engine_qp_before_init();
    }
    return kernel_test_main(argc, argv, "kernel_tests", run);
}
