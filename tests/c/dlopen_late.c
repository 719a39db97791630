/*
 * dlopen_late.c - the library loaded with dlopen after libraries that took most of glibc's static
 * TLS room (argv[1]: a directory with libfill1.so .. libfill6.so, each with 256 bytes of
 * initial-exec TLS; argv[2]: libaclshmem.so). The library must load (it needed 408 bytes of static
 * TLS and was refused) and work through the pointers dlsym gives, from the main thread and from
 * a second one: init, puts, gets, barriers, finalize. PE 0 prints `OK dlopen_late`.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <shmem.h>

#define FAIL(...) (printf("FAIL: " __VA_ARGS__), printf("\n"), exit(1))

static __typeof__(aclshmem_int32_g) *g_get;
static __typeof__(aclshmem_int32_p) *g_put;
static __typeof__(aclshmem_barrier_all) *g_barrier;
static int32_t *g_word;
static int g_me, g_n;

static void *second(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        int32_t v = g_get(g_word, (g_me + 1) % g_n);
        if (v != 100 + (g_me + 1) % g_n) FAIL("second thread read %d from PE %d", (int)v, (g_me + 1) % g_n);
    }
    return NULL;
}

#define SYM(var, name)                                                                                \
    do {                                                                                                \
        *(void **)&(var) = dlsym(lib, name);                                                            \
        if ((var) == NULL) FAIL("dlsym(%s): %s", name, dlerror());                                      \
    } while (0)

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 3) FAIL("usage: dlopen_late FILL_DIR LIBACLSHMEM");
    for (int i = 1; i <= 6; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/libfill%d.so", argv[1], i);
        if (dlopen(path, RTLD_NOW | RTLD_LOCAL) == NULL) FAIL("dlopen(%s): %s", path, dlerror());
    }
    void *lib = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) FAIL("dlopen(%s): %s", argv[2], dlerror());
    __typeof__(aclshmemx_set_attr_from_env) *from_env;
    __typeof__(aclshmemx_init_attr) *init;
    __typeof__(aclshmem_my_pe) *my_pe;
    __typeof__(aclshmem_n_pes) *n_pes;
    __typeof__(aclshmem_malloc) *alloc;
    __typeof__(aclshmem_free) *release;
    __typeof__(aclshmem_finalize) *finalize;
    SYM(from_env, "aclshmemx_set_attr_from_env");
    SYM(init, "aclshmemx_init_attr");
    SYM(my_pe, "aclshmem_my_pe");
    SYM(n_pes, "aclshmem_n_pes");
    SYM(alloc, "aclshmem_malloc");
    SYM(release, "aclshmem_free");
    SYM(finalize, "aclshmem_finalize");
    SYM(g_get, "aclshmem_int32_g");
    SYM(g_put, "aclshmem_int32_p");
    SYM(g_barrier, "aclshmem_barrier_all");
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    from_env(&attr);
    attr.local_mem_size = 16 << 20;
    int rc = init(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
    if (rc != 0) FAIL("init returned %d", rc);
    g_me = my_pe();
    g_n = n_pes();
    g_word = alloc(sizeof(int32_t));
    if (g_word == NULL) FAIL("malloc");
    g_put(g_word, 100 + g_me, g_me);
    g_barrier();
    pthread_t th;
    if (pthread_create(&th, NULL, second, NULL) != 0) FAIL("pthread_create");
    for (int i = 0; i < 1000; i++) {
        int32_t v = g_get(g_word, (g_me + g_n - 1) % g_n);
        if (v != 100 + (g_me + g_n - 1) % g_n) FAIL("read %d", (int)v);
    }
    pthread_join(th, NULL);
    g_barrier();
    release(g_word);
    rc = finalize();
    if (rc != 0) FAIL("finalize returned %d", rc);
    if (g_me == 0) printf("OK dlopen_late\n");
    return 0;
}
