/*
 * simt_tests.cpp - the SIMT device mode (tests/kernels.rs, simt_* tests), one scenario per argv[1].
 * A fusion program built like kernel_tests.cpp, with USE_SIMT: a __global__ __vector__ kernel calls
 * asc_vf_call<f>(dim3(16, 2, 2)) and f uses the simt:: API on 64 threads. Prints "FAIL: ..." and exits
 * non-zero on a failure.
 *
 *   simt   threadIdx/blockDim values and asc_syncthreads; typed put/get/_nbi in thread, _block and
 *          _warp scope for int32, half, float, int8, uint64, bfloat16, signed char; p and g; the
 *          sized 8..128 forms (the correctly named GM _block/_warp ones, defect S1) and the byte
 *          forms; the mte templates; UB forms with a __ubuf__ local array and with UB offsets of
 *          the calling block (read back by the vector-core body through the AIV API); my_pe,
 *          n_pes, the team functions and simt::aclshmemi_get_state. Every result is checked by the host.
 *   fail   bad asc_vf_call shapes (0 and too many threads), a SIMT thread that throws and one that
 *          faults while the others wait in asc_syncthreads: each launch fails on the stream's synchronize, nothing
 *          hangs, and a later good SIMT launch still runs.
 */
#define USE_SIMT 1

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "acl/acl.h"
#include "kernel_operator.h"
#include "shmem.h"
#include "kernel_test_util.h"


constexpr int kN = 100;          /* typed elements per transfer */
constexpr int kBytes = 1600;     /* bytes of the sized/byte transfers */
constexpr uint32_t kThreads = 64; /* dim3(16, 2, 2) */
constexpr uint64_t kUbOff = 4096; /* UB offset used by the UB-offset forms */

static int value(int pe, int i)
{
    return (pe * 37 + i * 3) % 100 + 1;
}

/* one typed family's buffers: 7 symmetric arrays of kN */
template <typename T>
struct TB {
    T *src, *put_t, *put_b, *put_w, *get_t, *get_b, *get_w, *nbi;
};

template <typename T>
static TB<T> alloc_tb(int me)
{
    TB<T> b;
    T **all[] = {&b.src, &b.put_t, &b.put_b, &b.put_w, &b.get_t, &b.get_b, &b.get_w, &b.nbi};
    for (T **p : all) {
        *p = static_cast<T *>(aclshmem_malloc(kN * sizeof(T)));
        std::memset(static_cast<void *>(*p), 0, kN * sizeof(T));
    }
    for (int i = 0; i < kN; i++) {
        b.src[i] = T(value(me, i));
    }
    return b;
}

template <typename T>
static void check_tb(const char *name, const TB<T> &b, int left, int peer)
{
    /* put_t, put_b, put_w and nbi hold the left PE's src; get_* the peer's */
    for (int i = 0; i < kN; i++) {
        T l = T(value(left, i)), r = T(value(peer, i));
        CHECK(std::memcmp(&b.put_t[i], &l, sizeof(T)) == 0, "%s put thread [%d]", name, i);
        CHECK(std::memcmp(&b.put_b[i], &l, sizeof(T)) == 0, "%s put_block [%d]", name, i);
        CHECK(std::memcmp(&b.put_w[i], &l, sizeof(T)) == 0, "%s put_nbi_warp [%d]", name, i);
        CHECK(std::memcmp(&b.nbi[i], &l, sizeof(T)) == 0, "%s put_nbi/get_nbi_block [%d]", name, i);
        CHECK(std::memcmp(&b.get_t[i], &r, sizeof(T)) == 0, "%s get thread [%d]", name, i);
        CHECK(std::memcmp(&b.get_b[i], &r, sizeof(T)) == 0, "%s get_block [%d]", name, i);
        CHECK(std::memcmp(&b.get_w[i], &r, sizeof(T)) == 0, "%s get_warp [%d]", name, i);
    }
}

