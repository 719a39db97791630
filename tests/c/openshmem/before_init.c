/* Calls before shmem_init whose failure the specification gives as a return value (allocation:
 * NULL; team split, context creation: nonzero) are still the program's error: each prints a message
 * naming the call, and the job ends with status 1 unless ACLSHMEM_OSHMEM_ON_ERROR=continue (then
 * the call returns its failure value). */
#include <stdio.h>
#include <string.h>
#include <shmem.h>

int main(int argc, char **argv) {
    int step = argc > 1 ? argv[1][0] - '0' : 0;
    int failures = 0;
    if (step == 0 || step == 9) {
        if (shmem_malloc(64) != NULL) failures++;
    }
    if (step == 1 || step == 9) {
        if (shmem_align(64, 64) != NULL) failures++;
    }
    if (step == 2 || step == 9) {
        shmem_team_t t = SHMEM_TEAM_INVALID;
        if (shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 1, NULL, 0, &t) == 0) failures++;
    }
    if (step == 3 || step == 9) {
        shmem_ctx_t c;
        if (shmem_ctx_create(0, &c) == 0) failures++;
    }
    if (failures) {
        printf("FAIL: before_init: %d call(s) succeeded before shmem_init\n", failures);
    } else {
        printf("OK before_init\n");
    }
    return failures != 0;
}
