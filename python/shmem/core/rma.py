"""Stream-ordered RMA and signals of :mod:`shmem.core`.

Every argument is checked before anything is queued: a bad one raises AclshmemInvalid and queues
nothing (a bad signal word that reached a stream would only fail when the stream runs). Buffers are
:class:`Buffer` objects (their memory must not have been freed, and they must belong to the current
instance), or NumPy arrays / torch CPU tensors (C-contiguous) over symmetric or local memory (not a
freed array or tensor, nor a view of one). The remote side (``dst`` of ``put``/``put_signal``,
``src`` of ``get``, the signal word of ``put_signal``/``signal_op``) must be symmetric memory.
A signal word is 4-byte aligned: an array or tensor of exactly 4 bytes (one int32), or the first 4
bytes of a Buffer. PEs are ints or NumPy integers, not bools.
"""

import operator
import sys

from .. import _pyshmem as _p
from . import _array
from .direct import ComparisonType, SignalOp
from .utils import AclshmemInvalid, Buffer, _check_pe, _instance_lock, _validate_buffer_instance, _validate_stream

__all__ = ["put_signal", "signal_op", "signal_wait", "put", "get", "quiet"]

_SIGNAL_WORD = 4


def _addr(obj):
    if isinstance(obj, Buffer):
        return obj.addr
    if hasattr(obj, "__array_interface__"):
        return obj.__array_interface__["data"][0]
    if hasattr(obj, "data_ptr"):
        return obj.data_ptr()
    raise AclshmemInvalid("expected a Buffer, a NumPy array or a torch tensor, got %s" % type(obj).__name__)


def _nbytes(obj):
    if isinstance(obj, Buffer):
        return obj.length
    if hasattr(obj, "__array_interface__"):
        if not obj.flags["C_CONTIGUOUS"]:
            raise AclshmemInvalid("arrays passed to shmem.core must be C-contiguous")
        return obj.nbytes
    if hasattr(obj, "data_ptr"):
        torch = sys.modules.get("torch")
        if torch is not None and getattr(obj, "layout", torch.strided) != torch.strided:
            raise AclshmemInvalid("tensors passed to shmem.core must be dense (strided), got a %s tensor" % obj.layout)
        if not obj.is_contiguous() or obj.device.type != "cpu":
            raise AclshmemInvalid("tensors passed to shmem.core must be contiguous CPU tensors")
        return obj.numel() * obj.element_size()
    raise AclshmemInvalid("expected a Buffer, a NumPy array or a torch tensor, got %s" % type(obj).__name__)


def _check_buffer(obj, name):
    """Size of ``obj``; a Buffer, array or tensor must be usable (not freed, nor a view of freed
    memory) and belong to the current instance."""
    if isinstance(obj, Buffer):
        obj._ensure_usable()
        _validate_buffer_instance(obj, name)
    n = _nbytes(obj)
    if not isinstance(obj, Buffer):
        _array.check_live(obj, name)
        _array.check_instance(_addr(obj), name)
    return n


def _check_symmetric(obj, name, nbytes):
    """The ``nbytes`` the call names at ``obj`` (the remote side of a transfer, a signal word) must
    lie in this PE's symmetric heap: on the remote PE the call uses the same offset of its heap.
    Checked after the PE (before init nothing is symmetric)."""
    if nbytes == 0:
        return
    addr, me = _addr(obj), _p.my_pe()
    if not _p.aclshmem_ptr(addr, me) or not _p.aclshmem_ptr(addr + nbytes - 1, me):
        raise AclshmemInvalid("%s is not symmetric: its %d bytes at 0x%x are not inside the symmetric heap (allocate "
                              "it with core.array, core.tensor or core.buffer)" % (name, nbytes, addr))


def _check_writable(obj, name):
    """A NumPy array written by the call must be writeable (a read-only view, of ``bytes`` say)."""
    if hasattr(obj, "__array_interface__") and not obj.flags["WRITEABLE"]:
        raise AclshmemInvalid("%s is a read-only array" % name)


def _sizes(dst, src):
    d, s = _check_buffer(dst, "dst"), _check_buffer(src, "src")
    if d < s:
        raise AclshmemInvalid("dst (%d bytes) is smaller than src (%d bytes)" % (d, s))
    return s


def _check_signal(signal_var):
    n = _check_buffer(signal_var, "signal_var")
    if isinstance(signal_var, Buffer):
        # untyped bytes: the word is the first 4
        if n < _SIGNAL_WORD:
            raise AclshmemInvalid("signal_var must hold at least %d bytes, got %d" % (_SIGNAL_WORD, n))
    elif n != _SIGNAL_WORD:
        # a typed array or tensor names all of its elements: an int64 or two int32 are not one word
        raise AclshmemInvalid("signal_var must be one %d-byte element (an int32 array or tensor of one element), got "
                              "%d bytes" % (_SIGNAL_WORD, n))
    if _addr(signal_var) % _SIGNAL_WORD:
        raise AclshmemInvalid("signal_var must be %d-byte aligned, got 0x%x" % (_SIGNAL_WORD, _addr(signal_var)))