struct Args {
    int peer;
    TB<int32_t> i32;
    TB<half> f16;
    TB<float> f32;
    TB<int8_t> i8;
    TB<uint64_t> u64;
    TB<bfloat16_t> bf16;
    TB<signed char> sc;
    uint8_t *bsrc;        /* kBytes pattern */
    uint8_t *sized[8];    /* put64 thread, put8_block, get128_warp, put16_nbi_block, get32_nbi, putmem_block,
                             getmem_warp, mte put_nbi_block */
    int32_t *p_dst;       /* kThreads: each thread's int32 p from the left PE */
    float *g_out;         /* kThreads: g of the peer's f32.src */
    uint32_t *ids;        /* kThreads: x | y << 8 | z << 16 */
    uint32_t *dims;       /* kThreads: bx | by << 8 | bz << 16 */
    uint32_t *stage;      /* kThreads: asc_syncthreads check */
    uint32_t *seen;       /* kThreads: sum of stage after the barrier */
    int32_t *team;        /* 6 team results, then state record mype, npes, heap-table check */
    int32_t *ub_arr;      /* kN: peer's i32.src through a __ubuf__ local array, then put to here on the peer */
    int32_t *ub_off;      /* kN: peer's i32.src through UB offset kUbOff, put to the peer */
    int32_t *ub_back;     /* kN: the calling block's UB at kUbOff after the call (vector-core body) */
    int32_t *body_pe;     /* 2: aclshmem_my_pe / n_pes in the vector-core body */
    int32_t *ub_tensor;   /* kN: i32.src through a __ubuf__ array of the vector-core body used as a
                             LocalTensor's buffer (DataCopyPad in, DataCopyPad out) */
};

/* the 12 put/get calls of one type, spread over the scopes */
#define SIMT_TYPED_CALLS(NAME, B, PEER)                                      \
    do {                                                                     \
        if (lin == 0) {                                                      \
            simt::aclshmem_##NAME##_put(B.put_t, B.src, kN, PEER);           \
            simt::aclshmem_##NAME##_get(B.get_t, B.src, kN, PEER);           \
        }                                                                    \
        simt::aclshmemx_##NAME##_put_block(B.put_b, B.src, kN, PEER);        \
        simt::aclshmemx_##NAME##_put_nbi_warp(B.put_w, B.src, kN, PEER);     \
        simt::aclshmemx_##NAME##_get_block(B.get_b, B.src, kN, PEER);        \
        simt::aclshmemx_##NAME##_get_warp(B.get_w, B.src, kN, PEER);         \
    } while (0)

