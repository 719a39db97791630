/* The library's SIGBUS handler (installed at shmem_init, for heap pages /dev/shm cannot back)
 * leaves every other SIGBUS to the handler the program installed before: a program that maps a
 * file and touches a page past its end gets its own handler called, as without the library.
 * Also over UCX (whose load installs handlers of its own): the other signals' dispositions are
 * the program's after shmem_init too. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "osh_util.h"

static sigjmp_buf back;
static volatile sig_atomic_t seen;
static void *volatile fault_addr;

static void on_bus(int sig, siginfo_t *info, void *ctx) {
    (void)sig;
    (void)ctx;
    seen++;
    fault_addr = info->si_addr;
    siglongjmp(back, 1);
}

/* touches a page of a mapping whose file is empty: SIGBUS; returns the handler's count after */
static int touch_past_end(void) {
    char path[] = "/tmp/sigbus_chain_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    unlink(path);
    long page = sysconf(_SC_PAGESIZE);
    volatile char *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return -1;
    if (sigsetjmp(back, 1) == 0) {
        p[0] = 1; /* the file has no page 0: SIGBUS */
    }
    int ok = fault_addr == (void *)p;
    munmap((void *)p, (size_t)page);
    return ok ? (int)seen : -2;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_bus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
    CHECK(touch_past_end() == 1, "the program's handler before shmem_init");
    /* the dispositions of the other signals a network library may take (its error and debug
     * signals), before init: they must be the same after it */
    int others[] = {SIGSEGV, SIGILL, SIGFPE, SIGHUP};
    struct sigaction before[4];
    for (int i = 0; i < 4; i++) sigaction(others[i], NULL, &before[i]);
    shmem_init();
    for (int i = 0; i < 4; i++) {
        struct sigaction now;
        sigaction(others[i], NULL, &now);
        CHECK(now.sa_handler == before[i].sa_handler, "shmem_init leaves the disposition of SIGSEGV, SIGILL, SIGFPE and SIGHUP alone");
    }
    long *x = shmem_malloc(4096);
    CHECK(x != NULL, "allocation");
    x[0] = 7; /* heap pages work */
    CHECK(touch_past_end() == 2, "the program's handler after shmem_init (chained by the library)");
    CHECK(touch_past_end() == 3, "and again");
    shmem_free(x);
    return osh_done("sigbus_chain");
}
