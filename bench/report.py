#!/usr/bin/env python3
"""Side-by-side table of one benchmark suite (bench/perf_rma.c, perf_sync.c or perf_coll.c).

Usage: report.py [--suite rma|sync|coll] --csv OUT.csv --ours FILE... --theirs FILE...

Each FILE is the stdout of one run (lines "RESULT <figure> <size> <value> <unit>",
"SKIP <figure> <reason>", and "TIMEOUT <figure> <size> <seconds>" which scripts/bench.sh appends when
it had to stop a run). Per figure and size the MEDIAN over the runs of each library is taken; the
table and the CSV give both medians and the ratio ours/theirs, with the range of the per-run ratios
(run i of aclshmem against run i of oshmem: the script alternates them) when there are several.
"""
import argparse
import csv
import re
import statistics
import sys

# Print order and meaning of every figure, per suite.
SUITES = {
    "rma": ("RMA, 2 PEs (bench/perf_rma.c)", [
        ("put_lat", "putmem + quiet latency"),
        ("get_lat", "getmem latency"),
        ("nbi_rate", "8 B putmem_nbi x1000 + quiet, message rate"),
        ("getnbi_rate", "8 B getmem_nbi x1000 + quiet, message rate"),
        ("iput_lat", "int64_iput of 1000 elements (dest stride 2) + quiet, size = bytes moved"),
        ("iget_lat", "int64_iget of 1000 elements (source stride 2), size = bytes moved"),
        ("p_lat", "int64_p + quiet latency"),
        ("g_lat", "int64_g latency"),
        ("put64_lat", "int64_put(1) + quiet latency"),
        ("bw_put", "streaming putmem + quiet bandwidth"),
        ("bw_memcpy", "local memcpy bandwidth (physical limit)"),
        ("bw_put_frac_memcpy", "put bandwidth / memcpy bandwidth"),
    ]),
    "sync": ("signals and atomics (bench/perf_sync.c)", [
        ("amo_fadd", "int64 atomic fetch-add on the other PE, latency (2 PEs)"),
        ("amo_cswap", "int64 atomic compare-swap on the other PE, latency (2 PEs)"),
        ("sig_pingpong", "8 B put-with-signal + signal wait ping-pong, half round trip (2 PEs)"),
        ("wait_pingpong", "int32_p + int32_wait_until(EQ) ping-pong, half round trip (2 PEs)"),
        ("ring_hop", "token ring of put-with-signal + signal wait, time per hop (N PEs on 2 cores)"),
        ("ring_laps", "laps the ring completed in its capped timed part (information, not a score)"),
    ]),
    "coll": ("collectives over all PEs (bench/perf_coll.c)", [
        ("barrier", "barrier_all latency (N PEs on 2 cores)"),
        ("bcast", "broadcast from PE 0, back-to-back calls, time per call"),
        ("reduce", "int64 sum reduction, back-to-back calls, time per call"),
        ("fcollect", "fcollect, size = bytes per PE, time per call"),
        ("collect", "collect (every PE the same size), size = bytes per PE, time per call"),
        ("alltoall", "alltoall, size = bytes per PE pair, time per call"),
    ]),
}
LOWER_IS_BETTER_UNITS = {"us", "hops"}  # hops: time / cache-line hop (perf_coll BENCH_HOP)
INFO_UNITS = {"laps"}
NPES_FIGS = {"barrier", "ring_hop", "ring_laps"}  # their size column is a PE count
NO_SCORE_FIGS = {"bw_memcpy"}


def parse_one(path):
    values, units, skipped, timeouts = {}, {}, {}, {}
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return values, units, skipped, timeouts
    for line in lines:
        parts = line.split()
        if len(parts) == 5 and parts[0] == "RESULT":
            _, fig, size, value, unit = parts
            key = (fig, int(size))
            values[key] = float(value)
            units[key] = unit
        elif len(parts) >= 2 and parts[0] == "SKIP":
            skipped[parts[1]] = " ".join(parts[2:])
        elif len(parts) == 4 and parts[0] == "TIMEOUT":
            timeouts[(parts[1], int(parts[2]))] = parts[3]
    return values, units, skipped, timeouts


def parse(files):
    """Per run: {key: value}. Files are grouped into runs by the ".<run>.txt" suffix."""
    runs, units, skipped, timeouts = {}, {}, {}, {}
    for path in files:
        m = re.search(r"\.(\d+)\.txt$", path)
        run = int(m.group(1)) if m else 0
        v, u, s, t = parse_one(path)
        runs.setdefault(run, {}).update(v)
        units.update(u)
        skipped.update(s)
        timeouts.update(t)
    return runs, units, skipped, timeouts


def median_of(runs):
    vals = {}
    for r in runs.values():
        for k, v in r.items():
            vals.setdefault(k, []).append(v)
    return {k: statistics.median(v) for k, v in vals.items()}, {k: len(v) for k, v in vals.items()}


def human_size(fig, n):
    if fig.split("@")[0] in NPES_FIGS:
        return f"{n} PEs"
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div and n % div == 0:
            return f"{n // div} {unit}"
    return f"{n} B"


def fmt(v):
    if v is None:
        return "-"
    if v >= 100:
        return f"{v:.1f}"
    if v >= 1:
        return f"{v:.3f}"
    return f"{v:.4f}"