__simt_vf__ __launch_bounds__(64) inline void simt_body(Args a)
{
    uint32_t lin = threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
    int peer = a.peer;
    a.ids[lin] = threadIdx.x | threadIdx.y << 8 | threadIdx.z << 16;
    a.dims[lin] = blockDim.x | blockDim.y << 8 | blockDim.z << 16;
    a.stage[lin] = 1;
    asc_syncthreads();
    uint32_t sum = 0;
    for (uint32_t i = 0; i < kThreads; i++) {
        sum += a.stage[i];
    }
    a.seen[lin] = sum;

    SIMT_TYPED_CALLS(int32, a.i32, peer);
    SIMT_TYPED_CALLS(half, a.f16, peer);
    SIMT_TYPED_CALLS(float, a.f32, peer);
    SIMT_TYPED_CALLS(int8, a.i8, peer);
    SIMT_TYPED_CALLS(uint64, a.u64, peer);
    SIMT_TYPED_CALLS(bfloat16, a.bf16, peer);
    SIMT_TYPED_CALLS(char, a.sc, peer);
    /* put_nbi: thread scope for six types, block scope for uint64 */
    if (lin == 0) {
        simt::aclshmem_int32_put_nbi(a.i32.nbi, a.i32.src, kN, peer);
        simt::aclshmem_half_put_nbi(a.f16.nbi, a.f16.src, kN, peer);
        simt::aclshmem_float_put_nbi(a.f32.nbi, a.f32.src, kN, peer);
        simt::aclshmem_int8_put_nbi(a.i8.nbi, a.i8.src, kN, peer);
        simt::aclshmem_bfloat16_put_nbi(a.bf16.nbi, a.bf16.src, kN, peer);
        simt::aclshmem_char_put_nbi(a.sc.nbi, a.sc.src, kN, peer);
    }
    simt::aclshmemx_uint64_put_nbi_block(a.u64.nbi, a.u64.src, kN, peer);

    /* sized and byte forms */
    if (lin == 0) {
        simt::aclshmem_put64(a.sized[0], a.bsrc, kBytes / 8, peer);
        simt::aclshmem_get32_nbi(a.sized[4], a.bsrc, kBytes / 4, peer);
    }
    simt::aclshmemx_put8_block(a.sized[1], a.bsrc, kBytes, peer);
    simt::aclshmemx_get128_warp(a.sized[2], a.bsrc, kBytes / 16, peer);
    simt::aclshmemx_put16_nbi_block(a.sized[3], a.bsrc, kBytes / 2, peer);
    simt::aclshmemx_putmem_block(a.sized[5], a.bsrc, kBytes, peer);
    simt::aclshmemx_getmem_warp(a.sized[6], a.bsrc, kBytes, peer);
    simt::aclshmemx_mte_put_nbi_block(a.sized[7], a.bsrc, kBytes, peer);

    /* p and g */
    simt::aclshmem_int32_p(a.p_dst + lin, int32_t(simt::aclshmem_my_pe() * 1000 + lin), peer);
    a.g_out[lin] = simt::aclshmem_float_g(a.f32.src + (lin % kN), peer);

    /* team */
    if (lin == 0) {
        a.team[0] = simt::aclshmem_my_pe();
        a.team[1] = simt::aclshmem_n_pes();
        a.team[2] = simt::aclshmem_team_my_pe(ACLSHMEM_TEAM_WORLD);
        a.team[3] = simt::aclshmem_team_n_pes(ACLSHMEM_TEAM_WORLD);
        a.team[4] = simt::aclshmem_team_translate_pe(ACLSHMEM_TEAM_WORLD, peer, ACLSHMEM_TEAM_WORLD);
        a.team[5] = simt::aclshmem_team_pe_mapping(ACLSHMEM_TEAM_WORLD, peer);
    }

    /* the SIMT state record: PE, and the heap table agrees with aclshmem_ptr */
    if (lin == 1) {
        aclshmem_device_host_state_simt_t *st = simt::aclshmemi_get_state();
        a.team[6] = st->mype;
        a.team[7] = st->npes;
        uint64_t *p2p = reinterpret_cast<uint64_t *>(st->p2p_device_heap_base);
        /* a peer without direct access (UCX, ACLSHMEM_DIRECT_ACCESS=0) has no table entry and no
           aclshmem_ptr; one with it, the same address through both */
        uint64_t want = p2p[peer] == 0 ? 0 : p2p[peer] + (reinterpret_cast<uint64_t>(a.i32.src) - st->heap_base);
        a.team[8] = want == reinterpret_cast<uint64_t>(simt::aclshmem_ptr(a.i32.src, peer));
        a.team[9] = simt::aclshmemi_get_my_pe() | simt::aclshmemi_get_total_pe() << 16;
        a.team[10] = simt::aclshmemi_get_heap_size() == st->heap_size && st->heap_size > 0;
    }

    /* UB: a __ubuf__ local array (thread 0), and UB offsets of the calling block (block scope) */
    if (lin == 0) {
        __ubuf__ int32_t ub_buf[kN];
        simt::aclshmem_int32_get_nbi(ub_buf, a.i32.src, kN, peer);
        simt::aclshmem_int32_put_nbi(a.ub_arr, ub_buf, kN, peer);
    }
    __ubuf__ int32_t *ub = reinterpret_cast<__ubuf__ int32_t *>(kUbOff);
    simt::aclshmemx_int32_get_block(ub, a.i32.src, kN, peer);
    simt::aclshmemx_int32_put_nbi_block(a.ub_off, ub, kN, peer);
}

__global__ __vector__ void simt_kernel(Args a)
{
    a.body_pe[0] = aclshmem_my_pe();
    a.body_pe[1] = aclshmem_n_pes();
    asc_vf_call<simt_body>(dim3(16, 2, 2), a);
    /* the SIMT threads wrote this block's UB: read it back through the AIV UB form */
    aclshmem_putmem(a.ub_back, reinterpret_cast<void *>(kUbOff), kN * sizeof(int32_t), aclshmem_my_pe());
    /* a __ubuf__ array of the kernel as a LocalTensor's buffer, as the original's SIMT perftests
       stage data (its address is an ordinary address here) */
    __ubuf__ int32_t staged[kN];
    AscendC::LocalTensor<int32_t> t;
    t.address_.logicPos = static_cast<uint8_t>(AscendC::TPosition::VECIN);
    t.address_.bufferAddr = reinterpret_cast<uint64_t>(staged);
    t.address_.dataLen = kN * sizeof(int32_t);
    AscendC::GlobalTensor<int32_t> from, to;
    from.SetGlobalBuffer(a.i32.src);
    to.SetGlobalBuffer(a.ub_tensor);
    AscendC::DataCopyExtParams rows(1, kN * sizeof(int32_t), 0, 0, 0);
    AscendC::DataCopyPad(t, from, rows);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopyPad(to, t, rows);
}

