/* OpenSHMEM 1.5 section 9.4: SHMEM_TEAM_SHARED is the set of PEs whose symmetric memory this PE
 * can address directly (shmem_ptr non-NULL): the whole job on one node through shared memory, a
 * smaller team when peers are reached through the network (ACLSHMEM_TRANSPORT=ucx makes every
 * peer such a peer, as PEs on other nodes are). Checks membership, numbering, translation,
 * shmem_team_ptr, a team barrier and a reduction over it. */
#include <pthread.h>

#include "osh_util.h"

static long x = 0;

/* one thread's loop of sum reductions on its team: member i contributes base + i + round, so
 * every member expects size * base + size * (size - 1) / 2 + size * round */
struct team_loop {
    shmem_team_t team;
    long base;
    int size;
    int bad;
    long *buf;
};

static int shmem_query_thread_level(void) {
    int level = -1;
    shmem_query_thread(&level);
    return level;
}

static void *team_loop_run(void *arg) {
    struct team_loop *l = arg;
    int i = shmem_team_my_pe(l->team);
    for (int r = 0; r < 300; r++) {
        l->buf[0] = l->base + i + r;
        if (shmem_long_sum_reduce(l->team, &l->buf[1], &l->buf[0], 1) != 0) {
            l->bad++;
            continue;
        }
        long want = l->size * l->base + (long)l->size * (l->size - 1) / 2 + (long)l->size * r;
        if (l->buf[1] != want) {
            if (l->bad++ == 0) fprintf(stderr, "round %d: sum %ld, want %ld\n", r, l->buf[1], want);
        }
    }
    return NULL;
}

int main(void) {
    int provided = -1;
    CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0, "init_thread");
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
    /* SHARED is a team of its own even where it holds every PE: collectives on it and on WORLD
     * from two threads at once (SHMEM_THREAD_MULTIPLE allows collectives on different teams
     * concurrently) are matched per team (the world team's slot used to stand for SHARED on one
     * node: a PE's WORLD reduction met another's SHARED one, every call returning 0) */
    if (shmem_query_thread_level() == SHMEM_THREAD_MULTIPLE) {
        struct team_loop args[2] = {{SHMEM_TEAM_WORLD, 1000000, n, 0, NULL}, {sh, 0, nr, 0, NULL}};
        long *bufs = shmem_malloc(4 * sizeof(long));
        args[0].buf = bufs;
        args[1].buf = bufs + 2;
        pthread_t th;
        CHECK(pthread_create(&th, NULL, team_loop_run, &args[1]) == 0, "pthread_create");
        team_loop_run(&args[0]);
        CHECK(pthread_join(th, NULL) == 0, "pthread_join");
        CHECK(args[0].bad == 0 && args[1].bad == 0, "%d WORLD and %d SHARED reductions wrong", args[0].bad,
              args[1].bad);
        shmem_barrier_all();
        shmem_free(bufs);
    }
    printf("PE %d: SHMEM_TEAM_SHARED has %d of %d PEs\n", me, nr, n);
    shmem_free(v);
    free(reach);
    return osh_done("shared_team");
}
