/* Repeated shmem_init / shmem_finalize (allowed: the library starts again) keep the process's
 * memory flat: the heap in use after 200 more cycles may not grow by 64 bytes per cycle (moving
 * the program's data onto shared memory kept a record of about 150 bytes per cycle). One PE. */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <shmem.h>

static long global_counter; /* program data: moved at every init */

static size_t in_use(void) { return mallinfo2().uordblks; }

int main(void) {
    for (int i = 0; i < 50; i++) { /* warm-up: caches, logger, first-time allocations */
        shmem_init();
        global_counter++;
        shmem_finalize();
    }
    size_t before = in_use();
    for (int i = 0; i < 200; i++) {
        shmem_init();
        global_counter++;
        shmem_finalize();
    }
    size_t after = in_use();
    double per_cycle = after > before ? (double)(after - before) / 200.0 : 0.0;
    if (global_counter != 250 || per_cycle > 64.0) {
        printf("FAIL: init_cycles_memory: %.1f bytes per cycle (%zu -> %zu), counter %ld\n", per_cycle, before,
               after, global_counter);
        return 1;
    }
    printf("%.1f bytes per cycle\nOK init_cycles_memory\n", per_cycle);
    return 0;
}
