#!/usr/bin/env bash
# Side-by-side benchmark: the same C sources built against libaclshmem and against Open MPI's OSHMEM,
# each launch run BENCH_RUNS times (default 3, the two libraries alternating), median per figure,
# one table per suite:
#   rma   bench/perf_rma.c   RMA, 2 PEs
#   sync  bench/perf_sync.c  atomics, put-with-signal and wait_until ping-pong (2 PEs); a ring of
#                            put-with-signal + signal waits with 4 and 16 PEs (on 2 cores)
#   coll  bench/perf_coll.c  barrier with 2/4/8/16 PEs; broadcast, int64 sum reduction, fcollect, collect,
#                            alltoall with 2 and 4 PEs
# Each suite also runs the OSHMEM-mode build of the same source (standard OpenSHMEM calls) compiled
# with this project's scripts/osh/oshcc and run by our launcher: a second table per suite compares
# that OpenSHMEM surface with OSHMEM (BENCH_OPENSHMEM=0 leaves it out).
#
#   bash scripts/bench.sh                    # all three suites (about 5 minutes once built)
#   BENCH_ONLY=sync bash scripts/bench.sh    # a subset: rma, sync, coll, comma- or |-separated
#
# Output: the tables on stdout; CSVs target/bench/results.csv (rma), results_sync.csv,
# results_coll.csv; plots bench/results.png, bench/results_sync.png, bench/results_coll.png (if
# matplotlib is available); raw per-run outputs in target/bench/raw/.
#
# Across nodes: BENCH_NODES=1 bash scripts/bench.sh (root) builds a virtual cluster of 4 nodes
# (scripts/vcluster.sh: network + UTS namespaces on a private bridge) and runs the suites with ONE
# PE PER NODE, UCX over tcp for both libraries (this library through aclshmrun --hosts ... --rsh
# "scripts/vcluster.sh rsh", OSHMEM through oshrun --host ... --mca plm_rsh_agent of the same
# agent), jobs of at most 4 PEs; then ucx_perftest (ucp_put_lat, ucp_get, ucp_put_bw) between two
# nodes, the engine's own limit. Tables as above; CSVs target/bench/results_nodes_*.csv, plots
# bench/results_nodes_*.png, raw outputs in target/bench/raw-nodes/.
#
# Environment knobs: BENCH_RUNS, BENCH_ONLY, BENCH_NODES, BENCH_NO_PLOT=1, and (passed through to the programs)
# BENCH_REPS, BENCH_SCALE, BENCH_PIN, BENCH_BW_MB (rma), BENCH_RING_S (sync), BENCH_REP_MS and
# BENCH_FIG_S (coll); see the heads of the bench/*.c files.
#
# Every launch runs under `timeout`; a launch that has to be stopped is reported as
# "timed out after N s" in its table (with whatever figures it printed before) instead of hanging.
#
# OSHMEM in this sandbox (Debian's Open MPI 4.1.4 with UCX 1.13, one node, loopback only):
#   --allow-run-as-root  oshrun refuses to start as root without it (we run as root here).
#   --oversubscribe      more PEs than cores (up to 16 PEs on 2 cores) must not be refused.
#   --mca osc ^rdma      WITHOUT THIS EVERY PE SEGFAULTS IN shmem_finalize: the MPI one-sided
#                        component osc/rdma frees memory inside ompi_mpi_finalize after UCX has gone,
#                        through opal_mem_hooks_release_hook. OSHMEM itself does not use osc.
#   --bind-to none       the programs pin PE i to CPU (i mod #cpus) themselves, for both libraries.
#   SHMEM_SYMMETRIC_SIZE the symmetric heap (rma: two streaming buffers of 2 x LLC, 64 to 128 MiB).
# Nothing else was needed: OSHMEM's spml is UCX, which picks shared memory (posix/sysv) on its own;
# no rsh agent, btl or pml setting is involved for a single node. OSHMEM 4.1 implements OpenSHMEM
# 1.4: its side of perf_sync/perf_coll uses the 1.4 equivalents of the 1.5 calls (see
# bench/bench_api.h); each program prints which in an "INFO" line (target/bench/raw/*.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/target/bench
NODES=${BENCH_NODES:-0}
RAW=$OUT/raw
[ "$NODES" = 1 ] && RAW=$OUT/raw-nodes
VC="$ROOT/scripts/vcluster.sh"
RUNS=${BENCH_RUNS:-3}
ONLY=${BENCH_ONLY:-rma,sync,coll}
mkdir -p "$OUT" "$RAW"

