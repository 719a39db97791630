/*
 * bench_api.h: the neutral API that bench/perf_rma.c, bench/perf_sync.c and bench/perf_coll.c are
 * written against, mapped onto one of two libraries chosen at compile time:
 *
 *   -DBENCH_ACLSHMEM   this project's libaclshmem (include/shmem.h, -laclshmem, run by aclshmrun)
 *   -DBENCH_OSHMEM     Open MPI's OSHMEM (oshcc, run by oshrun)
 *
 * Every wrapper is a static inline function, so each call in a timed loop is exactly one call into
 * the library under test.
 *
 * bench_have_*(): whether the library provides a call at run time. For libaclshmem the RMA calls
 * are declared weak, so the benchmark still links and runs against a build that lacks them and
 * reports the figures that need them as skipped. OSHMEM always has them.
 *
 * Where Open MPI's OSHMEM (4.1, which implements OpenSHMEM 1.4) lacks the OpenSHMEM 1.5 call that
 * aclshmem implements, the OSHMEM side uses the 1.4 equivalent, and BENCH_*_NOTE says which:
 *   - put-with-signal: shmem_putmem + shmem_fence + shmem_uint64_p on the 64-bit signal word, and
 *     shmem_uint64_wait_until(sig, SHMEM_CMP_GE, v) for shmem_signal_wait_until;
 *   - int64 AMOs: shmem_longlong_atomic_fetch_add / _compare_swap (long long is int64_t here);
 *   - team collectives on the world team: the active-set forms shmem_broadcast64,
 *     shmem_longlong_sum_to_all, shmem_fcollect64 and shmem_alltoall64 over all PEs, with
 *     symmetric pSync (and pWrk) arrays that are rotated between consecutive calls.
 * The signal word is int32_t for aclshmem (its signal API is 32-bit) and uint64_t for OSHMEM.
 */
#ifndef BENCH_API_H
#define BENCH_API_H

#include <stddef.h>
#include <stdint.h>

#if defined(BENCH_ACLSHMEM) == defined(BENCH_OSHMEM)
#error "define exactly one of BENCH_ACLSHMEM or BENCH_OSHMEM"
#endif

#include <shmem.h>

#if defined(BENCH_ACLSHMEM)

#define BENCH_LIB_NAME "aclshmem"

/* Weak references: NULL at run time when the loaded libaclshmem does not export the symbol. */
#pragma weak aclshmem_putmem
#pragma weak aclshmem_getmem
#pragma weak aclshmem_putmem_nbi
#pragma weak aclshmem_getmem_nbi
#pragma weak aclshmem_int64_iput
#pragma weak aclshmem_int64_iget
#pragma weak aclshmem_quiet
#pragma weak aclshmem_int64_p
#pragma weak aclshmem_int64_g
#pragma weak aclshmem_int64_put
#pragma weak aclshmem_int64_atomic_fetch_add
#pragma weak aclshmem_int64_atomic_compare_swap
#pragma weak aclshmemx_putmem_signal
#pragma weak aclshmem_signal_wait_until
#pragma weak aclshmem_int32_p
#pragma weak aclshmem_int32_wait_until
#pragma weak aclshmem_broadcastmem
#pragma weak aclshmem_int64_sum_reduce
#pragma weak aclshmem_fcollectmem
#pragma weak aclshmem_alltoallmem

static inline int bench_init(void)
{
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    int rc = aclshmemx_set_attr_from_env(&attr);
    if (rc != 0) return rc;
    return aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
}
static inline void bench_finalize(void) { (void)aclshmem_finalize(); }
static inline int bench_my_pe(void) { return aclshmem_my_pe(); }
static inline int bench_n_pes(void) { return aclshmem_n_pes(); }
static inline void *bench_malloc(size_t bytes) { return aclshmem_malloc(bytes); }
static inline void bench_free(void *p) { aclshmem_free(p); }
static inline void bench_barrier_all(void) { aclshmem_barrier_all(); }

