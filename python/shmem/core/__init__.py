"""``shmem.core``: the high-level, nvshmem4py-like API (spec host-api.md §13.2), plus NumPy arrays
and PyTorch CPU tensors over symmetric memory.

Streams: an ``int`` ACL stream handle (see :mod:`shmem.streams`), 0 = the library's internal
stream. Without an ACL runtime loaded in the process, work on stream 0 runs inline.
"""

import os

from .. import _pyshmem as _p
from . import direct  # noqa: F401  (not re-exported, as in the original)
from .utils import AclshmemError, AclshmemInvalid, Buffer, logger, setup_aclshmem_logger
from ._array import array, free_array, get_peer_array, release_collected
from ._tensor import tensor, free_tensor, get_peer_tensor

UniqueID = _p.UniqueId

__all__ = ["get_version", "get_unique_id", "init", "finalize", "buffer", "free", "get_peer_buffer",
           "put", "get", "put_signal", "signal_op", "signal_wait", "quiet", "barrier_all", "my_pe",
           "n_pes", "array", "free_array", "release_collected", "get_peer_array", "tensor", "free_tensor", "get_peer_tensor",
           "Buffer", "AclshmemError", "AclshmemInvalid", "UniqueID", "setup_aclshmem_logger"]

#: Heap size used by init(initializer_method="env") when neither mem_size nor the environment names one.
DEFAULT_MEM_SIZE = 64 << 20


def get_version():
    major, minor = _p.aclshmem_info_get_version()
    return "libaclshmem_version=%d.%d" % (major, minor)


def get_unique_id(empty=False):
    """The 136 bytes of a new unique id (call on one PE, broadcast, pass to :func:`init`)."""
    try:
        return _p.aclshmem_get_unique_id()
    except RuntimeError as exc:
        raise AclshmemError(str(exc)) from exc


def _uid_bytes(uid):
    if isinstance(uid, _p.UniqueId):
        return uid.to_bytes()
    if hasattr(uid, "numpy"):  # a torch tensor holding the bytes
        uid = uid.numpy()
    if hasattr(uid, "tobytes"):
        return uid.tobytes()
    return bytes(uid)


def init(device=None, uid=None, rank=None, nranks=None, mpi_comm=None, initializer_method="", mem_size=None):
    """Initialises this PE (collective).

    ``initializer_method``: ``"uid"`` (needs ``uid`` from :func:`get_unique_id` broadcast by the
    caller, ``rank``, ``nranks``, ``mem_size``), ``"env"`` (the variables of aclshmrun, torchrun or
    mpirun), ``"mpi"`` (MPI_COMM_WORLD through the library's MPI bootstrap; rank and size from
    ``rank``/``nranks``, else ``mpi_comm`` (an mpi4py communicator, only asked for its rank and
    size), else the mpirun environment). ``""`` means ``"uid"`` when ``uid`` is given, else
    ``"env"``. ``device`` is accepted and ignored.
    The logger "aclshmem" gets its level from SHMEM_LOG_LEVEL (default ERROR).
    """
    setup_aclshmem_logger()
    method = initializer_method or ("uid" if uid is not None else "env")
    if mem_size is not None and (not isinstance(mem_size, int) or mem_size <= 0):
        raise AclshmemInvalid("mem_size must be a positive int, got %r" % (mem_size,))
    if method == "uid":
        if uid is None or rank is None or nranks is None or mem_size is None:
            raise AclshmemInvalid("init(initializer_method='uid') needs uid, rank, nranks and mem_size")
        data = _uid_bytes(uid)
        if len(data) < _p.UNIQUE_ID_LEN:
            raise AclshmemInvalid("uid must hold at least %d bytes, got %d" % (_p.UNIQUE_ID_LEN, len(data)))
        if not (0 <= rank < nranks):
            raise AclshmemInvalid("need 0 <= rank < nranks, got rank=%r nranks=%r" % (rank, nranks))
        logger.info("init: unique id, rank %d of %d, %d bytes", rank, nranks, mem_size)
        rc = _p.aclshmem_init_using_unique_id(rank, nranks, mem_size, data)
    elif method == "env":
        try:
            attr = _p.aclshmemx_set_attr_from_env()
        except RuntimeError as exc:
            raise AclshmemInvalid(str(exc)) from exc
        if mem_size is not None:
            attr.local_mem_size = mem_size
        elif attr.local_mem_size == 0:
            attr.local_mem_size = DEFAULT_MEM_SIZE
        logger.info("init: environment, rank %d of %d", attr.my_rank, attr.n_ranks)
        rc = _p.aclshmem_init(attr)
    elif method == "mpi":
        if rank is None or nranks is None:
            if mpi_comm is not None:
                rank, nranks = mpi_comm.Get_rank(), mpi_comm.Get_size()
            else:
                rank, nranks = _mpi_rank_size()
        rc = _p.aclshmemx_init_with_mpi(rank, nranks, mem_size or DEFAULT_MEM_SIZE)
    else:
        raise AclshmemInvalid("initializer_method must be 'uid', 'env' or 'mpi', got %r" % (initializer_method,))
    if rc != 0:
        raise AclshmemError("aclshmem init (%s) failed with code %d" % (method, rc))


def _mpi_rank_size():
    for r, sz in (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"), ("PMI_RANK", "PMI_SIZE"),
                  ("PMIX_RANK", "OMPI_COMM_WORLD_SIZE")):
        if os.environ.get(r) and os.environ.get(sz):
            return int(os.environ[r]), int(os.environ[sz])
    raise AclshmemInvalid("init(initializer_method='mpi'): not started by mpirun (no OMPI_COMM_WORLD_RANK/"
                          "PMI_RANK in the environment); pass rank/nranks or mpi_comm")


