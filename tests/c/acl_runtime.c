/*
 * Behaviour tests of the CPU ACL shim through its C ABI (libascendcl.so), driven by
 * ascendcl/tests/c_api.rs: `acl_runtime <test>` runs one test and exits 0 on success.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_shim.h"
#include "runtime/rt_ffts.h"

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);     \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

#define EXPECT(call, want)                                                               \
    do {                                                                                 \
        aclError got_ = (call);                                                          \
        if (got_ != (aclError)(want)) {                                                  \
            fprintf(stderr, "%s:%d: %s returned %d, expected %d\n", __FILE__, __LINE__,  \
                    #call, got_, (int)(want));                                           \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

#define OK(call) EXPECT(call, ACL_SUCCESS)

static void sleep_ms(long ms)
{
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- host functions used by several tests ---- */

static void sleeper(void *args) { sleep_ms((long)(size_t)args); }

static void bump(void *args) { __atomic_fetch_add((int *)args, 1, __ATOMIC_SEQ_CST); }

struct log {
    int entries[4096];
    int len;
};

struct log_item {
    struct log *log;
    int value;
};

static void append(void *args)
{
    struct log_item *it = (struct log_item *)args;
    it->log->entries[it->log->len++] = it->value;
}

static aclError fail_with(void *args) { return (aclError)(size_t)args; }

/* ---- tests ---- */

