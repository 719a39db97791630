"""Every binding of shmem._pyshmem on N PEs (started by aclshmrun; the unique id goes through a file)."""

import ctypes
import os
import struct
import sys

from common import check, drop_uid, raises, share_uid, uid_path

import shmem

check("torch" not in sys.modules and "torch_npu" not in sys.modules, "import shmem imported torch")
me_env = int(os.environ["ACLSHMEM_MY_PE"])
n = int(os.environ["ACLSHMEM_N_PES"])
check(int(shmem.aclshmemx_init_status()) == int(shmem.InitStatus.NOT_INITIALIZED), "status before init")
# queue pairs: configured before init (SDMA up to 40, RoCE/UDMA up to 32; MTE has none)
check(shmem.aclshmemx_set_qp_num(shmem.OpEngineType.MTE, 1) == -100, "set_qp_num MTE -> NOT_SUPPORTED")
check(shmem.aclshmemx_set_qp_num(shmem.OpEngineType.SDMA, 0) == -2, "set_qp_num 0 -> INVALID_VALUE")
check(shmem.aclshmemx_set_qp_num(shmem.OpEngineType.UDMA, 33) == -2, "set_qp_num UDMA 33 -> INVALID_VALUE")
check(shmem.aclshmemx_set_qp_num(shmem.OpEngineType.SDMA, 40) == 0, "set_qp_num SDMA 40")
uid = share_uid(shmem.aclshmem_get_unique_id() if me_env == 0 else None, uid_path())
check(len(uid) == 512, "512-byte uid buffer")
check(shmem.aclshmem_init_using_unique_id(me_env, n, 1 << 20, b"short") == -1, "short uid -> -1")
rc = shmem.aclshmem_init_using_unique_id(me_env, n, 32 << 20, uid)
check(rc == 0, "init_using_unique_id rc=%d" % rc)
drop_uid(uid_path())
check(shmem.aclshmemx_init_status() == shmem.InitStatus.INITIALIZED, "status after init")
check(shmem.aclshmemx_set_qp_num(shmem.OpEngineType.SDMA, 2) == -100, "set_qp_num while initialized")
me = shmem.my_pe()
check(me == me_env and shmem.pe_count() == n, "my_pe/pe_count")
check(shmem.my_pe(0) == me and shmem.pe_count(0) == n, "team overloads")
check(shmem.team_my_pe(0) == me and shmem.team_n_pes(0) == n, "team_my_pe/team_n_pes")
right, left = (me + 1) % n, (me - 1) % n
check(shmem.aclshmem_info_get_version() == (1, 1), "version")
check("ACLSHMEM" in shmem.aclshmem_info_get_name().upper(), "name")
check(shmem.aclshmemx_get_heap_base() != 0, "heap base")
check(shmem.aclshmemx_get_heap_base(shmem.MemType.DEVICE_SIDE) == shmem.aclshmemx_get_heap_base(), "heap base dev")
shmem.get_ffts_config()

# logging: a Python callable as the external logger sees the library's error for a bad free
seen = []
check(shmem.set_extern_logger(lambda level, msg: seen.append((level, msg))) == 0, "set_extern_logger")
check(shmem.set_log_level(0) == 0, "set_log_level")
shmem.aclshmem_free(12345)  # not a heap address: logged, nothing freed
check(any("aclshmem_free" in m or "free" in m for _, m in seen), "logger saw the bad free: %r" % seen)
shmem.set_extern_logger(None)
shmem.set_log_level(3)
# callbacks that are not callable are refused at once (they would fail, losing every message or
# the key's password, only when the library calls them)
for bad in (5, "abc", b"x"):
    check(raises(TypeError, shmem.set_extern_logger, bad), "set_extern_logger(%r)" % (bad,))
    check(raises(TypeError, shmem.set_conf_store_tls_key, "k", "pw", bad), "set_conf_store_tls_key(.., %r)" % (bad,))

# heap
a = shmem.aclshmem_malloc(4096)
c = shmem.aclshmem_calloc(16, 8)
al = shmem.aclshmem_align(4096, 256)
check(al % 4096 == 0, "align")
check(ctypes.string_at(c, 128) == b"\0" * 128, "calloc zeroed")
for bad in ((lambda: shmem.aclshmem_malloc(1 << 50)), (lambda: shmem.aclshmem_align(3, 64))):
    try:
        bad()
        check(False, "expected RuntimeError")
    except RuntimeError:
        pass
check(shmem.aclshmem_ptr(a, me) == a, "ptr self")
peer = shmem.aclshmem_ptr(a, right)
check(peer != 0, "ptr peer on the same node")

