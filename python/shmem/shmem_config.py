"""``shmem-config``: compiler flags, paths and a self-check of the libaclshmem the package uses.

Installed by the wheel as the console script ``shmem-config``; also ``python -m shmem.shmem_config``.

Where the paths come from:

* library directory: the directory of the ``libaclshmem.so`` this package loaded (``shmem/lib``
  inside the wheel, or ``$ACLSHMEM_LIBRARY``, or the one found on the linker path);
* include directory: ``<library directory>/../include``, which is ``shmem/include`` shipped in the
  wheel (a copy of the repository's ``include/``) or the include directory of an install prefix
  whose ``lib/libaclshmem.so`` was loaded (``$ACLSHMEM_LIBRARY``), else the wheel's
  ``shmem/include``, else the source tree's ``include/`` (a checkout running ``python/`` in place).

``--ldflags`` prints ``-I<include> -L<lib> -lshmem`` as the original does. The wheel ships
``shmem/lib/libshmem.so`` as a one-line GNU ld script (``INPUT(-laclshmem)``): linking with
``-lshmem`` records ``libaclshmem.so`` as the needed library, so the program loads the very file
Python loads and shares its runtime. A library directory without ``libshmem.so`` gets
``-laclshmem`` instead.
"""

import argparse
import ctypes
import os
import platform
import sys

from . import _loader

BACKEND = "cpu"


def _package_dir():
    return os.path.dirname(os.path.abspath(__file__))


def library_path():
    """Real path of the libaclshmem.so mapped into this process."""
    mapped = sorted(_loader._mapped("libaclshmem.so"))
    if mapped:
        return mapped[0]
    return os.path.realpath(_loader.lib_path)


def lib_dir():
    """Directory to link against: where the loaded libaclshmem.so lies (not resolving symbolic
    links of the directory entry itself, so an install prefix's lib/ is reported, not its target)."""
    for cand in (_loader.lib_path, library_path()):
        if os.path.isabs(cand) and os.path.exists(cand):
            return os.path.dirname(os.path.abspath(cand))
    return os.path.dirname(library_path())


def lib_name():
    """``shmem`` when the library directory has the original's name libshmem.so, else ``aclshmem``."""
    return "shmem" if os.path.exists(os.path.join(lib_dir(), "libshmem.so")) else "aclshmem"


def include_dir():
    """Directory holding shmem.h, or None when none is found."""
    cands = [
        os.path.join(os.path.dirname(lib_dir()), "include"),
        os.path.join(_package_dir(), "include"),
        os.path.join(os.path.dirname(os.path.dirname(_package_dir())), "include"),
    ]
    for cand in cands:
        if os.path.isfile(os.path.join(cand, "shmem.h")):
            return os.path.abspath(cand)
    return None


def prefix():
    """The directory above the include and library directories when they share one, else the
    package directory."""
    inc = include_dir()
    if inc is not None and os.path.dirname(inc) == os.path.dirname(lib_dir()):
        return os.path.dirname(inc)
    return _package_dir()


def library_version():
    major, minor = ctypes.c_int(-1), ctypes.c_int(-1)
    _loader.lib.aclshmem_info_get_version(ctypes.byref(major), ctypes.byref(minor))
    return "%d.%d" % (major.value, minor.value)


def library_name():
    buf = ctypes.create_string_buffer(256)
    _loader.lib.aclshmem_info_get_name(buf)
    return buf.value.decode("utf-8", "replace")


def package_version():
    try:
        from importlib.metadata import version

        return version("shmem")
    except Exception:  # not installed (source tree): no metadata
        return "unknown"


def _need_include():
    inc = include_dir()
    if inc is None:
        raise SystemExit("shmem-config: no include directory with shmem.h found (see --diagnose)")
    return inc


def cflags():
    return "-I" + _need_include()


def libs():
    return "-L%s -l%s" % (lib_dir(), lib_name())


def rpath():
    return "-Wl,-rpath," + lib_dir()


