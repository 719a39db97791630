/*
 * kernel_ub_tests.cpp - kernels that load and store UB through __ubuf__ pointers themselves
 * (tests/kernels.rs, issue 13). Needs the %gs UB mapping of the CPU device mode: built by
 * scripts/aclshmem-cxx with clang++ on x86-64 (ACLSHMEM_UB_DEREF is then 1). One scenario per
 * argv[1]; prints "FAIL: ..." and exits non-zero on a failure.
 *
 *   ub_private      AIV (8 blocks) and MIX (4 blocks = 8 contexts) kernels write a pattern into
 *                   their own UB through raw __ubuf__ pointers, meet at SyncAll, and read it back
 *                   (each context must see its own values, not another block's); the same bytes
 *                   seen through LocalTensor; UB forms of the RMA calls (typed put/get_nbi, MTE
 *                   UB <-> GM, a GM copy staged through a __ubuf__ buffer) to the next PE, whose
 *                   results are read back by dereferencing UB and checked on the host
 *   allgather_large an allgather of every PE's input in the style of the large-data path of the
 *                   upstream example: control word at UB 0 and per-peer flag slots at UB 32 + 64 i
 *                   and 544 + 64 i zeroed and polled by dereference (flags fetched into UB with
 *                   the typed UB get), data moved by MTE copies staged at a literal UB address;
 *                   int32 and half, two rounds (the second with a new magic value)
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "acl/acl.h"
#include "kernel_operator.h"
#include "shmem.h"
#include "kernel_test_util.h"

#if !ACLSHMEM_UB_DEREF
#error "kernel_ub_tests.cpp dereferences UB pointers: build it with clang++ on x86-64"
#endif


using namespace AscendC;

/* ---------------------------------------------------------------------------------------------- */
/* ub_private                                                                                       */
/* ---------------------------------------------------------------------------------------------- */

constexpr int kWords = 256;      /* words of the pattern */
constexpr uint64_t kPattern = 32; /* UB offset of the pattern */
constexpr uint64_t kGot = 4096;   /* UB offset of data fetched from the next PE */
constexpr uint64_t kStage = 8192; /* UB offset of a staging buffer */

inline int32_t pattern(int ctx, int i)
{
    return ctx * 100000 + i * 7 + 3;
}
inline int32_t source(int pe, int ctx, int i)
{
    return pe * 1000000 + ctx * 1000 + i;
}

/* out: per context, errors seen in UB (symmetric, kContexts words)
   put_dst, mte_dst, copy_dst: kContexts * kWords words each on the next PE, written from UB
   src: kContexts * kWords words of every PE, fetched into UB from the next PE */
template <int Unused>
void ub_private_body(int32_t *errors, int32_t *put_dst, int32_t *mte_dst, int32_t *copy_dst, int32_t *src)
{
    int ctx = static_cast<int>(GetBlockIdx());
    int me = aclshmem_my_pe();
    int next = (me + 1) % aclshmem_n_pes();
    int32_t bad = 0;

    /* raw stores: a control word at UB 0 and the pattern at UB 32 */
    *(__ubuf__ int32_t *)0 = ctx;
    __ubuf__ int32_t *w = (__ubuf__ int32_t *)kPattern;
    for (int i = 0; i < kWords; i++) {
        w[i] = pattern(ctx, i);
    }
    __ubuf__ uint8_t *bytes = reinterpret_cast<__ubuf__ uint8_t *>(uint64_t(kStage - 64));
    for (int i = 0; i < 64; i++) {
        bytes[i] = static_cast<uint8_t>(ctx + i);
    }
    /* every context wrote; had they shared one UB, the values below would be another context's */
    SyncAll();
    bad += *(__ubuf__ int32_t *)0 != ctx;
    for (int i = 0; i < kWords; i++) {
        bad += w[i] != pattern(ctx, i);
    }
    for (int i = 0; i < 64; i++) {
        bad += bytes[i] != static_cast<uint8_t>(ctx + i);
    }
    /* the same bytes through an AscendC tensor (translated by the library, not by %gs) */
    LocalTensor<int32_t> t;
    t.address_.bufferAddr = kPattern;
    t.address_.dataLen = kWords * sizeof(int32_t);
    bad += t.GetValue(5) != pattern(ctx, 5);
    t.SetValue(6, -ctx);
    bad += w[6] != -ctx;
    w[6] = pattern(ctx, 6);

    /* UB -> remote GM: the typed UB form and the MTE UB form */
    aclshmem_int32_put_nbi(put_dst + ctx * kWords, w, kWords, next);
    aclshmemx_mte_put_nbi(mte_dst + ctx * kWords, w, kWords, next, 0);
    /* remote GM -> UB, then read by dereference */
    __ubuf__ int32_t *got = (__ubuf__ int32_t *)kGot;
    aclshmem_int32_get_nbi(got, src + ctx * kWords, kWords, next);
    aclshmem_quiet();
    for (int i = 0; i < kWords; i++) {
        bad += got[i] != source(next, ctx, i);
    }
    /* GM -> GM through a caller-supplied UB staging buffer */
    aclshmemx_mte_put_nbi(copy_dst + ctx * kWords, src + ctx * kWords, (__ubuf__ int32_t *)kStage, 1024, kWords, next,
                          0);
    aclshmem_quiet();
    errors[ctx] = bad;
}