# putmem/getmem (+nbi), by bytes
ctypes.memset(a, 0, 4096)
shmem.aclshmem_barrier_all()
src = ctypes.create_string_buffer(bytes([me + 1]) * 64)
shmem.aclshmem_putmem(a, ctypes.addressof(src), 64, right)
shmem.aclshmem_putmem_nbi(a + 64, ctypes.addressof(src), 64, right)
shmem.aclshmem_quiet()
shmem.aclshmem_barrier_all()
check(ctypes.string_at(a, 128) == bytes([left + 1]) * 128, "putmem from left")
dst = ctypes.create_string_buffer(128)
shmem.aclshmem_getmem(ctypes.addressof(dst), a, 64, right)
shmem.aclshmem_getmem_nbi(ctypes.addressof(dst) + 64, a + 64, 64, right)
shmem.aclshmem_quiet()
check(dst.raw == bytes([me + 1]) * 128, "getmem from right")
shmem.aclshmem_barrier_all()

# typed p/g/iput/iget, 11 types
TYPES = {"float": ("f", 4), "double": ("d", 8), "int8": ("b", 1), "int16": ("h", 2), "int32": ("i", 4),
         "int64": ("q", 8), "uint8": ("B", 1), "uint16": ("H", 2), "uint32": ("I", 4), "uint64": ("Q", 8),
         "char": ("b", 1)}
for name, (fmt, size) in TYPES.items():
    ctypes.memset(a, 0, 4096)
    shmem.aclshmem_barrier_all()
    getattr(shmem, "aclshmem_%s_p" % name)(a, 7 + me, right)
    shmem.aclshmem_barrier_all()
    check(struct.unpack(fmt, ctypes.string_at(a, size))[0] == 7 + left, "%s_p" % name)
    want = chr(7 + me) if name == "char" else 7 + me  # char: a one-character str, as pybind11 has it
    check(getattr(shmem, "aclshmem_%s_g" % name)(a, right) == want, "%s_g" % name)
    # iput: 4 elements with source stride 1 into target stride 2
    vals = ctypes.create_string_buffer(struct.pack(fmt * 4, 1, 2, 3, 4))
    shmem.aclshmem_barrier_all()
    getattr(shmem, "aclshmem_%s_iput" % name)(a + 64, ctypes.addressof(vals), 2, 1, 4, right)
    shmem.aclshmem_barrier_all()
    got = struct.unpack(fmt * 7, ctypes.string_at(a + 64, 7 * size))
    check(got[0::2] == (1, 2, 3, 4), "%s_iput %r" % (name, got))
    out = ctypes.create_string_buffer(4 * size)
    getattr(shmem, "aclshmem_%s_iget" % name)(ctypes.addressof(out), a + 64, 1, 2, 4, right)
    check(struct.unpack(fmt * 4, out.raw) == (1, 2, 3, 4), "%s_iget" % name)
    shmem.aclshmem_barrier_all()

# char values as pybind11 passes a C char: a one-character str (or an int), returned as a str
shmem.aclshmem_barrier_all()
shmem.aclshmem_char_p(a, "A", right)
shmem.aclshmem_char_p(a + 1, "\u00e9", right)
shmem.aclshmem_char_p(a + 2, -1, right)
shmem.aclshmem_barrier_all()
check(ctypes.string_at(a, 3) == b"A\xe9\xff", "char_p of str and int: %r" % ctypes.string_at(a, 3))
check([shmem.aclshmem_char_g(a + i, right) for i in range(3)] == ["A", "\u00e9", "\u00ff"], "char_g")
for bad, exc in (("ab", ValueError), ("\u20ac", ValueError), (300, ValueError), (None, TypeError)):
    check(raises(exc, shmem.aclshmem_char_p, a, bad, right), "char_p(%r)" % (bad,))
shmem.aclshmem_char_wait_until(a, shmem.CmpOp.CMP_EQ, "A")
shmem.aclshmem_barrier_all()

