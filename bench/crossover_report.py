#!/usr/bin/env python3
"""Where a compressed cache pays: the crossover report of scripts/crossover.sh.

Reads RESULTS_DIR/crossover.jsonl (every `ccfs replay --json` line, tagged with store, emulated,
delay_us, size_ratio, round and system) and store-reads.jsonl (the median O_DIRECT 8 KiB read of
each store at each round), and writes:

  crossover.csv         one row per store x size ratio x trace x configuration, medians over the
                        rounds (ratio_vs_pagecache: the median of each round's ratio against the
                        page cache of the same round); `best` says which rows the curves use:
                        "ccfs" = ccfs's best configuration at that point, "tier" = the best of its
                        raw tier, "c" = the best C > 0 of its raw tier and codec
  crossover-points.csv  per size ratio and trace: the store read latency where ccfs's best
                        configuration becomes faster than the page cache (interpolated on log
                        latency where the ratio crosses 1.0), measured and as the model predicts
                        it (model_us_per_buffer of the same configuration against the measured
                        page cache)
  crossover-latency.png µs per buffer vs store read latency (log x), one panel per size ratio and
                        trace: the page cache and ccfs's best configuration (and each raw tier's
                        best), the emulated sweep as lines, the real stores as labelled markers,
                        the crossover marked
  crossover-ratio.png   the same as ratios ccfs / page cache, 1.0 marked
  crossover-size.png    µs per buffer vs the data set's size relative to memory, one panel per
                        store and trace

and prints Markdown: the sentences "ccfs is faster than the page cache at equal RAM when a page
read costs more than X µs", and one table per size ratio and trace. Rows from the delay store say
EMULATED everywhere.

Usage: crossover_report.py RESULTS_DIR [MORE_RESULTS_DIR...]

With more than one directory, the runs are reported together (a grid run in pieces, e.g. the delay
sweep and each real store separately, at the same CROSS_MEMORY) and the files are written to the
first; a point measured in two runs has the rounds of both.
"""
import csv
import math
import os
import sys

from report_lib import median, read_json, read_jsonl

if len(sys.argv) < 2:
    sys.exit(__doc__)
dirs = sys.argv[1:]
out = dirs[0]
os.makedirs(out, exist_ok=True)


def runs_jsonl(name):
    """The lines of NAME in every directory; each says which run ("run": its index) it is from."""
    return [dict(r, run=run) for run, d in enumerate(dirs) for r in read_jsonl(os.path.join(d, name))]


# ---- points and configurations -------------------------------------------------------------------
def store_key(r):
    return (r["store"], r.get("delay_us"))


def store_label(key, short=False):
    store, delay = key
    if store == "delay":
        return f"delay {delay} µs (EMULATED)" if short else f"delay_fs {delay} µs (EMULATED)"
    return {"local": "local disk", "sshfs": "sshfs", "gluster": "GlusterFS"}.get(store, store)


def config_of(r):
    """(system, raw_tier, codec, C) of a replay line; a raw tier served over FUSE over io_uring
    (CROSS_TRANSPORTS=uring) is a tier of its own, "daemon+uring" or "kernel+uring"."""
    if r["system"] == "pagecache":
        return ("pagecache", "-", "-", 0)
    c = r.get("compressed_percent", 0)
    tier = r.get("raw_tier", "daemon") + ("+uring" if r.get("transport") == "uring" else "")
    return ("ccfs", tier, r.get("compressor", "lz4") if c else "none", c)


def config_name(cfg):
    system, tier, codec, c = cfg
    if system == "pagecache":
        return "page cache"
    return f"ccfs {tier} C=0" if c == 0 else f"ccfs {tier} {codec} C={c}"


lines = runs_jsonl("crossover.jsonl")
if not lines:
    sys.exit(f"crossover_report: no replay lines in {out}/crossover.jsonl")
read_us = {}
for r in runs_jsonl("store-reads.jsonl"):
    read_us.setdefault(store_key(r), []).append(r["read_us"])
read_us = {k: median(v) for k, v in read_us.items()}