[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void UbPrivateAiv(int32_t *errors, int32_t *put_dst,
                                                                      int32_t *mte_dst, int32_t *copy_dst,
                                                                      int32_t *src)
{
    ub_private_body<0>(errors, put_dst, mte_dst, copy_dst, src);
}

__global__ __aicore__ void UbPrivateMix(int32_t *errors, int32_t *put_dst, int32_t *mte_dst, int32_t *copy_dst,
                                        int32_t *src)
{
    if ASCEND_IS_AIV {
        ub_private_body<1>(errors, put_dst, mte_dst, copy_dst, src);
    }
}

void ub_private(aclrtStream stream)
{
    constexpr int kContexts = 8;
    int me = aclshmem_my_pe();
    int n = aclshmem_n_pes();
    int prev = (me + n - 1) % n;
    size_t words = size_t(kContexts) * kWords;
    auto *errors = static_cast<int32_t *>(aclshmem_calloc(kContexts, sizeof(int32_t)));
    auto *put_dst = static_cast<int32_t *>(aclshmem_calloc(words, sizeof(int32_t)));
    auto *mte_dst = static_cast<int32_t *>(aclshmem_calloc(words, sizeof(int32_t)));
    auto *copy_dst = static_cast<int32_t *>(aclshmem_calloc(words, sizeof(int32_t)));
    auto *src = static_cast<int32_t *>(aclshmem_calloc(words, sizeof(int32_t)));
    for (int c = 0; c < kContexts; c++) {
        for (int i = 0; i < kWords; i++) {
            src[c * kWords + i] = source(me, c, i);
        }
    }
    for (int round = 0; round < 2; round++) {
        for (int c = 0; c < kContexts; c++) {
            errors[c] = -1;
        }
        std::memset(put_dst, 0, words * sizeof(int32_t));
        std::memset(mte_dst, 0, words * sizeof(int32_t));
        std::memset(copy_dst, 0, words * sizeof(int32_t));
        aclshmem_barrier_all();
        const char *kind = round == 0 ? "AIV" : "MIX";
        if (round == 0) {
            UbPrivateAiv<<<kContexts, nullptr, stream>>>(errors, put_dst, mte_dst, copy_dst, src);
        } else {
            UbPrivateMix<<<kContexts / 2, nullptr, stream>>>(errors, put_dst, mte_dst, copy_dst, src);
        }
        ACL_OK(aclrtSynchronizeStream(stream));
        aclshmem_barrier_all();
        for (int c = 0; c < kContexts; c++) {
            CHECK(errors[c] == 0, "%s context %d saw %d wrong UB values", kind, c, errors[c]);
        }
        int wrong_put = 0;
        int wrong_mte = 0;
        int wrong_copy = 0;
        for (int c = 0; c < kContexts; c++) {
            for (int i = 0; i < kWords; i++) {
                wrong_put += put_dst[c * kWords + i] != pattern(c, i);
                wrong_mte += mte_dst[c * kWords + i] != pattern(c, i);
                wrong_copy += copy_dst[c * kWords + i] != source(prev, c, i);
            }
        }
        CHECK(wrong_put == 0, "%s: %d words of the typed UB put from PE %d are wrong", kind, wrong_put, prev);
        CHECK(wrong_mte == 0, "%s: %d words of the MTE UB put from PE %d are wrong", kind, wrong_mte, prev);
        CHECK(wrong_copy == 0, "%s: %d words of the staged GM copy from PE %d are wrong", kind, wrong_copy, prev);
    }
    aclshmem_barrier_all();
    aclshmem_free(src);
    aclshmem_free(copy_dst);
    aclshmem_free(mte_dst);
    aclshmem_free(put_dst);
    aclshmem_free(errors);
}

/* ---------------------------------------------------------------------------------------------- */
/* allgather_large                                                                                  */
/* ---------------------------------------------------------------------------------------------- */

constexpr uint32_t kMaxPes = 8;
constexpr uint32_t kFlagStride = 64;      /* bytes between flag slots in UB and in GM */
constexpr uint64_t kStageUb = 64 * 1024;  /* UB staging area of the data copies */
constexpr uint32_t kStageBytes = 32 * 1024;

/* Block b moves slice b of every PE's input. Each PE first copies its own slice into its symmetric
   output and raises its flag for that slice; every block then, for each peer, polls the peer's flag
   (fetched into a UB slot and read there) and pulls the peer's slice from the peer's output once
   the flag shows this round's magic. */
template <typename T>
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void AllGatherLarge(T *input, T *output, int32_t *flags,
                                                                        uint32_t elems, int32_t magic)
{
    int me = aclshmem_my_pe();
    int n = aclshmem_n_pes();
    uint32_t b = GetBlockIdx();
    uint32_t blocks = GetBlockNum();
    uint32_t per = elems / blocks;
    uint32_t first = b * per;
    uint32_t count = b + 1 == blocks ? elems - first : per;

    __ubuf__ int32_t *ctrl_ub = (__ubuf__ int32_t *)0;
    __ubuf__ int32_t *flags_ub1[kMaxPes];
    __ubuf__ int32_t *flags_ub2[kMaxPes];
    for (int i = 0; i < n; i++) {
        flags_ub1[i] = (__ubuf__ int32_t *)(uint64_t(32) + kFlagStride * i);
        flags_ub2[i] = (__ubuf__ int32_t *)(uint64_t(544) + kFlagStride * i);
        *flags_ub1[i] = 0;
        *flags_ub2[i] = 0;
    }
    *ctrl_ub = 0;

    /* own slice into own output, then the flag (data first) */
    __ubuf__ T *stage = (__ubuf__ T *)kStageUb;
    aclshmemx_mte_put_nbi(output + size_t(me) * elems + first, input + first, stage, kStageBytes, count, me, 0);
    aclshmem_quiet();
    int32_t *my_flag = flags + (size_t(b) * kMaxPes) * (kFlagStride / sizeof(int32_t));
    aclshmemx_signal_op(my_flag, magic, ACLSHMEM_SIGNAL_SET, me);

    /* pull every peer's slice once its flag shows the magic; ctrl_ub counts the peers done */
    while (*ctrl_ub < n - 1) {
        for (int k = 1; k < n; k++) {
            int pe = (me + k) % n;
            if (*flags_ub2[pe] != 0) {
                continue; /* already pulled */
            }
            aclshmem_int32_get_nbi(flags_ub1[pe], my_flag, 1, pe);
            aclshmem_quiet();
            if (*flags_ub1[pe] != magic) {
                continue;
            }
            aclshmemx_mte_get_nbi(output + size_t(pe) * elems + first, output + size_t(pe) * elems + first, stage,
                                  kStageBytes, count, pe, 0);
            *flags_ub2[pe] = 1;
            *ctrl_ub += 1;
        }
    }
    aclshmem_quiet();
    aclshmem_barrier_all();
}

template <typename T>
void allgather_round(aclrtStream stream, const char *type, int32_t magic)
{
    constexpr uint32_t kElems = 48 * 1024 + 5; /* not a multiple of the block count */
    constexpr uint32_t kBlocks = 16;
    int me = aclshmem_my_pe();
    int n = aclshmem_n_pes();
    auto value = [](int pe, uint32_t i, int32_t magic) { return static_cast<float>((pe * 131 + i * 3 + magic) % 997); };
    auto *input = static_cast<T *>(aclshmem_malloc(kElems * sizeof(T)));
    auto *output = static_cast<T *>(aclshmem_calloc(size_t(n) * kElems, sizeof(T)));
    auto *flags = static_cast<int32_t *>(aclshmem_calloc(kBlocks * kMaxPes * kFlagStride, 1));
    for (uint32_t i = 0; i < kElems; i++) {
        input[i] = static_cast<T>(value(me, i, magic));
    }
    aclshmem_barrier_all();
    AllGatherLarge<T><<<kBlocks, nullptr, stream>>>(input, output, flags, kElems, magic);
    ACL_OK(aclrtSynchronizeStream(stream));
    int wrong = 0;
    for (int pe = 0; pe < n; pe++) {
        for (uint32_t i = 0; i < kElems; i++) {
            wrong += static_cast<float>(output[size_t(pe) * kElems + i]) != value(pe, i, magic);
        }
    }
    CHECK(wrong == 0, "allgather %s magic %d: %d of %u elements wrong", type, magic, wrong, n * kElems);
    aclshmem_barrier_all();
    aclshmem_free(flags);
    aclshmem_free(output);
    aclshmem_free(input);
}

void allgather_large(aclrtStream stream)
{
    if (aclshmem_n_pes() > static_cast<int>(kMaxPes)) {
        std::printf("FAIL: at most %u PEs\n", kMaxPes);
        g_errors++;
        return;
    }
    allgather_round<int32_t>(stream, "int32", 1);
    allgather_round<int32_t>(stream, "int32", 2);
    allgather_round<half>(stream, "half", 3);
}

int main(int argc, char **argv)
{
    auto run = [](const std::string &scenario, aclrtStream stream, const aclshmemx_init_attr_t &attr) {
        (void)attr;
        if (scenario == "ub_private") {
            ub_private(stream);
        } else if (scenario == "allgather_large") {
            allgather_large(stream);
        } else {
            return false;
        }
        return true;
    };
    return kernel_test_main(argc, argv, "kernel_ub_tests", run);
}
