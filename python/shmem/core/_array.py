"""NumPy arrays over symmetric memory (zero copy).

Ownership: an array made by :func:`array` keeps its :class:`Buffer` alive (``arr.base``); every
view of it does too. Freeing is collective (``aclshmem_free`` starts with a barrier), so it never
happens from the garbage collector, whose timing differs between PEs: :func:`free_array` frees
collectively; a Buffer that is collected without it is only recorded (``pending_frees()``) and its
memory returns with the heap at :func:`shmem.core.finalize`, or earlier through the collective
:func:`release_collected`. Using an array after it was freed
or after finalize is undefined, as in C.
"""

import bisect
import weakref

from .. import _pyshmem as _p
from .utils import AclshmemError, AclshmemInvalid, Buffer, _current_instance_id, logger

# start address -> [weakref to the Buffer, freed?, instance id] of the blocks made here
_live = {}
# the keys of _live, sorted (which block holds an address: owner_instance)
_starts = []
# addresses of blocks whose Buffer was collected without free_array/free_tensor
_pending = []


def _np():
    import numpy

    return numpy


def _count(shape):
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    n = 1
    for d in shape:
        if not isinstance(d, int) or d < 0:
            raise AclshmemInvalid("shape must hold non-negative ints, got %r" % (shape,))
        n *= d
    return shape, n


def _collected(addr, entry):
    # the address may already belong to a newer block (freed, then reused by the allocator)
    if _live.get(addr) is not entry:
        return
    _forget(addr)
    if not entry[1]:
        _pending.append(addr)
        logger.warning("symmetric block 0x%x was garbage-collected without free_array/free_tensor: "
                       "its memory is returned at finalize", addr)


def alloc(nbytes):
    """A collective allocation of ``nbytes`` (at least 1) as a tracked Buffer."""
    try:
        addr = _p.aclshmem_malloc(max(nbytes, 1))
    except RuntimeError as exc:
        raise AclshmemError("aclshmem_malloc(%d) failed: %s" % (nbytes, exc)) from exc
    buf = Buffer(addr, max(nbytes, 1))
    entry = [weakref.ref(buf), False, _current_instance_id()]
    _live[addr] = entry
    bisect.insort(_starts, addr)
    weakref.finalize(buf, _collected, addr, entry)
    return buf


def release(addr):
    """Collective free of a block made by :func:`alloc`, by its start address."""
    entry = _live.get(addr)
    if entry is None or entry[1]:
        raise AclshmemInvalid("0x%x is not the start of a live symmetric array/tensor" % addr)
    _check_instance(entry, "the array/tensor")
    entry[1] = True
    _forget(addr)
    _p.aclshmem_free(addr)


def _forget(addr):
    del _live[addr]
    i = bisect.bisect_left(_starts, addr)
    if i < len(_starts) and _starts[i] == addr:
        del _starts[i]


def _check_instance(entry, name):
    current = _current_instance_id()
    if entry[2] != current:
        raise AclshmemInvalid("%s was allocated by instance %d; the current instance is %d" % (name, entry[2], current))


def check_instance(addr, name):
    """Raises AclshmemInvalid when ``addr`` lies in a live array/tensor of another instance than
    the current one (memory of no tracked block passes: local buffers, Buffers)."""
    i = bisect.bisect_right(_starts, addr) - 1
    if i < 0:
        return
    entry = _live.get(_starts[i])
    buf = entry[0]() if entry is not None else None
    if buf is not None and addr < _starts[i] + buf.length:
        _check_instance(entry, name)


def pending_frees():
    """Start addresses of collected blocks waiting for finalize."""
    return list(_pending)


def release_collected(max_blocks=4096):
    """Collective (every PE calls it): frees the collected blocks that every PE has collected,
    in the same order everywhere; blocks only some PEs have collected stay pending. Returns how
    many blocks were freed."""
    import ctypes

    npes = _p.pe_count()
    base = _p.aclshmemx_get_heap_base()
    mine = sorted(a - base for a in _pending)[:max_blocks]
    slot = 8 * (max_blocks + 1)
    scratch = _p.aclshmem_malloc(slot)
    try:
        words = (ctypes.c_int64 * (max_blocks + 1)).from_address(scratch)
        words[0] = len(mine)
        for i, off in enumerate(mine):
            words[i + 1] = off
        _p.aclshmem_barrier_all()
        common = set(mine)
        peer_words = (ctypes.c_int64 * (max_blocks + 1))()
        for pe in range(npes):
            if pe == _p.my_pe():
                continue
            _p.aclshmem_getmem(ctypes.addressof(peer_words), scratch, slot, pe)
            common &= set(peer_words[1:1 + peer_words[0]])
        _p.aclshmem_barrier_all()
    finally:
        _p.aclshmem_free(scratch)
    for off in sorted(common):
        _pending.remove(base + off)
        _p.aclshmem_free(base + off)
    return len(common)


def _forget_all():
    _live.clear()
    del _starts[:]
    del _pending[:]


def array(shape, dtype="float32"):
    """Collective: a C-contiguous NumPy array of ``shape``/``dtype`` in symmetric memory, zero copy.
    Free it with :func:`free_array` (collective)."""
    np = _np()
    shape, n = _count(shape)
    dt = np.dtype(dtype)
    buf = alloc(n * dt.itemsize)
    return np.frombuffer(buf, dtype=dt, count=n).reshape(shape)


def _start(arr):
    return arr.__array_interface__["data"][0]


def free_array(arr):
    """Collective: frees an array made by :func:`array` (pass the array itself, not a view)."""
    if not hasattr(arr, "__array_interface__"):
        raise AclshmemInvalid("free_array takes a NumPy array, got %s" % type(arr).__name__)
    release(_start(arr))


def get_peer_array(arr, pe):
    """A view of PE ``pe``'s copy of the symmetric array ``arr`` (same node): same shape and dtype."""
    np = _np()
    if not isinstance(pe, int) or not 0 <= pe < _p.pe_count():
        raise AclshmemInvalid("pe must be in 0..%d, got %r" % (_p.pe_count() - 1, pe))
    if not arr.flags["C_CONTIGUOUS"]:
        raise AclshmemInvalid("get_peer_array needs a C-contiguous array")
    addr = _p.aclshmem_ptr(_start(arr), pe)
    if addr == 0:
        raise AclshmemError("PE %d's copy is not directly addressable from this process" % pe)
    buf = Buffer(addr, max(arr.nbytes, 1))
    return np.frombuffer(buf, dtype=arr.dtype, count=arr.size).reshape(arr.shape)
