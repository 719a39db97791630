// Fragment of include/shmem.h: cbindgen's `trailer`, written after the generated declarations:
// prototypes cbindgen cannot express (C++ default arguments; checked against their Rust signatures
// by tests/fragments.rs), declaration generators and the shmem_* aliases of the original headers.
// The leading `//` lines of a fragment are notes: the header build (xtask/src/header.rs, run by
// tests/header.rs and `cargo xtask codegen`) drops them, inlines each `#include "..."` of a file
// of cbindgen/, and hands the text to cbindgen.
/* cbindgen writes the trailer after its include guard: this part has its own. */
#ifndef ACLSHMEM_SHMEM_TRAILER_H
#define ACLSHMEM_SHMEM_TRAILER_H

/* ---- heap calls with a C++ default argument (spec 8.2, section 6 C13) ---- */
#ifdef __cplusplus
extern "C" {
#endif

/**
 * aclshmem_malloc on the heap selected by mem_type (HOST_SIDE or DEVICE_SIDE; C++ default
 * DEVICE_SIDE). Collective. The HOST_SIDE heap is created by its first allocation.
 */
ACLSHMEM_HOST_API void *aclshmemx_malloc(size_t size, aclshmem_mem_type_t mem_type ACLSHMEM_DEFAULT_ARG(DEVICE_SIDE));

/** aclshmem_calloc on the heap selected by mem_type. Collective. */
ACLSHMEM_HOST_API void *aclshmemx_calloc(size_t count, size_t size,
                                         aclshmem_mem_type_t mem_type ACLSHMEM_DEFAULT_ARG(DEVICE_SIDE));

/** aclshmem_align on the heap selected by mem_type. Collective. */
ACLSHMEM_HOST_API void *aclshmemx_align(size_t alignment, size_t size,
                                        aclshmem_mem_type_t mem_type ACLSHMEM_DEFAULT_ARG(DEVICE_SIDE));

/** aclshmem_free on the heap selected by mem_type; a pointer of the other heap is logged, not freed. */
ACLSHMEM_HOST_API void aclshmemx_free(void *ptr, aclshmem_mem_type_t mem_type ACLSHMEM_DEFAULT_ARG(DEVICE_SIDE));

/**
 * This PE's base address of the heap selected by mem_type; NULL before init, after finalize, and for
 * HOST_SIDE before its first allocation.
 */
ACLSHMEM_HOST_API void *aclshmemx_get_heap_base(aclshmem_mem_type_t mem_type ACLSHMEM_DEFAULT_ARG(DEVICE_SIDE));

#ifdef __cplusplus
}
#endif

/* ---- aclshmem_finalize(instance_id): the C++ form of newer original headers (the id defaults
   to 0 there; here the call without an argument is the C aclshmem_finalize(void), which finalizes
   the current instance); with an id it finalizes that instance, as aclshmemx_finalize ---- */
#ifdef __cplusplus
inline int aclshmem_finalize(uint64_t instance_id)
{
    return aclshmemx_finalize(instance_id);
}

/* ---- aclshmemx_show_prof(out_profs, verbose): the two-argument form of earlier original headers,
   which newer ones call aclshmemx_get_prof ---- */
inline void aclshmemx_show_prof(aclshmem_prof_pe_t **out_profs, bool verbose)
{
    aclshmemx_get_prof(out_profs, verbose);
}
#endif

/* ---- p2p-sync declaration generators: the original leaves them defined (spec 3.3, 14-B23) ---- */
#define ACLSHMEM_WAIT_UNTIL(NAME, TYPE) ACLSHMEM_HOST_API void aclshmem_##NAME##_wait_until(TYPE *ivar, int cmp, TYPE cmp_value)
#define ACLSHMEM_WAIT(NAME, TYPE) ACLSHMEM_HOST_API void aclshmem_##NAME##_wait(TYPE *ivar, TYPE cmp_value)
#define ACLSHMEM_WAIT_UNTIL_ALL(NAME, TYPE) \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_wait_until_all(TYPE *ivars, size_t nelems, const int *status, int cmp, TYPE cmp_value)
#define ACLSHMEM_WAIT_UNTIL_ANY(NAME, TYPE)                                                                    \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_wait_until_any(TYPE *ivars, size_t nelems, const int *status, int cmp, \
                                                            TYPE cmp_value, size_t *res_out)
