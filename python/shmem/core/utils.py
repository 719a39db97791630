"""``Buffer``, ``MemType``, the exceptions, the logger and the argument checks shared by the modules
of :mod:`shmem.core`.

Instances: the library has one current instance per process, and every call acts on the one that
is current when it starts. Every call of :mod:`shmem.core` that touches the runtime holds
``_instance_lock`` shared; an instance switch (``set_instance``, a ``multi_instance`` block, ``init``,
``finalize``) holds it alone, so no call runs against another instance than the one it checked its
arguments against, and another thread's call cannot run inside a ``multi_instance`` block. Calls do
not exclude each other: a thread blocked in a barrier or a wait never stops the call of another
thread that it may be waiting for.
"""

import ctypes
import logging
import numbers
import os
import threading
from contextlib import contextmanager

from .. import _pyshmem as _p
from .._pyshmem import AclshmemError, AclshmemInvalid

__all__ = ["Buffer", "MemType", "AclshmemError", "AclshmemInvalid", "setup_aclshmem_logger", "logger"]

MemType = _p.MemType

logger = logging.getLogger("aclshmem")

#: Level names ``setup_aclshmem_logger(log_level=...)`` takes, in any case (Python's names too).
_LEVELS = {"DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING, "WARNING": logging.WARNING,
           "ERROR": logging.ERROR, "CRITICAL": logging.CRITICAL, "FATAL": logging.CRITICAL}

#: The values of SHMEM_LOG_LEVEL that count (spec 10): exactly these words, upper case, as the C
#: library reads the variable (crates/config: an enum, case-sensitive). Any other text is ignored
#: there and so here: ``SHMEM_LOG_LEVEL=info`` or ``=3`` must not make one layer log and the other
#: fail.
_ENV_LEVELS = ("DEBUG", "INFO", "WARN", "ERROR", "FATAL")

#: Instance ids run from 0 to _MAX_INSTANCE_COUNT - 1.
_MAX_INSTANCE_COUNT = 255
_INTPTR_MAX = (1 << (8 * ctypes.sizeof(ctypes.c_void_p) - 1)) - 1
_SIZE_T_MAX = (1 << (8 * ctypes.sizeof(ctypes.c_size_t))) - 1

class _InstanceLock:
    """Calls against instance switches (see the module's doc): ``with _instance_lock.shared():``
    around a call, ``with _instance_lock.exclusive():`` around a switch.

    Shared holds never wait for each other, only for a switch in progress; a switch waits until
    the other threads' calls in progress have returned. A waiting switch does not stop new calls:
    the call it would stop may be the one that ends a wait it waits for. Both are re-entrant per
    thread: the thread inside a ``multi_instance`` block makes its calls, and a thread inside a
    call may switch once the other threads' calls have returned."""

    def __init__(self):
        self._reset()

    def _reset(self):
        self._cond = threading.Condition(threading.Lock())
        self._owner = None  # the thread that holds it alone
        self._depth = 0  # how often it does
        self._shared = {}  # thread -> how often it holds it shared

    @contextmanager
    def shared(self):
        me = threading.get_ident()
        with self._cond:
            while self._owner is not None and self._owner != me:
                self._cond.wait()
            self._shared[me] = self._shared.get(me, 0) + 1
        try:
            yield
        finally:
            with self._cond:
                left = self._shared[me] - 1
                if left:
                    self._shared[me] = left
                else:
                    del self._shared[me]
                    self._cond.notify_all()

    @contextmanager
    def exclusive(self):
        me = threading.get_ident()
        with self._cond:
            if self._owner == me:
                self._depth += 1
            else:
                while self._owner is not None or any(t != me for t in self._shared):
                    self._cond.wait()
                self._owner, self._depth = me, 1
        try:
            yield
        finally:
            with self._cond:
                self._depth -= 1
                if not self._depth:
                    self._owner = None
                    self._cond.notify_all()


