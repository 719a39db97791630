/*
 * Compile-only check of the ACL shim headers (run by ascendcl/tests/c_api.rs as C11 and C++14 with
 * -Wall -Wextra -Werror -pedantic). ORDER selects the include order:
 *   0 = acl/acl.h alone, 1 = acl/acl.h then shmem.h, 2 = shmem.h then acl/acl.h,
 *   3 = acl/acl_rt.h + acl/acl_base.h only, 4 = acl/acl_shim.h then shmem.h.
 */
#ifndef ORDER
#define ORDER 0
#endif

#if ORDER == 0
#include "acl/acl.h"
#elif ORDER == 1
#include "acl/acl.h"
#include "shmem.h"
#elif ORDER == 2
#include "shmem.h"
#include <acl/acl.h>
#elif ORDER == 3
#include "acl/acl_rt.h"
#include "acl/acl_base.h"
#else
#include "acl/acl_shim.h"
#include "shmem.h"
#endif

#define CHECK_CONST(name, cond) typedef char check_##name[(cond) ? 1 : -1]

CHECK_CONST(memcpy_h2h, ACL_MEMCPY_HOST_TO_HOST == 0);
CHECK_CONST(memcpy_h2d, ACL_MEMCPY_HOST_TO_DEVICE == 1);
CHECK_CONST(memcpy_d2h, ACL_MEMCPY_DEVICE_TO_HOST == 2);
CHECK_CONST(memcpy_d2d, ACL_MEMCPY_DEVICE_TO_DEVICE == 3);
CHECK_CONST(memcpy_default, ACL_MEMCPY_DEFAULT == 4);
CHECK_CONST(memcpy_buf, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE == 5);
CHECK_CONST(memcpy_inter, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE == 7);
CHECK_CONST(huge_first, ACL_MEM_MALLOC_HUGE_FIRST == 0);
CHECK_CONST(normal_only, ACL_MEM_MALLOC_NORMAL_ONLY == 2);
CHECK_CONST(normal_p2p, ACL_MEM_MALLOC_NORMAL_ONLY_P2P == 5);
CHECK_CONST(huge1g_p2p, ACL_MEM_MALLOC_HUGE1G_ONLY_P2P == 7);
CHECK_CONST(low_bw, ACL_MEM_TYPE_LOW_BAND_WIDTH == 0x100);
CHECK_CONST(readonly, ACL_MEM_ACCESS_USER_SPACE_READONLY == 0x100000);
CHECK_CONST(run_host, ACL_HOST == 1);
CHECK_CONST(stream_nr, ACL_STREAM_STATUS_NOT_READY == 1);
CHECK_CONST(stream_res, ACL_STREAM_STATUS_RESERVED == 0xFFFF);
CHECK_CONST(ev_rec_complete, ACL_EVENT_RECORDED_STATUS_COMPLETE == 1);
CHECK_CONST(ev_complete, ACL_EVENT_STATUS_COMPLETE == 0);
CHECK_CONST(cb_block, ACL_CALLBACK_BLOCK == 1);
CHECK_CONST(hbm, ACL_HBM_MEM == 1);
CHECK_CONST(p2p_huge1g, ACL_MEM_P2P_HUGE1G == 17);
CHECK_CONST(thread_level, ACL_RT_THREAD_LEVEL == 0);
CHECK_CONST(rt_success, ACL_RT_SUCCESS == 0);
CHECK_CONST(rt_param, ACL_ERROR_RT_PARAM_INVALID == 107000);
CHECK_CONST(rt_devid, ACL_ERROR_RT_INVALID_DEVICEID == 107001);
CHECK_CONST(rt_ctx, ACL_ERROR_RT_CONTEXT_NULL == 107002);
CHECK_CONST(rt_block_async, ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC == 107041);
CHECK_CONST(rt_alloc, ACL_ERROR_RT_MEMORY_ALLOCATION == 207001);
CHECK_CONST(rt_sync_timeout, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT == 507046);
CHECK_CONST(rt_ccu, ACL_ERROR_RT_CCU_EXCEPTION == 507916);
CHECK_CONST(version, ACL_MAJOR_VERSION == 1 && ACL_MINOR_VERSION >= 15 && ACL_PATCH_VERSION == 0);
CHECK_CONST(flags, (ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC) == 3U && ACL_STREAM_DEVICE_USE_ONLY == 0x20U);
CHECK_CONST(link, ACL_RT_MEM_LINK_IDX_1 == 1U);
CHECK_CONST(sizes, sizeof(aclError) == sizeof(int) && sizeof(aclrtMemcpyKind) == sizeof(int) &&
                       sizeof(aclrtStream) == sizeof(void *) && sizeof(aclFloat16) == 2);

static void host_fn(void *args) { (void)args; }

/* Every declared function, taken by address with its exact type, so a prototype drift fails here. */
int main(void)
{
    aclError (*init)(const char *) = aclInit;
    aclError (*memcpy_fn)(void *, size_t, const void *, size_t, aclrtMemcpyKind) = aclrtMemcpy;
    aclError (*memcpy_async)(void *, size_t, const void *, size_t, aclrtMemcpyKind, aclrtStream) =
        aclrtMemcpyAsync;
    aclError (*malloc_fn)(void **, size_t, aclrtMemMallocPolicy) = aclrtMalloc;
    aclError (*launch)(aclrtStream, aclrtHostFunc, void *) = aclrtLaunchHostFunc;
    aclError (*sync_to)(aclrtStream, int32_t) = aclrtSynchronizeStreamWithTimeout;
    aclError (*elapsed)(float *, aclrtEvent, aclrtEvent) = aclrtEventElapsedTime;
    aclError (*query)(aclrtStream, aclrtStreamStatus *) = aclrtStreamQuery;
    aclError (*meminfo)(aclrtMemAttr, size_t *, size_t *) = aclrtGetMemInfo;
    const char *(*soc)(void) = aclrtGetSocName;
    aclrtHostFunc hf = host_fn;
    aclError rc = ACL_SUCCESS;
    (void)init; (void)memcpy_fn; (void)memcpy_async; (void)malloc_fn; (void)launch; (void)sync_to;
    (void)elapsed; (void)query; (void)meminfo; (void)soc; (void)hf;
#if ORDER == 4
    {
        aclError (*ext)(aclrtStream, aclshimStatusFunc, void *) = aclshimLaunchHostFuncWithStatus;
        (void)ext;
    }
#endif
    return rc == ACL_ERROR_NONE && ACL_ERROR_INVALID_PARAM == 100000 ? 0 : 1;
}
