"""Launch through torchrun and mpirun (with mpi4py), besides aclshmrun."""

import os
import shutil
import socket
import sys

import pytest

from conftest import PE_DIR, TIMEOUT, have, run, skip_or_fail


def free_port_pair():
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        try:
            with socket.socket() as s2:
                s2.bind(("127.0.0.1", port + 1))
            return port
        except OSError:
            continue
    raise RuntimeError("no free port pair")


@pytest.mark.parametrize("mode", ["env", "gloo"])
@pytest.mark.parametrize("n", [2, 4])
def test_torchrun(n, mode, tmp_path):
    if not have("torch"):
        skip_or_fail("torch is not installed")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", str(n),
           "--master_addr", "127.0.0.1", 
           # Debian's torch 1.13 under Python 3.11 parses only 1 and 2 for these options (Std flags)
           "--redirects", "1", "--tee", "1", "--log_dir", str(tmp_path), "--master_port", str(free_port_pair()),
           os.path.join(PE_DIR, "launched.py"), mode]
    out = run(cmd, env={"OMP_NUM_THREADS": "1"}).stdout
    assert out.count("launched ok") == n, out


@pytest.mark.parametrize("mode", ["mpi4py", "mpi", "env", "env_no_address"])
@pytest.mark.parametrize("n", [2, 4])
def test_mpirun(n, mode):
    mpirun = shutil.which("mpirun.openmpi") or shutil.which("mpirun")
    if mpirun is None or not have("mpi4py"):
        skip_or_fail("mpirun (Open MPI) or mpi4py is not installed")
    cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", str(n), "--mca", "btl", "self,vader,tcp"]
    if mode == "env":  # the config store's address: MASTER_ADDR / MASTER_PORT + 1, as under torchrun
        cmd += ["-x", "MASTER_ADDR=127.0.0.1", "-x", "MASTER_PORT=%d" % free_port_pair()]
    cmd += ["timeout", str(TIMEOUT), sys.executable, os.path.join(PE_DIR, "launched.py"), mode]
    env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_plm": "isolated",
           "OMPI_MCA_btl_vader_single_copy_mechanism": "none"}
    if mode == "env_no_address":
        # a plain mpirun: no address, whatever this shell has (empty is unset for the library)
        env.update({v: "" for v in ("MASTER_ADDR", "MASTER_PORT", "ACLSHMEM_IP_PORT", "RANK", "WORLD_SIZE")})
        env["ACLSHMEM_LOCAL_MEM_SIZE"] = "24M"
    out = run(cmd, env=env).stdout
    assert out.count("launched ok") == n, out
