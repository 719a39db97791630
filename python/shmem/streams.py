"""ACL streams for the ``*_on_stream`` calls, from the CPU ACL runtime libascendcl.so (an extension
of this package; the original takes streams from torch_npu). A stream is an ``int`` handle; 0 is
the library's internal stream. The runtime is loaded on the first call here; before that, work
queued on stream 0 runs inline (complete when the call returns)."""

import ctypes
import os

from . import _loader


_device = None


def _acl():
    return _loader.load_acl()


def set_device(device_id=None):
    """``aclInit`` + ``aclrtSetDevice`` for this thread (done by :func:`create_stream` when not yet
    done; ``device_id`` defaults to LOCAL_RANK / ACLSHMEM_LOCAL_PE, else 0)."""
    global _device
    acl = _acl()
    if device_id is None:
        device_id = int(os.environ.get("ACLSHMEM_LOCAL_PE", os.environ.get("LOCAL_RANK", "0")) or 0)
    if _device is None:
        acl.aclInit(None)  # an already-initialised runtime answers with a repeat-init code: fine
    rc = acl.aclrtSetDevice(ctypes.c_int32(device_id))
    if rc != 0:
        raise RuntimeError("aclrtSetDevice(%d) failed (%d)" % (device_id, rc))
    _device = device_id


def create_stream():
    """A new ACL stream handle (``aclrtCreateStream``)."""
    if _device is None:
        set_device()
    handle = ctypes.c_void_p()
    rc = _acl().aclrtCreateStream(ctypes.byref(handle))
    if rc != 0:
        raise RuntimeError("aclrtCreateStream failed (%d)" % rc)
    return handle.value


def synchronize_stream(stream):
    """Waits until everything issued on ``stream`` has run (``aclrtSynchronizeStream``)."""
    rc = _acl().aclrtSynchronizeStream(ctypes.c_void_p(stream))
    if rc != 0:
        raise RuntimeError("aclrtSynchronizeStream failed (%d)" % rc)


def destroy_stream(stream):
    """Destroys a stream made by :func:`create_stream` (``aclrtDestroyStream``)."""
    rc = _acl().aclrtDestroyStream(ctypes.c_void_p(stream))
    if rc != 0:
        raise RuntimeError("aclrtDestroyStream failed (%d)" % rc)
