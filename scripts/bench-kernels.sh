#!/usr/bin/env bash
# Benchmark of the CPU device mode (issue 13): bench/perf_kernel.cpp, built by scripts/aclshmem-cxx
# against the release libraries and run on 2 PEs. Prints two tables (launch overhead against
# aclrtLaunchHostFunc; device putmem/getmem/putmem_signal from 1/8/64 blocks against the host API
# from one thread, 8 B .. 4 MiB) and keeps them in target/bench/kernels.txt.
#
#   bash scripts/bench-kernels.sh            # BENCH_RUNS (default 5) kernels per figure, median
#   BENCH_LAUNCHES=500 bash scripts/bench-kernels.sh
#
# There is no peer library to compare with (OSHMEM has no device kernels): the reference is the host
# API of the same library in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/target/bench
mkdir -p "$OUT"
cargo build --release --quiet -p aclshmem -p aclshmrun -p ascendcl
ACLSHMEM_LIB_DIR="$ROOT/target/release" python3 scripts/aclshmem-cxx -std=c++17 -O2 -g \
    bench/perf_kernel.cpp -o "$OUT/perf_kernel"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
timeout -k 5 900 "$ROOT/target/release/aclshmrun" -n 2 --timeout 890 "$OUT/perf_kernel" | tee "$OUT/kernels.txt"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
