"""Argument checks of shmem.core that guard memory: one case per run (the first argument).

freed:       a freed array/tensor, a view of one, a peer view of one, a view of a freed Buffer and
             the Buffer itself (buffer protocol) are refused everywhere; a newer block at the same
             address is never written nor freed through them
nonsym:      the remote side of put/get/put_signal/signal_op must be symmetric
signal:      a signal word given as an array or tensor is exactly 4 bytes
pe:          NumPy integers are PE numbers; bools are not
alloc:       bad shapes/dtypes of array/tensor are refused before the collective allocation
types:       arguments of the wrong kind raise AclshmemInvalid
"""

import sys

import numpy as np

from common import check, raises

import shmem.core as core
from shmem.core import _array, direct

case = sys.argv[1]
core.init(initializer_method="env", mem_size=16 << 20)
me, n = core.my_pe(), core.n_pes()
right = (me + 1) % n
SET, ADD, CMP_EQ = direct.SignalOp.SIGNAL_SET, direct.SignalOp.SIGNAL_ADD, direct.ComparisonType.CMP_EQ
Invalid = core.AclshmemInvalid


def refused(what, fn, *args, **kw):
    try:
        fn(*args, **kw)
    except Invalid as exc:
        return str(exc)
    check(False, "%s was accepted" % what)


def start(a):
    return a.__array_interface__["data"][0]


def have_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


if case == "freed":
    sig = core.array((1,), "int32")
    old = core.array((4,), "int64")
    old_view = old[1:]
    old_peer = core.get_peer_array(old, right)
    core.barrier_all()
    core.free_array(old)
    new = core.array((4,), "int64")  # the allocator hands out the freed address again
    check(start(new) == start(old), "the test needs the address reused")
    new[:] = 7
    sig[0] = 0
    core.barrier_all()
    src = np.full(4, -99, "int64")
    local = np.zeros(4, "int64")
    for what, fn in [("put into a freed array", lambda: core.put(old, src, remote_pe=right)),
                     ("put into a view of a freed array", lambda: core.put(old_view, src[:3], remote_pe=right)),
                     ("get from a freed array", lambda: core.get(local, old, remote_pe=right)),
                     ("get into a peer view of a freed array", lambda: core.get(old_peer, new, remote_pe=right)),
                     ("put_signal into a freed array", lambda: core.put_signal(old, src, sig, 1, SET, right)),
                     ("peer view of a freed array", lambda: core.get_peer_array(old, right)),
                     ("peer buffer of a freed array", lambda: core.get_peer_buffer(old, right)),
                     ("second free_array", lambda: core.free_array(old)),
                     ("memoryview of a freed array's Buffer", lambda: memoryview(_array._root(old)))]:
        msg = refused(what, fn)
    check("freed" in msg, "the message says freed: %s" % msg)
    core.quiet(0)
    core.barrier_all()
    check(new.tolist() == [7] * 4 and sig[0] == 0, "the newer array is untouched: %r" % new.tolist())
    core.barrier_all()
    # the newer array itself works
    core.put(new, np.arange(4, dtype="int64") + me, remote_pe=right)
    core.quiet(0)
    core.barrier_all()
    check(new.tolist() == list(range((me - 1) % n, (me - 1) % n + 4)), "put into the newer array")
    core.barrier_all()
    core.free_array(new)

    # a view of a freed Buffer, and the Buffer's own buffer protocol
    buf = core.buffer(64)
    view = np.frombuffer(buf, "int32")
    core.barrier_all()
    core.free(buf)
    check("freed" in refused("memoryview of a freed Buffer", memoryview, buf), "memoryview message")
    refused("numpy.frombuffer of a freed Buffer", np.frombuffer, buf, "int32")
    refused("put into a view of a freed Buffer", core.put, view, np.zeros(4, "int32"), remote_pe=right)

    if have_torch():
        import torch

        t = core.tensor((4,), torch.int64)
        t_peer = core.get_peer_tensor(t, right)
        core.barrier_all()
        core.free_tensor(t)
        t2 = core.tensor((4,), torch.int64)
        check(t2.data_ptr() == t.data_ptr(), "the test needs the tensor's address reused")
        t2[:] = 5
        core.barrier_all()
        tsrc = torch.full((4,), -99, dtype=torch.int64)
        for what, fn in [("put into a freed tensor", lambda: core.put(t, tsrc, remote_pe=right)),
                         ("put into a slice of a freed tensor", lambda: core.put(t[1:], tsrc[:3], remote_pe=right)),
                         ("put into a detached freed tensor", lambda: core.put(t.detach(), tsrc, remote_pe=right)),
                         ("put into .numpy() of a freed tensor", lambda: core.put(t.numpy(), tsrc.numpy(),
                                                                                  remote_pe=right)),
                         ("get from a freed tensor", lambda: core.get(torch.zeros(4, dtype=torch.int64), t,
                                                                      remote_pe=right)),
                         ("get into a peer view of a freed tensor", lambda: core.get(t_peer, t2, remote_pe=right)),
                         ("peer view of a freed tensor", lambda: core.get_peer_tensor(t, right)),
                         ("second free_tensor", lambda: core.free_tensor(t))]:
            refused(what, fn)
        core.quiet(0)
        core.barrier_all()
        check(t2.tolist() == [5] * 4, "the newer tensor is untouched: %r" % t2.tolist())
        core.barrier_all()
        core.free_tensor(t2)
    core.barrier_all()
    core.free_array(sig)

