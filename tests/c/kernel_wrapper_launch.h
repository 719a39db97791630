/*
 * kernel_wrapper_launch.h - a header of kernel_wrapper_tests.cpp that launches a kernel itself (as
 * upstream examples keep host tiling code and its launch in a header): aclshmem-cxx must rewrite
 * launches in the program's own headers too.
 */
#ifndef KERNEL_WRAPPER_LAUNCH_H
#define KERNEL_WRAPPER_LAUNCH_H

#include <cstdint>

#include "acl/acl.h"
#include "kernel_operator.h"

/* every AIV context adds `step` to each of the n words */
template <typename T>
ACLSHMEM_GLOBAL_VECTOR void AddInHeader(T *words, uint32_t n, T step)
{
    for (uint32_t i = 0; i < n; i++) {
        __atomic_fetch_add(&words[i], step, __ATOMIC_SEQ_CST);
    }
}

template <typename T>
void add_in_header(T *words, uint32_t n, T step, uint32_t blocks, aclrtStream stream)
{
    AddInHeader<T><<<blocks, nullptr, stream>>>(words, n, step);
}

#endif
