/*
 * cpp_defaults.cpp - what a C++ caller gets without spelling anything out.
 *
 * Start it with the launcher, e.g.  aclshmrun -n 2 ./cpp_defaults
 *
 * In C++ the header gives aclshmemx_init_attr_t member initialisers (empty ip_port, timeouts of 120 s,
 * MTE engine, comm_args == nullptr, instance_id == 0) and the heap functions a default argument
 * mem_type = DEVICE_SIDE, exactly like the original CANN SHMEM headers. This program relies on both.
 * Exits non-zero and prints "FAIL: ..." on any error.
 */
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "shmem.h"

static_assert(sizeof(aclshmemx_init_attr_t) == 120, "aclshmemx_init_attr_t must be 120 bytes");
static_assert(sizeof(aclshmem_init_optional_attr_t) == 24, "aclshmem_init_optional_attr_t must be 24 bytes");

namespace {

int g_pe = -1;

[[noreturn]] void fail(const char *fmt, ...)
{
    std::va_list ap;
    std::fprintf(stderr, "FAIL: [cpp_defaults, PE %d] ", g_pe);
    va_start(ap, fmt);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fputc('\n', stderr);
    std::fflush(nullptr);
    std::exit(1);
}

bool in_range(const void *p, const void *base, std::uint64_t size)
{
    auto a = reinterpret_cast<std::uintptr_t>(p);
    auto b = reinterpret_cast<std::uintptr_t>(base);
    return base != nullptr && a >= b && static_cast<std::uint64_t>(a - b) < size;
}

void check_defaults(const aclshmemx_init_attr_t &attr)
{
    const aclshmem_init_optional_attr_t &opt = attr.option_attr;
    for (char c : attr.ip_port) {
        if (c != '\0') {
            fail("default ip_port is not all zero");
        }
    }
    const int expected_version = (1 << 16) + static_cast<int>(sizeof(aclshmem_init_optional_attr_t));
    if (opt.version != expected_version) {
        fail("default option_attr.version = %d, expected %d", opt.version, expected_version);
    }
    if (opt.data_op_engine_type != ACLSHMEM_DATA_OP_MTE) {
        fail("default data_op_engine_type = %d, expected ACLSHMEM_DATA_OP_MTE",
             static_cast<int>(opt.data_op_engine_type));
    }
    if (opt.shm_init_timeout != 120) {
        fail("default shm_init_timeout = %u, expected 120", opt.shm_init_timeout);
    }
    if (opt.shm_create_timeout != 120) {
        fail("default shm_create_timeout = %u, expected 120", opt.shm_create_timeout);
    }
    if (opt.control_operation_timeout != 120) {
        fail("default control_operation_timeout = %u, expected 120", opt.control_operation_timeout);
    }
    if (opt.sockFd != 0) {
        fail("default sockFd = %d, expected 0", opt.sockFd);
    }
    if (attr.comm_args != nullptr) {
        fail("default comm_args is not nullptr");
    }
    if (attr.instance_id != 0) {
        fail("default instance_id = %llu, expected 0", static_cast<unsigned long long>(attr.instance_id));
    }
}

} // namespace

int main()
{
    aclshmemx_init_attr_t attr; // member initialisers supply the defaults
    check_defaults(attr);

    int ret = aclshmemx_set_attr_from_env(&attr);
    if (ret != 0) {
        fail("aclshmemx_set_attr_from_env returned %d (run this program through aclshmrun)", ret);
    }
    g_pe = attr.my_pe;
    ret = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
    if (ret != 0) {
        fail("aclshmemx_init_attr returned %d", ret);
    }
    const int me = aclshmem_my_pe();
    const int npes = aclshmem_n_pes();
    const std::uint64_t heap_span = attr.local_mem_size + static_cast<std::uint64_t>(ACLSHMEM_EXTRA_SIZE);

    // default argument: DEVICE_SIDE
    void *base = aclshmemx_get_heap_base();
    if (base == nullptr || base != aclshmemx_get_heap_base(DEVICE_SIDE)) {
        fail("aclshmemx_get_heap_base() = %p differs from aclshmemx_get_heap_base(DEVICE_SIDE) = %p",
             base, aclshmemx_get_heap_base(DEVICE_SIDE));
    }

    void *p = aclshmemx_malloc(1024);
    if (p == nullptr) {
        fail("aclshmemx_malloc(1024) returned nullptr");
    }
    if (!in_range(p, base, heap_span)) {
        fail("aclshmemx_malloc(1024) = %p is outside the device heap [%p, +%llu)", p, base,
             static_cast<unsigned long long>(heap_span));
    }

    auto *zeroed = static_cast<std::uint64_t *>(aclshmemx_calloc(16, sizeof(std::uint64_t)));
    if (zeroed == nullptr || !in_range(zeroed, base, heap_span)) {
        fail("aclshmemx_calloc(16, 8) = %p is not a device-heap block", static_cast<void *>(zeroed));
    }
    for (int i = 0; i < 16; ++i) {
        if (zeroed[i] != 0) {
            fail("aclshmemx_calloc: element %d is not zero", i);
        }
    }

    void *aligned = aclshmemx_align(256, 64);
    if (aligned == nullptr || reinterpret_cast<std::uintptr_t>(aligned) % 256 != 0 ||
        !in_range(aligned, base, heap_span)) {
        fail("aclshmemx_align(256, 64) = %p is not a 256-aligned device-heap block", aligned);
    }

    // the neighbour sees what we wrote, through aclshmem_ptr
    auto *mine = static_cast<int *>(p);
    mine[0] = 100 + me;
    aclshmem_barrier_all();
    const int left = (me + npes - 1) % npes;
    auto *theirs = static_cast<int *>(aclshmem_ptr(p, left));
    if (theirs == nullptr || theirs[0] != 100 + left) {
        fail("PE %d's copy of the DEVICE_SIDE block holds %d, expected %d", left,
             theirs != nullptr ? theirs[0] : -1, 100 + left);
    }
    aclshmem_barrier_all();

    aclshmemx_free(aligned);
    aclshmemx_free(zeroed);
    aclshmemx_free(p);

    ret = aclshmem_finalize();
    if (ret != 0) {
        fail("aclshmem_finalize returned %d", ret);
    }
    if (me == 0) {
        std::printf("cpp_defaults: OK (%d PEs)\n", npes);
    }
    return 0;
}