# sized put/get, iput/iget, put<BITS>_signal
sig = shmem.aclshmem_calloc(1, 8)
for bits in (8, 16, 32, 64, 128):
    nb = bits // 8
    ctypes.memset(a, 0, 4096)
    shmem.aclshmem_barrier_all()
    data = ctypes.create_string_buffer(bytes(range(1, 4 * nb + 1)))
    getattr(shmem, "aclshmem_put%d" % bits)(a, ctypes.addressof(data), 2, right)
    getattr(shmem, "aclshmem_put%d_nbi" % bits)(a + 2 * nb, ctypes.addressof(data) + 2 * nb, 2, right)
    shmem.aclshmem_quiet()
    shmem.aclshmem_barrier_all()
    check(ctypes.string_at(a, 4 * nb) == data.raw[:4 * nb], "put%d" % bits)
    back = ctypes.create_string_buffer(4 * nb)
    getattr(shmem, "aclshmem_get%d" % bits)(ctypes.addressof(back), a, 2, right)
    getattr(shmem, "aclshmem_get%d_nbi" % bits)(ctypes.addressof(back) + 2 * nb, a + 2 * nb, 2, right)
    shmem.aclshmem_quiet()
    check(back.raw == data.raw[:4 * nb], "get%d" % bits)
    shmem.aclshmem_barrier_all()
    getattr(shmem, "aclshmem_iput%d" % bits)(a + 1024, ctypes.addressof(data), 2, 1, 2, right)
    shmem.aclshmem_barrier_all()
    check(ctypes.string_at(a + 1024, nb) == data.raw[:nb] and
          ctypes.string_at(a + 1024 + 2 * nb, nb) == data.raw[nb:2 * nb], "iput%d" % bits)
    back2 = ctypes.create_string_buffer(2 * nb)
    getattr(shmem, "aclshmem_iget%d" % bits)(ctypes.addressof(back2), a + 1024, 1, 2, 2, right)
    check(back2.raw == data.raw[:2 * nb], "iget%d" % bits)
    shmem.aclshmem_barrier_all()
    ctypes.c_int32.from_address(sig).value = 0
    shmem.aclshmem_barrier_all()
    getattr(shmem, "aclshmemx_put%d_signal" % bits)(a + 2048, ctypes.addressof(data), 1, sig, 5,
                                                    shmem.SignalOp.SIGNAL_SET, right)
    getattr(shmem, "aclshmemx_put%d_signal_nbi" % bits)(a + 2048 + nb, ctypes.addressof(data) + nb, 1, sig,
                                                        1, shmem.SignalOp.SIGNAL_ADD, right)
    shmem.aclshmem_signal_wait_until(sig, shmem.CmpOp.CMP_EQ, 6)
    check(ctypes.string_at(a + 2048, 2 * nb) == data.raw[:2 * nb], "put%d_signal data" % bits)
    shmem.aclshmem_barrier_all()

# putmem_signal(+nbi), signal_wait_until
ctypes.c_int32.from_address(sig).value = 0
shmem.aclshmem_barrier_all()
shmem.aclshmemx_putmem_signal(a, ctypes.addressof(src), 32, sig, 1, shmem.SignalOp.SIGNAL_ADD, right)
shmem.aclshmemx_putmem_signal_nbi(a + 32, ctypes.addressof(src), 32, sig, 1, shmem.SignalOp.SIGNAL_ADD, right)
shmem.aclshmem_signal_wait_until(sig, shmem.CmpOp.CMP_GE, 2)
check(ctypes.string_at(a, 64) == bytes([left + 1]) * 64, "putmem_signal data")
try:
    shmem.aclshmem_signal_wait_until(0, shmem.CmpOp.CMP_EQ, 0)
    check(False, "signal_wait_until(0) must raise ValueError")
except ValueError:
    pass
shmem.aclshmem_barrier_all()

# wait/test families, 10 types: PE `left` sets word k of our array with a p
WAIT_TYPES = [t for t in TYPES if t != "double"]
status = ctypes.create_string_buffer(struct.pack("iiii", 0, 0, 0, 0))
res_i = ctypes.c_int(0)
res_z = ctypes.c_size_t(0)
indices = (ctypes.c_size_t * 4)()
for name in WAIT_TYPES:
    fmt, size = TYPES[name]
    ctypes.memset(a, 0, 4096)
    cmpv = ctypes.create_string_buffer(struct.pack(fmt * 4, 1, 1, 1, 1))
    shmem.aclshmem_barrier_all()
    f = lambda suffix: getattr(shmem, "aclshmem_%s_%s" % (name, suffix))  # noqa: E731
    f("test")(a, shmem.CmpOp.CMP_EQ, 1, ctypes.addressof(res_i))
    check(res_i.value == 0, "%s_test before" % name)
    shmem.aclshmem_barrier_all()
    for k in range(4):
        getattr(shmem, "aclshmem_%s_p" % name)(a + k * size, 1, right)
    f("wait_until")(a, shmem.CmpOp.CMP_EQ, 1)
    f("wait")(a + size, 0)
    f("wait_until_all")(a, 4, ctypes.addressof(status), shmem.CmpOp.CMP_EQ, 1)
    f("wait_until_any")(a, 4, 0, shmem.CmpOp.CMP_EQ, 1, ctypes.addressof(res_z))
    check(res_z.value < 4, "%s_wait_until_any" % name)
    f("wait_until_some")(a, 4, ctypes.addressof(indices), 0, shmem.CmpOp.CMP_EQ, 1, ctypes.addressof(res_z))
    check(res_z.value >= 1, "%s_wait_until_some" % name)
    f("wait_until_all_vector")(a, 4, 0, shmem.CmpOp.CMP_EQ, ctypes.addressof(cmpv))
    f("wait_until_any_vector")(a, 4, 0, shmem.CmpOp.CMP_EQ, ctypes.addressof(cmpv), ctypes.addressof(res_z))
    f("wait_until_some_vector")(a, 4, ctypes.addressof(indices), 0, shmem.CmpOp.CMP_EQ, ctypes.addressof(cmpv),
                               ctypes.addressof(res_z))
    f("test")(a, shmem.CmpOp.CMP_EQ, 1, ctypes.addressof(res_i))
    check(res_i.value == 1, "%s_test after" % name)
    f("test_any")(a, 4, 0, shmem.CmpOp.CMP_EQ, 1, ctypes.addressof(res_z))
    check(res_z.value < 4, "%s_test_any" % name)
    f("test_some")(a, 4, ctypes.addressof(indices), 0, shmem.CmpOp.CMP_EQ, 1, ctypes.addressof(res_z))
    check(res_z.value == 4, "%s_test_some %d" % (name, res_z.value))
    f("test_all_vector")(a, 4, 0, shmem.CmpOp.CMP_EQ, ctypes.addressof(cmpv), ctypes.addressof(res_i))
    check(res_i.value == 1, "%s_test_all_vector" % name)
    f("test_any_vector")(a, 4, 0, shmem.CmpOp.CMP_EQ, ctypes.addressof(cmpv), ctypes.addressof(res_z))
    f("test_some_vector")(a, 4, ctypes.addressof(indices), 0, shmem.CmpOp.CMP_EQ, ctypes.addressof(cmpv),
                          ctypes.addressof(res_z))
    check(res_z.value == 4, "%s_test_some_vector" % name)
    shmem.aclshmem_barrier_all()

