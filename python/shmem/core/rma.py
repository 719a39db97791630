"""Stream-ordered RMA and signals of :mod:`shmem.core`.

Every argument is checked before anything is queued: a bad one raises AclshmemInvalid and queues
nothing (a bad signal word that reached a stream would only fail when the stream runs). Buffers are
:class:`Buffer` objects (their memory must not have been freed, and they must belong to the current
instance), or NumPy arrays / torch CPU tensors (C-contiguous) over symmetric or local memory.
"""

import operator

from .. import _pyshmem as _p
from . import _array
from .direct import ComparisonType, SignalOp
from .utils import AclshmemInvalid, Buffer, _instance_lock, _is_int, _validate_buffer_instance, _validate_stream

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
        if not obj.is_contiguous() or obj.device.type != "cpu":
            raise AclshmemInvalid("tensors passed to shmem.core must be contiguous CPU tensors")
        return obj.numel() * obj.element_size()
    raise AclshmemInvalid("expected a Buffer, a NumPy array or a torch tensor, got %s" % type(obj).__name__)


def _check_buffer(obj, name):
    """Size of ``obj``; a Buffer, array or tensor must be usable and belong to the current
    instance."""
    if isinstance(obj, Buffer):
        obj._ensure_usable()
        _validate_buffer_instance(obj, name)
    n = _nbytes(obj)
    if not isinstance(obj, Buffer):
        _array.check_instance(_addr(obj), name)
    return n


def _check_writable(obj, name):
    """A NumPy array written by the call must be writeable (a read-only view, of ``bytes`` say)."""
    if hasattr(obj, "__array_interface__") and not obj.flags["WRITEABLE"]:
        raise AclshmemInvalid("%s is a read-only array" % name)


def _check_pe(pe, name="remote_pe"):
    if not _is_int(pe):
        raise AclshmemInvalid("%s must be an int, got %r" % (name, pe))
    n = _p.pe_count()
    if n <= 0:
        raise AclshmemInvalid("%s cannot be checked: the library is not initialised" % name)
    if not 0 <= pe < n:
        raise AclshmemInvalid("%s must be in 0..%d, got %d" % (name, n - 1, pe))


def _sizes(dst, src):
    d, s = _check_buffer(dst, "dst"), _check_buffer(src, "src")
    if d < s:
        raise AclshmemInvalid("dst (%d bytes) is smaller than src (%d bytes)" % (d, s))
    return s


def _check_signal(signal_var):
    n = _check_buffer(signal_var, "signal_var")
    if n < _SIGNAL_WORD:
        raise AclshmemInvalid("signal_var must hold at least %d bytes, got %d" % (_SIGNAL_WORD, n))
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
        _check_pe(remote_pe)
        op = _enum_arg(signal_operation, SignalOp, "signal_operation")
        val = _check_value(signal_val, "signal_val")
        _p.aclshmemx_putmem_signal(_addr(dst), _addr(src), n, _addr(signal_var), val, op, remote_pe)


def signal_op(signal_var, signal_val, signal_operation, remote_pe=-1, stream=None):
    """Queues on ``stream`` (required; 0 = the default stream) an update of the 32-bit signal word
    on ``remote_pe`` (``SignalOp``); returns at once."""
    with _instance_lock.shared():
        _check_signal(signal_var)
        _check_pe(remote_pe)
        op = _enum_arg(signal_operation, SignalOp, "signal_operation")
        val = _check_value(signal_val, "signal_val")
        s = _validate_stream(stream, allow_none=False)
        _p.aclshmemx_signal_op_on_stream(_addr(signal_var), val, op, remote_pe, s)


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
        _check_pe(remote_pe)
        s = _validate_stream(stream, allow_none=True)
        _p.aclshmemx_putmem_on_stream(_addr(dst), _addr(src), n, remote_pe, s)


def get(dst, src, remote_pe=-1, stream=None):
    """Queues on ``stream`` (None or 0 = the default stream) a copy of symmetric ``src`` on
    ``remote_pe`` into local ``dst``."""
    with _instance_lock.shared():
        n = _sizes(dst, src)
        _check_writable(dst, "dst")
        _check_pe(remote_pe)
        s = _validate_stream(stream, allow_none=True)
        _p.aclshmemx_getmem_on_stream(_addr(dst), _addr(src), n, remote_pe, s)


def quiet(stream=None):
    """Queues a quiet on ``stream`` (required): work issued before it completes first."""
    with _instance_lock.shared():
        s = _validate_stream(stream, allow_none=False)
        _p.aclshmemx_quiet_on_stream(s)
