/* Forwarding header for programs that include the original's internal host header
   shmemi_host_common.h: shmem.h, the host-visible state g_state_host (default_stream and the
   per-core notifies notify_arr that kernels record with aclshmemx_sdma_notify_record), the host
   copy g_state of the device-state record (as aclshmemx_dev_state() returns it for the current
   instance; g_state.heap_base is this PE's heap; all zero before init) and, for C++, the internal
   call aclshmemi_control_barrier_all() (a barrier of every PE; 0 or an error code) and the
   internal logging and checking macros, which the original's examples and host tests use:
     SHM_LOG_DEBUG / _INFO / _WARN / _ERROR(stream expression): one line through the library's
       logger (its threshold, sink and extern logger);
     ACLSHMEM_CHECK_RET(x), (x, message), (x, message, code): when the int32_t value x is not 0,
       logs an error and returns x (or code) from the calling function;
     ACLSHMEM_CHECK(x): the same in a function returning void;
     SHM_ASSERT_RETURN(cond, ret), SHM_ASSERT_LOG_AND_RETURN(cond, message, ret),
       SHM_ASSERT_RET_VOID(cond): when cond is false, log an error and return (ret). */
#ifndef ACLSHMEM_SHMEMI_HOST_COMMON_H
#define ACLSHMEM_SHMEMI_HOST_COMMON_H
#include "shmem.h"
extern aclshmem_host_state_t g_state_host;
extern aclshmem_device_host_state_t g_state;
#ifdef __cplusplus
#include <sstream>
int32_t aclshmemi_control_barrier_all();
namespace aclshmem_log {
constexpr int DEBUG_LEVEL = 0;
constexpr int INFO_LEVEL = 1;
constexpr int WARN_LEVEL = 2;
constexpr int ERROR_LEVEL = 3;
constexpr int FATAL_LEVEL = 4;
} // namespace aclshmem_log
#define SHM_OUT_LOG(LEVEL, ARGS)                                                              \
    do {                                                                                      \
        std::ostringstream aclshmemi_log_text_;                                               \
        aclshmemi_log_text_ << ARGS;                                                          \
        aclshmemx_dev_log((LEVEL), __FILE__, __LINE__, aclshmemi_log_text_.str().c_str());    \
    } while (0)
#define SHM_LOG_DEBUG(ARGS) SHM_OUT_LOG(aclshmem_log::DEBUG_LEVEL, ARGS)
#define SHM_LOG_INFO(ARGS) SHM_OUT_LOG(aclshmem_log::INFO_LEVEL, ARGS)
#define SHM_LOG_WARN(ARGS) SHM_OUT_LOG(aclshmem_log::WARN_LEVEL, ARGS)
#define SHM_LOG_ERROR(ARGS) SHM_OUT_LOG(aclshmem_log::ERROR_LEVEL, ARGS)
#define ACLSHMEMI_CHECK_RET_1(x)                                                              \
    do {                                                                                      \
        int32_t aclshmemi_rc_ = (x);                                                          \
        if (aclshmemi_rc_ != 0) {                                                             \
            SHM_LOG_ERROR(#x << " failed: " << aclshmemi_rc_);                                \
            return aclshmemi_rc_;                                                             \
        }                                                                                     \
    } while (0)
#define ACLSHMEMI_CHECK_RET_2(x, message)                                                     \
    do {                                                                                      \
        int32_t aclshmemi_rc_ = (x);                                                          \
        if (aclshmemi_rc_ != 0) {                                                             \
            SHM_LOG_ERROR(message << " (error " << aclshmemi_rc_ << ")");                     \
            return aclshmemi_rc_;                                                             \
        }                                                                                     \
    } while (0)
#define ACLSHMEMI_CHECK_RET_3(x, message, code)                                               \
    do {                                                                                      \
        int32_t aclshmemi_rc_ = (x);                                                          \
        if (aclshmemi_rc_ != 0) {                                                             \
            SHM_LOG_ERROR(message << " (error " << aclshmemi_rc_ << ", returning " << (code) << ")"); \
            return (code);                                                                    \
        }                                                                                     \
    } while (0)
#define ACLSHMEMI_CHECK_RET_PICK(_1, _2, _3, NAME, ...) NAME
#define ACLSHMEM_CHECK_RET(...)                                                               \
    ACLSHMEMI_CHECK_RET_PICK(__VA_ARGS__, ACLSHMEMI_CHECK_RET_3, ACLSHMEMI_CHECK_RET_2,        \
                             ACLSHMEMI_CHECK_RET_1, unused)(__VA_ARGS__)
#define SHM_ASSERT_RETURN(cond, ret)                                                          \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            SHM_LOG_ERROR("assertion failed: " << #cond);                                     \
            return ret;                                                                       \
        }                                                                                     \
    } while (0)
#define SHM_ASSERT_LOG_AND_RETURN(cond, message, ret)                                         \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            SHM_LOG_ERROR(message);                                                           \
            return ret;                                                                       \
        }                                                                                     \
    } while (0)
#define SHM_ASSERT_RET_VOID(cond)                                                             \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            SHM_LOG_ERROR("assertion failed: " << #cond);                                     \
            return;                                                                           \
        }                                                                                     \
    } while (0)
#define ACLSHMEM_CHECK(x)                                                                     \
    do {                                                                                      \
        int32_t aclshmemi_rc_ = (x);                                                          \
        if (aclshmemi_rc_ != 0) {                                                             \
            SHM_LOG_ERROR(#x << " failed: " << aclshmemi_rc_);                                \
            return;                                                                           \
        }                                                                                     \
    } while (0)
#endif
#endif
