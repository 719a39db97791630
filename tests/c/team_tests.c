/*
 * team_tests.c - multi-PE scenarios of teams, team barriers and the host-side collectives
 * (broadcast, collect, fcollect, alltoall, reductions). Run under aclshmrun:
 * `aclshmrun -n N team_tests <scenario> [options]`.
 *
 * Every failed check prints `FAIL: <scenario>: <what> (pe X)` and exits 1; PE 0 prints
 * `OK <scenario>` when the scenario passed.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <shmem.h>
#include "test_util.h"

static int g_npes = -1;

/* Init from the launcher's environment; bootstrap timeouts lowered to `timeout` s so a stuck
 * bootstrap turns into an error before the launcher's --timeout. */
static int init_rc(unsigned timeout)
{
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    CHECK_RC(aclshmemx_set_attr_from_env(&attr), 0);
    attr.option_attr.shm_init_timeout = timeout;
    attr.option_attr.control_operation_timeout = timeout;
    return aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
}

static void init(void)
{
    CHECK_RC(init_rc(20), 0);
    CHECK(aclshmem_my_pe() == g_pe && aclshmem_n_pes() == g_npes, "my_pe/n_pes %d/%d after init",
          aclshmem_my_pe(), aclshmem_n_pes());
}

static void finish(void)
{
    aclshmem_barrier_all();
    CHECK_RC(aclshmem_finalize(), 0);
    if (g_pe == 0) {
        printf("OK %s\n", g_scenario);
    }
    fflush(stdout);
}

static void *sym_alloc(size_t bytes)
{
    void *p = aclshmem_malloc(bytes);
    CHECK(p != NULL, "aclshmem_malloc(%zu) returned NULL", bytes);
    return p;
}

/* A description of a team as an arithmetic progression of world PEs. */
struct shape {
    int start, stride, size;
};

static int shape_index(struct shape s, int world_pe)
{
    int d = world_pe - s.start;
    if (d < 0 || d % s.stride != 0 || d / s.stride >= s.size) {
        return -1;
    }
    return d / s.stride;
}

static int config_all_zero(const aclshmem_team_config_t *c)
{
    const unsigned char *b = (const unsigned char *)c;
    for (size_t i = 0; i < sizeof *c; i++) {
        if (b[i] != 0) {
            return 0;
        }
    }
    return 1;
}

/* Checks everything a PE can see of `team`, which should be the world PEs of `s`. Collective over
 * the members (a barrier); non-members only check they got ACLSHMEM_TEAM_INVALID. */
static void check_team(aclshmem_team_t team, struct shape s, const char *what)
{
    int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    int idx = shape_index(s, me);
    if (idx < 0) {
        CHECK(team == ACLSHMEM_TEAM_INVALID, "%s: non-member got handle %d", what, team);
        CHECK(aclshmem_team_my_pe(team) == -1 && aclshmem_team_n_pes(team) == -1,
              "%s: team_my_pe/n_pes of the invalid handle are %d/%d", what, aclshmem_team_my_pe(team),
              aclshmem_team_n_pes(team));
        aclshmem_barrier(team); /* no-op */
        return;
    }
    CHECK(team >= 0 && team < ACLSHMEM_MAX_TEAMS, "%s: member got handle %d", what, team);
    CHECK(aclshmem_team_my_pe(team) == idx, "%s: team_my_pe %d, expected %d", what, aclshmem_team_my_pe(team),
          idx);
    CHECK(aclshmem_team_n_pes(team) == s.size, "%s: team_n_pes %d, expected %d", what,
          aclshmem_team_n_pes(team), s.size);
    for (int k = 0; k < s.size; k++) {
        int w = s.start + k * s.stride;
        int got = aclshmem_team_translate_pe(team, k, ACLSHMEM_TEAM_WORLD);
        CHECK(got == w, "%s: translate(team, %d, WORLD) = %d, expected %d", what, k, got, w);
        got = aclshmem_team_translate_pe(ACLSHMEM_TEAM_WORLD, w, team);
        CHECK(got == k, "%s: translate(WORLD, %d, team) = %d, expected %d", what, w, got, k);
        got = aclshmem_team_translate_pe(team, k, team);
        CHECK(got == k, "%s: translate(team, %d, team) = %d", what, k, got);
    }
    for (int w = 0; w < n; w++) {
        if (shape_index(s, w) < 0) {
            int got = aclshmem_team_translate_pe(ACLSHMEM_TEAM_WORLD, w, team);
            CHECK(got == -1, "%s: translate(WORLD, non-member %d, team) = %d", what, w, got);
        }
    }
    CHECK(aclshmem_team_translate_pe(team, -1, ACLSHMEM_TEAM_WORLD) == -1, "%s: translate of index -1", what);
    CHECK(aclshmem_team_translate_pe(team, s.size, ACLSHMEM_TEAM_WORLD) == -1, "%s: translate of index size",
          what);
    aclshmem_team_config_t cfg;
    memset(&cfg, 0x5a, sizeof cfg);
    CHECK_RC(aclshmem_team_get_config(team, &cfg), 0);
    CHECK(config_all_zero(&cfg), "%s: get_config is not all zero", what);
    CHECK_RC(aclshmem_team_get_config(team, NULL), ACLSHMEM_INVALID_PARAM);
    aclshmem_barrier(team);
    aclshmem_sync(team);
}

static struct shape world_shape(void)
{
    struct shape s = {0, 1, aclshmem_n_pes()};
    return s;
}

/* World shape of the child `c` (indices relative to the parent `p`). */
static struct shape nested(struct shape p, struct shape c)
{
    struct shape s = {p.start + c.start * p.stride, p.stride * c.stride, c.size};
    return s;
}

static aclshmem_team_t split(aclshmem_team_t parent, struct shape c, const char *what)
{
    aclshmem_team_t t = 12345;
    int rc = aclshmem_team_split_strided(parent, c.start, c.stride, c.size, &t);
    CHECK(rc == 0, "%s: split_strided(%d, %d, %d, %d) returned %d", what, parent, c.start, c.stride, c.size, rc);
    CHECK(t != 12345, "%s: split left *new_team unset", what);
    return t;
}

/* The x and y teams of parent member `idx` in a 2-D split of a parent of `n` members. */
static void shapes_2d(int n, int x_range, int idx, struct shape *x, struct shape *y)
{
    int xr = x_range < n ? x_range : n;
    x->start = idx / xr * xr;
    x->stride = 1;
    x->size = n - x->start < xr ? n - x->start : xr;
    y->start = idx % xr;
    y->stride = xr;
    y->size = (n - y->start + xr - 1) / xr;
}

static void check_2d(aclshmem_team_t parent, struct shape ps, int x_range, const char *what)
{
    int me = aclshmem_my_pe();
    int pidx = shape_index(ps, me);
    aclshmem_team_t x = 777, y = 777;
    CHECK_RC(aclshmem_team_split_2d(parent, x_range, &x, &y), 0);
    struct shape xs, ys;
    shapes_2d(ps.size, x_range, pidx, &xs, &ys);
    char buf[128];
    snprintf(buf, sizeof buf, "%s x_range %d x team", what, x_range);
    check_team(x, nested(ps, xs), buf);
    snprintf(buf, sizeof buf, "%s x_range %d y team", what, x_range);
    check_team(y, nested(ps, ys), buf);
    CHECK(x != y, "%s: x and y team share handle %d", what, x);
    aclshmem_team_destroy(x);
    aclshmem_team_destroy(y);
    CHECK(aclshmem_team_n_pes(x) == -1 && aclshmem_team_n_pes(y) == -1, "%s: destroyed 2-D teams still valid",
          what);
}

/* ---------------------------------------------------------------------------------------- */

static void scenario_splits(void)
{
    init();
    int n = aclshmem_n_pes(), me = aclshmem_my_pe();
    struct shape w = world_shape();
    check_team(ACLSHMEM_TEAM_WORLD, w, "world");

    struct shape evens_c = {0, 2, (n + 1) / 2}, odds_c = {1, 2, n / 2}, s3_c = {0, 3, (n + 2) / 3};
    struct shape single_c = {n - 1, 1, 1}, all_c = {0, 1, n};
    aclshmem_team_t evens = split(ACLSHMEM_TEAM_WORLD, evens_c, "evens");
    aclshmem_team_t odds = split(ACLSHMEM_TEAM_WORLD, odds_c, "odds");
    aclshmem_team_t s3 = split(ACLSHMEM_TEAM_WORLD, s3_c, "stride 3");
    aclshmem_team_t single = split(ACLSHMEM_TEAM_WORLD, single_c, "single");
    aclshmem_team_t all = split(ACLSHMEM_TEAM_WORLD, all_c, "all");
    check_team(evens, evens_c, "evens");
    check_team(odds, odds_c, "odds");
    check_team(s3, s3_c, "stride 3");
    check_team(single, single_c, "single");
    check_team(all, all_c, "all");
    CHECK(all != ACLSHMEM_TEAM_WORLD, "a split of the world got the world handle");
    if (n > 1) {
        CHECK((evens == ACLSHMEM_TEAM_INVALID) != (odds == ACLSHMEM_TEAM_INVALID),
              "member of both or neither of evens/odds");
    }

    /* nested: split of a split (collective over the parent's members only) */
    if (evens != ACLSHMEM_TEAM_INVALID) {
        struct shape c = {1, 2, evens_c.size / 2}; /* evens 1, 3 of the evens: world 2, 6 */
        aclshmem_team_t t = split(evens, c, "evens/odd-indexed");
        check_team(t, nested(evens_c, c), "evens/odd-indexed");
        struct shape c2 = {0, 1, evens_c.size - 1};
        aclshmem_team_t t2 = split(evens, c2, "evens/prefix");
        check_team(t2, nested(evens_c, c2), "evens/prefix");
        /* (a prefix of one member has no suffix: a split of size 0 is refused, 3 and 4 PEs) */
        if (t2 != ACLSHMEM_TEAM_INVALID && nested(evens_c, c2).size > 1) {
            struct shape pc = nested(evens_c, c2);
            struct shape c3 = {1, 1, pc.size - 1};
            aclshmem_team_t t3 = split(t2, c3, "evens/prefix/suffix");
            check_team(t3, nested(pc, c3), "evens/prefix/suffix");
            aclshmem_team_destroy(t3);
        }
        check_2d(evens, evens_c, 2, "evens 2-D");
        aclshmem_team_destroy(t);
        aclshmem_team_destroy(t2);
    } else {
        aclshmem_team_t t = 9;
        CHECK_RC(aclshmem_team_split_strided(evens, 0, 1, 1, &t), ACLSHMEM_INVALID_PARAM);
        CHECK(t == ACLSHMEM_TEAM_INVALID, "split of an invalid parent left *new_team = %d", t);
    }
    if (odds != ACLSHMEM_TEAM_INVALID) {
        struct shape c = {odds_c.size - 1, 1, 1};
        aclshmem_team_t t = split(odds, c, "odds/last");
        check_team(t, nested(odds_c, c), "odds/last");
        aclshmem_team_destroy(t);
    }
    aclshmem_barrier_all();

    /* 2-D splits of the world */
    check_2d(ACLSHMEM_TEAM_WORLD, w, 2, "world 2-D");
    check_2d(ACLSHMEM_TEAM_WORLD, w, 3, "world 2-D");
    check_2d(ACLSHMEM_TEAM_WORLD, w, n, "world 2-D");
    check_2d(ACLSHMEM_TEAM_WORLD, w, 20, "world 2-D");
    check_2d(ACLSHMEM_TEAM_WORLD, w, 1, "world 2-D");
    /* the 2-D split of a split that this PE is not part of */
    {
        aclshmem_team_t x = 5, y = 5;
        if (odds == ACLSHMEM_TEAM_INVALID) {
            CHECK_RC(aclshmem_team_split_2d(odds, 2, &x, &y), ACLSHMEM_INVALID_PARAM);
            CHECK(x == ACLSHMEM_TEAM_INVALID && y == ACLSHMEM_TEAM_INVALID,
                  "split_2d of an invalid parent left %d/%d", x, y);
        } else {
            check_2d(odds, odds_c, 3, "odds 2-D");
        }
    }
    aclshmem_barrier_all();

    /* validation: every PE passes the same bad arguments, so each call fails on every PE (the
     * arguments are compared between the members first: see the asymmetric scenario) */
    aclshmem_team_t t = 4242;
    CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, 1, NULL), ACLSHMEM_INVALID_PARAM);
#define BAD_SPLIT(parent, a, b, c)                                                                    \
    do {                                                                                          \
        t = 4242;                                                                                 \
        CHECK_RC(aclshmem_team_split_strided(parent, a, b, c, &t), ACLSHMEM_INVALID_PARAM);       \
        CHECK(t == ACLSHMEM_TEAM_INVALID, "failed split (line %d) left *new_team = %d", __LINE__, t); \
    } while (0)
    BAD_SPLIT(ACLSHMEM_TEAM_INVALID, 0, 1, 1);
    BAD_SPLIT(1999, 0, 1, 1);
    BAD_SPLIT(ACLSHMEM_MAX_TEAMS, 0, 1, 1);
    BAD_SPLIT(-7, 0, 1, 1);
    BAD_SPLIT(ACLSHMEM_TEAM_WORLD, -1, 1, 1);
    BAD_SPLIT(ACLSHMEM_TEAM_WORLD, n, 1, 1);
    BAD_SPLIT(ACLSHMEM_TEAM_WORLD, 0, 1, 0);
    BAD_SPLIT(ACLSHMEM_TEAM_WORLD, 0, 1, -3);
    BAD_SPLIT(ACLSHMEM_TEAM_WORLD, 0, 1, n + 1);
    BAD_SPLIT(ACLSHMEM_TEAM_WORLD, 0, 0, 1);
    BAD_SPLIT(ACLSHMEM_TEAM_WORLD, 0, -1, 2);
    BAD_SPLIT(ACLSHMEM_TEAM_WORLD, 1, 1, n);     /* last member n: beyond */
    BAD_SPLIT(ACLSHMEM_TEAM_WORLD, n - 1, 3, 2); /* n - 1, n + 2: beyond */
    BAD_SPLIT(ACLSHMEM_TEAM_WORLD, 0, n, 2);     /* second member n */
    BAD_SPLIT(ACLSHMEM_TEAM_WORLD, ACLSHMEM_MAX_PES, 1, 1);
    BAD_SPLIT(ACLSHMEM_TEAM_WORLD, 0, ACLSHMEM_MAX_PES, 1);
    BAD_SPLIT(ACLSHMEM_TEAM_WORLD, 0, 1, ACLSHMEM_MAX_PES + 1);
    BAD_SPLIT(ACLSHMEM_TEAM_WORLD, 0, 0x40000000, 3); /* overflowing last member */
    if (evens != ACLSHMEM_TEAM_INVALID) {
        BAD_SPLIT(evens, 0, 1, evens_c.size + 1);
        BAD_SPLIT(evens, evens_c.size, 1, 1);
        BAD_SPLIT(evens, 1, 2, evens_c.size / 2 + 1);
    }
    {
        aclshmem_team_t x = 1, y = 1;
        CHECK_RC(aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, 0, &x, &y), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, -2, &x, &y), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, 2, NULL, &y), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, 2, &x, NULL), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, 2, NULL, NULL), ACLSHMEM_INVALID_PARAM);
        x = y = 1;
        CHECK_RC(aclshmem_team_split_2d(1999, 2, &x, &y), ACLSHMEM_INVALID_PARAM);
        CHECK(x == ACLSHMEM_TEAM_INVALID && y == ACLSHMEM_TEAM_INVALID, "split_2d(bad parent) left %d/%d", x, y);
    }
    aclshmem_team_config_t cfg;
    CHECK_RC(aclshmem_team_get_config(ACLSHMEM_TEAM_INVALID, &cfg), ACLSHMEM_INVALID_PARAM);
    CHECK_RC(aclshmem_team_get_config(1999, &cfg), ACLSHMEM_INVALID_PARAM);
    CHECK_RC(aclshmem_team_get_config(ACLSHMEM_TEAM_WORLD, NULL), ACLSHMEM_INVALID_PARAM);
    CHECK(aclshmem_team_my_pe(1999) == -1 && aclshmem_team_n_pes(1999) == -1, "team queries of handle 1999");
    CHECK(aclshmem_team_my_pe(ACLSHMEM_MAX_TEAMS) == -1 && aclshmem_team_n_pes(-5) == -1,
          "team queries of out-of-range handles");

    /* destroy: the world cannot be destroyed; bad handles are ignored; a destroyed handle is dead */
    aclshmem_team_destroy(ACLSHMEM_TEAM_WORLD);
    aclshmem_team_destroy(ACLSHMEM_TEAM_INVALID);
    aclshmem_team_destroy(1999);
    aclshmem_team_destroy(ACLSHMEM_MAX_TEAMS);
    CHECK(aclshmem_team_n_pes(ACLSHMEM_TEAM_WORLD) == n && aclshmem_team_my_pe(ACLSHMEM_TEAM_WORLD) == me,
          "the world team was destroyed");
    aclshmem_barrier(ACLSHMEM_TEAM_WORLD);
    aclshmem_team_t handles[] = {evens, odds, s3, single, all};
    for (size_t i = 0; i < sizeof handles / sizeof handles[0]; i++) {
        if (handles[i] != ACLSHMEM_TEAM_INVALID) {
            aclshmem_team_destroy(handles[i]);
            CHECK(aclshmem_team_n_pes(handles[i]) == -1, "destroyed handle %d still valid", handles[i]);
            CHECK(aclshmem_team_translate_pe(handles[i], 0, ACLSHMEM_TEAM_WORLD) == -1,
                  "translate with destroyed handle %d", handles[i]);
            CHECK_RC(aclshmem_team_get_config(handles[i], &cfg), ACLSHMEM_INVALID_PARAM);
            aclshmem_team_destroy(handles[i]); /* twice: logged, no effect */
        }
    }
    /* after destroying everything a fresh split reuses the lowest slot */
    aclshmem_team_t again = split(ACLSHMEM_TEAM_WORLD, all_c, "again");
    CHECK(again == 1, "fresh split after destroying all teams got handle %d, expected 1", again);
    check_team(again, all_c, "again");
    /* a re-initialised library starts with the world team only */
    aclshmem_barrier_all();
    CHECK_RC(aclshmem_finalize(), 0);
    init();
    CHECK(aclshmem_team_n_pes(again) == -1, "team %d survived finalize and init", again);
    CHECK(aclshmem_team_n_pes(ACLSHMEM_TEAM_WORLD) == n, "world after re-init");
    aclshmem_team_t fresh = split(ACLSHMEM_TEAM_WORLD, odds_c, "after re-init");
    check_team(fresh, odds_c, "after re-init");
    CHECK(fresh == ACLSHMEM_TEAM_INVALID || fresh == 1, "first split after re-init got %d", fresh);
    finish();
}

