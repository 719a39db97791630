"""PyTorch CPU tensors over symmetric memory (zero copy). torch is imported only when a function
here is called; ownership and freeing work as for arrays (see :mod:`shmem.core._array`)."""

from .. import _pyshmem as _p
from . import _array
from .utils import AclshmemError, AclshmemInvalid, _check_pe


# torch's quantized dtypes (torch.dtype has no is_quantized before torch 2)
_QUANTIZED = ("qint8", "quint8", "qint32", "quint4x2", "quint2x4")


def _torch():
    try:
        import torch
    except ImportError as exc:
        raise ImportError("shmem tensors need PyTorch (pip install torch)") from exc
    return torch


def _element_size(torch, dtype):
    return torch.empty((), dtype=dtype).element_size()


def _view(torch, buf, shape, n, dtype):
    if n == 0:
        return torch.empty(shape, dtype=dtype)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.frombuffer(buf, dtype=dtype, count=n).reshape(shape)


def tensor(shape, dtype=None):
    """Collective: a contiguous CPU tensor of ``shape``/``dtype`` (default float32) in symmetric
    memory. Free it with :func:`free_tensor` (collective)."""
    torch = _torch()
    dtype = torch.float32 if dtype is None else dtype
    if not isinstance(dtype, torch.dtype):
        raise AclshmemInvalid("dtype must be a torch.dtype, got %r" % (dtype,))
    if dtype in {getattr(torch, name) for name in _QUANTIZED if hasattr(torch, name)}:
        # torch.frombuffer makes one without quantizer parameters, which crashes the interpreter
        raise AclshmemInvalid("dtype must not be a quantized dtype, got %s" % dtype)
    shape, n = _array._count(shape)
    buf = _array.alloc(n * _element_size(torch, dtype), "tensor")
    t = _view(torch, buf, shape, n, dtype)
    if n:
        _array.note_tensor(t, buf)
    return t


def create_tensor(shape, dtype=None, raw=False):
    """``aclshmem_create_tensor``: as :func:`tensor`, raising RuntimeError on failure."""
    try:
        return tensor(shape, dtype)
    except (AclshmemError, AclshmemInvalid) as exc:
        raise RuntimeError(str(exc)) from exc


def free_tensor(t):
    """Collective: frees a tensor made by :func:`tensor` / ``aclshmem_create_tensor``."""
    if not hasattr(t, "data_ptr"):
        raise AclshmemInvalid("free_tensor takes a torch tensor, got %s" % type(t).__name__)
    _array.release(t.data_ptr(), t, "t")


def get_peer_tensor(t, pe):
    """A view of PE ``pe``'s copy of the symmetric tensor ``t`` (same node)."""
    torch = _torch()
    if not isinstance(t, torch.Tensor):
        raise AclshmemInvalid("get_peer_tensor takes a torch tensor, got %s" % type(t).__name__)
    pe = _check_pe(pe, "pe")
    if t.layout != torch.strided or not t.is_contiguous() or t.device.type != "cpu":
        raise AclshmemInvalid("get_peer_tensor needs a contiguous CPU tensor")
    _array.check_live(t, "t")
    addr = _p.aclshmem_ptr(t.data_ptr(), pe)
    if addr == 0:
        raise AclshmemError("PE %d's copy is not directly addressable from this process" % pe)
    n = t.numel()
    buf = _array.peer_buffer(addr, max(n * t.element_size(), 1), _array._root(t))
    peer = _view(torch, buf, tuple(t.shape), n, t.dtype)
    if n:
        _array.note_tensor(peer, buf)
    return peer
