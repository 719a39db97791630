"""init under the SHMEM_LOG_LEVEL the test sets (an invalid value included): prints the level of the
Python logger "aclshmem" once init worked."""

import logging

import shmem.core as core

core.init(initializer_method="env", mem_size=4 << 20)
print("log level ok %s" % logging.getLevelName(logging.getLogger("aclshmem").level), flush=True)
core.finalize()
