"""The examples of python/examples run under aclshmrun (torch_allgather also under torchrun)."""

import os
import sys

import pytest

from conftest import HERE, TIMEOUT, have, launcher, run, skip_or_fail

EXAMPLES = os.path.abspath(os.path.join(HERE, "..", "examples"))


@pytest.mark.parametrize("example", ["hello.py", "ring_put_signal.py", "numpy_allreduce.py", "torch_allgather.py"])
def test_example_under_aclshmrun(example):
    if example.startswith("torch") and not have("torch"):
        skip_or_fail("torch is not installed")
    out = run([launcher(), "-n", "2", "--timeout", str(TIMEOUT), sys.executable,
               os.path.join(EXAMPLES, example)]).stdout
    assert out.count("PE ") >= 2, out


def test_mpi4py_example_under_mpirun():
    import shutil

    mpirun = shutil.which("mpirun.openmpi") or shutil.which("mpirun")
    if mpirun is None or not have("mpi4py"):
        skip_or_fail("mpirun (Open MPI) or mpi4py is not installed")
    env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_plm": "isolated",
           "OMPI_MCA_btl_vader_single_copy_mechanism": "none"}
    out = run([mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2", "--mca", "btl", "self,vader,tcp",
               "timeout", str(TIMEOUT), sys.executable, os.path.join(EXAMPLES, "mpi4py_uid.py")], env=env).stdout
    assert out.count("(MPI rank") == 2, out
