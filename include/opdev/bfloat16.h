/* opdev/bfloat16.h - op::bfloat16 for host code next to CPU-mode kernels: the same 2-byte bfloat16
   as the kernels' bfloat16_t (libaclshmem CPU device mode). */
#ifndef ACLSHMEM_OPDEV_BFLOAT16_H
#define ACLSHMEM_OPDEV_BFLOAT16_H
#include "../device/aclshmem_cpu.h"
namespace op {
typedef bfloat16_t bfloat16;
}
#endif
