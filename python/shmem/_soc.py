"""Which SoC family the ACL runtime reports, as the original's ``shmem._soc`` tells it: its package
ships one backend per family (``backends/910``, ``backends/950``) and picks one at import. This
package has one CPU backend for all; the functions are kept because programs ask them (for instance
to skip what only Ascend950 supports).

:func:`detect_soc` asks ``aclrtGetSocName()`` of the ACL runtime: the one already in the process, or
``libascendcl.so`` (this package's CPU runtime: ``ACL_SHIM_SOC_NAME``, default ``Ascend910B4``),
loaded privately so that libaclshmem does not start using ACL streams because of it.
"""

import ctypes
import os

from . import _loader

__all__ = ["detect_soc", "select_backend"]

#: The backend used when the SoC cannot be told.
DEFAULT_BACKEND = "910"


def _read_proc_maps():
    """The lines of /proc/self/maps (none where it cannot be read)."""
    try:
        with open("/proc/self/maps") as maps:
            return maps.read().splitlines()
    except OSError:
        return []


def _acl_library():
    if _loader.acl is not None:
        return _loader.acl
    cands = [os.environ.get("ACLSHMEM_ACL_LIBRARY"), os.path.join(_loader._HERE, "lib", "libascendcl.so")]
    cands += sorted(_loader._mapped("libascendcl.so")) + ["libascendcl.so"]
    for cand in cands:
        if not cand:
            continue
        try:
            return ctypes.CDLL(cand, mode=ctypes.RTLD_LOCAL)
        except OSError:
            continue
    return None


def detect_soc():
    """The SoC name ``aclrtGetSocName()`` returns (``"Ascend910B4"``, ``"Ascend950PR_9599"``, ...), or
    None when there is no ACL runtime or it names none."""
    lib = _acl_library()
    if lib is None:
        return None
    try:
        fn = lib.aclrtGetSocName
    except AttributeError:
        return None
    fn.argtypes = []
    fn.restype = ctypes.c_char_p
    try:
        name = fn()
    except OSError:
        return None
    if not name:
        return None
    return name.decode("ascii", "replace")


def select_backend():
    """``"950"`` when the SoC is an Ascend950, else ``"910"`` (also when it cannot be told)."""
    soc = detect_soc()
    if soc is not None and soc.lower().startswith("ascend950"):
        return "950"
    return DEFAULT_BACKEND
