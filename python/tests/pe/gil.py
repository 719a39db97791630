"""The GIL is released while a call waits: a Python thread of the same PE satisfies the wait."""

import ctypes
import threading
import time

from common import check

import shmem
import shmem.core as core

core.init(initializer_method="env", mem_size=8 << 20)
me = core.my_pe()
sig = shmem.aclshmem_calloc(1, 8)
core.barrier_all()


def setter():
    time.sleep(0.2)
    shmem.aclshmem_int32_p(sig, 1, me)  # needs the GIL: runs only if the waiting call released it


t = threading.Thread(target=setter)
t.start()
shmem.aclshmem_signal_wait_until(sig, shmem.CmpOp.CMP_EQ, 1)
t.join()
check(ctypes.c_int32.from_address(sig).value == 1, "signal set by the thread")
ctypes.c_int32.from_address(sig).value = 0
t = threading.Thread(target=setter)
t.start()
shmem.aclshmem_int32_wait_until(sig, shmem.CmpOp.CMP_EQ, 1)
t.join()
core.barrier_all()
shmem.aclshmem_free(sig)
core.finalize()
print("gil ok", flush=True)
