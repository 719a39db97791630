/* ACLSHMEMX_INIT_WITH_MPI, driven by tests/mpi.rs and run under Open MPI's and MPICH's mpirun.
 *   built with mpicc (WITH_MPI_H): the program initialises MPI and passes a communicator;
 *   built with plain gcc: the library finds and initialises MPI by itself (comm_args = NULL).
 * 20 init/finalize cycles either way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef WITH_MPI_H
#include <mpi.h>
#endif
#include "shmem.h"

#ifndef WITH_MPI_H
static int env_int(const char *a, const char *b) {
    const char *v = getenv(a);
    if (!v) v = getenv(b);
    return v ? atoi(v) : -1;
}
#endif

int main(int argc, char **argv) {
    int me, n;
    void *comm_args = NULL;
#ifdef WITH_MPI_H
    MPI_Init(&argc, &argv);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm); /* a communicator of the program's own */
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    comm_args = &comm;
#else
    (void)argc; (void)argv;
    me = env_int("OMPI_COMM_WORLD_RANK", "PMI_RANK");
    n = env_int("OMPI_COMM_WORLD_SIZE", "PMI_SIZE");
#endif
    if (getenv("MPI_INIT_RETURN") != NULL) {
        /* PE 1 ends with that status while the others wait in a barrier for it: the job must end
           (MPI_Finalize at exit, collective, used to wait for the others for ever) */
        aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
        attr.my_pe = me;
        attr.n_pes = n;
        attr.local_mem_size = 4 << 20;
        attr.comm_args = comm_args;
        if (aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_MPI, &attr) != 0) return 1;
        aclshmem_barrier_all();
        if (me == 1) return atoi(getenv("MPI_INIT_RETURN"));
        aclshmem_barrier_all();
        printf("FAIL: the barrier ended without PE 1 (pe %d)\n", me);
        return 1;
    }
    for (int cycle = 0; cycle < 20; cycle++) {
        aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
        attr.my_pe = me;
        attr.n_pes = n;
        attr.local_mem_size = 4 << 20;
        attr.comm_args = comm_args;
        int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_MPI, &attr);
        if (rc != 0) { printf("FAIL: cycle %d: init returned %d (pe %d)\n", cycle, rc, me); return 1; }
        int64_t *x = (int64_t *)aclshmem_malloc(sizeof(int64_t) * 2);
        x[0] = -1;
        aclshmem_barrier_all();
        aclshmem_int64_p(x, me * 100 + cycle, (me + 1) % n);
        aclshmem_barrier_all();
        if (x[0] != ((me + n - 1) % n) * 100 + cycle) { printf("FAIL: cycle %d: ring got %ld (pe %d)\n", cycle, (long)x[0], me); return 1; }
        int64_t one = 1;
        if (aclshmem_int64_sum_reduce(ACLSHMEM_TEAM_WORLD, &x[1], &one, 1) != ACLSHMEM_INVALID_PARAM) { /* source not symmetric */
            printf("FAIL: non-symmetric source accepted (pe %d)\n", me);
            return 1;
        }
        aclshmem_free(x);
        if (aclshmem_finalize() != 0) { printf("FAIL: finalize (pe %d)\n", me); return 1; }
    }
    /* a wrong rank in the attributes is refused */
    aclshmemx_init_attr_t bad = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    bad.my_pe = (me + 1) % n;
    bad.n_pes = n;
    bad.local_mem_size = 1 << 20;
    bad.comm_args = comm_args;
    if (n > 1 && aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_MPI, &bad) != ACLSHMEM_INVALID_PARAM) {
        printf("FAIL: a rank that disagrees with MPI was accepted (pe %d)\n", me);
        return 1;
    }
#ifdef WITH_MPI_H
    MPI_Comm_free(&comm);
    MPI_Finalize();
#endif
    if (me == 0) printf("OK mpi\n");
    return 0;
}