#: Orders the calls of shmem.core against instance switches (see the module's doc).
_instance_lock = _InstanceLock()
# a fork()ed child has only the forking thread: the holds of the others died with them
os.register_at_fork(after_in_child=_instance_lock._reset)


def setup_aclshmem_logger(log_level=None, log_file_path=None):
    """Configures the ``aclshmem`` logger, output to ``log_file_path`` or stderr. Returns the logger.

    Level: ``SHMEM_LOG_LEVEL`` when it holds one of DEBUG, INFO, WARN, ERROR, FATAL (exactly, upper
    case), which overrides the caller's level as it does for the C library (spec 10); any other
    value of the variable is ignored. Otherwise ``log_level`` (a level name in any case, Python's
    WARNING and CRITICAL included; an unknown one raises AclshmemInvalid), default ERROR."""
    env = os.environ.get("SHMEM_LOG_LEVEL")
    name = env if env in _ENV_LEVELS else (log_level or "ERROR").upper()
    level = _LEVELS.get(name)
    if level is None:
        raise AclshmemInvalid("unknown log level %r (one of %s)" % (log_level, ", ".join(sorted(_LEVELS))))
    logger.setLevel(level)
    for h in list(logger.handlers):
        if getattr(h, "_aclshmem", False):
            logger.removeHandler(h)
    handler = logging.FileHandler(log_file_path) if log_file_path else logging.StreamHandler()
    handler._aclshmem = True
    handler.setFormatter(logging.Formatter("[aclshmem %(levelname)s] %(message)s"))
    logger.addHandler(handler)
    return logger


