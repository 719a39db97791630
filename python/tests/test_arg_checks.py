"""Argument checks of shmem.core that guard memory (pe/arg_checks.py, one case per job), and here
(one process, no init) the errors before init and a reload of shmem.core."""

import os
import subprocess
import sys

import pytest

from conftest import run_pes

import shmem.core as core


def _case(name, n=2):
    out = run_pes("arg_checks.py", n, name).stdout
    assert out.count("arg checks %s ok" % name) == n, out


def test_freed_array_tensor_and_buffer_refused():
    _case("freed")


def test_non_symmetric_remote_side_refused():
    _case("nonsym")


def test_signal_word_is_4_bytes():
    _case("signal")


def test_numpy_integer_pes():
    _case("pe")


def test_bad_allocation_arguments_refused_before_allocating():
    _case("alloc", n=1)


def test_wrong_kinds_raise_invalid():
    _case("types", n=1)


def test_allocation_before_init_says_not_initialised():
    for fn, args in ((core.array, ((4,), "int32")), (core.release_collected, ())):
        with pytest.raises(core.AclshmemError, match="not initialised"):
            fn(*args)
    try:
        import torch
    except ImportError:
        return
    with pytest.raises(core.AclshmemError, match="not initialised"):
        core.tensor((4,), torch.float32)


def test_reload_core():
    code = ("import importlib, shmem.core as c; before = list(c.__all__); importlib.reload(c); "
            "assert c.__all__ == before and callable(c.sync) and callable(c.multi_instance); print('reloaded')")
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ), capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "reloaded", out.stdout + out.stderr