# point = (store key, size ratio, dist) -> config -> round -> replay line
points = {}
for r in lines:
    dist = r["dist"].split(":")[0]
    point = (store_key(r), r["size_ratio"], dist)
    points.setdefault(point, {}).setdefault(config_of(r), {})[(r["run"], r["round"])] = r

rows = []  # one per point and configuration
for point, cfgs in points.items():
    skey, ratio, dist = point
    base = cfgs.get(("pagecache", "-", "-", 0), {})
    for cfg, by_round in cfgs.items():
        rs = list(by_round.values())
        ratios = [r["us_per_buffer"] / base[n]["us_per_buffer"]
                  for n, r in by_round.items() if n in base and base[n]["us_per_buffer"] > 0]
        rows.append({
            "point": point, "config": cfg,
            "store": skey[0], "emulated": "yes" if skey[0] == "delay" else "no",
            "delay_us": skey[1] if skey[1] is not None else "",
            "store_read_us": read_us.get(skey),
            "size_ratio": ratio, "dist": dist,
            "system": cfg[0], "raw_tier": cfg[1], "codec": cfg[2], "C": cfg[3],
            # The page cache's misses are counted from /proc/self/io read_bytes, which reads of a
            # FUSE file system (sshfs, GlusterFS, delay_fs) never add to: there it has none.
            "hit_ratio": (median(r.get("hit_ratio") for r in rs)
                          if cfg[0] == "ccfs" or skey[0] == "local" else None),
            "us_per_buffer": median(r["us_per_buffer"] for r in rs),
            "p50": median(r.get("p50_us") for r in rs),
            "p99": median(r.get("p99_us") for r in rs),
            "ratio_vs_pagecache": median(ratios),
            "model_us_per_buffer": median(r.get("model_us_per_buffer") for r in rs),
            "rounds": len(rs),
            "best": "",
        })

# Which rows the curves use: per point, the best C of each tier and codec, each tier's best, and
# ccfs's best (lowest median µs per buffer).
by_point = {}
for row in rows:
    by_point.setdefault(row["point"], []).append(row)
for point, prs in by_point.items():
    ccfs = [r for r in prs if r["system"] == "ccfs" and r["us_per_buffer"] is not None]
    groups = {}
    for r in ccfs:
        if r["C"] > 0:
            groups.setdefault((r["raw_tier"], r["codec"]), []).append(r)
    for g in groups.values():
        min(g, key=lambda r: r["us_per_buffer"])["best"] = "c"
    for tier in {r["raw_tier"] for r in ccfs}:
        in_tier = [r for r in ccfs if r["raw_tier"] == tier]
        min(in_tier, key=lambda r: r["us_per_buffer"])["best"] = "tier"
    if ccfs:
        min(ccfs, key=lambda r: r["us_per_buffer"])["best"] = "ccfs"


def fmt(v, digits=1):
    if v is None or v == "":
        return ""
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


columns = ["store", "emulated", "delay_us", "store_read_us", "size_ratio", "dist", "system",
           "raw_tier", "codec", "C", "hit_ratio", "us_per_buffer", "p50", "p99",
           "ratio_vs_pagecache", "model_us_per_buffer", "rounds", "best"]
digits = {"hit_ratio": 4, "ratio_vs_pagecache": 3}
rows.sort(key=lambda r: (r["store_read_us"] or 0, r["store"], r["size_ratio"], r["dist"],
                         r["system"] != "pagecache", r["raw_tier"], r["C"], r["codec"]))
