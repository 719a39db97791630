import pytest

from conftest import run_pes


@pytest.mark.parametrize("n", [2, 4])
def test_core_api(n):
    out = run_pes("core_api.py", n, env={"SHMEM_LOG_LEVEL": "WARN"}).stdout
    assert out.count("core ok") == n, out
