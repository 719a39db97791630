/* Forwarding header for programs that include the original's internal host header
   shmemi_host_common.h: they need nothing beyond shmem.h. */
#include "shmem.h"
