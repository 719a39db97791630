/*
 * device_simt/shmem_device_simt.h - the SIMT device API of the CPU device mode of libaclshmem (spec
 * device-api section 3), namespace simt, enabled by USE_SIMT (device/shmem_device.h includes it).
 * The headers at the original include paths (device_simt/gm2gm/..., device_simt/ub2gm/...,
 * device_simt/team/..., device_simt/shmem_simt_common_types.h, device_simt/shmemi_device_simt_common.h)
 * all lead here.
 *
 * Every put/get (any scope, blocking or _nbi, GM or UB local side) is one operation (spec 3.4): the
 * scope's threads split [0, count) with stride = group size and copy element by element through
 * the peer's address (aclshmem_ptr; when a PE has no load/store mapping, each element goes through
 * the host aclshmem_putmem/getmem instead). _block and _warp calls run asc_syncthreads() before and
 * after. Scopes: thread (index 0 of 1), _warp (linear id % warpSize of min(threads, warpSize)),
 * _block (linear id of all threads of the asc_vf_call).
 *
 * GM and UB forms have the same C++ signature here (__gm__ and, with g++, __ubuf__ are empty), so
 * each pair is one function: a local operand below 192 KiB is a UB offset of the calling block
 * (the block that ran asc_vf_call), any other value an ordinary address (a GM buffer, or a
 * __ubuf__ local array of the SIMT function, which lives on the SIMT thread's stack).
 *
 * Spec defects: S1 - the sized GM _block/_warp functions are declared under their correct names
 * (aclshmemx_put8_block ...), which upstream code calls; the misnamed aclshmemx_putBITS_block
 * declarations are not reproduced (never defined upstream, so no program can use them). S2 - the
 * four team functions beyond my_pe/n_pes are declared (team/shmem_device_simt_team.h). S4 - the
 * type list is the SIMT one: char means signed char and unsigned char, no double. S5 - SIMT uses
 * the calling process's current instance (the host one), not a per-block instance.
 * Written for this project, not the original's headers.
 */
#ifndef ACLSHMEM_DEVICE_SIMT_SHMEM_DEVICE_SIMT_H
#define ACLSHMEM_DEVICE_SIMT_SHMEM_DEVICE_SIMT_H

#include "../simt_api/asc_simt.h"

#if ACLSHMEM_UB_DEREF
#error "SIMT kernels need __ubuf__ as a plain qualifier: build them with g++ or -DACLSHMEM_UB_DEREF=0"
#endif
#include "../shmem.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

/* the SIMT twin of the device-state record (spec 1.8.2): the same fields and offsets, every
   pointer-typed field a uint64_t */
typedef struct {
    int version;
    int mype;
    int npes;
    uint64_t heap_base;
    uint64_t host_heap_base;
    uint64_t p2p_device_heap_base;
    uint64_t rdma_device_heap_base;
    uint64_t sdma_device_heap_base;
    uint64_t p2p_host_heap_base;
    uint64_t rdma_host_heap_base;
    uint64_t sdma_host_heap_base;
    uint8_t topo_list[ACLSHMEM_MAX_PES];
    size_t heap_size;
    uint64_t team_pools[ACLSHMEM_MAX_TEAMS];
    uint64_t sync_pool;
    uint64_t sync_counter;
    uint64_t core_sync_pool;
    uint64_t core_sync_counter;
    bool is_aclshmem_initialized;
    bool is_aclshmem_created;
    aclshmem_mte_config_t mte_config;
    aclshmem_sdma_config_t sdma_config;
    aclshmem_rdma_config_t rdma_config;
    aclshmem_udma_config_t udma_config;
    uint64_t qp_info;
    uint64_t sdma_workspace_addr;
    uint64_t profs;
    uint64_t signal_addr;
} aclshmem_device_host_state_simt_t;
static_assert(sizeof(aclshmem_device_host_state_simt_t) == sizeof(aclshmem_device_host_state_t),
              "the SIMT state twin has the record's size");
