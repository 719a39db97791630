#!/usr/bin/env bash
# Runs the test suite of shmem4py (the third-party Python bindings of OpenSHMEM, from PyPI),
# unmodified, against this library's OpenSHMEM surface: downloads the shmem4py source release,
# builds its C extension with our oshcc, and runs its unittest suite under our oshrun.
#
#   scripts/shmem4py.sh [BINDIR]      BINDIR: where oshcc/oshrun are (default: scripts/osh of this
#                                     source tree, which uses target/release or target/debug)
#   SHMEM4PY_PES="1 2 4"              the job sizes to run the suite on
#
# shmem4py recognises OpenSHMEM implementations by their header macros and otherwise compiles its
# own emulations of 1.5 routines, which clash with ours; tests/shmem4py/config.h, force-included
# into its build (CFLAGS=-include, the build's configuration, not an edit of its source), lists the
# 1.5 routines this library has, as shmem4py's per-vendor config headers do. shmem4py 1.0.0 predates
# NumPy 2 (its tests fail on NumPy 2's copy and overflow rules), so its venv gets numpy<2.
# Work directory: <target>/shmem4py (venv, source; reused by later runs).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$(cd "${1:-$ROOT/scripts/osh}" && pwd)"
VERSION=1.0.0
WORK="${CARGO_TARGET_DIR:-$ROOT/target}/shmem4py"
case "$WORK" in /*) ;; *) WORK="$ROOT/$WORK" ;; esac
mkdir -p "$WORK"
VENV="$WORK/venv"
if [[ ! -x "$VENV/bin/python" ]]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q "numpy<2" cffi setuptools wheel
fi
SRC="$WORK/shmem4py-$VERSION"
if [[ ! -d "$SRC" ]]; then
    "$VENV/bin/pip" download -q --no-deps --no-build-isolation --no-binary :all: -d "$WORK" "shmem4py==$VERSION"
    tar -xzf "$WORK/shmem4py-$VERSION.tar.gz" -C "$WORK"
fi
cd "$SRC"
rm -rf build src/shmem4py/api*.so
# -O0: the extension is a thin layer of calls; optimising it only costs build time
OSHCC="$BIN/oshcc" CFLAGS="-O0 -include $ROOT/tests/shmem4py/config.h" \
    "$VENV/bin/python" setup.py -q build_ext --inplace
export PYTHONPATH="$SRC/src"
for n in ${SHMEM4PY_PES:-1 2 4}; do
    echo "shmem4py $VERSION test suite on $n PEs"
    # every PE runs the suite; the job fails when any PE's suite fails (then its whole output is shown)
    log="$WORK/run_${n}pe.log"
    if ! "$BIN/oshrun" -np "$n" --timeout 600 "$VENV/bin/python" -m unittest discover -s test >"$log" 2>&1; then
        cat "$log"
        echo "shmem4py test suite failed on $n PEs (output above, also in $log)" >&2
        exit 1
    fi
    grep -E "^(Ran|OK|FAILED)" "$log" | sort | uniq -c
done
