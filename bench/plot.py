#!/usr/bin/env python3
"""Plot target/bench/results.csv (written by bench/report.py) into bench/results.png.

Usage: plot.py [CSV] [PNG]

Panels: put/get latency vs message size (log-log, both libraries); 8-byte latencies (bars);
put_nbi message rate (bars); streaming bandwidth with the memcpy limit (bars).
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

LIBS = [("aclshmem", "tab:blue"), ("oshmem", "tab:orange")]


def load(path):
    rows = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            rows.setdefault(r["figure"], []).append(r)
    return rows


def val(r, lib):
    return float(r[lib]) if r.get(lib) else None


def bars(ax, rows, figs, labels, ylabel, title):
    width = 0.38
    for j, (lib, color) in enumerate(LIBS):
        xs, ys = [], []
        for i, fig in enumerate(figs):
            for r in rows.get(fig, []):
                v = val(r, lib)
                if v is not None:
                    xs.append(i + (j - 0.5) * width)
                    ys.append(v)
        b = ax.bar(xs, ys, width, label=lib, color=color)
        ax.bar_label(b, fmt="%.3g", fontsize=7)
    ax.set_xticks(range(len(figs)), labels)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.margins(y=0.25)
    ax.legend(ncol=2, loc="upper right")


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "target/bench/results.csv"
    dst = sys.argv[2] if len(sys.argv) > 2 else "bench/results.png"
    rows = load(src)
    fig, axes = plt.subplots(2, 2, figsize=(12, 9))

    ax = axes[0][0]
    for figname, style in (("put_lat", "-o"), ("get_lat", "--s")):
        for lib, color in LIBS:
            pts = [(int(r["size_bytes"]), val(r, lib)) for r in rows.get(figname, [])]
            pts = [(x, y) for x, y in pts if y is not None]
            if pts:
                ax.plot(*zip(*pts), style, color=color, label=f"{lib} {figname}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("latency (us, lower is better)")
    ax.set_title("putmem+quiet / getmem latency")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)

    bars(axes[0][1], rows, ["p_lat", "g_lat", "put64_lat"], ["int64_p+quiet", "int64_g", "int64_put+quiet"],
         "latency (us, lower is better)", "8-byte operations")
    bars(axes[1][0], rows, ["nbi_rate"], ["8 B putmem_nbi"], "Mmsg/s (higher is better)",
         "put_nbi message rate (1000 per quiet)")
    bw = rows.get("bw_put", []) or rows.get("bw_memcpy", [])
    size = f" ({int(bw[0]['size_bytes']) >> 20} MiB buffers)" if bw else ""
    bars(axes[1][1], rows, ["bw_put", "bw_memcpy"], ["putmem+quiet", "local memcpy"],
         "GB/s (higher is better)", "streaming bandwidth" + size)

    fig.suptitle("libaclshmem vs Open MPI OSHMEM, 2 PEs on one node (median of runs)")
    fig.tight_layout()
    fig.savefig(dst, dpi=110)
    print(f"plot: {dst}")


if __name__ == "__main__":
    main()
