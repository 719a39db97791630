/* Threads the program started before shmem_init keep writing its globals (.bss and .data, atomic
 * adds) while shmem_init moves that data onto shared memory: no write may be lost (each thread
 * also counts its adds on its own stack), and the globals are symmetric afterwards. A large
 * static array makes the move take a while, so the writers meet it. */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include "osh_util.h"

#define WRITERS 2
static _Atomic long bss_count[WRITERS];             /* .bss */
static _Atomic long data_count[WRITERS] = {7, 7};   /* .data */
static char big[48 << 20];                          /* .bss, 48 MiB: a long copy */
static const char *text = "symmetric";              /* a pointer in .data */
static atomic_int stop, started;

static void *writer(void *arg) {
    long i = (long)arg, mine = 0;
    atomic_fetch_add(&started, 1);
    while (!atomic_load(&stop)) {
        atomic_fetch_add(&bss_count[i], 1);
        atomic_fetch_add(&data_count[i], 1);
        big[(mine * 4096) % sizeof big] = (char)i; /* plain writes into the moving pages too */
        mine++;
    }
    long *out = malloc(sizeof *out);
    *out = mine;
    return out;
}

int main(void) {
    pthread_t th[WRITERS];
    memset(big, 1, sizeof big); /* backed pages: the copy moves all of them */
    for (long i = 0; i < WRITERS; i++) pthread_create(&th[i], NULL, writer, (void *)i);
    while (atomic_load(&started) < WRITERS) usleep(100);
    usleep(2000);
    shmem_init();
    usleep(2000);
    atomic_store(&stop, 1);
    for (int i = 0; i < WRITERS; i++) {
        void *res;
        pthread_join(th[i], &res);
        long mine = *(long *)res;
        free(res);
        CHECK(atomic_load(&bss_count[i]) == mine, "writer %d: .bss count %ld, it added %ld", i,
              (long)atomic_load(&bss_count[i]), mine);
        CHECK(atomic_load(&data_count[i]) == 7 + mine, "writer %d: .data count %ld, it added %ld", i,
              (long)atomic_load(&data_count[i]), mine);
    }
    int me = shmem_my_pe(), n = shmem_n_pes();
    CHECK(strcmp(text, "symmetric") == 0, "pointer in .data");
    CHECK(shmem_addr_accessible((void *)bss_count, (me + 1) % n), "the globals are symmetric");
    /* and usable as RMA targets */
    shmem_barrier_all();
    shmem_long_p((long *)&bss_count[0], me, (me + 1) % n);
    shmem_barrier_all();
    CHECK(atomic_load(&bss_count[0]) == (me + n - 1) % n, "put into a moved global");
    return osh_done("statics_writers");
}