/* ---------------------------------------------------------------------------------------- */

static void scenario_translate_matrix(void)
{
    init();
    int n = aclshmem_n_pes(), me = aclshmem_my_pe();
    enum { NT = 10 };
    struct shape sh[NT];
    aclshmem_team_t h[NT];
    int nt = 0;
    sh[nt] = world_shape();
    h[nt++] = ACLSHMEM_TEAM_WORLD;
    struct shape cs[] = {{0, 2, (n + 1) / 2}, {1, 2, n / 2}, {0, 3, (n + 2) / 3}, {1, 3, (n + 1) / 3},
                         {n / 2, 1, 1},       {1, 1, n - 1}, {0, n - 1, 2}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        sh[nt] = cs[i];
        h[nt++] = split(ACLSHMEM_TEAM_WORLD, cs[i], "matrix team");
    }
    /* nested: odd-indexed members of the evens */
    if (h[1] != ACLSHMEM_TEAM_INVALID) {
        struct shape c = {1, 2, sh[1].size / 2};
        sh[nt] = nested(sh[1], c);
        h[nt++] = split(h[1], c, "nested matrix team");
    } else {
        sh[nt] = (struct shape){2, 4, (n + 1) / 2 / 2};
        h[nt++] = ACLSHMEM_TEAM_INVALID;
    }
    for (int i = 0; i < nt; i++) {
        check_team(h[i], sh[i], "matrix team");
    }
    aclshmem_barrier_all();

    int bad_handles[] = {ACLSHMEM_TEAM_INVALID, 1999, ACLSHMEM_MAX_TEAMS, -3};
    for (int a = 0; a < nt; a++) {
        for (int b = 0; b < nt; b++) {
            for (int k = -2; k <= sh[a].size + 1; k++) {
                int want = -1;
                int valid = h[a] != ACLSHMEM_TEAM_INVALID && h[b] != ACLSHMEM_TEAM_INVALID;
                if (valid && k >= 0 && k < sh[a].size) {
                    want = shape_index(sh[b], sh[a].start + k * sh[a].stride);
                }
                int got = aclshmem_team_translate_pe(h[a], k, h[b]);
                CHECK(got == want, "translate(team %d [%d,%d,%d], %d, team %d [%d,%d,%d]) = %d, expected %d", h[a],
                      sh[a].start, sh[a].stride, sh[a].size, k, h[b], sh[b].start, sh[b].stride, sh[b].size, got,
                      want);
            }
            (void)me;
        }
        for (size_t j = 0; j < sizeof bad_handles / sizeof bad_handles[0]; j++) {
            CHECK(aclshmem_team_translate_pe(h[a], 0, bad_handles[j]) == -1, "translate to bad handle %d",
                  bad_handles[j]);
            CHECK(aclshmem_team_translate_pe(bad_handles[j], 0, h[a]) == -1, "translate from bad handle %d",
                  bad_handles[j]);
        }
    }
    /* destroyed handles translate to -1 */
    for (int i = 1; i < nt; i++) {
        if (h[i] != ACLSHMEM_TEAM_INVALID) {
            aclshmem_team_destroy(h[i]);
            CHECK(aclshmem_team_translate_pe(h[i], 0, ACLSHMEM_TEAM_WORLD) == -1, "translate from destroyed %d",
                  h[i]);
            CHECK(aclshmem_team_translate_pe(ACLSHMEM_TEAM_WORLD, me, h[i]) == -1, "translate to destroyed %d",
                  h[i]);
        }
    }
    finish();
}

/* ---------------------------------------------------------------------------------------- */

#define USER_TEAMS (ACLSHMEM_MAX_TEAMS - 1)

/* Every PE publishes `vals[0..count)` into the symmetric `pub`, then checks that every PE
 * published the same values. */
static void check_agreement(int *pub, const int *vals, int count, const char *what)
{
    int n = aclshmem_n_pes();
    memcpy(pub, vals, (size_t)count * sizeof(int));
    aclshmem_barrier_all();
    for (int pe = 0; pe < n; pe++) {
        const int *other = aclshmem_ptr(pub, pe);
        CHECK(other != NULL, "aclshmem_ptr(pub, %d) is NULL", pe);
        for (int i = 0; i < count; i++) {
            CHECK(other[i] == vals[i], "%s: team %d: PE %d has handle %d, this PE %d", what, i, pe, other[i],
                  vals[i]);
        }
    }
    aclshmem_barrier_all();
}

/* Lowest-free-slot model of the handles, one row per PE. */
static unsigned char g_used[64][ACLSHMEM_MAX_TEAMS];

static int model_split(struct shape s)
{
    for (int slot = 1; slot < ACLSHMEM_MAX_TEAMS; slot++) {
        int free_all = 1;
        for (int k = 0; k < s.size && free_all; k++) {
            free_all = !g_used[s.start + k * s.stride][slot];
        }
        if (free_all) {
            for (int k = 0; k < s.size; k++) {
                g_used[s.start + k * s.stride][slot] = 1;
            }
            return slot;
        }
    }
    return -1;
}

static int model_handle(struct shape s, int slot)
{
    return shape_index(s, aclshmem_my_pe()) >= 0 ? slot : ACLSHMEM_TEAM_INVALID;
}

static void model_destroy(struct shape s, int slot)
{
    for (int k = 0; k < s.size; k++) {
        g_used[s.start + k * s.stride][slot] = 0;
    }
}

static void scenario_many_teams(void)
{
    init();
    int n = aclshmem_n_pes(), me = aclshmem_my_pe();
    CHECK(n <= 64, "at most 64 PEs");
    static int handles[USER_TEAMS];
    int *pub = sym_alloc(2 * ACLSHMEM_MAX_TEAMS * sizeof(int));
    struct shape all = world_shape();

    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < USER_TEAMS; i++) {
            /* alternate a few shapes that all contain every PE */
            struct shape c = all;
            handles[i] = split(ACLSHMEM_TEAM_WORLD, c, "many");
            CHECK(handles[i] == i + 1, "round %d: team %d got handle %d, expected %d", round, i, handles[i], i + 1);
        }
        check_agreement(pub, handles, USER_TEAMS, "many teams");
        aclshmem_team_t t = 77;
        CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), ACLSHMEM_INNER_ERROR);
        CHECK(t == ACLSHMEM_TEAM_INVALID, "failed split left %d", t);
        aclshmem_team_t x = 77, y = 77;
        CHECK_RC(aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, 1, &x, &y), ACLSHMEM_INNER_ERROR);
        CHECK(x == ACLSHMEM_TEAM_INVALID && y == ACLSHMEM_TEAM_INVALID, "failed split_2d left %d/%d", x, y);
        /* the last team works, and so do teams all over the table */
        for (int i = round; i < USER_TEAMS; i += 97) {
            check_team(handles[i], all, "many: sample");
        }
        check_team(handles[USER_TEAMS - 1], all, "many: last");
        /* collectives on the highest slot (its barrier words and exchange area end the pool) */
        {
            int *cs = pub + ACLSHMEM_MAX_TEAMS;
            int *cd = pub + ACLSHMEM_MAX_TEAMS + 8;
            cs[0] = me + 1;
            CHECK_RC(aclshmem_int_collect(handles[USER_TEAMS - 1], cd, cs, (size_t)(me % 2)), 0);
            for (int k = 0, off = 0; k < n; k++) {
                if (k % 2) {
                    CHECK(cd[off] == k + 1, "collect on the last team: element %d = %d", off, cd[off]);
                    off++;
                }
            }
            CHECK_RC(aclshmem_int_sum_reduce(handles[USER_TEAMS - 1], cd, cs, 1), 0);
            CHECK(cd[0] == n * (n + 1) / 2, "sum on the last team = %d", cd[0]);
        }
        /* a freed slot in the middle is the one a new split takes */
        aclshmem_team_destroy(handles[1000]);
        t = split(ACLSHMEM_TEAM_WORLD, all, "refill");
        CHECK(t == handles[1000], "refill got handle %d, expected %d", t, handles[1000]);
        check_team(t, all, "refill");
        for (int i = 0; i < USER_TEAMS; i++) {
            aclshmem_team_destroy(handles[i]);
        }
        for (int i = 0; i < USER_TEAMS; i += 211) {
            CHECK(aclshmem_team_n_pes(handles[i]) == -1, "handle %d alive after destroy", handles[i]);
        }
        aclshmem_barrier_all();
    }

    /* interleaving: two disjoint groups create different numbers of teams among themselves, then
     * world-wide splits: every team's members agree on its handle, which is the lowest slot free
     * on all of them. */
    memset(g_used, 0, sizeof g_used);
    for (int pe = 0; pe < n; pe++) {
        g_used[pe][0] = 1;
    }
    enum { MAXT = 16 };
    int mine[MAXT], expect[MAXT], nt = 0;
    aclshmem_team_t th[MAXT];
    struct shape tsh[MAXT];
    struct shape ga = {0, 1, n / 2 > 0 ? n / 2 : 1}, gb = {n / 2, 1, n - n / 2};
#define ADD_TEAM(handle, shape_)                                      \
    do {                                                              \
        th[nt] = (handle);                                            \
        tsh[nt] = (shape_);                                           \
        mine[nt] = th[nt];                                            \
        expect[nt] = model_handle(tsh[nt], model_split(tsh[nt]));     \
        CHECK(mine[nt] == expect[nt], "interleave team %d: handle %d, model %d", nt, mine[nt], expect[nt]); \
        nt++;                                                         \
    } while (0)
    int in_a = shape_index(ga, me) >= 0;
    int expect_b1 = -1;
    aclshmem_team_t pa = split(ACLSHMEM_TEAM_WORLD, ga, "group a");
    ADD_TEAM(pa, ga);
    aclshmem_team_t pb = split(ACLSHMEM_TEAM_WORLD, gb, "group b");
    ADD_TEAM(pb, gb);
    /* slots 2, 3, 4: group a's inner team, group b's two inner teams (INVALID elsewhere) */
    for (int k = 0; k < 3; k++) {
        th[nt + k] = ACLSHMEM_TEAM_INVALID;
        mine[nt + k] = ACLSHMEM_TEAM_INVALID;
        tsh[nt + k] = k == 0 ? ga : gb;
    }
    if (in_a) {
        struct shape sub = {0, 1, ga.size};
        th[nt] = mine[nt] = split(pa, sub, "group a inner");
    } else {
        struct shape sub = {0, 1, gb.size};
        th[nt + 1] = mine[nt + 1] = split(pb, sub, "group b inner 1");
        th[nt + 2] = mine[nt + 2] = split(pb, sub, "group b inner 2");
    }
    nt += 3;
    /* the model of what the groups did (every PE runs it identically) */
    {
        int sa = model_split(ga);
        int sb1 = model_split(gb);
        int sb2 = model_split(gb);
        expect_b1 = sb1;
        int want_a = in_a ? sa : ACLSHMEM_TEAM_INVALID;
        CHECK(mine[2] == want_a, "group a inner: handle %d, model %d", mine[2], want_a);
        if (!in_a) {
            CHECK(mine[3] == sb1 && mine[4] == sb2, "group b inner: handles %d/%d, model %d/%d", mine[3], mine[4],
                  sb1, sb2);
        }
    }
    struct shape evens = {0, 2, (n + 1) / 2}, odds = {1, 2, n / 2};
    ADD_TEAM(split(ACLSHMEM_TEAM_WORLD, evens, "evens"), evens);
    if (odds.size > 0) {
        ADD_TEAM(split(ACLSHMEM_TEAM_WORLD, odds, "odds"), odds);
    }
    {
        aclshmem_team_t x, y;
        int xr = n / 2 > 0 ? n / 2 : 1;
        CHECK_RC(aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, xr, &x, &y), 0);
        /* model: x teams in order, then y teams */
        struct shape xs, ys;
        shapes_2d(n, xr, me, &xs, &ys);
        int xslot = -1, yslot = -1;
        for (int s = 0; s < n; s += xr) {
            struct shape q = {s, 1, n - s < xr ? n - s : xr};
            int slot = model_split(q);
            if (q.start == xs.start) {
                xslot = slot;
            }
        }
        for (int s = 0; s < xr; s++) {
            struct shape q = {s, xr, (n - s + xr - 1) / xr};
            int slot = model_split(q);
            if (q.start == ys.start) {
                yslot = slot;
            }
        }
        CHECK(x == xslot && y == yslot, "2-D after interleaving: %d/%d, model %d/%d", x, y, xslot, yslot);
        th[nt] = x;
        tsh[nt] = xs;
        mine[nt] = x;
        nt++;
        th[nt] = y;
        tsh[nt] = ys;
        mine[nt] = y;
        nt++;
    }
    /* agreement among members: compare with every other member of the same team */
    memcpy(pub, mine, (size_t)nt * sizeof(int));
    aclshmem_barrier_all();
    for (int i = 0; i < nt; i++) {
        if (mine[i] == ACLSHMEM_TEAM_INVALID) {
            continue;
        }
        check_team(th[i], tsh[i], "interleaved team");
        for (int k = 0; k < tsh[i].size; k++) {
            const int *other = aclshmem_ptr(pub, tsh[i].start + k * tsh[i].stride);
            CHECK(other[i] == mine[i], "interleaved team %d: member %d has handle %d, this PE %d", i, k, other[i],
                  mine[i]);
        }
    }
    aclshmem_barrier_all();
    /* the two group teams share a slot number (each agreed among its own members only): run
     * barriers and reductions on both at once */
    CHECK(pa == pb || (pa == ACLSHMEM_TEAM_INVALID) != (pb == ACLSHMEM_TEAM_INVALID), "group handles %d/%d", pa,
          pb);
    {
        aclshmem_team_t g = in_a ? pa : pb;
        struct shape gs = in_a ? ga : gb;
        long *src = sym_alloc(64 * sizeof(long));
        long *dst = sym_alloc(64 * sizeof(long));
        for (int it = 0; it < 200; it++) {
            for (int i = 0; i < 64; i++) {
                src[i] = (long)(me * 1000 + i + it);
            }
            CHECK_RC(aclshmem_long_sum_reduce(g, dst, src, 64), 0);
            for (int i = 0; i < 64; i++) {
                long want = 0;
                for (int k = 0; k < gs.size; k++) {
                    want += (long)((gs.start + k) * 1000 + i + it);
                }
                CHECK(dst[i] == want, "group reduce it %d [%d] = %ld, expected %ld", it, i, dst[i], want);
            }
            aclshmem_barrier(g);
        }
        aclshmem_barrier_all();
        aclshmem_free(dst);
        aclshmem_free(src);
    }
    /* group b drops its first inner team; a world-wide split then takes the lowest slot free on
     * every PE, per the model */
    {
        int sb1 = -1;
        if (!in_a) {
            sb1 = mine[3];
            aclshmem_team_destroy(mine[3]);
            mine[3] = ACLSHMEM_TEAM_INVALID;
        }
        /* every PE knows group b's slot through the model: recompute it */
        int slots_b1 = expect_b1;
        model_destroy(gb, slots_b1);
        CHECK(in_a || sb1 == slots_b1, "group b inner 1 had handle %d, model %d", sb1, slots_b1);
        struct shape all = world_shape();
        aclshmem_team_t w2 = split(ACLSHMEM_TEAM_WORLD, all, "world after interleaving");
        int want = model_split(all);
        CHECK(w2 == want, "world split after interleaving got %d, model %d", w2, want);
        check_team(w2, all, "world after interleaving");
        aclshmem_team_destroy(w2);
    }
    for (int i = 0; i < nt; i++) {
        if (mine[i] != ACLSHMEM_TEAM_INVALID) {
            aclshmem_team_destroy(mine[i]);
        }
    }
    aclshmem_free(pub);
    finish();
}

