/* An extern logger that takes a lock of the program's own (as a Python logger takes the
 * interpreter's lock), while a program thread holds that lock across library calls (as the Python
 * package keeps the interpreter's lock across its small transfers). A library thread that called
 * such a logger while holding a lock of the library the program thread waits for would stop both
 * for ever; the library's own threads (network progress, config store, its watcher, drive helper)
 * therefore hand their messages to a relay thread ("aclshmem-log") instead of calling the logger.
 * The logger prints a FAIL line when one of the library's threads calls it.
 *   relay        each PE holds the lock around 2000 small gets and puts to its neighbour, the job
 *                ends with finalize; then every PE lists which threads called the logger
 *   global_exit  PE 0 calls aclshmem_global_exit(5) while the others hold the lock around gets
 *                from it for 3 s: each one's watcher thread logs the notice (through the relay)
 *                and ends the process with status 5
 * With ACLSHMEM_TRANSPORT=ucx the transfers go through UCX, whose progress thread logs at debug
 * level (an extern logger receives every level), also when a peer goes away. */
#define _GNU_SOURCE
#include <pthread.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "shmem.h"
#include "test_util.h"

/* recursive, as the interpreter's lock is for the thread holding it */
static pthread_mutex_t interpreter = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t table = PTHREAD_MUTEX_INITIALIZER;
enum { NAMES = 32 };
static char names[NAMES][16];
static int counts[NAMES];

static void logger(int level, const char *msg)
{
    (void)level;
    (void)msg;
    char name[16] = "";
    pthread_getname_np(pthread_self(), name, sizeof name);
    if (strcmp(name, "aclshmem-ucx") == 0 || strcmp(name, "aclshmem-store") == 0 ||
        strcmp(name, "aclshmem-watch") == 0 || strcmp(name, "aclshmem-drive") == 0) {
        char line[128];
        int len = snprintf(line, sizeof line, "FAIL: [PE %d] the library's thread \"%s\" called the extern logger\n",
                           g_pe, name);
        if (write(1, line, (size_t)len) < 0) abort();
    }
    pthread_mutex_lock(&interpreter);
    pthread_mutex_lock(&table);
    int i = 0;
    while (i < NAMES && counts[i] > 0 && strcmp(names[i], name) != 0) i++;
    if (i < NAMES) {
        snprintf(names[i], sizeof names[i], "%s", name);
        counts[i]++;
    }
    pthread_mutex_unlock(&table);
    pthread_mutex_unlock(&interpreter);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    g_scenario = argc > 1 ? argv[1] : "relay";
    CHECK(aclshmemx_set_extern_logger(logger) == 0, "set_extern_logger");
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    CHECK(aclshmemx_set_attr_from_env(&attr) == 0, "aclshmemx_set_attr_from_env failed");
    CHECK(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr) == 0, "init");
    g_pe = aclshmem_my_pe();
    int n = aclshmem_n_pes(), next = (g_pe + 1) % n;
    int64_t *word = aclshmem_calloc(8, sizeof(int64_t));
    CHECK(word != NULL, "calloc");
    aclshmem_barrier_all();
    if (strcmp(g_scenario, "global_exit") == 0) {
        if (g_pe == 0) {
            usleep(300000);
            aclshmem_global_exit(5);
        }
        pthread_mutex_lock(&interpreter);
        double until = now_s() + 3.0;
        while (now_s() < until) (void)aclshmem_int64_g(&word[0], 0);
        pthread_mutex_unlock(&interpreter);
        sleep(30); /* ended by the global exit */
        fail("the job was not ended");
    }
    pthread_mutex_lock(&interpreter);
    for (int i = 0; i < 2000; i++) {
        aclshmem_int64_p(&word[g_pe % 8], i, next);
        int64_t v = aclshmem_int64_g(&word[0], next);
        CHECK(v >= 0, "g returned %lld", (long long)v);
    }
    aclshmem_quiet();
    pthread_mutex_unlock(&interpreter);
    aclshmem_barrier_all();
    CHECK(aclshmem_finalize() == 0, "finalize");
    pthread_mutex_lock(&interpreter);
    int relayed = 0;
    for (int i = 0; i < NAMES && counts[i] > 0; i++) {
        printf("[PE %d] logger called by \"%s\": %d message(s)\n", g_pe, names[i], counts[i]);
        relayed += strcmp(names[i], "aclshmem-log") == 0 ? counts[i] : 0;
    }
    pthread_mutex_unlock(&interpreter);
    printf("[PE %d] relayed %d\n", g_pe, relayed);
    if (g_pe == 0) printf("OK %s\n", g_scenario);
    return 0;
}
