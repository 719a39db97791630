"""The newer original API on N PEs (run with SHMEM_CYCLE_PROF_PE=0): Buffers that own their memory
(buffer/calloc/align with a MemType, free rules), argument checks of rma before anything is queued,
team barriers and syncs (also on streams), Handle and handle_wait, engine configurations, profiling,
team_split_strided errors, and a second instance (init/current_instance/set_instance/multi_instance/
finalize(instance_id)) with buffers tied to their instance."""

import ctypes
import os
import threading

import numpy as np

from common import check, drop_uid, raises, share_uid, uid_path

import shmem
import shmem.core as core
from shmem import streams
from shmem.core import direct
from shmem.core.utils import AclshmemInvalid

me = int(os.environ["ACLSHMEM_MY_PE"])
n = int(os.environ["ACLSHMEM_N_PES"])
p = shmem._pyshmem


def word(addr):
    return ctypes.c_int32.from_address(addr).value


# ---- instance 0: the launcher's environment, explicitly instance 0
core.init(initializer_method="env", mem_size=32 << 20, instance_id=0)
check(core.current_instance() == 0 and p.aclshmemx_instance_ctx_get().id == 0, "current instance 0")
check(direct.my_pe() == me and core.n_pes() == n, "PE numbers")

# ---- allocations: owning Buffers of either heap
b = core.buffer(4096, mem_type=core.MemType.DEVICE_SIDE)
check(b.owned and b.instance_id == 0 and not b.release_called and b.mem_type == core.MemType.DEVICE_SIDE
      and b.length == 4096, "buffer(): owning, instance 0")
z = core.calloc(256, 4)
check(z.length == 1024 and z.owned and bytes(memoryview(z)) == bytes(1024), "calloc(): zeroed")
a = core.align(4096, 100, core.MemType.DEVICE_SIDE)
check(a.addr % 4096 == 0 and a.length == 100 and a.owned, "align()")
h = core.buffer(64, mem_type=core.MemType.HOST_SIDE)
check(h.mem_type == core.MemType.HOST_SIDE and h.owned, "HOST_SIDE buffer")
check(raises(AclshmemInvalid, core.align, 3, 64), "alignment not a power of two")
check(raises(AclshmemInvalid, core.calloc, 1 << 40, 1 << 40), "count * size overflows size_t")
check(raises(AclshmemInvalid, core.buffer, True), "bool size")
check(raises(AclshmemInvalid, core.buffer, 64, mem_type=1), "int mem_type")

# low-level: 0 on failure instead of an exception
raw = p.aclshmemx_malloc(128, p.MemType.DEVICE_SIDE)
check(raw != 0 and p.aclshmemx_malloc(1 << 62) == 0, "aclshmemx_malloc: address, 0 on failure")
p.aclshmemx_free(raw, p.MemType.DEVICE_SIDE)
raw = p.aclshmemx_calloc(4, 8)
check(raw != 0 and p.aclshmemx_align(64, 64) % 64 == 0, "aclshmemx_calloc/align")

# ---- free: only an owning Buffer, once
ext = core.Buffer(b.addr, 16)
check(raises(AclshmemInvalid, core.free, ext) and not ext.release_called, "free of a Buffer made directly")
peer = core.get_peer_buffer(b, (me + 1) % n)
check(not peer.owned and peer.instance_id == 0 and peer.mem_type == b.mem_type and peer.length == b.length,
      "peer view")
check(raises(AclshmemInvalid, core.free, peer), "free of a peer view")
check(raises(AclshmemInvalid, core.get_peer_buffer, b, True), "bool pe")
t = core.buffer(256)
outcomes, start = [], threading.Barrier(3)


def free_once():
    start.wait()
    try:
        core.free(t)
        outcomes.append("freed")
    except AclshmemInvalid:
        outcomes.append("refused")


threads = [threading.Thread(target=free_once) for _ in range(2)]
for th in threads:
    th.start()
start.wait()
for th in threads:
    th.join()
check(sorted(outcomes) == ["freed", "refused"] and t.release_called, "two threads free once: %s" % outcomes)
check(raises(AclshmemInvalid, core.free, t), "second free")
core.free(h)

