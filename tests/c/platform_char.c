/* Plain `char` is signed on x86-64 Linux and unsigned on AArch64 Linux. The `char` families must
 * compare as the platform's `char` (as the C compiler does), never as a fixed int8 or uint8: a
 * max-reduce, min-reduce and test of bytes 0xC8 and 0x64 must agree with the compiler's own `>`.
 * Run on 2 or more PEs, natively and under qemu-aarch64 (scripts/aarch64-check.sh). */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <string.h>

#include "shmem.h"
#include "test_util.h"

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    g_scenario = "platform_char";
    g_pe = env_int("ACLSHMEM_MY_PE");
#if defined(__aarch64__)
    CHECK(CHAR_MIN == 0, "char is signed on aarch64 (CHAR_MIN %d)", CHAR_MIN);
#elif defined(__x86_64__)
    CHECK(CHAR_MIN < 0, "char is unsigned on x86-64 (CHAR_MIN %d)", CHAR_MIN);
#endif
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    CHECK_RC(aclshmemx_set_attr_from_env(&attr), 0);
    attr.option_attr.shm_init_timeout = 20;
    attr.option_attr.control_operation_timeout = 20;
    CHECK_RC(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr), 0);
    int me = aclshmem_my_pe(), n = aclshmem_n_pes();
    CHECK(n >= 2, "needs 2 or more PEs, got %d", n);

    const char hi = (char)0xC8, lo = (char)0x64; /* 200 or -56, and 100 */
    const char big = hi > lo ? hi : lo, small = hi > lo ? lo : hi;
    char *buf = aclshmem_malloc(8);
    CHECK(buf != NULL, "malloc");
    buf[0] = (me % 2 == 0) ? hi : lo; /* source */
    buf[1] = buf[2] = 0;              /* max, min */
    buf[3] = 0;                       /* test ivar */
    aclshmem_barrier_all();
    CHECK_RC(aclshmem_char_max_reduce(ACLSHMEM_TEAM_WORLD, &buf[1], &buf[0], 1), 0);
    CHECK_RC(aclshmem_char_min_reduce(ACLSHMEM_TEAM_WORLD, &buf[2], &buf[0], 1), 0);
    CHECK(buf[1] == big, "char max_reduce of 0xC8 and 0x64 gave 0x%02x, the compiler says 0x%02x",
          (unsigned char)buf[1], (unsigned char)big);
    CHECK(buf[2] == small, "char min_reduce of 0xC8 and 0x64 gave 0x%02x, the compiler says 0x%02x",
          (unsigned char)buf[2], (unsigned char)small);

    /* a remote put of 0xC8, then a comparison of it against 0x64 as the platform's char */
    aclshmem_char_p(&buf[3], hi, (me + 1) % n);
    aclshmem_barrier_all();
    int gt = -1, lt = -1;
    aclshmem_char_test(&buf[3], ACLSHMEM_CMP_GT, lo, &gt);
    aclshmem_char_test(&buf[3], ACLSHMEM_CMP_LT, lo, &lt);
    CHECK(gt == (hi > lo) && lt == (hi < lo), "char_test of 0xC8 against 0x64: gt %d lt %d, the compiler says %d %d",
          gt, lt, hi > lo, hi < lo);
    CHECK(aclshmem_char_g(&buf[3], (me + 1) % n) == hi, "char_g");
    aclshmem_barrier_all();
    aclshmem_free(buf);
    CHECK_RC(aclshmem_finalize(), 0);
    if (me == 0) {
        printf("OK platform_char\n");
    }
    return 0;
}
