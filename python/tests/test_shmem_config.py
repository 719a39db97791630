"""The shmem-config command (spec host-api.md §13.1): the console script the wheel installs and
``python -m shmem.shmem_config``; a C program built with its flags runs under aclshmrun."""

import os
import shlex
import subprocess
import sys

from conftest import TIMEOUT, launcher, run

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(os.path.dirname(sys.executable), "shmem-config")


def config(*args, expect_rc=0, env=None):
    full_env = dict(os.environ, **(env or {}))
    proc = subprocess.run([SCRIPT] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=TIMEOUT, env=full_env)
    assert proc.returncode == expect_rc, (args, proc.returncode, proc.stdout, proc.stderr)
    return proc.stdout.strip()


def test_flags_and_paths():
    import shmem

    assert os.path.exists(SCRIPT), "the wheel did not install the shmem-config console script"
    pkg = os.path.dirname(os.path.abspath(shmem.__file__))
    assert config("--backend") == "cpu"
    assert config("--version") == "%d.%d" % shmem.aclshmem_info_get_version()
    inc, lib = config("--include"), config("--lib")
    # the wheel ships the headers and the libraries inside the package
    assert inc == os.path.join(pkg, "include"), inc
    assert lib == os.path.join(pkg, "lib"), lib
    assert os.path.isfile(os.path.join(inc, "shmem.h"))
    assert os.path.samefile(config("--library"), os.path.join(lib, "libaclshmem.so"))
    assert config("--ldflags") == "-I%s -L%s -lshmem" % (inc, lib)
    assert config("--cflags") == "-I" + inc and config("--libs") == "-L%s -lshmem" % lib
    assert config("--rpath") == "-Wl,-rpath," + lib
    assert config("--include", "--lib") == inc + " " + lib
    assert config("--prefix") == pkg
    # the module form gives the same answers
    mod = subprocess.run([sys.executable, "-m", "shmem.shmem_config", "--ldflags", "--rpath"],
                         stdout=subprocess.PIPE, text=True, timeout=TIMEOUT, check=True).stdout.strip()
    assert mod == config("--ldflags") + " " + config("--rpath")
    diag = config("--diagnose")
    assert "backend" in diag and "cpu" in diag and inc in diag, diag
    assert config("--no-such-option", expect_rc=2) == ""


def test_check_runs_a_one_pe_job():
    out = config("--check")
    assert out.count("ok  ") >= 5 and "FAIL" not in out, out
    assert "one-PE init" in out and "put/get to itself" in out, out


def test_c_program_built_with_ldflags_runs_under_aclshmrun(tmp_path):
    exe = str(tmp_path / "hello")
    flags = shlex.split(config("--ldflags", "--rpath"))
    subprocess.run(["cc", "-std=c11", "-o", exe, os.path.join(REPO, "c_examples", "hello.c")] + flags,
                   check=True, timeout=TIMEOUT)
    # -lshmem (the wheel's ld script) records the library Python loads: one runtime per process
    needed = subprocess.run(["readelf", "-d", exe], stdout=subprocess.PIPE, text=True, check=True).stdout
    assert "[libaclshmem.so]" in needed and "[libshmem.so]" not in needed, needed
    out = run([launcher(), "-n", "2", "--timeout", str(TIMEOUT), exe]).stdout
    assert "hello: OK (2 PEs" in out and out.count("Hello from PE") == 2, out


def test_install_prefix_library(tmp_path):
    """With $ACLSHMEM_LIBRARY naming <prefix>/lib/libaclshmem.so, the paths are the prefix's."""
    prefix = tmp_path / "prefix"
    (prefix / "lib").mkdir(parents=True)
    os.symlink(os.path.join(os.environ["ACLSHMEM_LIB_DIR"], "libaclshmem.so"), str(prefix / "lib" / "libaclshmem.so"))
    os.symlink("libaclshmem.so", str(prefix / "lib" / "libshmem.so"))
    os.symlink(os.path.join(REPO, "include"), str(prefix / "include"))
    env = {"ACLSHMEM_LIBRARY": str(prefix / "lib" / "libaclshmem.so")}
    lib, inc = str(prefix / "lib"), str(prefix / "include")
    assert config("--ldflags", env=env) == "-I%s -L%s -lshmem" % (inc, lib)
    assert config("--prefix", env=env) == str(prefix)
    # the same library without the original's name: -laclshmem
    os.unlink(str(prefix / "lib" / "libshmem.so"))
    assert config("--libs", env=env) == "-L%s -laclshmem" % lib
