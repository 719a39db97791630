/* Forwarding header: host/team/aclshmem_host_team.h, an include path of earlier releases of the original.
   Everything is declared in shmem.h. */
#include "../../shmem.h"