def finalize():
    """Collective. Arrays, tensors and buffers over symmetric memory must not be used afterwards."""
    from . import _array

    _array._forget_all()
    rc = _p.aclshmem_finalize()
    if rc != 0:
        raise AclshmemError("aclshmem_finalize failed with code %d" % rc)


def my_pe():
    return _p.my_pe()


def n_pes():
    return _p.pe_count()


def barrier_all():
    _p.aclshmem_barrier_all()


def buffer(size, release=False, except_on_del=True):
    """A collective symmetric allocation of ``size`` bytes as a :class:`Buffer`."""
    if not isinstance(size, int) or size <= 0:
        raise AclshmemInvalid("buffer size must be a positive int, got %r" % (size,))
    try:
        addr = _p.aclshmem_malloc(size)
    except RuntimeError as exc:
        raise AclshmemError("aclshmem_malloc(%d) failed: %s" % (size, exc)) from exc
    return Buffer(addr, size)


def free(buf):
    """Collective: frees a :class:`Buffer` made by :func:`buffer`."""
    if not isinstance(buf, Buffer):
        raise AclshmemInvalid("free() takes a Buffer, got %s" % type(buf).__name__)
    _p.aclshmem_free(buf.addr)


def get_peer_buffer(buf, pe):
    """The same allocation on PE ``pe`` (same node), as a Buffer this process can read and write."""
    _check_pe(pe)
    addr = _p.aclshmem_ptr(_addr(buf), pe)
    if addr == 0:
        raise AclshmemError("PE %d's copy of 0x%x is not directly addressable from here" % (pe, _addr(buf)))
    return Buffer(addr, _nbytes(buf))


# -- helpers: anything with an address and a size -----------------------------------------------

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


def _check_pe(pe):
    if not isinstance(pe, int) or pe < 0 or pe >= _p.pe_count():
        raise AclshmemInvalid("remote_pe must be in 0..%d, got %r" % (_p.pe_count() - 1, pe))


def _stream(stream, required=False, what=""):
    if stream is None:
        if required:
            raise AclshmemInvalid("%s needs a stream (an int handle, 0 = the internal stream)" % what)
        return 0
    if hasattr(stream, "stream_id") and not isinstance(stream, int):  # a stream object with a handle
        stream = stream.stream_id
    if not isinstance(stream, int) or stream < 0:
        raise AclshmemInvalid("stream must be an int handle, got %r" % (stream,))
    return stream


def _sizes(dst, src):
    n = _nbytes(src)
    if _nbytes(dst) < n:
        raise AclshmemInvalid("destination (%d bytes) is smaller than source (%d bytes)" % (_nbytes(dst), n))
    return n


def put(dst, src, remote_pe=-1, stream=None):
    """Stream-ordered copy of all of ``src`` (local) into symmetric ``dst`` on ``remote_pe``."""
    _check_pe(remote_pe)
    n = _sizes(dst, src)
    _p.aclshmemx_putmem_on_stream(_addr(dst), _addr(src), n, remote_pe, _stream(stream))


def get(dst, src, remote_pe=-1, stream=None):
    """Stream-ordered copy of symmetric ``src`` on ``remote_pe`` into local ``dst``."""
    _check_pe(remote_pe)
    n = _sizes(dst, src)
    _p.aclshmemx_getmem_on_stream(_addr(dst), _addr(src), n, remote_pe, _stream(stream))


def _check_signal(signal_var):
    if _nbytes(signal_var) < 4:
        raise AclshmemInvalid("a signal variable needs at least 4 bytes")


def put_signal(dst, src, signal_var, signal_val, signal_operation, remote_pe=-1, stream=None):
    """Copies ``src`` into ``dst`` on ``remote_pe``, then updates its 32-bit ``signal_var``
    (``SignalOp.SIGNAL_SET`` / ``SIGNAL_ADD``); complete at return (``stream`` is ignored, as in
    the original)."""
    _check_pe(remote_pe)
    _check_signal(signal_var)
    n = _sizes(dst, src)
    _p.aclshmemx_putmem_signal(_addr(dst), _addr(src), n, _addr(signal_var), int(signal_val),
                               int(signal_operation), remote_pe)


def signal_op(signal_var, signal_val, signal_operation, remote_pe=-1, stream=None):
    """Stream-ordered update of the 32-bit signal word on ``remote_pe``; ``stream`` is required."""
    s = _stream(stream, required=True, what="signal_op")
    _check_pe(remote_pe)
    _check_signal(signal_var)
    _p.aclshmemx_signal_op_on_stream(_addr(signal_var), int(signal_val), int(signal_operation), remote_pe, s)


def signal_wait(signal_var, signal_val, signal_operation, stream=None):
    """Queues on ``stream`` a wait until the local signal word satisfies ``signal_operation``
    (a ``ComparisonType``) against ``signal_val``; returns at once. ``stream`` is required."""
    s = _stream(stream, required=True, what="signal_wait")
    _check_signal(signal_var)
    cmp = int(signal_operation)
    if not 0 <= cmp <= 5:
        raise AclshmemInvalid("signal_wait needs a ComparisonType, got %r" % (signal_operation,))
    _p.aclshmemx_signal_wait_until_on_stream(_addr(signal_var), cmp, int(signal_val), s)


def quiet(stream=None):
    """Queues a quiet on ``stream`` (required): work issued before it completes first."""
    s = _stream(stream, required=True, what="quiet")
    _p.aclshmemx_quiet_on_stream(s)
