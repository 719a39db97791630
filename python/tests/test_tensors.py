import pytest

from conftest import have, run_pes, skip_or_fail


@pytest.mark.parametrize("n", [2, 4])
def test_tensors(n):
    if not have("torch"):
        skip_or_fail("torch is not installed")
    out = run_pes("tensors.py", n).stdout
    assert out.count("tensors ok") == n, out
