/* start_pes (deprecated 1.2 initialisation): the library is finalized implicitly when the program
 * exits, so a program that never calls shmem_finalize still ends with status 0 on every PE, even
 * when PE 0 (which serves the job's rendezvous) returns from main first.
 *   (no argument)  every PE returns without shmem_finalize; PE 0 first, the others 100 ms later
 *   finalize       shmem_finalize is called explicitly too (the exit handler then does nothing)
 *   exit           PE 1 calls shmem_global_exit(3): the job ends with status 3, no PE hangs in
 *                  the exit handler's finalize */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <mpp/shmem.h> /* the legacy header path (the same as <shmem.h>) */

static long counter; /* symmetric: program data */

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    start_pes(0);
    start_pes(0); /* a second call changes nothing */
    int me = _my_pe(), n = _num_pes();
    shmem_long_atomic_inc(&counter, (me + 1) % n);
    shmem_barrier_all();
    if (counter != 1) {
        printf("FAIL: [PE %d] counter %ld, expected 1\n", me, counter);
        return 1;
    }
    if (strcmp(mode, "exit") == 0) {
        if (me == 1 % n) shmem_global_exit(3);
        sleep(30); /* ended by the global exit */
        printf("FAIL: [PE %d] the job was not ended\n", me);
        return 1;
    }
    if (me == 0) {
        printf("OK start_pes\n");
        fflush(stdout);
    } else {
        usleep(100000);
    }
    if (strcmp(mode, "finalize") == 0) shmem_finalize();
    return 0;
}
