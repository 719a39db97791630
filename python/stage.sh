#!/usr/bin/env bash
# Copies what the `shmem` wheel ships beside the extension into the package source tree, from a
# release build (default target/release) and the repository's include/:
#   shmem/lib/libaclshmem.so, shmem/lib/libascendcl.so   the C runtime and the CPU ACL runtime
#   shmem/lib/libshmem.so    the original's link name as a one-line GNU ld script, INPUT(-laclshmem)
#                            (a wheel cannot hold a symbolic link; a copy would be a second runtime)
#   shmem/include/           the C headers, for shmem-config --include/--ldflags
# Run it before `maturin build` (python/run-tests.sh does).  Usage: python/stage.sh [release-dir]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REL="${1:-${CARGO_TARGET_DIR:-$ROOT/target}/release}"
PKG="$ROOT/python/shmem"
for f in libaclshmem.so libascendcl.so; do
    [[ -e "$REL/$f" ]] || { echo "error: $REL/$f missing: run cargo build --release --workspace first" >&2; exit 1; }
done
mkdir -p "$PKG/lib"
cp -f "$REL/libaclshmem.so" "$REL/libascendcl.so" "$PKG/lib/"
printf '%s\n' 'INPUT(-laclshmem)' >"$PKG/lib/libshmem.so"
rm -rf "$PKG/include"
cp -r "$ROOT/include" "$PKG/include"