with open(os.path.join(out, "crossover.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(columns)
    for r in rows:
        w.writerow([fmt(r[c], digits.get(c, 1)) for c in columns])


# ---- curves and crossovers -----------------------------------------------------------------------
def pick(point, pred):
    return next((r for r in by_point.get(point, []) if pred(r)), None)


def best_row(point, tier=None):
    """ccfs's best row at a point, or the best of one raw tier."""
    if tier is None:
        return pick(point, lambda r: r["best"] == "ccfs")
    return pick(point, lambda r: r["raw_tier"] == tier and r["best"] in ("ccfs", "tier"))


def pagecache_row(point):
    return pick(point, lambda r: r["system"] == "pagecache")


def crossing(series):
    """series: [(latency, ratio)] sorted by latency. The latency above which every point has the
    ratio below 1.0, interpolated between the last point at or above 1.0 and the next, log ratio
    linear in log latency (where the two curves of the log-log plot cross); with a status word:
    "crosses", "below" (below 1.0 at every point), "above" (at none)."""
    series = [(x, y) for x, y in series if x and x > 0 and y]
    if len(series) < 1:
        return None, "none"
    above = [i for i, (_, y) in enumerate(series) if y >= 1.0]
    if not above:
        return series[0][0], "below"
    i = above[-1]
    if i == len(series) - 1:
        return series[-1][0], "above"
    (x1, y1), (x2, y2) = series[i], series[i + 1]
    t = math.log(y1) / (math.log(y1) - math.log(y2))
    return math.exp(math.log(x1) + t * (math.log(x2) - math.log(x1))), "crosses"


size_ratios = sorted({p[1] for p in points})
dists = sorted({p[2] for p in points}, key=lambda d: (d != "pareto", d))
store_keys = sorted({p[0] for p in points}, key=lambda k: (read_us.get(k) or 0, k[0]))
emulated_keys = [k for k in store_keys if k[0] == "delay"]
real_keys = [k for k in store_keys if k[0] != "delay"]
# The raw tiers measured (daemon, kernel; "+uring" on FUSE over io_uring), in that order.
table_tiers = sorted({r["raw_tier"] for r in rows if r["system"] == "ccfs"},
                     key=lambda t: (t.endswith("+uring"), t != "daemon", t))


def ratio_x(label):
    return f"{label:g}x"


crossovers = []  # (size ratio, dist, measured, status, model, model status, source, best names)
for ratio in size_ratios:
    for dist in dists:
        keys = emulated_keys if len(emulated_keys) >= 2 else store_keys
        source = "emulated delay_fs sweep" if keys is emulated_keys else "measured stores"
        series, model_series, names = [], [], set()
        for k in keys:
            point = (k, ratio, dist)
            b, pc = best_row(point), pagecache_row(point)
            if b is None or pc is None:
                continue
            names.add(config_name(b["config"]))
            series.append((read_us.get(k), b["ratio_vs_pagecache"]))
            if b["model_us_per_buffer"] is not None and pc["us_per_buffer"]:
                model_ratio = b["model_us_per_buffer"] / pc["us_per_buffer"]
                model_series.append((read_us.get(k), model_ratio))
        series.sort(key=lambda s: s[0] or 0)
        model_series.sort(key=lambda s: s[0] or 0)
        x, status = crossing(series)
        mx, mstatus = crossing(model_series)
        crossovers.append((ratio, dist, x, status, mx, mstatus, source, sorted(names), series))

with open(os.path.join(out, "crossover-points.csv"), "w", newline="") as f:
    w = csv.writer(f)
    # crossover_us is empty unless status is "crosses": "below" = ccfs faster at every latency
    # measured, "above" = at none (the range is in lowest_us..highest_us).
    w.writerow(["size_ratio", "dist", "crossover_us", "status", "model_crossover_us",
                "model_status", "lowest_us", "highest_us", "from", "emulated",
                "ccfs_best_configs"])
    for ratio, dist, x, status, mx, mstatus, source, names, series in crossovers:
        w.writerow([ratio, dist, fmt(x) if status == "crosses" else "", status,
                    fmt(mx) if mstatus == "crosses" else "", mstatus,
                    fmt(series[0][0]) if series else "", fmt(series[-1][0]) if series else "",
                    source, "yes" if source.startswith("emulated") else "no", "; ".join(names)])

# ---- Markdown ------------------------------------------------------------------------------------
machines = [read_json(os.path.join(d, "machine.json"), {}) for d in dirs]
machine = next((m for m in machines if m), {})
elapsed = read_json(os.path.join(out, "elapsed.json"), {}) if len(dirs) == 1 else {}
memories = sorted({m.get("memory") for m in machines if m})
if len(memories) > 1:
    print(f"crossover_report: WARNING: the runs had different memory ({', '.join(memories)}): "
          "their points do not belong on one curve", file=sys.stderr)
rounds_run = max((r["rounds"] for r in rows), default=0)
print("# Where a compressed cache pays: ccfs against the page cache at equal RAM\n")
if len(dirs) > 1:
    runs = [d for d in dirs if os.path.exists(os.path.join(d, "crossover.jsonl"))]
    print(f"Runs reported together: {', '.join(runs)}" + (
        f" (**different memory: {', '.join(memories)}**)" if len(memories) > 1 else "") + ".\n")
quick = any(m.get("quick") for m in machines)
print(f"Memory {machine.get('memory', '?')} for each side (the page cache in a memory cgroup of "
      "that size; ccfs's `memory`, and in raw_tier=kernel the kernel's pages and the daemon "
      f"together in one cgroup of that size); data: `ccfs mkdata` "
      + ("default mix" if machine.get("mix", "default") == "default" else f"--mix {machine['mix']}")
      + f"; one reader, 8 KiB pages, {machine.get('ops', '?')} "
      f"measured reads per run; medians of up to {rounds_run} interleaved round(s); ratios against "
      "the page cache of the same round. x = the store's median 8 KiB O_DIRECT read, measured at "
      "the start and the end of each round. **delay_fs rows are an EMULATED store** (a timer "
      "before each read of the local disk, not a network)."
      + (" **Quick grid** (`scripts/crossover.sh --quick`)." if quick else "")
      + (f" Run time {elapsed['seconds']} s; load average {machine.get('loadavg_start', '?')} at "
         f"the start, {elapsed.get('loadavg_end', '?')} at the end." if elapsed else "") + "\n")

print("The page cache's hit ratio is shown on the local store only: its misses are counted from "
      "/proc/self/io read_bytes, to which reads through a FUSE file system (sshfs, GlusterFS, "
      "delay_fs) add nothing.\n")
print("## The crossover\n")
for ratio, dist, x, status, mx, mstatus, source, names, series in crossovers:
    where = f"(data {ratio_x(ratio)} memory, {dist}; from the {source}"
    where += "; EMULATED)" if source.startswith("emulated") else ")"
    span = (f"{series[0][0]:.0f}-{series[-1][0]:.0f} µs" if series else "no points")
    if status == "crosses":
        text = (f"ccfs is faster than the page cache at equal RAM when a page read costs more than "
                f"**{x:.0f} µs** {where}")
    elif status == "below":
        text = (f"ccfs is faster than the page cache at equal RAM at every measured store latency "
                f"({span}; ccfs best / page cache {series[0][1]:.2f}x at {series[0][0]:.0f} µs) "
                f"{where}")
    elif status == "above":
        text = (f"ccfs is not faster than the page cache at equal RAM at any measured store "
                f"latency ({span}; {series[-1][1]:.2f}x at {series[-1][0]:.0f} µs) {where}")
    else:
        text = f"no points {where}"
    if mstatus == "crosses":
        text += f"; the model puts it at {mx:.0f} µs"
    elif mstatus in ("below", "above"):
        text += f"; the model: {'faster' if mstatus == 'below' else 'not faster'} at every point"
    print(f"- {text}. ccfs's best configuration at these points: {', '.join(names) or '-'}.")
    # The real stores beside the curve: does each sit on the side the crossover says?
    for k in real_keys:
        point = (k, ratio, dist)
        b, pc = best_row(point), pagecache_row(point)
        if b is None or pc is None or source != "emulated delay_fs sweep":
            continue
        rx = read_us.get(k)
        expect = None
        if status == "crosses":
            expect = rx > x
        elif status in ("below", "above"):
            expect = status == "below"
        faster = b["ratio_vs_pagecache"] is not None and b["ratio_vs_pagecache"] < 1.0
        agree = "" if expect is None else (" (as the curve says)" if expect == faster
                                           else " (NOT as the curve says)")
        print(f"  - {store_label(k)} ({rx:.0f} µs a read): ccfs best {b['us_per_buffer']:.1f} µs, "
              f"page cache {pc['us_per_buffer']:.1f} µs, {b['ratio_vs_pagecache']:.2f}x{agree}")
print()

def ratio_of(r):
    return f"{r['ratio_vs_pagecache']:.2f}x" if r and r["ratio_vs_pagecache"] else "-"


def hit(r):
    return f"{r['hit_ratio']:.3f}" if r and r["hit_ratio"] is not None else "-"


def with_config(r):
    """"0.83x zstd C=50": a ratio and the configuration it is of, less the raw tier."""
    return f"{ratio_of(r)} {config_name(r['config']).split(' ', 2)[2]}" if r else "-"


for ratio in size_ratios:
    for dist in dists:
        print(f"## data {ratio_x(ratio)} memory, {dist}\n")
        print("| store | read µs | page cache µs (hit) | ccfs best | µs (hit) | ratio | "
              + " | ".join(f"best {t}" for t in table_tiers) + " | C=0 "
              + " / ".join(table_tiers) + " | model µs (best) |")
        print("|---" * (8 + len(table_tiers)) + "|")
        for k in store_keys:
            point = (k, ratio, dist)
            pc, b = pagecache_row(point), best_row(point)
            if pc is None:
                continue
            c0 = [pick(point, lambda r, t=t: r["system"] == "ccfs" and r["raw_tier"] == t
                       and r["C"] == 0) for t in table_tiers]
            cells = [store_label(k), fmt(read_us.get(k)), f"{pc['us_per_buffer']:.1f} ({hit(pc)})"]
            if b:
                cells += [config_name(b["config"]), f"{b['us_per_buffer']:.1f} ({hit(b)})",
                          ratio_of(b)]
            else:
                cells += ["-", "-", "-"]
            cells += [with_config(best_row(point, t)) for t in table_tiers]
            cells += [" / ".join(ratio_of(x) for x in c0),
                      fmt(b["model_us_per_buffer"]) if b else ""]
            print("| " + " | ".join(cells) + " |")
        print()


def floor_us(r):
    """A lower bound on a ccfs run's µs per buffer at the hit ratio it reached, from its own
    counters: misses x (the daemon's miss cost + the trip) + the other reads that reached the
    daemon x the trip. Every hit's own cost and all decompression are left out. None without
    the costs (a run of an older ccfs)."""
    c = r.get("costs_us") or {}
    if r.get("system") != "ccfs" or not r.get("reads") or c.get("disk") is None:
        return None
    trip = c.get("trip") or 0.0
    miss = r["misses"] / r["reads"]
    reach = r.get("cache_reads", r["reads"]) / r["reads"]
    return miss * (c["disk"] + trip) + max(0.0, reach - miss) * trip


# The floor of each point: the lowest, over ccfs's configurations, of the median floor of its runs,
# against the page cache's median; what no configuration measured could go below at its hit ratio.
floor_lines = []
for point in sorted(points, key=lambda p: (p[1], p[2], read_us.get(p[0]) or 0)):
    pc = pagecache_row(point)
    floors = []
    for cfg, by_round in points[point].items():
        f = [x for x in (floor_us(r) for r in by_round.values()) if x is not None]
        if f:
            floors.append(median(f))
    b = best_row(point)
    if floors and pc and pc["us_per_buffer"] and b:
        floor_lines.append(f"| {ratio_x(point[1])}, {point[2]} | {store_label(point[0])} | "
                           f"{ratio_of(b)} | {min(floors) / pc['us_per_buffer']:.2f}x |")
if floor_lines:
    print("## The floor: what the hit ratios reached leave room for\n")
    print("Per configuration, from its runs' own counters: misses x (the daemon's miss cost + the "
          "trip) + the other reads that reach the daemon x the trip (every hit's own cost and all "
          "decompression left out): a lower bound on its µs per buffer at the hit ratio it "
          "reached. The lowest over ccfs's configurations, against the page cache:\n")
    print("| data, trace | store | ccfs best / page cache | lowest floor / page cache |")
    print("|---|---|---|---|")
    print("\n".join(floor_lines) + "\n")

failures = runs_jsonl("failures.jsonl")
if failures:
    print(f"## Runs that failed ({len(failures)}; left out of the medians: a configuration with no "
          "run at a point is missing from its curves)\n")
    print("| store | data | trace | round | system | raw tier:codec:C | daemon exit |")
    print("|---|---|---|---|---|---|---|")
    for f in failures:
        why = f.get("daemon_exit", "")
        if why == 137:
            why = "137 (SIGKILL: the memory cgroup's OOM killer in raw_tier=kernel?)"
        cells = [store_label(store_key(f)), ratio_x(f["size_ratio"]), f["dist"], f["round"],
                 f["system"], f.get("config", "-"), why]
        print("| " + " | ".join(str(c) for c in cells) + " |")
    print()
print("Every configuration of every point: crossover.csv; the crossovers: crossover-points.csv.\n")

# ---- plots ---------------------------------------------------------------------------------------
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is missing (python3-matplotlib; scripts/setup.sh installs it): no plots",
          file=sys.stderr)
    sys.exit(0)

mem = machine.get("memory", "?")
markers = {"local": "s", "sshfs": "D", "gluster": "^"}
tier_style = {"daemon": ("tab:blue", ":"), "kernel": ("tab:green", "--"),
              "daemon+uring": ("tab:purple", "-."), "kernel+uring": ("tab:olive", "-.")}
# ccfs's best is one of the tiers' bests at each point: drawn wide and pale beneath them.
wide = {"ccfs best": {"linewidth": 4, "alpha": 0.45, "zorder": 1}}


def grid(nrows, ncols):
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.8 * nrows), squeeze=False)
    return fig, axes


