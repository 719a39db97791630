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


#: ``ACL_ERROR_RT_STREAM_SYNC_TIMEOUT``: a synchronize with a timeout found work still queued.
_SYNC_TIMEOUT = 507046
#: How long one synchronize waits (ms) before Python may run its signal handlers: the longest a
#: Ctrl-C waits to be noticed.
_SYNC_SLICE_MS = 20


def synchronize_stream(stream):
    """Waits until everything issued on ``stream`` has run (``aclrtSynchronizeStream``).

    The wait is made of ``aclrtSynchronizeStreamWithTimeout`` calls of 20 ms (the GIL is released
    in each, as by every ctypes call), so Ctrl-C (KeyboardInterrupt) ends it; the stream's work
    stays queued and runs on. Work queued on the stream by other threads during the wait is waited
    for too. A runtime without the timeout form is synchronized in one call."""
    acl = _acl()
    handle = ctypes.c_void_p(stream)
    sync = getattr(acl, "aclrtSynchronizeStreamWithTimeout", None)
    if sync is None:
        rc = acl.aclrtSynchronizeStream(handle)
    else:
        rc = sync(handle, ctypes.c_int32(_SYNC_SLICE_MS))
        while rc == _SYNC_TIMEOUT:
            # back in Python between two calls: a pending signal's handler runs here
            rc = sync(handle, ctypes.c_int32(_SYNC_SLICE_MS))
    if rc != 0:
        raise RuntimeError("aclrtSynchronizeStream failed (%d)" % rc)


def destroy_stream(stream):
    """Destroys a stream made by :func:`create_stream` (``aclrtDestroyStream``)."""
    rc = _acl().aclrtDestroyStream(ctypes.c_void_p(stream))
    if rc != 0:
        raise RuntimeError("aclrtDestroyStream failed (%d)" % rc)