/* ---------------------------------------------------------------------------------------- */

#define PHASES 500
#define MAXM 64

static void phases(aclshmem_team_t team, struct shape s, int *arr, const char *what)
{
    int me = aclshmem_team_my_pe(team), np = aclshmem_team_n_pes(team);
    CHECK(me >= 0 && np == s.size, "%s: team_my_pe %d n_pes %d", what, me, np);
    int *peer[MAXM];
    for (int k = 0; k < np; k++) {
        peer[k] = aclshmem_ptr(arr, aclshmem_team_translate_pe(team, k, ACLSHMEM_TEAM_WORLD));
        CHECK(peer[k] != NULL, "%s: aclshmem_ptr of member %d", what, k);
    }
    for (int p = 1; p <= PHASES; p++) {
        int buf = p % 2;
        /* the next member's slot for us, and our column in every member's array */
        __atomic_store_n(&peer[(me + 1) % np][2 * MAXM + buf], p, __ATOMIC_RELAXED);
        for (int k = 0; k < np; k++) {
            __atomic_store_n(&peer[k][buf * MAXM + me], p, __ATOMIC_RELAXED);
        }
        if (p % 2) {
            aclshmem_barrier(team);
        } else {
            aclshmem_sync(team);
        }
        int got = __atomic_load_n(&arr[2 * MAXM + buf], __ATOMIC_RELAXED);
        CHECK(got == p, "%s: phase %d: slot from the predecessor holds %d", what, p, got);
        for (int k = 0; k < np; k++) {
            got = __atomic_load_n(&arr[buf * MAXM + k], __ATOMIC_RELAXED);
            CHECK(got == p, "%s: phase %d: column of member %d holds %d", what, p, k, got);
        }
        aclshmem_barrier(ACLSHMEM_TEAM_INVALID);
    }
}

static void scenario_team_barrier_phases(void)
{
    init();
    int n = aclshmem_n_pes(), me = aclshmem_my_pe();
    CHECK(n >= 2 && n <= MAXM, "needs 2..64 PEs");
    int *arr = sym_alloc((3 * MAXM) * sizeof(int));
    memset(arr, 0, 3 * MAXM * sizeof(int));
    /* team A: odd PEs (n >= 8) or PEs 1..n-1; team B: the others */
    struct shape a, b;
    if (n >= 8) {
        a = (struct shape){1, 2, n / 2};
        b = (struct shape){0, 2, (n + 1) / 2};
    } else {
        a = (struct shape){1, 1, n - 1};
        b = (struct shape){0, 1, 1};
    }
    aclshmem_team_t ta = split(ACLSHMEM_TEAM_WORLD, a, "team a");
    aclshmem_team_t tb = split(ACLSHMEM_TEAM_WORLD, b, "team b");
    aclshmem_barrier_all();
    if (ta != ACLSHMEM_TEAM_INVALID) {
        aclshmem_barrier(tb); /* we are not in b: no-op */
        phases(ta, a, arr, "team a");
    } else {
        CHECK(tb != ACLSHMEM_TEAM_INVALID, "PE %d in neither team", me);
        /* other work: phases on the other team, plus some computation */
        volatile unsigned long x = 0;
        for (unsigned long i = 0; i < 2000000; i++) {
            x += i * 7;
        }
        phases(tb, b, arr, "team b");
    }
    aclshmem_barrier_all();
    /* the whole world through a split handle as well */
    aclshmem_team_t all = split(ACLSHMEM_TEAM_WORLD, world_shape(), "all");
    memset(arr, 0, 3 * MAXM * sizeof(int));
    aclshmem_barrier_all();
    phases(all, world_shape(), arr, "all");
    aclshmem_team_destroy(all);
    if (ta != ACLSHMEM_TEAM_INVALID) {
        aclshmem_team_destroy(ta);
    }
    if (tb != ACLSHMEM_TEAM_INVALID) {
        aclshmem_team_destroy(tb);
    }
    finish();
}

/* ---------------------------------------------------------------------------------------- */
/* Collectives                                                                                */

enum { OP_AND, OP_OR, OP_XOR, OP_MAX, OP_MIN, OP_SUM, OP_PROD };
static const char *const OP_NAMES[] = {"and", "or", "xor", "max", "min", "sum", "prod"};

#define BIG_N 70000
/* 12-96 KB by type (the BIG ones, as BIG_N): the node leaders' exchange through mailboxes, in
   several parts (2 and 4 nodes) */
#define MID_N 12000
#define BUF_BYTES ((size_t)1 << 20)
#define SENT 0xA5

static unsigned char *g_src, *g_dst;
static int g_big_all; /* argv option: 70000-element reductions for every type */
static size_t g_ops_done;

static uint64_t mix(uint64_t m, uint64_t i, uint64_t salt)
{
    uint64_t z = (m << 40) ^ (i << 8) ^ (salt * 0x9E3779B97F4A7C15ull);
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Bytes [from, to) of `p` still hold the sentinel. */
static int untouched(const unsigned char *p, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        if (p[i] != SENT) {
            return 0;
        }
    }
    return 1;
}

struct ctx {
    aclshmem_team_t team;
    const char *label;
    int me, np; /* -1 / 0 for non-members */
};

/* values: integers use every bit; floats are halves in [-2, 2] so sums and products are exact */
#define VAL_I(T, h) ((T)(h))
#define VAL_F(T, h) ((T)((double)((int)((h) % 9u) - 4) * 0.5))

#define APPLY_I(T, op, a, b)                              \
    switch (op) {                                         \
    case OP_AND: a = (T)((uint64_t)(a) & (uint64_t)(b)); break; \
    case OP_OR: a = (T)((uint64_t)(a) | (uint64_t)(b)); break;  \
    case OP_XOR: a = (T)((uint64_t)(a) ^ (uint64_t)(b)); break; \
    case OP_SUM: a = (T)((uint64_t)(a) + (uint64_t)(b)); break; \
    case OP_PROD: a = (T)((uint64_t)(a) * (uint64_t)(b)); break; \
    case OP_MAX: if ((b) > (a)) a = (b); break;           \
    case OP_MIN: if ((b) < (a)) a = (b); break;           \
    default: fail("bad op"); }

#define APPLY_F(T, op, a, b)                    \
    switch (op) {                               \
    case OP_SUM: a = (T)((a) + (b)); break;     \
    case OP_PROD: a = (T)((a) * (b)); break;    \
    case OP_MAX: if ((b) > (a)) a = (b); break; \
    case OP_MIN: if ((b) < (a)) a = (b); break; \
    default: fail("bad float op"); }

