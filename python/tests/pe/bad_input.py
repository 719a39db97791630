"""Every public function of ``shmem``, ``shmem.core`` and ``shmem.core.direct`` called with bad
values (None, negative, zero, out-of-range and huge integers, strings, floats, bytes, arrays,
lists): each call returns or raises an exception, none crashes the process. Argument ``before``:
before init, in one process; ``after``: after init on every PE (each PE makes the same calls, so
calls that happen to be valid collectives still meet), then finalize. Init, finalize and exit
functions are left out."""

import faulthandler
import inspect
import itertools
import sys

import numpy as np

import shmem
import shmem.core as core
from shmem.core import direct

faulthandler.enable()
LEFT_OUT = ("init", "finalize", "finialize", "exit", "abort")
BAD = [None, -1, 0, 77, 2**64 + 5, "x", 1.5, b"\0\0\0", np.zeros(3), [1, 2]]


def functions():
    mods = [("shmem", shmem, shmem.__all__), ("core", core, core.__all__),
            ("direct", direct, [n for n in dir(direct) if not n.startswith("_")])]
    for prefix, mod, names in mods:
        for name in names:
            f = getattr(mod, name, None)
            if not callable(f) or inspect.isclass(f) or inspect.ismodule(f):
                continue
            if any(word in name.lower() for word in LEFT_OUT):
                continue
            yield "%s.%s" % (prefix, name), f


def required(f):
    try:
        params = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):
        return 2
    return len([p for p in params if p.default is p.empty
                and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])


def argument_sets(k):
    yield ()
    for v in BAD:
        yield (v,) * k
    for combo in itertools.islice(itertools.product(BAD[:5], repeat=min(k, 3)), 40):
        yield combo + (0,) * (k - len(combo))


def sweep():
    calls = 0
    for name, f in functions():
        for args in argument_sets(max(required(f), 1)):
            print("CALL", name, repr(args)[:80], flush=True)
            try:
                f(*args)
            except Exception:
                pass
            calls += 1
    return calls


phase = sys.argv[1]
if phase == "after":
    core.init(initializer_method="env", mem_size=16 << 20)
calls = sweep()
if calls < 5000:
    print("FAIL: only %d calls" % calls, flush=True)
    sys.exit(1)
if phase == "after":
    core.barrier_all()
    core.finalize()
print("bad input ok %s (%d calls)" % (phase, calls), flush=True)
