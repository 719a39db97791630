/*
 * main.cpp - host side of the device atomic counter: 64 blocks per PE; every counter on every PE
 * must end at n_pes * 64 * iters, and the tickets drawn on PE 0 by all blocks of all PEs must be
 * distinct and cover 0 .. n_pes * 64 * iters - 1.
 *
 *   aclshmrun -n 4 ./kernel_atomic_counter
 */
#include <cstdint>
#include <cstring>
#include <vector>

#include "../common.h"
#include "opdev/fp16_t.h"

void atomic_counter_demo(uint32_t block_dim, void *stream, uint8_t *counters, uint8_t *tickets, int iters);

struct Counters {
    int32_t adds;
    int32_t pad;
    int64_t incs;
    float fsum;
    op::fp16_t hsum;
    int16_t pad2;
    int32_t next_ticket;
    int32_t totals[2];
};

int main()
{
    constexpr uint32_t kBlocks = 64;
    constexpr int kIters = 8;
    int32_t device_id = 0;
    aclrtStream stream = example_init(&device_id, 64ULL << 20);
    int my_pe = aclshmem_my_pe();
    int n_pes = aclshmem_n_pes();
    auto *counters = static_cast<Counters *>(aclshmem_calloc(1, sizeof(Counters)));
    auto *tickets = static_cast<int32_t *>(aclshmem_calloc(kBlocks * kIters, sizeof(int32_t)));
    if (counters == nullptr || tickets == nullptr) {
        std::printf("FAIL: aclshmem_calloc\n");
        return 1;
    }
    aclshmem_barrier_all();
    atomic_counter_demo(kBlocks, stream, reinterpret_cast<uint8_t *>(counters), reinterpret_cast<uint8_t *>(tickets),
                        kIters);
    ACL_CHECK(aclrtSynchronizeStream(stream));
    aclshmem_barrier_all();

    int errors = 0;
    const int total = n_pes * static_cast<int>(kBlocks) * kIters;
    Counters c;
    std::memcpy(&c, counters, sizeof c);
    if (c.adds != total || c.incs != total || c.totals[0] != total || c.totals[1] != total) {
        std::printf("FAIL: [PE %d] adds %d incs %lld totals %d %d, expected %d\n", my_pe, c.adds,
                    static_cast<long long>(c.incs), c.totals[0], c.totals[1], total);
        errors++;
    }
    if (c.fsum != 0.5f * total) {
        std::printf("FAIL: [PE %d] float sum %g, expected %g\n", my_pe, static_cast<double>(c.fsum), 0.5 * total);
        errors++;
    }
    float h = c.hsum;
    if (h != static_cast<float>(total)) { /* totals up to 2048 are exact in half */
        std::printf("FAIL: [PE %d] half sum %g, expected %d\n", my_pe, static_cast<double>(h), total);
        errors++;
    }
    /* every PE's tickets, gathered on PE 0 */
    if (my_pe == 0) {
        std::vector<int> seen(total, 0);
        std::vector<int32_t> part(kBlocks * kIters);
        for (int pe = 0; pe < n_pes; pe++) {
            aclshmem_getmem(part.data(), tickets, part.size() * sizeof(int32_t), pe);
            for (int32_t t : part) {
                if (t < 0 || t >= total || seen[t]++) {
                    if (errors++ < 5) {
                        std::printf("FAIL: ticket %d from PE %d out of range or drawn twice\n", t, pe);
                    }
                }
            }
        }
        if (counters->next_ticket != total) {
            std::printf("FAIL: ticket counter %d, expected %d\n", counters->next_ticket, total);
            errors++;
        }
    }
    aclshmem_barrier_all();
    aclshmem_free(tickets);
    aclshmem_free(counters);
    example_finalize(stream, device_id);
    if (errors == 0) {
        std::printf("kernel_atomic_counter: PE %d of %d: %d increments per counter OK\n", my_pe, n_pes, total);
    }
    return errors == 0 ? 0 : 1;
}