#define ACLSHMEM_WAIT_UNTIL_SOME(NAME, TYPE)                                                                  \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_wait_until_some(TYPE *ivars, size_t nelems, size_t *indices,       \
                                                             const int *status, int cmp, TYPE cmp_value, size_t *res_out)
#define ACLSHMEM_WAIT_UNTIL_ALL_VECTOR(NAME, TYPE)                                                           \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_wait_until_all_vector(TYPE *ivars, size_t nelems, const int *status, \
                                                                   int cmp, TYPE *cmp_values)
#define ACLSHMEM_WAIT_UNTIL_ANY_VECTOR(NAME, TYPE)                                                           \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_wait_until_any_vector(TYPE *ivars, size_t nelems, const int *status, \
                                                                   int cmp, TYPE *cmp_values, size_t *res_out)
#define ACLSHMEM_WAIT_UNTIL_SOME_VECTOR(NAME, TYPE)                                                          \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_wait_until_some_vector(TYPE *ivars, size_t nelems, size_t *indices, \
                                                                    const int *status, int cmp, TYPE *cmp_values, size_t *res_out)
#define ACLSHMEM_TEST(NAME, TYPE) ACLSHMEM_HOST_API void aclshmem_##NAME##_test(TYPE *ivars, int cmp, TYPE cmp_value, int *res_out)
#define ACLSHMEM_TEST_ANY(NAME, TYPE)                                                                  \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_test_any(TYPE *ivars, size_t nelems, const int *status, int cmp, \
                                                      TYPE cmp_value, size_t *res_out)
#define ACLSHMEM_TEST_SOME(NAME, TYPE)                                                                       \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_test_some(TYPE *ivars, size_t nelems, size_t *indices, const int *status, \
                                                       int cmp, TYPE cmp_value, size_t *res_out)
#define ACLSHMEM_TEST_ALL_VECTOR(NAME, TYPE)                                                                 \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_test_all_vector(TYPE *ivars, size_t nelems, const int *status, int cmp, \
                                                             TYPE *cmp_values, int *res_out)
#define ACLSHMEM_TEST_ANY_VECTOR(NAME, TYPE)                                                                 \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_test_any_vector(TYPE *ivars, size_t nelems, const int *status, int cmp, \
                                                             TYPE *cmp_values, size_t *res_out)
#define ACLSHMEM_TEST_SOME_VECTOR(NAME, TYPE)                                                                \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_test_some_vector(TYPE *ivars, size_t nelems, size_t *indices,     \
                                                              const int *status, int cmp, TYPE *cmp_values, size_t *res_out)