log() { printf '== %s\n' "$*" >&2; }
want() { [[ ",${ONLY//|/,}," == *",$1,"* ]]; }
for s in ${ONLY//[|,]/ }; do
    case $s in rma | sync | coll) ;; *) log "BENCH_ONLY: unknown suite '$s' (rma, sync, coll)"; exit 2 ;; esac
done

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
# the same two commands as CMake and scripts/test-all.sh (same feature resolution: no rebuild)
cargo build --release --quiet -p aclshmem
cargo build --release --quiet -p aclshmrun -p ascendcl
# A private copy of the library and launcher: a concurrent cargo build in this tree must not swap
# the library under a running benchmark.
LIBDIR=$OUT/lib
mkdir -p "$LIBDIR"
cp -f "$ROOT/target/release/libaclshmem.so" "$ROOT/target/release/aclshmrun" "$LIBDIR/"
syms=$(nm -D --defined-only "$LIBDIR/libaclshmem.so")
for s in aclshmem_putmem aclshmem_int64_atomic_fetch_add aclshmemx_putmem_signal aclshmem_broadcastmem; do
    grep -q " T $s\$" <<<"$syms" || log "NOTE: libaclshmem does not export $s: figures that need it are reported as skipped"
done

CFLAGS="-O2 -g -Wall -Wextra -std=gnu11"
for prog in perf_rma perf_sync perf_coll; do
    log "building $OUT/${prog}_aclshmem and $OUT/${prog}_oshmem"
    "$CC" $CFLAGS -DBENCH_ACLSHMEM -I"$ROOT/include" "bench/$prog.c" -o "$OUT/${prog}_aclshmem" \
        -L"$LIBDIR" -laclshmem -Wl,-rpath,"$LIBDIR"
    oshcc $CFLAGS -DBENCH_OSHMEM "bench/$prog.c" -o "$OUT/${prog}_oshmem"
    # the same standard-API source built with this project's oshcc (the OpenSHMEM surface)
    ACLSHMEM_LIB_DIR="$LIBDIR" "$ROOT/scripts/osh/oshcc" $CFLAGS -DBENCH_OSHMEM "bench/$prog.c" \
        -o "$OUT/${prog}_openshmem"
done

# ---------------------------------------------------------------- virtual cluster
if [ "$NODES" = 1 ]; then
    [ "$(id -u)" = 0 ] || { log "BENCH_NODES=1 needs root (namespaces)"; exit 1; }
    command -v ucx_perftest >/dev/null || as_root apt-get install -y -qq ucx-utils >/dev/null
    log "virtual cluster: 4 nodes"
    bash "$VC" up 4 >&2
    trap 'bash "$VC" down >/dev/null 2>&1 || true' EXIT
fi
# vnode1,vnode2,...: the first N nodes (one PE each), joined by $1
nodes() { local n=$1 sep=$2 i out=""; for ((i = 1; i <= n; i++)); do out+="${out:+$sep}vnode$i"; done; echo "$out"; }

# ---------------------------------------------------------------- launches
# launch LIB NP SECS MEM PROG [VAR=VALUE...]: one job of NP PEs, stopped after SECS seconds.
launch() {
    local lib=$1 np=$2 secs=$3 mem=$4 prog=$5
    shift 5
    local where=() xwhere=()
    if [ "$NODES" = 1 ]; then
        where=(--hosts "$(nodes "$np" :1,):1" --rsh "$VC rsh")
        xwhere=(--host "$(nodes "$np" ,)" --mca plm_rsh_agent "$VC rsh"
            --mca oob_tcp_if_include 10.77.0.0/24 --mca btl_tcp_if_include 10.77.0.0/24)
        set -- "$@" UCX_TLS=tcp
    fi
    if [ "$lib" = aclshmem ]; then
        env "$@" ACLSHMEM_LOCAL_MEM_SIZE="$mem" timeout -k 5 "$((secs + 5))" \
            "$LIBDIR/aclshmrun" -n "$np" "${where[@]}" --timeout "$secs" "$OUT/${prog}_aclshmem"
    elif [ "$lib" = openshmem ]; then
        env "$@" SHMEM_SYMMETRIC_SIZE="$mem" timeout -k 5 "$((secs + 5))" \
            "$LIBDIR/aclshmrun" -n "$np" "${where[@]}" --timeout "$secs" "$OUT/${prog}_openshmem"
    else
        local xs=() kv
        for kv in "$@"; do xs+=(-x "${kv%%=*}"); done
        env "$@" SHMEM_SYMMETRIC_SIZE="$mem" timeout -k 5 "$secs" \
            oshrun --allow-run-as-root --oversubscribe -np "$np" --bind-to none --mca osc '^rdma' \
            "${xwhere[@]}" -x SHMEM_SYMMETRIC_SIZE "${xs[@]}" "$OUT/${prog}_oshmem"
    fi
}

