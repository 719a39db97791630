"""Direct (thin) calls of :mod:`shmem.core`: PE and team queries, team management, the enums."""

from .. import _pyshmem as _p
from .utils import AclshmemError

InitStatus = _p.InitStatus
SignalOp = _p.SignalOp
ComparisonType = _p.CmpOp

#: The world team handle.
TEAM_WORLD = _p.ACLSHMEM_TEAM_WORLD
TEAM_INVALID = _p.ACLSHMEM_TEAM_INVALID

__all__ = ["my_pe", "n_pes", "team_my_pe", "team_n_pes", "init_status", "team_split_strided",
           "team_split_2d", "team_translate_pe", "team_destroy", "barrier_all", "InitStatus",
           "SignalOp", "ComparisonType", "TEAM_WORLD", "TEAM_INVALID"]


def my_pe():
    return _p.my_pe()


def n_pes():
    return _p.pe_count()


def team_my_pe(team):
    return _p.team_my_pe(team)


def team_n_pes(team):
    return _p.team_n_pes(team)


def init_status():
    return _p.aclshmemx_init_status()


def team_split_strided(parent, start, stride, size):
    """Collective over ``parent``: the new team's handle, or TEAM_INVALID on a PE outside it.
    Raises AclshmemError on error."""
    try:
        return _p.team_split_strided(parent, start, stride, size)
    except RuntimeError as exc:
        raise AclshmemError(str(exc)) from exc


def team_split_2d(parent, x_range):
    try:
        return _p.team_split_2d(parent, x_range)
    except RuntimeError as exc:
        raise AclshmemError(str(exc)) from exc


def team_translate_pe(src_team, src_pe, dest_team):
    return _p.team_translate_pe(src_team, src_pe, dest_team)


def team_destroy(team):
    _p.team_destroy(team)


def barrier_all():
    _p.aclshmem_barrier_all()