#define OPS_BIT(NAME)                                                                            \
    {OP_AND, aclshmem_##NAME##_and_reduce}, {OP_OR, aclshmem_##NAME##_or_reduce},                \
        {OP_XOR, aclshmem_##NAME##_xor_reduce},
#define OPS_ARITH(NAME)                                                                          \
    {OP_MAX, aclshmem_##NAME##_max_reduce}, {OP_MIN, aclshmem_##NAME##_min_reduce},              \
        {OP_SUM, aclshmem_##NAME##_sum_reduce}, {OP_PROD, aclshmem_##NAME##_prod_reduce},
#define OPS_1(NAME) OPS_BIT(NAME) OPS_ARITH(NAME)
#define OPS_0(NAME) OPS_ARITH(NAME)

/* NAME, C type, value kind, has and/or/xor, runs the 70000-element reductions by default */
#define TYPES(X)                         \
    X(float, float, F, 0, 0)             \
    X(double, double, F, 0, 1)           \
    X(char, char, I, 0, 0)               \
    X(schar, signed char, I, 0, 0)       \
    X(short, short, I, 0, 0)             \
    X(int, int, I, 0, 1)                 \
    X(long, long, I, 0, 0)               \
    X(longlong, long long, I, 0, 0)      \
    X(uchar, unsigned char, I, 1, 0)     \
    X(ushort, unsigned short, I, 1, 0)   \
    X(uint, unsigned int, I, 1, 0)       \
    X(ulong, unsigned long, I, 1, 0)     \
    X(ulonglong, unsigned long long, I, 1, 0) \
    X(int8, int8_t, I, 1, 0)             \
    X(int16, int16_t, I, 1, 0)           \
    X(int32, int32_t, I, 1, 0)           \
    X(int64, int64_t, I, 1, 1)           \
    X(uint8, uint8_t, I, 1, 1)           \
    X(uint16, uint16_t, I, 1, 0)         \
    X(uint32, uint32_t, I, 1, 0)         \
    X(uint64, uint64_t, I, 1, 0)         \
    X(size, size_t, I, 1, 0)             \
    X(ptrdiff, ptrdiff_t, I, 0, 0)

#define DEF_TYPE(NAME, T, KIND, HASBIT, BIG)                                                             \
    static T gen_##NAME(int m, size_t i, unsigned salt)                                                  \
    {                                                                                                    \
        uint64_t h = mix((uint64_t)m, (uint64_t)i, salt);                                                \
        return VAL_##KIND(T, h);                                                                         \
    }                                                                                                    \
    static void reduce_##NAME(const struct ctx *c, int op, int (*fn)(aclshmem_team_t, T *, const T *, size_t), \
                              size_t n, int inplace)                                                     \
    {                                                                                                    \
        T *src = (T *)g_src, *dst = inplace ? src : (T *)g_dst;                                          \
        unsigned salt = (unsigned)(op * 131 + (int)n + inplace * 7);                                     \
        memset(g_src, SENT, (n + 4) * sizeof(T));                                                        \
        memset(g_dst, SENT, (n + 4) * sizeof(T));                                                        \
        for (size_t i = 0; i < n; i++) {                                                                 \
            src[i] = gen_##NAME(c->me, i, salt);                                                         \
        }                                                                                                \
        int rc = fn(c->team, dst, src, n);                                                               \
        g_ops_done++;                                                                                    \
        CHECK(rc == 0, "%s: %s_%s_reduce(n %zu%s) returned %d", c->label, #NAME, OP_NAMES[op], n,        \
              inplace ? ", in place" : "", rc);                                                          \
        for (size_t i = 0; i < n; i++) {                                                                 \
            T acc = gen_##NAME(0, i, salt);                                                              \
            for (int m = 1; m < c->np; m++) {                                                            \
                T v = gen_##NAME(m, i, salt);                                                            \
                APPLY_##KIND(T, op, acc, v)                                                              \
            }                                                                                            \
            CHECK(dst[i] == acc, "%s: %s_%s_reduce(n %zu%s): element %zu = %.17g, expected %.17g",       \
                  c->label, #NAME, OP_NAMES[op], n, inplace ? ", in place" : "", i, (double)dst[i],      \
                  (double)acc);                                                                          \
        }                                                                                                \
        CHECK(untouched((unsigned char *)(dst + n), 0, 4 * sizeof(T)), "%s: %s_%s_reduce wrote past n",  \
              c->label, #NAME, OP_NAMES[op]);                                                            \
        if (!inplace) {                                                                                  \
            for (size_t i = 0; i < n; i++) {                                                             \
                CHECK(src[i] == gen_##NAME(c->me, i, salt), "%s: %s_%s_reduce changed source[%zu]",       \
                      c->label, #NAME, OP_NAMES[op], i);                                                 \
            }                                                                                            \
        }                                                                                                \
    }                                                                                                    \
    static void coll_##NAME(const struct ctx *c)                                                         \
    {                                                                                                    \
        T *src = (T *)g_src, *dst = (T *)g_dst;                                                          \
        const size_t sz = sizeof(T);                                                                     \
        /* broadcast from every root */                                                                  \
        size_t n = 37;                                                                                   \
        for (int root = 0; root < c->np; root++) {                                                       \
            unsigned salt = 1000u + (unsigned)root;                                                      \
            memset(g_dst, SENT, (n + 4) * sz);                                                           \
            for (size_t i = 0; i < n; i++) {                                                             \
                src[i] = gen_##NAME(c->me, i, salt);                                                     \
            }                                                                                            \
            CHECK_RC(aclshmem_##NAME##_broadcast(c->team, dst, src, n, root), 0);                        \
            for (size_t i = 0; i < n; i++) {                                                             \
                CHECK(dst[i] == gen_##NAME(root, i, salt), "%s: %s_broadcast root %d: element %zu",      \
                      c->label, #NAME, root, i);                                                         \
            }                                                                                            \
            CHECK(untouched(g_dst, n * sz, (n + 4) * sz), "%s: %s_broadcast wrote past n", c->label,     \
                  #NAME);                                                                                \
        }                                                                                                \
        CHECK_RC(aclshmem_##NAME##_broadcast(c->team, dst, src, 0, 0), 0);                               \
        /* collect: per-member counts differ (some are 0) */                                             \
        {                                                                                                \
            size_t off = 0, mine = (size_t)((c->me * 5 + 2) % 7) * 3;                                    \
            for (size_t i = 0; i < mine; i++) {                                                          \
                src[i] = gen_##NAME(c->me, i, 2000u);                                                    \
            }                                                                                            \
            memset(g_dst, SENT, 64 * (size_t)c->np * sz);                                                \
            CHECK_RC(aclshmem_##NAME##_collect(c->team, dst, src, mine), 0);                             \
            for (int m = 0; m < c->np; m++) {                                                            \
                size_t cnt = (size_t)((m * 5 + 2) % 7) * 3;                                              \
                for (size_t i = 0; i < cnt; i++) {                                                       \
                    CHECK(dst[off + i] == gen_##NAME(m, i, 2000u), "%s: %s_collect: member %d element %zu", \
                          c->label, #NAME, m, i);                                                        \
                }                                                                                        \
                off += cnt;                                                                              \
            }                                                                                            \
            CHECK(untouched(g_dst, off * sz, (off + 4) * sz), "%s: %s_collect wrote past the end",       \
                  c->label, #NAME);                                                                      \
        }                                                                                                \
        /* fcollect */                                                                                   \
        n = 29;                                                                                          \
        for (size_t i = 0; i < n; i++) {                                                                 \
            src[i] = gen_##NAME(c->me, i, 3000u);                                                        \
        }                                                                                                \
        memset(g_dst, SENT, (n * (size_t)c->np + 4) * sz);                                               \
        CHECK_RC(aclshmem_##NAME##_fcollect(c->team, dst, src, n), 0);                                   \
        for (int m = 0; m < c->np; m++) {                                                                \
            for (size_t i = 0; i < n; i++) {                                                             \
                CHECK(dst[(size_t)m * n + i] == gen_##NAME(m, i, 3000u), "%s: %s_fcollect: member %d element %zu", \
                      c->label, #NAME, m, i);                                                            \
            }                                                                                            \
        }                                                                                                \
        CHECK(untouched(g_dst, n * (size_t)c->np * sz, (n * (size_t)c->np + 4) * sz),                    \
              "%s: %s_fcollect wrote past the end", c->label, #NAME);                                    \
        /* alltoall: block j of member i goes to block i of member j */                                  \
        n = 13;                                                                                          \
        for (size_t i = 0; i < n * (size_t)c->np; i++) {                                                 \
            src[i] = gen_##NAME(c->me, i, 4000u);                                                        \
        }                                                                                                \
        memset(g_dst, SENT, (n * (size_t)c->np + 4) * sz);                                               \
        CHECK_RC(aclshmem_##NAME##_alltoall(c->team, dst, src, n), 0);                                   \
        for (int m = 0; m < c->np; m++) {                                                                \
            for (size_t e = 0; e < n; e++) {                                                             \
                CHECK(dst[(size_t)m * n + e] == gen_##NAME(m, (size_t)c->me * n + e, 4000u),            \
                      "%s: %s_alltoall: block from member %d element %zu", c->label, #NAME, m, e);       \
            }                                                                                            \
        }                                                                                                \
        CHECK(untouched(g_dst, n * (size_t)c->np * sz, (n * (size_t)c->np + 4) * sz),                    \
              "%s: %s_alltoall wrote past the end", c->label, #NAME);                                    \
        g_ops_done += 4;                                                                                 \
        /* reductions */                                                                                 \
        static const struct {                                                                            \
            int op;                                                                                      \
            int (*fn)(aclshmem_team_t, T *, const T *, size_t);                                          \
        } ops[] = {OPS_##HASBIT(NAME)};                                                                  \
        static const size_t sizes[] = {1, 3, 100, 1000, MID_N, BIG_N};                                    \
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {                                        \
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {                                \
                if ((sizes[s] == BIG_N || sizes[s] == MID_N) && !(BIG) && !g_big_all) {                  \
                    continue;                                                                            \
                }                                                                                        \
                reduce_##NAME(c, ops[k].op, ops[k].fn, sizes[s], 0);                                     \
                if (sizes[s] != 1) {                                                                     \
                    reduce_##NAME(c, ops[k].op, ops[k].fn, sizes[s], 1);                                 \
                }                                                                                        \
            }                                                                                            \
        }                                                                                                \
    }

TYPES(DEF_TYPE)

static void coll_bytes(const struct ctx *c)
{
    unsigned char *src = g_src, *dst = g_dst;
    /* broadcastmem of sizes around and above a page */
    static const size_t sizes[] = {1, 100, 1024, 1025, 4095, 300001};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        for (int root = 0; root < c->np; root += (c->np > 3 ? 2 : 1)) {
            unsigned salt = 5000u + (unsigned)root + (unsigned)s * 100;
            for (size_t i = 0; i < n; i++) {
                src[i] = (unsigned char)mix((uint64_t)c->me, i, salt);
            }
            memset(dst, SENT, n + 16);
            CHECK_RC(aclshmem_broadcastmem(c->team, dst, src, n, root), 0);
            for (size_t i = 0; i < n; i++) {
                CHECK(dst[i] == (unsigned char)mix((uint64_t)root, i, salt), "%s: broadcastmem(%zu) root %d byte %zu",
                      c->label, n, root, i);
            }
            CHECK(untouched(dst, n, n + 16), "%s: broadcastmem wrote past the end", c->label);
        }
    }
    /* collectmem with small per-member sizes (the barrier-free path: every member's data travels
       with its length; 0..45 bytes, then 0..1013: under 1 KiB on the first team slots, beyond
       the narrow rings' 56 on later ones) */
    for (size_t scale = 1; scale <= 22; scale += 21) {
        size_t mine = (size_t)((c->me * 5 + 2) % 4) * 15 * scale;
        for (size_t i = 0; i < mine; i++) {
            src[i] = (unsigned char)mix((uint64_t)c->me, i, 6500u + (unsigned)scale);
        }
        size_t total = 0;
        for (int m = 0; m < c->np; m++) {
            total += (size_t)((m * 5 + 2) % 4) * 15 * scale;
        }
        memset(dst, SENT, total + 16);
        CHECK_RC(aclshmem_collectmem(c->team, dst, src, mine), 0);
        size_t off = 0;
        for (int m = 0; m < c->np; m++) {
            size_t cnt = (size_t)((m * 5 + 2) % 4) * 15 * scale;
            for (size_t i = 0; i < cnt; i++) {
                CHECK(dst[off + i] == (unsigned char)mix((uint64_t)m, i, 6500u + (unsigned)scale),
                      "%s: small collectmem (x%zu) member %d byte %zu", c->label, scale, m, i);
            }
            off += cnt;
        }
        CHECK(untouched(dst, total, total + 16), "%s: small collectmem wrote past the end", c->label);
    }
    /* collectmem with per-member sizes (odd byte counts, some zero) */
    {
        size_t mine = (size_t)((c->me * 3 + 1) % 4) * 10007;
        for (size_t i = 0; i < mine; i++) {
            src[i] = (unsigned char)mix((uint64_t)c->me, i, 6000u);
        }
        size_t total = 0;
        for (int m = 0; m < c->np; m++) {
            total += (size_t)((m * 3 + 1) % 4) * 10007;
        }
        memset(dst, SENT, total + 16);
        CHECK_RC(aclshmem_collectmem(c->team, dst, src, mine), 0);
        size_t off = 0;
        for (int m = 0; m < c->np; m++) {
            size_t cnt = (size_t)((m * 3 + 1) % 4) * 10007;
            for (size_t i = 0; i < cnt; i++) {
                CHECK(dst[off + i] == (unsigned char)mix((uint64_t)m, i, 6000u), "%s: collectmem member %d byte %zu",
                      c->label, m, i);
            }
            off += cnt;
        }
        CHECK(untouched(dst, total, total + 16), "%s: collectmem wrote past the end", c->label);
    }
    /* fcollectmem and alltoallmem */
    {
        size_t n = 20011;
        for (size_t i = 0; i < n; i++) {
            src[i] = (unsigned char)mix((uint64_t)c->me, i, 7000u);
        }
        memset(dst, SENT, n * (size_t)c->np + 16);
        CHECK_RC(aclshmem_fcollectmem(c->team, dst, src, n), 0);
        for (int m = 0; m < c->np; m++) {
            for (size_t i = 0; i < n; i++) {
                CHECK(dst[(size_t)m * n + i] == (unsigned char)mix((uint64_t)m, i, 7000u),
                      "%s: fcollectmem member %d byte %zu", c->label, m, i);
            }
        }
        CHECK(untouched(dst, n * (size_t)c->np, n * (size_t)c->np + 16), "%s: fcollectmem wrote past the end",
              c->label);
        n = 10009;
        for (size_t i = 0; i < n * (size_t)c->np; i++) {
            src[i] = (unsigned char)mix((uint64_t)c->me, i, 8000u);
        }
        memset(dst, SENT, n * (size_t)c->np + 16);
        CHECK_RC(aclshmem_alltoallmem(c->team, dst, src, n), 0);
        for (int m = 0; m < c->np; m++) {
            for (size_t e = 0; e < n; e++) {
                CHECK(dst[(size_t)m * n + e] == (unsigned char)mix((uint64_t)m, (size_t)c->me * n + e, 8000u),
                      "%s: alltoallmem from member %d byte %zu", c->label, m, e);
            }
        }
        CHECK(untouched(dst, n * (size_t)c->np, n * (size_t)c->np + 16), "%s: alltoallmem wrote past the end",
              c->label);
        /* zero sizes are fine */
        CHECK_RC(aclshmem_fcollectmem(c->team, dst, src, 0), 0);
        CHECK_RC(aclshmem_alltoallmem(c->team, dst, src, 0), 0);
        CHECK_RC(aclshmem_collectmem(c->team, dst, src, 0), 0);
        CHECK_RC(aclshmem_broadcastmem(c->team, dst, src, 0, 0), 0);
        memset(dst, SENT, 64);
        CHECK_RC(aclshmem_int_sum_reduce(c->team, (int *)dst, (int *)src, 0), 0);
        CHECK_RC(aclshmem_double_max_reduce(c->team, (double *)dst, (double *)dst, 0), 0);
        CHECK(untouched(dst, 0, 64), "%s: a zero-size collective wrote its destination", c->label);
    }
    g_ops_done += 8;
}

#define CALL_COLL(NAME, T, KIND, HASBIT, BIG) coll_##NAME(c);

static void coll_all(const struct ctx *c)
{
    coll_bytes(c);
    TYPES(CALL_COLL)
}

/* run_on_team with the byte collectives and three element types only (enough for a team that
   runs the same code paths in another slot) */
static void run_on_team_light(aclshmem_team_t team, const char *label)
{
    struct ctx c = {team, label, aclshmem_team_my_pe(team), aclshmem_team_n_pes(team)};
    memset(g_dst, SENT, BUF_BYTES);
    aclshmem_barrier_all();
    if (team != ACLSHMEM_TEAM_INVALID) {
        CHECK(c.me >= 0 && c.np > 0, "%s: team_my_pe %d n_pes %d", label, c.me, c.np);
        coll_bytes(&c);
        coll_char(&c);
        coll_double(&c);
        coll_int64(&c);
    }
    aclshmem_barrier_all();
}

static void run_on_team(aclshmem_team_t team, const char *label)
{
    struct ctx c = {team, label, aclshmem_team_my_pe(team), aclshmem_team_n_pes(team)};
    memset(g_dst, SENT, BUF_BYTES);
    aclshmem_barrier_all();
    if (team != ACLSHMEM_TEAM_INVALID) {
        CHECK(c.me >= 0 && c.np > 0, "%s: team_my_pe %d n_pes %d", label, c.me, c.np);
        coll_all(&c);
    }
    aclshmem_barrier_all();
    if (team == ACLSHMEM_TEAM_INVALID) {
        /* nobody wrote into a non-member's buffers */
        CHECK(untouched(g_dst, 0, BUF_BYTES), "%s: a collective of a team wrote into a non-member", label);
    }
}

static void scenario_collectives(int argc, char **argv)
{
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "big") == 0) {
            g_big_all = 1;
        }
    }
    init();
    int n = aclshmem_n_pes();
    g_src = sym_alloc(BUF_BYTES);
    g_dst = sym_alloc(BUF_BYTES);
    run_on_team(ACLSHMEM_TEAM_WORLD, "world");
    /* strided sub-team: odd PEs */
    aclshmem_team_t odds = split(ACLSHMEM_TEAM_WORLD, (struct shape){1, 2, n / 2 > 0 ? n / 2 : 1}, "odds");
    run_on_team(odds, "odds");
    /* stride 3 starting at 0 on larger jobs (a team whose first member is PE 0) */
    if (n >= 4) {
        aclshmem_team_t s3 = split(ACLSHMEM_TEAM_WORLD, (struct shape){0, 3, (n + 2) / 3}, "stride 3");
        run_on_team(s3, "stride 3");
        if (s3 != ACLSHMEM_TEAM_INVALID) {
            aclshmem_team_destroy(s3);
        }
    }
    /* 2-D x teams: several teams run their collectives at the same time */
    aclshmem_team_t x, y;
    CHECK_RC(aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, 3, &x, &y), 0);
    run_on_team(x, "2-D x team");
    aclshmem_team_destroy(x);
    aclshmem_team_destroy(y);
    if (odds != ACLSHMEM_TEAM_INVALID) {
        aclshmem_team_destroy(odds);
    }
    /* a team in a later slot (the first 8 slots have the library's wide rings for small
       collectives, later ones the narrow rings of their sync-pool area): pad teams fill slots
       1..8, then the whole job again */
    {
        aclshmem_team_t pads[8], late = ACLSHMEM_TEAM_INVALID;
        int npads = 0;
        while (npads < 8) {
            aclshmem_team_t t = split(ACLSHMEM_TEAM_WORLD, (struct shape){0, 1, n}, "pad");
            if (t >= 8) {
                late = t;
                break;
            }
            pads[npads++] = t;
        }
        if (late == ACLSHMEM_TEAM_INVALID) {
            late = split(ACLSHMEM_TEAM_WORLD, (struct shape){0, 1, n}, "late");
        }
        CHECK(late >= 8, "the team after %d pads got handle %d", npads, late);
        run_on_team_light(late, "late slot");
        aclshmem_team_destroy(late);
        while (npads > 0) {
            aclshmem_team_destroy(pads[--npads]);
        }
    }
    if (aclshmem_my_pe() == 0) {
        printf("collectives: %zu calls checked on PE 0\n", g_ops_done);
    }
    aclshmem_free(g_dst);
    aclshmem_free(g_src);
    finish();
}

/* ---------------------------------------------------------------------------------------- */

static void scenario_bad_input(void)
{
    /* before init */
    {
        int a[8] = {0}, b[8] = {0};
        aclshmem_team_t t = 5, x = 5, y = 5;
        aclshmem_team_config_t cfg;
        CHECK(aclshmem_team_my_pe(ACLSHMEM_TEAM_WORLD) == -1, "team_my_pe before init");
        CHECK(aclshmem_team_n_pes(ACLSHMEM_TEAM_WORLD) == -1, "team_n_pes before init");
        CHECK(aclshmem_team_translate_pe(ACLSHMEM_TEAM_WORLD, 0, ACLSHMEM_TEAM_WORLD) == -1,
              "translate before init");
        CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, 1, NULL), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, 1, &t), ACLSHMEM_INVALID_PARAM);
        CHECK(t == ACLSHMEM_TEAM_INVALID, "split before init left %d", t);
        CHECK_RC(aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, 1, &x, &y), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, 1, NULL, &y), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_team_get_config(ACLSHMEM_TEAM_WORLD, &cfg), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_team_get_config(ACLSHMEM_TEAM_WORLD, NULL), ACLSHMEM_INVALID_PARAM);
        aclshmem_team_destroy(1);
        aclshmem_team_destroy(ACLSHMEM_TEAM_WORLD);
        aclshmem_barrier(ACLSHMEM_TEAM_WORLD);
        aclshmem_sync(ACLSHMEM_TEAM_WORLD);
        aclshmem_barrier(ACLSHMEM_TEAM_INVALID);
        CHECK_RC(aclshmem_broadcastmem(ACLSHMEM_TEAM_WORLD, a, b, 8, 0), ACLSHMEM_NOT_INITED);
        CHECK_RC(aclshmem_collectmem(ACLSHMEM_TEAM_WORLD, a, b, 8), ACLSHMEM_NOT_INITED);
        CHECK_RC(aclshmem_fcollectmem(ACLSHMEM_TEAM_WORLD, a, b, 8), ACLSHMEM_NOT_INITED);
        CHECK_RC(aclshmem_alltoallmem(ACLSHMEM_TEAM_WORLD, a, b, 1), ACLSHMEM_NOT_INITED);
        CHECK_RC(aclshmem_int_broadcast(ACLSHMEM_TEAM_WORLD, a, b, 1, 0), ACLSHMEM_NOT_INITED);
        CHECK_RC(aclshmem_int_collect(ACLSHMEM_TEAM_WORLD, a, b, 1), ACLSHMEM_NOT_INITED);
        CHECK_RC(aclshmem_int_fcollect(ACLSHMEM_TEAM_WORLD, a, b, 1), ACLSHMEM_NOT_INITED);
        CHECK_RC(aclshmem_int_alltoall(ACLSHMEM_TEAM_WORLD, a, b, 1), ACLSHMEM_NOT_INITED);
        CHECK_RC(aclshmem_int_sum_reduce(ACLSHMEM_TEAM_WORLD, a, b, 1), ACLSHMEM_NOT_INITED);
        CHECK_RC(aclshmem_uint_and_reduce(ACLSHMEM_TEAM_WORLD, (unsigned *)a, (unsigned *)b, 1),
                 ACLSHMEM_NOT_INITED);
        CHECK_RC(aclshmem_double_max_reduce(ACLSHMEM_TEAM_WORLD, (double *)a, (double *)b, 1), ACLSHMEM_NOT_INITED);
        for (int i = 0; i < 8; i++) {
            CHECK(a[i] == 0, "a collective before init wrote its destination");
        }
    }
    init();
    int n = aclshmem_n_pes(), me = aclshmem_my_pe();
    enum { N = 64 };
    int *src = sym_alloc(4 * N * sizeof(int) * (size_t)n);
    int *dst = sym_alloc(4 * N * sizeof(int) * (size_t)n);
    size_t span = 4 * N * (size_t)n * sizeof(int);
#define RESET()                                  \
    do {                                         \
        memset(dst, SENT, span);                 \
        for (int i_ = 0; i_ < 4 * N * n; i_++) { \
            src[i_] = me * 100000 + i_;          \
        }                                        \
    } while (0)
#define NO_WRITE(what) CHECK(untouched((unsigned char *)dst, 0, span), "%s wrote the destination", what)
    RESET();
    /* invalid team handles: -1, no write */
    int bad_teams[] = {ACLSHMEM_TEAM_INVALID, 77, ACLSHMEM_MAX_TEAMS, -9};
    for (size_t k = 0; k < sizeof bad_teams / sizeof bad_teams[0]; k++) {
        int t = bad_teams[k];
        CHECK_RC(aclshmem_broadcastmem(t, dst, src, 16, 0), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_collectmem(t, dst, src, 16), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_fcollectmem(t, dst, src, 16), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_alltoallmem(t, dst, src, 16), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int_broadcast(t, dst, src, N, 0), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int_collect(t, dst, src, N), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int_fcollect(t, dst, src, N), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int_alltoall(t, dst, src, N), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int_sum_reduce(t, dst, src, N), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int_max_reduce(t, dst, src, N), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int32_xor_reduce(t, dst, src, N), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_float_sum_reduce(t, (float *)dst, (float *)src, N), ACLSHMEM_INVALID_PARAM);
        aclshmem_barrier(t); /* logged no-op */
        aclshmem_sync(t);
        NO_WRITE("a collective on an invalid team");
    }
    /* a team this PE left (destroyed) and a team it is not part of */
    {
        aclshmem_team_t t = split(ACLSHMEM_TEAM_WORLD, world_shape(), "doomed");
        aclshmem_team_destroy(t);
        CHECK_RC(aclshmem_int_broadcast(t, dst, src, N, 0), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int_sum_reduce(t, dst, src, N), ACLSHMEM_INVALID_PARAM);
        aclshmem_team_t other = split(ACLSHMEM_TEAM_WORLD, (struct shape){0, 1, 1}, "pe 0 only");
        if (me != 0) {
            CHECK(other == ACLSHMEM_TEAM_INVALID, "non-member got %d", other);
            CHECK_RC(aclshmem_int_fcollect(other, dst, src, N), ACLSHMEM_INVALID_PARAM);
        } else {
            aclshmem_team_destroy(other);
        }
        NO_WRITE("a collective on a dead team");
    }
    /* root outside the team */
    CHECK_RC(aclshmem_broadcastmem(ACLSHMEM_TEAM_WORLD, dst, src, 16, -1), ACLSHMEM_INVALID_PARAM);
    CHECK_RC(aclshmem_broadcastmem(ACLSHMEM_TEAM_WORLD, dst, src, 16, n), ACLSHMEM_INVALID_PARAM);
    CHECK_RC(aclshmem_int_broadcast(ACLSHMEM_TEAM_WORLD, dst, src, N, -1), ACLSHMEM_INVALID_PARAM);
    CHECK_RC(aclshmem_int_broadcast(ACLSHMEM_TEAM_WORLD, dst, src, N, n), ACLSHMEM_INVALID_PARAM);
    CHECK_RC(aclshmem_double_broadcast(ACLSHMEM_TEAM_WORLD, (double *)dst, (double *)src, 4, 1 << 20),
             ACLSHMEM_INVALID_PARAM);
    NO_WRITE("a broadcast with a bad root");
    if (n >= 2) {
        /* root = size of a sub-team that is smaller than the world */
        aclshmem_team_t half = split(ACLSHMEM_TEAM_WORLD, (struct shape){0, 1, n / 2}, "half");
        if (half != ACLSHMEM_TEAM_INVALID) {
            CHECK_RC(aclshmem_int_broadcast(half, dst, src, N, n / 2), ACLSHMEM_INVALID_PARAM);
            aclshmem_team_destroy(half);
        }
        NO_WRITE("a broadcast with root = team size");
    }
    /* buffers that are not symmetric */
    {
        int stack_buf[4 * N];
        int *libc_buf = calloc(4 * N, sizeof(int));
        CHECK(libc_buf != NULL, "calloc");
        memset(stack_buf, 0, sizeof stack_buf);
        CHECK_RC(aclshmem_int_broadcast(ACLSHMEM_TEAM_WORLD, stack_buf, src, N, 0), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int_broadcast(ACLSHMEM_TEAM_WORLD, dst, stack_buf, N, 0), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_broadcastmem(ACLSHMEM_TEAM_WORLD, libc_buf, src, 8, 0), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int_fcollect(ACLSHMEM_TEAM_WORLD, stack_buf, src, 2), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int_fcollect(ACLSHMEM_TEAM_WORLD, dst, stack_buf, 2), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int_collect(ACLSHMEM_TEAM_WORLD, stack_buf, src, 2), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int_collect(ACLSHMEM_TEAM_WORLD, dst, libc_buf, 2), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int_alltoall(ACLSHMEM_TEAM_WORLD, stack_buf, src, 2), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int_alltoall(ACLSHMEM_TEAM_WORLD, dst, stack_buf, 2), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int_sum_reduce(ACLSHMEM_TEAM_WORLD, stack_buf, src, N), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int_sum_reduce(ACLSHMEM_TEAM_WORLD, dst, stack_buf, N), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int_sum_reduce(ACLSHMEM_TEAM_WORLD, stack_buf, stack_buf, N), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_uint64_or_reduce(ACLSHMEM_TEAM_WORLD, (uint64_t *)libc_buf, (uint64_t *)src, 4),
                 ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int_sum_reduce(ACLSHMEM_TEAM_WORLD, NULL, src, N), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int_sum_reduce(ACLSHMEM_TEAM_WORLD, dst, NULL, N), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_broadcastmem(ACLSHMEM_TEAM_WORLD, NULL, src, 8, 0), ACLSHMEM_INVALID_PARAM);
        for (int i = 0; i < 4 * N; i++) {
            CHECK(stack_buf[i] == 0 && libc_buf[i] == 0, "a rejected collective wrote a local buffer");
        }
        free(libc_buf);
        /* a range running past the end of the heap */
        size_t huge = (size_t)1 << 40;
        CHECK_RC(aclshmem_broadcastmem(ACLSHMEM_TEAM_WORLD, dst, src, huge, 0), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_int_sum_reduce(ACLSHMEM_TEAM_WORLD, dst, src, huge), ACLSHMEM_INVALID_PARAM);
        CHECK(aclshmem_fcollectmem(ACLSHMEM_TEAM_WORLD, dst, src, SIZE_MAX / 2) < 0,
              "fcollectmem with an overflowing size succeeded");
        CHECK(aclshmem_alltoallmem(ACLSHMEM_TEAM_WORLD, dst, src, SIZE_MAX / 2) < 0,
              "alltoallmem with an overflowing size succeeded");
        CHECK(aclshmem_int_sum_reduce(ACLSHMEM_TEAM_WORLD, dst, src, SIZE_MAX / 2) < 0,
              "int_sum_reduce with an overflowing size succeeded");
        NO_WRITE("a collective with non-symmetric buffers");
    }
    /* overlapping dest and source */
    CHECK_RC(aclshmem_int_broadcast(ACLSHMEM_TEAM_WORLD, src + 1, src, N, 0), ACLSHMEM_INVALID_PARAM);
    CHECK_RC(aclshmem_int_broadcast(ACLSHMEM_TEAM_WORLD, src, src + 1, N, 0), ACLSHMEM_INVALID_PARAM);
    CHECK_RC(aclshmem_broadcastmem(ACLSHMEM_TEAM_WORLD, (char *)src + 1, src, 8, 0), ACLSHMEM_INVALID_PARAM);
    CHECK_RC(aclshmem_int_fcollect(ACLSHMEM_TEAM_WORLD, src + 1, src, N), ACLSHMEM_INVALID_PARAM);
    /* fcollect: dest (N * n elements) reaching into source from below */
    CHECK_RC(aclshmem_int_fcollect(ACLSHMEM_TEAM_WORLD, src, src + N * n - 1, N), ACLSHMEM_INVALID_PARAM);
    CHECK_RC(aclshmem_fcollectmem(ACLSHMEM_TEAM_WORLD, src, src, 4), ACLSHMEM_INVALID_PARAM);
    CHECK_RC(aclshmem_int_collect(ACLSHMEM_TEAM_WORLD, src + 1, src, N), ACLSHMEM_INVALID_PARAM);
    CHECK_RC(aclshmem_collectmem(ACLSHMEM_TEAM_WORLD, src, src, 8), ACLSHMEM_INVALID_PARAM);
    CHECK_RC(aclshmem_int_alltoall(ACLSHMEM_TEAM_WORLD, src + 1, src, N), ACLSHMEM_INVALID_PARAM);
    CHECK_RC(aclshmem_int_alltoall(ACLSHMEM_TEAM_WORLD, src, src + N * n - 1, N), ACLSHMEM_INVALID_PARAM);
    CHECK_RC(aclshmem_alltoallmem(ACLSHMEM_TEAM_WORLD, src, src, 4), ACLSHMEM_INVALID_PARAM);
    CHECK_RC(aclshmem_int_sum_reduce(ACLSHMEM_TEAM_WORLD, src + 1, src, N), ACLSHMEM_INVALID_PARAM);
    CHECK_RC(aclshmem_int_sum_reduce(ACLSHMEM_TEAM_WORLD, src, src + N - 1, N), ACLSHMEM_INVALID_PARAM);
    CHECK_RC(aclshmem_uint8_and_reduce(ACLSHMEM_TEAM_WORLD, (uint8_t *)src + 1, (uint8_t *)src, 16),
             ACLSHMEM_INVALID_PARAM);
    CHECK_RC(aclshmem_double_prod_reduce(ACLSHMEM_TEAM_WORLD, (double *)src + 3, (double *)src, 4),
             ACLSHMEM_INVALID_PARAM);
    for (int i = 0; i < 4 * N * n; i++) {
        CHECK(src[i] == me * 100000 + i, "a rejected overlapping collective changed source[%d]", i);
    }
    /* adjacent (touching, not overlapping) buffers are fine */
    {
        CHECK_RC(aclshmem_int_broadcast(ACLSHMEM_TEAM_WORLD, src + N, src, N, 0), 0);
        for (int i = 0; i < N; i++) {
            CHECK(src[N + i] == i, "adjacent broadcast element %d = %d", i, src[N + i]);
        }
        RESET();
        CHECK_RC(aclshmem_int_sum_reduce(ACLSHMEM_TEAM_WORLD, src + N, src, N), 0);
        for (int i = 0; i < N; i++) {
            int want = 0;
            for (int m = 0; m < n; m++) {
                want += m * 100000 + i;
            }
            CHECK(src[N + i] == want, "adjacent reduce element %d = %d, expected %d", i, src[N + i], want);
        }
        RESET();
    }
    /* in place (dest == source, as OpenSHMEM allows): every member's buffer gets the root's data */
    {
        for (int root = 0; root < n; root++) {
            for (size_t len = 8; len <= 4 * N * sizeof(int); len *= 4) {
                CHECK_RC(aclshmem_broadcastmem(ACLSHMEM_TEAM_WORLD, src, src, len, root), 0);
                for (size_t i = 0; i < len / sizeof(int); i++) {
                    CHECK(src[i] == root * 100000 + (int)i, "in-place broadcast from %d, %zu bytes: element %zu = %d",
                          root, len, i, src[i]);
                }
                for (size_t i = len / sizeof(int); i < (size_t)(4 * N * n); i++) {
                    CHECK(src[i] == me * 100000 + (int)i, "in-place broadcast wrote past %zu bytes", len);
                }
                aclshmem_barrier_all();
                RESET();
                aclshmem_barrier_all();
            }
        }
    }
    /* misaligned typed buffers */
    CHECK_RC(aclshmem_int_sum_reduce(ACLSHMEM_TEAM_WORLD, (int *)((char *)dst + 1), src, 4), ACLSHMEM_INVALID_PARAM);
    NO_WRITE("a rejected collective");
    /* the library still works after all of that */
    RESET();
    CHECK_RC(aclshmem_int_broadcast(ACLSHMEM_TEAM_WORLD, dst, src, N, n - 1), 0);
    for (int i = 0; i < N; i++) {
        CHECK(dst[i] == (n - 1) * 100000 + i, "broadcast after errors: element %d = %d", i, dst[i]);
    }
    RESET();
    CHECK_RC(aclshmem_int_max_reduce(ACLSHMEM_TEAM_WORLD, dst, src, N), 0);
    for (int i = 0; i < N; i++) {
        CHECK(dst[i] == (n - 1) * 100000 + i, "max reduce after errors: element %d = %d", i, dst[i]);
    }
    aclshmem_free(dst);
    aclshmem_free(src);
    aclshmem_barrier_all();
    CHECK_RC(aclshmem_finalize(), 0);
    /* after finalize: the same answers as before init */
    {
        int a[4] = {0}, b[4] = {0};
        aclshmem_team_t t = 5;
        aclshmem_team_config_t cfg;
        CHECK(aclshmem_team_my_pe(ACLSHMEM_TEAM_WORLD) == -1, "team_my_pe after finalize");
        CHECK(aclshmem_team_n_pes(ACLSHMEM_TEAM_WORLD) == -1, "team_n_pes after finalize");
        CHECK(aclshmem_team_translate_pe(ACLSHMEM_TEAM_WORLD, 0, ACLSHMEM_TEAM_WORLD) == -1,
              "translate after finalize");
        CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, 1, &t), ACLSHMEM_INVALID_PARAM);
        CHECK_RC(aclshmem_team_get_config(ACLSHMEM_TEAM_WORLD, &cfg), ACLSHMEM_INVALID_PARAM);
        aclshmem_barrier(ACLSHMEM_TEAM_WORLD);
        aclshmem_team_destroy(1);
        CHECK_RC(aclshmem_int_broadcast(ACLSHMEM_TEAM_WORLD, a, b, 1, 0), ACLSHMEM_NOT_INITED);
        CHECK_RC(aclshmem_long_prod_reduce(ACLSHMEM_TEAM_WORLD, (long *)a, (long *)b, 1), ACLSHMEM_NOT_INITED);
        CHECK_RC(aclshmem_alltoallmem(ACLSHMEM_TEAM_WORLD, a, b, 1), ACLSHMEM_NOT_INITED);
    }
    if (g_pe == 0) {
        printf("OK %s\n", g_scenario);
    }
    fflush(stdout);
}

/* Run with one of the ACLSHMEM_*_ALGO variables set to an unknown value. `stagger`: PEs other than
 * 0 start their init 500 ms late (as PEs of a real job may), so they must not depend on PE 0's
 * failed init still being around. */
static void scenario_bad_algo(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[2], "stagger") == 0 && g_pe != 0) {
        usleep(500 * 1000);
    }
    int rc = init_rc(5);
    /* the failed init must leave a process that goes on normally (no late exit from a leftover
     * bootstrap connection) */
    usleep(300 * 1000);
    printf("PE %d: init returned %d\n", g_pe, rc);
    CHECK(rc == ACLSHMEM_INVALID_VALUE, "init with a bad algorithm variable returned %d, expected %d", rc,
          ACLSHMEM_INVALID_VALUE);
    CHECK(aclshmemx_init_status() == ACLSHMEM_STATUS_NOT_INITIALIZED, "init status %d after the failed init",
          aclshmemx_init_status());
    CHECK(aclshmem_team_n_pes(ACLSHMEM_TEAM_WORLD) == -1, "team_n_pes after the failed init");
    if (g_pe == 0) {
        printf("OK %s\n", g_scenario);
    }
    fflush(stdout);
}

/* ---- asymmetric and members-only splits ---------------------------------------------------------
 * A strided split communicates among the new team's members only, as the original's makes no
 * communication: PEs outside the new team return 0 with ACLSHMEM_TEAM_INVALID at once and need not
 * call it at all (the original's unit tests split on the odd PEs only). Members that ask for
 * another split, or do not call it, leave the first member waiting: with ACLSHMEM_COLLECTIVE_TIMEOUT
 * (2 s in this test) it fails with ACLSHMEM_TIMEOUT_ERROR, and the library stays usable. A 2-D
 * split, made by every member of the parent, still fails at once with ACLSHMEM_INVALID_PARAM on
 * every member when the members' x ranges differ. */
static void scenario_asymmetric(void)
{
    init();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    int32_t *box = (int32_t *)aclshmem_calloc((size_t)n, sizeof(int32_t));
    /* members only: the odd PEs split, the even PEs do not call */
    for (int round = 0; round < 3; round++) {
        if (me % 2 == 1) {
            aclshmem_team_t odd = ACLSHMEM_TEAM_INVALID;
            CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 1, 2, n / 2, &odd), 0);
            CHECK(odd != ACLSHMEM_TEAM_INVALID && aclshmem_team_n_pes(odd) == n / 2 &&
                      aclshmem_team_my_pe(odd) == me / 2,
                  "members-only split: handle %d, %d PEs, my index %d", odd, aclshmem_team_n_pes(odd),
                  aclshmem_team_my_pe(odd));
            /* every member puts its PE number into the next member's box */
            int next = aclshmem_team_translate_pe(odd, (me / 2 + 1) % (n / 2), ACLSHMEM_TEAM_WORLD);
            aclshmem_int32_p(&box[me], me + 100 * round, next);
            aclshmem_barrier(odd);
            int prev = aclshmem_team_translate_pe(odd, (me / 2 + n / 2 - 1) % (n / 2), ACLSHMEM_TEAM_WORLD);
            CHECK(box[prev] == prev + 100 * round, "round %d: box[%d] = %d after the odd team's barrier", round,
                  prev, box[prev]);
            aclshmem_barrier(odd);
            aclshmem_team_destroy(odd);
        }
        /* a split another PE is alone in: non-members return at once */
        aclshmem_team_t solo = 4242;
        CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, n - 1, 1, 1, &solo), 0);
        CHECK((me == n - 1) == (solo != ACLSHMEM_TEAM_INVALID), "solo split: handle %d", solo);
        if (solo != ACLSHMEM_TEAM_INVALID) {
            CHECK(aclshmem_team_n_pes(solo) == 1, "solo team of %d PEs", aclshmem_team_n_pes(solo));
            aclshmem_team_destroy(solo);
        }
    }
    aclshmem_barrier_all();
    /* PE 0 asks for the whole world, the others for PE 0 alone (so they are not members) */
    aclshmem_team_t t = 4242;
    int rc = aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, me == 0 ? n : 1, &t);
    CHECK(rc == (me == 0 ? ACLSHMEM_TIMEOUT_ERROR : 0), "asymmetric split returned %d", rc);
    CHECK(t == ACLSHMEM_TEAM_INVALID, "asymmetric split left *new_team = %d", t);
    if (me != 0) {
        usleep(3000 * 1000); /* PE 0 gives up after 2 s: the next collectives start together */
    }
    aclshmem_barrier_all();
    /* 2-D with different x ranges */
    aclshmem_team_t x = 4242, y = 4242;
    CHECK_RC(aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, me == 0 ? 1 : 2, &x, &y), ACLSHMEM_INVALID_PARAM);
    CHECK(x == ACLSHMEM_TEAM_INVALID && y == ACLSHMEM_TEAM_INVALID, "asymmetric split_2d left %d/%d", x, y);
    aclshmem_barrier_all();
    /* still usable */
    t = ACLSHMEM_TEAM_INVALID;
    CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), 0);
    CHECK(t != ACLSHMEM_TEAM_INVALID && aclshmem_team_n_pes(t) == n, "split after the failures: %d", t);
    aclshmem_barrier(t);
    aclshmem_team_destroy(t);
    aclshmem_free(box);
    finish();
}