static_assert(offsetof(aclshmem_device_host_state_simt_t, p2p_device_heap_base) ==
                      offsetof(aclshmem_device_host_state_t, p2p_device_heap_base) &&
                  offsetof(aclshmem_device_host_state_simt_t, team_pools) ==
                      offsetof(aclshmem_device_host_state_t, team_pools) &&
                  offsetof(aclshmem_device_host_state_simt_t, profs) == offsetof(aclshmem_device_host_state_t, profs),
              "the SIMT state twin has the record's offsets");

namespace aclshmemi_simt {

struct scope {
    uint32_t idx;
    uint32_t size;
};
inline scope thread_scope()
{
    return {0, 1};
}
inline scope block_scope()
{
    return {linear_id(), thread_count()};
}
inline scope warp_scope()
{
    return {linear_id() % uint32_t(warpSize), std::min(thread_count(), uint32_t(warpSize))};
}

constexpr uintptr_t UB_SIZE = 192 * 1024;

/* a local operand of `bytes` bytes: a UB offset of the calling block, or an ordinary address */
inline unsigned char *local(const void *p, size_t bytes, const char *what)
{
    uintptr_t v = reinterpret_cast<uintptr_t>(p);
    if (v >= UB_SIZE) {
        return static_cast<unsigned char *>(const_cast<void *>(p));
    }
    void *ub = ub_base();
    if (ub == nullptr) {
        throw std::invalid_argument(std::string(what) + ": UB offset used outside a kernel block");
    }
    if (bytes > UB_SIZE - v) {
        throw std::out_of_range(std::string(what) + ": UB span [" + std::to_string(v) + ", +" +
                                std::to_string(bytes) + ") ends beyond the 192 KiB UB");
    }
    return static_cast<unsigned char *>(ub) + v;
}

/* the scope's share of copying n elements of esz bytes from the local operand to `remote` on pe
   (put) or back (get) */
inline void copy(bool put, void *remote, const void *local_op, size_t n, size_t esz, int pe, scope s,
                 const char *what)
{
    if (n == 0) {
        return;
    }
    if (n > SIZE_MAX / esz) {
        throw std::out_of_range(std::string(what) + ": element count overflows");
    }
    unsigned char *l = local(local_op, n * esz, what);
    unsigned char *r = static_cast<unsigned char *>(::aclshmem_ptr(remote, pe));
    unsigned char *sym = static_cast<unsigned char *>(remote);
    for (size_t i = s.idx; i < n; i += s.size) {
        if (r != nullptr) {
            if (put) {
                std::memcpy(r + i * esz, l + i * esz, esz);
            } else {
                std::memcpy(l + i * esz, r + i * esz, esz);
            }
        } else if (put) {
            ::aclshmem_putmem(sym + i * esz, l + i * esz, esz, pe);
        } else {
            ::aclshmem_getmem(l + i * esz, sym + i * esz, esz, pe);
        }
    }
}

/* a group-scope copy: asc_syncthreads() before and after */
inline void copy_sync(bool put, void *remote, const void *local_op, size_t n, size_t esz, int pe, scope s,
                      const char *what)
{
    asc_syncthreads();
    copy(put, remote, local_op, n, esz, pe, s, what);
    asc_syncthreads();
}

}  // namespace aclshmemi_simt