def base_and_npes(fig):
    m = re.match(r"^(.*)_(\d+)pe$", fig)
    return (m.group(1), int(m.group(2))) if m else (fig, 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", default="rma", choices=sorted(SUITES))
    ap.add_argument("--csv", required=True)
    ap.add_argument("--ours", nargs="*", default=[])
    ap.add_argument("--theirs", nargs="*", default=[])
    ap.add_argument("--ours-label", default="aclshmem",
                    help="name of our side in the table (openshmem: our OpenSHMEM surface)")
    a = ap.parse_args()
    L = a.ours_label
    title, figures = SUITES[a.suite]

    runs_o, units_o, skip_o, to_o = parse(a.ours)
    runs_t, units_t, skip_t, to_t = parse(a.theirs)
    ours, n_o = median_of(runs_o)
    theirs, n_t = median_of(runs_t)
    units = {**units_t, **units_o}
    order = {name: i for i, (name, _) in enumerate(figures)}

    def sort_key(k):
        base, np_ = base_and_npes(k[0])
        return (order.get(base, 99), base, np_, k[1])

    keys = set(ours) | set(theirs) | set(to_o) | set(to_t)
    keys = sorted(keys, key=sort_key)
    # Figures one side skipped entirely still get a row, so the gap is visible.
    for fig in sorted(set(skip_o) | set(skip_t)):
        if not any(k[0] == fig for k in keys):
            keys.append((fig, 0))

    n_runs_o = sum(1 for r in runs_o.values() if r)
    n_runs_t = sum(1 for r in runs_t.values() if r)
    print(f"=== {title}")
    print(f"runs with results: {L} {n_runs_o}, oshmem {n_runs_t}; each value is the median over runs "
          f"of the per-run median")
    if a.suite == "rma":
        print(f"ratio = {L} / oshmem.  us (latency): LOWER is better, ratio < 1 means {L} is faster;"
              f" Mmsg/s, GB/s, fraction: HIGHER is better, ratio > 1 means {L} is faster; within 10% ="
              " \"~same\" (the bw_memcpy row, identical code in both, shows the noise)")
    else:
        print(f"ratio = {L} / oshmem.  Every figure is a time in us: LOWER is better, ratio < 1 means"
              f" {L} is faster" + (" (ring_laps is a count, for information)" if a.suite == "sync" else "")
              + (" (figure@hop: the same time in units of the cache-line hop measured beside it in the"
                 " same run, which moves with where the VM's vCPUs sit)" if a.suite == "coll" else "")
              + ". range = min-max of the per-run ratios; within 10% = \"~same\"")
    hdr = (f"{'figure':<20} {'size/npes':>9} {'unit':<9} {L:>10} {'oshmem':>10} {'ratio':>7} "
           f"{'range':>13}  better")
    print(hdr)
    print("-" * len(hdr))
    rows = []
    for key in keys:
        fig, size = key
        o, t = ours.get(key), theirs.get(key)
        unit = units.get(key, "")
        ratio = o / t if (o is not None and t is not None and t > 0) else None
        per_run = [runs_o[r][key] / runs_t[r][key] for r in runs_o
                   if r in runs_t and key in runs_o[r] and key in runs_t[r] and runs_t[r][key] > 0]
        rng = f"{min(per_run):.3g}-{max(per_run):.3g}" if len(per_run) > 1 else ""
        better = ""
        if ratio is not None and fig not in NO_SCORE_FIGS and unit not in INFO_UNITS:
            lower = unit in LOWER_IS_BETTER_UNITS
            better = L if (ratio < 1) == lower else "oshmem"
            if abs(ratio - 1) < 0.10:
                better = "~same"
        notes = []
        if o is None and fig in skip_o:
            notes.append(f"{L} skipped ({skip_o[fig]})")
        if t is None and fig in skip_t:
            notes.append(f"oshmem skipped ({skip_t[fig]})")
        if key in to_o:
            notes.append(f"{L}: a run timed out after {to_o[key]} s")
        if key in to_t:
            notes.append(f"oshmem: a run timed out after {to_t[key]} s")
        note = "; ".join(notes)
        size_s = human_size(fig, size) if (size or fig.split("@")[0] in NPES_FIGS) else "-"
        shown = " ".join(x for x in (better, note) if x)
        print(f"{fig:<20} {size_s:>9} {unit:<9} {fmt(o):>10} {fmt(t):>10} "
              f"{(f'{ratio:.3f}' if ratio is not None else 'n/a'):>7} {rng:>13}  {shown}")
        rows.append({
            "figure": fig, "size_bytes": size, "unit": unit,
            "aclshmem": "" if o is None else f"{o:.6g}",
            "oshmem": "" if t is None else f"{t:.6g}",
            "ratio_aclshmem_over_oshmem": "" if ratio is None else f"{ratio:.4f}",
            "ratio_min": f"{min(per_run):.4f}" if per_run else "",
            "ratio_max": f"{max(per_run):.4f}" if per_run else "",
            "lower_is_better": int(unit in LOWER_IS_BETTER_UNITS),
            "runs_aclshmem": n_o.get(key, 0), "runs_oshmem": n_t.get(key, 0),
            "note": note,
        })
    with open(a.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) if rows else ["figure"])
        w.writeheader()
        w.writerows(rows)
    print(f"\nCSV: {a.csv}")
    print("figures: " + "; ".join(f"{n} = {d}" for n, d in figures))
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
