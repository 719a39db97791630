"""Profiling read-out of :mod:`shmem.core`: the PE named by SHMEM_CYCLE_PROF_PE at init records its
stream-ordered operations (and kernels their SHMEMI_PROF_* sections)."""

from .. import _pyshmem as _p
from .utils import _instance_lock

__all__ = ["get_prof", "show_prof", "ProfData"]

ProfData = _p.ProfData


def get_prof(verbose=False):
    """A copy of this PE's record as a :class:`ProfData` (``pe_id``; ``ccount`` and ``cycles``: 64
    lists of 1024 ints), printed too when ``verbose``; None on a PE that is not profiled.
    ``verbose`` must be a bool (else TypeError)."""
    if not isinstance(verbose, bool):
        raise TypeError("verbose must be a bool, got %r" % (verbose,))
    with _instance_lock.shared():
        return _p.aclshmemx_get_prof(verbose)


def show_prof():
    """Prints this PE's record (the older form of ``get_prof(verbose=True)``)."""
    with _instance_lock.shared():
        _p.aclshmemx_show_prof()
