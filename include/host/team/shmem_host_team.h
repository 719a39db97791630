/* Forwarding header: the original's include path host/team/shmem_host_team.h. Everything is declared in shmem.h. */
#include "../../shmem.h"
