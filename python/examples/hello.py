"""The smallest shmem program:  aclshmrun -n 4 python3 hello.py"""

import shmem.core as core

core.init(initializer_method="env")  # aclshmrun / torchrun / mpirun variables
print("hello from PE %d of %d (%s)" % (core.my_pe(), core.n_pes(), core.get_version()), flush=True)
core.barrier_all()
core.finalize()
