/* Single-process probe of the logging contract (spec 8.8), driven by tests/logging.rs.
 * argv[1] selects the check; exits 0 when it holds. Errors are provoked by calling
 * aclshmem_malloc before init (which logs "not initialised"). */
#include <stdio.h>
#include <string.h>
#include "shmem.h"

static int calls_a, calls_b, saw_level_error;
static char last_msg[512];

static void logger_a(int level, const char *msg) {
    calls_a++;
    if (level == 3) saw_level_error = 1;
    snprintf(last_msg, sizeof last_msg, "%s", msg);
}
static void logger_b(int level, const char *msg) {
    (void)level; (void)msg;
    calls_b++;
}

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "";
    if (strcmp(what, "extern") == 0) {
        if (aclshmemx_set_extern_logger(logger_a) != 0) return 2;
        if (aclshmemx_set_extern_logger(logger_b) != 0) return 3; /* ignored: first one wins */
        if (aclshmemx_set_log_level(4) != 0) return 4;            /* extern logger ignores the level */
        if (aclshmem_malloc(16) != NULL) return 5;
        if (calls_a == 0 || calls_b != 0 || !saw_level_error) return 6;
        if (strncmp(last_msg, "[SHM_SHMEM ", 11) != 0 || strstr(last_msg, "aclshmem_malloc") == NULL) return 7;
        return 0;
    }
    if (strcmp(what, "levels") == 0) {
        if (aclshmemx_set_log_level(-1) != ACLSHMEM_INVALID_VALUE) return 2;
        if (aclshmemx_set_log_level(5) != ACLSHMEM_INVALID_VALUE) return 3;
        for (int l = 0; l <= 4; l++)
            if (aclshmemx_set_log_level(l) != 0) return 4;
        return 0;
    }
    if (strcmp(what, "error") == 0) { /* one error line, at the level given in argv[2] */
        int level = argc > 2 ? argv[2][0] - '0' : 3;
        if (aclshmemx_set_log_level(level) != 0) return 2;
        if (aclshmem_malloc(16) != NULL) return 3;
        fflush(stdout);
        return 0;
    }
    return 99;
}
