/* Helpers shared by the multi-PE C test programs (tests/c/<area>_tests.c): the scenario and PE named in
 * failure lines, fail() and the CHECK macros, a monotonic clock and launcher variables. Each
 * program sets g_scenario (argv[1]) and g_pe (ACLSHMEM_MY_PE) first. */
#ifndef ACLSHMEM_TEST_UTIL_H
#define ACLSHMEM_TEST_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static const char *g_scenario = "?";
static int g_pe = -1; /* from ACLSHMEM_MY_PE: valid before init too */

/* Prints `FAIL: <scenario>: <what> (pe N)` (the line the Rust harness looks for) and exits 1. */
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    printf("FAIL: %s: %s (pe %d)\n", g_scenario, what, g_pe);
    fflush(stdout);
    fflush(stderr);
    _exit(1);
}

#define CHECK(cond, ...)       \
    do {                       \
        if (!(cond)) {         \
            fail(__VA_ARGS__); \
        }                      \
    } while (0)

#define CHECK_RC(call, expected)                                                                  \
    do {                                                                                          \
        int rc_ = (call);                                                                         \
        if (rc_ != (expected)) {                                                                  \
            fail("%s returned %d, expected %d (line %d)", #call, rc_, (int)(expected), __LINE__); \
        }                                                                                         \
    } while (0)

static __attribute__((unused)) double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A launcher variable that must be set. */
static __attribute__((unused)) int env_int(const char *name)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') {
        fail("environment variable %s is not set (run under aclshmrun)", name);
    }
    return atoi(v);
}

#endif
