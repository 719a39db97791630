"""A sum all-reduce of NumPy arrays built from puts and signals: every PE puts its vector into slot
`me` of every PE's symmetric `slots`, signalling by adding 1 to the receiver's counter, waits until
the counter reaches n, then sums the slots:  aclshmrun -n 4 python3 numpy_allreduce.py"""

import numpy as np

import shmem
import shmem.core as core
from shmem.core import direct

core.init(initializer_method="env")
me, n = core.my_pe(), core.n_pes()
N = 4096
slots = core.array((n, N), "float64")
counter = core.array((1,), "int32")
counter[0] = 0
core.barrier_all()

mine = np.random.default_rng(me).standard_normal(N)
for pe in range(n):
    core.put_signal(slots[me], mine, counter, 1, direct.SignalOp.SIGNAL_ADD, remote_pe=pe)
shmem.aclshmem_signal_wait_until(counter.__array_interface__["data"][0], direct.ComparisonType.CMP_EQ, n)
total = slots.sum(axis=0)

expected = sum(np.random.default_rng(pe).standard_normal(N) for pe in range(n))
assert np.allclose(total, expected)
print("PE %d: allreduce of %d doubles ok (sum[0] = %.6f)" % (me, N, total[0]), flush=True)

core.barrier_all()
core.free_array(slots)
core.free_array(counter)
core.finalize()
