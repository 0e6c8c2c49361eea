#!/usr/bin/env python3
"""The table and the figure of scripts/apps.sh: real programs on ccfs against the page cache.

Reads DIR/apps.csv (one row per run and figure) and writes DIR/apps.md (medians of the rounds per
store, program, phase, warm-up and ccfs configuration, each against the page cache runs it
alternated with (the rows of the same `config`); "speed" = ccfs's figure over the page cache's, turned so that
above 1 always means ccfs faster: tps, queries/s and MiB/s are divided, seconds inverted) and
DIR/apps.png (that speed per program and store, a line at 1).

Usage: bench/apps_report.py DIR
"""
import csv
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_lib import median  # noqa: E402

PHASES = [("pgbench", "select", "pgbench -S"), ("pgbench", "rw", "pgbench read-write"),
          ("sqlite", "queries", "SQLite lookups + scans"), ("grep", "grep1", "grep -r, cold"),
          ("grep", "grep2", "grep -r, again"), ("pyimport", "import1", "Python imports, cold"),
          ("pyimport", "import2", "Python imports, again"), ("tar", "tar", "tar cf - DIR \\| cat, cold")]
STORES = {"local": "local disk", "sshfs": "sshfs", "gluster": "GlusterFS"}


def num(v):
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def fmt(v, digits=2):
    return "" if v is None else f"{v:.{digits}f}"


def short(config):
    """raw_tier=kernel compressed_percent=75 compressor=zstd -> kernel zstd C=75"""
    kv = dict(w.split("=", 1) for w in config.split() if "=" in w)
    return " ".join(x for x in [kv.get("raw_tier", ""), kv.get("compressor", ""),
                                f"C={kv['compressed_percent']}" if "compressed_percent" in kv else ""] if x)


def main():
    out = sys.argv[1]
    with open(os.path.join(out, "apps.csv")) as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit("apps_report: no rows in apps.csv")
    lines = []
    first = rows[0]
    configs = list(dict.fromkeys(r["config"] for r in rows if r["target"] == "ccfs"))
    lines.append(f"Memory cgroups of {first['memory']} on each side, the programs' data "
                 f"{int(first['data_bytes']) >> 20} MiB (Python's modules: what they are); ccfs "
                 "at 85% of the cgroup less 32 MiB. Medians of the rounds (n = rounds). Speed = ccfs / page "
                 "cache as the program sees it (above 1: ccfs faster; seconds inverted). Hit ratio: "
                 "the daemon's, of the reads that reached it (the kernel's hits above it are not "
                 "counted). CPU: the ccfs daemon's user + system seconds during the run; per GiB "
                 "of the bytes it answered. No RAPL on this machine: CPU time only.\n")
    lines.append("| store | program | page cache | ccfs | speed | n | hit ratio | ccfs CPU s | "
                 "CPU s / GiB | warm-up | ccfs keys |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    plot = []
    cells = {}  # (store, config, warm-up, program label) -> (speed, hit ratio, CPU s / GiB)
    for store in [s for s in STORES if any(r["store"] == s for r in rows)]:
        for app, phase, label in PHASES:
            for warm, config in [(w, c) for w in ["no", "yes"] for c in configs]:
                sel = [r for r in rows if r["store"] == store and r["app"] == app
                       and r["phase"] == phase and r["warmup"] == warm]
                pc = [num(r["value"]) for r in sel if r["target"] == "store" and r["config"] == config]
                cc = [r for r in sel if r["target"] == "ccfs" and r["config"] == config]
                if not pc or not cc:
                    continue
                unit = sel[0]["unit"]
                p, c = median(pc), median([num(r["value"]) for r in cc])
                speed = None
                if p and c:
                    speed = p / c if unit == "s" else c / p
                hit = median([num(r["hit_ratio"]) for r in cc])
                cpu = median([num(r["daemon_cpu_s"]) for r in cc])
                per = median([num(r["cpu_s_per_gib"]) for r in cc])
                digits = 2 if unit == "s" else (0 if unit in ("tps", "queries/s") else 1)
                lines.append(
                    f"| {STORES[store]} | {label} | {fmt(p, digits)} {unit} | {fmt(c, digits)} {unit} | "
                    f"**{fmt(speed)}x** | {min(len(pc), len(cc))} | {fmt(hit, 3)} | {fmt(cpu)} | "
                    f"{fmt(per)} | {warm} | {config} |")
                if speed:
                    cells[(store, config, warm, label)] = (speed, hit, per)
                    tag = (" (warmed)" if warm == "yes" else "") + (f" [{short(config)}]" if len(configs) > 1 else "")
                    plot.append((store, label.replace("\\|", "|") + tag, speed,
                                 (PHASES.index((app, phase, label)), warm, configs.index(config))))
    # The same figures one line per program: a column per store and configuration.
    columns = list(dict.fromkeys((c[0], c[1], c[2]) for c in cells))
    lines.append("")
    lines.append("Speed per program (ccfs's hit ratio; its CPU s per GiB answered):\n")
    lines.append("| program | " + " | ".join(f"{STORES[s]}, {short(c)}{', warmed' if w == 'yes' else ''}"
                                           for s, c, w in columns) + " |")
    lines.append("|---" * (len(columns) + 1) + "|")
    for label in dict.fromkeys(c[3] for c in cells):
        row = []
        for col in columns:
            v = cells.get(col + (label,))
            row.append("" if v is None else f"**{fmt(v[0])}x** ({fmt(v[1])}; {fmt(v[2], 1)})")
        lines.append(f"| {label} | " + " | ".join(row) + " |")
    with open(os.path.join(out, "apps.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))

    if not plot:
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker  # noqa: F401
    labels = list(dict.fromkeys(p[1] for p in sorted(plot, key=lambda p: p[3])))
    stores = list(dict.fromkeys(p[0] for p in plot))
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(labels) + 1.6))
    h = 0.8 / max(len(stores), 1)
    for k, store in enumerate(stores):
        ys, xs = [], []
        for i, label in enumerate(labels):
            v = [p[2] for p in plot if p[0] == store and p[1] == label]
            if v:
                ys.append(i + (k - (len(stores) - 1) / 2) * h)
                xs.append(v[0])
        ax.barh(ys, xs, height=h, label=STORES[store])
    ax.axvline(1, color="black", linewidth=1)
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.set_xscale("log")
    speeds = [p[2] for p in plot]
    ax.set_xlim(min(min(speeds), 1) * 0.8, max(max(speeds), 1) * 1.25)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.FuncFormatter(
        lambda v, _: f"{v:g}" if (v < 1 and round(v * 10) % 2 == 0) or (v > 1 and round(v) in (2, 3, 5))
        else ""))
    ax.set_xlabel("speed of ccfs / page cache at equal RAM (above 1: ccfs faster)")
    ax.legend(loc="lower right")
    ax.set_title(f"Real programs, memory {first['memory']}, data {int(first['data_bytes']) >> 20} MiB")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "apps.png"), dpi=110)


if __name__ == "__main__":
    main()