/* ---- asymmetric broadcasts -------------------------------------------------------------------
 * Members naming different roots: no hang, no write beyond the call's own dest, and every member
 * gets ACLSHMEM_INVALID_PARAM -- at the call itself when a member waits for a root that is not
 * one (or on the barrier-based paths), otherwise (two members each believing it is the root, the
 * barrier-free paths) at the latest when the root's buffer comes round again, 16 calls later. */
static void check_bcast(const int64_t *dst, size_t nelems, int root, int line)
{
    for (size_t i = 0; i < nelems; i++) {
        CHECK(dst[i] == (int64_t)root * 100000 + (int64_t)i, "line %d: dst[%zu] = %lld, expected root %d's",
              line, i, (long long)dst[i], root);
    }
}

static void scenario_asymmetric_broadcast(void)
{
    init();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    int64_t *src = aclshmem_malloc(1024 * sizeof(int64_t)), *dst = aclshmem_malloc(1024 * sizeof(int64_t));
    CHECK(src != NULL && dst != NULL, "malloc");
    for (int i = 0; i < 1024; i++) {
        src[i] = (int64_t)me * 100000 + i;
    }
    aclshmem_barrier_all();
    const size_t sizes[] = {1, 1024};
    for (int k = 0; k < 2; k++) {
        size_t m = sizes[k];
        /* every member names the next one: nobody acts as a root for anybody */
        CHECK_RC(aclshmem_int64_broadcast(ACLSHMEM_TEAM_WORLD, dst, src, m, (me + 1) % n), ACLSHMEM_INVALID_PARAM);
        aclshmem_barrier_all();
        CHECK_RC(aclshmem_int64_broadcast(ACLSHMEM_TEAM_WORLD, dst, src, m, n - 1), 0);
        check_bcast(dst, m, n - 1, __LINE__);

        /* PE 1 believes it is the root, everybody else names PE 0; then 256 well-formed calls (the
           mismatch shows when the buffer of that call is reused, at most a ring's depth later: 16,
           32 or 128 calls) */
        aclshmem_team_t t = ACLSHMEM_TEAM_INVALID;
        CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), 0);
        int failed = 0;
        for (int call = 0; call <= 256; call++) {
            int root = (call == 0 && me == 1) ? 1 : 0;
            memset(dst, 0xff, m * sizeof(int64_t));
            int rc = aclshmem_int64_broadcast(t, dst, src, m, root);
            if (rc == ACLSHMEM_INVALID_PARAM) {
                failed++;
            } else {
                CHECK_RC(rc, 0);
                check_bcast(dst, m, root, __LINE__);
            }
        }
        CHECK(failed >= 1, "%zu elements: the asymmetric broadcast was never reported on this PE", m);
        aclshmem_barrier_all();
        /* releasing the team does not wait for readers that will never come */
        aclshmem_team_destroy(t);
        aclshmem_barrier_all();
        CHECK_RC(aclshmem_int64_broadcast(ACLSHMEM_TEAM_WORLD, dst, src, m, 0), 0);
        check_bcast(dst, m, 0, __LINE__);
    }
    aclshmem_free(dst);
    aclshmem_free(src);
    finish();
}

