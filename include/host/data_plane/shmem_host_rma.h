/* Forwarding header: the original's include path host/data_plane/shmem_host_rma.h. Everything is declared in shmem.h. */
#include "../../shmem.h"