/* ---- shmem_* compatibility aliases of the original headers (spec section 12), verbatim ---- */
/* host/shmem_host_def.h */
#define shmem_error_code_t aclshmem_error_code_t
#define shmemx_bootstrap_t aclshmemx_bootstrap_t
#define shmem_init_status_t aclshmemx_init_status_t
#define shmem_transport_t aclshmem_transport_t
#define shmem_init_optional_attr_t aclshmem_init_optional_attr_t
#define shmem_init_attr_t aclshmemx_init_attr_t
#define shmem_uniqueid_t aclshmemx_uniqueid_t
#define shmem_decrypt_handler aclshmem_decrypt_handler
/* host/init/shmem_host_init.h */
#define shmem_init_status aclshmemx_init_status
#define shmem_get_uniqueid aclshmemx_get_uniqueid
#define shmem_set_attr_uniqueid_args aclshmemx_set_attr_uniqueid_args
#define shmem_init_attr aclshmemx_init_attr
#define shmem_finalize aclshmem_finalize
#define shmemx_finalize aclshmemx_finalize
#define shmem_info_get_version aclshmem_info_get_version
#define shmem_info_get_name aclshmem_info_get_name
#define shmem_set_config_store_tls_key aclshmemx_set_config_store_tls_key
#define shmem_global_exit aclshmem_global_exit
#define shmem_set_conf_store_tls aclshmemx_set_conf_store_tls
/* host/mem/shmem_host_heap.h */
#define shmem_malloc aclshmem_malloc
#define shmem_calloc aclshmem_calloc
#define shmem_align aclshmem_align
#define shmem_free aclshmem_free
/* host/data_plane/shmem_host_rma.h */
#define shmem_ptr aclshmem_ptr
#include "typed_aliases_rma.h"
#define shmem_putmem aclshmem_putmem
#define shmem_getmem aclshmem_getmem
#define shmem_putmem_nbi aclshmem_putmem_nbi
#define shmem_getmem_nbi aclshmem_getmem_nbi
#define shmemx_getmem_on_stream aclshmemx_getmem_on_stream
#define shmemx_putmem_on_stream aclshmemx_putmem_on_stream
#define shmem_mte_set_ub_params aclshmemx_set_mte_config
#define shmem_rdma_set_ub_params aclshmemx_set_rdma_config
#define shmemx_quiet_on_stream aclshmemx_quiet_on_stream
/* host/data_plane/shmem_host_so.h */
#include "typed_aliases_so.h"
#define shmem_putmem_signal_nbi aclshmemx_putmem_signal_nbi
#define shmem_putmem_signal aclshmemx_putmem_signal
#define shmem_signal_op_on_stream aclshmemx_signal_op_on_stream
/* host/data_plane/shmem_host_p2p_sync.h */
#define shmemx_get_ffts_config util_get_ffts_config
#define shmem_handle_wait aclshmemx_handle_wait
#define shmem_signal_wait_until_on_stream aclshmemx_signal_wait_until_on_stream
/* host/data_plane/shmem_host_cc.h */
#define shmemx_barrier_on_stream aclshmemx_barrier_on_stream
#define shmemx_barrier_all_on_stream aclshmemx_barrier_all_on_stream
/* host/team/shmem_host_team.h */
#define shmem_team_split_strided aclshmem_team_split_strided
#define shmem_team_split_2d aclshmem_team_split_2d
#define shmem_team_translate_pe aclshmem_team_translate_pe
#define shmem_team_destroy aclshmem_team_destroy
#define shmem_my_pe aclshmem_my_pe
#define shmem_n_pes aclshmem_n_pes
#define shmem_team_my_pe aclshmem_team_my_pe
#define shmem_team_n_pes aclshmem_team_n_pes
#define shmem_team_get_config aclshmem_team_get_config
/* host/utils/shmem_log.h */
#define shmem_set_extern_logger aclshmemx_set_extern_logger
#define shmem_set_log_level aclshmemx_set_log_level

/* ---- names of earlier releases (the aclshmem_* headers before the typed RMA families were
   renamed): aclshmem_put_<T>_mem(dest, source, nelems, pe) and its relatives are today's
   aclshmem_<T>_put & co. with the same parameters and semantics. Kernel code sees the same
   macros, so every device overload of the current name (tensor, UB, non-contiguous forms)
   answers to the old name too; half/bfloat16 and the engine names are in device/shmem_device.h.
   Checked by tests/c/compat_names.cpp (tests/kernels.rs, earlier_release_names_2pes). ---- */
