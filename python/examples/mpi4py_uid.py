"""Unique-id init with the id broadcast by mpi4py:
    mpirun -np 4 python3 mpi4py_uid.py"""

from mpi4py import MPI

import shmem.core as core

comm = MPI.COMM_WORLD
uid = comm.bcast(core.get_unique_id() if comm.rank == 0 else None, root=0)
core.init(uid=uid, rank=comm.rank, nranks=comm.size, mem_size=64 << 20, initializer_method="uid")
print("PE %d of %d (MPI rank %d)" % (core.my_pe(), core.n_pes(), comm.rank), flush=True)
core.barrier_all()
core.finalize()