static void simt_scenario(aclrtStream stream)
{
    int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    int peer = (me + 1) % n, left = (me + n - 1) % n;
    Args a;
    a.peer = peer;
    a.i32 = alloc_tb<int32_t>(me);
    a.f16 = alloc_tb<half>(me);
    a.f32 = alloc_tb<float>(me);
    a.i8 = alloc_tb<int8_t>(me);
    a.u64 = alloc_tb<uint64_t>(me);
    a.bf16 = alloc_tb<bfloat16_t>(me);
    a.sc = alloc_tb<signed char>(me);
    a.bsrc = static_cast<uint8_t *>(aclshmem_malloc(kBytes));
    for (int i = 0; i < kBytes; i++) {
        a.bsrc[i] = uint8_t(value(me, i));
    }
    for (auto &s : a.sized) {
        s = static_cast<uint8_t *>(aclshmem_calloc(kBytes, 1));
    }
    a.p_dst = static_cast<int32_t *>(aclshmem_calloc(kThreads, sizeof(int32_t)));
    a.g_out = static_cast<float *>(aclshmem_calloc(kThreads, sizeof(float)));
    a.ids = static_cast<uint32_t *>(aclshmem_calloc(kThreads, sizeof(uint32_t)));
    a.dims = static_cast<uint32_t *>(aclshmem_calloc(kThreads, sizeof(uint32_t)));
    a.stage = static_cast<uint32_t *>(aclshmem_calloc(kThreads, sizeof(uint32_t)));
    a.seen = static_cast<uint32_t *>(aclshmem_calloc(kThreads, sizeof(uint32_t)));
    a.team = static_cast<int32_t *>(aclshmem_calloc(11, sizeof(int32_t)));
    a.ub_arr = static_cast<int32_t *>(aclshmem_calloc(kN, sizeof(int32_t)));
    a.ub_off = static_cast<int32_t *>(aclshmem_calloc(kN, sizeof(int32_t)));
    a.ub_back = static_cast<int32_t *>(aclshmem_calloc(kN, sizeof(int32_t)));
    a.ub_tensor = static_cast<int32_t *>(aclshmem_calloc(kN, sizeof(int32_t)));
    a.body_pe = static_cast<int32_t *>(aclshmem_calloc(2, sizeof(int32_t)));
    aclshmem_barrier_all();

    simt_kernel<<<1, nullptr, stream>>>(a);
    ACL_OK(aclrtSynchronizeStream(stream));
    aclshmem_barrier_all();

    check_tb("int32", a.i32, left, peer);
    check_tb("half", a.f16, left, peer);
    check_tb("float", a.f32, left, peer);
    check_tb("int8", a.i8, left, peer);
    check_tb("uint64", a.u64, left, peer);
    check_tb("bfloat16", a.bf16, left, peer);
    check_tb("char", a.sc, left, peer);
    const char *sized_names[8] = {"put64", "put8_block", "get128_warp", "put16_nbi_block", "get32_nbi",
                                  "putmem_block", "getmem_warp", "mte_put_nbi_block"};
    const bool sized_get[8] = {false, false, true, false, true, false, true, false};
    for (int k = 0; k < 8; k++) {
        int from = sized_get[k] ? peer : left;
        for (int i = 0; i < kBytes; i++) {
            CHECK(a.sized[k][i] == uint8_t(value(from, i)), "%s byte %d: %u", sized_names[k], i, a.sized[k][i]);
        }
    }
    for (uint32_t t = 0; t < kThreads; t++) {
        uint32_t x = t % 16, y = (t / 16) % 2, z = t / 32;
        CHECK(a.ids[t] == (x | y << 8 | z << 16), "threadIdx of thread %u: %#x", t, a.ids[t]);
        CHECK(a.dims[t] == (16u | 2u << 8 | 2u << 16), "blockDim in thread %u: %#x", t, a.dims[t]);
        CHECK(a.seen[t] == kThreads, "thread %u saw %u arrivals after asc_syncthreads", t, a.seen[t]);
        CHECK(a.p_dst[t] == int32_t(left * 1000 + t), "p from thread %u: %d", t, a.p_dst[t]);
        CHECK(a.g_out[t] == float(value(peer, int(t % kN))), "g in thread %u: %f", t, double(a.g_out[t]));
    }
    CHECK(a.team[0] == me && a.team[1] == n && a.team[2] == me && a.team[3] == n && a.team[4] == peer &&
              a.team[5] == peer,
          "team results %d %d %d %d %d %d", a.team[0], a.team[1], a.team[2], a.team[3], a.team[4], a.team[5]);
    CHECK(a.team[6] == me && a.team[7] == n && a.team[8] == 1,
          "simt::aclshmemi_get_state: mype %d npes %d heap table agrees %d", a.team[6], a.team[7], a.team[8]);
    CHECK(a.team[9] == (me | n << 16) && a.team[10] == 1, "simt::aclshmemi_get_my_pe/_total_pe %#x, heap size %d",
          a.team[9], a.team[10]);
    CHECK(a.body_pe[0] == me && a.body_pe[1] == n, "vector-core body my_pe/n_pes %d %d", a.body_pe[0],
          a.body_pe[1]);
    for (int i = 0; i < kN; i++) {
        /* the left PE fetched my src and put it back here; ub_back holds what this PE fetched */
        CHECK(a.ub_arr[i] == value(me, i), "__ubuf__ array round trip [%d]: %d", i, a.ub_arr[i]);
        CHECK(a.ub_off[i] == value(me, i), "UB offset round trip [%d]: %d", i, a.ub_off[i]);
        CHECK(a.ub_back[i] == value(peer, i), "block UB after the call [%d]: %d", i, a.ub_back[i]);
        CHECK(a.ub_tensor[i] == value(me, i), "DataCopyPad through a __ubuf__ array [%d]: %d", i, a.ub_tensor[i]);
    }
}

