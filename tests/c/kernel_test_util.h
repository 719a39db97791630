/*
 * kernel_test_util.h - what the kernel test programs of tests/kernels.rs share (kernel_tests.cpp,
 * kernel_ub_tests.cpp, simt_tests.cpp): failure reporting and the main that sets up ACL and the
 * library, runs one scenario named by argv[1] and prints "OK <scenario>" when nothing failed.
 */
#ifndef ACLSHMEM_KERNEL_TEST_UTIL_H
#define ACLSHMEM_KERNEL_TEST_UTIL_H

#include <cstdio>
#include <cstdlib>
#include <string>

#include "acl/acl.h"
#include "shmem.h"

static int g_errors = 0;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            if (g_errors++ < 20) {                                                         \
                std::printf("FAIL: [PE %d] %s:%d: ", aclshmem_my_pe(), __FILE__, __LINE__); \
                std::printf(__VA_ARGS__);                                                  \
                std::printf("\n");                                                         \
            }                                                                              \
        }                                                                                  \
    } while (0)

#define ACL_OK(call)                                                                        \
    do {                                                                                    \
        aclError ret_ = (call);                                                             \
        if (ret_ != ACL_SUCCESS) {                                                          \
            std::printf("FAIL: %s:%d: %s returned %d\n", __FILE__, __LINE__, #call, ret_); \
            std::exit(1);                                                                   \
        }                                                                                   \
    } while (0)

/* Region r of dst (n elements from dst + r * n) holds PE from(r)'s pattern: element i is
   from(r) * scale + i. One failure message per region with the first wrong element. */
template <typename From>
static void check_pattern_regions(const int32_t *dst, int regions, int n, int scale, From from)
{
    for (int r = 0; r < regions; r++) {
        const int pe = from(r);
        int bad = 0;
        for (int i = 0; i < n; i++) {
            if (dst[r * n + i] != pe * scale + i && bad++ == 0) {
                CHECK(false, "region %d element %d is %d, expected %d", r, i, dst[r * n + i], pe * scale + i);
            }
        }
        CHECK(bad == 0, "region %d: %d elements wrong", r, bad);
    }
}

/* ACL on device (PE % 16), a stream, aclshmem from the environment; then
   run(scenario, stream, attr), which returns false for a scenario it does not know; then a
   barrier, finalize and the ACL teardown. */
template <typename Run>
static int kernel_test_main(int argc, char **argv, const char *program, Run run)
{
    if (argc < 2) {
        std::printf("FAIL: usage: %s SCENARIO\n", program);
        return 2;
    }
    std::string scenario = argv[1];
    const char *pe_env = std::getenv("ACLSHMEM_MY_PE");
    int32_t device = pe_env != nullptr ? std::atoi(pe_env) % 16 : 0;
    ACL_OK(aclInit(nullptr));
    ACL_OK(aclrtSetDevice(device));
    aclrtStream stream = nullptr;
    ACL_OK(aclrtCreateStream(&stream));
    aclshmemx_init_attr_t attr;
    int attr_rc = aclshmemx_set_attr_from_env(&attr);
    /* the data engines to choose at init (a data_op_engine_type mask), for the state checks */
    if (const char *engines = std::getenv("KERNEL_TEST_ENGINES")) {
        attr.option_attr.data_op_engine_type = static_cast<data_op_engine_type_t>(std::strtol(engines, nullptr, 0));
    }
    if (attr_rc != 0 || aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr) != 0) {
        std::printf("FAIL: init\n");
        return 1;
    }
    if (!run(scenario, stream, attr)) {
        std::printf("FAIL: unknown scenario %s\n", scenario.c_str());
        return 2;
    }
    aclshmem_barrier_all();
    if (aclshmem_finalize() != 0) {
        std::printf("FAIL: finalize\n");
        g_errors++;
    }
    ACL_OK(aclrtDestroyStream(stream));
    ACL_OK(aclrtResetDevice(device));
    ACL_OK(aclFinalize());
    if (g_errors == 0) {
        std::printf("OK %s\n", scenario.c_str());
    }
    return g_errors == 0 ? 0 : 1;
}

#endif