def latency_panels(value, ylabel, fname, title, log_y):
    fig, axes = grid(len(dists), len(size_ratios))
    for j, ratio in enumerate(size_ratios):
        for i, dist in enumerate(dists):
            ax = axes[i][j]
            cross = next(c for c in crossovers if c[0] == ratio and c[1] == dist)
            curves = [("page cache", lambda p: pagecache_row(p), "black", "-"),
                      ("ccfs best", lambda p: best_row(p), "tab:red", "-")]
            curves += [(f"ccfs {t} best", lambda p, t=t: best_row(p, t), *tier_style[t])
                       for t in table_tiers]
            for name, get, color, style in curves:
                if value == "ratio_vs_pagecache" and name == "page cache":
                    continue
                xs, ys = [], []
                for k in emulated_keys:
                    r = get((k, ratio, dist))
                    if r is not None and read_us.get(k) and r[value] is not None:
                        xs.append(read_us[k])
                        ys.append(r[value])
                if xs:
                    order = sorted(range(len(xs)), key=lambda n: xs[n])
                    ax.plot([xs[n] for n in order], [ys[n] for n in order], style, color=color,
                            marker="o", markersize=3, label=f"{name} (EMULATED sweep)",
                            **wide.get(name, {}))
                for k in real_keys if name in ("page cache", "ccfs best") else []:
                    r = get((k, ratio, dist))
                    if r is None or not read_us.get(k) or r[value] is None:
                        continue
                    ax.plot([read_us[k]], [r[value]], markers.get(k[0], "o"), color=color,
                            markersize=7, markerfacecolor="none", markeredgewidth=1.5)
                    ax.annotate(f"{store_label(k)}: {'ccfs' if name == 'ccfs best' else 'pc'}",
                                (read_us[k], r[value]), fontsize=7, xytext=(5, -2),
                                textcoords="offset points")
            if value == "ratio_vs_pagecache":
                ax.axhline(1.0, color="black", linewidth=0.8)
            x, status = cross[2], cross[3]
            if status == "crosses":
                ax.axvline(x, color="tab:red", linewidth=1, alpha=0.7)
                xs_all = [read_us[k] for k in store_keys if read_us.get(k)]
                right = math.log(x) > (math.log(min(xs_all)) + math.log(max(xs_all))) / 2
                emulated = "\n(EMULATED)" if cross[6].startswith("emulated") else ""
                ax.annotate(f"crossover\n{x:.0f} µs{emulated}", (x, 0.97),
                            xycoords=("data", "axes fraction"), fontsize=8, color="tab:red",
                            ha="right" if right else "left", va="top",
                            xytext=(-3 if right else 3, 0), textcoords="offset points")
            elif status in ("below", "above"):
                note = "ccfs faster everywhere" if status == "below" else "no crossover in range"
                ax.text(0.02, 0.95, note, transform=ax.transAxes, fontsize=8, color="tab:red",
                        va="top")
            ax.set_xscale("log")
            if log_y:
                ax.set_yscale("log")
            ax.set_title(f"data {ratio_x(ratio)} memory, {dist}", fontsize=10)
            ax.set_xlabel("store: 8 KiB O_DIRECT read, median µs")
            ax.set_ylabel(ylabel)
            ax.grid(True, which="both", alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    for k in real_keys:
        handles.append(plt.Line2D([], [], linestyle="", marker=markers.get(k[0], "o"), color="gray",
                                  markerfacecolor="none"))
        labels.append(f"{store_label(k)} (real store: page cache black, ccfs best red)")
    ncol = 2 if len(size_ratios) < 3 else 3
    fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=8)
    fig.suptitle(title, fontsize=10)
    legend_rows = math.ceil(len(labels) / ncol)
    fig.tight_layout(rect=(0, min(0.3, 0.035 * legend_rows * 2 / len(dists)) + 0.01, 1, 0.93))
    fig.savefig(os.path.join(out, fname), dpi=110)
    plt.close(fig)
    print(f"wrote {os.path.join(out, fname)}", file=sys.stderr)


