// <shmem.h> of the OpenSHMEM surface compiles as C++ (oshc++) and links.
#include <shmem.h>
#include <cstdio>

int main() {
    shmem_init();
    long *x = static_cast<long *>(shmem_malloc(sizeof(long)));
    *x = 0;
    shmem_barrier_all();
    shmem_long_atomic_inc(x, 0);
    shmem_barrier_all();
    int ok = shmem_my_pe() != 0 || *x == shmem_n_pes();
    if (shmem_my_pe() == 0) std::printf(ok ? "OK cxx\n" : "FAIL: count %ld\n", *x);
    shmem_free(x);
    shmem_finalize();
    return ok ? 0 : 1;
}
