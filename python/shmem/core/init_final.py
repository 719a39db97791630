"""Version, unique ids, init and finalize of :mod:`shmem.core`."""

import os

from .. import _pyshmem as _p
from .utils import (AclshmemError, AclshmemInvalid, _current_instance_id, _instance_lock, _is_int,
                    _validate_instance_id, logger, setup_aclshmem_logger)

__all__ = ["get_unique_id", "init", "finalize", "get_version", "UniqueID"]

UniqueID = _p.UniqueId

#: Heap size used by init(initializer_method="env"/"mpi") when neither mem_size nor the environment names one.
DEFAULT_MEM_SIZE = 64 << 20


def get_version():
    """``"libaclshmem_version=<major>.<minor>"``."""
    major, minor = _p.aclshmem_info_get_version()
    return "libaclshmem_version=%d.%d" % (major, minor)


def get_unique_id(empty=False):
    """The 136 bytes of a new unique id (call on one PE, broadcast, pass to :func:`init`).
    ``empty`` is accepted and ignored. Raises AclshmemError on failure."""
    try:
        return _p.aclshmem_get_unique_id()
    except RuntimeError as exc:
        raise AclshmemError("generating a unique id failed: %s" % exc) from exc


def _uid_object(uid):
    """A UniqueId from a UniqueId, or from at least 136 bytes (bytes, bytearray, memoryview, a NumPy
    array or torch tensor holding them; only the first 136 are used)."""
    if isinstance(uid, _p.UniqueId):
        return uid
    if hasattr(uid, "numpy") and not isinstance(uid, (bytes, bytearray, memoryview)):  # a torch tensor
        uid = uid.numpy()
    try:
        data = uid.tobytes() if hasattr(uid, "tobytes") else bytes(uid)
    except TypeError as exc:
        raise AclshmemInvalid("uid must be a UniqueID or its bytes, got %s" % type(uid).__name__) from exc
    if isinstance(uid, (int, str)) or len(data) < _p.UNIQUE_ID_LEN:
        raise AclshmemInvalid("uid must be a UniqueID or at least %d bytes" % _p.UNIQUE_ID_LEN)
    return _p.UniqueId.from_bytes(data[:_p.UNIQUE_ID_LEN])


def _check_positive(name, value):
    if not _is_int(value) or value <= 0:
        raise AclshmemInvalid("%s must be a positive int, got %r" % (name, value))


def init(device=None, uid=None, rank=None, nranks=None, mpi_comm=None, initializer_method="", mem_size=None,
         instance_id=0):
    """Initialises instance ``instance_id`` (0..254; default 0) of this PE (collective) and makes it
    the current instance.

    ``initializer_method``: ``"uid"`` (needs ``uid`` from :func:`get_unique_id` broadcast by the
    caller, ``rank``, ``nranks``, ``mem_size``), ``"env"`` (the variables of aclshmrun, torchrun or
    mpirun; under an MPI launcher without a rendezvous address (a plain ``mpirun``: no
    ACLSHMEM_IP_PORT, MASTER_ADDR or MASTER_PORT) the library's MPI bootstrap, which needs none;
    heap size ``mem_size``, else ACLSHMEM_LOCAL_MEM_SIZE or its default), ``"mpi"`` (MPI_COMM_WORLD
    through the library's MPI bootstrap; rank and size from ``rank``/``nranks``, else ``mpi_comm``
    (an mpi4py communicator, only asked for its rank and size), else the mpirun environment).
    ``""`` means ``"uid"`` when ``uid`` is given, else ``"env"``. ``device`` is accepted and
    ignored.
    The logger "aclshmem" gets its level from SHMEM_LOG_LEVEL when that is one of DEBUG, INFO, WARN,
    ERROR, FATAL (other values are ignored, as the C library ignores them), else ERROR.
    Raises AclshmemInvalid for bad arguments, AclshmemError when the library's init fails.
    """
    from . import _array

    setup_aclshmem_logger()
    _validate_instance_id(instance_id)
    method = initializer_method or ("uid" if uid is not None else "env")
    if mem_size is not None:
        _check_positive("mem_size", mem_size)
    mpi_job = _mpi_job_without_address() if method == "env" else None
    if method == "uid":
        if uid is None or rank is None or nranks is None or mem_size is None:
            raise AclshmemInvalid("init(initializer_method='uid') needs uid, rank, nranks and mem_size")
        if not _is_int(rank):
            raise AclshmemInvalid("rank must be an int, got %r" % (rank,))
        _check_positive("nranks", nranks)
        if not 0 <= rank < nranks:
            raise AclshmemInvalid("need 0 <= rank < nranks, got rank=%r nranks=%r" % (rank, nranks))
        native_uid = _uid_object(uid)
        logger.info("init: unique id, rank %d of %d, %d bytes, instance %d", rank, nranks, mem_size, instance_id)
        attr = _p.InitAttr()
        attr.instance_id = instance_id
        rc = _p.aclshmemx_set_attr_uniqueid_args(rank, nranks, mem_size, native_uid, attr)
        if rc != 0:
            raise AclshmemError("aclshmemx_set_attr_uniqueid_args failed with code %d" % rc)
        mode = _p.InitMode.UNIQUEID
    elif mpi_job is not None:
        # what the library's shmem_init does in that case too (crates/openshmem): mpirun started
        # the program and gives rank and size, and MPI itself can bootstrap the job
        rank, nranks = mpi_job
        attr = _p.InitAttr()
        attr.my_rank, attr.n_ranks = rank, nranks
        if mem_size is None:
            try:
                mem_size = _p._local_mem_size_from_env()
            except ValueError as exc:
                raise AclshmemInvalid(str(exc)) from exc
        attr.local_mem_size = mem_size or DEFAULT_MEM_SIZE
        attr.instance_id = instance_id
        logger.info("init: environment of an MPI launcher without a rendezvous address: MPI bootstrap, rank %d "
                    "of %d, instance %d", rank, nranks, instance_id)
        mode = _p.InitMode.MPI
    elif method == "env":
        try:
            attr = _p.aclshmemx_set_attr_from_env()
        except RuntimeError as exc:
            raise AclshmemInvalid(str(exc)) from exc
        if mem_size is not None:
            attr.local_mem_size = mem_size
        elif attr.local_mem_size == 0:
            attr.local_mem_size = DEFAULT_MEM_SIZE
        attr.instance_id = instance_id
        logger.info("init: environment, rank %d of %d, instance %d", attr.my_rank, attr.n_ranks, instance_id)
        mode = _p.InitMode.DEFAULT
    elif method == "mpi":
        if rank is None or nranks is None:
            if mpi_comm is not None:
                rank, nranks = mpi_comm.Get_rank(), mpi_comm.Get_size()
            else:
                rank, nranks = _mpi_rank_size()
        attr = _p.InitAttr()
        attr.my_rank, attr.n_ranks = rank, nranks
        attr.local_mem_size = mem_size or DEFAULT_MEM_SIZE
        attr.instance_id = instance_id
        mode = _p.InitMode.MPI
    else:
        raise AclshmemInvalid("initializer_method must be 'uid', 'env' or 'mpi', got %r" % (initializer_method,))
    with _instance_lock.exclusive():
        rc = _p.aclshmemx_init_attr(mode, attr)
        if rc == 0:
            # a fresh heap: records left from an earlier life of this id (finalized through the
            # bindings, say) name addresses the new heap hands out again
            _array._drop_instance(instance_id)
    if rc != 0:
        raise AclshmemError("aclshmem init (%s, instance %d) failed with code %d" % (method, instance_id, rc))