static inline void bench_putmem(void *dst, void *src, size_t bytes, int pe) { aclshmem_putmem(dst, src, bytes, pe); }
static inline void bench_getmem(void *dst, void *src, size_t bytes, int pe) { aclshmem_getmem(dst, src, bytes, pe); }
static inline void bench_putmem_nbi(void *dst, void *src, size_t bytes, int pe) { aclshmem_putmem_nbi(dst, src, bytes, pe); }
static inline void bench_quiet(void) { aclshmem_quiet(); }
static inline void bench_int64_p(int64_t *dst, int64_t v, int pe) { aclshmem_int64_p(dst, v, pe); }
static inline int64_t bench_int64_g(int64_t *src, int pe) { return aclshmem_int64_g(src, pe); }
static inline void bench_int64_put(int64_t *dst, int64_t *src, int pe) { aclshmem_int64_put(dst, src, 1, pe); }
static inline void bench_getmem_nbi(void *dst, void *src, size_t bytes, int pe) { aclshmem_getmem_nbi(dst, src, bytes, pe); }
static inline void bench_int64_iput(int64_t *dst, int64_t *src, ptrdiff_t dst_st, ptrdiff_t src_st, size_t n, int pe)
{
    aclshmem_int64_iput(dst, src, dst_st, src_st, n, pe);
}
static inline void bench_int64_iget(int64_t *dst, int64_t *src, ptrdiff_t dst_st, ptrdiff_t src_st, size_t n, int pe)
{
    aclshmem_int64_iget(dst, src, dst_st, src_st, n, pe);
}

/* ---- signals, waits and atomics (perf_sync.c) */
typedef int32_t bench_sig_t;
#define BENCH_SIGNAL_NOTE "aclshmemx_putmem_signal(SIGNAL_SET)+aclshmem_signal_wait_until(CMP_GE),int32_signal"
#define BENCH_AMO_NOTE "aclshmem_int64_atomic_fetch_add/compare_swap"
static inline int64_t bench_int64_fetch_add(int64_t *dst, int64_t v, int pe) { return aclshmem_int64_atomic_fetch_add(dst, v, pe); }
static inline int64_t bench_int64_compare_swap(int64_t *dst, int64_t cond, int64_t v, int pe) { return aclshmem_int64_atomic_compare_swap(dst, cond, v, pe); }
static inline void bench_putmem_signal(void *dst, void *src, size_t bytes, bench_sig_t *sig, int64_t v, int pe)
{
    aclshmemx_putmem_signal(dst, src, bytes, sig, (int32_t)v, ACLSHMEM_SIGNAL_SET, pe);
}
static inline void bench_signal_wait_ge(bench_sig_t *sig, int64_t v) { aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_GE, (int32_t)v); }
static inline void bench_int32_p(int32_t *dst, int32_t v, int pe) { aclshmem_int32_p(dst, v, pe); }
static inline void bench_int32_wait_eq(int32_t *ivar, int32_t v) { aclshmem_int32_wait_until(ivar, ACLSHMEM_CMP_EQ, v); }

/* ---- collectives on the world team (perf_coll.c); nbytes a multiple of 8 */
#define BENCH_COLL_NOTE "aclshmem_broadcastmem/int64_sum_reduce/fcollectmem/alltoallmem(ACLSHMEM_TEAM_WORLD)"
static inline int bench_coll_setup(size_t max_bytes) { (void)max_bytes; return 0; }
static inline void bench_coll_teardown(void) {}
static inline int bench_broadcast(void *dst, const void *src, size_t nbytes, int root)
{
    return aclshmem_broadcastmem(ACLSHMEM_TEAM_WORLD, dst, src, nbytes, root);
}
static inline int bench_int64_sum_reduce(int64_t *dst, const int64_t *src, size_t n)
{
    return aclshmem_int64_sum_reduce(ACLSHMEM_TEAM_WORLD, dst, src, n);
}
static inline int bench_fcollect(void *dst, const void *src, size_t nbytes) { return aclshmem_fcollectmem(ACLSHMEM_TEAM_WORLD, dst, src, nbytes); }
static inline int bench_collect(void *dst, const void *src, size_t nbytes) { return aclshmem_collectmem(ACLSHMEM_TEAM_WORLD, dst, src, nbytes); }
static inline int bench_alltoall(void *dst, const void *src, size_t nbytes) { return aclshmem_alltoallmem(ACLSHMEM_TEAM_WORLD, dst, src, nbytes); }
/* Whether the root's own dest is written by bench_broadcast (OpenSHMEM 1.5: yes; 1.4: no). */
#define BENCH_BCAST_WRITES_ROOT 1