static void test_init_cycles(void)
{
    EXPECT(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
    for (int cycle = 0; cycle < 5; cycle++) {
        aclrtStream s = NULL;
        void *d = NULL;
        char host[64] = {0};
        OK(aclInit(NULL));
        EXPECT(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE);
        OK(aclrtSetDevice(cycle));
        OK(aclrtCreateStream(&s));
        OK(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST));
        OK(aclrtMemsetAsync(d, 64, 'a' + cycle, 64, s));
        OK(aclrtMemcpyAsync(host, 64, d, 64, ACL_MEMCPY_DEVICE_TO_HOST, s));
        OK(aclrtSynchronizeStream(s));
        CHECK(host[0] == 'a' + cycle && host[63] == 'a' + cycle);
        OK(aclrtFree(d));
        OK(aclrtDestroyStream(s));
        OK(aclrtResetDevice(cycle));
        OK(aclFinalize());
        EXPECT(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
    }
    /* finalize without reset: everything is released, the thread has no device afterwards */
    {
        aclrtStream s = NULL;
        int32_t dev = -1;
        int count = 0;
        OK(aclInit(""));
        OK(aclrtSetDevice(1));
        OK(aclrtCreateStream(&s));
        OK(aclrtLaunchHostFunc(s, sleeper, (void *)(size_t)50));
        OK(aclrtLaunchHostFunc(s, bump, &count));
        OK(aclFinalize());
        CHECK(count == 1); /* drained, not dropped */
        EXPECT(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
        EXPECT(aclrtSynchronizeStream(s), ACL_ERROR_RT_INVALID_HANDLE);
    }
    /* aclFinalizeReference: N inits, N releases */
    {
        uint64_t left = 99;
        OK(aclInit(NULL));
        EXPECT(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE);
        OK(aclFinalizeReference(&left));
        CHECK(left == 1);
        OK(aclFinalizeReference(&left));
        CHECK(left == 0);
        EXPECT(aclFinalizeReference(&left), ACL_ERROR_REPEAT_FINALIZE);
        EXPECT(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
        OK(aclInit(NULL));
        OK(aclFinalizeReference(NULL));
    }
    /* a re-initialisation with another configuration than the process's first aclInit (none) is
       refused; the same one (none: NULL, "", or a file that cannot be read) is fine */
    {
        char path[] = "/tmp/acl_runtime_cfg_XXXXXX";
        int fd = mkstemp(path);
        CHECK(fd >= 0);
        CHECK(write(fd, "{}", 2) == 2);
        close(fd);
        EXPECT(aclInit(path), ACL_ERROR_INVALID_PARAM);
        EXPECT(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE); /* the refused call initialised nothing */
        OK(aclInit("/nonexistent/acl.json"));
        EXPECT(aclInit(path), ACL_ERROR_REPEAT_INITIALIZE); /* while initialised: counted, not applied */
        OK(aclFinalize());
        OK(aclInit(""));
        OK(aclFinalize());
        unlink(path);
    }
}

static void test_devices(void)
{
    uint32_t count = 0;
    int32_t dev = -1;
    aclrtRunMode mode = ACL_DEVICE;
    int32_t major = 0, minor = 0, patch = -1;
    const char *soc;

    OK(aclInit(NULL));
    EXPECT(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
    OK(aclrtGetDeviceCount(&count));
    CHECK(count == 16);
    EXPECT(aclrtGetDeviceCount(NULL), ACL_ERROR_INVALID_PARAM);
    for (int32_t i = 0; i < 16; i++) {
        OK(aclrtSetDevice(i));
        OK(aclrtGetDevice(&dev));
        CHECK(dev == i);
    }
    EXPECT(aclrtSetDevice(16), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT(aclrtResetDevice(16), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT(aclrtGetDevice(NULL), ACL_ERROR_INVALID_PARAM);
    OK(aclrtGetDevice(&dev));
    CHECK(dev == 15); /* a failed set leaves the current device alone */

    /* reference counting: two sets, two resets, the third is an error */
    OK(aclrtSetDevice(3));
    OK(aclrtResetDevice(3));
    OK(aclrtResetDevice(3));
    EXPECT(aclrtResetDevice(3), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL); /* device 3 was current, now gone */
    OK(aclrtSetDevice(4));
    OK(aclrtSetDevice(4));
    OK(aclrtResetDeviceForce(4));
    EXPECT(aclrtResetDevice(4), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT(aclrtResetDeviceForce(4), ACL_ERROR_RT_CONTEXT_NULL);

    soc = aclrtGetSocName();
    CHECK(soc != NULL && strncmp(soc, "Ascend", 6) == 0);
    CHECK(soc == aclrtGetSocName());
    OK(aclrtGetRunMode(&mode));
    CHECK(mode == ACL_HOST);
    EXPECT(aclrtGetRunMode(NULL), ACL_ERROR_INVALID_PARAM);
    {
        uint64_t ffts = 7;
        uint32_t ffts_len = 7;
        CHECK(rtGetC2cCtrlAddr(&ffts, &ffts_len) == RT_ERROR_NONE && ffts == 0 && ffts_len == 0);
        EXPECT(rtGetC2cCtrlAddr(NULL, &ffts_len), ACL_ERROR_INVALID_PARAM);
        EXPECT(rtGetC2cCtrlAddr(&ffts, NULL), ACL_ERROR_INVALID_PARAM);
    }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    OK(aclrtGetVersion(&major, &minor, &patch));
    CHECK(major == ACL_MAJOR_VERSION && minor == ACL_MINOR_VERSION && patch == ACL_PATCH_VERSION);
    CHECK(major > 1 || minor >= 15); /* shmem disables features below 1.15 */
    EXPECT(aclrtGetVersion(NULL, &minor, &patch), ACL_ERROR_INVALID_PARAM);
#pragma GCC diagnostic pop
    OK(aclFinalize());
}

/* ACL_SHIM_DEVICE_COUNT=4 ACL_SHIM_SOC_NAME=Ascend950PR_9599 */
static void test_env_config(void)
{
    uint32_t count = 0;
    OK(aclrtGetDeviceCount(&count));
    CHECK(count == 4);
    OK(aclrtSetDevice(3));
    EXPECT(aclrtSetDevice(4), ACL_ERROR_RT_INVALID_DEVICEID);
    CHECK(strcmp(aclrtGetSocName(), "Ascend950PR_9599") == 0);
    {
        size_t free_b = 0, total = 0;
        OK(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total));
        CHECK(total == (size_t)256 << 20); /* ACL_SHIM_DEVICE_MEM_SIZE=256M */
    }
    {
        int64_t v = 0;
        OK(aclrtGetDeviceInfo(3, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, &v));
        CHECK(v == (int64_t)256 << 20);
        EXPECT(aclrtGetDeviceInfo(4, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, &v), ACL_ERROR_RT_INVALID_DEVICEID);
        EXPECT(aclGetDeviceCapability(4, ACL_DEVICE_INFO_AI_CORE_NUM, &v), ACL_ERROR_INVALID_PARAM);
    }
    OK(aclrtResetDevice(3));
}

/* ACL_SHIM_DEVICE_COUNT=banana: ignored, default used */
static void test_env_invalid(void)
{
    uint32_t count = 0;
    OK(aclrtGetDeviceCount(&count));
    CHECK(count == 16);
}

/* aclrtGetDeviceInfo / aclGetDeviceCapability: the emulated Ascend 910B4-like device (20 AIC,
   40 AIV, 6 AI CPUs, 192 MiB L2, as include/tiling/platform/platform_ascendc.h), every attribute on
   every device, and every error path with the out-parameter left alone. */
static void test_device_info(void)
{
    const int64_t l2 = (int64_t)192 << 20;
    uint32_t count = 0;
    int64_t v = -7;
    size_t free_b = 0, total = 0;
    const char *msg;

    OK(aclrtGetDeviceCount(&count));
    CHECK(count == 16);
    /* static properties: no aclInit, no aclrtSetDevice needed */
    for (uint32_t dev = 0; dev < count; dev++) {
        struct {
            aclrtDevAttr attr;
            int64_t want;
        } attrs[] = {
            {ACL_DEV_ATTR_AICPU_CORE_NUM, 6},
            {ACL_DEV_ATTR_AICORE_CORE_NUM, 20},
            {ACL_DEV_ATTR_CUBE_CORE_NUM, 20},
            {ACL_DEV_ATTR_VECTOR_CORE_NUM, 40},
            {ACL_DEV_ATTR_L2_CACHE_SIZE, l2},
            {ACL_DEV_ATTR_SMP_ID, 0},
            {ACL_DEV_ATTR_PHY_CHIP_ID, (int64_t)dev},
            {ACL_DEV_ATTR_SUPER_POD_DEVIDE_ID, (int64_t)dev},
            {ACL_DEV_ATTR_SUPER_POD_SERVER_ID, 0},
            {ACL_DEV_ATTR_SUPER_POD_ID, 0},
            {ACL_DEV_ATTR_CUST_OP_PRIVILEGE, 0},
            {ACL_DEV_ATTR_MAINBOARD_ID, 0},
            {ACL_DEV_ATTR_IS_VIRTUAL, 0},
        };
        for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
            v = -7;
            OK(aclrtGetDeviceInfo(dev, attrs[i].attr, &v));
            if (v != attrs[i].want) {
                fprintf(stderr, "device %u attr %d: got %lld, want %lld\n", dev, (int)attrs[i].attr,
                        (long long)v, (long long)attrs[i].want);
                exit(1);
            }
        }
        v = -7;
        OK(aclGetDeviceCapability(dev, ACL_DEVICE_INFO_AI_CORE_NUM, &v));
        CHECK(v == 20);
        OK(aclGetDeviceCapability(dev, ACL_DEVICE_INFO_VECTOR_CORE_NUM, &v));
        CHECK(v == 40);
        OK(aclGetDeviceCapability(dev, ACL_DEVICE_INFO_L2_SIZE, &v));
        CHECK(v == l2);
    }

    /* total memory = aclrtGetMemInfo's total, not reduced by allocations */
    OK(aclrtSetDevice(2));
    OK(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total));
    OK(aclrtGetDeviceInfo(2, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, &v));
    CHECK(v > 0 && (size_t)v == total);
    {
        void *d = NULL;
        OK(aclrtMalloc(&d, 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST));
        OK(aclrtGetDeviceInfo(2, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, &v));
        CHECK((size_t)v == total);
        OK(aclrtFree(d));
    }
    OK(aclrtResetDevice(2));
    OK(aclrtGetDeviceInfo(count - 1, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, &v));
    CHECK((size_t)v == total);

    /* declared but not supported (as on the real A2/A3 parts) */
    v = 123;
    EXPECT(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_WARP_SIZE, &v), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    EXPECT(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE, &v), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    EXPECT(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_LOCAL_MEM_PER_VECTOR_CORE, &v), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    CHECK(v == 123);
    /* not an aclrtDevAttr at all */
    {
        const int unknown[] = {0, 2, 100, 103, 200, 205, 300, 303, 400, 408, 500, 502, -1, 0x7fffffff};
        for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
            EXPECT(aclrtGetDeviceInfo(0, (aclrtDevAttr)unknown[i], &v), ACL_ERROR_RT_PARAM_INVALID);
        }
    }
    CHECK(v == 123);
    /* device ids outside [0, count) */
    EXPECT(aclrtGetDeviceInfo(count, ACL_DEV_ATTR_AICORE_CORE_NUM, &v), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT(aclrtGetDeviceInfo(0x80000000U, ACL_DEV_ATTR_AICORE_CORE_NUM, &v), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT(aclrtGetDeviceInfo(UINT32_MAX, ACL_DEV_ATTR_IS_VIRTUAL, &v), ACL_ERROR_RT_INVALID_DEVICEID);
    CHECK(v == 123);
    /* NULL value is checked first */
    EXPECT(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICORE_CORE_NUM, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtGetDeviceInfo(count, ACL_DEV_ATTR_WARP_SIZE, NULL), ACL_ERROR_INVALID_PARAM);

    /* aclGetDeviceCapability reports every failure as ACL_ERROR_INVALID_PARAM, like the ACL layer */
    EXPECT(aclGetDeviceCapability(0, ACL_DEVICE_INFO_UNDEFINED, &v), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclGetDeviceCapability(0, (aclDeviceInfo)3, &v), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclGetDeviceCapability(0, (aclDeviceInfo)-2, &v), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclGetDeviceCapability(count, ACL_DEVICE_INFO_AI_CORE_NUM, &v), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclGetDeviceCapability(UINT32_MAX, ACL_DEVICE_INFO_L2_SIZE, &v), ACL_ERROR_INVALID_PARAM);
    CHECK(v == 123);
    EXPECT(aclGetDeviceCapability(0, ACL_DEVICE_INFO_AI_CORE_NUM, NULL), ACL_ERROR_INVALID_PARAM);

    /* failures are logged with the call's name and recorded as the last error */
    EXPECT(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_INVALID_PARAM);
    msg = aclGetRecentErrMsg();
    CHECK(msg != NULL && strstr(msg, "aclGetDeviceCapability") != NULL &&
          strstr(msg, "aclrtGetDeviceInfo") != NULL && strstr(msg, "device id") != NULL);
}

static void test_memory(void)
{
    void *d = NULL, *h = NULL, *d2 = NULL;
    char buf[256], out[256];
    size_t free0 = 0, total = 0, free1 = 0;

    OK(aclInit(NULL));
    EXPECT(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_NORMAL_ONLY), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT(aclrtGetMemInfo(ACL_HBM_MEM, &free0, &total), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT(aclrtMemset(buf, sizeof buf, 0, sizeof buf), ACL_ERROR_RT_CONTEXT_NULL);
    OK(aclrtSetDevice(0));

    EXPECT(aclrtMalloc(NULL, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMalloc(&d, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMalloc(&d, (size_t)-1, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION);
    EXPECT(aclrtMallocHost(NULL, 64), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMallocHost(&h, 0), ACL_ERROR_INVALID_PARAM);

    OK(aclrtMalloc(&d, 256, ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclrtMalloc(&d2, 1000, (aclrtMemMallocPolicy)99)); /* out-of-range policy is accepted */
    OK(aclrtMallocHost(&h, 256));
    CHECK(((size_t)d % 64) == 0 && ((size_t)d2 % 64) == 0 && ((size_t)h % 64) == 0);

    for (int i = 0; i < 256; i++) buf[i] = (char)i;
    OK(aclrtMemcpy(d, 256, buf, 256, ACL_MEMCPY_HOST_TO_DEVICE));
    OK(aclrtMemcpy(d2, 1000, d, 256, ACL_MEMCPY_DEVICE_TO_DEVICE));
    OK(aclrtMemcpy(h, 256, d2, 256, ACL_MEMCPY_DEFAULT));
    OK(aclrtMemcpy(out, sizeof out, h, 256, ACL_MEMCPY_DEVICE_TO_HOST)); /* kind not enforced */
    CHECK(memcmp(out, buf, 256) == 0);
    OK(aclrtMemcpy(out, 8, buf, 8, ACL_MEMCPY_HOST_TO_HOST));
    OK(aclrtMemcpy(out, 8, buf, 8, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE));

    /* parameter rules, in the runtime's order */
    OK(aclrtMemcpy(NULL, 0, NULL, 0, ACL_MEMCPY_HOST_TO_DEVICE)); /* count 0 first */
    EXPECT(aclrtMemcpy(NULL, 8, buf, 8, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemcpy(out, 8, NULL, 8, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemcpy(out, 8, buf, 8, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemcpy(out, 8, buf, 8, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemcpy(out, 8, buf, 8, (aclrtMemcpyKind)-1), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemcpy(out, 4, buf, 8, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtMemcpy(out, 0, buf, 8, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    OK(aclrtMemcpy(out, 8, out, 8, ACL_MEMCPY_HOST_TO_HOST)); /* dst == src */
    EXPECT(aclrtMemcpyAsync(out, 8, buf, 8, (aclrtMemcpyKind)6, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemcpyAsync(out, 4, buf, 8, ACL_MEMCPY_HOST_TO_DEVICE, NULL), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtMemcpyAsync(NULL, 8, buf, 8, ACL_MEMCPY_HOST_TO_DEVICE, NULL), ACL_ERROR_INVALID_PARAM);

    /* memset: low 8 bits of value */
    OK(aclrtMemset(d, 256, 0x1AB, 100));
    OK(aclrtMemcpy(out, 256, d, 256, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK((unsigned char)out[0] == 0xAB && (unsigned char)out[99] == 0xAB && out[100] == 100);
    OK(aclrtMemset(NULL, 0, 0, 0));
    EXPECT(aclrtMemset(NULL, 8, 0, 8), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemset(d, 8, 0, 9), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtMemsetAsync(d, 8, 0, 9, NULL), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtMemsetAsync(NULL, 8, 0, 8, NULL), ACL_ERROR_INVALID_PARAM);

    /* memory info */
    OK(aclrtGetMemInfo(ACL_HBM_MEM, &free0, &total));
    CHECK(total > 0 && free0 <= total);
    {
        void *big = NULL;
        OK(aclrtMalloc(&big, 4 << 20, ACL_MEM_MALLOC_HUGE_FIRST));
        OK(aclrtGetMemInfo(ACL_DDR_MEM, &free1, &total));
        CHECK(free1 + (4 << 20) <= free0);
        OK(aclrtFree(big));
        OK(aclrtGetMemInfo(ACL_MEM_NORMAL, &free1, &total));
        CHECK(free1 == free0);
    }
    EXPECT(aclrtGetMemInfo(ACL_HBM_MEM, NULL, &total), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtGetMemInfo(ACL_HBM_MEM, &free0, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtGetMemInfo((aclrtMemAttr)18, &free0, &total), ACL_ERROR_INVALID_PARAM);

    /* frees */
    EXPECT(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtFreeHost(NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtFree(h), ACL_ERROR_RT_MEMORY_FREE);     /* host block through aclrtFree */
    EXPECT(aclrtFreeHost(d), ACL_ERROR_RT_MEMORY_FREE); /* device block through aclrtFreeHost */
    EXPECT(aclrtFree(buf), ACL_ERROR_RT_MEMORY_FREE);   /* not an allocation */
    OK(aclrtFree(d));
    EXPECT(aclrtFree(d), ACL_ERROR_RT_MEMORY_FREE); /* double free */
    OK(aclrtFree(d2));
    OK(aclrtFreeHost(h));
    OK(aclrtResetDevice(0));
    OK(aclFinalize());
}

static void test_stream_order(void)
{
    static struct log log;
    static struct log_item items[1000];
    static int src[1000], dst[1000];
    aclrtStream s = NULL;
    int *dev = NULL;

    OK(aclInit(NULL));
    OK(aclrtSetDevice(0));
    OK(aclrtCreateStream(&s));
    OK(aclrtMalloc((void **)&dev, sizeof(int), ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclrtLaunchHostFunc(s, sleeper, (void *)(size_t)30)); /* make sure work piles up */
    for (int i = 0; i < 1000; i++) {
        src[i] = i * 7;
        /* dev <- src[i]; dst[i] <- dev; log <- i : each step depends on the previous one */
        OK(aclrtMemcpyAsync(dev, sizeof(int), &src[i], sizeof(int), ACL_MEMCPY_HOST_TO_DEVICE, s));
        OK(aclrtMemcpyAsync(&dst[i], sizeof(int), dev, sizeof(int), ACL_MEMCPY_DEVICE_TO_HOST, s));
        items[i].log = &log;
        items[i].value = i;
        OK(aclrtLaunchHostFunc(s, append, &items[i]));
    }
    OK(aclrtSynchronizeStream(s));
    CHECK(log.len == 1000);
    for (int i = 0; i < 1000; i++) {
        CHECK(log.entries[i] == i);
        CHECK(dst[i] == i * 7);
    }
    /* memset then copy, ordered */
    OK(aclrtMemsetAsync(dev, sizeof(int), 0x5A, sizeof(int), s));
    OK(aclrtMemcpyAsync(&dst[0], sizeof(int), dev, sizeof(int), ACL_MEMCPY_DEVICE_TO_HOST, s));
    OK(aclrtSynchronizeStreamWithTimeout(s, 30000));
    CHECK(dst[0] == 0x5A5A5A5A);

    /* the default stream (NULL) is a stream too */
    log.len = 0;
    OK(aclrtLaunchHostFunc(NULL, sleeper, (void *)(size_t)20));
    for (int i = 0; i < 100; i++) OK(aclrtLaunchHostFunc(NULL, append, &items[i]));
    OK(aclrtSynchronizeStream(NULL));
    CHECK(log.len == 100 && log.entries[99] == 99);
    OK(aclrtMemcpyAsync(&dst[1], sizeof(int), &src[5], sizeof(int), ACL_MEMCPY_HOST_TO_HOST, NULL));
    OK(aclrtSynchronizeStream(NULL));
    CHECK(dst[1] == 35);

    EXPECT(aclrtLaunchHostFunc(s, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    OK(aclrtFree(dev));
    OK(aclrtDestroyStream(s));
    OK(aclrtResetDevice(0));
    OK(aclFinalize());
}

static void test_stream_errors(void)
{
    aclrtStream s = NULL, s2 = NULL;
    aclrtStreamStatus st = ACL_STREAM_STATUS_RESERVED;
    int count = 0;
    char a[8] = "abcdefg", b[8] = {0};
    double t0;

    OK(aclInit(NULL));
    EXPECT(aclrtCreateStream(&s), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT(aclrtSynchronizeStream(NULL), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT(aclrtLaunchHostFunc(NULL, bump, &count), ACL_ERROR_RT_CONTEXT_NULL);
    OK(aclrtSetDevice(0));
    EXPECT(aclrtCreateStream(NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtCreateStreamWithConfig(NULL, 0, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtDestroyStream(NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtDestroyStreamForce(NULL), ACL_ERROR_INVALID_PARAM);
    OK(aclrtCreateStream(&s));
    OK(aclrtCreateStreamWithConfig(&s2, 0, ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC));
    CHECK(s != NULL && s2 != NULL && s != s2);

    /* timeouts */
    OK(aclrtSynchronizeStreamWithTimeout(s, 0)); /* idle: poll succeeds */
    OK(aclrtLaunchHostFunc(s, sleeper, (void *)(size_t)1000));
    OK(aclrtLaunchHostFunc(s, bump, &count));
    OK(aclrtStreamQuery(s, &st));
    CHECK(st == ACL_STREAM_STATUS_NOT_READY);
    t0 = now_ms();
    EXPECT(aclrtSynchronizeStreamWithTimeout(s, 30), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    CHECK(now_ms() - t0 >= 25 && now_ms() - t0 < 900);
    EXPECT(aclrtSynchronizeStreamWithTimeout(s, 0), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    EXPECT(aclrtSynchronizeStreamWithTimeout(s, -2), ACL_ERROR_RT_PARAM_INVALID);
    CHECK(count == 0);
    OK(aclrtSynchronizeStreamWithTimeout(s, -1));
    CHECK(count == 1);
    OK(aclrtStreamQuery(s, &st));
    CHECK(st == ACL_STREAM_STATUS_COMPLETE);
    EXPECT(aclrtStreamQuery(s, NULL), ACL_ERROR_INVALID_PARAM);
    OK(aclrtLaunchHostFunc(s2, bump, &count));
    OK(aclrtSynchronizeStreamWithTimeout(s2, 30)); /* finishes in time: success */
    CHECK(count == 2);

    /* an error inside the stream is reported by the next synchronize, once; later work still runs */
    OK(aclshimLaunchHostFuncWithStatus(s, fail_with, (void *)(size_t)ACL_ERROR_RT_INTERNAL_ERROR));
    OK(aclshimLaunchHostFuncWithStatus(s, fail_with, (void *)(size_t)ACL_ERROR_RT_AICORE_EXCEPTION));
    OK(aclrtMemcpyAsync(b, 8, a, 8, ACL_MEMCPY_HOST_TO_HOST, s));
    EXPECT(aclrtSynchronizeStream(s), ACL_ERROR_RT_INTERNAL_ERROR); /* the first error wins */
    CHECK(strcmp(b, "abcdefg") == 0);
    OK(aclrtSynchronizeStream(s));
    OK(aclshimLaunchHostFuncWithStatus(s, fail_with, (void *)(size_t)0));
    OK(aclrtSynchronizeStream(s));
    OK(aclshimLaunchHostFuncWithStatus(s, fail_with, (void *)(size_t)ACL_ERROR_RT_AICORE_EXCEPTION));
    EXPECT(aclrtSynchronizeStreamWithTimeout(s, 1000), ACL_ERROR_RT_AICORE_EXCEPTION);
    EXPECT(aclshimLaunchHostFuncWithStatus(s, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    /* ... also on the default stream, and through aclrtSynchronizeDevice */
    OK(aclshimLaunchHostFuncWithStatus(NULL, fail_with, (void *)(size_t)ACL_ERROR_RT_DEVICE_MEM_ERROR));
    EXPECT(aclrtSynchronizeDevice(), ACL_ERROR_RT_DEVICE_MEM_ERROR);
    OK(aclrtSynchronizeDevice());

    /* destroyed stream */
    OK(aclrtDestroyStream(s));
    EXPECT(aclrtDestroyStream(s), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtDestroyStreamForce(s), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtSynchronizeStream(s), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtSynchronizeStreamWithTimeout(s, 10), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtStreamQuery(s, &st), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtLaunchHostFunc(s, bump, &count), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtMemcpyAsync(b, 8, a, 8, ACL_MEMCPY_HOST_TO_HOST, s), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtMemsetAsync(b, 8, 0, 8, s), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtSynchronizeStream((aclrtStream)0x1234), ACL_ERROR_RT_INVALID_HANDLE);

    OK(aclrtDestroyStreamForce(s2));
    OK(aclrtResetDevice(0));
    OK(aclFinalize());
}

static void test_events(void)
{
    aclrtStream a = NULL, b = NULL;
    aclrtEvent e1 = NULL, e2 = NULL, e3 = NULL;
    aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_COMPLETE;
    float ms = -1.0f;
    int flag = 0, seen = 0;

    OK(aclInit(NULL));
    OK(aclrtSetDevice(2));
    OK(aclrtCreateStream(&a));
    OK(aclrtCreateStream(&b));
    EXPECT(aclrtCreateEvent(NULL), ACL_ERROR_INVALID_PARAM);
    OK(aclrtCreateEvent(&e1));
    OK(aclrtCreateEvent(&e2));
    OK(aclrtCreateEvent(&e3));

    /* never recorded */
    OK(aclrtQueryEventStatus(e1, &st));
    CHECK(st == ACL_EVENT_RECORDED_STATUS_NOT_READY);
    OK(aclrtSynchronizeEvent(e1));
    EXPECT(aclrtEventElapsedTime(&ms, e1, e2), ACL_ERROR_RT_INTERNAL_ERROR);
    OK(aclrtStreamWaitEvent(b, e3)); /* no-op */

    /* record behind slow work */
    OK(aclrtRecordEvent(e1, a));
    OK(aclrtLaunchHostFunc(a, sleeper, (void *)(size_t)500));
    OK(aclrtLaunchHostFunc(a, bump, &flag));
    OK(aclrtRecordEvent(e2, a));
    OK(aclrtQueryEventStatus(e2, &st));
    CHECK(st == ACL_EVENT_RECORDED_STATUS_NOT_READY);
    EXPECT(aclrtEventElapsedTime(&ms, e1, e2), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);
    EXPECT(aclrtSynchronizeEventWithTimeout(e2, 10), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT);
    EXPECT(aclrtSynchronizeEventWithTimeout(e2, -5), ACL_ERROR_RT_PARAM_INVALID);

    /* stream b waits for e2 (recorded on a) before reading flag */
    OK(aclrtStreamWaitEvent(b, e2));
    OK(aclrtMemcpyAsync(&seen, sizeof seen, &flag, sizeof flag, ACL_MEMCPY_HOST_TO_HOST, b));
    OK(aclrtSynchronizeStream(b));
    CHECK(seen == 1);

    OK(aclrtSynchronizeEvent(e2));
    OK(aclrtQueryEventStatus(e2, &st));
    CHECK(st == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    OK(aclrtEventElapsedTime(&ms, e1, e2));
    CHECK(ms >= 450.0f && ms < 30000.0f);
    EXPECT(aclrtEventElapsedTime(&ms, e2, e1), ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL);
    EXPECT(aclrtEventElapsedTime(NULL, e1, e2), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtEventElapsedTime(&ms, NULL, e2), ACL_ERROR_INVALID_PARAM);
    OK(aclrtSynchronizeEventWithTimeout(e2, 0));

    /* record on the default stream; re-record replaces */
    OK(aclrtRecordEvent(e3, NULL));
    OK(aclrtSynchronizeEvent(e3));
    OK(aclrtLaunchHostFunc(a, sleeper, (void *)(size_t)500));
    OK(aclrtRecordEvent(e3, a));
    OK(aclrtQueryEventStatus(e3, &st));
    CHECK(st == ACL_EVENT_RECORDED_STATUS_NOT_READY);
    OK(aclrtSynchronizeEvent(e3));

    /* NULL and destroyed handles */
    EXPECT(aclrtRecordEvent(NULL, a), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtSynchronizeEvent(NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtQueryEventStatus(e1, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtQueryEventStatus(NULL, &st), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtStreamWaitEvent(a, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtDestroyEvent(NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtRecordEvent(a, a), ACL_ERROR_RT_INVALID_HANDLE); /* a stream is not an event */
    OK(aclrtDestroyEvent(e1));
    EXPECT(aclrtDestroyEvent(e1), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtSynchronizeEvent(e1), ACL_ERROR_RT_INVALID_HANDLE);

    /* destroy an event whose record is still pending: no block, no crash */
    OK(aclrtLaunchHostFunc(a, sleeper, (void *)(size_t)100));
    OK(aclrtRecordEvent(e2, a));
    OK(aclrtDestroyEvent(e2));
    OK(aclrtSynchronizeStream(a));
    OK(aclrtDestroyEvent(e3));

    /* aclrtCreateEventWithFlag: SYNC lets streams wait, TIME_LINE keeps timestamps */
    {
        aclrtEvent sync_only = NULL, time_only = NULL, none = NULL, ext = NULL, bad = NULL;
        aclrtEventStatus old_st = ACL_EVENT_STATUS_RESERVED;
        EXPECT(aclrtCreateEventWithFlag(NULL, ACL_EVENT_SYNC), ACL_ERROR_INVALID_PARAM);
        EXPECT(aclrtCreateEventWithFlag(&bad, 0x4), ACL_ERROR_INVALID_PARAM);
        EXPECT(aclrtCreateEventWithFlag(&bad, 0x80000000u), ACL_ERROR_INVALID_PARAM);
        EXPECT(aclrtCreateEventWithFlag(&bad, ACL_EVENT_EXTERNAL | ACL_EVENT_SYNC), ACL_ERROR_INVALID_PARAM);
        CHECK(bad == NULL);
        OK(aclrtCreateEventWithFlag(&sync_only, ACL_EVENT_SYNC));
        OK(aclrtCreateEventWithFlag(&time_only, ACL_EVENT_TIME_LINE | ACL_EVENT_CAPTURE_STREAM_PROGRESS));
        OK(aclrtCreateEventWithFlag(&none, 0));
        OK(aclrtCreateEventWithFlag(&ext, ACL_EVENT_EXTERNAL));
        OK(aclrtCreateEventWithFlag(&bad, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE | ACL_EVENT_DEVICE_USE_ONLY | ACL_EVENT_IPC));
        /* a stream waits for a SYNC event recorded behind slow work */
        flag = 0;
        OK(aclrtLaunchHostFunc(a, sleeper, (void *)(size_t)200));
        OK(aclrtLaunchHostFunc(a, bump, &flag));
        OK(aclrtRecordEvent(sync_only, a));
        OK(aclrtStreamWaitEvent(b, sync_only));
        OK(aclrtMemcpyAsync(&seen, sizeof seen, &flag, sizeof flag, ACL_MEMCPY_HOST_TO_HOST, b));
        OK(aclrtSynchronizeStream(b));
        CHECK(seen == 1);
        /* without SYNC no stream may wait; without TIME_LINE no elapsed time */
        OK(aclrtRecordEvent(time_only, a));
        OK(aclrtRecordEvent(none, a));
        EXPECT(aclrtStreamWaitEvent(b, time_only), ACL_ERROR_RT_PARAM_INVALID);
        EXPECT(aclrtStreamWaitEvent(b, none), ACL_ERROR_RT_PARAM_INVALID);
        OK(aclrtSynchronizeEvent(none)); /* the host may still wait for it */
        OK(aclrtSynchronizeEvent(time_only));
        EXPECT(aclrtEventElapsedTime(&ms, sync_only, time_only), ACL_ERROR_RT_PARAM_INVALID);
        EXPECT(aclrtEventElapsedTime(&ms, time_only, none), ACL_ERROR_RT_PARAM_INVALID);
        OK(aclrtRecordEvent(bad, a));
        OK(aclrtSynchronizeEvent(bad));
        OK(aclrtEventElapsedTime(&ms, time_only, bad));
        CHECK(ms >= 0.0f && ms < 30000.0f);

        /* the deprecated aclrtQueryEvent numbers its answers the other way round */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        OK(aclrtQueryEvent(ext, &old_st)); /* never recorded */
        CHECK(old_st == ACL_EVENT_STATUS_NOT_READY);
        OK(aclrtQueryEvent(sync_only, &old_st));
        CHECK(old_st == ACL_EVENT_STATUS_COMPLETE);
        OK(aclrtLaunchHostFunc(a, sleeper, (void *)(size_t)300));
        OK(aclrtRecordEvent(sync_only, a));
        OK(aclrtQueryEvent(sync_only, &old_st));
        CHECK(old_st == ACL_EVENT_STATUS_NOT_READY);
        OK(aclrtSynchronizeEvent(sync_only));
        OK(aclrtQueryEvent(sync_only, &old_st));
        CHECK(old_st == ACL_EVENT_STATUS_COMPLETE);
        EXPECT(aclrtQueryEvent(NULL, &old_st), ACL_ERROR_INVALID_PARAM);
        EXPECT(aclrtQueryEvent(sync_only, NULL), ACL_ERROR_INVALID_PARAM);
        EXPECT(aclrtQueryEvent(a, &old_st), ACL_ERROR_RT_INVALID_HANDLE);
#pragma GCC diagnostic pop
        OK(aclrtDestroyEvent(sync_only));
        OK(aclrtDestroyEvent(time_only));
        OK(aclrtDestroyEvent(none));
        OK(aclrtDestroyEvent(ext));
        OK(aclrtDestroyEvent(bad));
    }

    OK(aclrtDestroyStream(a));
    OK(aclrtDestroyStream(b));
    OK(aclrtResetDevice(2));
    OK(aclFinalize());
}

#define NSTREAMS 64
#define NOPS 200

static void test_many_streams(void)
{
    static aclrtStream streams[NSTREAMS];
    static int counters[NSTREAMS];
    OK(aclInit(NULL));
    OK(aclrtSetDevice(7));
    for (int i = 0; i < NSTREAMS; i++) OK(aclrtCreateStream(&streams[i]));
    for (int k = 0; k < NOPS; k++)
        for (int i = 0; i < NSTREAMS; i++) OK(aclrtLaunchHostFunc(streams[i], bump, &counters[i]));
    for (int i = 0; i < NSTREAMS; i += 2) OK(aclrtSynchronizeStream(streams[i]));
    OK(aclrtSynchronizeDevice());
    for (int i = 0; i < NSTREAMS; i++) CHECK(counters[i] == NOPS);
    for (int i = 0; i < NSTREAMS; i++) OK(aclrtDestroyStream(streams[i]));
    OK(aclrtResetDevice(7));
    OK(aclFinalize());
}

static void test_destroy_pending(void)
{
    aclrtStream s = NULL;
    aclrtEvent ev = NULL;
    int count = 0;
    double t0;

    OK(aclInit(NULL));
    OK(aclrtSetDevice(1));

    /* plain destroy drains the queue */
    OK(aclrtCreateStream(&s));
    OK(aclrtLaunchHostFunc(s, sleeper, (void *)(size_t)100));
    for (int i = 0; i < 100; i++) OK(aclrtLaunchHostFunc(s, bump, &count));
    OK(aclrtDestroyStream(s));
    CHECK(count == 100);

    /* force destroy cancels what has not started; a queued event record still completes */
    count = 0;
    OK(aclrtCreateEvent(&ev));
    OK(aclrtCreateStream(&s));
    OK(aclrtLaunchHostFunc(s, sleeper, (void *)(size_t)300));
    sleep_ms(50); /* the sleeper is (almost certainly) running now */
    for (int i = 0; i < 100; i++) OK(aclrtLaunchHostFunc(s, bump, &count));
    OK(aclrtRecordEvent(ev, s));
    t0 = now_ms();
    OK(aclrtDestroyStreamForce(s));
    CHECK(now_ms() - t0 < 5000);
    CHECK(count == 0);
    OK(aclrtSynchronizeEventWithTimeout(ev, 5000));
    OK(aclrtDestroyEvent(ev));

    /* reset with pending work on the default stream and on a created stream drains both */
    count = 0;
    OK(aclrtCreateStream(&s));
    OK(aclrtLaunchHostFunc(NULL, sleeper, (void *)(size_t)50));
    OK(aclrtLaunchHostFunc(NULL, bump, &count));
    OK(aclrtLaunchHostFunc(s, sleeper, (void *)(size_t)50));
    OK(aclrtLaunchHostFunc(s, bump, &count));
    OK(aclrtResetDevice(1));
    CHECK(count == 2);
    EXPECT(aclrtSynchronizeStream(s), ACL_ERROR_RT_INVALID_HANDLE); /* freed with its device */
    OK(aclFinalize());
}

static void test_contexts(void)
{
    aclrtContext ctx = NULL, cur = NULL, def = NULL;
    aclrtStream s = NULL;
    int32_t dev = -1;
    int count = 0;

    OK(aclInit(NULL));
    EXPECT(aclrtGetCurrentContext(&cur), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT(aclrtCreateContext(NULL, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtCreateContext(&ctx, 99), ACL_ERROR_RT_INVALID_DEVICEID);
    OK(aclrtSetDevice(0));
    OK(aclrtGetCurrentContext(&def));
    CHECK(def != NULL);
    EXPECT(aclrtGetCurrentContext(NULL), ACL_ERROR_INVALID_PARAM);

    OK(aclrtCreateContext(&ctx, 2));
    CHECK(ctx != NULL && ctx != def);
    OK(aclrtGetCurrentContext(&cur));
    CHECK(cur == ctx);
    OK(aclrtGetDevice(&dev));
    CHECK(dev == 2);
    OK(aclrtCreateStream(&s));
    OK(aclrtLaunchHostFunc(s, sleeper, (void *)(size_t)50));
    OK(aclrtLaunchHostFunc(s, bump, &count));
    OK(aclrtLaunchHostFunc(NULL, bump, &count)); /* the context's own default stream */
    OK(aclrtSynchronizeStream(NULL));

    OK(aclrtSetCurrentContext(def));
    OK(aclrtGetDevice(&dev));
    CHECK(dev == 0);
    OK(aclrtSetCurrentContext(ctx));
    OK(aclrtGetDevice(&dev));
    CHECK(dev == 2);
    OK(aclrtSetDevice(0));
    OK(aclrtGetCurrentContext(&cur));
    CHECK(cur == def);

    EXPECT(aclrtSetCurrentContext(NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtDestroyContext(NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtDestroyContext(def), ACL_ERROR_RT_PARAM_INVALID);
    OK(aclrtSetCurrentContext(ctx));
    OK(aclrtDestroyContext(ctx)); /* drains its streams */
    CHECK(count == 2);
    EXPECT(aclrtDestroyContext(ctx), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtSetCurrentContext(ctx), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtGetCurrentContext(&cur), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT(aclrtSynchronizeStream(s), ACL_ERROR_RT_INVALID_HANDLE);
    OK(aclrtSetDevice(0));
    OK(aclrtResetDevice(0));
    OK(aclrtResetDevice(0));
    OK(aclFinalize());
}

struct thread_arg {
    int device;
    aclError no_device_rc;
    int ok;
};

static void *thread_main(void *p)
{
    struct thread_arg *arg = (struct thread_arg *)p;
    int32_t dev = -1;
    int count = 0;
    aclrtStream s = NULL;
    arg->no_device_rc = aclrtGetDevice(&dev);
    if (aclrtSetDevice(arg->device) != ACL_SUCCESS) return NULL;
    if (aclrtGetDevice(&dev) != ACL_SUCCESS || dev != arg->device) return NULL;
    if (aclrtCreateStream(&s) != ACL_SUCCESS) return NULL;
    for (int i = 0; i < 100; i++)
        if (aclrtLaunchHostFunc(s, bump, &count) != ACL_SUCCESS) return NULL;
    if (aclrtLaunchHostFunc(NULL, bump, &count) != ACL_SUCCESS) return NULL;
    if (aclrtSynchronizeStream(s) != ACL_SUCCESS || aclrtSynchronizeStream(NULL) != ACL_SUCCESS) return NULL;
    if (aclrtDestroyStream(s) != ACL_SUCCESS || count != 101) return NULL;
    if (aclrtResetDevice(arg->device) != ACL_SUCCESS) return NULL;
    arg->ok = 1;
    return NULL;
}

static void test_threads(void)
{
    pthread_t th[8];
    struct thread_arg args[8];
    int32_t dev = -1;
    OK(aclInit(NULL));
    OK(aclrtSetDevice(5));
    for (int i = 0; i < 8; i++) {
        args[i].device = i % 4; /* two threads share each device (and its default stream) */
        args[i].no_device_rc = 0;
        args[i].ok = 0;
        CHECK(pthread_create(&th[i], NULL, thread_main, &args[i]) == 0);
    }
    for (int i = 0; i < 8; i++) {
        CHECK(pthread_join(th[i], NULL) == 0);
        CHECK(args[i].ok == 1);
        CHECK(args[i].no_device_rc == ACL_ERROR_RT_CONTEXT_NULL); /* current device is per thread */
    }
    OK(aclrtGetDevice(&dev));
    CHECK(dev == 5);
    OK(aclrtResetDevice(5));
    OK(aclFinalize());
}

static void test_sync_device(void)
{
    aclrtStream s1 = NULL, s2 = NULL;
    int count = 0;
    OK(aclInit(NULL));
    EXPECT(aclrtSynchronizeDevice(), ACL_ERROR_RT_CONTEXT_NULL);
    OK(aclrtSetDevice(0));
    OK(aclrtCreateStream(&s1));
    OK(aclrtCreateStream(&s2));
    OK(aclrtLaunchHostFunc(s1, sleeper, (void *)(size_t)80));
    OK(aclrtLaunchHostFunc(s1, bump, &count));
    OK(aclrtLaunchHostFunc(s2, sleeper, (void *)(size_t)40));
    OK(aclrtLaunchHostFunc(s2, bump, &count));
    OK(aclrtLaunchHostFunc(NULL, bump, &count));
    OK(aclrtSynchronizeDevice());
    CHECK(count == 3);
    OK(aclrtLaunchHostFunc(s2, sleeper, (void *)(size_t)1000));
    EXPECT(aclrtSynchronizeDeviceWithTimeout(20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    EXPECT(aclrtSynchronizeDeviceWithTimeout(-3), ACL_ERROR_RT_PARAM_INVALID);
    OK(aclrtSynchronizeDeviceWithTimeout(-1));
    OK(aclrtDestroyStream(s1));
    OK(aclrtDestroyStream(s2));
    OK(aclrtResetDevice(0));
    OK(aclFinalize());
}

static void test_error_messages(void)
{
    const char *msg;
    OK(aclInit(NULL));
    msg = aclGetRecentErrMsg();
    CHECK(msg == NULL);
    EXPECT(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
    EXPECT(aclrtSetDevice(1000), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
    EXPECT(aclrtMalloc(NULL, 1, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    msg = aclGetRecentErrMsg();
    CHECK(msg != NULL);
    CHECK(strstr(msg, "aclrtMalloc") != NULL && strstr(msg, "aclrtSetDevice") != NULL);
    CHECK(strstr(msg, "aclrtMalloc") < strstr(msg, "aclrtSetDevice")); /* newest first */
    CHECK(aclGetRecentErrMsg() == NULL);                                /* read clears */
    OK(aclFinalize());
}

static void test_notifies(void)
{
    aclrtStream a = NULL, b = NULL;
    aclrtNotify n = NULL, m = NULL;
    uint32_t id_n = 0, id_m = 0;
    int flag = 0, seen = 0;
    static char buf[256];

    OK(aclInit(NULL));
    OK(aclrtSetDevice(1));
    OK(aclrtCreateStream(&a));
    OK(aclrtCreateStream(&b));
    EXPECT(aclrtCreateNotify(NULL, 0), ACL_ERROR_INVALID_PARAM);
    OK(aclrtCreateNotify(&n, 0));
    OK(aclrtCreateNotify(&m, 0));
    OK(aclrtGetNotifyId(n, &id_n));
    OK(aclrtGetNotifyId(m, &id_m));
    CHECK(id_n != id_m);
    EXPECT(aclrtGetNotifyId(n, NULL), ACL_ERROR_INVALID_PARAM);

    /* b waits for the record on a, which comes after slow work */
    OK(aclrtWaitAndResetNotify(n, b, 0));
    OK(aclrtMemcpyAsync(&seen, sizeof seen, &flag, sizeof flag, ACL_MEMCPY_HOST_TO_HOST, b));
    OK(aclrtLaunchHostFunc(a, sleeper, (void *)(size_t)200));
    OK(aclrtLaunchHostFunc(a, bump, &flag));
    OK(aclrtRecordNotify(n, a));
    OK(aclrtSynchronizeStream(b));
    CHECK(seen == 1);
    OK(aclrtSynchronizeStream(a));

    /* the wait reset it: a second wait times out (1 s), reported by the synchronize */
    OK(aclrtWaitAndResetNotify(n, b, 1));
    EXPECT(aclrtSynchronizeStream(b), ACL_ERROR_RT_WAIT_TIMEOUT);

    /* set from a host thread, outside any stream */
    OK(aclrtWaitAndResetNotify(m, b, 0));
    OK(aclshimNotifySet(m));
    OK(aclrtSynchronizeStream(b));

    /* cache maintenance is accepted in stream order */
    OK(aclrtCmoAsync(buf, sizeof buf, ACL_RT_CMO_TYPE_PREFETCH, a));
    OK(aclrtCmoAsync(buf, sizeof buf, ACL_RT_CMO_TYPE_FLUSH, NULL));
    EXPECT(aclrtCmoAsync(NULL, sizeof buf, ACL_RT_CMO_TYPE_PREFETCH, a), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtCmoAsync(buf, 0, ACL_RT_CMO_TYPE_PREFETCH, a), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtCmoAsync(buf, sizeof buf, (aclrtCmoType)7, a), ACL_ERROR_INVALID_PARAM);
    OK(aclrtSynchronizeStream(a));

    OK(aclrtDestroyNotify(n));
    OK(aclrtDestroyNotify(m));
    EXPECT(aclrtDestroyNotify(n), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtRecordNotify(n, a), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtDestroyNotify(NULL), ACL_ERROR_INVALID_PARAM);
    OK(aclrtDestroyStream(a));
    OK(aclrtDestroyStream(b));
    OK(aclrtResetDevice(1));
    OK(aclFinalize());
}

static int g_released = 0;
static aclError status_bump(void *args)
{
    __atomic_fetch_add((int *)args, 1, __ATOMIC_SEQ_CST);
    return ACL_SUCCESS;
}
static void release_args(void *args)
{
    (void)args;
    g_released++;
}

static void test_capture(void)
{
    aclrtStream a = NULL, b = NULL;
    aclmdlRI ri = NULL, ri2 = NULL;
    aclrtEvent e = NULL;
    int count = 0, reused = 0, src = 7, dst = 0;

    OK(aclInit(NULL));
    OK(aclrtSetDevice(3));
    OK(aclrtCreateStream(&a));
    OK(aclrtCreateStream(&b));
    OK(aclrtCreateEvent(&e));
    EXPECT(aclmdlRICaptureBegin(a, (aclmdlRICaptureMode)5), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclmdlRICaptureEnd(a, &ri), ACL_ERROR_RT_PARAM_INVALID); /* not capturing */

    OK(aclmdlRICaptureBegin(a, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    EXPECT(aclmdlRICaptureBegin(a, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_ERROR_RT_PARAM_INVALID);
    OK(aclrtLaunchHostFunc(a, bump, &count));
    OK(aclrtMemcpyAsync(&dst, sizeof dst, &src, sizeof src, ACL_MEMCPY_HOST_TO_HOST, a));
    OK(aclshimLaunchHostFuncReusable(a, status_bump, &reused, release_args));
    EXPECT(aclrtRecordEvent(e, a), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    EXPECT(aclshimLaunchHostFuncWithStatus(a, status_bump, &reused), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    EXPECT(aclmdlRICaptureEnd(a, NULL), ACL_ERROR_INVALID_PARAM);
    OK(aclmdlRICaptureEnd(a, &ri));
    OK(aclrtSynchronizeStream(a));
    CHECK(count == 0 && dst == 0 && reused == 0); /* captured, not run */

    for (int i = 1; i <= 3; i++) {
        dst = 0;
        OK(aclmdlRIExecuteAsync(ri, b));
        OK(aclrtSynchronizeStream(b));
        CHECK(count == i && dst == 7 && reused == i);
    }
    OK(aclmdlRIExecuteAsync(ri, NULL)); /* the default stream */
    OK(aclrtSynchronizeStream(NULL));
    CHECK(count == 4 && reused == 4);
    CHECK(g_released == 0);
    OK(aclmdlRIDestroy(ri));
    CHECK(g_released == 1);
    EXPECT(aclmdlRIDestroy(ri), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclmdlRIExecuteAsync(ri, b), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclmdlRIExecuteAsync(NULL, b), ACL_ERROR_INVALID_PARAM);

    /* not capturing: a reusable function runs once and is released after it */
    OK(aclshimLaunchHostFuncReusable(b, status_bump, &reused, release_args));
    OK(aclrtSynchronizeStream(b));
    CHECK(reused == 5 && g_released == 2);

    /* the stream works normally after a capture; an empty capture is a graph that does nothing */
    OK(aclmdlRICaptureBegin(b, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    OK(aclmdlRICaptureEnd(b, &ri2));
    OK(aclmdlRIExecuteAsync(ri2, a));
    OK(aclrtRecordEvent(e, a));
    OK(aclrtSynchronizeEvent(e));
    OK(aclmdlRIDestroy(ri2));

    OK(aclrtDestroyEvent(e));
    OK(aclrtDestroyStream(a));
    OK(aclrtDestroyStream(b));
    OK(aclrtResetDevice(3));
    OK(aclFinalize());
}

/* ---- virtual memory: reserve, physical memory, map (two views of one object), errors ---- */

static void test_vmem(void)
{
    const size_t mb2 = (size_t)2 << 20;
    void *va = NULL, *vb = NULL, *vc = NULL;
    aclrtDrvMemHandle h1 = NULL, h2 = NULL, h3 = NULL;
    aclrtPhysicalMemProp prop, host, bad;
    int *a, *b;
    size_t i;

    memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    host = prop;
    host.location.type = ACL_MEM_LOCATION_TYPE_HOST;
    host.location.id = 12345; /* ignored for host memory */
    OK(aclInit(NULL));
    OK(aclrtSetDevice(0));

    /* reservations */
    EXPECT(aclrtReserveMemAddress(NULL, 4 * mb2, 0, NULL, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtReserveMemAddress(&va, 0, 0, NULL, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtReserveMemAddress(&va, mb2 + 4096, 0, NULL, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtReserveMemAddress(&va, 4 * mb2, 3, NULL, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtReserveMemAddress(&va, 4 * mb2, 0, NULL, 7), ACL_ERROR_INVALID_PARAM);
    CHECK(va == NULL);
    OK(aclrtReserveMemAddress(&va, 4 * mb2, 0, NULL, 0));
    CHECK(va != NULL && (uintptr_t)va % mb2 == 0);
    OK(aclrtReserveMemAddress(&vb, 2 * mb2, 4 * mb2, NULL, 0));
    CHECK(vb != NULL && (uintptr_t)vb % (4 * mb2) == 0);
    OK(aclrtReserveMemAddress(&vc, mb2, 0, NULL, 0));
    OK(aclrtReleaseMemAddress(vc)); /* vc: no longer reserved */

    /* physical memory */
    EXPECT(aclrtMallocPhysical(NULL, mb2, &prop, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMallocPhysical(&h1, mb2, NULL, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMallocPhysical(&h1, 1000, &prop, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMallocPhysical(&h1, mb2, &prop, 1), ACL_ERROR_INVALID_PARAM);
    bad = prop;
    bad.handleType = (aclrtMemHandleType)5;
    EXPECT(aclrtMallocPhysical(&h1, mb2, &bad, 0), ACL_ERROR_INVALID_PARAM);
    bad = prop;
    bad.location.type = (aclrtMemLocationType)9;
    EXPECT(aclrtMallocPhysical(&h1, mb2, &bad, 0), ACL_ERROR_INVALID_PARAM);
    bad = prop;
    bad.location.id = 100000; /* no such device */
    EXPECT(aclrtMallocPhysical(&h1, mb2, &bad, 0), ACL_ERROR_INVALID_PARAM);
    CHECK(h1 == NULL);
    OK(aclrtMallocPhysical(&h1, 2 * mb2, &prop, 0));
    OK(aclrtMallocPhysical(&h2, mb2, &host, 0));
    CHECK(h1 != NULL && h2 != NULL && h1 != h2);

    /* mappings: the rules */
    EXPECT(aclrtMapMem(NULL, 2 * mb2, 0, h1, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMapMem(va, 2 * mb2, 0, NULL, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMapMem(va, 2 * mb2, 4096, h1, 0), ACL_ERROR_INVALID_PARAM);             /* offset */
    EXPECT(aclrtMapMem(va, 2 * mb2, 0, h1, 1), ACL_ERROR_INVALID_PARAM);                /* flags */
    EXPECT(aclrtMapMem(va, mb2, 0, h1, 0), ACL_ERROR_INVALID_PARAM);                    /* size */
    EXPECT(aclrtMapMem((char *)va + 4096, 2 * mb2, 0, h1, 0), ACL_ERROR_INVALID_PARAM); /* alignment */
    EXPECT(aclrtMapMem((char *)va + 3 * mb2, 2 * mb2, 0, h1, 0), ACL_ERROR_INVALID_PARAM); /* past the end */
    EXPECT(aclrtMapMem(vc, mb2, 0, h2, 0), ACL_ERROR_INVALID_PARAM);                    /* released */
    EXPECT(aclrtMapMem(va, 2 * mb2, 0, (aclrtDrvMemHandle)(uintptr_t)0x1230, 0), ACL_ERROR_INVALID_PARAM);
    OK(aclrtMapMem(va, 2 * mb2, 0, h1, 0));
    EXPECT(aclrtMapMem((char *)va + mb2, 2 * mb2, 0, h1, 0), ACL_ERROR_INVALID_PARAM); /* overlap */
    OK(aclrtMapMem((char *)va + 3 * mb2, mb2, 0, h2, 0));
    OK(aclrtMapMem(vb, 2 * mb2, 0, h1, 0)); /* a second view of h1 */

    /* both views of h1 are the same bytes; h2 is other bytes; fresh memory reads 0 */
    a = (int *)va;
    b = (int *)vb;
    CHECK(a[0] == 0 && a[(2 * mb2) / sizeof(int) - 1] == 0);
    for (i = 0; i < (2 * mb2) / sizeof(int); i += 1021) {
        a[i] = (int)i + 7;
    }
    for (i = 0; i < (2 * mb2) / sizeof(int); i += 1021) {
        CHECK(b[i] == (int)i + 7);
    }
    b[5] = -5;
    CHECK(a[5] == -5);
    ((int *)((char *)va + 3 * mb2))[5] = 99;
    CHECK(a[5] == -5 && b[5] == -5);

    /* granularity, access, and what backs a mapped range (shim extension) */
    {
        size_t g = 0;
        aclrtMemAccessDesc acc;
        int fd = -1;
        uint64_t off = 7;
        int *view;
        memset(&acc, 0, sizeof acc);
        acc.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
        acc.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
        acc.location.id = 0;
        OK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g));
        CHECK(g == mb2);
        g = 0;
        OK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, &g));
        CHECK(g == mb2);
        EXPECT(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF, &g),
               ACL_ERROR_INVALID_PARAM);
        EXPECT(aclrtMemGetAllocationGranularity(NULL, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g),
               ACL_ERROR_INVALID_PARAM);
        EXPECT(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, NULL),
               ACL_ERROR_INVALID_PARAM);
        OK(aclrtMemSetAccess(va, 2 * mb2, &acc, 1));
        OK(aclrtMemSetAccess((char *)va + 4096, 4096, &acc, 1));
        EXPECT(aclrtMemSetAccess(va, 3 * mb2, &acc, 1), ACL_ERROR_INVALID_PARAM); /* past the mapping */
        EXPECT(aclrtMemSetAccess((char *)va + 2 * mb2, 4096, &acc, 1), ACL_ERROR_INVALID_PARAM); /* unmapped */
        EXPECT(aclrtMemSetAccess(va, 2 * mb2, &acc, 0), ACL_ERROR_INVALID_PARAM);
        EXPECT(aclrtMemSetAccess(va, 2 * mb2, NULL, 1), ACL_ERROR_INVALID_PARAM);
        acc.flags = ACL_RT_MEM_ACCESS_FLAGS_READ;
        EXPECT(aclrtMemSetAccess(va, 2 * mb2, &acc, 1), ACL_ERROR_INVALID_PARAM);
        acc.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
        acc.location.id = 100000;
        EXPECT(aclrtMemSetAccess(va, 2 * mb2, &acc, 1), ACL_ERROR_INVALID_PARAM);

        OK(aclshimPhysicalBacking((char *)vb + mb2, mb2, h1, &fd, &off));
        CHECK(fd >= 0 && off == mb2);
        view = (int *)mmap(NULL, 2 * mb2, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        CHECK(view != MAP_FAILED);
        CHECK(view[5] == -5 && view[1021] == 1021 + 7); /* the same bytes as both views */
        view[6] = 66;
        CHECK(a[6] == 66);
        munmap(view, 2 * mb2);
        close(fd);
        fd = -1;
        EXPECT(aclshimPhysicalBacking(vb, 2 * mb2, h2, &fd, &off), ACL_ERROR_INVALID_PARAM); /* not h2 */
        EXPECT(aclshimPhysicalBacking(vb, 3 * mb2, NULL, &fd, &off), ACL_ERROR_INVALID_PARAM);
        EXPECT(aclshimPhysicalBacking((char *)va + 2 * mb2, 4096, NULL, &fd, &off), ACL_ERROR_INVALID_PARAM);
        EXPECT(aclshimPhysicalBacking(va, 4096, NULL, NULL, &off), ACL_ERROR_INVALID_PARAM);
        CHECK(fd == -1);
    }

    /* aclrtMemMapSelectedLink: a second view, at a reserved address, of shared memory mapped
       elsewhere in the process (an aclrtMapMem view here, a peer's heap in shmem programs) */
    {
        void *vd = NULL;
        int *d, *anon;
        char priv[64];
        OK(aclrtReserveMemAddress(&vd, 4 * mb2, 0, NULL, 0));
        EXPECT(aclrtMemMapSelectedLink(NULL, 2 * mb2, va, ACL_RT_MEM_LINK_IDX_1), ACL_ERROR_INVALID_PARAM);
        EXPECT(aclrtMemMapSelectedLink(vd, 2 * mb2, NULL, ACL_RT_MEM_LINK_IDX_1), ACL_ERROR_INVALID_PARAM);
        EXPECT(aclrtMemMapSelectedLink(vd, mb2 + 4096, va, ACL_RT_MEM_LINK_IDX_1), ACL_ERROR_INVALID_PARAM);
        EXPECT(aclrtMemMapSelectedLink((char *)vd + 4096, 2 * mb2, va, ACL_RT_MEM_LINK_IDX_1),
               ACL_ERROR_INVALID_PARAM); /* alignment */
        EXPECT(aclrtMemMapSelectedLink((char *)vd + 3 * mb2, 2 * mb2, va, ACL_RT_MEM_LINK_IDX_1),
               ACL_ERROR_INVALID_PARAM); /* past the reservation */
        EXPECT(aclrtMemMapSelectedLink((void *)(uintptr_t)(64 * mb2), mb2, va, ACL_RT_MEM_LINK_IDX_1),
               ACL_ERROR_INVALID_PARAM); /* not reserved */
        EXPECT(aclrtMemMapSelectedLink(vd, mb2, priv, ACL_RT_MEM_LINK_IDX_1), ACL_ERROR_INVALID_PARAM); /* private */
        EXPECT(aclrtMemMapSelectedLink(vd, 2 * mb2, (char *)va + mb2, ACL_RT_MEM_LINK_IDX_1),
               ACL_ERROR_INVALID_PARAM); /* runs past the source mapping */
        EXPECT(aclrtMemMapSelectedLink(vd, 2 * mb2, (char *)va + 2 * mb2, ACL_RT_MEM_LINK_IDX_1),
               ACL_ERROR_INVALID_PARAM); /* reserved, not mapped */
        OK(aclrtMemMapSelectedLink(vd, 2 * mb2, va, ACL_RT_MEM_LINK_IDX_1));
        EXPECT(aclrtMemMapSelectedLink((char *)vd + mb2, 2 * mb2, va, ACL_RT_MEM_LINK_IDX_0),
               ACL_ERROR_INVALID_PARAM); /* overlap */
        d = (int *)vd;
        CHECK(d[5] == -5 && d[1021] == 1021 + 7); /* the same bytes as va and vb */
        d[7] = 77;
        CHECK(a[7] == 77 && b[7] == 77);
        /* any shared mapping, of the SIO link too */
        {
            char name[64];
            int shm;
            snprintf(name, sizeof name, "/acl_runtime_alias_%ld", (long)getpid());
            shm = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
            CHECK(shm >= 0);
            shm_unlink(name);
            CHECK(ftruncate(shm, (off_t)mb2) == 0);
            anon = (int *)mmap(NULL, mb2, PROT_READ | PROT_WRITE, MAP_SHARED, shm, 0);
            CHECK(anon != MAP_FAILED);
            close(shm);
        }
        anon[3] = 33;
        OK(aclrtMemMapSelectedLink((char *)vd + 2 * mb2, mb2, anon, ACL_RT_MEM_LINK_IDX_0));
        CHECK(d[2 * mb2 / sizeof(int) + 3] == 33);
        d[2 * mb2 / sizeof(int) + 4] = 44;
        CHECK(anon[4] == 44);
        /* not physical memory of this runtime */
        {
            int fd = -1;
            uint64_t off = 0;
            EXPECT(aclshimPhysicalBacking(vd, 4096, NULL, &fd, &off), ACL_ERROR_INVALID_PARAM);
            CHECK(fd == -1);
        }
        EXPECT(aclrtReleaseMemAddress(vd), ACL_ERROR_INVALID_PARAM); /* still mapped */
        OK(aclrtUnmapMem(vd));
        OK(aclrtUnmapMem((char *)vd + 2 * mb2));
        EXPECT(aclrtUnmapMem(vd), ACL_ERROR_INVALID_PARAM);
        CHECK(a[7] == 77 && anon[3] == 33); /* the sources stay */
        munmap(anon, mb2);
        OK(aclrtReleaseMemAddress(vd));
    }

    /* peer access: every emulated device shares the host's memory; the arguments are checked */
    EXPECT(aclrtDeviceEnablePeerAccess(0, 0), ACL_ERROR_INVALID_PARAM); /* the current device */
    EXPECT(aclrtDeviceEnablePeerAccess(1, 1), ACL_ERROR_INVALID_PARAM); /* flags */
    EXPECT(aclrtDeviceEnablePeerAccess(100000, 0), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT(aclrtDeviceEnablePeerAccess(-1, 0), ACL_ERROR_RT_INVALID_DEVICEID);
    OK(aclrtDeviceEnablePeerAccess(1, 0));

    /* release/free refused while mapped */
    EXPECT(aclrtReleaseMemAddress(va), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtFreePhysical(h1), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtReleaseMemAddress((char *)va + mb2), ACL_ERROR_INVALID_PARAM); /* not a start */

    /* unmapping one view keeps the other */
    EXPECT(aclrtUnmapMem((char *)va + 4096), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtUnmapMem(NULL), ACL_ERROR_INVALID_PARAM);
    OK(aclrtUnmapMem(va));
    EXPECT(aclrtUnmapMem(va), ACL_ERROR_INVALID_PARAM);
    CHECK(b[5] == -5);
    OK(aclrtUnmapMem(vb));
    OK(aclrtUnmapMem((char *)va + 3 * mb2));
    OK(aclrtFreePhysical(h1));
    EXPECT(aclrtFreePhysical(h1), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtFreePhysical(NULL), ACL_ERROR_INVALID_PARAM);
    OK(aclrtFreePhysical(h2));

    /* the range can be mapped again, with new (zeroed) memory */
    OK(aclrtMallocPhysical(&h3, 4 * mb2, &host, 0));
    OK(aclrtMapMem(va, 4 * mb2, 0, h3, 0));
    CHECK(a[5] == 0);
    a[5] = 1;
    OK(aclrtUnmapMem(va));
    OK(aclrtFreePhysical(h3));

    OK(aclrtReleaseMemAddress(va));
    EXPECT(aclrtReleaseMemAddress(va), ACL_ERROR_INVALID_PARAM);
    OK(aclrtReleaseMemAddress(vb));
    EXPECT(aclrtReleaseMemAddress(NULL), ACL_ERROR_INVALID_PARAM);

    /* an expected address is a hint: a reservation is made either way */
    OK(aclrtReserveMemAddress(&vc, 2 * mb2, 0, va, 0));
    CHECK(vc != NULL && (uintptr_t)vc % mb2 == 0);
    OK(aclrtReleaseMemAddress(vc));
    OK(aclrtResetDevice(0));
    OK(aclFinalize());
}

struct test {
    const char *name;
    void (*fn)(void);
};

/* what the exception callback saw */
static struct {
    int calls;
    uint32_t task, stream, thread, device, code;
} g_exc;

static void on_exception(aclrtExceptionInfo *info)
{
    g_exc.calls++;
    g_exc.task = aclrtGetTaskIdFromExceptionInfo(info);
    g_exc.stream = aclrtGetStreamIdFromExceptionInfo(info);
    g_exc.thread = aclrtGetThreadIdFromExceptionInfo(info);
    g_exc.device = aclrtGetDeviceIdFromExceptionInfo(info);
    g_exc.code = aclrtGetErrorCodeFromExceptionInfo(info);
}

/* aclrtSetExceptionInfoCallback: a failing task of a stream calls it once, with the task's
   position, the stream's number, the worker's thread, the device and the error; NULL removes it */
static void test_exceptions(void)
{
    aclrtStream s1, s2;
    OK(aclInit(NULL));
    OK(aclrtSetDevice(1));
    OK(aclrtCreateStream(&s1));
    OK(aclrtCreateStream(&s2));
    OK(aclrtSetExceptionInfoCallback(on_exception));
    OK(aclshimLaunchHostFuncWithStatus(s2, fail_with, (void *)(size_t)0));
    OK(aclshimLaunchHostFuncWithStatus(s2, fail_with, (void *)(size_t)0));
    OK(aclshimLaunchHostFuncWithStatus(s2, fail_with, (void *)(size_t)ACL_ERROR_RT_AICORE_EXCEPTION));
    EXPECT(aclrtSynchronizeStream(s2), ACL_ERROR_RT_AICORE_EXCEPTION);
    CHECK(g_exc.calls == 1);
    CHECK(g_exc.task == 2 && g_exc.device == 1 && g_exc.code == ACL_ERROR_RT_AICORE_EXCEPTION);
    CHECK(g_exc.thread != 0 && g_exc.thread != (uint32_t)-1);
    {
        uint32_t first_stream = g_exc.stream;
        OK(aclshimLaunchHostFuncWithStatus(s1, fail_with, (void *)(size_t)ACL_ERROR_RT_INTERNAL_ERROR));
        EXPECT(aclrtSynchronizeStream(s1), ACL_ERROR_RT_INTERNAL_ERROR);
        CHECK(g_exc.calls == 2 && g_exc.task == 0 && g_exc.code == ACL_ERROR_RT_INTERNAL_ERROR);
        CHECK(g_exc.stream + 1 == first_stream); /* s1 was created before s2 */
    }
    /* successful tasks call nothing; NULL info reads as 0xFFFFFFFF */
    OK(aclshimLaunchHostFuncWithStatus(s1, fail_with, (void *)(size_t)0));
    OK(aclrtSynchronizeStream(s1));
    CHECK(g_exc.calls == 2);
    CHECK(aclrtGetErrorCodeFromExceptionInfo(NULL) == 0xFFFFFFFFu);
    CHECK(aclrtGetTaskIdFromExceptionInfo(NULL) == 0xFFFFFFFFu);
    /* removed: failures no longer call it */
    OK(aclrtSetExceptionInfoCallback(NULL));
    OK(aclshimLaunchHostFuncWithStatus(s1, fail_with, (void *)(size_t)ACL_ERROR_RT_INTERNAL_ERROR));
    EXPECT(aclrtSynchronizeStream(s1), ACL_ERROR_RT_INTERNAL_ERROR);
    CHECK(g_exc.calls == 2);
    OK(aclrtDestroyStream(s1));
    OK(aclrtDestroyStream(s2));
    OK(aclrtResetDevice(1));
    OK(aclFinalize());
}

/* ---- host callbacks of the subscription model ---- */

struct reporter {
    pthread_t thread;
    volatile int stop;
    int timeouts, runs, other;
};

static void *report_loop(void *arg)
{
    struct reporter *r = (struct reporter *)arg;
    while (!__atomic_load_n(&r->stop, __ATOMIC_SEQ_CST)) {
        aclError e = aclrtProcessReport(50);
        if (e == ACL_SUCCESS) {
            r->runs++;
        } else if (e == ACL_ERROR_RT_REPORT_TIMEOUT) {
            r->timeouts++;
        } else {
            r->other++;
        }
    }
    return NULL;
}

struct cb_item {
    struct log *log;
    int value;
    pthread_t ran_on;
};

static void cb_append(void *args)
{
    struct cb_item *it = (struct cb_item *)args;
    it->ran_on = pthread_self();
    it->log->entries[__atomic_fetch_add(&it->log->len, 1, __ATOMIC_SEQ_CST)] = it->value;
}

static void cb_slow_append(void *args)
{
    sleep_ms(200);
    cb_append(args);
}

static void test_callbacks(void)
{
    static struct log log;
    static struct cb_item items[8];
    struct reporter rep = {0};
    aclrtStream a = NULL, b = NULL, c = NULL;
    uint64_t me = (uint64_t)pthread_self();

    OK(aclInit(NULL));
    OK(aclrtSetDevice(3));
    OK(aclrtCreateStream(&a));
    OK(aclrtCreateStream(&b));
    OK(aclrtCreateStream(&c));
    for (int i = 0; i < 8; i++) {
        items[i].log = &log;
        items[i].value = i;
    }

    /* errors before any binding */
    EXPECT(aclrtLaunchCallback(cb_append, &items[0], ACL_CALLBACK_BLOCK, a), ACL_ERROR_RT_STREAM_NO_CB_REG);
    EXPECT(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE);
    EXPECT(aclrtProcessReport(0), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtProcessReport(-2), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtUnSubscribeReport(me, a), ACL_ERROR_RT_STREAM_NO_CB_REG);
    EXPECT(aclrtSubscribeReport(me, (aclrtStream)(uintptr_t)0x10), ACL_ERROR_RT_INVALID_HANDLE);

    /* this thread serves stream a itself */
    OK(aclrtSubscribeReport(me, a));
    EXPECT(aclrtSubscribeReport(me, a), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    EXPECT(aclrtLaunchCallback(NULL, &items[0], ACL_CALLBACK_BLOCK, a), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtLaunchCallback(cb_append, &items[0], (aclrtCallbackBlockType)2, a), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtProcessReport(30), ACL_ERROR_RT_REPORT_TIMEOUT);
    OK(aclrtLaunchCallback(cb_append, &items[0], ACL_CALLBACK_NO_BLOCK, a));
    OK(aclrtLaunchCallback(cb_append, &items[1], ACL_CALLBACK_NO_BLOCK, a));
    OK(aclrtSynchronizeStream(a)); /* no-block callbacks do not hold the stream */
    CHECK(log.len == 0);
    OK(aclrtProcessReport(1000));
    if (log.len < 2) {
        OK(aclrtProcessReport(1000));
    }
    CHECK(log.len == 2 && log.entries[0] == 0 && log.entries[1] == 1);
    CHECK(pthread_equal(items[0].ran_on, pthread_self()));
    EXPECT(aclrtUnSubscribeReport(me + 16, a), ACL_ERROR_RT_THREAD_SUBSCRIBE);
    OK(aclrtUnSubscribeReport(me, a));
    EXPECT(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE);

    /* a reporting thread serves streams b and c; a blocking callback holds its stream */
    CHECK(pthread_create(&rep.thread, NULL, report_loop, &rep) == 0);
    OK(aclrtSubscribeReport((uint64_t)rep.thread, b));
    OK(aclrtSubscribeReport((uint64_t)rep.thread, c));
    log.len = 0;
    {
        int after = -1;
        OK(aclrtLaunchCallback(cb_slow_append, &items[2], ACL_CALLBACK_BLOCK, b));
        /* later work on b sees the callback's effect */
        OK(aclrtMemcpyAsync(&after, sizeof after, &log.len, sizeof log.len, ACL_MEMCPY_HOST_TO_HOST, b));
        OK(aclrtLaunchCallback(cb_append, &items[3], ACL_CALLBACK_BLOCK, c));
        OK(aclrtSynchronizeStream(b));
        OK(aclrtSynchronizeStream(c));
        CHECK(after >= 1);
        CHECK(log.len == 2);
        CHECK(pthread_equal(items[2].ran_on, rep.thread) && pthread_equal(items[3].ran_on, rep.thread));
    }
    /* the thread serves one device: a stream of device 4 is refused */
    {
        aclrtStream other = NULL;
        OK(aclrtSetDevice(4));
        OK(aclrtCreateStream(&other));
        EXPECT(aclrtSubscribeReport((uint64_t)rep.thread, other), ACL_ERROR_RT_PARAM_INVALID);
        OK(aclrtDestroyStream(other));
        OK(aclrtResetDevice(4));
        OK(aclrtSetDevice(3));
    }

    /* unsubscribing drops a blocking callback nobody ran: its stream goes on, reporting it */
    {
        aclrtStream d = NULL;
        uint64_t ghost = 0x1234560; /* no thread processes for this id */
        int bumped = 0;
        OK(aclrtCreateStream(&d));
        OK(aclrtSubscribeReport(ghost, d));
        OK(aclrtLaunchCallback(cb_append, &items[4], ACL_CALLBACK_BLOCK, d));
        OK(aclrtLaunchHostFunc(d, bump, &bumped));
        sleep_ms(100);
        CHECK(__atomic_load_n(&bumped, __ATOMIC_SEQ_CST) == 0); /* held by the callback */
        OK(aclrtUnSubscribeReport(ghost, d));
        EXPECT(aclrtSynchronizeStream(d), ACL_ERROR_RT_STREAM_NO_CB_REG);
        CHECK(bumped == 1 && log.len == 2);
        /* a stream force-destroyed while its blocking callback waits does not hang */
        OK(aclrtSubscribeReport(ghost, d));
        OK(aclrtLaunchCallback(cb_append, &items[5], ACL_CALLBACK_BLOCK, d));
        sleep_ms(50);
        OK(aclrtDestroyStreamForce(d));
        CHECK(log.len == 2);
        /* its binding went with it: the id can serve another stream */
        OK(aclrtCreateStream(&d));
        OK(aclrtSubscribeReport(ghost, d));
        OK(aclrtDestroyStream(d));
    }

    /* destroying a bound stream runs its queued callbacks first, then unbinds it */
    OK(aclrtLaunchCallback(cb_append, &items[6], ACL_CALLBACK_BLOCK, c));
    OK(aclrtDestroyStream(c));
    CHECK(log.len == 3 && log.entries[2] == 6);
    OK(aclrtUnSubscribeReport((uint64_t)rep.thread, b));
    /* the reporting thread is bound to nothing now */
    sleep_ms(150);
    __atomic_store_n(&rep.stop, 1, __ATOMIC_SEQ_CST);
    CHECK(pthread_join(rep.thread, NULL) == 0);
    CHECK(rep.runs >= 2 && rep.other >= 1);

    /* the default stream (NULL) can be bound too */
    OK(aclrtSubscribeReport(me, NULL));
    OK(aclrtLaunchCallback(cb_append, &items[7], ACL_CALLBACK_NO_BLOCK, NULL));
    OK(aclrtProcessReport(1000));
    CHECK(log.len == 4 && log.entries[3] == 7);
    OK(aclrtUnSubscribeReport(me, NULL));

    OK(aclrtDestroyStream(a));
    OK(aclrtDestroyStream(b));
    OK(aclrtResetDevice(3));
    OK(aclFinalize());
}

static const struct test TESTS[] = {
    {"init_cycles", test_init_cycles},
    {"devices", test_devices},
    {"device_info", test_device_info},
    {"env_config", test_env_config},
    {"env_invalid", test_env_invalid},
    {"memory", test_memory},
    {"stream_order", test_stream_order},
    {"stream_errors", test_stream_errors},
    {"events", test_events},
    {"notifies", test_notifies},
    {"capture", test_capture},
    {"many_streams", test_many_streams},
    {"destroy_pending", test_destroy_pending},
    {"contexts", test_contexts},
    {"threads", test_threads},
    {"sync_device", test_sync_device},
    {"error_messages", test_error_messages},
    {"vmem", test_vmem},
    {"exceptions", test_exceptions},
    {"callbacks", test_callbacks},
};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s <test>\n", argv[0]);
        return 2;
    }
    for (size_t i = 0; i < sizeof TESTS / sizeof TESTS[0]; i++) {
        if (strcmp(argv[1], TESTS[i].name) == 0) {
            TESTS[i].fn();
            printf("ok %s\n", argv[1]);
            return 0;
        }
    }
    fprintf(stderr, "unknown test %s\n", argv[1]);
    return 2;
}
