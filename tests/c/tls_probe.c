/* Config-store TLS, driven by tests/tls.rs. Each PE reads its settings from the environment:
 *   TLS_INFO_<pe> or TLS_INFO   -> aclshmemx_set_conf_store_tls(1, info, len)   (unset: TLS off)
 *   TLS_KEY_<pe> or TLS_KEY     -> PEM file whose text goes to aclshmemx_set_config_store_tls_key
 *                                  (TLS_KEY_<pe> only for the PE's own settings, TLS_KEY also on
 *                                  the retry; "-" gives an empty key: none); unset: key from tls_info
 *   TLS_PW_<pe>                 -> its password; TLS_PW_VIA_HANDLER=1 passes it reversed through a
 *                                  decrypt handler that reverses it back
 *   FIRST_RC_<pe>               -> this PE's first init must return that code; it then retries with
 *                                  TLS_INFO (the shared, good settings) and must succeed
 *   RC_<pe>                     -> expected code of this PE's (final) init instead of argv[1]
 *   TLS_INIT_TIMEOUT, TLS_OP_TIMEOUT -> shm_init_timeout and control_operation_timeout (20, 30 s)
 * argv[1] = expected code of the (final) init on every PE, normally 0. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "shmem.h"

static int me;

static const char *pe_env(const char *name) {
    char key[128];
    snprintf(key, sizeof key, "%s_%d", name, me);
    return getenv(key);
}

static int reverse_handler(const char *cipher, size_t len, char *plain, size_t *plain_len) {
    if (*plain_len < len + 1) return -1;
    for (size_t i = 0; i < len; i++) plain[i] = cipher[len - 1 - i];
    plain[len] = 0;
    *plain_len = len;
    return 0;
}

static char key_text[16384], pw_text[256];

static int configure(const char *info, int own_key) {
    if (!info) return aclshmemx_set_conf_store_tls(0, NULL, 0);
    int rc = aclshmemx_set_conf_store_tls(1, info, (uint32_t)strlen(info));
    if (rc) return rc;
    const char *keyfile = own_key ? pe_env("TLS_KEY") : NULL;
    if (!keyfile) keyfile = getenv("TLS_KEY");
    if (!keyfile || strcmp(keyfile, "-") == 0)
        return aclshmemx_set_config_store_tls_key("", 0, NULL, 0, NULL); /* key from tls_info, or none */
    {
        FILE *f = fopen(keyfile, "r");
        if (!f) return 99;
        size_t n = fread(key_text, 1, sizeof key_text - 1, f);
        fclose(f);
        key_text[n] = 0;
        const char *pw = pe_env("TLS_PW");
        aclshmem_decrypt_handler h = NULL;
        size_t pwlen = pw ? strlen(pw) : 0;
        if (pw) {
            if (getenv("TLS_PW_VIA_HANDLER")) {
                for (size_t i = 0; i < pwlen; i++) pw_text[i] = pw[pwlen - 1 - i];
                h = reverse_handler;
            } else {
                memcpy(pw_text, pw, pwlen);
            }
        }
        rc = aclshmemx_set_config_store_tls_key(key_text, (uint32_t)n, pw ? pw_text : NULL, (uint32_t)pwlen, h);
    }
    return rc;
}

static int init(void) {
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    if (aclshmemx_set_attr_from_env(&attr)) return 98;
    const char *init_timeout = getenv("TLS_INIT_TIMEOUT"), *op_timeout = getenv("TLS_OP_TIMEOUT");
    attr.option_attr.shm_init_timeout = init_timeout ? atoi(init_timeout) : 20;
    attr.option_attr.control_operation_timeout = op_timeout ? atoi(op_timeout) : 30;
    return aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
}

int main(int argc, char **argv) {
    int expect = argc > 1 ? atoi(argv[1]) : 0;
    me = atoi(getenv("ACLSHMEM_MY_PE"));
    if (pe_env("RC")) expect = atoi(pe_env("RC"));
    const char *first = pe_env("FIRST_RC");
    const char *info = pe_env("TLS_INFO") ? pe_env("TLS_INFO") : getenv("TLS_INFO");
    if (first) {
        if (strcmp(info ? info : "", "off") == 0) info = NULL;
        int rc = configure(info, 1);
        if (rc == 0) rc = init();
        printf("PE %d first init: %d\n", me, rc);
        if (rc != atoi(first)) { printf("FAIL: first init returned %d, expected %s (pe %d)\n", rc, first, me); return 1; }
        if (rc == 0) aclshmem_finalize();
        info = getenv("TLS_INFO"); /* retry with the shared, good settings */
    }
    int rc = configure(info, !first);
    if (rc == 0) rc = init();
    printf("PE %d init: %d\n", me, rc);
    if (rc != expect) { printf("FAIL: init returned %d, expected %d (pe %d)\n", rc, expect, me); return 1; }
    if (rc == 0) {
        int n = aclshmem_n_pes();
        int *x = (int *)aclshmem_malloc(sizeof(int));
        *(int *)aclshmem_ptr(x, (me + 1) % n) = me;
        aclshmem_barrier_all();
        if (*x != (me + n - 1) % n) { printf("FAIL: ring (pe %d)\n", me); return 1; }
        aclshmem_free(x);
        if (aclshmem_finalize() != 0) { printf("FAIL: finalize (pe %d)\n", me); return 1; }
    }
    if (me == 0) printf("OK tls\n");
    return 0;
}