elif case == "nonsym":
    a = core.array((8, 8), "int64")
    a[:] = 0
    sig = core.array((1,), "int32")
    sig[0] = 0
    core.barrier_all()
    private = np.zeros(8, "int64")
    private_sig = np.zeros(1, "int32")
    src = np.arange(8, dtype="int64")
    for what, fn in [("put to a private array", lambda: core.put(private, src, remote_pe=right)),
                     ("get from a private array", lambda: core.get(np.zeros(8, "int64"), private, remote_pe=right)),
                     ("put to a NumPy scalar (a copy)", lambda: core.put(a[4, 4], src[:1], remote_pe=right)),
                     ("put to a Buffer of private memory", lambda: core.put(core.Buffer(private.ctypes.data, 64), src,
                                                                            remote_pe=right)),
                     ("put_signal to a private array", lambda: core.put_signal(private, src, sig, 1, SET, right)),
                     ("put_signal with a private signal word", lambda: core.put_signal(a[0], src, private_sig, 1,
                                                                                       SET, right)),
                     ("signal_op on a private word", lambda: core.signal_op(private_sig, 1, SET, right, stream=0))]:
        msg = refused(what, fn)
        check("not symmetric" in msg, "%s: message %r" % (what, msg))
    core.quiet(0)
    core.barrier_all()
    check(not a.any() and sig[0] == 0, "nothing was written")
    core.barrier_all()
    # symmetric views (a row, an element) are fine
    core.put(a[2], src, remote_pe=right)
    core.put(a[3, 3:4], src[5:6], remote_pe=right)
    core.quiet(0)
    core.barrier_all()
    check(a[2].tolist() == list(range(8)) and a[3, 3] == 5, "puts into symmetric views")
    core.barrier_all()
    core.free_array(a)
    core.free_array(sig)

elif case == "signal":
    data = core.array((4,), "int32")
    w64 = core.array((1,), "int64")
    two = core.array((2,), "int32")
    w64[0] = 0
    two[:] = 0
    core.barrier_all()
    ones = np.ones(4, "int32")
    for name, sv in (("int64[1]", w64), ("int32[2]", two)):
        refused("put_signal with %s" % name, core.put_signal, data, ones, sv, -1, SET, right)
        refused("signal_op with %s" % name, core.signal_op, sv, 1, ADD, right, stream=0)
        refused("signal_wait with %s" % name, core.signal_wait, sv, 0, CMP_EQ, stream=0)
    core.quiet(0)
    core.barrier_all()
    check(w64[0] == 0 and two.tolist() == [0, 0], "nothing was signalled")
    core.barrier_all()
    # one 4-byte element works, also as an element of a longer array
    core.put_signal(data, ones, two[1:], 3, SET, right)
    core.signal_op(two[:1], 2, ADD, right, stream=0)
    core.quiet(0)
    core.barrier_all()
    check(two.tolist() == [2, 3], "signals into single elements: %r" % two.tolist())
    core.barrier_all()
    for a in (data, w64, two):
        core.free_array(a)

