"""Python initialises; a C function (compiled by the test, linked with -laclshmem, loaded by ctypes)
sees the same runtime: same my_pe/n_pes, same heap base, reads what Python wrote and puts to the
next PE, which Python observes."""

import ctypes
import sys

from common import check

import shmem
import shmem.core as core

core.init(initializer_method="env", mem_size=16 << 20)
me, n = core.my_pe(), core.n_pes()
lib = ctypes.CDLL(sys.argv[1])
lib.c_heap_base.restype = ctypes.c_void_p
lib.c_read_and_put.argtypes = [ctypes.c_void_p]
check(lib.c_my_pe() == me and lib.c_n_pes() == n, "C sees the PE of the Python init")
check(lib.c_heap_base() == shmem.aclshmemx_get_heap_base(), "C sees the same heap")
check(lib.c_init_status() == 2, "C sees an initialised library")
arr = core.array((2,), "int32")
arr[0] = 1000 + me
arr[1] = -1
core.barrier_all()
check(lib.c_read_and_put(arr.__array_interface__["data"][0]) == 1000 + me, "C reads what Python wrote")
core.barrier_all()
check(arr[1] == 1000 + (me - 1) % n, "Python sees the put C made: %r" % arr.tolist())
core.free_array(arr)
core.finalize()
check(lib.c_init_status() == 0, "C sees the Python finalize")
print("one runtime ok", flush=True)