# ---- rma: checks before anything is queued
sig = core.buffer(64)
data = core.buffer(256)
src = np.arange(64, dtype=np.int32)
sig_arr = np.frombuffer(sig, dtype=np.int32)
sig_arr[:] = 0
core.barrier_all()
nxt = (me + 1) % n
SET, CMP_EQ = direct.SignalOp.SIGNAL_SET, direct.ComparisonType.CMP_EQ
misaligned = core.Buffer._borrowed(sig.addr + 1, 4, sig.mem_type, sig)
check(misaligned.instance_id == 0 and not misaligned.owned, "_borrowed view")
for what, fn in [
    ("misaligned signal_op", lambda: core.signal_op(misaligned, 1, SET, me, stream=0)),
    ("misaligned signal_wait", lambda: core.signal_wait(misaligned, 1, CMP_EQ, stream=0)),
    ("misaligned put_signal", lambda: core.put_signal(data, src, misaligned, 1, SET, nxt)),
    ("short signal word", lambda: core.signal_op(core.Buffer._borrowed(sig.addr, 3, sig.mem_type, sig), 1, SET,
                                                  me, stream=0)),
    ("CmpOp as SignalOp", lambda: core.signal_op(sig, 1, CMP_EQ, me, stream=0)),
    ("SignalOp as CmpOp", lambda: core.signal_wait(sig, 1, SET, stream=0)),
    ("unknown op", lambda: core.put_signal(data, src, sig, 1, 999, nxt)),
    ("bool op", lambda: core.put_signal(data, src, sig, 1, True, nxt)),
    ("bool remote_pe", lambda: core.put(data, src, True, stream=0)),
    ("pe out of range", lambda: core.get(data, src, n, stream=0)),
    ("bool stream", lambda: core.put(data, src, nxt, stream=True)),
    ("negative stream", lambda: core.get(data, src, nxt, stream=-1)),
    ("str stream", lambda: core.signal_op(sig, 1, SET, me, stream="s")),
    ("no stream for quiet", lambda: core.quiet(None)),
    ("destination too small", lambda: core.put(core.Buffer._borrowed(data.addr, 8, data.mem_type, data), src, nxt)),
    ("freed buffer", lambda: core.put(t, src[:4], nxt, stream=0)),
    ("peer of a freed buffer", lambda: core.get_peer_buffer(t, me)),
]:
    check(raises(AclshmemInvalid, fn), what)
check(word(sig.addr) == 0, "nothing was queued by the refused calls")
core.barrier_all()
# plain ints equal to an enum value still work (older programs)
core.put_signal(data, src, sig, 7, 0, nxt)
core.barrier_all()
check(word(sig.addr) == 7 and np.frombuffer(data, dtype=np.int32)[:64].tolist() == list(range(64)),
      "put_signal with a plain-int op")

# ---- team barriers, syncs, streams, handles
world = core.ACLSHMEM_TEAM_WORLD
check(core.ACLSHMEM_TEAM_INVALID == -1 and core.ACLSHMEM_MAX_TEAMS == 2048 and world == 0, "team constants")
core.barrier(world)
core.sync(world)
core.sync_all()
p.aclshmem_barrier(world)
p.aclshmem_sync(world)
p.aclshmem_sync_all()
s = streams.create_stream()
core.barrier_on_stream(world, s)
core.barrier_all_on_stream(s)
p.aclshmemx_barrier_on_stream(world, s)
p.aclshmemx_barrier_all_on_stream(s)
streams.synchronize_stream(s)
never = core.ACLSHMEM_MAX_TEAMS - 1
for what, fn in [("team out of range", lambda: core.barrier(core.ACLSHMEM_MAX_TEAMS)),
                 ("bool team", lambda: core.sync(True)),
                 ("never-created team", lambda: core.sync(never)),
                 ("never-created team on a stream", lambda: core.barrier_on_stream(never, s)),
                 ("no stream", lambda: core.barrier_all_on_stream(None)),
                 ("not a Handle", lambda: core.handle_wait(0, s))]:
    check(raises(AclshmemInvalid, fn), what)
for what, fn in [("Handle(never)", lambda: core.Handle(never)), ("Handle(2048)", lambda: core.Handle(2048)),
                 ("Handle(True)", lambda: core.Handle(True)),
                 ("low-level barrier", lambda: p.aclshmem_barrier(never))]:
    check(raises(ValueError, fn), what)
check(core.Handle().team_id == world, "Handle() is the world team")

# handle_wait: what each PE put into its neighbour has landed once the stream ran everywhere
inbox = core.buffer(64)
np.frombuffer(inbox, dtype=np.uint8)[:] = 0
core.barrier_all()
mine = np.full(64, me + 1, dtype=np.uint8)
core.put(inbox, mine, nxt, stream=s)
core.handle_wait(core.Handle(world), s)
streams.synchronize_stream(s)
core.barrier_all()
check((np.frombuffer(inbox, dtype=np.uint8) == (me - 1) % n + 1).all(), "handle_wait: puts landed")

# a split team: live until destroyed
check(raises(RuntimeError, p.team_split_strided, world, -1, 1, 1), "invalid split raises RuntimeError")
check(raises(core.AclshmemError, direct.team_split_strided, world, -1, 1, 1), "direct: AclshmemError")
only0 = p.team_split_strided(world, 0, 1, 1)
check((only0 >= 0) if me == 0 else (only0 == core.ACLSHMEM_TEAM_INVALID), "non-member gets TEAM_INVALID")
if me == 0:
    p.team_destroy(only0)
team = p.team_split_strided(world, 0, 1, n)
check(team > 0 and p._is_valid_team(team), "split team is live")
hd = core.Handle(team)
core.barrier(team)
core.handle_wait(hd, s)
streams.synchronize_stream(s)
p.team_destroy(team)
core.barrier_all()
check(not p._is_valid_team(team) and not p._is_valid_team(-1) and not p._is_valid_team(1 << 40), "_is_valid_team")
for what, fn in [("destroyed barrier", lambda: core.barrier(team)),
                 ("destroyed handle_wait", lambda: core.handle_wait(hd, s))]:
    check(raises(AclshmemInvalid, fn), what)
