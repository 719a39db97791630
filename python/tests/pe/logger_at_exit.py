"""A Python logger and the interpreter's exit: once the interpreter exits (the package's atexit
handler has run), the library's messages go to stderr and never into Python (a library thread
that called into a finalizing interpreter faulted). An atexit handler registered before the
package (so it runs after the package's) makes the library log while the interpreter exits."""

import atexit
import sys


def at_exit():
    # an invalid level: the library logs an error through its extern logger
    shmem.set_log_level(99)
    print("exit-time message issued", flush=True)


atexit.register(at_exit)

import shmem  # noqa: E402  (after the atexit registration on purpose)
import shmem.core as core  # noqa: E402


def py_logger(level, msg):
    print("PYTHON LOGGER level=%d %s" % (level, msg), flush=True)


core.init(initializer_method="env", mem_size=8 << 20)
shmem.set_extern_logger(py_logger)
shmem.set_log_level(98)  # while Python runs: through py_logger
core.barrier_all()
core.finalize()
sys.stdout.flush()