#define bench_have_putmem() (&aclshmem_putmem != NULL)
#define bench_have_getmem() (&aclshmem_getmem != NULL)
#define bench_have_putmem_nbi() (&aclshmem_putmem_nbi != NULL)
#define bench_have_getmem_nbi() (&aclshmem_getmem_nbi != NULL)
#define bench_have_strided() (&aclshmem_int64_iput != NULL && &aclshmem_int64_iget != NULL)
#define bench_have_quiet() (&aclshmem_quiet != NULL)
#define bench_have_int64_p() (&aclshmem_int64_p != NULL)
#define bench_have_int64_g() (&aclshmem_int64_g != NULL)
#define bench_have_int64_put() (&aclshmem_int64_put != NULL)
#define bench_have_amo() (&aclshmem_int64_atomic_fetch_add != NULL && &aclshmem_int64_atomic_compare_swap != NULL)
#define bench_have_signal() (&aclshmemx_putmem_signal != NULL && &aclshmem_signal_wait_until != NULL)
#define bench_have_wait() (&aclshmem_int32_p != NULL && &aclshmem_int32_wait_until != NULL)
#define bench_have_broadcast() (&aclshmem_broadcastmem != NULL)
#define bench_have_reduce() (&aclshmem_int64_sum_reduce != NULL)
#define bench_have_fcollect() (&aclshmem_fcollectmem != NULL)
#define bench_have_collect() (&aclshmem_collectmem != NULL)
#define bench_have_alltoall() (&aclshmem_alltoallmem != NULL)

#else /* BENCH_OSHMEM */

#define BENCH_LIB_NAME "oshmem"

static inline int bench_init(void) { shmem_init(); return 0; }
static inline void bench_finalize(void) { shmem_finalize(); }
static inline int bench_my_pe(void) { return shmem_my_pe(); }
static inline int bench_n_pes(void) { return shmem_n_pes(); }
static inline void *bench_malloc(size_t bytes) { return shmem_malloc(bytes); }
static inline void bench_free(void *p) { shmem_free(p); }
static inline void bench_barrier_all(void) { shmem_barrier_all(); }

static inline void bench_putmem(void *dst, void *src, size_t bytes, int pe) { shmem_putmem(dst, src, bytes, pe); }
static inline void bench_getmem(void *dst, void *src, size_t bytes, int pe) { shmem_getmem(dst, src, bytes, pe); }
static inline void bench_putmem_nbi(void *dst, void *src, size_t bytes, int pe) { shmem_putmem_nbi(dst, src, bytes, pe); }
static inline void bench_quiet(void) { shmem_quiet(); }
static inline void bench_int64_p(int64_t *dst, int64_t v, int pe) { shmem_int64_p(dst, v, pe); }
static inline int64_t bench_int64_g(int64_t *src, int pe) { return shmem_int64_g(src, pe); }
static inline void bench_int64_put(int64_t *dst, int64_t *src, int pe) { shmem_int64_put(dst, src, 1, pe); }
static inline void bench_getmem_nbi(void *dst, void *src, size_t bytes, int pe) { shmem_getmem_nbi(dst, src, bytes, pe); }
static inline void bench_int64_iput(int64_t *dst, int64_t *src, ptrdiff_t dst_st, ptrdiff_t src_st, size_t n, int pe)
{
    shmem_int64_iput(dst, src, dst_st, src_st, n, pe);
}
static inline void bench_int64_iget(int64_t *dst, int64_t *src, ptrdiff_t dst_st, ptrdiff_t src_st, size_t n, int pe)
{
    shmem_int64_iget(dst, src, dst_st, src_st, n, pe);
}

/* ---- signals, waits and atomics (perf_sync.c): OpenSHMEM 1.4 equivalents, see the head */
typedef uint64_t bench_sig_t;
#define BENCH_SIGNAL_NOTE "1.4_emulation:shmem_putmem+shmem_fence+shmem_uint64_p,shmem_uint64_wait_until(CMP_GE),uint64_signal"
#define BENCH_AMO_NOTE "shmem_longlong_atomic_fetch_add/compare_swap(1.4;no_int64_names)"
static inline int64_t bench_int64_fetch_add(int64_t *dst, int64_t v, int pe)
{
    return (int64_t)shmem_longlong_atomic_fetch_add((long long *)dst, (long long)v, pe);
}
static inline int64_t bench_int64_compare_swap(int64_t *dst, int64_t cond, int64_t v, int pe)
{
    return (int64_t)shmem_longlong_atomic_compare_swap((long long *)dst, (long long)cond, (long long)v, pe);
}
static inline void bench_putmem_signal(void *dst, void *src, size_t bytes, bench_sig_t *sig, int64_t v, int pe)
{
    shmem_putmem(dst, src, bytes, pe);
    shmem_fence(); /* the data is delivered before the signal */
    shmem_uint64_p(sig, (uint64_t)v, pe);
}
static inline void bench_signal_wait_ge(bench_sig_t *sig, int64_t v) { shmem_uint64_wait_until(sig, SHMEM_CMP_GE, (uint64_t)v); }
static inline void bench_int32_p(int32_t *dst, int32_t v, int pe) { shmem_int32_p(dst, v, pe); }
static inline void bench_int32_wait_eq(int32_t *ivar, int32_t v) { shmem_int32_wait_until(ivar, SHMEM_CMP_EQ, v); }

