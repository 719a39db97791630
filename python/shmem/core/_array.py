"""NumPy arrays over symmetric memory (zero copy).

Ownership: an array made by :func:`array` keeps its :class:`Buffer` alive (``arr.base``); every
view of it does too. Freeing is collective (``aclshmem_free`` starts with a barrier), so it never
happens from the garbage collector, whose timing differs between PEs: :func:`free_array` frees
collectively; a Buffer that is collected without it is only recorded (``pending_frees()``) and its
memory returns with the heap at :func:`shmem.core.finalize`, or earlier through the collective
:func:`release_collected`. Reading or writing an array after it was freed or after finalize is
undefined, as in C; but the calls of :mod:`shmem.core` refuse a freed array or tensor and every view
of it (its Buffer is marked freed: ``release_called``), whose address may belong to a newer block.

The records are kept per instance (:class:`_Blocks`), because a block belongs to the heap of the
instance that allocated it: it is freed by that instance's allocator and nowhere else, and it dies
with that instance's finalize, whatever happens to the others. A finalized instance's records are
dropped then (and again at the next init of its id): a re-initialised instance hands out the same
addresses again, and an old record must never stand for a new block.
"""

import bisect
import threading
import weakref

from .. import _pyshmem as _p
from .utils import AclshmemError, AclshmemInvalid, Buffer, _check_pe, _current_instance_id, _instance_lock, logger


class _Blocks:
    """The blocks one instance allocated here."""

    __slots__ = ("instance_id", "live", "starts", "pending")

    def __init__(self, instance_id):
        self.instance_id = instance_id
        # start address -> [weakref to the Buffer, freed?, this _Blocks]
        self.live = {}
        # the keys of live, sorted (which block holds an address: holding)
        self.starts = []
        # addresses of blocks whose Buffer was collected without free_array/free_tensor
        self.pending = []

    def forget(self, addr):
        del self.live[addr]
        i = bisect.bisect_left(self.starts, addr)
        if i < len(self.starts) and self.starts[i] == addr:
            del self.starts[i]

    def holding(self, addr):
        """The live block that contains ``addr``, or None."""
        i = bisect.bisect_right(self.starts, addr) - 1
        if i < 0:
            return None
        entry = self.live.get(self.starts[i])
        buf = entry[0]() if entry is not None else None
        if buf is not None and addr < self.starts[i] + buf.length:
            return entry
        return None


# instance id -> _Blocks of the instances initialised now (an entry appears with the first block)
_books = {}
# Guards the records: calls of several threads run at once (they hold the instance lock shared),
# and a block may be collected on any thread. Re-entrant: the garbage collector can run a
# `_collected` on the thread that holds it. Never held across a call of the library.
_records = threading.RLock()
# torch's storage of a tensor made by tensor() (shared by all its views) -> weak reference to the
# Buffer under it: a tensor does not lead back to it otherwise. An entry goes with its Buffer,
# which lives as long as the storage.
_tensor_buffers = {}


def _np():
    import numpy

    return numpy


def _count(shape):
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        shape = tuple(shape)
    except TypeError:
        raise AclshmemInvalid("shape must be an int or a sequence of ints, got %r" % (shape,)) from None
    n = 1
    for d in shape:
        if not isinstance(d, int) or isinstance(d, bool) or d < 0:
            raise AclshmemInvalid("shape must hold non-negative ints, got %r" % (shape,))
        n *= d
    return shape, n


def _require_init(what):
    """AclshmemError unless the library is initialised (before init and after finalize no
    allocation can succeed, and the C call only says it returned NULL)."""
    if _p.pe_count() <= 0:
        raise AclshmemError("%s: the library is not initialised (call shmem.core.init first)" % what)


def _storage_key(t):
    storage = t.untyped_storage() if hasattr(t, "untyped_storage") else t._storage()
    return storage._cdata


def note_tensor(t, buf):
    """Records that the tensor ``t`` (and every view of it) lies in ``buf``."""
    key = _storage_key(t)
    ref = weakref.ref(buf)
    with _records:
        _tensor_buffers[key] = ref
    weakref.finalize(buf, _forget_tensor, key, ref)