check(raises(ValueError, p.aclshmemx_handle_wait, hd, s), "low-level handle_wait of a destroyed team")
check(raises(ValueError, setattr, core.Handle(), "team_id", team), "Handle.team_id = destroyed team")

# ---- engine configurations
core.set_mte_config(0, 128, 0)
core.set_sdma_config(4096, 256, 5)
core.set_rdma_config(0, 128, 0)
core.set_udma_config(0, (1 << 32) - 1, (1 << 32) - 1)
for what, fn in [("rdma ub < 128", lambda: core.set_rdma_config(0, 127, 0)),
                 ("udma ub < 128", lambda: core.set_udma_config(0, 127, 0)),
                 ("bool offset", lambda: core.set_mte_config(True, 128, 0)),
                 ("ub_size > u32", lambda: core.set_sdma_config(0, 1 << 32, 0)),
                 ("negative sync_id", lambda: core.set_mte_config(0, 128, -1))]:
    check(raises(AclshmemInvalid, fn), what)
check(p.aclshmemx_set_rdma_config(0, 127, 0) != 0, "low-level rdma config: the C code")

# ---- profiling (SHMEM_CYCLE_PROF_PE=0): PE 0 has a record of its stream operations
prof = core.get_prof()
if me == 0:
    check(isinstance(prof, core.ProfData) and prof.pe_id == 0 and len(prof.ccount) == 64
          and all(len(r) == 1024 for r in prof.cycles) and isinstance(prof.ccount[0][0], int), "ProfData shape")
    check(sum(prof.ccount[0]) > 0, "stream operations were counted")
    core.show_prof()
else:
    check(prof is None, "no record on other PEs")
check(raises(TypeError, core.get_prof, 1), "verbose must be a bool")

a0 = core.array((16,), "int32")  # a NumPy array of instance 0

# ---- a second instance; PE numbers rotated by one
path1 = uid_path() + "-i1"
uid1 = share_uid(core.get_unique_id() if me == n - 1 else None, path1)
core.barrier_all()
drop_uid(path1)
core.init(uid=uid1, rank=(me + 1) % n, nranks=n, mem_size=16 << 20, initializer_method="uid", instance_id=1)
check(core.current_instance() == 1 and core.my_pe() == (me + 1) % n, "instance 1 current, own PE number")
b1 = core.buffer(4096)
check(b1.instance_id == 1 and b1.addr != b.addr, "buffer of instance 1")
for what, fn in [("cross-instance put", lambda: core.put(b, b1, me, stream=0)),
                 ("cross-instance signal", lambda: core.signal_op(sig, 1, SET, 0, stream=0)),
                 ("cross-instance peer", lambda: core.get_peer_buffer(b, 0)),
                 ("cross-instance free", lambda: core.free(b)),
                 ("cross-instance array put", lambda: core.put(a0, b1, me, stream=0)),
                 ("cross-instance array get", lambda: core.get(b1, a0[2:], me, stream=0)),
                 ("cross-instance array free", lambda: core.free_array(a0))]:
    check(raises(AclshmemInvalid, fn), what)
check(not b.release_called, "a refused free changes nothing")
with core.multi_instance(0):
    check(core.current_instance() == 0 and core.my_pe() == me, "multi_instance(0)")
    with core.multi_instance(1):
        check(core.current_instance() == 1, "nested multi_instance")
    check(core.current_instance() == 0, "nested block restored")
check(core.current_instance() == 1, "multi_instance restored instance 1")
core.set_instance(0)
check(core.current_instance() == 0, "set_instance(0)")
core.set_instance(1)
for bad in (True, -1, 255):
    check(raises(AclshmemInvalid, core.set_instance, bad), "set_instance(%r)" % (bad,))
    check(raises(AclshmemInvalid, core.finalize, bad), "finalize(%r)" % (bad,))
check(raises(core.AclshmemError, core.set_instance, 7), "set_instance of an instance never initialised")

# the block holds the lock: another thread's call waits until it ends
entered = threading.Event()
with core.multi_instance(0):
    th = threading.Thread(target=lambda: (core.current_instance(), entered.set()))
    th.start()
    check(not entered.wait(0.3), "another thread's call waited for the block")
th.join(10)
check(entered.is_set(), "and ran after it")

with core.multi_instance(0):
    core.barrier_all()
    core.free(b)
    core.free_array(a0)  # still live: the refused free forgot nothing
core.barrier_all()
core.free(b1)
core.finalize(instance_id=1)
check(core.current_instance() == 0, "after finalize(instance_id=1), instance 0 is current")
core.barrier_all()
core.finalize(instance_id=0)
check(direct.init_status() == direct.InitStatus.NOT_INITIALIZED, "all finalized")
print("newer ok", flush=True)
