/* A shared library with symmetric data (built with oshcc -shared -fPIC): a global array and
 * static arrays behind accessor functions, used by dso_statics.c as RMA, AMO and collective
 * targets. It links against libaclshmem, so shmem_init makes its data symmetric. */
#include <shmem.h>

long dso_global[16];                   /* .bss of the library */
int dso_initialised[4] = {4, 3, 2, 1}; /* .data of the library */
static long dso_static[32];
static long dso_psync[SHMEM_REDUCE_SYNC_SIZE];
static long dso_pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];

long *dso_static_array(void) { return dso_static; }
long *dso_psync_array(void) { return dso_psync; }
long *dso_pwrk_array(void) { return dso_pwrk; }

/* a put from inside the library: the library calls shmem routines itself */
void dso_put_static(long value, int index, int pe) { shmem_long_p(&dso_static[index], value, pe); }
