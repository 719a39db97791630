import pytest

from conftest import run_pes


@pytest.mark.parametrize("n", [2, 4])
def test_global_exit_ends_the_job_with_its_status(n):
    out = run_pes("global_exit.py", n, expect_rc=3).stdout
    assert "unreachable" not in out, out


@pytest.mark.parametrize("n", [2, 4])
def test_waits_release_the_gil(n):
    out = run_pes("gil.py", n, timeout=60).stdout
    assert out.count("gil ok") == n, out
