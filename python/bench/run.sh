#!/usr/bin/env bash
# Python vs C benchmark of the shmem package (see bench.py): medians, spread, Python-minus-C per call
# and the verdict against the targets. Manual only (not in CI: noisy on a shared machine).
# Needs the package installed in the interpreter PY (default: the venv python/run-tests.sh made) and a release build.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
PY="${PY:-$TARGET_DIR/pyvenv/bin/python}"
OUT="$TARGET_DIR/python-bench"
mkdir -p "$OUT"
cc -O2 -shared -fPIC -o "$OUT/libbench_c.so" "$ROOT/python/bench/bench_c.c" -I "$ROOT/include" \
    -L "$TARGET_DIR/release" -laclshmem -Wl,-rpath,"$TARGET_DIR/release"
cd "$OUT"
"$TARGET_DIR/release/aclshmrun" -n 2 --timeout 600 "$PY" "$ROOT/python/bench/bench.py" "$OUT/libbench_c.so"
