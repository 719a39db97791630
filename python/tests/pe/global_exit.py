"""PE 0 calls aclshmem_global_exit(3) while the others wait in a barrier: the whole job ends with 3."""

import shmem
import shmem.core as core

core.init(initializer_method="env", mem_size=8 << 20)
if core.my_pe() == 0:
    shmem.aclshmem_global_exit(3)
core.barrier_all()  # never completes: PE 0 does not come
print("unreachable", flush=True)