def _is_int(value):
    """An int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def _check_pe(pe, name="remote_pe"):
    """The PE number ``pe`` of the current instance as an int: an int or a NumPy integer (what
    ``numpy.arange`` or ``numpy.argmin`` gives), not a bool, in ``0..n_pes - 1``; else
    AclshmemInvalid."""
    if not isinstance(pe, numbers.Integral) or isinstance(pe, bool):
        raise AclshmemInvalid("%s must be an int, got %s %r" % (name, type(pe).__name__, pe))
    pe = int(pe)
    n = _p.pe_count()
    if n <= 0:
        raise AclshmemInvalid("%s cannot be checked: the library is not initialised" % name)
    if not 0 <= pe < n:
        raise AclshmemInvalid("%s must be in 0..%d, got %d" % (name, n - 1, pe))
    return pe


def _validate_instance_id(instance_id):
    """Raises AclshmemInvalid unless ``instance_id`` is an int (not a bool) in 0..254."""
    if not _is_int(instance_id) or not 0 <= instance_id < _MAX_INSTANCE_COUNT:
        raise AclshmemInvalid("instance_id must be an int in 0..%d, got %r" % (_MAX_INSTANCE_COUNT - 1, instance_id))


def _validate_stream(stream, *, allow_none):
    """The stream handle as an int (``None`` -> 0 when ``allow_none``). A stream object with a
    ``stream_id`` (:mod:`shmem.streams`) gives its handle. Anything but a non-negative int (a bool
    included) raises AclshmemInvalid."""
    if stream is None:
        if allow_none:
            return 0
        raise AclshmemInvalid("a stream is required (a non-negative int handle, 0 = the default stream)")
    if not isinstance(stream, int) and hasattr(stream, "stream_id"):
        stream = stream.stream_id
    if not _is_int(stream) or stream < 0 or stream > _SIZE_T_MAX:
        raise AclshmemInvalid("stream must be a non-negative int handle, got %r" % (stream,))
    return stream


def _current_instance_id():
    ctx = _p.aclshmemx_instance_ctx_get()
    if ctx is None:
        raise AclshmemError("the library has no current instance")
    return ctx.id


def _validate_buffer_instance(buf, name):
    """Raises AclshmemInvalid when ``buf`` was allocated by another instance than the current one."""
    owner = buf.instance_id
    if owner is None:
        return
    current = _current_instance_id()
    if owner != current:
        raise AclshmemInvalid("%s was allocated by instance %d; the current instance is %d" % (name, owner, current))


class Buffer(_p.Buffer):
    """``length`` bytes at ``addr`` of the ``mem_type`` heap, with the buffer protocol
    (``memoryview(buf)``, ``numpy.frombuffer(buf, ...)``, ``torch.frombuffer(buf, ...)``: zero copy).

    ``addr`` must be an int (not a bool) in ``1..INTPTR_MAX``, ``length`` one in ``1..SIZE_MAX``
    (else AclshmemInvalid); ``mem_type`` a :class:`MemType` (else TypeError).

    A Buffer made directly describes memory it does not own: ``owned`` is False, ``instance_id``
    None, and :func:`shmem.core.free` refuses it. :func:`shmem.core.buffer`, ``calloc`` and
    ``align`` return owning Buffers (``owned`` True, ``instance_id`` = the instance that allocated
    them); :func:`shmem.core.get_peer_buffer` returns a borrowed view of one, which shares its
    owner's ``instance_id`` and ``release_called``. ``release_called`` turns True when
    :func:`shmem.core.free` is called for the allocation (for the Buffer under an array or tensor:
    ``free_array``/``free_tensor``, or the finalize of its instance); it is never reset. A Buffer
    whose allocation was freed is refused by every call of :mod:`shmem.core`, and so is every array
    or tensor over it; it no longer exports its memory (``memoryview`` raises AclshmemInvalid).
    """

    __slots__ = ("mem_type", "_owned", "_release_called", "_owner", "_instance_id")

    def __init__(self, addr, length, mem_type=MemType.DEVICE_SIDE):
        # addr and length were checked by the base class
        self._setup(mem_type, False, None, None)

    def _setup(self, mem_type, owned, owner, instance_id):
        if not isinstance(mem_type, MemType):
            raise TypeError("mem_type must be a MemType, got %r" % (mem_type,))
        if owned:
            _validate_instance_id(instance_id)
        elif owner is not None:
            if not isinstance(owner, Buffer):
                raise TypeError("owner must be a Buffer or None")
            instance_id = owner.instance_id
        elif instance_id is not None:
            raise ValueError("a Buffer that owns nothing has no allocating instance")
        self.mem_type = mem_type
        self._owned = owned
        self._release_called = False
        self._owner = owner
        self._instance_id = instance_id

    @classmethod
    def _owning(cls, addr, length, mem_type, instance_id):
        """An owning Buffer (for the allocation functions)."""
        obj = cls.__new__(cls, addr, length)
        obj._setup(mem_type, True, None, instance_id)
        return obj

    @classmethod
    def _borrowed(cls, addr, length, mem_type, owner):
        """A non-owning view tied to the owning Buffer ``owner``."""
        if not isinstance(owner, Buffer):
            raise TypeError("owner must be a Buffer")
        obj = cls.__new__(cls, addr, length)
        obj._setup(mem_type, False, owner, None)
        return obj

    @property
    def owned(self):
        """Whether this Buffer may be passed to :func:`shmem.core.free`."""
        return self._owned

    @property
    def instance_id(self):
        """The instance that allocated the memory (None for memory described directly)."""
        return self._instance_id

    @property
    def release_called(self):
        """Whether :func:`shmem.core.free` was called for this allocation (or its owner's)."""
        if self._release_called:
            return True
        return self._owner is not None and self._owner.release_called

    def _ensure_usable(self):
        if self.release_called:
            raise AclshmemInvalid("the Buffer's memory was freed")

    def __eq__(self, other):
        if not isinstance(other, Buffer):
            return NotImplemented
        return (self.addr, self.length, self.mem_type) == (other.addr, other.length, other.mem_type)

    def __hash__(self):
        return hash((self.addr, self.length, int(self.mem_type)))

    def __repr__(self):
        return "Buffer(addr=0x%x, length=%d, mem_type=%s, owned=%s, instance_id=%s, release_called=%s)" % (
            self.addr, self.length, self.mem_type, self.owned, self.instance_id, self.release_called)
