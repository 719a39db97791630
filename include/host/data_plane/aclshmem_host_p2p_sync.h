/* Forwarding header: host/data_plane/aclshmem_host_p2p_sync.h, an include path of earlier releases of the original.
   Everything is declared in shmem.h. */
#include "../../shmem.h"
