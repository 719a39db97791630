#!/usr/bin/env bash
# Builds a fuzz target of fuzz/ (libfuzzer-sys) and runs it for a bounded time, without cargo-fuzz:
# the same instrumentation `cargo fuzz build --dev` applies (SanitizerCoverage for libFuzzer,
# AddressSanitizer, debug assertions), given to rustc directly. Installing cargo-fuzz cost CI about
# 100 s; `cargo fuzz run protocol` still works for local fuzzing.
#
#   scripts/fuzz.sh [--build-only] [TARGET [SECONDS]]      (defaults: protocol, 30)
#
# --build-only builds the target and stops (scripts/test-all.sh builds it in the background).
# The stable toolchain accepts -Zsanitizer with RUSTC_BOOTSTRAP=1. Exits non-zero when the target
# finds a crash (the crash input is written to fuzz/artifacts/TARGET/).
set -euo pipefail
BUILD_ONLY=0
if [[ "${1:-}" == --build-only ]]; then
    BUILD_ONLY=1
    shift
fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET="${1:-protocol}"
SECONDS_BUDGET="${2:-30}"
TRIPLE="$(rustc -vV | sed -n 's/^host: //p')"
OUT="$ROOT/fuzz/target"

flags=(
    -Cpasses=sancov-module
    -Cllvm-args=-sanitizer-coverage-level=4
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters
    -Cllvm-args=-sanitizer-coverage-pc-table
    -Cllvm-args=-sanitizer-coverage-trace-compares
    -Cllvm-args=-sanitizer-coverage-stack-depth
    --cfg fuzzing
    -Zsanitizer=address
    -Cdebug-assertions
)
# --target keeps the flags off build scripts and proc macros, which run on the host uninstrumented
RUSTC_BOOTSTRAP=1 RUSTFLAGS="${flags[*]}" cargo build --quiet \
    --manifest-path "$ROOT/fuzz/Cargo.toml" --target "$TRIPLE" --target-dir "$OUT" --bin "$TARGET"

if ((BUILD_ONLY)); then exit 0; fi

artifacts="$ROOT/fuzz/artifacts/$TARGET"
corpus="$ROOT/fuzz/corpus/$TARGET"
mkdir -p "$artifacts" "$corpus"
"$OUT/$TRIPLE/debug/$TARGET" -artifact_prefix="$artifacts/" -max_total_time="$SECONDS_BUDGET" \
    -print_final_stats=1 "$corpus" 2>&1 | tail -n 20
