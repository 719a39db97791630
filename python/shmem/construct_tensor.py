"""Tensor helpers of the original (``construct_tensor.py``): sizes, and a torch CPU tensor over an
existing address (zero copy). torch is imported only when these are called."""

from .core.utils import Buffer


def calc_nbytes(shape, dtype):
    """Bytes of a contiguous tensor of ``shape`` and torch ``dtype``."""
    import torch

    n = 1
    for d in shape:
        n *= int(d)
    return n * torch.empty((), dtype=dtype).element_size()


def construct_tensor_from_ptr(data_ptr, shape, dtype, device="cpu", stride=None, storage_offset=None):
    """A tensor viewing memory at ``data_ptr`` (e.g. from ``aclshmem_malloc``); the caller keeps the
    memory alive. ``device`` must be the CPU (this library has no NPU)."""
    import torch

    if str(device) not in ("cpu", "npu", "npu:0") and not str(device).startswith("npu"):
        raise ValueError("only CPU tensors are supported, got device %r" % (device,))
    elem = torch.empty((), dtype=dtype).element_size()
    shape = tuple(int(d) for d in shape)
    if stride is None:
        stride, acc = [], 1
        for d in reversed(shape):
            stride.insert(0, acc)
            acc *= d
    offset = int(storage_offset or 0)
    span = 1 + sum((d - 1) * s for d, s in zip(shape, stride)) if all(shape) else 0
    nelem = offset + span
    if nelem == 0:
        return torch.empty(shape, dtype=dtype)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        flat = torch.frombuffer(Buffer(data_ptr, nelem * elem), dtype=dtype, count=nelem)
    return flat.as_strided(shape, tuple(stride), offset)
