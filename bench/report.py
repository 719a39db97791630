#!/usr/bin/env python3
"""Side-by-side table of bench/perf_rma.c results.

Usage: report.py --csv OUT.csv --ours FILE... --theirs FILE...

Each FILE is the stdout of one run of perf_rma (lines "RESULT <figure> <size> <value> <unit>" and
"SKIP <figure> <reason>"). Per figure and size the MEDIAN over the runs of each library is taken;
the table and the CSV give both medians and the ratio ours/theirs.
"""
import argparse
import csv
import statistics
import sys

# Print order and meaning of every figure perf_rma.c emits.
FIGURES = [
    ("put_lat", "putmem + quiet latency"),
    ("get_lat", "getmem latency"),
    ("nbi_rate", "8 B putmem_nbi x1000 + quiet, message rate"),
    ("p_lat", "int64_p + quiet latency"),
    ("g_lat", "int64_g latency"),
    ("put64_lat", "int64_put(1) + quiet latency"),
    ("bw_put", "streaming putmem + quiet bandwidth"),
    ("bw_memcpy", "local memcpy bandwidth (physical limit)"),
    ("bw_put_frac_memcpy", "put bandwidth / memcpy bandwidth"),
]
LOWER_IS_BETTER_UNITS = {"us"}


def parse(files):
    values, units, skipped, runs = {}, {}, {}, 0
    for path in files:
        try:
            with open(path) as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        got = False
        for line in lines:
            parts = line.split()
            if len(parts) == 5 and parts[0] == "RESULT":
                _, fig, size, value, unit = parts
                key = (fig, int(size))
                values.setdefault(key, []).append(float(value))
                units[key] = unit
                got = True
            elif len(parts) >= 2 and parts[0] == "SKIP":
                skipped[parts[1]] = " ".join(parts[2:])
        runs += got
    medians = {k: statistics.median(v) for k, v in values.items()}
    return medians, units, skipped, runs, {k: len(v) for k, v in values.items()}


def human_size(n):
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--ours", nargs="*", default=[])
    ap.add_argument("--theirs", nargs="*", default=[])
    a = ap.parse_args()

    ours, units_o, skip_o, runs_o, n_o = parse(a.ours)
    theirs, units_t, skip_t, runs_t, n_t = parse(a.theirs)
    units = {**units_t, **units_o}
    order = {name: i for i, (name, _) in enumerate(FIGURES)}
    keys = sorted(set(ours) | set(theirs), key=lambda k: (order.get(k[0], 99), k[0], k[1]))
    # Figures one side skipped entirely still get a row, so the gap is visible.
    for fig, _ in FIGURES:
        if not any(k[0] == fig for k in keys) and (fig in skip_o or fig in skip_t):
            keys.append((fig, 0))

    print(f"runs with results: aclshmem {runs_o}, oshmem {runs_t}; each value is the median over runs "
          f"of the per-run median")
    print("ratio = aclshmem / oshmem.  us (latency): LOWER is better, ratio < 1 means aclshmem is faster;"
          " Mmsg/s, GB/s, fraction: HIGHER is better, ratio > 1 means aclshmem is faster; within 10% = \"~same\" (the bw_memcpy row, identical code in both, shows the noise)")
    hdr = f"{'figure':<20} {'size':>8} {'unit':<9} {'aclshmem':>10} {'oshmem':>10} {'ratio':>7}  better"
    print(hdr)
    print("-" * len(hdr))
    rows = []
    for key in keys:
        fig, size = key
        o, t = ours.get(key), theirs.get(key)
        unit = units.get(key, "")
        ratio = o / t if (o is not None and t is not None and t > 0) else None
        better = ""
        if ratio is not None and fig != "bw_memcpy":
            lower = unit in LOWER_IS_BETTER_UNITS
            better = "aclshmem" if (ratio < 1) == lower else "oshmem"
            if abs(ratio - 1) < 0.10:
                better = "~same"
        note = ""
        if o is None and fig in skip_o:
            note = f"aclshmem skipped ({skip_o[fig]})"
        if t is None and fig in skip_t:
            note += f" oshmem skipped ({skip_t[fig]})"
        size_s = human_size(size) if size else "-"
        print(f"{fig:<20} {size_s:>8} {unit:<9} {fmt(o):>10} {fmt(t):>10} "
              f"{(f'{ratio:.3f}' if ratio is not None else 'n/a'):>7}  {better or note.strip()}")
        rows.append({
            "figure": fig, "size_bytes": size, "unit": unit,
            "aclshmem": "" if o is None else f"{o:.6g}",
            "oshmem": "" if t is None else f"{t:.6g}",
            "ratio_aclshmem_over_oshmem": "" if ratio is None else f"{ratio:.4f}",
            "lower_is_better": int(unit in LOWER_IS_BETTER_UNITS),
            "runs_aclshmem": n_o.get(key, 0), "runs_oshmem": n_t.get(key, 0),
            "note": note.strip(),
        })
    with open(a.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) if rows else ["figure"])
        w.writeheader()
        w.writerows(rows)
    print(f"\nCSV: {a.csv}")
    print("figures: " + "; ".join(f"{n} = {d}" for n, d in FIGURES))
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
