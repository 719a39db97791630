/* Forwarding header: the original's include path host_device/shmem_common_types.h. Everything is declared in shmem.h. */
#include "../shmem.h"
