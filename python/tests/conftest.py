"""Harness of the Python tests: every multi-PE check is a script of tests/pe/ run as real processes
under aclshmrun (or torchrun/mpirun), with a hard time limit.

Environment (set by python/run-tests.sh): ACLSHMRUN (the launcher), ACLSHMEM_LIBRARY (the C
library the package loads), ACLSHMEM_REQUIRE_ALL_TESTS=1 turns a skip into a failure."""

import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PE_DIR = os.path.join(HERE, "pe")
TIMEOUT = int(os.environ.get("SHMEM_PY_TEST_TIMEOUT", "120"))


def skip_or_fail(why):
    """A test that cannot run its real check: fails under ACLSHMEM_REQUIRE_ALL_TESTS=1 (CI)."""
    if os.environ.get("ACLSHMEM_REQUIRE_ALL_TESTS") == "1":
        pytest.fail("SKIPPED: %s (ACLSHMEM_REQUIRE_ALL_TESTS=1 forbids skips)" % why)
    pytest.skip(why)


def launcher():
    path = os.environ.get("ACLSHMRUN") or shutil.which("aclshmrun")
    if not path:
        pytest.fail("aclshmrun not found: set ACLSHMRUN")
    return path


def run(cmd, env=None, timeout=TIMEOUT, expect_rc=0):
    full_env = dict(os.environ)
    full_env.update(env or {})
    try:
        proc = subprocess.run(cmd, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=timeout + 30, text=True)
    except subprocess.TimeoutExpired as exc:
        pytest.fail("timed out: %s\n%s" % (" ".join(cmd), exc.output))
    if expect_rc is not None and proc.returncode != expect_rc:
        pytest.fail("%s exited %d (expected %d):\n%s" % (" ".join(cmd), proc.returncode, expect_rc, proc.stdout))
    return proc


def run_pes(script, n, *args, env=None, expect_rc=0, timeout=TIMEOUT):
    """Runs tests/pe/<script> on ``n`` PEs under aclshmrun; returns the CompletedProcess."""
    cmd = [launcher(), "-n", str(n), "--timeout", str(timeout), "--tag-output", sys.executable,
           os.path.join(PE_DIR, script)] + [str(a) for a in args]
    return run(cmd, env=env, expect_rc=expect_rc, timeout=timeout)


def have(module):
    try:
        __import__(module)
        return True
    except ImportError:
        return False
