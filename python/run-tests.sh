#!/usr/bin/env bash
# Builds the Python package `shmem` (maturin wheel shipping libaclshmem.so and libascendcl.so from
# the cargo target directory), installs it into a virtual environment cached under the target
# directory, and runs the pytest suite of python/tests (multi-PE scripts under aclshmrun).
#
# Called by scripts/test-all.sh after the build of the libraries (`cargo build [--release] -p aclshmem`,
# `-p aclshmrun -p ascendcl`). ACLSHMEM_CARGO_PROFILE=dev takes the libraries from the debug build and
# builds the extension unoptimised (CI: it builds no release profile); default release. The venv uses Debian's
# /usr/bin/python3 with --system-site-packages so that Debian's python3-torch (CPU), python3-numpy and
# python3-mpi4py are visible (PyTorch's CPU wheel index is not reachable from CI; PyPI's x86-64 torch
# is the CUDA build); maturin and pytest come from PyPI.
# `--build-only`: everything but the tests (build, checks, install into the venv); scripts/test-all.sh
# runs that in the background while the Rust tests run, then this script again.
set -euo pipefail
BUILD_ONLY=0
if [[ "${1:-}" == --build-only ]]; then
    BUILD_ONLY=1
    shift
fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
PY="${ACLSHMEM_PYTHON:-/usr/bin/python3}"
VENV="$TARGET_DIR/pyvenv"
case "${ACLSHMEM_CARGO_PROFILE:-release}" in
    release) REL="$TARGET_DIR/release"; EXT_PROFILE=(--release) ;;
    dev) REL="$TARGET_DIR/debug"; EXT_PROFILE=() ;;
    *) echo "error: ACLSHMEM_CARGO_PROFILE must be release or dev" >&2; exit 2 ;;
esac

for f in libaclshmem.so libascendcl.so aclshmrun; do
    [[ -e "$REL/$f" ]] || { echo "error: $REL/$f missing: build the libraries and the launcher first (cargo build [--release] -p aclshmem -p aclshmrun -p ascendcl)" >&2; exit 1; }
done

if [[ ! -x "$VENV/bin/python" ]]; then
    "$PY" -m venv --system-site-packages "$VENV"
fi
"$VENV/bin/python" -c "import maturin, pytest" 2>/dev/null || "$VENV/bin/pip" install -q "maturin>=1.5,<2" pytest
"$VENV/bin/python" -c "import numpy" 2>/dev/null || "$VENV/bin/pip" install -q numpy

# the extension crate is outside the cargo workspace: its own format and lint checks. Its own target
# directory, and the venv's interpreter for clippy and maturin alike: pyo3's build configuration
# depends on the interpreter, and a change rebuilds everything (clippy and maturin each keep their
# own directory: they invalidate each other's build-script outputs)
EXT_TARGET="$TARGET_DIR/python-ext"
export PYO3_PYTHON="$VENV/bin/python"
cargo fmt --manifest-path "$ROOT/python/Cargo.toml" -- --check
CARGO_TARGET_DIR="$EXT_TARGET/clippy" cargo clippy -q "${EXT_PROFILE[@]}" --manifest-path "$ROOT/python/Cargo.toml" -- -D warnings

# the wheel ships the C libraries of this build, libshmem.so (an ld script) and the C headers inside
# the package (shmem/lib/, shmem/include/): see stage.sh
"$ROOT/python/stage.sh" "$REL"
rm -rf "$TARGET_DIR/wheels" "$ROOT"/python/shmem/_pyshmem*.so
(cd "$ROOT/python" && CARGO_TARGET_DIR="$EXT_TARGET" "$VENV/bin/maturin" build "${EXT_PROFILE[@]}" -q \
    --interpreter "$VENV/bin/python" -o "$TARGET_DIR/wheels")
"$VENV/bin/pip" install -q --force-reinstall --no-deps "$TARGET_DIR"/wheels/shmem-*.whl

if ((BUILD_ONLY)); then exit 0; fi

export ACLSHMRUN="$REL/aclshmrun"
export ACLSHMEM_LIB_DIR="$REL"
unset ACLSHMEM_LIBRARY
# run from the tests directory so `import shmem` is the installed wheel, not the source tree
cd "$ROOT/python/tests"
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@"
