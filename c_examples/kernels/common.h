/*
 * common.h - checks shared by the kernel examples' host programs.
 */
#ifndef ACLSHMEM_KERNEL_EXAMPLES_COMMON_H
#define ACLSHMEM_KERNEL_EXAMPLES_COMMON_H

#include <cstdio>
#include <cstdlib>

#include "acl/acl.h"
#include "shmem.h"

#define ACL_CHECK(call)                                                                            \
    do {                                                                                           \
        aclError ret_ = (call);                                                                    \
        if (ret_ != ACL_SUCCESS) {                                                                 \
            std::printf("FAIL: %s:%d: %s returned %d\n", __FILE__, __LINE__, #call, (int)ret_); \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

#define SHMEM_CHECK(call)                                                                          \
    do {                                                                                           \
        int ret_ = (call);                                                                         \
        if (ret_ != 0) {                                                                           \
            std::printf("FAIL: %s:%d: %s returned %d\n", __FILE__, __LINE__, #call, ret_);       \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

/* aclInit, the device of this PE, one stream, and aclshmem init from the launcher's environment */
inline aclrtStream example_init(int32_t *device_id, uint64_t heap_bytes)
{
    const char *pe_env = std::getenv("ACLSHMEM_MY_PE");
    *device_id = pe_env != nullptr ? std::atoi(pe_env) % 16 : 0;
    ACL_CHECK(aclInit(nullptr));
    ACL_CHECK(aclrtSetDevice(*device_id));
    aclrtStream stream = nullptr;
    ACL_CHECK(aclrtCreateStream(&stream));
    aclshmemx_init_attr_t attr;
    SHMEM_CHECK(aclshmemx_set_attr_from_env(&attr));
    attr.local_mem_size = heap_bytes;
    SHMEM_CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr));
    return stream;
}

inline void example_finalize(aclrtStream stream, int32_t device_id)
{
    SHMEM_CHECK(aclshmem_finalize());
    ACL_CHECK(aclrtDestroyStream(stream));
    ACL_CHECK(aclrtResetDevice(device_id));
    ACL_CHECK(aclFinalize());
}

#endif