# Each job: "suite np seconds mem prog timeout-figure [VAR=VALUE...]". timeout-figure names the row
# that says "timed out" if the job has to be stopped ("-": a note under the table).
JOBS=()
if [ "$NODES" = 1 ]; then
    # one PE per node, at most 4 nodes
    want rma && JOBS+=("rma 2 180 512M perf_rma -")
    if want sync; then
        JOBS+=("sync 2 120 64M perf_sync - BENCH_SYNC_FIGS=pair")
        JOBS+=("sync 4 60 64M perf_sync ring_hop BENCH_SYNC_FIGS=ring")
    fi
    if want coll; then
        JOBS+=("coll 2 150 64M perf_coll -")
        JOBS+=("coll 4 150 64M perf_coll -")
    fi
fi
if [ "$NODES" != 1 ] && want rma; then JOBS+=("rma 2 120 512M perf_rma -"); fi
if [ "$NODES" != 1 ] && want sync; then
    JOBS+=("sync 2 60 64M perf_sync - BENCH_SYNC_FIGS=pair")
    JOBS+=("sync 4 40 64M perf_sync ring_hop BENCH_SYNC_FIGS=ring")
    JOBS+=("sync 16 40 64M perf_sync ring_hop BENCH_SYNC_FIGS=ring")
fi
if [ "$NODES" != 1 ] && want coll; then
    # BENCH_HOP=1: 2-PE figures also in units of the machine's cache-line hop (bench/perf_coll.c)
    JOBS+=("coll 2 90 64M perf_coll - BENCH_HOP=1")
    JOBS+=("coll 4 90 64M perf_coll -")
    JOBS+=("coll 8 30 64M perf_coll barrier BENCH_COLL_FIGS=barrier")
    JOBS+=("coll 16 30 64M perf_coll barrier BENCH_COLL_FIGS=barrier")
fi

# BENCH_OPENSHMEM=0 leaves out the third column: the OSHMEM-mode source built with our oshcc.
LIBS="aclshmem oshmem"
[ "${BENCH_OPENSHMEM:-1}" = 0 ] || LIBS="aclshmem oshmem openshmem"

