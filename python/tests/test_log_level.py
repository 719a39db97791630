"""SHMEM_LOG_LEVEL as spec 10 and the C library read it: exactly DEBUG, INFO, WARN, ERROR or FATAL
overrides the caller's level; any other text (lower case, a number, Python's WARNING) is ignored,
and init works."""

import logging

import pytest

from conftest import run_pes

from shmem.core import utils


@pytest.mark.parametrize("value,level", [("verbose", "ERROR"), ("3", "ERROR"), ("info", "ERROR"),
                                         ("WARNING", "ERROR"), ("INFO", "INFO")])
def test_init_with_log_level(value, level):
    out = run_pes("log_level.py", 1, env={"SHMEM_LOG_LEVEL": value}).stdout
    assert "log level ok %s" % level in out, out


@pytest.mark.parametrize("env,arg,level", [
    (None, None, logging.ERROR), ("", None, logging.ERROR), ("DEBUG", None, logging.DEBUG),
    ("FATAL", None, logging.CRITICAL), ("WARN", "error", logging.WARNING),  # the environment wins
    ("debug", "warning", logging.WARNING), ("verbose", None, logging.ERROR), ("Info", "critical", logging.CRITICAL),
])
def test_setup_logger(monkeypatch, env, arg, level):
    if env is None:
        monkeypatch.delenv("SHMEM_LOG_LEVEL", raising=False)
    else:
        monkeypatch.setenv("SHMEM_LOG_LEVEL", env)
    assert utils.setup_aclshmem_logger(arg).level == level


def test_setup_logger_refuses_an_unknown_argument(monkeypatch):
    monkeypatch.delenv("SHMEM_LOG_LEVEL", raising=False)
    with pytest.raises(utils.AclshmemInvalid):
        utils.setup_aclshmem_logger("verbose")
