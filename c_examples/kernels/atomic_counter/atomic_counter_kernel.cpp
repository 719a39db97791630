/*
 * atomic_counter_kernel.cpp - device-side atomics from many blocks at once: every block adds to
 * counters on every PE (int32 fetch-add, int64 inc, float and half adds), draws tickets from a
 * counter on PE 0 with compare-and-swap, and block 0 reads the totals back after a device barrier.
 */
#include "kernel_operator.h"
#include "shmem.h"

struct Counters {
    int32_t adds;
    int32_t pad;
    int64_t incs;
    float fsum;
    half hsum;
    int16_t pad2;
    int32_t next_ticket; /* on PE 0 */
    int32_t totals[2];   /* written by block 0 after the barrier */
};

extern "C" [[bisheng::core_ratio(0, 1)]] __global__ __aicore__ void AtomicCounter(GM_ADDR counters, GM_ADDR tickets,
                                                                                 int iters)
{
    __gm__ Counters *c = (__gm__ Counters *)counters;
    __gm__ int32_t *my_tickets = (__gm__ int32_t *)tickets;
    int n_pes = aclshmem_n_pes();
    int64_t block = AscendC::GetBlockIdx();
    for (int i = 0; i < iters; i++) {
        for (int pe = 0; pe < n_pes; pe++) {
            (void)aclshmem_int32_atomic_fetch_add(&c->adds, 1, pe);
            aclshmem_int64_atomic_inc(&c->incs, pe);
            aclshmem_float_atomic_add(&c->fsum, 0.5f, pe);
            aclshmem_half_atomic_add(&c->hsum, half(1.0f), pe);
        }
        /* a ticket from PE 0's counter, by compare-and-swap */
        int32_t seen = aclshmem_int32_atomic_fetch(&c->next_ticket, 0);
        for (;;) {
            int32_t old = aclshmem_int32_atomic_compare_swap(&c->next_ticket, seen, seen + 1, 0);
            if (old == seen) {
                break;
            }
            seen = old;
        }
        my_tickets[block * iters + i] = seen;
    }
    aclshmem_barrier_all();
    if (block == 0) {
        c->totals[0] = aclshmem_int32_atomic_fetch(&c->adds, aclshmem_my_pe());
        c->totals[1] = static_cast<int32_t>(aclshmem_int64_atomic_fetch(&c->incs, aclshmem_my_pe()));
    }
}

void atomic_counter_demo(uint32_t block_dim, void *stream, uint8_t *counters, uint8_t *tickets, int iters)
{
    AtomicCounter<<<block_dim, nullptr, stream>>>(counters, tickets, iters);
}
