"""The records of arrays and tensors are per instance. Instance 0 from the launcher, instance 1 by
unique id (broadcast through an array of instance 0):

1. a block of instance 1 collected, then instance 1 finalized and initialised again: the old
   record is gone, so release_collected frees nothing and the new instance's block at the same
   address stays live (it used to be freed and handed out again);
2. with both live, a collected block of instance 1 is freed by release_collected only while
   instance 1 is current, into instance 1's heap (it used to be "freed" under instance 0, lost to
   instance 1's allocator);
3. finalize(instance_id=0) leaves instance 1's arrays and tensors known: they are used and freed
   afterwards (they used to be forgotten)."""

import gc

import numpy as np

from common import check, raises

import shmem.core as core
from shmem.core import _array

core.init(initializer_method="env", mem_size=16 << 20)
me, n = core.my_pe(), core.n_pes()


def init_instance_1():
    """Initialises instance 1 by unique id, broadcast through instance 0 (current on entry)."""
    check(core.current_instance() == 0, "instance 0 current before init of instance 1")
    box = core.array((136,), "uint8")
    if me == 0:
        uid = np.frombuffer(core.get_unique_id(), "uint8")
        for pe in range(n):
            core.put(box, uid, remote_pe=pe, stream=0)
        core.quiet(0)
    core.barrier_all()
    uid = bytes(box)
    core.barrier_all()
    core.free_array(box)
    core.init(uid=uid, rank=me, nranks=n, mem_size=8 << 20, initializer_method="uid", instance_id=1)
    check(core.current_instance() == 1, "instance 1 current after its init")


# 1. a collected block of a finalized instance is not freed in its next life
init_instance_1()
x = core.array((256,), "int64")
x_addr = x.ctypes.data
del x
gc.collect()
check(_array.pending_frees() == [x_addr], "collected block of instance 1 pending")
core.finalize(instance_id=1)
check(core.current_instance() == 0 and _array.pending_frees() == [], "no record moved to instance 0")
init_instance_1()
y = core.array((256,), "int64")
y[:] = 11
print("PE %d: new block at the old address: %s" % (me, y.ctypes.data == x_addr), flush=True)
check(core.release_collected() == 0, "release_collected after re-init frees nothing")
z = core.array((256,), "int64")
z[:] = 22
check(z.ctypes.data != y.ctypes.data and (y == 11).all(), "the live block stayed live")
core.barrier_all()
core.free_array(z)
core.free_array(y)

# 2. each instance frees its own collected blocks
w = core.array((512,), "float64")
w_addr = w.ctypes.data
del w
gc.collect()
check(_array.pending_frees() == [w_addr], "collected block of instance 1 pending (both live)")
core.set_instance(0)
check(core.release_collected() == 0, "release_collected under instance 0 leaves instance 1's block")
core.set_instance(1)
check(_array.pending_frees() == [w_addr], "instance 1's block still pending")
check(core.release_collected() == 1 and _array.pending_frees() == [], "freed under instance 1")
v = core.array((512,), "float64")
check(v.ctypes.data == w_addr, "instance 1's allocator got the block back")
core.free_array(v)

# 3. finalizing instance 0 keeps instance 1's arrays and tensors
b1 = core.array((16,), "int32")
b1[:] = -1
try:
    import torch
except ImportError:
    torch = None
t1 = core.tensor((8,), torch.int64) if torch is not None else None
core.set_instance(0)
a0 = core.array((16,), "int32")
check(raises(core.AclshmemInvalid, core.free_array, b1), "instance 1's array refused under instance 0")
core.free_array(a0)
core.finalize(instance_id=0)
core.set_instance(1)
core.put(b1, np.full(16, 100 + me, "int32"), remote_pe=(me + 1) % n, stream=0)
core.quiet(0)
core.barrier_all()
check((b1 == 100 + (me - 1) % n).all(), "instance 1's array in use after finalize(instance_id=0)")
core.free_array(b1)
if t1 is not None:
    core.free_tensor(t1)
check(raises(core.AclshmemInvalid, core.free_array, b1), "a second free is still refused")
core.finalize(instance_id=1)
print("instance blocks ok", flush=True)
