"""All-gather of torch CPU tensors in symmetric memory; the unique id is broadcast with
torch.distributed (gloo), as training scripts do:
    torchrun --nproc-per-node 4 torch_allgather.py
(under aclshmrun it initialises from the environment instead)."""

import os

import torch

import shmem.core as core

if "TORCHELASTIC_RUN_ID" in os.environ:  # started by torchrun: share the unique id over gloo
    import torch.distributed as dist

    dist.init_process_group("gloo")
    uid = torch.zeros(512, dtype=torch.uint8)
    if dist.get_rank() == 0:
        uid[:136] = torch.frombuffer(bytearray(core.get_unique_id()), dtype=torch.uint8)
    dist.broadcast(uid, src=0)
    core.init(uid=uid, rank=dist.get_rank(), nranks=dist.get_world_size(), mem_size=64 << 20,
              initializer_method="uid")
else:
    core.init(initializer_method="env")

me, n = core.my_pe(), core.n_pes()
gathered = core.tensor((n, 8), dtype=torch.float32)   # zero-copy view of symmetric memory
mine = torch.arange(8, dtype=torch.float32) + 10 * me
core.barrier_all()
for pe in range(n):
    core.put(gathered[me], mine, remote_pe=pe)          # into row `me` of every PE's tensor
core.quiet(0)
core.barrier_all()
assert torch.equal(gathered[:, 0], torch.arange(n, dtype=torch.float32) * 10)
print("PE %d gathered %s" % (me, gathered[:, 0].tolist()), flush=True)

core.free_tensor(gathered)
core.finalize()
