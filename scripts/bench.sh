#!/usr/bin/env bash
# Side-by-side RMA benchmark: the same bench/perf_rma.c built against libaclshmem and against Open
# MPI's OSHMEM, each run BENCH_RUNS times (default 3, alternating), median per figure, one table.
#
#   bash scripts/bench.sh            # table on stdout, CSV in target/bench/results.csv,
#                                    # plot in bench/results.png (if matplotlib is available)
#
# Environment knobs (passed through to perf_rma): BENCH_RUNS, BENCH_REPS, BENCH_SCALE, BENCH_BW_MB,
# BENCH_PIN (see the head of bench/perf_rma.c). BENCH_NO_PLOT=1 skips the plot.
#
# OSHMEM in this sandbox (Debian's Open MPI 4.1.4 with UCX 1.13, one node, loopback only):
#   --allow-run-as-root  oshrun refuses to start as root without it (we run as root here).
#   --oversubscribe      2 PEs on a 2-core machine must not be refused for lack of slots.
#   --mca osc ^rdma      WITHOUT THIS EVERY PE SEGFAULTS IN shmem_finalize: the MPI one-sided
#                        component osc/rdma frees memory inside ompi_mpi_finalize after UCX has gone,
#                        through opal_mem_hooks_release_hook. OSHMEM itself does not use osc.
#   --bind-to none       perf_rma pins PE i to the i-th allowed CPU itself, for both libraries alike.
#   SHMEM_SYMMETRIC_SIZE the symmetric heap (two streaming buffers of 64 MiB or 2 x LLC).
# Nothing else was needed: OSHMEM's spml is UCX, which picks shared memory (posix/sysv) on its own;
# no rsh agent, btl or pml setting is involved for a single node.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/target/bench
RUNS=${BENCH_RUNS:-3}
MEM=512M
mkdir -p "$OUT"

log() { printf '== %s\n' "$*" >&2; }

# ---------------------------------------------------------------- tools
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
if ! command -v oshcc >/dev/null || ! command -v oshrun >/dev/null; then
    log "installing openmpi-bin libopenmpi-dev (for oshcc/oshrun)"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openmpi-bin libopenmpi-dev >/dev/null
fi
CC=${CC:-cc}
command -v "$CC" >/dev/null || { log "no C compiler ($CC)"; exit 1; }

# ---------------------------------------------------------------- build
log "cargo build --release"
cargo build --release --quiet
LIBDIR=$ROOT/target/release
syms=$(nm -D --defined-only "$LIBDIR/libaclshmem.so")
if grep -q ' T aclshmem_putmem$' <<<"$syms"; then
    log "libaclshmem exports aclshmem_putmem"
else
    log "NOTE: libaclshmem has no RMA symbols yet: its RMA figures will be reported as skipped"
fi

CFLAGS="-O2 -g -Wall -Wextra -std=gnu11"
log "building $OUT/perf_rma_aclshmem and $OUT/perf_rma_oshmem"
"$CC" $CFLAGS -DBENCH_ACLSHMEM -I"$ROOT/include" bench/perf_rma.c -o "$OUT/perf_rma_aclshmem" \
    -L"$LIBDIR" -laclshmem -Wl,-rpath,"$LIBDIR"
oshcc $CFLAGS -DBENCH_OSHMEM bench/perf_rma.c -o "$OUT/perf_rma_oshmem"

# ---------------------------------------------------------------- run
run_ours() {
    ACLSHMEM_LOCAL_MEM_SIZE=$MEM timeout 330 "$LIBDIR/aclshmrun" -n 2 --timeout 300 \
        "$OUT/perf_rma_aclshmem"
}
run_theirs() {
    SHMEM_SYMMETRIC_SIZE=$MEM timeout 330 oshrun --allow-run-as-root --oversubscribe -np 2 \
        --bind-to none --mca osc '^rdma' -x SHMEM_SYMMETRIC_SIZE "$OUT/perf_rma_oshmem"
}

# Other work on this 2-core machine (a cargo build, say) moves every number: the load is printed.
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
rm -f "$OUT"/aclshmem.*.txt "$OUT"/oshmem.*.txt "$OUT"/*.err
failed=0
for i in $(seq 1 "$RUNS"); do
    # Alternate the libraries so slow phases of a noisy machine hit both.
    for lib in aclshmem oshmem; do
        log "run $i/$RUNS: $lib"
        fn=run_ours; [ "$lib" = oshmem ] && fn=run_theirs
        start=$(date +%s)
        if ! $fn >"$OUT/$lib.$i.txt" 2>"$OUT/$lib.$i.err"; then
            log "run $i of $lib FAILED (exit status above); last lines of stderr:"
            tail -n 15 "$OUT/$lib.$i.err" >&2
            failed=$((failed + 1))
        fi
        log "  $(( $(date +%s) - start )) s"
    done
done

# ---------------------------------------------------------------- report
echo
echo "load average (1/5/15 min) before the runs: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 bench/report.py --csv "$OUT/results.csv" \
    --ours "$OUT"/aclshmem.*.txt --theirs "$OUT"/oshmem.*.txt

if [ "${BENCH_NO_PLOT:-0}" != 1 ]; then
    if ! python3 -c 'import matplotlib' 2>/dev/null; then
        log "installing matplotlib for the plot"
        python3 -m pip install --quiet matplotlib >/dev/null 2>&1 ||
            python3 -m pip install --quiet --break-system-packages matplotlib >/dev/null 2>&1 || true
    fi
    python3 bench/plot.py "$OUT/results.csv" bench/results.png || log "plot failed (table above is complete)"
fi

[ "$failed" = 0 ] || { log "$failed run(s) failed"; exit 1; }