/* Collectives whose members pass different lengths (member 1 one length, the others another):
   on the same ring, on the two rings, on a ring and the barrier path, both on the barrier path.
   Every member of an fcollect, alltoall or reduction fails with ACLSHMEM_INVALID_PARAM; in a
   broadcast every member whose length differs from the root's does. Nothing is written outside
   any member's dest (canaries after each dest and in a buffer allocated after it), and the team
   works afterwards. Run once per algorithm setting. */
static int asym_canaries_ok(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != 0xAB) {
            return 0;
        }
    }
    return 1;
}

/* The team still works after an asymmetric call: an fcollect and an int64 sum on `t` (8 elements
   each, `a` and `b` symmetric, `b` of 8 * n) return every member's data (`base` makes each
   round's values its own; `after` names the call before, for a failure). */
static void team_works(aclshmem_team_t t, int64_t *a, int64_t *b, int64_t base, const char *after)
{
    const int me = aclshmem_team_my_pe(t), n = aclshmem_team_n_pes(t);
    for (int i = 0; i < 8; i++) {
        a[i] = (int64_t)me * 1000 + i + base;
    }
    CHECK_RC(aclshmem_fcollectmem(t, b, a, 8 * sizeof(int64_t)), 0);
    for (int p = 0; p < n; p++) {
        for (int i = 0; i < 8; i++) {
            CHECK(b[p * 8 + i] == (int64_t)p * 1000 + i + base, "fcollect after %s: b[%d]", after, p * 8 + i);
        }
    }
    CHECK_RC(aclshmem_int64_sum_reduce(t, b, a, 8), 0);
    CHECK(b[0] == (int64_t)n * (n - 1) / 2 * 1000 + (int64_t)n * base, "sum after %s", after);
}

/* One collective of `fam` (0 fcollect, 1 alltoall, 2 int64 sum, 3 broadcast from `root`) over `len`
   bytes per member (per block) on `t`; returns its code. */
static int family_call(int fam, aclshmem_team_t t, unsigned char *dst, unsigned char *src, size_t len, int root)
{
    switch (fam) {
        case 0: return aclshmem_fcollectmem(t, dst, src, len);
        case 1: return aclshmem_alltoallmem(t, dst, src, len);
        case 2: return aclshmem_int64_sum_reduce(t, (int64_t *)dst, (int64_t *)src, len / 8);
        default: return aclshmem_broadcastmem(t, dst, src, len, root);
    }
}

static void scenario_asymmetric_lengths(void)
{
    const int families = 5;
    init();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    CHECK(n >= 2, "needs 2 PEs");
    enum { MAXLEN = 8192, SLACK = 4096 };
    const size_t room = (size_t)MAXLEN * n + SLACK;
    unsigned char *src = aclshmem_malloc((size_t)MAXLEN * n);
    unsigned char *dst = aclshmem_malloc(room);
    unsigned char *victim = aclshmem_malloc(SLACK);
    int64_t *a = aclshmem_malloc(8 * sizeof(int64_t)), *b = aclshmem_malloc(8 * sizeof(int64_t) * n);
    CHECK(src && dst && victim && a && b, "malloc");
    memset(src, me + 1, (size_t)MAXLEN * n);
    const size_t pairs[][2] = {{48, 32}, {128, 64}, {2048, 64}, {64, 2048}, {4096, 2048}, {8192, 4096}};
    const char *fams[] = {"fcollect", "alltoall", "sum", "broadcast0", "broadcast1"};
    for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
        for (int f = 0; f < families; f++) {
            const size_t len = me == 1 ? pairs[k][0] : pairs[k][1];
            const size_t used = f <= 1 ? len * n : len;
            memset(dst, 0, used);
            memset(dst + used, 0xAB, room - used);
            memset(victim, 0xAB, SLACK);
            aclshmem_barrier_all();
            const int root = f >= 3 ? f - 3 : 0;
            /* in a broadcast, members with the root's length may succeed: the root's data reached
               them */
            const int must_fail = f < 3 || (me == 1) != (root == 1);
            const int rc = family_call(f < 3 ? f : 3, ACLSHMEM_TEAM_WORLD, dst, src, len, root);
            if (must_fail) {
                CHECK(rc == ACLSHMEM_INVALID_PARAM, "%s of %zu (member 1: %zu) returned %d, expected %d",
                      fams[f], len, pairs[k][0], rc, ACLSHMEM_INVALID_PARAM);
            } else {
                CHECK(rc == 0 || rc == ACLSHMEM_INVALID_PARAM, "%s of %zu returned %d", fams[f], len, rc);
            }
            /* late writes would land after the call: everybody is out of it after this barrier */
            aclshmem_barrier_all();
            CHECK(asym_canaries_ok(dst + used, room - used), "%s of %zu (member 1: %zu): written past dest",
                  fams[f], len, pairs[k][0]);
            CHECK(asym_canaries_ok(victim, SLACK), "%s of %zu (member 1: %zu): another buffer written", fams[f],
                  len, pairs[k][0]);
            team_works(ACLSHMEM_TEAM_WORLD, a, b, (int64_t)k * 10 + f, fams[f]);
        }
    }
    aclshmem_free(b);
    aclshmem_free(a);
    aclshmem_free(victim);
    aclshmem_free(dst);
    aclshmem_free(src);
    finish();
}

/* asymmetric_types [first [last]]: reductions whose members name different element types of one
   byte length (int32 and float sums, int64 and int32 sums, uint64 and int64 max, double and int64
   sums) on the world team, members `first` to `last` (default 1 to `first`) naming the other type
   (a whole node of a multi-node job: its leader's partial is of the other type): on the rings (16 and 512 bytes),
   on the barrier path (8 KiB) and larger (64 and 256 KiB: across nodes, the leaders' pushed and
   mailed exchanges). Every member's call fails with ACLSHMEM_INVALID_PARAM (no member combines
   another's bits as its own type), nothing is written past any dest, and the team works
   afterwards. */
