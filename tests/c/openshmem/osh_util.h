/* Helpers of the OpenSHMEM test programs: CHECK prints FAIL and counts, DONE reports. */
#ifndef OSH_UTIL_H
#define OSH_UTIL_H
#include <stdio.h>
#include <stdlib.h>
#include <shmem.h>

static int osh_failures = 0;
#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            printf("FAIL: [PE %d] %s:%d: ", shmem_my_pe(), __FILE__, __LINE__); \
            printf(__VA_ARGS__);                                                \
            printf("\n");                                                       \
            fflush(stdout);                                                     \
            osh_failures++;                                                     \
        }                                                                       \
    } while (0)

/* every PE reports; PE 0 prints OK <name> when no PE failed */
static int osh_done(const char *name) {
    int *v = shmem_malloc(2 * sizeof(int));
    v[0] = osh_failures;
    shmem_barrier_all();
    shmem_int_sum_reduce(SHMEM_TEAM_WORLD, &v[1], &v[0], 1);
    int total = v[1];
    if (shmem_my_pe() == 0 && total == 0) printf("OK %s\n", name);
    fflush(stdout);
    shmem_free(v);
    shmem_finalize();
    return total == 0 ? 0 : 1;
}
#endif
