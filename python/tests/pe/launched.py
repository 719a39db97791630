"""Run by torchrun or mpirun (not aclshmrun). argv[1] says how this PE initialises:
env (the launcher's variables), env_no_address (the same under a plain mpirun, which sets no
rendezvous address: the library's message says what is missing, and init falls back to the MPI
bootstrap), gloo (unique id broadcast by torch.distributed over gloo, in a 512-byte tensor), mpi4py
(unique id broadcast by mpi4py), mpi (the library's MPI bootstrap). Then a ring put with signal and
a NumPy check."""

import sys

import numpy as np

from common import check

import shmem.core as core
from shmem.core import direct

mode = sys.argv[1]
if mode == "env":
    core.init(initializer_method="env", mem_size=16 << 20)
elif mode == "env_no_address":
    import shmem

    messages = []
    shmem.set_extern_logger(lambda level, msg: messages.append(msg))
    try:
        shmem.aclshmemx_set_attr_from_env()
        check(False, "aclshmemx_set_attr_from_env without a rendezvous address must fail")
    except RuntimeError as exc:
        check("no rendezvous address" in str(exc), "the binding's message: %s" % exc)
    check(any("started by Open MPI" in m and "no rendezvous address" in m and "MASTER_ADDR" in m
              and "ACLSHMEMX_INIT_WITH_MPI" in m for m in messages),
          "the library's message names the MPI job and what is missing: %s" % messages)
    core.init(initializer_method="env")
    # the heap is ACLSHMEM_LOCAL_MEM_SIZE's 24 MiB (the test sets it), not a default of 64 or 128
    try:
        shmem.aclshmem_malloc(40 << 20)
        check(False, "40 MiB from a heap of 24 MiB")
    except RuntimeError:
        pass
    block = shmem.aclshmem_malloc(20 << 20)
    shmem.aclshmem_free(block)
elif mode == "gloo":
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    t = torch.zeros(512, dtype=torch.uint8)
    if rank == 0:
        t[:136] = torch.frombuffer(bytearray(core.get_unique_id()), dtype=torch.uint8)
    dist.broadcast(t, src=0)
    core.init(uid=t, rank=rank, nranks=size, mem_size=16 << 20, initializer_method="uid")
elif mode == "mpi4py":
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    uid = comm.bcast(core.get_unique_id() if comm.rank == 0 else None, root=0)
    core.init(uid=uid, rank=comm.rank, nranks=comm.size, mem_size=16 << 20, initializer_method="uid")
elif mode == "mpi":
    core.init(initializer_method="mpi", mem_size=16 << 20)
else:
    check(False, "unknown mode %s" % mode)

me, n = core.my_pe(), core.n_pes()
data = core.array((8,), "int64")
sig = core.array((1,), "int32")
sig[:] = 0
core.barrier_all()
core.put_signal(data, np.full(8, me, dtype="int64"), sig, 1, direct.SignalOp.SIGNAL_SET, remote_pe=(me + 1) % n)
while sig[0] != 1:
    pass
check((data == (me - 1) % n).all(), "ring put_signal under %s" % mode)
core.barrier_all()
core.free_array(data)
core.free_array(sig)
core.finalize()
if mode == "gloo":
    dist.destroy_process_group()
print("launched ok %d/%d" % (me, n), flush=True)
