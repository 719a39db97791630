#!/usr/bin/env python3
"""This library across nodes against the engine's own limit (ucx_perftest), from the CSVs of
`BENCH_NODES=1 scripts/bench.sh`.

usage: engine.py ENGINE_TXT SYNC_CSV RMA_CSV

ENGINE_TXT has one line per ucx_perftest run: `test size typical_latency_us bandwidth_MBps`.
Latency is compared the way ucp_put_lat measures it: a ping-pong of puts, half the round trip
(perf_sync's wait_pingpong: int32 p + wait_until; sig_pingpong: 8-byte put-with-signal + signal
wait). Bandwidth: perf_rma's streaming put (bw_put, GB/s) against ucp_put_bw at its largest size.
Targets of the issue: latency <= 1.5x the engine's, bandwidth >= 0.8x.
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


def ours(path):
    out = {}
    try:
        with open(path) as f:
            for row in csv.DictReader(f):
                out[(row["figure"], int(row["size_bytes"]))] = float(row["aclshmem"] or "nan")
    except (OSError, KeyError, ValueError):
        pass
    return out


def main():
    eng, sync, rma = engine(sys.argv[1]), ours(sys.argv[2]), ours(sys.argv[3])
    rows = []
    lat = eng.get(("ucp_put_lat", 8), (math.nan, math.nan))[0]
    for fig, size, label in [("wait_pingpong", 4, "int32 p + wait_until, one way"),
                             ("sig_pingpong", 8, "put-with-signal + signal wait, one way")]:
        v = sync.get((fig, size), math.nan)
        rows.append((label, f"{v:.2f} us", f"ucp_put_lat 8 B {lat:.2f} us", v / lat, "<= 1.5"))
    bw_sizes = sorted(s for (t, s) in eng if t == "ucp_put_bw")
    if bw_sizes:
        ebw = eng[("ucp_put_bw", bw_sizes[-1])][1]
        bw = [v for (f, _), v in rma.items() if f == "bw_put"]
        v = bw[0] * 1000 if bw else math.nan  # GB/s -> MB/s
        rows.append(("streaming put bandwidth", f"{v:.1f} MB/s",
                     f"ucp_put_bw {bw_sizes[-1]} B {ebw:.1f} MB/s", v / ebw, ">= 0.8"))
    print()
    print("This library against the engine (same cluster, same run):")
    print("| figure | aclshmem | ucx_perftest | ratio | target |")
    print("|---|---|---|---|---|")
    for label, a, e, r, t in rows:
        print(f"| {label} | {a} | {e} | {r:.2f} | {t} |")


if __name__ == "__main__":
    main()
