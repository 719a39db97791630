"""Helpers of the PE scripts (run under a launcher, one process per PE)."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def check(cond, what):
    if not cond:
        me = os.environ.get("ACLSHMEM_MY_PE", "?")
        print("FAIL [PE %s]: %s" % (me, what), flush=True)
        sys.exit(1)


def raises(exc, fn, *args, **kw):
    """Whether fn(*args, **kw) raises exc."""
    try:
        fn(*args, **kw)
    except exc:
        return True
    return False


def share_uid(uid_or_none, path):
    """PE 0 writes the (512-byte padded) unique id to ``path``; the others wait for it."""
    if uid_or_none is not None:
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(uid_or_none.ljust(512, b"\0"))
        os.rename(tmp, path)
        return uid_or_none.ljust(512, b"\0")
    deadline = time.time() + 60
    while not os.path.exists(path):
        if time.time() > deadline:
            check(False, "no unique id at %s" % path)
        time.sleep(0.01)
    with open(path, "rb") as f:
        return f.read()


def drop_uid(path):
    """After the collective init every PE has read the id: PE 0 removes the file."""
    if os.environ.get("ACLSHMEM_MY_PE") == "0":
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def uid_path():
    return "/tmp/shmem-py-uid-%s" % os.environ.get("ACLSHMEM_JOB_ID", os.environ.get("ACLSHMEM_IP_PORT", "x")).replace(":", "_").replace("/", "_")