#define aclshmem_put_float_mem aclshmem_float_put
#define aclshmem_put_double_mem aclshmem_double_put
#define aclshmem_put_int8_mem aclshmem_int8_put
#define aclshmem_put_int16_mem aclshmem_int16_put
#define aclshmem_put_int32_mem aclshmem_int32_put
#define aclshmem_put_int64_mem aclshmem_int64_put
#define aclshmem_put_uint8_mem aclshmem_uint8_put
#define aclshmem_put_uint16_mem aclshmem_uint16_put
#define aclshmem_put_uint32_mem aclshmem_uint32_put
#define aclshmem_put_uint64_mem aclshmem_uint64_put
#define aclshmem_put_char_mem aclshmem_char_put
#define aclshmem_put_float_mem_nbi aclshmem_float_put_nbi
#define aclshmem_put_double_mem_nbi aclshmem_double_put_nbi
#define aclshmem_put_int8_mem_nbi aclshmem_int8_put_nbi
#define aclshmem_put_int16_mem_nbi aclshmem_int16_put_nbi
#define aclshmem_put_int32_mem_nbi aclshmem_int32_put_nbi
#define aclshmem_put_int64_mem_nbi aclshmem_int64_put_nbi
#define aclshmem_put_uint8_mem_nbi aclshmem_uint8_put_nbi
#define aclshmem_put_uint16_mem_nbi aclshmem_uint16_put_nbi
#define aclshmem_put_uint32_mem_nbi aclshmem_uint32_put_nbi
#define aclshmem_put_uint64_mem_nbi aclshmem_uint64_put_nbi
#define aclshmem_put_char_mem_nbi aclshmem_char_put_nbi
#define aclshmem_get_float_mem aclshmem_float_get
#define aclshmem_get_double_mem aclshmem_double_get
#define aclshmem_get_int8_mem aclshmem_int8_get
#define aclshmem_get_int16_mem aclshmem_int16_get
#define aclshmem_get_int32_mem aclshmem_int32_get
#define aclshmem_get_int64_mem aclshmem_int64_get
#define aclshmem_get_uint8_mem aclshmem_uint8_get
#define aclshmem_get_uint16_mem aclshmem_uint16_get
#define aclshmem_get_uint32_mem aclshmem_uint32_get
#define aclshmem_get_uint64_mem aclshmem_uint64_get
#define aclshmem_get_char_mem aclshmem_char_get
#define aclshmem_get_float_mem_nbi aclshmem_float_get_nbi
#define aclshmem_get_double_mem_nbi aclshmem_double_get_nbi
#define aclshmem_get_int8_mem_nbi aclshmem_int8_get_nbi
#define aclshmem_get_int16_mem_nbi aclshmem_int16_get_nbi
#define aclshmem_get_int32_mem_nbi aclshmem_int32_get_nbi
#define aclshmem_get_int64_mem_nbi aclshmem_int64_get_nbi
#define aclshmem_get_uint8_mem_nbi aclshmem_uint8_get_nbi
#define aclshmem_get_uint16_mem_nbi aclshmem_uint16_get_nbi
#define aclshmem_get_uint32_mem_nbi aclshmem_uint32_get_nbi
#define aclshmem_get_uint64_mem_nbi aclshmem_uint64_get_nbi
#define aclshmem_get_char_mem_nbi aclshmem_char_get_nbi
#define aclshmem_put_float_mem_signal aclshmem_float_put_signal
#define aclshmem_put_double_mem_signal aclshmem_double_put_signal
#define aclshmem_put_int8_mem_signal aclshmem_int8_put_signal
#define aclshmem_put_int16_mem_signal aclshmem_int16_put_signal
#define aclshmem_put_int32_mem_signal aclshmem_int32_put_signal
#define aclshmem_put_int64_mem_signal aclshmem_int64_put_signal
#define aclshmem_put_uint8_mem_signal aclshmem_uint8_put_signal
#define aclshmem_put_uint16_mem_signal aclshmem_uint16_put_signal
#define aclshmem_put_uint32_mem_signal aclshmem_uint32_put_signal
#define aclshmem_put_uint64_mem_signal aclshmem_uint64_put_signal
#define aclshmem_put_char_mem_signal aclshmem_char_put_signal
#define aclshmem_put_float_mem_signal_nbi aclshmem_float_put_signal_nbi
#define aclshmem_put_double_mem_signal_nbi aclshmem_double_put_signal_nbi
#define aclshmem_put_int8_mem_signal_nbi aclshmem_int8_put_signal_nbi
#define aclshmem_put_int16_mem_signal_nbi aclshmem_int16_put_signal_nbi
#define aclshmem_put_int32_mem_signal_nbi aclshmem_int32_put_signal_nbi
#define aclshmem_put_int64_mem_signal_nbi aclshmem_int64_put_signal_nbi
#define aclshmem_put_uint8_mem_signal_nbi aclshmem_uint8_put_signal_nbi
#define aclshmem_put_uint16_mem_signal_nbi aclshmem_uint16_put_signal_nbi
#define aclshmem_put_uint32_mem_signal_nbi aclshmem_uint32_put_signal_nbi
#define aclshmem_put_uint64_mem_signal_nbi aclshmem_uint64_put_signal_nbi
#define aclshmem_put_char_mem_signal_nbi aclshmem_char_put_signal_nbi

/* ---- CPU device mode: kernels compiled by aclshmem-cxx see the device API (include/device/) ---- */
#if defined(__cplusplus) && (defined(ACLSHMEM_CPU_KERNELS) || defined(__CCE_KT_TEST__) || defined(__CCE_AICORE__))
#include <device/shmem_device.h>
#endif

#endif /* ACLSHMEM_SHMEM_TRAILER_H */