def _forget_tensor(key, ref):
    with _records:
        if _tensor_buffers.get(key) is ref:
            del _tensor_buffers[key]


def _root(obj):
    """The Buffer under a NumPy array or torch tensor: the one made by :func:`alloc` for an array
    or tensor of this module (a view of one included), or the Buffer it was made from by
    ``numpy.frombuffer``; None for memory of another origin."""
    for _ in range(64):
        if isinstance(obj, Buffer):
            return obj
        if isinstance(obj, memoryview):
            obj = obj.obj
        elif hasattr(obj, "__array_interface__"):
            obj = getattr(obj, "base", None)
        elif hasattr(obj, "data_ptr") and hasattr(obj, "is_contiguous"):
            try:
                key = _storage_key(obj)
            except (AttributeError, RuntimeError):
                return None
            with _records:
                ref = _tensor_buffers.get(key)
            return ref() if ref is not None else None
        else:
            return None
    return None


def check_live(obj, name):
    """Raises AclshmemInvalid when the NumPy array or torch tensor ``obj`` is (a view of) an array,
    tensor or Buffer whose memory was freed: its address may be a newer block's now."""
    root = _root(obj)
    if root is not None and root.release_called:
        raise AclshmemInvalid("%s is a freed symmetric array/tensor or a view of one (its memory was freed)" % name)


def _collected(addr, entry):
    book = entry[2]
    with _records:
        # the address may already belong to a newer block (freed, then reused by the allocator),
        # or the instance may be gone (its records dropped at finalize)
        if book.live.get(addr) is not entry:
            return
        book.forget(addr)
        if entry[1]:
            return
        book.pending.append(addr)
    logger.warning("symmetric block 0x%x of instance %d was garbage-collected without free_array/free_tensor: "
                       "its memory is returned at finalize", addr, book.instance_id)


def alloc(nbytes, what):
    """A collective allocation of ``nbytes`` (at least 1) of the current instance as a tracked
    Buffer (``what``: the caller, for errors)."""
    with _instance_lock.shared():
        instance_id = _current_instance_id()
        _require_init(what)
        try:
            addr = _p.aclshmem_malloc(max(nbytes, 1))
        except RuntimeError as exc:
            raise AclshmemError("aclshmem_malloc(%d) failed: %s" % (nbytes, exc)) from exc
        buf = Buffer(addr, max(nbytes, 1))
        with _records:
            book = _books.get(instance_id)
            if book is None:
                book = _books[instance_id] = _Blocks(instance_id)
            entry = [weakref.ref(buf), False, book]
            book.live[addr] = entry
            bisect.insort(book.starts, addr)
        weakref.finalize(buf, _collected, addr, entry)
        return buf


def release(addr, obj=None, name="arr"):
    """Collective free of a block made by :func:`alloc` in the current instance, by its start
    address; ``obj`` is the array or tensor passed, if any (``name``: the argument), which must not
    be a freed one whose address now starts another block."""
    with _instance_lock.shared():
        check_live(obj, name)
        current = _current_instance_id()
        with _records:
            book = _books.get(current)
            entry = book.live.get(addr) if book is not None else None
            root = _root(obj)
            if entry is not None and root is not None and root is not entry[0]():
                raise AclshmemInvalid("%s is not the array/tensor of the live symmetric block at 0x%x" % (name, addr))
            if entry is None or entry[1]:
                for other in _books.values():
                    held = other.live.get(addr)
                    if other.instance_id != current and held is not None and not held[1]:
                        raise AclshmemInvalid("the array/tensor was allocated by instance %d; the current instance "
                                              "is %d" % (other.instance_id, current))
                raise AclshmemInvalid("0x%x is not the start of a live symmetric array/tensor" % addr)
            # claimed before the library is called: a free racing it on another thread is refused
            entry[1] = True
            book.forget(addr)
            _mark_freed(entry)
        _p.aclshmem_free(addr)


def _mark_freed(entry):
    """Marks the Buffer of a freed block (``release_called``): every call refuses its arrays,
    tensors and views from now on."""
    buf = entry[0]()
    if buf is not None:
        buf._release_called = True


