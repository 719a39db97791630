"""Config-store TLS from Python: every PE turns TLS on with this library's form of tls_info and
gives an encrypted PKCS#8 key whose password comes out of a Python decrypt callable.
argv[1] = directory made by test_tls.py (ca.pem, pe.pem, pe.enc.key; password "s3cret").
PE 1 first tries plain TCP: that init must fail (the store speaks TLS); then registers a callable
giving a wrong password: that init must fail too (the library reports the wrong password); it then
registers the right one and joins the job."""

import base64
import os
import sys

from common import check

import shmem

d = sys.argv[1]
me = int(os.environ["ACLSHMEM_MY_PE"])
# the "encrypted" password handed to the library; the callable decrypts it (a stand-in for a KMS)
cipher = base64.b64encode(b"s3cret").decode()
calls = []


def decrypt(c):
    calls.append(c)
    return base64.b64decode(c).decode()


def raises(c):
    raise ValueError("decrypt callable failing on purpose")


def not_a_string(c):
    return 42


def wrong(c):
    calls.append(c)
    return "wrong"


with open(os.path.join(d, "pe.enc.key")) as f:
    key = f.read()
check("ENCRYPTED PRIVATE KEY" in key, "the key is encrypted")

attr = shmem.aclshmemx_set_attr_from_env()
attr.local_mem_size = 1 << 20
opt = attr.option_attr
opt.shm_init_timeout = 30
opt.control_operation_timeout = 30
attr.option_attr = opt

if me == 1:
    check(shmem.set_conf_store_tls(False, "") == 0, "set_conf_store_tls(False)")
    rc = shmem.aclshmem_init(attr)
    check(rc != 0, "plain TCP init against the TLS store returned 0")
    print("PE 1 plain TCP refused: %d" % rc, flush=True)

check(shmem.set_conf_store_tls(True, "ca=%s/ca.pem;cert=%s/pe.pem" % (d, d)) == 0, "set_conf_store_tls")
if me == 1:
    # a callable that raises or returns no string: init fails with a code, no crash
    for bad in (raises, not_a_string):
        check(shmem.set_conf_store_tls_key(key, cipher, bad) == 0, "set_conf_store_tls_key(%s)" % bad.__name__)
        rc = shmem.aclshmem_init(attr)
        check(rc != 0, "init with decrypt callable %s returned 0" % bad.__name__)
        print("PE 1 decrypt callable %s refused: %d" % (bad.__name__, rc), flush=True)
    check(shmem.set_conf_store_tls_key(key, cipher, wrong) == 0, "set_conf_store_tls_key(wrong)")
    rc = shmem.aclshmem_init(attr)
    check(rc != 0, "init with a wrong decrypted password returned 0")
    check(calls == [cipher], "the wrong decrypt callable was called once with the cipher: %r" % calls)
    check(shmem.aclshmemx_init_status() == shmem.InitStatus.NOT_INITIALIZED, "status after failed init")
    print("PE 1 wrong password refused: %d" % rc, flush=True)
    calls.clear()

check(shmem.set_conf_store_tls_key(key, cipher, decrypt) == 0, "set_conf_store_tls_key")
rc = shmem.aclshmem_init(attr)
check(rc == 0, "TLS init returned %d" % rc)
check(calls == [cipher], "decrypt called once with the cipher: %r" % calls)

n = shmem.pe_count()
buf = shmem.aclshmem_malloc(8)
shmem.aclshmem_int64_p(buf, 1000 + me, (me + 1) % n)
shmem.aclshmem_barrier_all()
got = shmem.aclshmem_int64_g(buf, me)
check(got == 1000 + (me - 1) % n, "value from the left neighbour: %d" % got)
shmem.aclshmem_barrier_all()
shmem.aclshmem_free(buf)
check(shmem.aclshmem_finalize() == 0, "finalize")
print("PE %d tls ok" % me, flush=True)
