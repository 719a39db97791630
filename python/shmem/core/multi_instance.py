"""Instances of :mod:`shmem.core`: several independent runtimes in one process, each initialised by
``init(..., instance_id=N)``; one is current at a time and every call acts on it."""

from contextlib import contextmanager

from .. import _pyshmem as _p
from .utils import AclshmemError, _current_instance_id, _instance_lock, _validate_instance_id

__all__ = ["current_instance", "set_instance", "multi_instance", "InstanceContext"]

InstanceContext = _p.InstanceContext


def current_instance():
    """The id of the current instance."""
    with _instance_lock.shared():
        return _current_instance_id()


def _switch(instance_id, what):
    rc = _p.aclshmemx_instance_ctx_set(instance_id)
    if rc != 0:
        raise AclshmemError("%s instance %d failed with code %d" % (what, instance_id, rc))


def set_instance(instance_id):
    """Makes instance ``instance_id`` (0..254, initialised) current, once other threads' calls in
    progress have returned. Raises AclshmemInvalid for a bad id, AclshmemError for an instance
    that is not initialised."""
    _validate_instance_id(instance_id)
    with _instance_lock.exclusive():
        _switch(instance_id, "switching to")


@contextmanager
def multi_instance(instance_id):
    """``with multi_instance(n):`` makes instance ``n`` current for the block and the previous one
    current again afterwards. The block holds the lock of :mod:`shmem.core` alone: it starts once
    other threads' calls in progress have returned, and other threads' calls wait until it ends
    (calls of the same thread go through)."""
    _validate_instance_id(instance_id)
    with _instance_lock.exclusive():
        previous = _current_instance_id()
        _switch(instance_id, "switching to")
        try:
            yield
        finally:
            _switch(previous, "switching back to")