def _mpi_job_without_address():
    """Rank and size when ``aclshmemx_set_attr_from_env`` would find an MPI launcher's job but no
    rendezvous address, else None: the first of its families of rank variables that is set is Open
    MPI's, PMI's or PMIx's (aclshmrun's and torchrun's come before them), and neither
    ACLSHMEM_IP_PORT nor MASTER_ADDR with MASTER_PORT is set. Empty values count as unset, as for
    the library. A rank without a size, or a malformed one, is None too: the library's own call
    then reports it."""
    env = os.environ.get
    if env("ACLSHMEM_MY_PE") or env("RANK"):
        return None
    if env("ACLSHMEM_IP_PORT") or (env("MASTER_ADDR") and env("MASTER_PORT")):
        return None
    if not any(env(v) for v in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK")):
        return None
    try:
        return _mpi_rank_size()
    except AclshmemInvalid:
        return None


def _mpi_rank_size():
    for r, sz in (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"), ("PMI_RANK", "PMI_SIZE"),
                  ("PMIX_RANK", "OMPI_COMM_WORLD_SIZE"), ("PMIX_RANK", "PMI_SIZE")):
        if os.environ.get(r) and os.environ.get(sz):
            try:
                return int(os.environ[r]), int(os.environ[sz])
            except ValueError:
                raise AclshmemInvalid("%s=%r / %s=%r: not a rank and a size" % (
                    r, os.environ[r], sz, os.environ[sz])) from None
    raise AclshmemInvalid("init(initializer_method='mpi'): not started by mpirun (no OMPI_COMM_WORLD_RANK/"
                          "PMI_RANK in the environment); pass rank/nranks or mpi_comm")


def finalize(instance_id=None):
    """Finalizes (collectively) the current instance, or instance ``instance_id`` (0..254). Arrays,
    tensors and buffers of that instance must not be used afterwards; those of other instances stay
    valid. Raises AclshmemError when the library's finalize fails."""
    from . import _array

    if instance_id is not None:
        _validate_instance_id(instance_id)
    with _instance_lock.exclusive():
        target = _current_instance_id() if instance_id is None else instance_id
        if instance_id is None:
            rc = _p.aclshmem_finalize()
        else:
            rc = _p.aclshmemx_finalize(instance_id)
        # that instance's heap is gone, also when the finalize reports a failure (the library
        # removes the instance first in every case), and only its blocks with it
        _array._drop_instance(target)
    if rc != 0:
        raise AclshmemError("aclshmem finalize failed with code %d" % rc)
