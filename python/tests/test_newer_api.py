"""The API of the original's newer releases: the multi-PE script pe/newer_api.py on 2 and 4 PEs,
and here (one process, no init) the argument rules of Buffer, instance ids, UniqueId.from_bytes,
InitAttr, the enums, constants and module contents, and shmem._soc."""

import copy
import ctypes
import importlib
import os
import pickle
import subprocess
import sys

import pytest

from conftest import run_pes

import shmem
import shmem.core as core
from shmem import _soc
from shmem.core import utils

INTPTR_MAX = (1 << (8 * ctypes.sizeof(ctypes.c_void_p) - 1)) - 1
SIZE_MAX = (1 << (8 * ctypes.sizeof(ctypes.c_size_t))) - 1


@pytest.mark.parametrize("n", [2, 4])
def test_newer_api_pes(n):
    out = run_pes("newer_api.py", n, env={"SHMEM_CYCLE_PROF_PE": "0", "SHMEM_LOG_LEVEL": "ERROR"}).stdout
    assert out.count("newer ok") == n, out


@pytest.mark.parametrize("n", [1, 2])
def test_array_records_per_instance(n):
    out = run_pes("instance_blocks.py", n).stdout
    assert out.count("instance blocks ok") == n, out


@pytest.mark.parametrize("addr,length", [(0, 1), (False, 1), (True, 1), (INTPTR_MAX + 1, 1), (-1, 1), (1, 0),
                                         (1, True), (1, SIZE_MAX + 1), (1.0, 1), ("1", 1)])
def test_buffer_rejects(addr, length):
    with pytest.raises(core.AclshmemInvalid):
        core.Buffer(addr, length)


def test_buffer_bounds_and_members():
    b = core.Buffer(INTPTR_MAX, SIZE_MAX)
    assert (b.addr, b.length) == (INTPTR_MAX, SIZE_MAX)
    with pytest.raises(BufferError):
        memoryview(b)  # longer than a memoryview can be
    assert not b.owned and b.instance_id is None and not b.release_called
    assert b.mem_type == core.MemType.DEVICE_SIDE
    h = core.Buffer(8, 4, core.MemType.HOST_SIDE)
    assert h.mem_type == core.MemType.HOST_SIDE and h != core.Buffer(8, 4)
    assert core.Buffer(8, 4) == core.Buffer(8, 4) and hash(core.Buffer(8, 4)) == hash(core.Buffer(8, 4))
    with pytest.raises(TypeError):
        core.Buffer(8, 4, 1)
    with pytest.raises(AttributeError):
        core.Buffer(8, 4).owned = True
    o = core.Buffer._owning(64, 16, core.MemType.DEVICE_SIDE, 3)
    v = core.Buffer._borrowed(72, 8, core.MemType.DEVICE_SIDE, o)
    assert o.owned and o.instance_id == 3 and not v.owned and v.instance_id == 3
    o._release_called = True
    assert v.release_called
    with pytest.raises(core.AclshmemInvalid):
        core.Buffer._owning(64, 16, core.MemType.DEVICE_SIDE, 255)
    with pytest.raises(TypeError):
        core.Buffer._borrowed(64, 16, core.MemType.DEVICE_SIDE, object())
    # a Buffer made directly is never freed, a freed one never used
    with pytest.raises(core.AclshmemInvalid):
        core.free(core.Buffer(8, 4))
    with pytest.raises(core.AclshmemInvalid):
        core.put(v, core.Buffer(8, 4), 0, stream=0)


@pytest.mark.parametrize("bad", [True, False, -1, 255, 1 << 64, 1.0, "0", None])
def test_instance_ids(bad):
    with pytest.raises(core.AclshmemInvalid):
        utils._validate_instance_id(bad)
    with pytest.raises(ValueError):
        shmem.aclshmemx_finalize(bad)
    with pytest.raises(ValueError):
        shmem.aclshmemx_instance_ctx_set(bad)
    attr = shmem.InitAttr()
    with pytest.raises(ValueError):
        attr.instance_id = bad
    with pytest.raises(core.AclshmemInvalid):
        core.init(uid=b"\0" * 136, rank=0, nranks=1, mem_size=1 << 20, initializer_method="uid", instance_id=bad)
    if bad is not None:
        with pytest.raises(core.AclshmemInvalid):
            core.finalize(instance_id=bad)
        with pytest.raises(core.AclshmemInvalid):
            core.set_instance(bad)
        with pytest.raises(core.AclshmemInvalid):
            with core.multi_instance(bad):
                pass


def test_instance_ids_valid_before_init():
    for good in (0, 254):
        utils._validate_instance_id(good)
        attr = shmem.InitAttr()
        attr.instance_id = good
        assert attr.instance_id == good
    assert shmem.aclshmemx_instance_ctx_get().id == 0 and core.current_instance() == 0
    assert isinstance(shmem.aclshmemx_instance_ctx_get(), core.InstanceContext)
    assert shmem.aclshmemx_finalize(3) != 0  # never initialised: the C code, no exception


