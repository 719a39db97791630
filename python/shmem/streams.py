"""ACL streams for the ``*_on_stream`` calls, from the CPU ACL runtime libascendcl.so (an extension
of this package; the original takes streams from torch_npu). A stream is an ``int`` handle; 0 is
the library's internal stream. The runtime is loaded on the first call here; before that, work
queued on stream 0 runs inline (complete when the call returns)."""

import ctypes

from . import _loader


def _acl():
    return _loader.load_acl()


def create_stream():
    """A new ACL stream handle (``aclrtCreateStream``)."""
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
