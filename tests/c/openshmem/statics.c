/* Global and static variables are symmetric (OpenSHMEM 1.5 section 3): RMA, AMOs, waits and the
 * deprecated active-set collectives with a static pSync, as most existing programs write them. */
#include "osh_util.h"

static long pSync[SHMEM_REDUCE_SYNC_SIZE];
static long pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
long global_counter;                /* .bss */
int global_table[64] = {1, 2, 3};   /* .data */
static double reduced, value;

int main(void) {
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) pSync[i] = SHMEM_SYNC_VALUE;
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    CHECK(shmem_addr_accessible(pSync, right), "static array is accessible");
    CHECK(shmem_addr_accessible(&global_counter, right), "global is accessible");
    CHECK(global_table[2] == 3, "initialised data kept across shmem_init");
    int stack_var;
    CHECK(!shmem_addr_accessible(&stack_var, right), "stack is not");
    shmem_barrier_all();
    shmem_int_p(&global_table[10], 100 + me, right);
    shmem_long_atomic_inc(&global_counter, 0);
    shmem_barrier_all();
    CHECK(global_table[10] == 100 + left, "put into a global: %d", global_table[10]);
    if (me == 0) CHECK(global_counter == n, "atomic on a global: %ld", global_counter);
    CHECK(shmem_int_g(&global_table[0], right) == 1, "get from a global");
    CHECK(shmem_ptr(&global_table[0], right) != NULL, "shmem_ptr of a global");
    value = me + 1;
    shmem_double_sum_to_all(&reduced, &value, 1, 0, 0, n, (double *)pWrk, pSync);
    CHECK(reduced == n * (n + 1) / 2.0, "sum_to_all with static pSync: %g", reduced);
    shmem_barrier(0, 0, n, pSync);
    shmem_long_atomic_set(&global_counter, 7, right);
    shmem_long_wait_until(&global_counter, SHMEM_CMP_EQ, 7);
    shmem_barrier_all();
    return osh_done("statics");
}
