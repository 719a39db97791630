// <shmem.h> of the OpenSHMEM surface as C++ (oshc++): the C API and the C++ overloads of the generic
// names (shmem_put, shmem_g, shmem_atomic_*, shmem_wait_until, shmem_sum_reduce, ...).
#include <shmem.h>
#include <shmemx.h>
#include <complex>
#include <cstdio>

__extension__ typedef double _Complex gnu_complexd; // Sandia OpenSHMEM's C++ spelling

int main() {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    // the handle constants are C++ casts (built with -Wold-style-cast -Wzero-as-null-pointer-constant)
    shmem_team_t teams[] = {SHMEM_TEAM_INVALID, SHMEM_TEAM_WORLD, SHMEM_TEAM_SHARED};
    shmem_ctx_t no_ctx = SHMEM_CTX_INVALID;
    if (teams[0] == teams[1] || teams[1] == teams[2] || no_ctx == SHMEM_CTX_DEFAULT ||
        shmem_team_n_pes(SHMEM_TEAM_WORLD) != n) {
        std::printf("FAIL: handle constants\n");
        return 1;
    }
    long *x = static_cast<long *>(shmem_malloc(sizeof(long)));
    double *d = static_cast<double *>(shmem_malloc(4 * sizeof(double)));
    int *flag = static_cast<int *>(shmem_calloc(1, sizeof(int)));
    long *r = static_cast<long *>(shmem_malloc(sizeof(long)));
    *x = 0;
    shmem_barrier_all();
    shmem_long_atomic_inc(x, 0);   // the C name
    shmem_atomic_add(x, 2L, 0);    // overload
    double src[4] = {me + 0.25, 1, 2, 3};
    shmem_put(d, src, 4, right);   // overload
    shmem_put(SHMEM_CTX_DEFAULT, d + 1, src + 1, 1, right);
    shmem_barrier_all();
    int fails = 0;
    if (me == 0 && *x != 3L * n) fails++;
    if (d[0] != left + 0.25 || shmem_g(d, right) != me + 0.25) fails++;
    shmem_atomic_set(flag, 1, right);
    shmem_wait_until(flag, SHMEM_CMP_EQ, 1);
    long one = me;
    long *s = static_cast<long *>(shmem_malloc(sizeof(long)));
    *s = one;
    shmem_sum_reduce(SHMEM_TEAM_WORLD, r, s, 1);
    if (*r != static_cast<long>(n) * (n - 1) / 2) fails++;
    // the bitwise families' fixed-width overloads
    int32_t *b = static_cast<int32_t *>(shmem_calloc(1, sizeof(int32_t)));
    shmem_barrier_all();
    shmem_atomic_or(b, static_cast<int32_t>(1) << (me % 31), 0);
    shmem_barrier_all();
    int32_t bits = 0;
    for (int p = 0; p < n; p++) bits |= static_cast<int32_t>(1) << (p % 31);
    if (me == 0 && shmem_atomic_fetch_and(b, static_cast<int32_t>(-1), 0) != bits) fails++;
    shmem_barrier_all();
    shmem_free(b);
    // a signed basic type in a bitwise reduction (Sandia OpenSHMEM's extra types)
    long long *ll = static_cast<long long *>(shmem_malloc(2 * sizeof(long long)));
    ll[0] = 1LL << (40 + me % 20);
    shmem_barrier_all();
    shmem_or_reduce(SHMEM_TEAM_WORLD, &ll[1], &ll[0], 1);
    long long want = 0;
    for (int p = 0; p < n; p++) want |= 1LL << (40 + p % 20);
    if (ll[1] != want) fails++;
    if (!(shmemx_wtime() > 0.0)) fails++; // the extension header from C++ (C linkage)
    // complex reductions as C++ programs spell them: std::complex (OSHMEM's header) and the
    // compilers' _Complex (Sandia OpenSHMEM's), by the typed names and the generic overloads
    auto *zd = static_cast<std::complex<double> *>(shmem_malloc(4 * sizeof(std::complex<double>)));
    auto *zf = static_cast<std::complex<float> *>(shmem_malloc(2 * sizeof(std::complex<float>)));
    zd[0] = std::complex<double>(me, 1);
    zf[0] = std::complex<float>(1, 0);
    zf[0] = static_cast<float>(me + 1) * zf[0];
    shmem_barrier_all();
    shmem_complexd_sum_reduce(SHMEM_TEAM_WORLD, &zd[1], &zd[0], 1);
    shmem_sum_reduce(SHMEM_TEAM_WORLD, &zd[2], &zd[0], 1);
    shmem_prod_reduce(SHMEM_TEAM_WORLD, &zf[1], &zf[0], 1);
    std::complex<double> sum(n * (n - 1) / 2.0, n);
    float fact = 1;
    for (int p = 1; p <= n; p++) fact *= static_cast<float>(p);
    if (zd[1] != sum || zd[2] != sum || zf[1] != std::complex<float>(fact, 0)) fails++;
    auto *gz = static_cast<gnu_complexd *>(shmem_malloc(2 * sizeof(gnu_complexd)));
    auto *gzc = reinterpret_cast<std::complex<double> *>(gz); // the same layout
    gzc[0] = std::complex<double>(1, me);
    shmem_barrier_all();
    shmem_complexd_sum_reduce(SHMEM_TEAM_WORLD, &gz[1], &gz[0], 1);
    if (gzc[1] != std::complex<double>(n, n * (n - 1) / 2.0)) fails++;
    shmem_barrier_all();
    shmem_free(gz);
    shmem_free(zf);
    shmem_free(zd);
    if (fails) std::printf("FAIL: [PE %d] %d checks failed\n", me, fails);
    shmem_barrier_all();
    if (me == 0 && !fails) std::printf("OK cxx\n");
    shmem_free(s);
    shmem_free(r);
    shmem_free(flag);
    shmem_free(d);
    shmem_free(x);
    shmem_finalize();
    return fails ? 1 : 0;
}
