"""``shmem.core``: the high-level, nvshmem4py-like API of the original (its newer releases:
instances, heap kinds, team barriers, handles, engine configuration, profiling), plus NumPy arrays
and PyTorch CPU tensors over symmetric memory.

Modules, as in the original: ``init_final``, ``memory``, ``rma``, ``sync``, ``multi_instance``,
``config``, ``profiling``, ``utils``; ``direct`` (PE and team queries, the enums) is importable as
``shmem.core.direct`` and not re-exported.

Streams: an ``int`` ACL stream handle (see :mod:`shmem.streams`), 0 = the default stream. Without
an ACL runtime loaded in the process, work on stream 0 runs inline.
"""

from .. import _pyshmem as _p
from . import direct  # noqa: F401  (not re-exported, as in the original)
# the modules' __all__ by name: `sync` and `multi_instance` are also functions, which the star
# imports below bind over the submodules' names (a reload would find the functions)
from .config import __all__ as _config_all
from .init_final import __all__ as _init_final_all
from .memory import __all__ as _memory_all
from .multi_instance import __all__ as _multi_instance_all
from .profiling import __all__ as _profiling_all
from .rma import __all__ as _rma_all
from .sync import __all__ as _sync_all
from .config import *  # noqa: F401,F403
from .init_final import *  # noqa: F401,F403
from .init_final import DEFAULT_MEM_SIZE  # noqa: F401
from .memory import *  # noqa: F401,F403
from .multi_instance import *  # noqa: F401,F403
from .profiling import *  # noqa: F401,F403
from .rma import *  # noqa: F401,F403
from .sync import *  # noqa: F401,F403
from .utils import AclshmemError, AclshmemInvalid, Buffer, MemType, logger, setup_aclshmem_logger  # noqa: F401
from ._array import array, free_array, get_peer_array, release_collected
from ._tensor import tensor, free_tensor, get_peer_tensor

__all__ = (_init_final_all + _rma_all + _memory_all + _sync_all + _multi_instance_all + _config_all + _profiling_all
           # beyond the original
           + ["my_pe", "n_pes", "array", "free_array", "release_collected", "get_peer_array", "tensor",
              "free_tensor", "get_peer_tensor", "AclshmemError", "AclshmemInvalid", "setup_aclshmem_logger"])


def my_pe():
    """This PE's number in the current instance."""
    return _p.my_pe()


def n_pes():
    """The number of PEs of the current instance."""
    return _p.pe_count()
