"""Barriers, syncs and handle waits of :mod:`shmem.core`, and the team constants.

A team argument must be an int (not a bool) in ``0..ACLSHMEM_MAX_TEAMS - 1`` naming a live team of
the current instance (the world team, or one made by a split and not destroyed); anything else
raises AclshmemInvalid before anything is called or queued.
"""

from .. import _pyshmem as _p
from .utils import AclshmemInvalid, _instance_lock, _is_int, _validate_stream

__all__ = ["barrier", "barrier_all", "sync", "sync_all", "barrier_on_stream", "barrier_all_on_stream",
           "handle_wait", "Handle", "ACLSHMEM_TEAM_WORLD", "ACLSHMEM_TEAM_INVALID", "ACLSHMEM_MAX_TEAMS"]

Handle = _p.Handle
ACLSHMEM_TEAM_WORLD = _p.ACLSHMEM_TEAM_WORLD
ACLSHMEM_TEAM_INVALID = _p.ACLSHMEM_TEAM_INVALID
ACLSHMEM_MAX_TEAMS = _p.ACLSHMEM_MAX_TEAMS


def _check_team(team):
    if not _is_int(team) or not 0 <= team < ACLSHMEM_MAX_TEAMS:
        raise AclshmemInvalid("team must be an int in 0..%d, got %r" % (ACLSHMEM_MAX_TEAMS - 1, team))
    if not _p._is_valid_team(team):
        raise AclshmemInvalid("team %d is not a live team of the current instance" % team)


def barrier(team):
    """Collective over ``team``: returns once every member arrived; earlier puts are complete."""
    with _instance_lock.shared():
        _check_team(team)
        _p.aclshmem_barrier(team)


def barrier_all():
    """Barrier over all PEs of the current instance."""
    with _instance_lock.shared():
        _p.aclshmem_barrier_all()


def sync(team):
    """Collective over ``team`` (the same as :func:`barrier` here)."""
    with _instance_lock.shared():
        _check_team(team)
        _p.aclshmem_sync(team)


def sync_all():
    """Sync over all PEs of the current instance."""
    with _instance_lock.shared():
        _p.aclshmem_sync_all()


def barrier_on_stream(team, stream):
    """Queues a barrier over ``team`` on ``stream`` (required; 0 = the default stream); returns at
    once (synchronise the stream to wait for it)."""
    with _instance_lock.shared():
        _check_team(team)
        s = _validate_stream(stream, allow_none=False)
        _p.aclshmemx_barrier_on_stream(team, s)


def barrier_all_on_stream(stream):
    """Queues a barrier over all PEs on ``stream`` (required); returns at once."""
    with _instance_lock.shared():
        s = _validate_stream(stream, allow_none=False)
        _p.aclshmemx_barrier_all_on_stream(s)


def handle_wait(handle, stream):
    """Queues on ``stream`` (required) the completion of this PE's operations towards the members
    of ``handle.team_id``, then a barrier of that team: every member calls it, in the same order.
    Once the stream ran on every member, what the members put into each other has landed."""
    with _instance_lock.shared():
        if not isinstance(handle, Handle):
            raise AclshmemInvalid("handle must be a Handle, got %s" % type(handle).__name__)
        _check_team(handle.team_id)
        s = _validate_stream(stream, allow_none=False)
        _p.aclshmemx_handle_wait(handle, s)
