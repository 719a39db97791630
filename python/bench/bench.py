"""Python vs C, same process, same run:  aclshmrun -n 2 python3 bench.py [path/to/libbench_c.so]

8-byte put+quiet and get latency, 1 MiB put bandwidth, 8-byte put_signal ping-pong (one way).
The C loops (bench_c.c, built by the caller and loaded with ctypes) use the same runtime and heap.
Prints, on PE 0, the median over REPS repetitions for each side and the difference per call."""

import ctypes
import statistics
import sys
import time

import shmem
import shmem.core as core

REPS = 7
core.init(initializer_method="env", mem_size=64 << 20)
me, n = core.my_pe(), core.n_pes()
assert n == 2, "run on 2 PEs"
peer = 1 - me
lib = ctypes.CDLL(sys.argv[1])
for f in (lib.c_put_quiet, lib.c_get, lib.c_pingpong):
    f.restype = ctypes.c_double
vp, sz, i32 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int

MIB = 1 << 20
sym = shmem.aclshmem_malloc(2 * MIB)
sig = shmem.aclshmem_calloc(1, 8)
local = ctypes.create_string_buffer(2 * MIB)
src = ctypes.addressof(local)
put, get, quiet = shmem.aclshmem_putmem, shmem.aclshmem_getmem, shmem.aclshmem_quiet


def py_put_quiet(nbytes, iters):
    t0 = time.perf_counter_ns()
    for _ in range(iters):
        put(sym, src, nbytes, peer)
        quiet()
    return (time.perf_counter_ns() - t0) / iters


def py_get(nbytes, iters):
    t0 = time.perf_counter_ns()
    for _ in range(iters):
        get(src, sym, nbytes, peer)
    return (time.perf_counter_ns() - t0) / iters


def py_pingpong(iters):
    ps, wait, SET, EQ = shmem.aclshmemx_putmem_signal, shmem.aclshmem_signal_wait_until, 0, 0
    t0 = time.perf_counter_ns()
    for i in range(1, iters + 1):
        if me == 0:
            ps(sym, src, 8, sig, i, SET, peer)
            wait(sig, EQ, i)
        else:
            wait(sig, EQ, i)
            ps(sym, src, 8, sig, i, SET, peer)
    return (time.perf_counter_ns() - t0) / iters / 2


def pingpong_reset():
    core.barrier_all()
    ctypes.c_int32.from_address(sig).value = 0
    core.barrier_all()


results = {}
cases = [
    ("8 B put+quiet (ns)", lambda: py_put_quiet(8, 20000), lambda: lib.c_put_quiet(vp(sym), vp(src), sz(8), i32(peer), i32(20000)), False),
    ("8 B get (ns)", lambda: py_get(8, 20000), lambda: lib.c_get(vp(src), vp(sym), sz(8), i32(peer), i32(20000)), False),
    ("1 MiB put+quiet (us)", lambda: py_put_quiet(MIB, 200) / 1e3, lambda: lib.c_put_quiet(vp(sym), vp(src), sz(MIB), i32(peer), i32(200)) / 1e3, False),
    ("8 B put_signal ping-pong, one way (ns)", lambda: py_pingpong(5000), lambda: lib.c_pingpong(vp(sym), vp(src), sz(8), ctypes.cast(sig, ctypes.POINTER(ctypes.c_int32)), i32(me), i32(5000)), True),
]
for name, py_fn, c_fn, pp in cases:
    pys, cs = [], []
    for _ in range(REPS):
        if pp:
            pingpong_reset()
        pys.append(py_fn())
        if pp:
            pingpong_reset()
        cs.append(c_fn())
    results[name] = (statistics.median(pys), statistics.median(cs))
core.barrier_all()
if me == 0:
    print("%-40s %12s %12s %12s %8s" % ("operation (median of %d)" % REPS, "Python", "C", "Py - C", "Py/C"))
    for name, (p, c) in results.items():
        print("%-40s %12.1f %12.1f %12.1f %8.2f" % (name, p, c, p - c, p / c))
    mib = results["1 MiB put+quiet (us)"]
    print("1 MiB put bandwidth: Python %.2f GB/s, C %.2f GB/s" % (MIB / mib[0] / 1e3, MIB / mib[1] / 1e3))
shmem.aclshmem_free(sym)
shmem.aclshmem_free(sig)
core.finalize()
