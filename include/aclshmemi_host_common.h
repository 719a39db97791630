/* Forwarding header: aclshmemi_host_common.h, the name of shmemi_host_common.h in earlier releases of the
   original. */
#include "shmemi_host_common.h"
