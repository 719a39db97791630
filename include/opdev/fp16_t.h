/* opdev/fp16_t.h - op::fp16_t for host code next to CPU-mode kernels: the same 2-byte IEEE half as
   the kernels' half (libaclshmem CPU device mode). */
#ifndef ACLSHMEM_OPDEV_FP16_T_H
#define ACLSHMEM_OPDEV_FP16_T_H
#include "../device/aclshmem_cpu.h"
namespace op {
typedef half fp16_t;
}
#endif
