/*
 * bench_api.h: the neutral API that bench/perf_rma.c is written against, mapped onto one of two
 * libraries chosen at compile time:
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
#pragma weak aclshmem_quiet
#pragma weak aclshmem_int64_p
#pragma weak aclshmem_int64_g
#pragma weak aclshmem_int64_put

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

#define bench_have_putmem() (&aclshmem_putmem != NULL)
#define bench_have_getmem() (&aclshmem_getmem != NULL)
#define bench_have_putmem_nbi() (&aclshmem_putmem_nbi != NULL)
#define bench_have_quiet() (&aclshmem_quiet != NULL)
#define bench_have_int64_p() (&aclshmem_int64_p != NULL)
#define bench_have_int64_g() (&aclshmem_int64_g != NULL)
#define bench_have_int64_put() (&aclshmem_int64_put != NULL)

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

#define bench_have_putmem() 1
#define bench_have_getmem() 1
#define bench_have_putmem_nbi() 1
#define bench_have_quiet() 1
#define bench_have_int64_p() 1
#define bench_have_int64_g() 1
#define bench_have_int64_put() 1

#endif

#endif /* BENCH_API_H */