static int typed_reduce(int ty, aclshmem_team_t t, void *dst, void *src, size_t bytes)
{
    switch (ty) {
        case 0: return aclshmem_int32_sum_reduce(t, dst, src, bytes / 4);
        case 1: return aclshmem_float_sum_reduce(t, dst, src, bytes / 4);
        case 2: return aclshmem_int64_sum_reduce(t, dst, src, bytes / 8);
        case 3: return aclshmem_double_sum_reduce(t, dst, src, bytes / 8);
        case 4: return aclshmem_uint64_max_reduce(t, dst, src, bytes / 8);
        default: return aclshmem_int64_max_reduce(t, dst, src, bytes / 8);
    }
}

static void scenario_asymmetric_types(int argc, char **argv)
{
    init();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    const int odd = argc > 2 ? atoi(argv[2]) : 1, last = argc > 3 ? atoi(argv[3]) : odd;
    CHECK(n >= 2 && odd >= 0 && odd <= last && last < n && last - odd < n - 1, "needs 2 PEs and members below %d",
          n);
    enum { MAXLEN = 256 * 1024, SLACK = 4096 };
    unsigned char *src = aclshmem_malloc(MAXLEN), *dst = aclshmem_malloc(MAXLEN + SLACK);
    int64_t *a = aclshmem_malloc(8 * sizeof(int64_t)), *b = aclshmem_malloc(8 * sizeof(int64_t) * n);
    CHECK(src && dst && a && b, "malloc");
    memset(src, 0x11 * (me + 1), MAXLEN);
    const int pairs[][2] = {{0, 1}, {2, 0}, {4, 5}, {3, 2}};
    const char *names[] = {"int32 sum", "float sum", "int64 sum", "double sum", "uint64 max", "int64 max"};
    const size_t lens[] = {16, 512, 8192, 64 * 1024, MAXLEN};
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
        for (size_t p = 0; p < sizeof(pairs) / sizeof(pairs[0]); p++) {
            const int ty = pairs[p][me >= odd && me <= last];
            memset(dst, 0xAB, MAXLEN + SLACK);
            aclshmem_barrier_all();
            const int rc = typed_reduce(ty, ACLSHMEM_TEAM_WORLD, dst, src, lens[k]);
            CHECK(rc == ACLSHMEM_INVALID_PARAM, "%s of %zu bytes (member %d: %s) returned %d, expected %d", names[ty],
                  lens[k], odd, names[pairs[p][1]], rc, ACLSHMEM_INVALID_PARAM);
            aclshmem_barrier_all();
            CHECK(asym_canaries_ok(dst + lens[k], SLACK), "%s of %zu bytes: written past dest", names[ty], lens[k]);
            team_works(ACLSHMEM_TEAM_WORLD, a, b, (int64_t)k * 10 + (int64_t)p, names[ty]);
        }
    }
    aclshmem_free(b);
    aclshmem_free(a);
    aclshmem_free(dst);
    aclshmem_free(src);
    finish();
}

/* asymmetric_families: every ordered pair of fcollect, alltoall, int64 sum reduction and collect,
   one member (which one varies) making the second while the others make the first, of 64 bytes
   (the rings, or one member per node's pushed exchanges) and 8 KiB (the barrier path, or the
   leaders' agreement and mailed partials): every member fails with ACLSHMEM_INVALID_PARAM, nothing
   is written past any dest, the team works afterwards. (Broadcasts are left out: across nodes a
   broadcast against another family waits, as documented.) */
static int family4_call(int fam, aclshmem_team_t t, unsigned char *dst, unsigned char *src, size_t len)
{
    if (fam == 3) {
        return aclshmem_collectmem(t, dst, src, len);
    }
    return family_call(fam, t, dst, src, len, 0);
}

static void scenario_asymmetric_families(void)
{
    init();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    CHECK(n >= 2, "needs 2 PEs");
    enum { MAXLEN = 8192, SLACK = 4096 };
    const size_t room = (size_t)MAXLEN * n + SLACK;
    unsigned char *src = aclshmem_malloc((size_t)MAXLEN * n), *dst = aclshmem_malloc(room);
    int64_t *a = aclshmem_malloc(8 * sizeof(int64_t)), *b = aclshmem_malloc(8 * sizeof(int64_t) * n);
    CHECK(src && dst && a && b, "malloc");
    memset(src, me + 1, (size_t)MAXLEN * n);
    const char *fams[] = {"fcollect", "alltoall", "sum", "collect"};
    const size_t lens[] = {64, MAXLEN};
    int round = 0;
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
        for (int f = 0; f < 4; f++) {
            for (int g = 0; g < 4; g++) {
                if (f == g) {
                    continue;
                }
                const int who = round++ % n;
                const int mine = me == who ? g : f;
                memset(dst, 0, room);
                memset(dst + (size_t)MAXLEN * n, 0xAB, SLACK);
                aclshmem_barrier_all();
                const int rc = family4_call(mine, ACLSHMEM_TEAM_WORLD, dst, src, lens[k]);
                CHECK(rc == ACLSHMEM_INVALID_PARAM, "%s of %zu (member %d: %s) returned %d, expected %d", fams[mine],
                      lens[k], who, fams[g], rc, ACLSHMEM_INVALID_PARAM);
                aclshmem_barrier_all();
                CHECK(asym_canaries_ok(dst + (size_t)MAXLEN * n, SLACK), "%s of %zu: written past dest", fams[mine],
                      lens[k]);
                team_works(ACLSHMEM_TEAM_WORLD, a, b, round, fams[mine]);
            }
        }
    }
    aclshmem_free(b);
    aclshmem_free(a);
    aclshmem_free(dst);
    aclshmem_free(src);
    finish();
}

/* bcast_against_family (one PE per node, whose small broadcasts are eager): member 0 broadcasts
   8 bytes on a team of every PE while the others make an fcollect (then a reduction, then an
   alltoall). The eager broadcast has no agreement: its root returns 0 and the others are a call
   behind. Member 0's next call of their family must not pair with theirs (it did, and both
   returned 0 with the other call's data): both fail with ACLSHMEM_INVALID_PARAM and nothing lands
   in the others' dest. With ACLSHMEM_COLLECTIVE_TIMEOUT set, a broadcast on the team then: the
   others reach it as the broadcast they missed and must not take its data (they time out). The
   team is then destroyed (which waits for no call) and a new one works; a broadcast on it
   delivers its own data. */
static void scenario_bcast_against_family(void)
{
    init();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    CHECK(n >= 2, "needs 2 PEs");
    int64_t *src = aclshmem_malloc(8 * sizeof(int64_t) * n), *dst = aclshmem_malloc(8 * sizeof(int64_t) * n);
    int64_t *a = aclshmem_malloc(8 * sizeof(int64_t)), *b = aclshmem_malloc(8 * sizeof(int64_t) * n);
    CHECK(src && dst && a && b, "malloc");
    const char *fams[] = {"fcollect", "alltoall", "sum"};
    for (int f = 0; f < 3; f++) {
        aclshmem_team_t t;
        CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), 0);
        for (int i = 0; i < 8 * n; i++) {
            src[i] = 1000 * (me + 1) + i;
            dst[i] = -1;
        }
        aclshmem_barrier_all();
        if (me == 0) {
            CHECK_RC(aclshmem_broadcastmem(t, dst, src, 8, 0), 0);
            /* its next call of the others' family meets theirs as another of the team's calls */
            for (int i = 0; i < 8 * n; i++) {
                src[i] = 5000 + i;
            }
            const int rc = family_call(f, t, (unsigned char *)dst, (unsigned char *)src, 8, 0);
            CHECK(rc == ACLSHMEM_INVALID_PARAM, "%s after the broadcast returned %d", fams[f], rc);
        } else {
            const int rc = family_call(f, t, (unsigned char *)dst, (unsigned char *)src, 8, 0);
            CHECK(rc == ACLSHMEM_INVALID_PARAM, "%s against the broadcast returned %d", fams[f], rc);
            for (int i = 0; i < 8 * n; i++) {
                CHECK(dst[i] < 5000, "%s against the broadcast took member 0's next call's data (dst[%d] %lld)", fams[f],
                      i, (long long)dst[i]);
            }
        }
        if (f == 0 && getenv("ACLSHMEM_COLLECTIVE_TIMEOUT") != NULL) {
            /* a broadcast now: the others, a call behind, reach it as their first broadcast, whose
               data (member 0's 1000) wait in their buffers; they must not take them (they time out) */
            src[0] = 4242;
            dst[0] = -1;
            const int rc = aclshmem_broadcastmem(t, dst, src, 8, 0);
            if (me == 0) {
                CHECK(rc == 0, "the root's broadcast returned %d", rc);
                /* outside the library until the others' waits have timed out, so its own next
                   waits for them stay within the timeout */
                sleep(atoi(getenv("ACLSHMEM_COLLECTIVE_TIMEOUT")) + 1);
            } else {
                CHECK(rc != 0 && dst[0] == -1, "a broadcast a call behind returned %d with %lld", rc, (long long)dst[0]);
            }
        }
        aclshmem_team_destroy(t);
        aclshmem_barrier_all();
        CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), 0);
        team_works(t, a, b, f, fams[f]);
        src[0] = 777 + f;
        dst[0] = 0;
        CHECK_RC(aclshmem_broadcastmem(t, dst, src, 8, 0), 0);
        CHECK(me == 0 || dst[0] == 777 + f, "a broadcast on the new team delivered %lld", (long long)dst[0]);
        aclshmem_team_destroy(t);
        aclshmem_barrier_all();
    }
    aclshmem_free(b);
    aclshmem_free(a);
    aclshmem_free(dst);
    aclshmem_free(src);
    finish();
}

/* Destroys `t` (unless ACLSHMEM_TEAM_INVALID), frees the four buffers and finishes the scenario. */
static void free_and_finish(aclshmem_team_t t, void *src, void *dst, void *a, void *b)
{
    if (t != ACLSHMEM_TEAM_INVALID) {
        aclshmem_team_destroy(t);
    }
    aclshmem_free(b);
    aclshmem_free(a);
    aclshmem_free(dst);
    aclshmem_free(src);
    finish();
}

/* bcast_root_against_barrier [world]: a member that is not the root waits in a barrier of the team
   while the others make a broadcast (8 B and 512 B: the rings, whose root waits for nobody; 8 KiB:
   the barrier path); then the others call the barrier, which lets it out. The broadcast returns 0
   or ACLSHMEM_INVALID_PARAM (where the root waits for that member), but the member must not stay
   a call behind: the team's next broadcast delivers its own data to every member (the member
   used to receive the missed broadcast's data), and an fcollect and a reduction work. */
static void scenario_bcast_root_against_barrier(int argc, char **argv)
{
    const int world = argc > 2 && strcmp(argv[2], "world") == 0;
    init();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    CHECK(n >= 2, "needs 2 PEs");
    enum { BIG = 8192 };
    unsigned char *src = aclshmem_malloc(BIG), *dst = aclshmem_malloc(BIG);
    int64_t *a = aclshmem_malloc(8 * sizeof(int64_t)), *b = aclshmem_malloc(8 * sizeof(int64_t) * n);
    CHECK(src && dst && a && b, "malloc");
    aclshmem_team_t t = ACLSHMEM_TEAM_WORLD;
    if (!world) {
        CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), 0);
    }
    const size_t lens[] = {8, 512, BIG};
    int round = 0;
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        for (int who = 1; who < n; who++) {
            const size_t len = lens[k];
            memset(src, 0x10 + round, len);
            memset(dst, 0, len);
            aclshmem_barrier_all();
            if (me == who) {
                aclshmem_barrier(t);
            } else {
                const int rc = aclshmem_broadcastmem(t, dst, src, len, 0);
                CHECK(rc == 0 || rc == ACLSHMEM_INVALID_PARAM, "broadcast of %zu against a barrier returned %d", len,
                      rc);
                aclshmem_barrier(t);
            }
            /* the next broadcast delivers its own data everywhere */
            memset(src, 0x80 + round, len);
            memset(dst, 0, len);
            CHECK_RC(aclshmem_broadcastmem(t, dst, src, len, 0), 0);
            for (size_t i = 0; me != 0 && i < len; i++) {
                if (dst[i] != (unsigned char)(0x80 + round)) {
                    CHECK(0, "broadcast of %zu after the barrier (member %d in it): byte %zu is %#x, expected %#x", len,
                          who, i, dst[i], 0x80 + round);
                    break;
                }
            }
            team_works(t, a, b, round, "a broadcast against a barrier");
            round++;
        }
    }
    free_and_finish(world ? ACLSHMEM_TEAM_INVALID : t, src, dst, a, b);
}

/* barrier_against_collective: on a team of every PE, member 0 (then members 0 and 1, with 3 PEs or
   more) calls a team barrier while the others make a collective call in which they wait for member
   0 (fcollect, alltoall, sum reduction and broadcast from member 0; on the rings and on the barrier
   path). The others' call fails with ACLSHMEM_INVALID_PARAM instead of waiting for ever, they then
   call the barrier, which lets the members in it out (their barrier counts the call as made and
   failed), and the team's next calls match again: an fcollect and a reduction return every
   member's data. Option "last": the last members instead of the first (the broadcast's root the
   last member). */
static void scenario_barrier_against_collective(int argc, char **argv)
{
    /* "last": the last members wait in the barrier instead of the first (across nodes: a member
       that does not lead its node, then a whole node that is not the first) */
    const int last = argc > 2 && strcmp(argv[2], "last") == 0;
    init();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    CHECK(n >= 2, "needs 2 PEs");
    enum { BIG = 8192 };
    unsigned char *src = aclshmem_malloc((size_t)BIG * n), *dst = aclshmem_malloc((size_t)BIG * n);
    int64_t *a = aclshmem_malloc(8 * sizeof(int64_t)), *b = aclshmem_malloc(8 * sizeof(int64_t) * n);
    CHECK(src && dst && a && b, "malloc");
    memset(src, me + 1, (size_t)BIG * n);
    aclshmem_team_t t = ACLSHMEM_TEAM_INVALID;
    CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), 0);
    const char *fams[] = {"fcollect", "alltoall", "sum", "broadcast"};
    const size_t lens[] = {64, BIG};
    for (int nb = 1; nb <= (n >= 3 ? 2 : 1); nb++) {
        for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
            for (int f = 0; f < 4; f++) {
                const size_t len = lens[k];
                aclshmem_barrier_all();
                if (last ? me >= n - nb : me < nb) {
                    aclshmem_barrier(t);
                } else {
                    const int rc = family_call(f, t, dst, src, len, last ? n - 1 : 0);
                    CHECK(rc == ACLSHMEM_INVALID_PARAM, "%s of %zu against a barrier returned %d, expected %d", fams[f],
                          len, rc, ACLSHMEM_INVALID_PARAM);
                    aclshmem_barrier(t);
                }
                /* the team's calls match again */
                team_works(t, a, b, (int64_t)k * 10 + f, fams[f]);
            }
        }
    }
    aclshmem_team_destroy(t);
    /* the world team: barrier_all against a reduction, then the world's calls match again */
    aclshmem_barrier_all();
    if (me == (last ? n - 1 : 0)) {
        aclshmem_barrier_all();
    } else {
        int rc = aclshmem_int64_sum_reduce(ACLSHMEM_TEAM_WORLD, (int64_t *)dst, (int64_t *)src, 8);
        CHECK(rc == ACLSHMEM_INVALID_PARAM, "world reduction against barrier_all returned %d", rc);
        aclshmem_barrier_all();
    }
    team_works(ACLSHMEM_TEAM_WORLD, a, b, 0, "barrier_all against a reduction");
    aclshmem_free(b);
    aclshmem_free(a);
    aclshmem_free(dst);
    aclshmem_free(src);
    finish();
}