latency_panels("us_per_buffer", "µs per buffer", "crossover-latency.png",
               f"µs per buffer vs the store's read latency, equal RAM ({mem})\n"
               "lines: delay_fs, an EMULATED store; open markers: real stores", log_y=True)
latency_panels("ratio_vs_pagecache", "ccfs / page cache (µs per buffer)", "crossover-ratio.png",
               f"ccfs / page cache at equal RAM ({mem}): below 1, ccfs is faster\n"
               "lines: delay_fs, an EMULATED store; open markers: real stores", log_y=False)

# µs per buffer vs size ratio, per store and trace.
fig, axes = grid(len(store_keys), len(dists))
for i, k in enumerate(store_keys):
    for j, dist in enumerate(dists):
        ax = axes[i][j]
        curves = [("page cache", lambda p: pagecache_row(p), "black", "-"),
                  ("ccfs best", lambda p: best_row(p), "tab:red", "-")]
        curves += [(f"ccfs {t} best", lambda p, t=t: best_row(p, t), *tier_style[t])
                   for t in table_tiers]
        for name, get, color, style in curves:
            xs, ys = [], []
            for ratio in size_ratios:
                r = get((k, ratio, dist))
                if r is not None:
                    xs.append(ratio)
                    ys.append(r["us_per_buffer"])
            if xs:
                ax.plot(xs, ys, style, color=color, marker="o", markersize=4, label=name,
                        **wide.get(name, {}))
        ax.set_xscale("log", base=2)
        ax.set_xticks(size_ratios)
        ax.set_xticklabels([ratio_x(r) for r in size_ratios])
        ax.set_title(f"{store_label(k)}, {fmt(read_us.get(k))} µs a read, {dist}", fontsize=9)
        ax.set_xlabel("data set / memory")
        ax.set_ylabel("µs per buffer")
        ax.grid(True, which="both", alpha=0.3)
        if i == 0 and j == 0:
            ax.legend(fontsize=7)
fig.suptitle(f"µs per buffer vs the data set's size relative to memory ({mem}), per store",
             fontsize=11)
fig.tight_layout(rect=(0, 0, 1, 0.97))
fig.savefig(os.path.join(out, "crossover-size.png"), dpi=100)
plt.close(fig)
print(f"wrote {os.path.join(out, 'crossover-size.png')}", file=sys.stderr)
