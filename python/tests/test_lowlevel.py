import pytest

from conftest import run_pes


@pytest.mark.parametrize("n", [2, 4])
def test_every_binding(n):
    out = run_pes("lowlevel.py", n).stdout
    assert out.count("lowlevel ok") == n, out
