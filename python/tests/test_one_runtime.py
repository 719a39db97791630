import os
import subprocess

import pytest

from conftest import HERE, run_pes

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))


@pytest.mark.parametrize("n", [2, 4])
def test_c_and_python_share_one_runtime(n, tmp_path):
    libdir = os.environ["ACLSHMEM_LIB_DIR"]
    so = str(tmp_path / "libone_runtime.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", so, os.path.join(HERE, "one_runtime.c"),
                    "-I", os.path.join(REPO, "include"), "-L", libdir, "-laclshmem",
                    "-Wl,-rpath," + libdir], check=True)
    out = run_pes("one_runtime.py", n, so).stdout
    assert out.count("one runtime ok") == n, out
