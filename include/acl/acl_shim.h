/*
 * acl/acl_shim.h - extensions of the CPU ACL shim (libascendcl.so). NOT part of the CANN ACL API and
 * not included by acl/acl.h; use them only when running on the shim (e.g. resolve them with dlsym).
 */
#ifndef ACL_SHIM_ACL_SHIM_H_
#define ACL_SHIM_ACL_SHIM_H_

#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A host function that reports failure: a non-zero aclError becomes the stream's error. */
typedef aclError (*aclshimStatusFunc)(void *args);

/* Like aclrtLaunchHostFunc: fn(args) runs on the stream's worker after earlier work and before later
   work. A non-zero return value is reported by the stream's next aclrtSynchronizeStream[WithTimeout]
   (or aclrtSynchronizeDevice). NULL fn -> ACL_ERROR_INVALID_PARAM. */
ACL_FUNC_VISIBILITY aclError aclshimLaunchHostFuncWithStatus(aclrtStream stream, aclshimStatusFunc fn,
                                                             void *args);

/* Like aclshimLaunchHostFuncWithStatus, but fn(args) may run more than once: once per execution of a
   graph that captured it (aclmdlRICaptureBegin/End, aclmdlRIExecuteAsync). release(args), if not NULL,
   is called once when fn will not be called again (after its single run when the stream was not
   capturing; when the graph is destroyed otherwise; at once when queuing fails). */
ACL_FUNC_VISIBILITY aclError aclshimLaunchHostFuncReusable(aclrtStream stream, aclshimStatusFunc fn, void *args,
                                                           void (*release)(void *args));

/* Sets the notify now, from any thread (not in stream order): one aclrtWaitAndResetNotify waiting for it,
   or the next one, goes on. libaclshmem's kernel blocks record their per-core notifies with it. */
ACL_FUNC_VISIBILITY aclError aclshimNotifySet(aclrtNotify notify);

/* 1 when [ptr, ptr + len) lies inside the requested bytes of one live aclrtMalloc block, else 0. */
ACL_FUNC_VISIBILITY int aclshimDeviceRangeIsLive(const void *ptr, size_t len);

/* When [ptr, ptr + size) lies inside one aclrtMapMem mapping (of handle, when not NULL): writes a new
   descriptor of the physical memory behind it (the caller closes it) and the range's offset in that
   memory, and returns ACL_SUCCESS; else ACL_ERROR_INVALID_PARAM. libaclshmem maps the buffers given to
   aclshmemx_init_attr_with_buffers into its symmetric heap with it. */
ACL_FUNC_VISIBILITY aclError aclshimPhysicalBacking(const void *ptr, size_t size, aclrtDrvMemHandle handle, int *fd,
                                                    uint64_t *offset);

#ifdef __cplusplus
}
#endif

#endif /* ACL_SHIM_ACL_SHIM_H_ */