def check(out=sys.stdout):
    """Loads the library, verifies one runtime is mapped, runs a one-PE job (unique-id init,
    symmetric allocation, put/get to itself, free, finalize). Returns 0 when all pass."""
    from . import _pyshmem as p

    ok = True

    def report(good, what):
        nonlocal ok
        ok = ok and good
        out.write("%s %s\n" % ("ok  " if good else "FAIL", what))

    report(True, "library loaded: %s (%s, version %s)" % (library_path(), library_name(), library_version()))
    mapped = _loader._mapped("libaclshmem.so") | _loader._mapped("libshmem.so")
    report(len(mapped) == 1, "one libaclshmem.so mapped: %s" % ", ".join(sorted(mapped)))
    if p.aclshmemx_init_status() != p.InitStatus.NOT_INITIALIZED:
        report(False, "runtime already initialized in this process")
        return 1
    uid = p.aclshmem_get_unique_id()
    rc = p.aclshmem_init_using_unique_id(0, 1, 1 << 20, uid)
    report(rc == 0, "one-PE init (unique id): %d" % rc)
    if rc != 0:
        return 1
    try:
        report(p.my_pe() == 0 and p.pe_count() == 1, "my_pe %d of %d" % (p.my_pe(), p.pe_count()))
        addr = p.aclshmem_malloc(64)
        p.aclshmem_int64_p(addr, 0x5EED, 0)
        p.aclshmem_quiet()
        got = p.aclshmem_int64_g(addr, 0)
        report(got == 0x5EED, "symmetric put/get to itself: %#x" % got)
        p.aclshmem_free(addr)
    finally:
        rc = p.aclshmem_finalize()
        report(rc == 0, "finalize: %d" % rc)
    return 0 if ok else 1


def diagnose(out=sys.stdout):
    inc = include_dir()
    rows = [
        ("shmem package", "%s (%s)" % (package_version(), _package_dir())),
        ("python", "%s %s (%s)" % (platform.python_implementation(), platform.python_version(), sys.executable)),
        ("platform", "%s %s" % (platform.system(), platform.machine())),
        ("backend", BACKEND),
        ("libaclshmem.so", library_path()),
        ("library", "%s, version %s" % (library_name(), library_version())),
        ("libdir", lib_dir()),
        ("link name", "-l" + lib_name()),
        ("includedir", inc if inc else "NOT FOUND (no shmem.h)"),
        ("libascendcl.so", _loader.acl_path or "not loaded (loaded on first shmem.streams call)"),
        ("mapped libaclshmem.so", ", ".join(sorted(_loader._mapped("libaclshmem.so"))) or "none"),
    ]
    for key in sorted(os.environ):
        if key.startswith(("ACLSHMEM_", "SHMEM_")) or key == "LD_LIBRARY_PATH":
            rows.append(("env " + key, os.environ[key]))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        out.write("%-*s  %s\n" % (width, k, v))


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="shmem-config",
        description="Compiler and linker flags for libaclshmem, and checks of the installation. "
        "Flags print in the order given, on one line.",
    )
    flags = [
        ("--include", "include directory (holding shmem.h)"),
        ("--includedir", "same as --include"),
        ("--lib", "library directory"),
        ("--libdir", "same as --lib"),
        ("--prefix", "directory above include and lib (the package directory for a wheel)"),
        ("--cflags", "-I<include>"),
        ("--libs", "-L<lib> -lshmem"),
        ("--ldflags", "-I<include> -L<lib> -lshmem"),
        ("--rpath", "-Wl,-rpath,<lib>"),
        ("--library", "full path of the libaclshmem.so the package loads"),
        ("--backend", "the backend of this build (cpu)"),
        ("--version", "library version (major.minor)"),
        ("--package-version", "version of the shmem Python package"),
    ]
    for opt, what in flags:
        parser.add_argument(opt, action="append_const", const=opt, dest="items", help=what)
    parser.add_argument("--diagnose", action="store_true", help="print where everything was found")
    parser.add_argument("--check", action="store_true",
                        help="load the library, check one runtime is mapped, run a one-PE job; exit 1 on failure")
    args = parser.parse_args(argv)

    values = {
        "--include": lambda: _need_include(),
        "--includedir": lambda: _need_include(),
        "--lib": lib_dir,
        "--libdir": lib_dir,
        "--prefix": prefix,
        "--cflags": cflags,
        "--libs": libs,
        "--ldflags": lambda: cflags() + " " + libs(),
        "--rpath": rpath,
        "--library": library_path,
        "--backend": lambda: BACKEND,
        "--version": library_version,
        "--package-version": package_version,
    }
    if not args.items and not args.diagnose and not args.check:
        parser.print_help()
        return 0
    if args.items:
        print(" ".join(values[i]() for i in args.items))
    if args.diagnose:
        diagnose()
    if args.check:
        return check()
    return 0


if __name__ == "__main__":
    sys.exit(main())
