"""shmem.core on N PEs: uid init (file broadcast), Buffer + buffer protocol, put/get/put_signal/
signal_op/signal_wait/quiet with arrays and Buffers, arrays of every dtype, peer views, errors,
a fork()ed multiprocessing worker, logging."""

import logging
import multiprocessing
import os

import numpy as np

from common import check, drop_uid, raises, share_uid, uid_path

import shmem.core as core
from shmem.core import direct

me_env = int(os.environ["ACLSHMEM_MY_PE"])
n = int(os.environ["ACLSHMEM_N_PES"])


# init errors before init
check(raises(core.AclshmemInvalid, core.init, initializer_method="uid"), "uid init without a uid")
check(raises(core.AclshmemInvalid, core.init, initializer_method="bogus"), "unknown method")
check(raises(core.AclshmemInvalid, core.init, uid=b"x" * 10, rank=0, nranks=1, mem_size=1 << 20,
             initializer_method="uid"), "short uid")
uid = share_uid(core.get_unique_id() if me_env == 0 else None, uid_path())
core.init(uid=uid, rank=me_env, nranks=n, mem_size=32 << 20, initializer_method="uid")
drop_uid(uid_path())
check(core.get_version() == "libaclshmem_version=1.1", core.get_version())
ENV_LEVELS = {"DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING, "ERROR": logging.ERROR,
              "FATAL": logging.CRITICAL}
check(logging.getLogger("aclshmem").level == ENV_LEVELS.get(os.environ.get("SHMEM_LOG_LEVEL"), logging.ERROR),
      "logger level from SHMEM_LOG_LEVEL")
me = direct.my_pe()
check(me == me_env and direct.n_pes() == n and direct.team_n_pes(direct.TEAM_WORLD) == n, "direct")
check(direct.init_status() == direct.InitStatus.INITIALIZED, "init_status")
right, left = (me + 1) % n, (me - 1) % n

# Buffer and the buffer protocol
buf = core.buffer(64)
mv = memoryview(buf)
check(mv.nbytes == 64 and not mv.readonly and len(buf) == 64, "memoryview of a Buffer")
mv[:] = bytes([me]) * 64
core.barrier_all()
peer = core.get_peer_buffer(buf, right)
check(bytes(memoryview(peer)) == bytes([right]) * 64, "peer buffer")
check(raises(core.AclshmemInvalid, core.Buffer, 0, 0), "Buffer length 0")
check(raises(core.AclshmemInvalid, core.Buffer, -1, 8), "Buffer negative address")
check(raises(core.AclshmemInvalid, core.Buffer, 0, 8), "Buffer at address 0")

# put/get (stream 0), put_signal, signal_op, signal_wait, quiet with Buffers and arrays
sig = core.array((2,), "int32")
sig[:] = 0
data = core.array((16,), "float64")
data[:] = 0
core.barrier_all()
src = np.arange(16, dtype="float64") + 100 * me
core.put(data, src, remote_pe=right)
core.quiet(0)
core.barrier_all()
check(np.array_equal(data, np.arange(16) + 100 * left), "put array")
got = np.zeros(16)
core.get(got, data, remote_pe=right)
core.quiet(0)
check(np.array_equal(got, np.arange(16) + 100 * me), "get array")
# a get never writes into a read-only array (here a view of an immutable bytes object)
immutable = bytes(128)
ro = np.frombuffer(immutable, "float64")
check(raises(core.AclshmemInvalid, core.get, ro, data, remote_pe=right), "get into a read-only array")
core.quiet(0)
check(immutable == bytes(128), "the bytes object is unchanged")
core.barrier_all()
core.put_signal(data, src * 2, sig[:1], 1, direct.SignalOp.SIGNAL_ADD, remote_pe=right)
core.signal_wait(sig[:1], 1, direct.ComparisonType.CMP_GE, stream=0)
core.quiet(0)
while sig[0] < 1:  # the wait was queued; with no ACL runtime in this process it ran inline
    pass
