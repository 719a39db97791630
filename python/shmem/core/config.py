"""Data-engine workspace configuration of :mod:`shmem.core` (recorded for device-side code).

``offset`` must be an int in 0..2**64-1, ``ub_size`` and ``sync_id`` ints in 0..2**32-1 (``ub_size``
at least 128 for RDMA and UDMA); bools and other values raise AclshmemInvalid, a code from the library
(for instance before init) AclshmemError.
"""

from .. import _pyshmem as _p
from .utils import AclshmemError, AclshmemInvalid, _instance_lock, _is_int

__all__ = ["set_mte_config", "set_sdma_config", "set_rdma_config", "set_udma_config"]

_U32 = (1 << 32) - 1
_U64 = (1 << 64) - 1


def _apply(engine, name, offset, ub_size, sync_id, min_ub_size=0):
    for arg, value, low, high in (("offset", offset, 0, _U64), ("ub_size", ub_size, min_ub_size, _U32),
                                  ("sync_id", sync_id, 0, _U32)):
        if not _is_int(value) or not low <= value <= high:
            raise AclshmemInvalid("%s must be an int in %d..%d, got %r" % (arg, low, high, value))
    with _instance_lock.shared():
        rc = getattr(_p, name)(offset, ub_size, sync_id)
    if rc != 0:
        raise AclshmemError("setting the %s configuration failed with code %d" % (engine, rc))


def set_mte_config(offset, ub_size, sync_id):
    """Records the MTE workspace (offset, size in bytes, sync id) of the current instance."""
    _apply("MTE", "aclshmemx_set_mte_config", offset, ub_size, sync_id)


def set_sdma_config(offset, ub_size, sync_id):
    """Records the SDMA workspace of the current instance."""
    _apply("SDMA", "aclshmemx_set_sdma_config", offset, ub_size, sync_id)


def set_rdma_config(offset, ub_size, sync_id):
    """Records the RDMA workspace of the current instance (``ub_size`` at least 128)."""
    _apply("RDMA", "aclshmemx_set_rdma_config", offset, ub_size, sync_id, 128)


def set_udma_config(offset, ub_size, sync_id):
    """Records the UDMA workspace of the current instance (``ub_size`` at least 128)."""
    _apply("UDMA", "aclshmemx_set_udma_config", offset, ub_size, sync_id, 128)
