/*
 * kernel_wrapper_tests.cpp - what scripts/aclshmem-cxx must get right beyond launches written out in
 * the source (tests/kernels.rs, `wrapper_*` tests). Scenarios:
 *   macro_launch  launches inside #defines whose kernel names the macro pastes (`Fill_##NAME<<<...>>>`,
 *                 as the original's unit tests launch one kernel per type), AIV-only and MIX, and a
 *                 launch inside a template function of a local header (kernel_wrapper_launch.h),
 *                 and launches whose template arguments hold `<`, `>`, `<<`, `>>`, `<=`
 *   vec_guard     MIX kernels whose bodies are compiled for vector cores only (`#ifdef
 *                 __DAV_C220_VEC__`, with and without `#else`): the AIC contexts of the launch do not
 *                 run that code, as on the NPU, where the cube-core build does not contain it; and the
 *                 original's barrier pattern (read a counter, vector-core barrier over every PE, one
 *                 context stores counter + 1 on the next PE, barrier) counting launches exactly,
 *                 with aclshmemx_barrier_all_vec and with the original's internal aclshmemi_barrier and
 *                 aclshmemi_sync_npu_v1..v4; and the
 *                 original's relay-barrier test pattern (aclshmemx_barrier_all_vec_relay, the internal
 *                 aclshmemi_signal_set/add/op)
 *   internals     what upstream examples' host code reaches beyond shmem.h: the internal
 *                 aclshmemi_control_barrier_all() (C++ linkage; an error before init, then a barrier
 *                 of every PE), the platform queries of tiling/platform/platform_ascendc.h, and the
 *                 include paths aclshmemi_host_common.h, aclshmem.h and acl/acl_mdl.h
 *   exception     aclshmemx_enable_exception_report / aclshmemx_report_exception: a launch in which one
 *                 context traps calls the program's callback through the library (error, device),
 *                 each recorded failure is reported once, INFO without a callback, bad level refused
 */
#include <cstdint>
#include <cstdio>
#include <string>

#include "acl/acl.h"
#include "kernel_operator.h"
#include "shmem.h"
#include "kernel_test_util.h"
#include "kernel_wrapper_launch.h"
/* include paths of upstream examples */
#include "acl/acl_mdl.h"
#include "aclshmem.h"
#include "aclshmemi_host_common.h"
#include "shmemi_host_common.h"
#include "tiling/platform/platform_ascendc.h"
#include "host/utils/shmem_host_exception.h"

/* ---- macro_launch ---- */

