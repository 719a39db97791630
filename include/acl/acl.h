/*
 * acl/acl.h - entry header of the ACL runtime (CPU shim, libascendcl.so). Includes every declaration
 * this library provides. See ascendcl/README.md.
 */
#ifndef ACL_SHIM_ACL_H_
#define ACL_SHIM_ACL_H_

#include "acl_rt.h"

#endif /* ACL_SHIM_ACL_H_ */
