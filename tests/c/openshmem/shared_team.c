/* OpenSHMEM 1.5 section 9.4: SHMEM_TEAM_SHARED is the set of PEs whose symmetric memory this PE
 * can address directly (shmem_ptr non-NULL): the whole job on one node through shared memory, a
 * smaller team when peers are reached through the network (ACLSHMEM_TRANSPORT=ucx makes every
 * peer such a peer, as PEs on other nodes are). Checks membership, numbering, translation,
 * shmem_team_ptr, a team barrier and a reduction over it. */
#include "osh_util.h"

static long x = 0;

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int *reach = malloc(sizeof(int) * (size_t)n), nr = 0, my_index = -1;
    for (int p = 0; p < n; p++) {
        if (shmem_ptr(&x, p) != NULL) {
            if (p == me) my_index = nr;
            reach[nr++] = p;
        }
    }
    CHECK(my_index >= 0, "own memory addressable");
    shmem_team_t sh = SHMEM_TEAM_SHARED;
    CHECK(shmem_team_n_pes(sh) == nr, "SHARED has %d PEs, %d addressable", shmem_team_n_pes(sh), nr);
    CHECK(shmem_team_my_pe(sh) == my_index, "my index %d want %d", shmem_team_my_pe(sh), my_index);
    for (int i = 0; i < nr; i++) {
        CHECK(shmem_team_translate_pe(sh, i, SHMEM_TEAM_WORLD) == reach[i], "translate %d", i);
        CHECK(shmem_team_ptr(sh, &x, i) != NULL, "team_ptr %d", i);
    }
    int *v = shmem_malloc(2 * sizeof(int));
    v[0] = me;
    CHECK(shmem_team_sync(sh) == 0, "team_sync");
    CHECK(shmem_int_sum_reduce(sh, &v[1], &v[0], 1) == 0, "reduce rc");
    int want = 0;
    for (int i = 0; i < nr; i++) want += reach[i];
    CHECK(v[1] == want, "sum over SHARED %d want %d", v[1], want);
    /* a context keeps the team it was made on (SHARED may hold the same PEs as WORLD) */
    shmem_ctx_t cs, cw;
    shmem_team_t got = SHMEM_TEAM_INVALID;
    CHECK(shmem_team_create_ctx(sh, 0, &cs) == 0, "team_create_ctx(SHARED)");
    CHECK(shmem_ctx_get_team(cs, &got) == 0 && got == sh, "ctx on SHARED reports team %p", (void *)got);
    CHECK(shmem_team_create_ctx(SHMEM_TEAM_WORLD, 0, &cw) == 0, "team_create_ctx(WORLD)");
    CHECK(shmem_ctx_get_team(cw, &got) == 0 && got == SHMEM_TEAM_WORLD, "ctx on WORLD reports team %p", (void *)got);
    CHECK(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &got) == 0 && got == SHMEM_TEAM_WORLD, "default ctx reports %p",
          (void *)got);
    /* PE numbers of a team context are team indices */
    CHECK(shmem_team_sync(sh) == 0, "team_sync");
    shmem_ctx_int_p(cs, &v[0], me, (my_index + 1) % nr);
    shmem_ctx_quiet(cs);
    CHECK(shmem_team_sync(sh) == 0, "team_sync");
    CHECK(v[0] == reach[(my_index + nr - 1) % nr], "ctx p over SHARED: %d, want %d", v[0],
          reach[(my_index + nr - 1) % nr]);
    shmem_ctx_destroy(cs);
    shmem_ctx_destroy(cw);
    printf("PE %d: SHMEM_TEAM_SHARED has %d of %d PEs\n", me, nr, n);
    shmem_free(v);
    free(reach);
    return osh_done("shared_team");
}
