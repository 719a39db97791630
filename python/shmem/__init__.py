"""``shmem``: the Python API of libaclshmem (the CANN SHMEM host API on CPUs).

Low level: every binding of :mod:`shmem._pyshmem` (the original's pybind11 module, same names),
re-exported here. High level: :mod:`shmem.core` (nvshmem4py-like), with NumPy arrays and PyTorch
CPU tensors over symmetric memory. Importing ``shmem`` never imports torch.
"""

from . import _loader  # noqa: F401  (loads libaclshmem.so RTLD_GLOBAL first)
from . import _soc  # noqa: F401
from . import _pyshmem
from ._pyshmem import *  # noqa: F401,F403

__all__ = [n for n in dir(_pyshmem) if not n.startswith("_")]

def _ensure_native_libraries():
    """The original's hook that loads the native libraries before ``_pyshmem``; here they are loaded
    when ``shmem`` is imported, so this does nothing."""


#: Deprecated misspelled alias kept by the original.
aclshmem_finialize = _pyshmem.aclshmem_finalize
__all__.append("aclshmem_finialize")


def aclshmem_create_tensor(shape, dtype=None, device_id=0):
    """Symmetric allocation (collective) wrapped as a torch CPU tensor of ``shape`` and ``dtype``
    (default torch.float32); ``device_id`` is accepted for compatibility. Raises RuntimeError on
    failure. Free it with :func:`aclshmem_free_tensor`."""
    from .core import _tensor

    return _tensor.create_tensor(shape, dtype, raw=True)


def aclshmem_free_tensor(tensor):
    """Frees (collectively) a tensor made by :func:`aclshmem_create_tensor`."""
    from .core import _tensor

    _tensor.free_tensor(tensor)


__all__ += ["aclshmem_create_tensor", "aclshmem_free_tensor", "streams"]

from . import streams  # noqa: E402
