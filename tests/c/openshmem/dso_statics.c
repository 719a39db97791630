/* Global and static data of a shared library are symmetric when the library links against
 * libaclshmem and is loaded at shmem_init (dso_lib.c); a library loaded later with dlopen is not
 * (its path is argv[1]). RMA, AMOs, waits and active-set collectives with pSync/pWrk inside the
 * library, and the executable's own data next to it. */
#include <dlfcn.h>
#include "osh_util.h"

extern long dso_global[16];
extern int dso_initialised[4];
long *dso_static_array(void);
long *dso_psync_array(void);
long *dso_pwrk_array(void);
void dso_put_static(long value, int index, int pe);

static long exe_static[8];

int main(int argc, char **argv) {
    long *st = dso_static_array(), *psync = dso_psync_array(), *pwrk = dso_pwrk_array();
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    CHECK(shmem_addr_accessible(dso_global, right), "library global is accessible");
    CHECK(shmem_addr_accessible(&st[31], right), "library static is accessible");
    CHECK(shmem_addr_accessible(exe_static, right), "executable static is accessible");
    CHECK(dso_initialised[0] == 4 && dso_initialised[3] == 1, "library data kept across shmem_init");
    CHECK(shmem_ptr(dso_global, me) == (void *)dso_global, "shmem_ptr of own library global");
    CHECK(shmem_ptr(&st[3], right) != NULL, "shmem_ptr of a library static (one node)");

    /* RMA: put/get into the library's global and static arrays, from here and from the library */
    long pair[2] = {10 + me, 20 + me};
    shmem_long_put(&dso_global[1], pair, 2, right);
    dso_put_static(100 + me, 5, right);
    shmem_int_p(&dso_initialised[2], 50 + me, right);
    shmem_barrier_all();
    CHECK(dso_global[1] == 10 + left && dso_global[2] == 20 + left, "put into library global: %ld %ld",
          dso_global[1], dso_global[2]);
    CHECK(st[5] == 100 + left, "put into library static: %ld", st[5]);
    CHECK(dso_initialised[2] == 50 + left, "put into library data: %d", dso_initialised[2]);
    CHECK(shmem_long_g(&st[5], right) == 100 + me, "get from library static");
    long got[2] = {0, 0};
    shmem_long_get(got, &dso_global[1], 2, left);
    CHECK(got[0] == 10 + (left + n - 1) % n, "get from library global: %ld", got[0]);

    /* AMOs on both arrays, then a wait on a library static */
    shmem_long_atomic_inc(&dso_global[0], 0);
    shmem_long_atomic_add(&st[0], me + 1, 0);
    (void)shmem_long_atomic_fetch_add(&dso_global[15], 1, right);
    shmem_barrier_all();
    if (me == 0) {
        CHECK(dso_global[0] == n, "atomic inc on library global: %ld", dso_global[0]);
        CHECK(st[0] == (long)n * (n + 1) / 2, "atomic add on library static: %ld", st[0]);
    }
    CHECK(dso_global[15] == 1, "fetch_add on library global: %ld", dso_global[15]);
    shmem_long_atomic_set(&st[31], 7, right);
    shmem_long_wait_until(&st[31], SHMEM_CMP_EQ, 7);

    /* active-set collectives with pSync and pWrk in the library, targets in the library */
    st[10] = me + 1;
    shmem_long_sum_to_all(&st[11], &st[10], 1, 0, 0, n, pwrk, psync);
    CHECK(st[11] == (long)n * (n + 1) / 2, "sum_to_all in the library: %ld", st[11]);
    shmem_barrier(0, 0, n, psync);
    if (me == 0)
        for (int i = 0; i < 4; i++) dso_global[4 + i] = 1000 + i;
    shmem_barrier(0, 0, n, psync);
    shmem_broadcast64(&dso_global[8], &dso_global[4], 4, 0, 0, 0, n, psync);
    if (me != 0)
        CHECK(dso_global[8] == 1000 && dso_global[11] == 1003, "broadcast64: %ld %ld", dso_global[8],
              dso_global[11]);
    shmem_barrier(0, 0, n, psync);
    exe_static[0] = me;
    shmem_fcollect64(&st[12], exe_static, 1, 0, 0, n, psync);
    for (int i = 0; i < n && i < 16; i++) CHECK(st[12 + i] == i, "fcollect64 [%d] = %ld", i, st[12 + i]);
    shmem_barrier_all();

    /* a library loaded after shmem_init is not symmetric */
    if (argc > 1) {
        void *late = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        CHECK(late != NULL, "dlopen %s: %s", argv[1], dlerror());
        if (late) {
            long *g = dlsym(late, "dso_global");
            CHECK(g != NULL && g != dso_global, "dlsym of the late library's global");
            if (g) {
                CHECK(!shmem_addr_accessible(g, right), "late library global is not accessible");
                CHECK(!shmem_addr_accessible(g, me), "late library global is not accessible (self)");
                CHECK(shmem_ptr(g, right) == NULL, "shmem_ptr of a late library global is NULL");
            }
        }
    }
    return osh_done("dso_statics");
}