def check_instance(addr, name):
    """Raises AclshmemInvalid when ``addr`` lies in a live array/tensor of another instance than
    the current one (memory of no tracked block passes: local buffers, Buffers)."""
    with _records:
        owner = next((b.instance_id for b in _books.values() if b.holding(addr) is not None), None)
    if owner is None:
        return
    current = _current_instance_id()
    if owner != current:
        raise AclshmemInvalid("%s was allocated by instance %d; the current instance is %d" % (name, owner, current))


def pending_frees():
    """Start addresses of the current instance's collected blocks waiting for finalize or
    :func:`release_collected`."""
    instance_id = _current_instance_id()
    with _records:
        book = _books.get(instance_id)
        return list(book.pending) if book is not None else []


def release_collected(max_blocks=4096):
    """Collective over the PEs of the current instance (every one calls it): frees the current
    instance's collected blocks that every PE has collected, in the same order everywhere; blocks
    only some PEs have collected stay pending, and so do other instances' (each is freed by its own
    instance: call this with that instance current). Returns how many blocks were freed."""
    import ctypes

    with _instance_lock.shared():
        instance_id = _current_instance_id()
        _require_init("release_collected")
        with _records:
            book = _books.get(instance_id)
            pending = list(book.pending) if book is not None else []
        npes = _p.pe_count()
        base = _p.aclshmemx_get_heap_base()
        mine = sorted(a - base for a in pending)[:max_blocks]
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
            with _records:
                book.pending.remove(base + off)
            _p.aclshmem_free(base + off)
        return len(common)


def _drop_instance(instance_id):
    """Forgets the records of ``instance_id``: its heap went with its finalize (or it is being
    initialised afresh). Blocks collected later find no record and are ignored."""
    with _records:
        book = _books.pop(instance_id, None)
        if book is not None:
            for entry in book.live.values():
                _mark_freed(entry)
            book.live.clear()
            del book.starts[:]
            del book.pending[:]


def array(shape, dtype="float32"):
    """Collective: a C-contiguous NumPy array of ``shape``/``dtype`` in symmetric memory, zero copy.
    Free it with :func:`free_array` (collective)."""
    np = _np()
    shape, n = _count(shape)
    # every check before the collective allocation: a failure after it would lose the block
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise AclshmemInvalid("dtype must be a NumPy dtype, got %r (%s)" % (dtype, exc)) from None
    if dt.hasobject:
        raise AclshmemInvalid("dtype %s holds Python objects, which cannot live in symmetric memory" % dt)
    buf = alloc(n * dt.itemsize, "array")
    return np.frombuffer(buf, dtype=dt, count=n).reshape(shape)


def _start(arr):
    return arr.__array_interface__["data"][0]


def free_array(arr):
    """Collective: frees an array made by :func:`array` (pass the array itself, not a view)."""
    if not hasattr(arr, "__array_interface__"):
        raise AclshmemInvalid("free_array takes a NumPy array, got %s" % type(arr).__name__)
    release(_start(arr), arr, "arr")


def get_peer_array(arr, pe):
    """A view of PE ``pe``'s copy of the symmetric array ``arr`` (same node): same shape and dtype."""
    np = _np()
    if not isinstance(arr, np.ndarray):
        raise AclshmemInvalid("get_peer_array takes a NumPy array, got %s" % type(arr).__name__)
    pe = _check_pe(pe, "pe")
    if not arr.flags["C_CONTIGUOUS"]:
        raise AclshmemInvalid("get_peer_array needs a C-contiguous array")
    check_live(arr, "arr")
    addr = _p.aclshmem_ptr(_start(arr), pe)
    if addr == 0:
        raise AclshmemError("PE %d's copy is not directly addressable from this process" % pe)
    buf = peer_buffer(addr, max(arr.nbytes, 1), _root(arr))
    return np.frombuffer(buf, dtype=arr.dtype, count=arr.size).reshape(arr.shape)


def peer_buffer(addr, length, root):
    """A Buffer over a peer's copy: a view of ``root`` (the Buffer of the array or tensor) when
    known, so that it is refused once that memory is freed."""
    if root is None:
        return Buffer(addr, length)
    return Buffer._borrowed(addr, length, root.mem_type, root)