check(np.array_equal(data, (np.arange(16) + 100 * left) * 2), "put_signal data before signal")
core.signal_op(sig[1:], 7, direct.SignalOp.SIGNAL_SET, remote_pe=right, stream=0)
core.quiet(0)
core.barrier_all()
check(sig[1] == 7, "signal_op")
# errors
word = sig[:1]
check(raises(core.AclshmemInvalid, core.signal_op, word, 1, direct.SignalOp.SIGNAL_SET, right), "signal_op w/o stream")
check(raises(core.AclshmemInvalid, core.signal_wait, word, 1, direct.ComparisonType.CMP_EQ), "signal_wait w/o stream")
check(raises(core.AclshmemInvalid, core.quiet), "quiet w/o stream")
check(raises(core.AclshmemInvalid, core.put, data, src), "put without remote_pe")
check(raises(core.AclshmemInvalid, core.put, data, src, remote_pe=n), "put to PE n")
check(raises(core.AclshmemInvalid, core.put, sig, src, remote_pe=right), "put larger than the destination")
check(raises(core.AclshmemInvalid, core.put, data, "not an array", remote_pe=right), "put of a str")
check(raises(core.AclshmemInvalid, core.put, data, src[::2], remote_pe=right), "non-contiguous source")
check(raises(core.AclshmemInvalid, core.buffer, 0), "buffer(0)")
check(raises(core.AclshmemError, core.buffer, 1 << 50), "buffer too large")
check(raises(core.AclshmemInvalid, core.free, "x"), "free of a str")
check(raises(core.AclshmemInvalid, core.free_array, np.zeros(3)), "free_array of a private array")
check(raises(core.AclshmemInvalid, core.get_peer_array, data, n + 3), "peer array of a bad PE")
check(raises(core.AclshmemInvalid, core.init, initializer_method="nope"), "init with a bad method")
core.barrier_all()

# arrays of every dtype: round trip through a put to the right neighbour and a peer view
for dt in ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32",
           "float64", "complex64", "complex128", "bool"]:
    arr = core.array((3, 5), dt)
    check(arr.shape == (3, 5) and arr.dtype == np.dtype(dt) and arr.flags["C_CONTIGUOUS"], dt)
    arr[:] = 0
    core.barrier_all()
    val = (np.arange(15).reshape(3, 5) + me).astype(dt)
    core.put(arr, val, remote_pe=right)
    core.quiet(0)
    core.barrier_all()
    check(np.array_equal(arr, (np.arange(15).reshape(3, 5) + left).astype(dt)), "array %s" % dt)
    check(np.array_equal(core.get_peer_array(arr, right), val), "peer array %s" % dt)
    core.barrier_all()
    core.free_array(arr)
empty = core.array((0,), "float32")
check(empty.size == 0, "empty array")
core.free_array(empty)

# a collected array is not freed from the GC (freeing is collective): recorded, released at finalize
from shmem.core import _array  # noqa: E402

tmp = core.array((8,), "int32")
addr = tmp.__array_interface__["data"][0]
del tmp
check(addr in _array.pending_frees(), "collected array recorded")
check(raises(core.AclshmemInvalid, _array.release, addr), "a collected block cannot be freed twice")
# a block collected on only some PEs stays pending; one collected everywhere is freed collectively
only_even = core.array((4,), "int32")
odd_addr = only_even.__array_interface__["data"][0]
if me % 2 == 0:
    del only_even
freed = core.release_collected()
check(freed == 1 and addr not in _array.pending_frees(), "release_collected freed the common block (%d)" % freed)
check((odd_addr in _array.pending_frees()) == (me % 2 == 0 and n > 1), "a block collected on some PEs stays")
if me % 2 == 1:
    del only_even
check(core.release_collected() == (1 if n > 1 else 0), "now collected everywhere: freed")


# a fork()ed worker does NumPy work and exits; the job goes on
def worker(q):
    q.put(int(np.arange(10).sum()))


ctx = multiprocessing.get_context("fork")
q = ctx.Queue()
proc = ctx.Process(target=worker, args=(q,))
proc.start()
check(q.get(timeout=60) == 45, "fork worker result")
proc.join(60)
check(proc.exitcode == 0, "fork worker exit %r" % proc.exitcode)
core.barrier_all()
data[:] = me
core.barrier_all()
check(core.get_peer_array(data, right)[0] == right, "job still works after the fork")
core.barrier_all()
core.free(buf)
core.free_array(data)
core.free_array(sig)
core.finalize()
print("core ok", flush=True)