__simt_vf__ inline void throw_in_one(int32_t *out)
{
    uint32_t lin = threadIdx.x + threadIdx.y * blockDim.x;
    if (lin == 5) {
        throw std::runtime_error("thread 5 gives up");
    }
    asc_syncthreads();
    out[lin] = 1; /* not reached: the barrier is broken */
}

__simt_vf__ inline void count_threads(int32_t *out)
{
    out[threadIdx.x + threadIdx.y * blockDim.x] = 7;
}

__simt_vf__ inline void fault_in_one(int32_t *out)
{
    uint32_t lin = threadIdx.x + threadIdx.y * blockDim.x;
    if (lin == 3) {
        volatile int32_t *bad = reinterpret_cast<volatile int32_t *>(uintptr_t(64));
        *bad = 1; /* the reserved low addresses: SIGSEGV */
    }
    asc_syncthreads();
    out[lin] = 2; /* not reached */
}

__global__ __vector__ void fail_kernel(int mode, int32_t *out)
{
    if (mode == 0) {
        asc_vf_call<count_threads>(dim3(0), out);
    } else if (mode == 1) {
        asc_vf_call<count_threads>(dim3(64, 64), out);
    } else if (mode == 2) {
        asc_vf_call<throw_in_one>(dim3(8, 2), out);
    } else if (mode == 4) {
        asc_vf_call<fault_in_one>(dim3(8, 2), out);
    } else {
        asc_vf_call<count_threads>(dim3(8, 2), out);
    }
}

static void fail_scenario(aclrtStream stream)
{
    int32_t *out = static_cast<int32_t *>(aclshmem_calloc(16, sizeof(int32_t)));
    for (int mode : {0, 1, 2, 4}) {
        fail_kernel<<<1, nullptr, stream>>>(mode, out);
        CHECK(aclrtSynchronizeStream(stream) != ACL_SUCCESS, "bad SIMT launch %d reported success", mode);
    }
    for (int i = 0; i < 16; i++) {
        CHECK(out[i] == 0, "a failed SIMT call wrote out[%d] = %d", i, out[i]);
    }
    fail_kernel<<<1, nullptr, stream>>>(3, out);
    ACL_OK(aclrtSynchronizeStream(stream));
    for (int i = 0; i < 16; i++) {
        CHECK(out[i] == 7, "the good SIMT launch after the failures: out[%d] = %d", i, out[i]);
    }
}

int main(int argc, char **argv)
{
    auto run = [](const std::string &scenario, aclrtStream stream, const aclshmemx_init_attr_t &attr) {
        (void)attr;
        if (scenario == "simt") {
            simt_scenario(stream);
        } else if (scenario == "fail") {
            fail_scenario(stream);
        } else {
            return false;
        }
        return true;
    };
    return kernel_test_main(argc, argv, "simt_tests", run);
}
