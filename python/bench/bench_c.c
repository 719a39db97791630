/* The C side of python/bench/bench.py: the same loops as the Python ones, called once through ctypes,
 * so both run in the same process, on the same runtime and heap. Each returns nanoseconds per operation. */
#include <stdint.h>
#include <time.h>

#include "shmem.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

double c_put_quiet(void *dst, void *src, size_t n, int pe, int iters)
{
    double t0 = now_ns();
    for (int i = 0; i < iters; i++) {
        aclshmem_putmem(dst, src, n, pe);
        aclshmem_quiet();
    }
    return (now_ns() - t0) / iters;
}

double c_get(void *dst, void *src, size_t n, int pe, int iters)
{
    double t0 = now_ns();
    for (int i = 0; i < iters; i++) {
        aclshmem_getmem(dst, src, n, pe);
    }
    return (now_ns() - t0) / iters;
}

/* ping-pong: PE 0 sends data + signal i, PE 1 waits for i and answers; one-way latency */
double c_pingpong(void *buf, void *src, size_t n, int32_t *sig, int me, int iters)
{
    int peer = 1 - me;
    double t0 = now_ns();
    for (int i = 1; i <= iters; i++) {
        if (me == 0) {
            aclshmemx_putmem_signal(buf, src, n, sig, i, ACLSHMEM_SIGNAL_SET, peer);
            aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_EQ, i);
        } else {
            aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_EQ, i);
            aclshmemx_putmem_signal(buf, src, n, sig, i, ACLSHMEM_SIGNAL_SET, peer);
        }
    }
    return (now_ns() - t0) / iters / 2;
}