def test_init_attr_and_unique_id():
    attr = shmem.InitAttr()
    assert attr.instance_id == 0
    attr.option_attr.data_op_engine_type = shmem.OpEngineType.ROCE  # a member object, as in the original
    assert attr.option_attr.data_op_engine_type == shmem.OpEngineType.ROCE
    with pytest.raises(AttributeError):
        attr._uid_owner = object()
    uid = shmem.UniqueId()
    assert shmem.UniqueId.from_bytes(uid.to_bytes()).to_bytes() == uid.to_bytes()
    # picklable and copyable (what comm.bcast or broadcast_object_list do with it)
    made = core.UniqueID()
    made.my_pe, made.n_pes = 3, 5
    for again in (pickle.loads(pickle.dumps(made)), copy.copy(made), copy.deepcopy(made)):
        assert isinstance(again, core.UniqueID) and again.to_bytes() == made.to_bytes()
    for bad in (b"", uid.to_bytes()[:-1], uid.to_bytes() + b"\0"):
        with pytest.raises(ValueError):
            shmem.UniqueId.from_bytes(bad)
    # n_pes 0: stored, init refuses it (the C code, as the original)
    assert shmem.aclshmemx_set_attr_uniqueid_args(0, 0, 1 << 20, uid, attr) == 0
    assert attr.n_ranks == 0
    assert shmem.aclshmemx_set_attr_uniqueid_args(1, 2, 1 << 20, uid, attr) == 0
    del uid
    assert (attr.my_rank, attr.n_ranks, attr.local_mem_size) == (1, 2, 1 << 20)
    assert int(shmem.InitMode.DEFAULT) == 1 and int(shmem.InitMode.MPI) == 2 and int(shmem.InitMode.UNIQUEID) == 8


def test_names():
    for name in ("aclshmemx_set_attr_uniqueid_args", "aclshmemx_init_attr", "aclshmemx_instance_ctx_get",
                 "aclshmemx_instance_ctx_set", "aclshmemx_malloc", "aclshmemx_calloc", "aclshmemx_align",
                 "aclshmemx_free", "aclshmemx_set_mte_config", "aclshmemx_set_sdma_config",
                 "aclshmemx_set_rdma_config", "aclshmemx_set_udma_config", "aclshmem_barrier",
                 "aclshmem_barrier_all", "aclshmem_sync", "aclshmem_sync_all", "aclshmemx_barrier_on_stream",
                 "aclshmemx_barrier_all_on_stream", "aclshmemx_handle_wait", "aclshmemx_get_prof",
                 "aclshmemx_show_prof", "InitMode", "MemType", "InstanceContext", "Handle", "ProfData",
                 "ACLSHMEM_TEAM_WORLD", "ACLSHMEM_TEAM_INVALID", "aclshmemx_finalize", "aclshmem_finalize",
                 "aclshmemx_get_heap_base", "aclshmem_signal_wait_until", "UniqueId"):
        assert name in shmem.__all__ and hasattr(shmem, name), name
    assert shmem._pyshmem.ACLSHMEM_MAX_TEAMS == 2048 and callable(shmem._pyshmem._is_valid_team)
    assert not shmem._pyshmem._is_valid_team(0)  # before init nothing is live
    shmem._ensure_native_libraries()
    for name in ("get_unique_id", "init", "finalize", "get_version", "UniqueID", "put_signal", "signal_op",
                 "signal_wait", "put", "get", "quiet", "buffer", "calloc", "align", "free", "get_peer_buffer",
                 "Buffer", "MemType", "barrier", "barrier_all", "sync", "sync_all", "barrier_on_stream",
                 "barrier_all_on_stream", "handle_wait", "Handle", "ACLSHMEM_TEAM_WORLD", "ACLSHMEM_TEAM_INVALID",
                 "ACLSHMEM_MAX_TEAMS", "current_instance", "set_instance", "multi_instance", "InstanceContext",
                 "set_mte_config", "set_sdma_config", "set_rdma_config", "set_udma_config", "get_prof",
                 "show_prof", "ProfData"):
        assert name in core.__all__ and hasattr(core, name), name
    for mod in ("config", "init_final", "memory", "multi_instance", "profiling", "rma", "sync", "utils", "direct"):
        importlib.import_module("shmem.core." + mod)  # the original's module names
    assert core.get_prof() is None and core.show_prof() is None
    with pytest.raises(TypeError):
        core.get_prof(verbose=1)
    with pytest.raises(core.AclshmemError):
        core.set_mte_config(0, 128, 0)  # before init: the C code


def test_soc():
    code = ("import shmem._soc as s; import shmem._loader as l; print(s.detect_soc(), s.select_backend(), l.acl)")
    for env, want in (({}, "Ascend910B4 910 None"), ({"ACL_SHIM_SOC_NAME": "Ascend950PR_9599"},
                                                     "Ascend950PR_9599 950 None")):
        out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, **env), capture_output=True,
                             text=True, timeout=60)
        assert out.stdout.strip() == want, out.stdout + out.stderr
    assert _soc.DEFAULT_BACKEND == "910"
