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
