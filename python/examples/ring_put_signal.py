"""Each PE sends a NumPy array to its right neighbour with put_signal and waits for the one from its
left neighbour:  aclshmrun -n 4 python3 ring_put_signal.py"""

import numpy as np

import shmem
import shmem.core as core
from shmem.core import direct

core.init(initializer_method="env")
me, n = core.my_pe(), core.n_pes()
inbox = core.array((1024,), "float32")    # symmetric: the same array exists on every PE
flag = core.array((1,), "int32")
flag[0] = 0
core.barrier_all()

message = np.full(1024, me, dtype="float32")
core.put_signal(inbox, message, flag, 1, direct.SignalOp.SIGNAL_SET, remote_pe=(me + 1) % n)
# wait (GIL released) until the left neighbour's signal arrived: its data is visible before it
shmem.aclshmem_signal_wait_until(flag.__array_interface__["data"][0], direct.ComparisonType.CMP_EQ, 1)
assert (inbox == (me - 1) % n).all()
print("PE %d received from PE %d" % (me, (me - 1) % n), flush=True)

core.barrier_all()
core.free_array(inbox)
core.free_array(flag)
core.finalize()
