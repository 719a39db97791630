"""torch CPU tensors over symmetric memory on N PEs: every dtype, put/get of tensors, peer views,
aclshmem_create_tensor / aclshmem_free_tensor."""

import sys

from common import check

import shmem
import shmem.core as core

check("torch" not in sys.modules, "import shmem imported torch")
import torch  # noqa: E402

core.init(initializer_method="env", mem_size=32 << 20)
me, n = core.my_pe(), core.n_pes()
right, left = (me + 1) % n, (me - 1) % n
for dt in [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.uint8, torch.int16,
           torch.int32, torch.int64, torch.bool, torch.complex64]:
    t = core.tensor((4, 3), dtype=dt)
    check(t.shape == (4, 3) and t.dtype == dt and t.is_contiguous() and t.device.type == "cpu", str(dt))
    t.zero_()
    core.barrier_all()
    val = (torch.arange(12).reshape(4, 3) + me).to(dt)
    core.put(t, val, remote_pe=right)
    core.quiet(0)
    core.barrier_all()
    check(torch.equal(t, (torch.arange(12).reshape(4, 3) + left).to(dt)), "tensor put %s" % dt)
    back = torch.zeros(4, 3, dtype=dt)
    core.get(back, t, remote_pe=right)
    core.quiet(0)
    check(torch.equal(back, val), "tensor get %s" % dt)
    check(torch.equal(core.get_peer_tensor(t, right), val), "peer tensor %s" % dt)
    core.barrier_all()
    core.free_tensor(t)
# zero copy: writing through the tensor is visible through the symmetric address
t = shmem.aclshmem_create_tensor((8,), torch.int32, device_id=0)
t[:] = 5 + me
core.barrier_all()
check(shmem.aclshmem_int32_g(t.data_ptr() + 4, right) == 5 + right, "create_tensor is symmetric and zero copy")
core.barrier_all()
shmem.aclshmem_free_tensor(t)
from shmem.construct_tensor import calc_nbytes, construct_tensor_from_ptr  # noqa: E402

check(calc_nbytes((3, 4), torch.float16) == 24, "calc_nbytes")
addr = shmem.aclshmem_malloc(64)
v = construct_tensor_from_ptr(addr, (2, 3), torch.int32, "cpu", stride=(1, 2), storage_offset=1)
flat = construct_tensor_from_ptr(addr, (16,), torch.int32)
flat[:] = torch.arange(16, dtype=torch.int32)
check(v.tolist() == [[1, 3, 5], [2, 4, 6]], "construct_tensor_from_ptr strides: %r" % v.tolist())
core.barrier_all()
shmem.aclshmem_free(addr)
try:
    core.tensor((2,), dtype="float32")
    check(False, "a non-torch dtype must raise")
except core.AclshmemInvalid:
    pass
core.finalize()
print("tensors ok", flush=True)
