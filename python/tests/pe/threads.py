"""Calls of shmem.core on several threads of a PE: a thread blocked in a call (a signal wait that
runs inline on stream 0, a barrier) does not stop the other threads' calls, which it may wait
for; an instance switch still waits for the calls in progress on other threads."""

import os
import threading
import time

import numpy as np

from common import check

import shmem.core as core
from shmem.core import direct

core.init(initializer_method="env", mem_size=16 << 20)
me, n = core.my_pe(), core.n_pes()
right, left = (me + 1) % n, (me - 1) % n
sig = core.array((4,), "int32")
sig[:] = 0
data = core.array((1024,), "float32")
data[:] = 0
EQ, SET = direct.ComparisonType.CMP_EQ, direct.SignalOp.SIGNAL_SET
core.barrier_all()


def start(target):
    t = threading.Thread(target=target, daemon=True)
    t.start()
    return t


def joined(t, what, timeout=20):
    """Waits for thread ``t``; a thread still blocked is a deadlock: fail now (a blocked thread
    inside the library never ends, so exit at once)."""
    t.join(timeout)
    if t.is_alive():
        print("FAIL [PE %d]: %s: deadlock" % (me, what), flush=True)
        os._exit(1)


# 1. a wait on stream 0 (inline: no ACL runtime is loaded) in one thread; the put_signal that ends
#    it comes from another thread of this PE
waiter = start(lambda: core.signal_wait(sig[0:1], 1, EQ, stream=0))
time.sleep(0.3)
check(waiter.is_alive(), "the inline signal_wait blocks")
joined(start(lambda: core.put_signal(data, np.ones(1024, "float32"), sig[0:1], 1, SET, remote_pe=me)),
       "put_signal from a second thread while a thread waits")
joined(waiter, "signal_wait ended by another thread's put_signal")
check(sig[0] == 1 and (data == 1).all(), "data and signal from the other thread")

# 2. the same across PEs: each PE waits in a thread; its main thread puts to the right neighbour
core.barrier_all()
waiter = start(lambda: core.signal_wait(sig[1:2], 1, EQ, stream=0))
time.sleep(0.2)
joined(start(lambda: core.put_signal(data, np.full(1024, me, "float32"), sig[1:2], 1, SET, remote_pe=right)),
       "put_signal to the neighbour while a thread waits")
joined(waiter, "signal_wait ended by the neighbour's put_signal")
check((data == left).all(), "data from the left neighbour")

# 3. a barrier in one thread while another thread of PE 0 delivers what PE 1 waits for before it
#    enters the barrier
core.barrier_all()
if me == 0:
    barrier = start(core.barrier_all)
    time.sleep(0.3)
    for pe in range(1, n):
        joined(start(lambda pe=pe: core.put_signal(data, np.full(1024, 7, "float32"), sig[2:3], 1, SET,
                                                   remote_pe=pe)),
               "put_signal while a thread is in barrier_all")
    joined(barrier, "barrier_all")
else:
    core.signal_wait(sig[2:3], 1, EQ, stream=0)
    core.barrier_all()
    check((data == 7).all(), "data put while PE 0 was in a barrier")

# 4. a switch still waits for another thread's call in progress, then goes ahead
core.barrier_all()
waiter = start(lambda: core.signal_wait(sig[3:4], 1, EQ, stream=0))
time.sleep(0.2)
switched = threading.Event()
switcher = start(lambda: (core.set_instance(0), switched.set()))
check(not switched.wait(0.3), "set_instance waits for the call in progress on another thread")
joined(start(lambda: core.put_signal(data, np.ones(1024, "float32"), sig[3:4], 1, SET, remote_pe=me)),
       "put_signal while a switch waits")
joined(waiter, "signal_wait")
joined(switcher, "set_instance after the call returned")
check(switched.is_set() and core.current_instance() == 0, "switched")

core.barrier_all()
core.free_array(sig)
core.free_array(data)
core.finalize()
print("threads ok", flush=True)
