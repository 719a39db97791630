#ifndef ALLGATHER_KERNEL_H
#define ALLGATHER_KERNEL_H
#include <cstdint>

/* data type codes of the launch wrapper */
enum { AG_INT32 = 0, AG_HALF = 1, AG_BF16 = 2 };

void allgather_demo(uint32_t block_dim, void *stream, int dtype, uint8_t *input, uint8_t *output, uint8_t *flags,
                    int elems, int round);
#endif