namespace simt {

/* the current instance's device-state record, as the SIMT twin */
__simt_callee__ inline __gm__ aclshmem_device_host_state_simt_t *aclshmemi_get_state(void)
{
    return reinterpret_cast<aclshmem_device_host_state_simt_t *>(aclshmemx_dev_state());
}
__simt_callee__ inline int aclshmemi_get_my_pe(void)
{
    return ::aclshmemi_get_my_pe();
}
__simt_callee__ inline int aclshmemi_get_total_pe(void)
{
    return ::aclshmemi_get_total_pe();
}
__simt_callee__ inline uint64_t aclshmemi_get_heap_size(void)
{
    return ::aclshmemi_get_heap_size();
}

__simt_callee__ inline __gm__ void *aclshmem_ptr(__gm__ void *ptr, int pe)
{
    return ::aclshmem_ptr(ptr, pe);
}

__simt_callee__ inline int aclshmem_my_pe(void)
{
    return ::aclshmem_my_pe();
}
__simt_callee__ inline int aclshmem_n_pes(void)
{
    return ::aclshmem_n_pes();
}
__simt_callee__ inline int aclshmem_team_my_pe(aclshmem_team_t team)
{
    return ::aclshmem_team_my_pe(team);
}
__simt_callee__ inline int aclshmem_team_n_pes(aclshmem_team_t team)
{
    return ::aclshmem_team_n_pes(team);
}
__simt_callee__ inline int aclshmem_team_translate_pe(aclshmem_team_t src_team, int src_pe,
                                                      aclshmem_team_t dest_team)
{
    return ::aclshmem_team_translate_pe(src_team, src_pe, dest_team);
}
__simt_callee__ inline int aclshmem_team_pe_mapping(aclshmem_team_t team, int pe)
{
    return ::aclshmem_team_pe_mapping(team, pe);
}

/* ---- the MTE engine templates (GM and UB local operand) ---- */
#define ACLSHMEMI_SIMT_MTE(SUFFIX, SCOPE, COPY)                                                                \
    template <typename T>                                                                                    \
    __simt_callee__ inline void aclshmemx_mte_put_nbi##SUFFIX(__gm__ T *dst, __gm__ T *src, size_t elem_size, \
                                                               int pe)                                       \
    {                                                                                                        \
        aclshmemi_simt::COPY(true, dst, src, elem_size, sizeof(T), pe, aclshmemi_simt::SCOPE(),              \
                             "simt::aclshmemx_mte_put_nbi" #SUFFIX);                                         \
    }                                                                                                        \
    template <typename T>                                                                                    \
    __simt_callee__ inline void aclshmemx_mte_get_nbi##SUFFIX(__gm__ T *dst, __gm__ T *src, size_t elem_size, \
                                                               int pe)                                       \
    {                                                                                                        \
        aclshmemi_simt::COPY(false, src, dst, elem_size, sizeof(T), pe, aclshmemi_simt::SCOPE(),             \
                             "simt::aclshmemx_mte_get_nbi" #SUFFIX);                                         \
    }
ACLSHMEMI_SIMT_MTE(, thread_scope, copy)
ACLSHMEMI_SIMT_MTE(_block, block_scope, copy_sync)
ACLSHMEMI_SIMT_MTE(_warp, warp_scope, copy_sync)
#undef ACLSHMEMI_SIMT_MTE

/* ---- one put/get family: OP is put or get, the name is PREFIX##MID##OP##NBI##SUFFIX ---- */
#define ACLSHMEMI_SIMT_XFER(NAME, PUT, TYPE, ESZ, SCOPE, COPY)                                              \
    __simt_callee__ inline void NAME(__gm__ TYPE *dst, __gm__ TYPE *src, size_t elem_size, int32_t pe)       \
    {                                                                                                        \
        if (PUT) {                                                                                           \
            aclshmemi_simt::COPY(true, dst, src, elem_size, ESZ, pe, aclshmemi_simt::SCOPE(), "simt::" #NAME); \
        } else {                                                                                             \
            aclshmemi_simt::COPY(false, src, dst, elem_size, ESZ, pe, aclshmemi_simt::SCOPE(), "simt::" #NAME); \
        }                                                                                                    \
    }

/* the 12 scope x blocking/_nbi x put/get forms of one name stem */
#define ACLSHMEMI_SIMT_FORMS(PRE, POST, TYPE, ESZ)                                                        \
    ACLSHMEMI_SIMT_XFER(aclshmem_##PRE##put##POST, true, TYPE, ESZ, thread_scope, copy)                  \
    ACLSHMEMI_SIMT_XFER(aclshmemx_##PRE##put##POST##_block, true, TYPE, ESZ, block_scope, copy_sync)     \
    ACLSHMEMI_SIMT_XFER(aclshmemx_##PRE##put##POST##_warp, true, TYPE, ESZ, warp_scope, copy_sync)       \
    ACLSHMEMI_SIMT_XFER(aclshmem_##PRE##get##POST, false, TYPE, ESZ, thread_scope, copy)                 \
    ACLSHMEMI_SIMT_XFER(aclshmemx_##PRE##get##POST##_block, false, TYPE, ESZ, block_scope, copy_sync)    \
    ACLSHMEMI_SIMT_XFER(aclshmemx_##PRE##get##POST##_warp, false, TYPE, ESZ, warp_scope, copy_sync)      \
    ACLSHMEMI_SIMT_XFER(aclshmem_##PRE##put##POST##_nbi, true, TYPE, ESZ, thread_scope, copy)            \
    ACLSHMEMI_SIMT_XFER(aclshmemx_##PRE##put##POST##_nbi_block, true, TYPE, ESZ, block_scope, copy_sync) \
    ACLSHMEMI_SIMT_XFER(aclshmemx_##PRE##put##POST##_nbi_warp, true, TYPE, ESZ, warp_scope, copy_sync)   \
    ACLSHMEMI_SIMT_XFER(aclshmem_##PRE##get##POST##_nbi, false, TYPE, ESZ, thread_scope, copy)           \
    ACLSHMEMI_SIMT_XFER(aclshmemx_##PRE##get##POST##_nbi_block, false, TYPE, ESZ, block_scope, copy_sync) \
    ACLSHMEMI_SIMT_XFER(aclshmemx_##PRE##get##POST##_nbi_warp, false, TYPE, ESZ, warp_scope, copy_sync)

/* the SIMT type list (spec 3.2): 13 entries, 12 names, no double, char = signed and unsigned char */
#define ACLSHMEMI_SIMT_TYPE_FUNC(FUNC) \
    FUNC(half, half)                   \
    FUNC(float, float)                 \
    FUNC(int8, int8_t)                 \
    FUNC(int16, int16_t)               \
    FUNC(int32, int32_t)               \
    FUNC(int64, int64_t)               \
    FUNC(uint8, uint8_t)               \
    FUNC(uint16, uint16_t)             \
    FUNC(uint32, uint32_t)             \
    FUNC(uint64, uint64_t)             \
    FUNC(char, signed char)            \
    FUNC(char, unsigned char)          \
    FUNC(bfloat16, bfloat16_t)

/* typed: aclshmem_int32_put, aclshmemx_int32_put_nbi_block, ..., plus p and g */
#define ACLSHMEMI_SIMT_TYPED(NAME, TYPE)                                                      \
    ACLSHMEMI_SIMT_FORMS(NAME##_, , TYPE, sizeof(TYPE))                                      \
    __simt_callee__ inline void aclshmem_##NAME##_p(__gm__ TYPE *dst, const TYPE value, int pe) \
    {                                                                                        \
        TYPE *r = static_cast<TYPE *>(::aclshmem_ptr(dst, pe));                              \
        if (r != nullptr) {                                                                  \
            asc_stwt(r, value);                                                              \
        } else {                                                                             \
            TYPE v = value;                                                                  \
            ::aclshmem_putmem(dst, &v, sizeof(TYPE), pe);                                    \
        }                                                                                    \
    }                                                                                        \
    __simt_callee__ inline TYPE aclshmem_##NAME##_g(__gm__ TYPE *src, int32_t pe)              \
    {                                                                                        \
        TYPE *r = static_cast<TYPE *>(::aclshmem_ptr(src, pe));                              \
        if (r != nullptr) {                                                                  \
            return asc_ldca(r);                                                              \
        }                                                                                    \
        TYPE v;                                                                              \
        ::aclshmem_getmem(&v, src, sizeof(TYPE), pe);                                        \
        return v;                                                                            \
    }
ACLSHMEMI_SIMT_TYPE_FUNC(ACLSHMEMI_SIMT_TYPED)
#undef ACLSHMEMI_SIMT_TYPED

/* sized (elements of BITS/8 bytes; 128 moves 16-byte int4 vectors): aclshmem_put8 ...
   aclshmemx_get128_nbi_warp, and bytes: aclshmem_putmem ... aclshmemx_getmem_nbi_warp */
ACLSHMEMI_SIMT_FORMS(, 8, void, 1)
ACLSHMEMI_SIMT_FORMS(, 16, void, 2)
ACLSHMEMI_SIMT_FORMS(, 32, void, 4)
ACLSHMEMI_SIMT_FORMS(, 64, void, 8)
ACLSHMEMI_SIMT_FORMS(, 128, void, sizeof(int4))
ACLSHMEMI_SIMT_FORMS(, mem, void, 1)

#undef ACLSHMEMI_SIMT_FORMS
#undef ACLSHMEMI_SIMT_XFER

}  // namespace simt

#endif
