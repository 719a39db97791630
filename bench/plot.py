#!/usr/bin/env python3
"""Plot a CSV written by bench/report.py.

Usage: plot.py [CSV] [PNG] [rma|sync|coll]     (defaults: target/bench/results.csv bench/results.png,
                                                 the suite is guessed from the figures in the CSV)

rma:  put/get latency vs message size (log-log, both libraries); 8-byte latencies (bars); put_nbi
      message rate (bars); streaming bandwidth with the memcpy limit (bars).
sync: 2-PE signal/atomic latencies (bars); ring time per hop vs PE count (bars).
coll: barrier vs PE count; broadcast, reduction, fcollect/alltoall time vs size (log-log, one line
      per library and PE count).
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


def plot_rma(rows, dst):
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


def npes_bars(ax, rows, figname, ylabel, title):
    pts = sorted(int(r["size_bytes"]) for r in rows.get(figname, []))
    width = 0.38
    for j, (lib, color) in enumerate(LIBS):
        xs, ys = [], []
        for i, n in enumerate(pts):
            for r in rows.get(figname, []):
                if int(r["size_bytes"]) == n and val(r, lib) is not None:
                    xs.append(i + (j - 0.5) * width)
                    ys.append(val(r, lib))
        b = ax.bar(xs, ys, width, label=lib, color=color)
        ax.bar_label(b, fmt="%.3g", fontsize=7)
    ax.set_xticks(range(len(pts)), [f"{n} PEs" for n in pts])
    ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.margins(y=0.3)
    ax.legend(ncol=2, loc="upper left")


def plot_sync(rows, dst):
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    bars(axes[0], rows, ["amo_fadd", "amo_cswap", "sig_pingpong", "wait_pingpong"],
         ["int64\nfetch-add", "int64\ncompare-swap", "put+signal\nping-pong", "p+wait_until\nping-pong"],
         "us (lower is better; ping-pongs: half round trip)", "2 PEs")
    npes_bars(axes[1], rows, "ring_hop", "us per hop (log, lower is better)",
              "ring of put-with-signal + signal wait (2 cores)")
    fig.suptitle("signals and atomics: libaclshmem vs Open MPI OSHMEM (median of runs)")
    fig.tight_layout()
    fig.savefig(dst, dpi=110)
    print(f"plot: {dst}")


def size_lines(ax, rows, base, title, xlabel="message size (bytes)"):
    styles = {2: "-o", 4: "--s", 8: ":^", 16: "-.v"}
    for figname in sorted(k for k in rows if k.startswith(base + "_") and k.endswith("pe")):
        npes = int(figname[len(base) + 1:-2])
        for lib, color in LIBS:
            pts = [(int(r["size_bytes"]), val(r, lib)) for r in rows[figname]]
            pts = [(x, y) for x, y in pts if y is not None]
            if pts:
                ax.plot(*zip(*pts), styles.get(npes, "-"), color=color, label=f"{lib} {npes} PEs")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("us per call (lower is better)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)


def plot_coll(rows, dst):
    fig, axes = plt.subplots(2, 3, figsize=(16, 9))
    npes_bars(axes[0][0], rows, "barrier", "us (log, lower is better)", "barrier_all (2 cores)")
    size_lines(axes[0][1], rows, "bcast", "broadcast from PE 0")
    size_lines(axes[0][2], rows, "reduce", "int64 sum reduction")
    size_lines(axes[1][0], rows, "fcollect", "fcollect", "bytes per PE")
    size_lines(axes[1][1], rows, "alltoall", "alltoall", "bytes per PE pair")
    axes[1][2].axis("off")
    fig.suptitle("collectives over all PEs: libaclshmem vs Open MPI OSHMEM (OpenSHMEM 1.4 active-set calls),"
                 " median of runs")
    fig.tight_layout()
    fig.savefig(dst, dpi=100)
    print(f"plot: {dst}")


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "target/bench/results.csv"
    dst = sys.argv[2] if len(sys.argv) > 2 else "bench/results.png"
    rows = load(src)
    suite = sys.argv[3] if len(sys.argv) > 3 else None
    if suite is None:
        suite = "sync" if "ring_hop" in rows or "amo_fadd" in rows else (
            "coll" if "barrier" in rows or any(k.startswith("bcast_") for k in rows) else "rma")
    {"rma": plot_rma, "sync": plot_sync, "coll": plot_coll}[suite](rows, dst)


if __name__ == "__main__":
    main()