# *_on_stream on the internal stream (0) and on a stream of the CPU ACL runtime
for stream in (0, shmem.streams.create_stream()):
    ctypes.memset(a, 0, 4096)
    ctypes.c_int32.from_address(sig).value = 0
    shmem.aclshmem_barrier_all()
    shmem.aclshmemx_putmem_on_stream(a, ctypes.addressof(src), 16, right, stream)
    shmem.aclshmemx_signal_op_on_stream(sig, 1, shmem.SignalOp.SIGNAL_SET, right, stream)
    shmem.aclshmemx_signal_wait_until_on_stream(sig, shmem.CmpOp.CMP_EQ, 1, stream)
    got = ctypes.create_string_buffer(16)
    shmem.aclshmemx_getmem_on_stream(ctypes.addressof(got), a, 16, right, stream)
    shmem.aclshmemx_quiet_on_stream(stream)
    if stream:
        shmem.streams.synchronize_stream(stream)
    else:
        # the runtime is loaded (create_stream above ran first): stream 0, the internal stream, is
        # queued too; a barrier synchronizes it (spec 7)
        shmem.aclshmem_barrier_all()
    check(ctypes.string_at(a, 16) == bytes([left + 1]) * 16, "putmem_on_stream (stream %x)" % stream)
    check(got.raw == bytes([me + 1]) * 16, "getmem_on_stream")
    shmem.aclshmem_barrier_all()
    if stream:
        shmem.streams.destroy_stream(stream)

# teams: the even PEs
even = shmem.team_split_strided(0, 0, 2, (n + 1) // 2)
if me % 2 == 0:
    check(even >= 0 and shmem.team_my_pe(even) == me // 2, "split member")
    check(shmem.team_translate_pe(even, 0, 0) == 0, "translate")
    check(shmem.aclshmem_team_get_config(even).num_contexts >= 0, "get_config")
    shmem.team_destroy(even)
else:
    check(even == -1, "non-member gets -1: %d" % even)
if n % 2 == 0:
    x, y = shmem.team_split_2d(0, 2)
    check(shmem.team_n_pes(x) == 2 and shmem.team_n_pes(y) == n // 2, "split_2d")
    shmem.team_destroy(x)
    shmem.team_destroy(y)
try:
    shmem.aclshmem_team_get_config(12345)
    check(False, "get_config of a bad team must raise")
except RuntimeError:
    pass

# TLS setters (before init they configure the store; here: the calls and the decrypt wrapper exist)
check(isinstance(shmem.set_conf_store_tls(False, ""), int), "set_conf_store_tls")
check(isinstance(shmem.set_conf_store_tls_key("k", "p", lambda s: s), int), "set_conf_store_tls_key")

for blk in (a, c, al, sig):
    shmem.aclshmem_free(blk)
alias = shmem.aclshmem_finialize
check(alias() == 0, "finalize (misspelled alias)")
check(shmem.aclshmemx_init_status() == shmem.InitStatus.NOT_INITIALIZED, "status after finalize")
print("lowlevel ok", flush=True)
