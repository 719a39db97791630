#!/usr/bin/env python3
"""This library across nodes against the engine's own limit (ucx_perftest), from the CSVs of
`BENCH_NODES=1 scripts/bench.sh`.

usage: engine.py ENGINE_TXT SYNC_CSV RMA_CSV

ENGINE_TXT has one line per ucx_perftest run: `test size typical_latency_us bandwidth_MBps`.
Latency is compared the way ucp_put_lat measures it: a ping-pong of puts, half the round trip
(perf_sync's wait_pingpong: int32 p + wait_until; sig_pingpong: 8-byte put-with-signal + signal
wait). Bandwidth: perf_rma's streaming put (bw_put, GB/s) against ucp_put_bw at its largest size.
Targets of the issue: latency <= 1.5x the engine's, bandwidth >= 0.8x.

A second table holds the round trips: a fetching atomic or a get needs a request and a reply, so
no library over this engine can take less than the engine's own round trip (ucp_fadd and
ucp_cswap for the atomics, twice the one-way ucp_am_lat for a get). It prints the 0.8x-OSHMEM
target of each such figure next to that floor: a target below the floor cannot be met by any
implementation over this engine.
"""
import csv
import math
import sys


def engine(path):
    out = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 4:
                out[(parts[0], int(parts[1]))] = (float(parts[2]), float(parts[3]))
    return out


def ours(path, column="aclshmem"):
    out = {}
    try:
        with open(path) as f:
            for row in csv.DictReader(f):
                out[(row["figure"], int(row["size_bytes"]))] = float(row[column] or "nan")
    except (OSError, KeyError, ValueError):
        pass
    return out


def main():
    eng, sync, rma = engine(sys.argv[1]), ours(sys.argv[2]), ours(sys.argv[3])
    rows = []
    sync_osh = ours(sys.argv[2], "oshmem")
    rma_osh = ours(sys.argv[3], "oshmem")
    lat = eng.get(("ucp_put_lat", 8), (math.nan, math.nan))[0]
    for fig, size, label in [("wait_pingpong", 4, "int32 p + wait_until, one way"),
                             ("sig_pingpong", 8, "put-with-signal + signal wait, one way")]:
        v = sync.get((fig, size), math.nan)
        rows.append((label, f"{v:.2f} us", f"ucp_put_lat 8 B {lat:.2f} us", v / lat, "<= 1.5"))
    bw_sizes = sorted(s for (t, s) in eng if t == "ucp_put_bw")
    if bw_sizes:
        ebw = eng[("ucp_put_bw", bw_sizes[-1])][1]
        bw = [v for (f, _), v in rma.items() if f == "bw_put"]
        if bw:
            v = bw[0] * 1000  # GB/s -> MB/s
            rows.append(("streaming put bandwidth", f"{v:.1f} MB/s",
                         f"ucp_put_bw {bw_sizes[-1]} B {ebw:.1f} MB/s", v / ebw, ">= 0.8"))
        else:
            rows.append(("streaming put bandwidth", "not run (rma suite)",
                         f"ucp_put_bw {bw_sizes[-1]} B {ebw:.1f} MB/s", math.nan, ">= 0.8"))
    print()
    print("This library against the engine (same cluster, same run):")
    print("| figure | aclshmem | ucx_perftest | ratio | target |")
    print("|---|---|---|---|---|")
    for label, a, e, r, t in rows:
        print(f"| {label} | {a} | {e} | {'-' if math.isnan(r) else f'{r:.2f}'} | {t} |")

    am = eng.get(("ucp_am_lat", 8), (math.nan, math.nan))[0]
    trips = []
    for fig, size, table, theirs, label, floor_name, floor in [
        ("amo_fadd", 8, sync, sync_osh, "int64 fetch-add", "ucp_fadd 8 B",
         eng.get(("ucp_fadd", 8), (math.nan,))[0]),
        ("amo_cswap", 8, sync, sync_osh, "int64 compare-swap", "ucp_cswap 8 B",
         eng.get(("ucp_cswap", 8), (math.nan,))[0]),
        ("get_lat", 8, rma, rma_osh, "get 8 B", "2 x ucp_am_lat 8 B", 2 * am),
    ]:
        a, o = table.get((fig, size), math.nan), theirs.get((fig, size), math.nan)
        if math.isnan(a) and math.isnan(o):
            continue
        target = 0.8 * o
        verdict = ("below the floor: unreachable over this engine" if target < floor
                   else "reachable" if not math.isnan(target * floor) else "-")
        trips.append((label, a, o, floor_name, floor, target, verdict))
    if trips:
        print()
        print("Round trips against the engine's floor (a request and a reply; same run), us:")
        print("| figure | aclshmem | oshmem | engine floor | floor | target 0.8x oshmem | target |")
        print("|---|---|---|---|---|---|---|")
        for label, a, o, fname, floor, target, verdict in trips:
            print(f"| {label} | {a:.2f} | {o:.2f} | {fname} | {floor:.2f} | {target:.2f} | {verdict} |")


if __name__ == "__main__":
    main()
