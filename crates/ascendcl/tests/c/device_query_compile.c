/*
 * Compile-only check of aclrtDevAttr / aclrtGetDeviceInfo and aclDeviceInfo / aclGetDeviceCapability
 * through "acl/acl.h" alone, built by ascendcl/tests/c_api.rs as C11 and as C++14 with
 * -Wall -Wextra -Werror -pedantic: enum values are CANN's, prototypes are exact.
 */
#include "acl/acl.h"

#define CHECK_CONST(name, cond) typedef char check_##name[(cond) ? 1 : -1]

CHECK_CONST(aicpu, ACL_DEV_ATTR_AICPU_CORE_NUM == 1);
CHECK_CONST(aicore, ACL_DEV_ATTR_AICORE_CORE_NUM == 101);
CHECK_CONST(cube, ACL_DEV_ATTR_CUBE_CORE_NUM == 102);
CHECK_CONST(vector, ACL_DEV_ATTR_VECTOR_CORE_NUM == 201);
CHECK_CONST(warp, ACL_DEV_ATTR_WARP_SIZE == 202);
CHECK_CONST(max_thread, ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE == 203);
CHECK_CONST(local_mem, ACL_DEV_ATTR_LOCAL_MEM_PER_VECTOR_CORE == 204);
CHECK_CONST(global_mem, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE == 301);
CHECK_CONST(l2, ACL_DEV_ATTR_L2_CACHE_SIZE == 302);
CHECK_CONST(smp, ACL_DEV_ATTR_SMP_ID == 401);
CHECK_CONST(chip, ACL_DEV_ATTR_PHY_CHIP_ID == 402);
CHECK_CONST(pod_dev, ACL_DEV_ATTR_SUPER_POD_DEVIDE_ID == 403);
CHECK_CONST(pod_server, ACL_DEV_ATTR_SUPER_POD_SERVER_ID == 404);
CHECK_CONST(pod, ACL_DEV_ATTR_SUPER_POD_ID == 405);
CHECK_CONST(cust_op, ACL_DEV_ATTR_CUST_OP_PRIVILEGE == 406);
CHECK_CONST(mainboard, ACL_DEV_ATTR_MAINBOARD_ID == 407);
CHECK_CONST(is_virtual, ACL_DEV_ATTR_IS_VIRTUAL == 501);
CHECK_CONST(info_undefined, ACL_DEVICE_INFO_UNDEFINED == -1);
CHECK_CONST(info_ai_core, ACL_DEVICE_INFO_AI_CORE_NUM == 0);
CHECK_CONST(info_vector, ACL_DEVICE_INFO_VECTOR_CORE_NUM == 1);
CHECK_CONST(info_l2, ACL_DEVICE_INFO_L2_SIZE == 2);
CHECK_CONST(enum_sizes, sizeof(aclrtDevAttr) == sizeof(int) && sizeof(aclDeviceInfo) == sizeof(int));

int main(void)
{
    aclError (*info)(uint32_t, aclrtDevAttr, int64_t *) = aclrtGetDeviceInfo;
    aclError (*cap)(uint32_t, aclDeviceInfo, int64_t *) = aclGetDeviceCapability;
    aclrtDevAttr attr = ACL_DEV_ATTR_VECTOR_CORE_NUM;
#ifdef __cplusplus
    /* the spelling C++ callers use for the unscoped enums */
    aclDeviceInfo what = aclDeviceInfo::ACL_DEVICE_INFO_VECTOR_CORE_NUM;
    attr = aclrtDevAttr::ACL_DEV_ATTR_CUBE_CORE_NUM;
#else
    aclDeviceInfo what = ACL_DEVICE_INFO_VECTOR_CORE_NUM;
#endif
    (void)info;
    (void)cap;
    return attr == ACL_DEV_ATTR_CUBE_CORE_NUM && what == ACL_DEVICE_INFO_VECTOR_CORE_NUM ? 0 : 1;
}
