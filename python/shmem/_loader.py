"""Finds and loads libaclshmem.so (RTLD_GLOBAL) before the extension module is imported.

The extension `shmem._pyshmem` leaves the C functions undefined; they bind to the library loaded
here, which is the same file C code of the process links against (SONAME libaclshmem.so), so Python
and C share one runtime. Search order:

1. ``ACLSHMEM_LIBRARY`` (a path to libaclshmem.so),
2. ``shmem/lib/libaclshmem.so`` shipped inside the package (the wheel built by scripts/test-all.sh),
3. a libaclshmem.so already mapped into the process (a C program embedding Python),
4. the dynamic linker's search path (``LD_LIBRARY_PATH``, ldconfig): ``libaclshmem.so``.

libascendcl.so (the CPU ACL runtime, for ``*_on_stream`` calls on streams of your own) is loaded
the same way by :func:`load_acl`, on first use (``ACLSHMEM_ACL_LIBRARY``, ``shmem/lib``, next to
libaclshmem.so, the search path).
"""

import ctypes
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def _mapped(name):
    """Paths of the mapped files whose base name is ``name``."""
    paths = set()
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                parts = line.split(None, 5)
                if len(parts) == 6 and os.path.basename(parts[5].strip()) == name:
                    paths.add(os.path.realpath(parts[5].strip()))
    except OSError:
        pass
    return paths


def _load(env, name):
    candidates = []
    if os.environ.get(env):
        candidates.append(os.environ[env])
    candidates.append(os.path.join(_HERE, "lib", name))
    candidates.extend(sorted(_mapped(name)))
    for path in candidates:
        if os.path.exists(path):
            return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL), path
    return ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL), name


try:
    lib, lib_path = _load("ACLSHMEM_LIBRARY", "libaclshmem.so")
except OSError as exc:
    raise ImportError(
        "shmem: cannot load libaclshmem.so (set ACLSHMEM_LIBRARY to its path, or add its directory "
        "to LD_LIBRARY_PATH): %s" % exc
    ) from exc

_real = _mapped("libaclshmem.so") | _mapped("libshmem.so")
if len(_real) > 1:
    raise ImportError(
        "shmem: more than one libaclshmem.so is mapped into this process (%s): one runtime per "
        "process needs exactly one" % ", ".join(sorted(_real))
    )

acl = None
acl_path = None


def load_acl():
    """Loads libascendcl.so RTLD_GLOBAL on first use (only ``shmem.streams`` needs it: without an
    ACL runtime in the process, operations on stream 0 run inline and are complete at return)."""
    global acl, acl_path
    if acl is not None:
        return acl
    cands = [os.environ.get("ACLSHMEM_ACL_LIBRARY"), os.path.join(_HERE, "lib", "libascendcl.so")]
    cands += [os.path.join(os.path.dirname(p), "libascendcl.so") for p in sorted(_real)]
    cands += sorted(_mapped("libascendcl.so")) + ["libascendcl.so"]
    for cand in cands:
        if not cand:
            continue
        try:
            acl = ctypes.CDLL(cand, mode=ctypes.RTLD_GLOBAL)
            acl_path = cand
            return acl
        except OSError:
            continue
    raise RuntimeError("libascendcl.so (the CPU ACL runtime) was not found: set ACLSHMEM_ACL_LIBRARY")
