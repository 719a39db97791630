/* Forwarding header: acl/acl_mdl.h of the ACL runtime. The model-runtime calls the CPU runtime has
   (aclmdlRI*: graph capture and replay) are declared in acl_rt.h. */
#include "acl_rt.h"
