"""Symmetric allocations of :mod:`shmem.core` as :class:`Buffer` objects."""

import threading

from .. import _pyshmem as _p
from .utils import (AclshmemError, AclshmemInvalid, Buffer, MemType, _SIZE_T_MAX, _check_pe, _current_instance_id,
                    _instance_lock, _is_int, _validate_buffer_instance)

__all__ = ["buffer", "calloc", "align", "free", "get_peer_buffer", "Buffer", "MemType"]

# Makes the test and the claim of a free one step: calls of several threads run at once.
_claims = threading.Lock()


def _check_size(value, name):
    if not _is_int(value) or not 0 < value <= _SIZE_T_MAX:
        raise AclshmemInvalid("%s must be an int in 1..%d, got %r" % (name, _SIZE_T_MAX, value))


def _check_mem_type(mem_type):
    if not isinstance(mem_type, MemType):
        raise AclshmemInvalid("mem_type must be MemType.HOST_SIDE or MemType.DEVICE_SIDE, got %r" % (mem_type,))


def _allocate(what, call, length, mem_type):
    with _instance_lock.shared():
        instance_id = _current_instance_id()
        addr = call()
        if addr == 0:
            raise AclshmemError("%s failed (heap exhausted, not initialised, or sizes differ between PEs)" % what)
        return Buffer._owning(addr, length, mem_type, instance_id)


def buffer(size, release=False, except_on_del=True, mem_type=MemType.DEVICE_SIDE):
    """Collective: ``size`` bytes of the ``mem_type`` heap of the current instance, as an owning
    :class:`Buffer`. ``release`` and ``except_on_del`` are accepted and ignored. Raises
    AclshmemInvalid for a bad size or heap kind, AclshmemError when the allocation fails."""
    _check_size(size, "size")
    _check_mem_type(mem_type)
    return _allocate("allocating %d bytes" % size, lambda: _p.aclshmemx_malloc(size, mem_type), size, mem_type)


def calloc(count, size, mem_type=MemType.DEVICE_SIDE):
    """Collective: ``count * size`` zeroed bytes of the ``mem_type`` heap, as an owning Buffer."""
    _check_size(count, "count")
    _check_size(size, "size")
    _check_mem_type(mem_type)
    if count > _SIZE_T_MAX // size:
        raise AclshmemInvalid("count * size (%d * %d) does not fit a size_t" % (count, size))
    return _allocate("allocating %d zeroed elements of %d bytes" % (count, size),
                     lambda: _p.aclshmemx_calloc(count, size, mem_type), count * size, mem_type)


def align(alignment, size, mem_type=MemType.DEVICE_SIDE):
    """Collective: ``size`` bytes of the ``mem_type`` heap at a multiple of ``alignment`` (a power of
    two), as an owning Buffer."""
    _check_size(alignment, "alignment")
    _check_size(size, "size")
    _check_mem_type(mem_type)
    if alignment & (alignment - 1):
        raise AclshmemInvalid("alignment must be a power of two, got %d" % alignment)
    return _allocate("allocating %d bytes aligned to %d" % (size, alignment),
                     lambda: _p.aclshmemx_align(alignment, size, mem_type), size, mem_type)


def free(buf):
    """Collective: frees the allocation of an owning :class:`Buffer` (from :func:`buffer`,
    :func:`calloc` or :func:`align`) once. A Buffer made directly, a peer view, a second free (or
    one racing it in another thread) and a Buffer of another instance than the current one raise
    AclshmemInvalid and free nothing. ``release_called`` is set before the library is called and is
    never reset (the C call returns nothing to say whether it freed)."""
    with _instance_lock.shared():
        if not isinstance(buf, Buffer):
            raise AclshmemInvalid("free() takes a Buffer, got %s" % type(buf).__name__)
        if not buf.owned:
            raise AclshmemInvalid("this Buffer does not own its memory (made directly, or a peer view)")
        if buf.release_called:
            raise AclshmemInvalid("this Buffer was already freed")
        _validate_buffer_instance(buf, "buf")
        with _claims:
            if buf.release_called:
                raise AclshmemInvalid("this Buffer was already freed")
            # claimed before the library is called: a free racing it on another thread is refused
            buf._release_called = True
        _p.aclshmemx_free(buf.addr, buf.mem_type)


def get_peer_buffer(buf, pe):
    """The same allocation on PE ``pe`` (same node), as a Buffer this process can read and write.
    For an owning Buffer the result is a borrowed view of it (``owned`` False, its owner's
    ``instance_id``). Also takes a NumPy array or torch tensor over symmetric memory. Raises
    AclshmemInvalid for a bad argument, AclshmemError when the memory is not addressable from here."""
    from . import _array
    from .rma import _addr, _nbytes

    with _instance_lock.shared():
        if isinstance(buf, Buffer):
            buf._ensure_usable()
            _validate_buffer_instance(buf, "buf")
        else:
            _nbytes(buf)
            _array.check_live(buf, "buf")
        pe = _check_pe(pe, "pe")
        addr = _p.aclshmem_ptr(_addr(buf), pe)
        if addr == 0:
            raise AclshmemError("PE %d's copy of 0x%x is not directly addressable from here" % (pe, _addr(buf)))
        if isinstance(buf, Buffer) and buf.owned:
            return Buffer._borrowed(addr, buf.length, buf.mem_type, buf)
        if isinstance(buf, Buffer) and buf._owner is not None:
            return Buffer._borrowed(addr, buf.length, buf.mem_type, buf._owner)
        return _array.peer_buffer(addr, _nbytes(buf), _array._root(buf))