elif case == "pe":
    a = core.array((4,), "int32")
    a[:] = me
    sig = core.array((1,), "int32")
    sig[0] = 0
    core.barrier_all()
    np_right = np.arange(n)[right]
    check(isinstance(np_right, np.integer), "a NumPy integer")
    got = np.zeros(4, "int32")
    core.get(got, a, remote_pe=np_right)
    core.quiet(0)
    check(got.tolist() == [right] * 4, "get from a NumPy integer PE")
    check(core.get_peer_array(a, np.int32(right)).tolist() == [right] * 4, "get_peer_array with np.int32")
    check(core.get_peer_buffer(a, np.int64(right)).length == 16, "get_peer_buffer with np.int64")
    core.barrier_all()
    core.put_signal(a, np.full(4, 9, "int32"), sig, 1, SET, np.uint16(right))
    core.signal_op(sig, 1, ADD, np.int64(right), stream=0)
    core.quiet(0)
    core.barrier_all()
    check(a.tolist() == [9] * 4 and sig[0] == 2, "put_signal/signal_op with NumPy integer PEs")
    for bad in (True, np.bool_(True), 1.0, "1", None):
        msg = refused("remote_pe=%r" % (bad,), core.put, a, got, remote_pe=bad)
        check(type(bad).__name__ in msg, "the message names the type: %s" % msg)
        refused("get_peer_array pe=%r" % (bad,), core.get_peer_array, a, bad)
    refused("remote_pe=np.int64(n)", core.put, a, got, remote_pe=np.int64(n))
    if have_torch():
        import torch

        t = core.tensor((4,), torch.int32)
        t[:] = me
        core.barrier_all()
        check(core.get_peer_tensor(t, np.int64(right)).tolist() == [right] * 4, "get_peer_tensor with np.int64")
        refused("get_peer_tensor pe=True", core.get_peer_tensor, t, True)
        core.barrier_all()
        core.free_tensor(t)
    core.barrier_all()
    core.free_array(a)
    core.free_array(sig)

elif case == "alloc":
    big = 1 << 20  # 4 MiB of int32 on a 16 MiB heap: a lost block per try would exhaust it
    for i in range(6):
        refused("array with a bool in the shape", core.array, (True, big), "int32")
        refused("array of dtype object", core.array, (big,), object)
        refused("array with shape None", core.array, None)
        refused("array of an unknown dtype", core.array, (4,), "no-such-dtype")
        if have_torch():
            import torch

            refused("tensor with a bool in the shape", core.tensor, (True, big), torch.int32)
            for dt in (torch.quint8, torch.qint8, torch.qint32, torch.quint4x2):
                refused("tensor of %s" % dt, core.tensor, (4,), dt)
    check(_array.pending_frees() == [], "no block was lost: %r" % _array.pending_frees())
    check(core.release_collected() == 0, "nothing to release")
    a = core.array((2 * big,), "int32")  # 8 MiB still fit
    core.barrier_all()
    core.free_array(a)

elif case == "types":
    a = core.array((4,), "int32")
    core.barrier_all()
    refused("get_peer_array(None)", core.get_peer_array, None, right)
    refused("get_peer_array(a list)", core.get_peer_array, [1, 2], right)
    if have_torch():
        import torch

        t = core.tensor((4,), torch.int32)
        refused("get_peer_array(tensor)", core.get_peer_array, t, right)
        refused("get_peer_tensor(ndarray)", core.get_peer_tensor, a, right)
        refused("get_peer_tensor(None)", core.get_peer_tensor, None, right)
        sparse = torch.zeros(4, dtype=torch.int32).to_sparse()
        check("sparse" in refused("put of a sparse tensor", core.put, t, sparse, remote_pe=right),
              "the message names the layout")
        refused("get_peer_tensor of a sparse tensor", core.get_peer_tensor, sparse, right)
        core.barrier_all()
        core.free_tensor(t)
    core.barrier_all()
    core.free_array(a)

else:
    check(False, "unknown case %r" % case)

core.barrier_all()
core.finalize()
print("arg checks %s ok" % case, flush=True)
