"""Ctrl-C during a blocking wait: SIGINT (sent to this process by a timer thread) ends a wait of
the bindings, and a stream synchronize, with KeyboardInterrupt within a moment; the wait works
again afterwards (it returns at once once its condition holds). One PE: nothing else will ever
change the words."""

import ctypes
import os
import signal
import threading
import time

from common import check

import shmem
import shmem.core as core
import shmem.streams as streams
from shmem.core import direct

EQ, GE = shmem.CmpOp.CMP_EQ, shmem.CmpOp.CMP_GE
core.init(initializer_method="env", mem_size=8 << 20)
words = core.array((8,), "int64")
words[:] = 0
base = words.ctypes.data
status = (ctypes.c_int * 4)(0, 0, 0, 0)
cmp_values = (ctypes.c_int32 * 4)(1, 1, 1, 1)
res = ctypes.c_size_t(0)
indices = (ctypes.c_size_t * 4)()


def interrupted(what, call):
    """Runs ``call`` (which blocks) with a SIGINT coming after 0.3 s: it must raise
    KeyboardInterrupt, and soon."""
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.monotonic()
    try:
        call()
    except KeyboardInterrupt:
        took = time.monotonic() - t0
        check(took < 3, "%s: KeyboardInterrupt came after %.1f s" % (what, took))
        print("%s: KeyboardInterrupt after %.2f s" % (what, took), flush=True)
        return
    finally:
        timer.join()
    check(False, "%s returned without its condition (no KeyboardInterrupt)" % what)


def int32(i):
    return ctypes.c_int32.from_address(base + 4 * i)


# a signal word (the low half of words[0]), a typed wait, the _wait family, set waits
interrupted("signal_wait_until", lambda: shmem.aclshmem_signal_wait_until(base, EQ, 1))
int32(0).value = 1
shmem.aclshmem_signal_wait_until(base, EQ, 1)  # holds: returns at once

interrupted("int32_wait_until", lambda: shmem.aclshmem_int32_wait_until(base + 4, GE, 5))
int32(1).value = 7
shmem.aclshmem_int32_wait_until(base + 4, GE, 5)

interrupted("int64_wait", lambda: shmem.aclshmem_int64_wait(base + 8, 0))
words[1] = 3
shmem.aclshmem_int64_wait(base + 8, 0)

sets = base + 16  # int32 words 4..7
interrupted("int32_wait_until_any", lambda: shmem.aclshmem_int32_wait_until_any(
    sets, 4, ctypes.addressof(status), EQ, 1, ctypes.addressof(res)))
interrupted("int32_wait_until_some", lambda: shmem.aclshmem_int32_wait_until_some(
    sets, 4, ctypes.addressof(indices), 0, EQ, 1, ctypes.addressof(res)))
int32(6).value = 1
shmem.aclshmem_int32_wait_until_any(sets, 4, ctypes.addressof(status), EQ, 1, ctypes.addressof(res))
check(res.value == 2, "wait_until_any index %d" % res.value)
interrupted("int32_wait_until_all_vector", lambda: shmem.aclshmem_int32_wait_until_all_vector(
    sets, 4, 0, EQ, ctypes.addressof(cmp_values)))
for i in range(4, 8):
    int32(i).value = 1
shmem.aclshmem_int32_wait_until_all_vector(sets, 4, 0, EQ, ctypes.addressof(cmp_values))
shmem.aclshmem_int32_wait_until_some(sets, 4, ctypes.addressof(indices), 0, EQ, 1, ctypes.addressof(res))
check(res.value == 4 and list(indices) == [0, 1, 2, 3], "wait_until_some found all four")

# a wait queued on a stream, then a synchronize of the stream (this loads the ACL runtime: last)
int32(0).value = 0
s = streams.create_stream()
core.signal_wait(words[0:1].view("int32")[0:1], 1, direct.ComparisonType.CMP_EQ, stream=s)
interrupted("synchronize_stream", lambda: streams.synchronize_stream(s))
int32(0).value = 1
streams.synchronize_stream(s)  # the queued wait saw the word and the stream ran dry
streams.destroy_stream(s)

core.free_array(words)
core.finalize()
print("interrupt ok", flush=True)
