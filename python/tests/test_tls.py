"""Config-store TLS with an encrypted private key whose password a Python callable decrypts
(shmem.set_conf_store_tls / set_conf_store_tls_key). The CA, the PE certificate (naming
127.0.0.1 and localhost, the rendezvous host) and the encrypted PKCS#8 key are made with the openssl
command, as tests/tls.rs makes its encrypted key."""

import shutil
import subprocess

from conftest import run_pes, skip_or_fail

EXT = """basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth,clientAuth
subjectAltName=DNS:localhost,IP:127.0.0.1
"""


def make_pki(d):
    def ossl(*args):
        subprocess.run(["openssl"] + list(args), check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=60)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    ossl("req", "-x509", *ec, "-keyout", d + "/ca.key", "-out", d + "/ca.pem", "-days", "2",
         "-subj", "/CN=shmem python test CA", "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    ossl("req", *ec, "-keyout", d + "/pe.key", "-out", d + "/pe.csr", "-subj", "/CN=aclshmem PE")
    with open(d + "/ext.cnf", "w") as f:
        f.write(EXT)
    ossl("x509", "-req", "-in", d + "/pe.csr", "-CA", d + "/ca.pem", "-CAkey", d + "/ca.key",
         "-set_serial", "1", "-days", "2", "-extfile", d + "/ext.cnf", "-out", d + "/pe.pem")
    ossl("pkcs8", "-topk8", "-v2", "aes-256-cbc", "-passout", "pass:s3cret", "-in", d + "/pe.key",
         "-out", d + "/pe.enc.key")


def test_tls_store_with_python_decrypt_handler(tmp_path):
    if shutil.which("openssl") is None:
        skip_or_fail("the openssl command (Debian package openssl) is needed to make the certificates")
    d = str(tmp_path)
    make_pki(d)
    out = run_pes("tls.py", 2, d, env={"SHMEM_LOG_LEVEL": "ERROR", "SHMEM_LOG_TO_STDOUT": "1"}).stdout
    assert "decrypt callable raises refused" in out and "not_a_string refused" in out, out
    assert "PE 1 plain TCP refused" in out and "PE 1 wrong password refused" in out, out
    # the library's own error lines say why (through its logger, here on stdout)
    assert "the store speaks TLS" in out and "wrong password" in out, out
    assert out.count("tls ok") == 2, out