#define DEFINE_FILL(NAME, T)                                                                         \
    extern "C" [[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void Fill_##NAME(T *out, T value) \
    {                                                                                                \
        out[AscendC::GetBlockIdx()] = value;                                                                \
    }
#define DEFINE_COUNT(NAME, T)                                                     \
    __global__ __aicore__ void Count_##NAME(T *counter)                           \
    {                                                                             \
        __atomic_fetch_add(counter, static_cast<T>(1), __ATOMIC_SEQ_CST);        \
    }
DEFINE_FILL(int32, int32_t)
DEFINE_FILL(int64, int64_t)
DEFINE_COUNT(int32, int32_t)

#define LAUNCH_FILL(NAME, blocks, stream, out, value) Fill_##NAME<<<blocks, nullptr, stream>>>(out, value)
#define LAUNCH_COUNT(NAME, blocks, stream, counter) \
    do {                                            \
        Count_##NAME<<<blocks, nullptr, stream>>>(counter); \
    } while (0)

/* an AIV-only kernel template whose arguments in the launches below hold `<`, `>`, `<<`, `>>`, `<=`
   (aclshmem-cxx refused them, or took `n < 3) ? 1 : 2>` for the kernel's name) */
template <int K>
[[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void AddK(int32_t *out)
{
    __atomic_fetch_add(out, K, __ATOMIC_SEQ_CST);
}

static void operator_launches(aclrtStream stream)
{
    constexpr int kSmall = 2;
    auto *sum = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    AddK<1 << 2><<<2, nullptr, stream>>>(sum);         /* 2 contexts x 4 */
    AddK<(3 > 2)><<<2, nullptr, stream>>>(sum);        /* 2 x 1 */
    AddK<(8 >> 1)><<<2, nullptr, stream>>>(sum);       /* 2 x 4 */
    AddK<(kSmall < 3) ? 10 : 20><<<2, nullptr, stream>>>(sum); /* 2 x 10 */
    AddK<kSmall <= 2><<<2, nullptr, stream>>>(sum);    /* 2 x 1 */
    ACL_OK(aclrtSynchronizeStream(stream));
    CHECK(*sum == 2 * (4 + 1 + 4 + 10 + 1), "launches with operators in the template arguments added %d, expected %d",
          *sum, 2 * (4 + 1 + 4 + 10 + 1));
    aclshmem_free(sum);
}

static void macro_launch(aclrtStream stream)
{
    operator_launches(stream);
    constexpr uint32_t kBlocks = 6;
    auto *i32 = static_cast<int32_t *>(aclshmem_calloc(kBlocks + 1, sizeof(int32_t)));
    auto *i64 = static_cast<int64_t *>(aclshmem_calloc(kBlocks + 1, sizeof(int64_t)));
    auto *count = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    LAUNCH_FILL(int32, kBlocks, stream, i32, 7);
    LAUNCH_FILL(int64, kBlocks, stream, i64, int64_t(1) << 40);
    LAUNCH_COUNT(int32, kBlocks, stream, count);
    add_in_header<int32_t>(i32, kBlocks + 1, 100, 3, stream);
    ACL_OK(aclrtSynchronizeStream(stream));
    for (uint32_t i = 0; i < kBlocks; i++) {
        CHECK(i32[i] == 7 + 300, "i32[%u] = %d, expected 307 (fill 7, then 3 AIV contexts add 100)", i, i32[i]);
        CHECK(i64[i] == (int64_t(1) << 40), "i64[%u] = %lld", i, static_cast<long long>(i64[i]));
    }
    CHECK(i32[kBlocks] == 300, "i32[%u] = %d: an AIV-only fill ran more than blockDim contexts", kBlocks,
          i32[kBlocks]);
    CHECK(i64[kBlocks] == 0, "i64[%u] = %lld: an AIV-only fill ran more than blockDim contexts", kBlocks,
          static_cast<long long>(i64[kBlocks]));
    CHECK(*count == 3 * static_cast<int32_t>(kBlocks), "a MIX launch in a macro ran %d contexts, expected %d",
          *count, 3 * kBlocks);
    aclshmem_free(count);
    aclshmem_free(i64);
    aclshmem_free(i32);
}

/* ---- vec_guard ---- */

/* counts[0]: contexts that ran the vector-only code; counts[1]: contexts that ran the #else part */
ACLSHMEM_GLOBAL void VecOnly(int32_t *counts)
{
#ifdef __DAV_C220_VEC__
    __atomic_fetch_add(&counts[0], 1, __ATOMIC_SEQ_CST);
#endif
}

extern "C" __global__ __aicore__ void VecOrElse(int32_t *counts)
{
#if defined(__DAV_C220_VEC__) || defined(__DAV_C310_VEC__)
    __atomic_fetch_add(&counts[0], 1, __ATOMIC_SEQ_CST);
#else
    __atomic_fetch_add(&counts[1], 1, __ATOMIC_SEQ_CST);
#endif
}

template <typename T>
__global__ __aicore__ void VecOnlyTemplate(T *counts)
{
#ifdef __DAV_C220_VEC__
    __atomic_fetch_add(&counts[0], static_cast<T>(1), __ATOMIC_SEQ_CST);
#endif
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
/* one launch of the original's device-barrier pattern: every vector context reads the counter, all
   of them meet on every PE, one stores counter + 1 on the next PE, all meet again */
__global__ __aicore__ void IncreaseNext(int32_t *counter, int32_t *seen)
{
#ifdef __DAV_C220_VEC__
    int32_t v = __atomic_load_n(counter, __ATOMIC_SEQ_CST);
    aclshmemx_barrier_all_vec();
    if (AscendC::GetBlockIdx() == 0) {
        aclshmem_int32_p(counter, v + 1, (aclshmem_my_pe() + 1) % aclshmem_n_pes());
    }
    aclshmemx_barrier_all_vec();
    __atomic_fetch_add(seen, 1, __ATOMIC_SEQ_CST);
#endif
}
#pragma GCC diagnostic pop

/* the same with the original's internal names its unit tests use: the team barrier
   aclshmemi_barrier<is_aiv_only>() (variant 0), the team syncs of newer releases
   aclshmemi_sync_npu_v1..v4<is_aiv_only>() (variants 1..4), and the CCE flag intrinsics */
static void internal_team_barrier(int variant)
{
    switch (variant) {
        case 1: aclshmemi_sync_npu_v1<true>(ACLSHMEM_TEAM_WORLD); break;
        case 2: aclshmemi_sync_npu_v2<true>(ACLSHMEM_TEAM_WORLD); break;
        case 3: aclshmemi_sync_npu_v3(ACLSHMEM_TEAM_WORLD); break;
        case 4: aclshmemi_sync_npu_v4<true>(ACLSHMEM_TEAM_WORLD); break;
        default: aclshmemi_barrier<true>(ACLSHMEM_TEAM_WORLD); break;
    }
}
__global__ __aicore__ void IncreaseNextInternal(int32_t *counter, int32_t *seen, int variant)
{
#ifdef __DAV_C220_VEC__
    int32_t v = __atomic_load_n(counter, __ATOMIC_SEQ_CST);
    internal_team_barrier(variant);
    if (AscendC::GetBlockIdx() == 0) {
        aclshmem_int32_p(counter, v + 1, (aclshmem_my_pe() + 1) % aclshmem_n_pes());
    }
    set_flag(PIPE_MTE3, PIPE_S, EVENT_ID0);
    wait_flag(PIPE_MTE3, PIPE_S, EVENT_ID0);
    internal_team_barrier(variant);
    __atomic_fetch_add(seen, 1, __ATOMIC_SEQ_CST);
#else
    (void)counter, (void)seen, (void)variant;
#endif
}

/* the pattern of the original's relay-barrier test: every vector context sets its PE's slot on every
   other PE (the internal aclshmemi_signal_set), meets the others in aclshmemx_barrier_all_vec_relay, and
   then must see every other PE's tag of this round; every context also adds 1 to a word of PE 0
   (aclshmemi_signal_add) and the last slot is set locally */
__global__ __aicore__ void RelaySlots(int32_t *slots, int32_t *bad, int32_t iters)
{
#ifdef __DAV_C220_VEC__
    int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    for (int32_t i = 1; i <= iters; ++i) {
        for (int dst = 0; dst < n; ++dst) {
            if (dst != me) {
                aclshmemi_signal_set(slots + me, dst, (me + 1) * 10000 + i);
            }
        }
        aclshmemx_barrier_all_vec_relay();
        for (int src = 0; src < n; ++src) {
            if (src != me && aclshmemi_load(slots + src) != (src + 1) * 10000 + i) {
                __atomic_fetch_add(bad, 1, __ATOMIC_SEQ_CST);
            }
        }
        if (i % 2 == 0) {
            aclshmemx_sync_all_vec_relay();
        } else {
            aclshmemx_sync_vec_relay(ACLSHMEM_TEAM_WORLD);
        }
    }
    aclshmemi_signal_add(slots + n + 1, 0, 1);
    aclshmemi_signal_op(slots + n + 2, 7, ACLSHMEM_SIGNAL_SET, 0);
    aclshmemi_signal_set(slots + n, iters);
#endif
}

static void vec_guard(aclrtStream stream)
{
    constexpr uint32_t kBlocks = 4;
    const int32_t aiv = 2 * kBlocks, aic = kBlocks;
    auto *counts = static_cast<int32_t *>(aclshmem_calloc(2, sizeof(int32_t)));
    VecOnly<<<kBlocks, nullptr, stream>>>(counts);
    ACL_OK(aclrtSynchronizeStream(stream));
    CHECK(counts[0] == aiv, "VecOnly: %d contexts ran vector-only code, expected the %d AIV ones", counts[0], aiv);
    counts[0] = counts[1] = 0;
    VecOrElse<<<kBlocks, nullptr, stream>>>(counts);
    ACL_OK(aclrtSynchronizeStream(stream));
    CHECK(counts[0] == aiv && counts[1] == aic, "VecOrElse: %d vector / %d other, expected %d / %d", counts[0],
          counts[1], aiv, aic);
    auto *c64 = static_cast<int64_t *>(aclshmem_calloc(1, sizeof(int64_t)));
    VecOnlyTemplate<int64_t><<<kBlocks, nullptr, stream>>>(c64);
    ACL_OK(aclrtSynchronizeStream(stream));
    CHECK(*c64 == aiv, "VecOnlyTemplate<int64_t>: %lld contexts, expected %d", static_cast<long long>(*c64), aiv);

    constexpr uint32_t kBarrierBlocks = 16;
    auto *counter = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    auto *seen = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    aclshmem_barrier_all();
    for (int32_t round = 1; round <= 8; round++) {
        if (round <= 3) {
            IncreaseNext<<<kBarrierBlocks, nullptr, stream>>>(counter, seen);
        } else {
            IncreaseNextInternal<<<kBarrierBlocks, nullptr, stream>>>(counter, seen, round - 4);
        }
        ACL_OK(aclrtSynchronizeStream(stream));
        aclshmem_barrier_all();
        CHECK(*counter == round, "IncreaseNext round %d: counter %d", round, *counter);
        CHECK(*seen == round * 2 * static_cast<int32_t>(kBarrierBlocks), "IncreaseNext round %d: %d contexts",
              round, *seen);
    }
    const int n = aclshmem_n_pes();
    auto *slots = static_cast<int32_t *>(aclshmem_calloc(static_cast<size_t>(n) + 3, sizeof(int32_t)));
    *seen = 0;
    aclshmem_barrier_all();
    constexpr int32_t kIters = 20;
    RelaySlots<<<kBarrierBlocks, nullptr, stream>>>(slots, seen, kIters);
    ACL_OK(aclrtSynchronizeStream(stream));
    aclshmem_barrier_all();
    CHECK(*seen == 0, "relay barrier: %d stale slots seen after it", *seen);
    CHECK(slots[n] == kIters, "local aclshmemi_signal_set: %d", slots[n]);
    if (aclshmem_my_pe() == 0) {
        CHECK(slots[n + 1] == n * 2 * static_cast<int32_t>(kBarrierBlocks) && slots[n + 2] == 7,
              "aclshmemi_signal_add/op on PE 0: %d, %d", slots[n + 1], slots[n + 2]);
    }
    aclshmem_free(slots);
    aclshmem_free(seen);
    aclshmem_free(counter);
    aclshmem_free(c64);
    aclshmem_free(counts);
}

/* ---- exception reporting (host/utils/shmem_host_exception.h) ---- */

static int g_exc_calls = 0;
static uint32_t g_exc_code = 0, g_exc_device = 0xFFFFFFFFu;

static void on_exception(void *info)
{
    g_exc_calls++;
    g_exc_code = aclrtGetErrorCodeFromExceptionInfo(static_cast<aclrtExceptionInfo *>(info));
    g_exc_device = aclrtGetDeviceIdFromExceptionInfo(static_cast<aclrtExceptionInfo *>(info));
}

/* one vector context of the launch traps: the launch fails */
__global__ __aicore__ void TrapInOneBlock()
{
    if (AscendC::GetBlockIdx() == 1) {
        trap();
    }
}

static void exception_report(aclrtStream stream)
{
    int32_t device = -1;
    ACL_OK(aclrtGetDevice(&device));
    CHECK(aclshmemx_enable_exception_report(on_exception, static_cast<aclshmemx_exception_report_level_t>(7)) ==
              ACLSHMEM_INVALID_PARAM,
          "level 7 accepted");
    CHECK(aclshmemx_report_exception() == ACLSHMEM_SUCCESS, "report with nothing recorded");
    CHECK(aclshmemx_enable_exception_report(on_exception, ACLSHMEMX_EXCEPTION_REPORT_DEBUG) == ACLSHMEM_SUCCESS,
          "enable DEBUG");
    TrapInOneBlock<<<2, nullptr, stream>>>();
    CHECK(aclrtSynchronizeStream(stream) != ACL_SUCCESS, "the trapping launch succeeded");
    CHECK(g_exc_calls == 1 && g_exc_code != 0 && g_exc_device == static_cast<uint32_t>(device),
          "callback: %d calls, error %u, device %u (expected %d)", g_exc_calls, g_exc_code, g_exc_device, device);
    /* the first report logs the record (with the instance at DEBUG), the second nothing */
    CHECK(aclshmemx_report_exception() == ACLSHMEM_SUCCESS, "report");
    CHECK(aclshmemx_report_exception() == ACLSHMEM_SUCCESS, "second report");
    /* INFO, no program callback: recorded and reported, the old callback not called */
    CHECK(aclshmemx_enable_exception_report(nullptr, ACLSHMEMX_EXCEPTION_REPORT_INFO) == ACLSHMEM_SUCCESS,
          "enable INFO");
    TrapInOneBlock<<<2, nullptr, stream>>>();
    CHECK(aclrtSynchronizeStream(stream) != ACL_SUCCESS, "the trapping launch succeeded");
    CHECK(g_exc_calls == 1, "the replaced callback was called");
    CHECK(aclshmemx_report_exception() == ACLSHMEM_SUCCESS, "report");
    /* a launch that works afterwards */
    auto *words = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    add_in_header<int32_t>(words, 1, 1, 4, stream);
    ACL_OK(aclrtSynchronizeStream(stream));
    CHECK(*words == 4, "%d contexts ran after the failures", *words);
    aclshmem_free(words);
}

/* ---- internals ---- */

/* the original's checking macros, in each arity */
static int check_ret_1(int v)
{
    ACLSHMEM_CHECK_RET(v);
    return 100;
}
static int check_ret_2(int v)
{
    ACLSHMEM_CHECK_RET(v, "step two of " << 2);
    return 100;
}
static int check_ret_3(int v)
{
    ACLSHMEM_CHECK_RET(v, "step three", -9);
    return 100;
}
static void check_void(int v, int *reached)
{
    ACLSHMEM_CHECK(v);
    *reached = 1;
}
static int assert_ret(bool ok)
{
    SHM_ASSERT_RETURN(ok, -3);
    return 1;
}
static int assert_log_ret(bool ok)
{
    SHM_ASSERT_LOG_AND_RETURN(ok, "assert with its message " << 7, -4);
    return 1;
}
static void assert_void(bool ok, int *reached)
{
    SHM_ASSERT_RET_VOID(ok);
    *reached = 2;
}
static std::string g_logged;
static int g_logged_level = -1;
static void capture_log(int level, const char *msg)
{
    g_logged += msg;
    g_logged += "\n";
    if (std::string(msg).find("step two of 2") != std::string::npos) {
        g_logged_level = level;
    }
}

static void internals()
{
    /* g_state: the host copy of the device-state record */
    CHECK(g_state.is_aclshmem_initialized && g_state.mype == aclshmem_my_pe() && g_state.npes == aclshmem_n_pes(),
          "g_state: initialised %d, mype %d, npes %d", g_state.is_aclshmem_initialized, g_state.mype, g_state.npes);
    CHECK(g_state.heap_base == aclshmemx_dev_state()->heap_base && g_state.heap_base != nullptr &&
              g_state.heap_size == aclshmemx_dev_state()->heap_size,
          "g_state.heap_base %p", g_state.heap_base);
    {
        auto *first = static_cast<uint8_t *>(aclshmem_malloc(64));
        CHECK(first != nullptr && first >= static_cast<uint8_t *>(g_state.heap_base) &&
                  first < static_cast<uint8_t *>(g_state.heap_base) + g_state.heap_size,
              "aclshmem_malloc %p is outside g_state's heap", static_cast<void *>(first));
        aclshmem_free(first);
    }
    aclshmem_team_t odd = ACLSHMEM_TEAM_INVALID;
    CHECK(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, aclshmem_n_pes(), &odd) == 0 && odd > 0,
          "split");
    CHECK(odd > 0 && odd < ACLSHMEM_MAX_TEAMS && g_state.team_pools[odd] != nullptr,
          "g_state.team_pools[%d] not refreshed by the split", odd);
    aclshmem_team_destroy(odd);
    CHECK(odd > 0 && odd < ACLSHMEM_MAX_TEAMS && g_state.team_pools[odd] == nullptr,
          "g_state.team_pools[%d] not refreshed by the destroy", odd);

    /* ACLSHMEM_CHECK_RET / ACLSHMEM_CHECK / SHM_LOG_*, through the library's logger */
    CHECK(aclshmemx_set_extern_logger(capture_log) == 0, "extern logger");
    CHECK(check_ret_1(0) == 100 && check_ret_1(7) == 7, "ACLSHMEM_CHECK_RET(x)");
    CHECK(check_ret_2(0) == 100 && check_ret_2(5) == 5, "ACLSHMEM_CHECK_RET(x, message)");
    CHECK(check_ret_3(0) == 100 && check_ret_3(6) == -9, "ACLSHMEM_CHECK_RET(x, message, code)");
    int reached = 0;
    check_void(3, &reached);
    CHECK(reached == 0, "ACLSHMEM_CHECK(3) went on");
    check_void(0, &reached);
    CHECK(reached == 1, "ACLSHMEM_CHECK(0) returned");
    CHECK(assert_ret(true) == 1 && assert_ret(false) == -3, "SHM_ASSERT_RETURN");
    CHECK(assert_log_ret(true) == 1 && assert_log_ret(false) == -4, "SHM_ASSERT_LOG_AND_RETURN");
    assert_void(false, &reached);
    CHECK(reached == 1, "SHM_ASSERT_RET_VOID(false) went on");
    assert_void(true, &reached);
    CHECK(reached == 2, "SHM_ASSERT_RET_VOID(true) returned");
    SHM_LOG_WARN("a warning " << 42);
    CHECK(g_logged_level == aclshmem_log::ERROR_LEVEL && g_logged.find("step two of 2") != std::string::npos &&
              g_logged.find("check_ret_1(7)") == std::string::npos && g_logged.find("v failed: 7") != std::string::npos &&
              g_logged.find("step three") != std::string::npos && g_logged.find("a warning 42") != std::string::npos &&
              g_logged.find("assert with its message 7") != std::string::npos &&
              g_logged.find("assertion failed: ok") != std::string::npos &&
              g_logged.find("kernel_wrapper_tests.cpp") != std::string::npos,
          "logged (level %d): %s", g_logged_level, g_logged.c_str());

    /* a barrier of every PE: each PE bumps its slot on every PE, then all must be seen */
    int n = aclshmem_n_pes();
    auto *slots = static_cast<int32_t *>(aclshmem_calloc(static_cast<size_t>(n), sizeof(int32_t)));
    for (int round = 1; round <= 3; round++) {
        for (int pe = 0; pe < n; pe++) {
            aclshmem_int32_p(&slots[aclshmem_my_pe()], round, pe);
        }
        aclshmem_quiet();
        CHECK(aclshmemi_control_barrier_all() == 0, "aclshmemi_control_barrier_all failed");
        for (int pe = 0; pe < n; pe++) {
            CHECK(slots[pe] == round, "round %d: slot of PE %d holds %d after the barrier", round, pe, slots[pe]);
        }
        CHECK(aclshmemi_control_barrier_all() == 0, "aclshmemi_control_barrier_all failed");
    }
    aclshmem_free(slots);

    auto *platform = platform_ascendc::PlatformAscendCManager::GetInstance();
    CHECK(platform != nullptr && platform == platform_ascendc::PlatformAscendCManager::GetInstance("Ascend910B3"),
          "one platform instance");
    uint64_t ub = 0, l1 = 0;
    platform->GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    platform->GetCoreMemSize(platform_ascendc::CoreMemType::L1, l1);
    CHECK(ub == ACLSHMEM_UB_SIZE, "UB %llu, expected the %u bytes a block context has", (unsigned long long)ub,
          ACLSHMEM_UB_SIZE);
    CHECK(l1 == 512 * 1024, "L1 %llu", (unsigned long long)l1);
    CHECK(platform->GetCoreNumAiv() == 2 * platform->GetCoreNumAic() && platform->GetCoreNum() == platform->GetCoreNumAic(),
          "core counts %u AIV / %u AIC / %u", platform->GetCoreNumAiv(), platform->GetCoreNumAic(),
          platform->GetCoreNum());
    CHECK(platform->CalcTschBlockDim(40, 20, 40) == 20 && platform->CalcTschBlockDim(7, 0, 40) == 7,
          "CalcTschBlockDim");
    CHECK(platform->GetSocVersion() == platform_ascendc::SocVersion::ASCEND910B, "soc version");
    /* blockDim = the AIV count, as upstream host tiling launches vector kernels */
    auto *words = static_cast<int32_t *>(aclshmem_calloc(1, sizeof(int32_t)));
    aclrtStream stream = g_state_host.default_stream;
    add_in_header<int32_t>(words, 1, 1, platform->GetCoreNumAiv(), stream);
    ACL_OK(aclrtSynchronizeStream(stream));
    CHECK(*words == static_cast<int32_t>(platform->GetCoreNumAiv()), "%d AIV contexts ran", *words);
    aclshmem_free(words);
}

int main(int argc, char **argv)
{
    bool internals_scenario = argc > 1 && std::string(argv[1]) == "internals";
    if (internals_scenario && (g_state.is_aclshmem_initialized || g_state.heap_base != nullptr)) {
        std::printf("FAIL: g_state is set before init\n");
        return 1;
    }
    if (internals_scenario) {
        int rc = aclshmemi_control_barrier_all();
        if (rc != ACLSHMEM_NOT_INITED) {
            std::printf("FAIL: aclshmemi_control_barrier_all before init returned %d, expected %d\n", rc,
                        ACLSHMEM_NOT_INITED);
            return 1;
        }
    }
    auto run = [](const std::string &scenario, aclrtStream stream, aclshmemx_init_attr_t &) {
        if (scenario == "macro_launch") {
            macro_launch(stream);
        } else if (scenario == "vec_guard") {
            vec_guard(stream);
        } else if (scenario == "internals") {
            internals();
        } else if (scenario == "exception") {
            exception_report(stream);
        } else {
            return false;
        }
        return true;
    };
    int rc = kernel_test_main(argc, argv, "kernel_wrapper_tests", run);
    if (internals_scenario && (g_state.is_aclshmem_initialized || g_state.heap_base != nullptr)) {
        std::printf("FAIL: g_state is still set after finalize\n");
        return 1;
    }
    return rc;
}
