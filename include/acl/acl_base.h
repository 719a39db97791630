/*
 * acl/acl_base.h - ACL base definitions (CPU shim, libascendcl.so): handle types, aclError and the
 * ACL_SUCCESS / ACL_ERROR_* codes, ACL_ERROR_RT_* runtime codes, aclrtGetSocName,
 * aclDeviceInfo / aclGetDeviceCapability.
 */
#ifndef ACL_SHIM_ACL_BASE_H_
#define ACL_SHIM_ACL_BASE_H_

#include "acl/acl_base_rt.h"
#include "error_codes/rt_error_codes.h"

#endif /* ACL_SHIM_ACL_BASE_H_ */
