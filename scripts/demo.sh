#!/usr/bin/env bash
# Demo: build the library and the CPU ACL runtime, compile three C examples against them with a plain
# `cc`, and run them on 4 PEs with the launcher: hello and heap (libaclshmem only), and stream_ring,
# an upstream-style host program (aclInit, aclrtSetDevice, aclrtCreateStream, stream-ordered puts and
# barriers, aclrtSynchronizeStream) linked with libascendcl too.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

if [[ -d "$HOME/.cargo/bin" && ":$PATH:" != *":$HOME/.cargo/bin:"* ]]; then
    PATH="$HOME/.cargo/bin:$PATH"
fi

TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
export CARGO_TARGET_DIR="$TARGET_DIR"
LIBDIR="$TARGET_DIR/release"
OUT="$TARGET_DIR/demo"

echo "==> cargo build --release -p aclshmem -p aclshmrun -p ascendcl"
cargo build --release -p aclshmem -p aclshmrun -p ascendcl

mkdir -p "$OUT"
for example in hello heap; do
    echo "==> cc c_examples/$example.c -> $OUT/$example"
    cc -std=c11 -Wall -Wextra -I"$ROOT/include" -o "$OUT/$example" "$ROOT/c_examples/$example.c" \
        -L"$LIBDIR" -laclshmem -Wl,-rpath,"$LIBDIR"
done
echo "==> cc c_examples/stream_ring.c -> $OUT/stream_ring (with -lascendcl)"
cc -std=c11 -Wall -Wextra -I"$ROOT/include" -o "$OUT/stream_ring" "$ROOT/c_examples/stream_ring.c" \
    -L"$LIBDIR" -laclshmem -lascendcl -Wl,-rpath,"$LIBDIR"

echo "==> aclshmrun -n 4 --tag-output --timeout 60 $OUT/hello"
"$LIBDIR/aclshmrun" -n 4 --tag-output --timeout 60 "$OUT/hello"
echo "==> aclshmrun -n 4 --tag-output --timeout 60 $OUT/heap"
"$LIBDIR/aclshmrun" -n 4 --tag-output --timeout 60 "$OUT/heap"
echo "==> aclshmrun -n 4 --tag-output --timeout 60 $OUT/stream_ring"
"$LIBDIR/aclshmrun" -n 4 --tag-output --timeout 60 "$OUT/stream_ring"