def _enum_arg(value, enum, what):
    """``value`` as an int: a member of ``enum``, or a plain int equal to one of its values (a
    member of another enum, a bool, or any other value raises AclshmemInvalid)."""
    if isinstance(value, enum):
        return int(value)
    if type(value) is int and value in {int(m) for m in enum}:
        return value
    raise AclshmemInvalid("%s must be one of %s, got %r" % (what, ", ".join(str(m) for m in enum), value))


def _check_value(value, name):
    """A 32-bit signal value: an int or anything with ``__index__`` (a NumPy integer), not a bool."""
    if isinstance(value, bool):
        raise AclshmemInvalid("%s must be an int, got %r" % (name, value))
    try:
        v = operator.index(value)
    except TypeError:
        raise AclshmemInvalid("%s must be an int, got %r" % (name, value)) from None
    if not -(1 << 31) <= v < (1 << 31):
        raise AclshmemInvalid("%s must fit 32 bits, got %d" % (name, v))
    return v


def put_signal(dst, src, signal_var, signal_val, signal_operation, remote_pe=-1, stream=None):
    """Copies all of ``src`` into ``dst`` on ``remote_pe``, then updates its 32-bit ``signal_var``
    (``SignalOp.SIGNAL_SET`` / ``SIGNAL_ADD``); complete at return (``stream`` is ignored, as in
    the original)."""
    with _instance_lock.shared():
        n = _sizes(dst, src)
        _check_signal(signal_var)
        pe = _check_pe(remote_pe)
        _check_symmetric(dst, "dst", n)
        _check_symmetric(signal_var, "signal_var", _SIGNAL_WORD)
        op = _enum_arg(signal_operation, SignalOp, "signal_operation")
        val = _check_value(signal_val, "signal_val")
        _p.aclshmemx_putmem_signal(_addr(dst), _addr(src), n, _addr(signal_var), val, op, pe)


def signal_op(signal_var, signal_val, signal_operation, remote_pe=-1, stream=None):
    """Queues on ``stream`` (required; 0 = the default stream) an update of the 32-bit signal word
    on ``remote_pe`` (``SignalOp``); returns at once."""
    with _instance_lock.shared():
        _check_signal(signal_var)
        pe = _check_pe(remote_pe)
        _check_symmetric(signal_var, "signal_var", _SIGNAL_WORD)
        op = _enum_arg(signal_operation, SignalOp, "signal_operation")
        val = _check_value(signal_val, "signal_val")
        s = _validate_stream(stream, allow_none=False)
        _p.aclshmemx_signal_op_on_stream(_addr(signal_var), val, op, pe, s)


def signal_wait(signal_var, signal_val, signal_operation, stream=None):
    """Queues on ``stream`` (required) a wait until the local signal word satisfies
    ``signal_operation`` (a ``ComparisonType``) against ``signal_val``; returns at once."""
    with _instance_lock.shared():
        _check_signal(signal_var)
        cmp = _enum_arg(signal_operation, ComparisonType, "signal_operation")
        val = _check_value(signal_val, "signal_val")
        s = _validate_stream(stream, allow_none=False)
        _p.aclshmemx_signal_wait_until_on_stream(_addr(signal_var), cmp, val, s)


def put(dst, src, remote_pe=-1, stream=None):
    """Queues on ``stream`` (None or 0 = the default stream) a copy of all of ``src`` (local) into
    symmetric ``dst`` on ``remote_pe``."""
    with _instance_lock.shared():
        n = _sizes(dst, src)
        pe = _check_pe(remote_pe)
        _check_symmetric(dst, "dst", n)
        s = _validate_stream(stream, allow_none=True)
        _p.aclshmemx_putmem_on_stream(_addr(dst), _addr(src), n, pe, s)


def get(dst, src, remote_pe=-1, stream=None):
    """Queues on ``stream`` (None or 0 = the default stream) a copy of symmetric ``src`` on
    ``remote_pe`` into local ``dst``."""
    with _instance_lock.shared():
        n = _sizes(dst, src)
        _check_writable(dst, "dst")
        pe = _check_pe(remote_pe)
        _check_symmetric(src, "src", n)
        s = _validate_stream(stream, allow_none=True)
        _p.aclshmemx_getmem_on_stream(_addr(dst), _addr(src), n, pe, s)


def quiet(stream=None):
    """Queues a quiet on ``stream`` (required): work issued before it completes first."""
    with _instance_lock.shared():
        s = _validate_stream(stream, allow_none=False)
        _p.aclshmemx_quiet_on_stream(s)