/* soak <seed> <calls> [world|high]: well-formed calls only, on a split team of every PE (or the
   world team; "high": a team made after 9 others, in a slot past the wide ones, whose areas are
   smaller): fcollect, alltoall, collect (every member another length), broadcast from any root, int64
   sum and int32 max reductions, of lengths on both sides of every threshold of their paths (ring
   payloads, eager broadcasts, exact tags, mail parts, the leaders' pushed, mailed and read
   partials) up to 1 MiB per member, each with data that depends on the member, the position and
   the call; every member checks every byte of its dest and that nothing past it was written. */
static uint64_t g_soak;

static uint32_t soak_next(void)
{
    g_soak = g_soak * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(g_soak >> 33);
}

static unsigned char soak_byte(int pe, size_t i, int c)
{
    return (unsigned char)(pe * 31 + i * 7 + (size_t)c * 13 + (i >> 8));
}

static int64_t soak_i64(int pe, size_t k, int c)
{
    return (int64_t)pe * 1000003 + (int64_t)k * 7 - (int64_t)c * 11;
}

static int32_t soak_i32(int pe, size_t k, int c)
{
    return (int32_t)(((uint32_t)pe * 7919u + (uint32_t)k * 31u + (uint32_t)c * 17u) % 100003u) - 50000;
}

static void scenario_soak(int argc, char **argv)
{
    init();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    g_soak = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
    const int calls = argc > 3 ? atoi(argv[3]) : 100;
    const int world = argc > 4 && strcmp(argv[4], "world") == 0;
    const int high = argc > 4 && strcmp(argv[4], "high") == 0;
    aclshmem_team_t others[9];
    for (int k = 0; k < (high ? 9 : 0); k++) {
        CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &others[k]), 0);
    }
    enum { MAXLEN = (1 << 20) + 64, SLACK = 256 };
    const size_t room = (size_t)MAXLEN * n + SLACK;
    unsigned char *src = aclshmem_malloc((size_t)MAXLEN * n), *dst = aclshmem_malloc(room);
    CHECK(src && dst, "malloc");
    aclshmem_team_t t = ACLSHMEM_TEAM_WORLD;
    if (!world) {
        CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), 0);
    }
    static const size_t sizes[] = {0,     1,     7,     8,     9,      63,     64,     65,     127,
                                   128,   129,   511,   512,   513,    1023,   1024,   1025,   2047,
                                   2048,  4088,  4095,  4096,  4097,   8191,   8192,   16384,  32768,
                                   65528, 65535, 65536, 65544, 131072, 131080, 262144, 524288, 524296,
                                   1048576};
    const int ns = (int)(sizeof sizes / sizeof sizes[0]);
    static const char *names[] = {"fcollect", "alltoall", "collect", "broadcast", "int64 sum", "int32 max"};
    for (int c = 0; c < calls; c++) {
        const int fam = (int)(soak_next() % 6);
        size_t len = sizes[soak_next() % ns];
        const int root = (int)(soak_next() % n);
        if (fam == 4) {
            len &= ~(size_t)7;
        } else if (fam == 5) {
            len &= ~(size_t)3;
        }
        /* collect: member p contributes len + 8 p bytes (at most MAXLEN) */
        size_t mine = len, used = len;
        if (fam == 2) {
            used = 0;
            for (int p = 0; p < n; p++) {
                const size_t lp = len + 8 * (size_t)p < MAXLEN ? len + 8 * (size_t)p : MAXLEN;
                if (p == me) {
                    mine = lp;
                }
                used += lp;
            }
        } else if (fam <= 1) {
            used = len * n;
        }
        const size_t filled = fam == 1 ? len * n : mine;
        for (size_t i = 0; i < filled; i++) {
            src[i] = soak_byte(me, i, c);
        }
        if (fam == 4) {
            for (size_t k = 0; k < len / 8; k++) {
                ((int64_t *)src)[k] = soak_i64(me, k, c);
            }
        } else if (fam == 5) {
            for (size_t k = 0; k < len / 4; k++) {
                ((int32_t *)src)[k] = soak_i32(me, k, c);
            }
        }
        memset(dst, 0xEE, used + SLACK);
        aclshmem_barrier_all();
        int rc;
        switch (fam) {
            case 0: rc = aclshmem_fcollectmem(t, dst, src, len); break;
            case 1: rc = aclshmem_alltoallmem(t, dst, src, len); break;
            case 2: rc = aclshmem_collectmem(t, dst, src, mine); break;
            case 3: rc = aclshmem_broadcastmem(t, dst, src, len, root); break;
            case 4: rc = aclshmem_int64_sum_reduce(t, (int64_t *)dst, (int64_t *)src, len / 8); break;
            default: rc = aclshmem_int32_max_reduce(t, (int32_t *)dst, (int32_t *)src, len / 4); break;
        }
        CHECK(rc == 0, "call %d: %s of %zu (root %d) returned %d", c, names[fam], len, root, rc);
        size_t bad = (size_t)-1;
        switch (fam) {
            case 0:
                for (size_t i = 0; i < used && bad == (size_t)-1; i++) {
                    if (dst[i] != soak_byte((int)(i / len), i % len, c)) bad = i;
                }
                break;
            case 1:
                for (size_t i = 0; i < used && bad == (size_t)-1; i++) {
                    if (dst[i] != soak_byte((int)(i / len), (size_t)me * len + i % len, c)) bad = i;
                }
                break;
            case 2: {
                size_t off = 0;
                for (int p = 0; p < n && bad == (size_t)-1; p++) {
                    const size_t lp = len + 8 * (size_t)p < MAXLEN ? len + 8 * (size_t)p : MAXLEN;
                    for (size_t i = 0; i < lp; i++) {
                        if (dst[off + i] != soak_byte(p, i, c)) {
                            bad = off + i;
                            break;
                        }
                    }
                    off += lp;
                }
                break;
            }
            case 3:
                for (size_t i = 0; i < len && bad == (size_t)-1; i++) {
                    if (dst[i] != soak_byte(root, i, c)) bad = i;
                }
                break;
            case 4:
                for (size_t k = 0; k < len / 8 && bad == (size_t)-1; k++) {
                    int64_t want = 0;
                    for (int p = 0; p < n; p++) want += soak_i64(p, k, c);
                    if (((int64_t *)dst)[k] != want) bad = k * 8;
                }
                break;
            default:
                for (size_t k = 0; k < len / 4 && bad == (size_t)-1; k++) {
                    int32_t want = soak_i32(0, k, c);
                    for (int p = 1; p < n; p++) {
                        const int32_t v = soak_i32(p, k, c);
                        want = v > want ? v : want;
                    }
                    if (((int32_t *)dst)[k] != want) bad = k * 4;
                }
                break;
        }
        CHECK(bad == (size_t)-1, "call %d: %s of %zu (root %d): wrong byte at %zu", c, names[fam], len, root, bad);
        for (size_t i = used; i < used + SLACK; i++) {
            CHECK(dst[i] == 0xEE, "call %d: %s of %zu: written past dest (byte %zu)", c, names[fam], len, i);
        }
    }
    if (!world) {
        aclshmem_team_destroy(t);
    }
    for (int k = 0; k < (high ? 9 : 0); k++) {
        aclshmem_team_destroy(others[k]);
    }
    aclshmem_free(dst);
    aclshmem_free(src);
    finish();
}

/* asymmetric_mix <seed> <calls> [world] [nobarrier] [nobcastfamily] [eager]: a reproducible random mix of well-formed and asymmetric calls on a
   team of every PE: fcollect, alltoall, sum reduction and broadcast (root 0 or any), 8 B to 8 KiB
   (both rings and the barrier path), each either made alike by every member, or with one member
   naming another length, or another family, or another root, or with one member in a team barrier
   instead. Every call returns 0 or ACLSHMEM_INVALID_PARAM as documented (well-formed calls 0;
   fcollect, alltoall and reductions against another length or another of these families, and
   calls that wait for the member in the barrier, INVALID_PARAM), nothing is written past any
   member's dest, and after each call an fcollect on the team returns every member's data. The
   documented exceptions, after which the team is made anew: members naming different roots, and
   a broadcast from a root that did not wait for the member in the barrier (the rings), which
   leaves that member a call behind. */
static uint64_t g_mix;

static uint32_t mix_next(void)
{
    g_mix = g_mix * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(g_mix >> 33);
}

static void scenario_asymmetric_mix(int argc, char **argv)
{
    init();
    const int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    g_mix = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
    const int calls = argc > 3 ? atoi(argv[3]) : 100;
    enum { MAXLEN = 8192, SLACK = 256 };
    const size_t room = (size_t)MAXLEN * n + SLACK;
    unsigned char *src = aclshmem_malloc((size_t)MAXLEN * n), *dst = aclshmem_malloc(room);
    int64_t *a = aclshmem_malloc(8 * sizeof(int64_t)), *b = aclshmem_malloc(8 * sizeof(int64_t) * n);
    CHECK(src && dst && a && b, "malloc");
    memset(src, me + 1, (size_t)MAXLEN * n);
    /* options after the count: "world", the world team (its deeper rings), which cannot be made
       anew, so the calls after which a team is made anew are made alike there; "nobarrier", no
       member in a barrier instead */
    int world = 0, nobarrier = 0, nobcastfamily = 0, eager = 0;
    for (int k = 4; k < argc; k++) {
        world |= strcmp(argv[k], "world") == 0;
        nobarrier |= strcmp(argv[k], "nobarrier") == 0;
        /* "nobcastfamily": no member makes a broadcast where the others make another family, or
           the other way round (across nodes with one member per node, whose small broadcasts are
           eager, such a call waits, as documented) */
        nobcastfamily |= strcmp(argv[k], "nobcastfamily") == 0;
        /* "eager": one member per node, whose small broadcasts are eager: after a broadcast of
           another length the team's later small broadcasts fail, as documented, so the team is
           made anew (on the world team such calls are made alike) */
        eager |= strcmp(argv[k], "eager") == 0;
    }
    aclshmem_team_t t = ACLSHMEM_TEAM_WORLD;
    if (!world) {
        CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), 0);
    }
    static const size_t lens[] = {8, 32, 64, 128, 512, 1024, 2048, 4096, 8192};
    const int nl = (int)(sizeof lens / sizeof lens[0]);
    for (int c = 0; c < calls; c++) {
        const int fam = (int)(mix_next() % 5); /* fcollect, alltoall, sum, broadcast from 0, from any */
        const size_t len = lens[mix_next() % nl];
        /* alike, another length, a barrier instead, another family, another root */
        int kind = (int)(mix_next() % 5);
        const int fam2 = (fam + 1 + (int)(mix_next() % 3)) % 4;
        const int who = (int)(mix_next() % n);
        const size_t len2 = lens[mix_next() % nl];
        const int root = fam == 4 ? (int)(mix_next() % n) : 0;
        if ((kind == 1 && len2 == len) || (kind == 4 && fam < 3) || (kind == 2 && nobarrier) ||
            (kind == 3 && nobcastfamily && (fam >= 3 || fam2 >= 3)) || (world && eager && kind == 1 && fam >= 3) ||
            (world && (kind == 4 || (kind == 2 && fam >= 3 && root != who)))) {
            kind = 0;
        }
        const size_t mine = (kind == 1 && me == who) ? len2 : len;
        const int my_fam = (kind == 3 && me == who) ? fam2 : fam;
        const int my_root = (kind == 4 && me == who) ? (root + 1) % n : root;
        const size_t used = (fam <= 1 || my_fam <= 1) ? mine * n : mine;
        memset(dst, 0, used);
        memset(dst + used, 0xAB, room - used);
        aclshmem_barrier_all();
        if (kind == 2 && me == who) {
            aclshmem_barrier(t);
        } else {
            const int rc = family_call(my_fam, t, dst, src, mine, my_root);
            const char *what = fam == 0 ? "fcollect" : fam == 1 ? "alltoall" : fam == 2 ? "sum" : "broadcast";
            if (kind == 0) {
                CHECK(rc == 0, "call %d: %s of %zu returned %d", c, what, len, rc);
            } else if (kind == 2) {
                CHECK(rc == ACLSHMEM_INVALID_PARAM || (fam >= 3 && root != who && rc == 0),
                      "call %d: %s of %zu (root %d) against member %d's barrier returned %d", c, what, len, root, who,
                      rc);
                aclshmem_barrier(t);
            } else {
                CHECK(rc == 0 || rc == ACLSHMEM_INVALID_PARAM, "call %d: %s of %zu (kind %d, member %d) returned %d",
                      c, what, len, kind, who, rc);
                CHECK(kind != 1 || fam >= 3 || rc != 0, "call %d: %s of %zu (member %d: %zu) succeeded", c, what, len,
                      who, len2);
                CHECK(kind != 3 || fam >= 3 || fam2 >= 3 || rc != 0, "call %d: %s against family %d of member %d succeeded",
                      c, what, fam2, who);
            }
        }
        aclshmem_barrier_all();
        CHECK(asym_canaries_ok(dst + used, room - used), "call %d: written past dest (family %d, kind %d)", c, fam,
              kind);
        if ((kind == 2 && fam >= 3 && root != who) || kind == 4 || (eager && kind == 1 && fam >= 3)) {
            aclshmem_team_destroy(t);
            CHECK_RC(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), 0);
        }
        char after[96];
        snprintf(after, sizeof after, "call %d (family %d, kind %d, member %d)", c, fam, kind, who);
        team_works(t, a, b, c, after);
    }
    free_and_finish(world ? ACLSHMEM_TEAM_INVALID : t, src, dst, a, b);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fprintf(stderr, "usage: %s <scenario> [options]\n", argv[0]);
        return 2;
    }
    g_scenario = argv[1];
    g_pe = env_int("ACLSHMEM_MY_PE");
    g_npes = env_int("ACLSHMEM_N_PES");

    if (strcmp(argv[1], "splits") == 0) {
        scenario_splits();
    } else if (strcmp(argv[1], "translate_matrix") == 0) {
        scenario_translate_matrix();
    } else if (strcmp(argv[1], "many_teams") == 0) {
        scenario_many_teams();
    } else if (strcmp(argv[1], "team_barrier_phases") == 0) {
        scenario_team_barrier_phases();
    } else if (strcmp(argv[1], "collectives") == 0) {
        scenario_collectives(argc, argv);
    } else if (strcmp(argv[1], "bad_input") == 0) {
        scenario_bad_input();
    } else if (strcmp(argv[1], "asymmetric") == 0) {
        scenario_asymmetric();
    } else if (strcmp(argv[1], "asymmetric_broadcast") == 0) {
        scenario_asymmetric_broadcast();
    } else if (strcmp(argv[1], "asymmetric_lengths") == 0) {
        scenario_asymmetric_lengths();
    } else if (strcmp(argv[1], "bcast_root_against_barrier") == 0) {
        scenario_bcast_root_against_barrier(argc, argv);
    } else if (strcmp(argv[1], "bcast_against_family") == 0) {
        scenario_bcast_against_family();
    } else if (strcmp(argv[1], "asymmetric_families") == 0) {
        scenario_asymmetric_families();
    } else if (strcmp(argv[1], "asymmetric_types") == 0) {
        scenario_asymmetric_types(argc, argv);
    } else if (strcmp(argv[1], "barrier_against_collective") == 0) {
        scenario_barrier_against_collective(argc, argv);
    } else if (strcmp(argv[1], "soak") == 0) {
        scenario_soak(argc, argv);
    } else if (strcmp(argv[1], "asymmetric_mix") == 0) {
        scenario_asymmetric_mix(argc, argv);
    } else if (strcmp(argv[1], "bad_algo") == 0) {
        scenario_bad_algo(argc, argv);
    } else {
        fail("unknown scenario");
    }
    return 0;
}