/* ---- collectives over all PEs (perf_coll.c): OpenSHMEM 1.4 active-set forms; nbytes % 8 == 0 */
#define BENCH_COLL_NOTE "1.4_active_set:shmem_broadcast64/longlong_sum_to_all/fcollect64/alltoall64(pSync_rotated)"
#define BENCH_N_PSYNC 4 /* consecutive calls use different pSync (and pWrk) arrays */
#define BENCH_PSYNC_LEN 16 /* >= every SHMEM_*_SYNC_SIZE */
static long *bench_psync_pool;
static long long *bench_pwrk_pool;
static size_t bench_pwrk_len;
static unsigned bench_coll_seq;

static inline int bench_coll_setup(size_t max_bytes)
{
    _Static_assert(BENCH_PSYNC_LEN >= SHMEM_BCAST_SYNC_SIZE && BENCH_PSYNC_LEN >= SHMEM_COLLECT_SYNC_SIZE &&
                   BENCH_PSYNC_LEN >= SHMEM_REDUCE_SYNC_SIZE && BENCH_PSYNC_LEN >= SHMEM_ALLTOALL_SYNC_SIZE,
                   "pSync too short");
    size_t n = max_bytes / 8;
    bench_pwrk_len = n / 2 + 1;
    if (bench_pwrk_len < SHMEM_REDUCE_MIN_WRKDATA_SIZE) bench_pwrk_len = SHMEM_REDUCE_MIN_WRKDATA_SIZE;
    bench_psync_pool = shmem_malloc(sizeof(long) * BENCH_PSYNC_LEN * BENCH_N_PSYNC);
    bench_pwrk_pool = shmem_malloc(sizeof(long long) * bench_pwrk_len * BENCH_N_PSYNC);
    if (!bench_psync_pool || !bench_pwrk_pool) return -1;
    for (int i = 0; i < BENCH_PSYNC_LEN * BENCH_N_PSYNC; i++) bench_psync_pool[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    return 0;
}
static inline void bench_coll_teardown(void)
{
    shmem_barrier_all();
    shmem_free(bench_pwrk_pool);
    shmem_free(bench_psync_pool);
}
static inline long *bench_next_psync(long long **pwrk)
{
    unsigned i = bench_coll_seq++ % BENCH_N_PSYNC;
    if (pwrk) *pwrk = bench_pwrk_pool + (size_t)i * bench_pwrk_len;
    return bench_psync_pool + (size_t)i * BENCH_PSYNC_LEN;
}
static inline int bench_broadcast(void *dst, const void *src, size_t nbytes, int root)
{
    shmem_broadcast64(dst, src, nbytes / 8, root, 0, 0, shmem_n_pes(), bench_next_psync(NULL));
    return 0;
}
static inline int bench_int64_sum_reduce(int64_t *dst, const int64_t *src, size_t n)
{
    long long *pwrk;
    long *psync = bench_next_psync(&pwrk);
    shmem_longlong_sum_to_all((long long *)dst, (const long long *)src, (int)n, 0, 0, shmem_n_pes(), pwrk, psync);
    return 0;
}
static inline int bench_fcollect(void *dst, const void *src, size_t nbytes)
{
    shmem_fcollect64(dst, src, nbytes / 8, 0, 0, shmem_n_pes(), bench_next_psync(NULL));
    return 0;
}
static inline int bench_collect(void *dst, const void *src, size_t nbytes)
{
    shmem_collect64(dst, src, nbytes / 8, 0, 0, shmem_n_pes(), bench_next_psync(NULL));
    return 0;
}
static inline int bench_alltoall(void *dst, const void *src, size_t nbytes)
{
    shmem_alltoall64(dst, src, nbytes / 8, 0, 0, shmem_n_pes(), bench_next_psync(NULL));
    return 0;
}
#define BENCH_BCAST_WRITES_ROOT 0

#define bench_have_putmem() 1
#define bench_have_getmem() 1
#define bench_have_putmem_nbi() 1
#define bench_have_getmem_nbi() 1
#define bench_have_strided() 1
#define bench_have_quiet() 1
#define bench_have_int64_p() 1
#define bench_have_int64_g() 1
#define bench_have_int64_put() 1
#define bench_have_amo() 1
#define bench_have_signal() 1
#define bench_have_wait() 1
#define bench_have_broadcast() 1
#define bench_have_reduce() 1
#define bench_have_fcollect() 1
#define bench_have_collect() 1
#define bench_have_alltoall() 1

#endif

#endif /* BENCH_API_H */
