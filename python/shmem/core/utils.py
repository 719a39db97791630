"""``Buffer``, the exceptions and the logger of :mod:`shmem.core`."""

import logging
import os

from .._pyshmem import AclshmemError, AclshmemInvalid, Buffer

__all__ = ["Buffer", "AclshmemError", "AclshmemInvalid", "setup_aclshmem_logger", "logger"]

logger = logging.getLogger("aclshmem")

_LEVELS = {"DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING, "WARNING": logging.WARNING,
           "ERROR": logging.ERROR, "CRITICAL": logging.CRITICAL, "FATAL": logging.CRITICAL}


def setup_aclshmem_logger(log_level=None, log_file_path=None):
    """Configures the ``aclshmem`` logger: level from ``log_level`` or ``SHMEM_LOG_LEVEL`` (default
    ERROR), output to ``log_file_path`` or stderr. Returns the logger."""
    name = (log_level or os.environ.get("SHMEM_LOG_LEVEL") or "ERROR").upper()
    level = _LEVELS.get(name)
    if level is None:
        raise AclshmemInvalid("unknown log level %r (one of %s)" % (name, ", ".join(sorted(_LEVELS))))
    logger.setLevel(level)
    for h in list(logger.handlers):
        if getattr(h, "_aclshmem", False):
            logger.removeHandler(h)
    handler = logging.FileHandler(log_file_path) if log_file_path else logging.StreamHandler()
    handler._aclshmem = True
    handler.setFormatter(logging.Formatter("[aclshmem %(levelname)s] %(message)s"))
    logger.addHandler(handler)
    return logger
