/* `long double` is the x87 80-bit format in 16 bytes on x86-64 Linux and IEEE binary128 on AArch64
 * Linux. The longdouble families move it as 16 opaque bytes; a value that needs all 113 bits of
 * binary128 (1 + 2^-100, which x86 rounds to 1) must arrive whole through put, p/g, broadcast,
 * fcollect and alltoall. Run natively and under qemu-aarch64 (scripts/aarch64-check.sh). */
#include <float.h>
#include <string.h>
#include "osh_util.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;
    CHECK(sizeof(long double) == 16 && _Alignof(long double) == 16, "long double is %zu bytes",
          sizeof(long double));
#if defined(__aarch64__)
    CHECK(LDBL_MANT_DIG == 113, "aarch64 long double has %d mantissa bits", LDBL_MANT_DIG);
#endif
    /* volatile: computed at run time, by the target's long double arithmetic */
    volatile long double tiny = 0x1p-100L;
    const long double fine = 1.0L + tiny;
#if LDBL_MANT_DIG >= 101
    CHECK(fine != 1.0L, "1 + 2^-100 rounds to 1 with %d mantissa bits", LDBL_MANT_DIG);
#endif

    long double *a = shmem_malloc(4 * (size_t)n * sizeof(long double));
    long double *b = shmem_malloc(4 * (size_t)n * sizeof(long double));
    long double src[4] = {fine * me, fine, -fine, fine + me};
    shmem_longdouble_put(a, src, 4, right);
    shmem_barrier_all();
    CHECK(a[0] == fine * left && a[1] == fine && a[2] == -fine && a[3] == fine + left,
          "longdouble_put: %Lg %Lg %Lg %Lg from PE %d", a[0], a[1], a[2], a[3], left);
    shmem_barrier_all();
    shmem_longdouble_p(&a[1], fine * 3, right);
    shmem_barrier_all();
    CHECK(a[1] == fine * 3 && shmem_longdouble_g(&a[1], right) == fine * 3, "longdouble_p/g");
    shmem_barrier_all();

    /* broadcast from the last PE, fcollect and alltoall over the world team */
    for (int i = 0; i < 4; i++) a[i] = fine + (long double)(me * 4 + i);
    shmem_barrier_all();
    CHECK(shmem_longdouble_broadcast(SHMEM_TEAM_WORLD, b, a, 4, n - 1) == 0, "broadcast rc");
    for (int i = 0; i < 4; i++) CHECK(b[i] == fine + (long double)((n - 1) * 4 + i), "broadcast [%d]", i);
    shmem_barrier_all();
    CHECK(shmem_longdouble_fcollect(SHMEM_TEAM_WORLD, b, a, 4) == 0, "fcollect rc");
    for (int i = 0; i < 4 * n; i++) CHECK(b[i] == fine + (long double)i, "fcollect [%d]", i);
    shmem_barrier_all();
    for (int j = 0; j < n; j++) a[j] = fine * (long double)(me * n + j);
    shmem_barrier_all();
    CHECK(shmem_longdouble_alltoall(SHMEM_TEAM_WORLD, b, a, 1) == 0, "alltoall rc");
    for (int i = 0; i < n; i++) CHECK(b[i] == fine * (long double)(i * n + me), "alltoall [%d]", i);
    shmem_barrier_all();
    shmem_free(b);
    shmem_free(a);
    return osh_done("platform_longdouble");
}