# Other work on this 2-core machine (a cargo build, say) moves every number: the load is printed.
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
rm -f "$RAW"/*.txt "$RAW"/*.err
failed=0
t_all=$(date +%s)
for i in $(seq 1 "$RUNS"); do
    for job in "${JOBS[@]}"; do
        read -r suite np secs mem prog tofig vars <<<"$job"
        # Alternate the libraries so slow phases of a noisy machine hit both.
        for lib in $LIBS; do
            f=$RAW/$suite.$lib.np$np.$i
            start=$(date +%s)
            rc=0
            # shellcheck disable=SC2086
            launch "$lib" "$np" "$secs" "$mem" "$prog" $vars >"$f.txt" 2>"$f.err" || rc=$?
            took=$(($(date +%s) - start))
            if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
                log "run $i $suite np=$np $lib: TIMED OUT after $took s"
                if [ "$tofig" = - ]; then
                    echo "TIMEOUT ${suite}_job_np$np 0 $took" >>"$f.txt"
                else
                    echo "TIMEOUT $tofig $np $took" >>"$f.txt"
                fi
                failed=$((failed + 1))
            elif [ "$rc" != 0 ]; then
                log "run $i $suite np=$np $lib FAILED (exit $rc); last lines of stderr:"
                tail -n 15 "$f.err" >&2
                failed=$((failed + 1))
            else
                log "run $i/$RUNS $suite np=$np $lib: $took s"
            fi
        done
    done
done
log "all runs: $(($(date +%s) - t_all)) s"

# ---------------------------------------------------------------- report
echo
echo "load average (1/5/15 min) before the runs: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)"
plot() {
    [ "${BENCH_NO_PLOT:-0}" != 1 ] || return 0
    if ! python3 -c 'import matplotlib' 2>/dev/null; then
        log "installing matplotlib for the plot"
        python3 -m pip install --quiet matplotlib >/dev/null 2>&1 ||
            python3 -m pip install --quiet --break-system-packages matplotlib >/dev/null 2>&1 || true
    fi
    python3 bench/plot.py "$1" "$2" "$3" || log "plot failed (the table is complete)"
}
for suite in rma sync coll; do
    want "$suite" || continue
    csv=$OUT/results_$suite.csv
    png=bench/results_$suite.png
    if [ "$suite" = rma ]; then csv=$OUT/results.csv; png=bench/results.png; fi
    if [ "$NODES" = 1 ]; then csv=$OUT/results_nodes_$suite.csv; png=bench/results_nodes_$suite.png; fi
    echo
    shopt -s nullglob
    python3 bench/report.py --suite "$suite" --csv "$csv" \
        --ours "$RAW/$suite".aclshmem.*.txt --theirs "$RAW/$suite".oshmem.*.txt || true
    shopt -u nullglob
    plot "$csv" "$png" "$suite"
    if [ "${BENCH_OPENSHMEM:-1}" != 0 ]; then
        echo
        echo "OpenSHMEM surface: the same standard-API source (-DBENCH_OSHMEM) built with our oshcc and with OSHMEM's"
        shopt -s nullglob
        python3 bench/report.py --suite "$suite" --csv "${csv%.csv}_openshmem.csv" --ours-label openshmem \
            --ours "$RAW/$suite".openshmem.*.txt --theirs "$RAW/$suite".oshmem.*.txt || true
        shopt -u nullglob
    fi
done

# ---------------------------------------------------------------- the engine's limit
if [ "$NODES" = 1 ]; then
    echo
    echo "ucx_perftest between vnode1 and vnode2 (UCX_TLS=tcp), the engine's own limit:"
    echo "| test | size | typical latency (us) | bandwidth (MB/s) |"
    echo "|---|---|---|---|"
    engine=$OUT/engine_nodes.txt
    : >"$engine"
    port=13337
    for t in "ucp_put_lat 8" "ucp_put_lat 4096" "ucp_put_lat 65536" "ucp_put_lat 1048576" \
        "ucp_get 8" "ucp_get 65536" "ucp_get 1048576" \
        "ucp_put_bw 65536" "ucp_put_bw 1048576" "ucp_put_bw 4194304" \
        "ucp_am_lat 8" "ucp_fadd 8" "ucp_cswap 8"; do
        read -r test size <<<"$t"
        port=$((port + 1))
        n=2000; [ "$size" -ge 1048576 ] && n=200
        bash "$VC" rsh vnode2 "UCX_TLS=tcp timeout 60 ucx_perftest -p $port" >/dev/null 2>&1 &
        sleep 1
        line=$(bash "$VC" rsh vnode1 "UCX_TLS=tcp timeout 60 ucx_perftest vnode2 -p $port -t $test -s $size -n $n" 2>/dev/null |
            grep '^Final:' || true)
        wait || true
        # Final: iters typical-lat avg-lat overall-lat avg-bw overall-bw avg-mr overall-mr
        read -r _ _ typ _ _ _ bw _ _ <<<"$line"
        echo "| $test | $size | ${typ:-failed} | ${bw:-failed} |"
        echo "$test $size ${typ:-nan} ${bw:-nan}" >>"$engine"
    done
    echo "(ucp_get over tcp took about 1 ms per get at 8 B and 64 KiB on this cluster: a get over tcp"
    echo "needs the target's worker to run, and ucx_perftest's server answers that slowly; it is no"
    echo "floor. A get's floor is a request and a reply: twice ucp_am_lat, in the round-trip table.)"
    # this library against the engine: one-way put latency measured as ucp_put_lat measures it (a
    # ping-pong of puts, half the round trip: perf_sync's wait_pingpong and sig_pingpong), and the
    # streaming put bandwidth against ucp_put_bw
    python3 bench/engine.py "$engine" "$OUT/results_nodes_sync.csv" "$OUT/results_nodes_rma.csv" || true
fi

[ "$failed" = 0 ] || { log "$failed run(s) failed or timed out"; exit 1; }
