#!/usr/bin/env python3
"""Turns the raw outputs of scripts/bench.sh in RESULTS_DIR into every figure of issue 6 as a
ratio against a baseline measured in the same run: figures.csv, summary.json, table.md (printed
too) and PNG plots (µs per buffer and hit ratio vs C%, ccfs beside the page cache and RocksDB).

Usage: bench_report.py RESULTS_DIR
"""
import csv
import json
import os
import re
import sys

out = sys.argv[1]


def path(name):
    return os.path.join(out, name)


def jsonl(name):
    rows = []
    try:
        with open(path(name)) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError:
                        pass
    except FileNotFoundError:
        pass
    return rows


def load_json(name, default=None):
    try:
        with open(path(name)) as f:
            return json.load(f)
    except (FileNotFoundError, json.JSONDecodeError):
        return default


MIB = 1 << 20


def size_bytes(text):
    m = re.match(r"(\d+)\s*(KiB|MiB|GiB|K|M|G)?$", text)
    n = int(m.group(1))
    return n * {"KiB": 1 << 10, "K": 1 << 10, "MiB": MIB, "M": MIB, "GiB": 1 << 30, "G": 1 << 30,
                None: 1}[m.group(2)]


figures = []  # dicts: group, figure, value, unit, baseline, baseline_value, ratio, target, met


def fig(group, figure, value, unit, baseline, baseline_value, ratio, target="", met=None):
    figures.append(dict(group=group, figure=figure, value=value, unit=unit, baseline=baseline,
                        baseline_value=baseline_value, ratio=ratio, target=target, met=met))


def div(a, b):
    return a / b if a is not None and b else float("nan")


machine = load_json("machine.json", {})
memory = size_bytes(machine.get("memory", "64MiB"))

# ---- engine per-path costs (engine_bench) ------------------------------------------------------
for codec in ("lz4", "zstd"):
    try:
        text = open(path(f"engine_bench-{codec}.txt")).read()
    except FileNotFoundError:
        continue
    v = {}
    for key in ("memcpy", "decompress", "pread O_DIRECT", "raw hit", "compressed hit", "miss"):
        m = re.search(r"^" + re.escape(key) + r"\s+([\d.]+)", text, re.M)
        if m:
            v[key] = float(m.group(1))
    if len(v) < 6:
        continue
    g = f"engine ({codec})"
    if codec == "lz4":
        lim = 2 * v["memcpy"] + 0.5
        fig(g, "raw hit µs", v["raw hit"], "µs", "2×memcpy+0.5µs", lim, div(v["raw hit"], lim),
            "≤1.0", v["raw hit"] <= lim)
        lim = v["raw hit"] + 1.1 * v["pread O_DIRECT"]
        fig(g, "miss µs", v["miss"], "µs", "raw hit+1.1×O_DIRECT pread", lim, div(v["miss"], lim),
            "≤1.0", v["miss"] <= lim)
        fig(g, "O_DIRECT pread µs (device floor)", v["pread O_DIRECT"], "µs", "memcpy", v["memcpy"],
            div(v["pread O_DIRECT"], v["memcpy"]))
    lim = v["raw hit"] + 1.3 * v["decompress"]
    fig(g, "compressed hit µs", v["compressed hit"], "µs", "raw hit+1.3×decompress", lim,
        div(v["compressed hit"], lim), "≤1.0", v["compressed hit"] <= lim)

# ---- through the mount: null-FUSE floor (fuse_rtt) --------------------------------------------
try:
    text = open(path("fuse_rtt.txt")).read()
    rows = {}
    for m in re.finditer(r"^((?:null|ccfs)[^\n]*?)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+(\d+)\s+([\d.]+)$",
                         text, re.M):
        rows[m.group(1).strip()] = dict(mean=float(m.group(2)), p50=float(m.group(3)),
                                        iops1=float(m.group(5)), iops2=float(m.group(6)))
    floor = rows.get("null single")
    for name, r in rows.items():
        if not name.startswith("ccfs") or not floor:
            continue
        fig("mount", f"raw-hit round trip QD1 mean, {name}", r["mean"], "µs", "null-FUSE floor (single loop)",
            floor["mean"], div(r["mean"], floor["mean"]), "≤1.5", r["mean"] <= 1.5 * floor["mean"])
        fig("mount", f"2 readers / 1 reader, {name}", r["iops2"], "reads/s", "1 reader", r["iops1"],
            div(r["iops2"], r["iops1"]), "≥1.5", r["iops2"] >= 1.5 * r["iops1"])
    for name, r in rows.items():
        same = rows.get("null fixed:" + name.split("=")[-1]) if name.startswith("ccfs") else None
        if same:
            fig("mount", f"raw-hit round trip QD1 mean, {name}", r["mean"], "µs",
                f"null-FUSE, same loop (fixed:{name.split('=')[-1]})", same["mean"],
                div(r["mean"], same["mean"]))
    for name, r in rows.items():
        if name.startswith("null") and name != "null single" and floor:
            fig("mount", f"round trip QD1 mean, {name}", r["mean"], "µs", "null single", floor["mean"],
                div(r["mean"], floor["mean"]))
except FileNotFoundError:
    pass

# ---- sweeps through the mount, the page cache ---------------------------------------------------
sweeps = {}    # (dist, codec) -> {c: row}
pagecache = {}  # dist -> row
for dist in ("pareto", "uniform"):
    for codec in ("lz4", "zstd"):
        for r in jsonl(f"mount-{dist}-{codec}.jsonl"):
            if r.get("mode") == "directory":
                pagecache[dist] = r
            elif "compressed_percent" in r:
                sweeps.setdefault((dist, codec), {})[r["compressed_percent"]] = r

best = {}
for dist in ("pareto", "uniform"):
    pc = pagecache.get(dist)
    for codec in ("lz4", "zstd"):
        s = sweeps.get((dist, codec))
        if not s or 0 not in s:
            continue
        c0 = s[0]
        nz = [c for c in s if c > 0] or list(s)
        bc = min(nz, key=lambda c: s[c]["us_per_buffer"])
        b = s[bc]
        best[(dist, codec)] = bc
        g = f"mount sweep {dist} (one pass)"
        tgt = False
        fig(g, f"µs/buffer at best C={bc}% ({codec})", b["us_per_buffer"], "µs", "ccfs C=0",
            c0["us_per_buffer"], div(b["us_per_buffer"], c0["us_per_buffer"]),
            "≤0.8" if tgt else "", b["us_per_buffer"] <= 0.8 * c0["us_per_buffer"] if tgt else None)
        if pc:
            fig(g, f"µs/buffer at best C={bc}% ({codec})", b["us_per_buffer"], "µs",
                "Linux page cache, same memory (cgroup)", pc["us_per_buffer"],
                div(b["us_per_buffer"], pc["us_per_buffer"]), "≤1.0" if tgt else "",
                b["us_per_buffer"] <= pc["us_per_buffer"] if tgt else None)
            fig(g, f"hit ratio at best C={bc}% ({codec})", b["hit_ratio"], "", "Linux page cache",
                pc["hit_ratio"], div(b["hit_ratio"], pc["hit_ratio"]))
        fig(g, f"hit ratio at best C={bc}% ({codec})", b["hit_ratio"], "", "ccfs C=0", c0["hit_ratio"],
            div(b["hit_ratio"], c0["hit_ratio"]))
        if codec == "lz4" and pc:
            fig(g, "µs/buffer at C=0", c0["us_per_buffer"], "µs", "Linux page cache", pc["us_per_buffer"],
                div(c0["us_per_buffer"], pc["us_per_buffer"]))
            fig(g, "hit ratio at C=0", c0["hit_ratio"], "", "Linux page cache", pc["hit_ratio"],
                div(c0["hit_ratio"], pc["hit_ratio"]))

# ---- headline (Pareto, interleaved rounds, medians) ----------------------------------------------
def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")


head_runs = {}  # label -> [rows]
for r in jsonl("headline.jsonl"):
    label = "pagecache" if r.get("mode") == "directory" else f"{r['compressor']}:{r['compressed_percent']}"
    head_runs.setdefault(label, []).append(r)
headline = {k: dict(us=median([r["us_per_buffer"] for r in v]), hit=median([r["hit_ratio"] for r in v]),
                    n=len(v), all_us=[round(r["us_per_buffer"], 2) for r in v]) for k, v in head_runs.items()}
c0 = headline.get("lz4:0")
pc = headline.get("pagecache")
for k, h in sorted(headline.items()):
    if k in ("lz4:0", "pagecache") or not c0:
        continue
    codec, c = k.split(":")
    fig("HEADLINE pareto (median of rounds)", f"µs/buffer at best C>0 of sweep, C={c}% ({codec}), runs {h['all_us']}",
        h["us"], "µs", f"ccfs C=0, runs {c0['all_us']}", c0["us"], div(h["us"], c0["us"]), "≤0.8",
        h["us"] <= 0.8 * c0["us"])
    if pc:
        fig("HEADLINE pareto (median of rounds)", f"µs/buffer at best C={c}% ({codec})", h["us"], "µs",
            f"Linux page cache {machine.get('memory')} cgroup, runs {pc['all_us']}", pc["us"],
            div(h["us"], pc["us"]), "≤1.0", h["us"] <= pc["us"])
        fig("HEADLINE pareto (median of rounds)", f"hit ratio at best C={c}% ({codec})", h["hit"], "",
            "Linux page cache", pc["hit"], div(h["hit"], pc["hit"]))
if c0 and pc:
    fig("HEADLINE pareto (median of rounds)", "µs/buffer at C=0", c0["us"], "µs", "Linux page cache",
        pc["us"], div(c0["us"], pc["us"]))
    fig("HEADLINE pareto (median of rounds)", "hit ratio at C=0", c0["hit"], "", "Linux page cache",
        pc["hit"], div(c0["hit"], pc["hit"]))

# ---- in-process: ccfs engine vs RocksDB tiered ---------------------------------------------------
inproc = {}  # dist -> {"ccfs": {c: row}, "rocksdb": {c: row}}
for dist in ("pareto", "uniform"):
    for r in jsonl(f"inproc-{dist}.jsonl"):
        inproc.setdefault(dist, {}).setdefault(r["cache"], {})[r["compressed_percent"]] = r
for dist, d in inproc.items():
    cc, rk = d.get("ccfs", {}), d.get("rocksdb", {})
    if not cc or not rk:
        continue
    g = f"in-process {dist}"
    tgt = dist == "pareto"
    cb = min(cc, key=lambda c: cc[c]["us_per_buffer"])
    rb = min(rk, key=lambda c: rk[c]["us_per_buffer"])
    fig(g, f"ccfs best C={cb}% µs/buffer", cc[cb]["us_per_buffer"], "µs", f"RocksDB best C={rb}%",
        rk[rb]["us_per_buffer"], div(cc[cb]["us_per_buffer"], rk[rb]["us_per_buffer"]),
        "≤1.0" if tgt else "", cc[cb]["us_per_buffer"] <= rk[rb]["us_per_buffer"] if tgt else None)
    hb_c = max(cc, key=lambda c: cc[c]["hit_ratio"])
    hb_r = max(rk, key=lambda c: rk[c]["hit_ratio"])
    fig(g, f"ccfs best hit ratio (C={hb_c}%)", cc[hb_c]["hit_ratio"], "", f"RocksDB best (C={hb_r}%)",
        rk[hb_r]["hit_ratio"], div(cc[hb_c]["hit_ratio"], rk[hb_r]["hit_ratio"]),
        "≥1.0" if tgt else "", cc[hb_c]["hit_ratio"] >= rk[hb_r]["hit_ratio"] if tgt else None)
    for c in sorted(set(cc) & set(rk)):
        fig(g, f"C={c}%: ccfs µs/buffer | hit", cc[c]["us_per_buffer"], "µs", "RocksDB same C",
            rk[c]["us_per_buffer"], div(cc[c]["us_per_buffer"], rk[c]["us_per_buffer"]),
            f"hit {cc[c]['hit_ratio']:.3f} vs {rk[c]['hit_ratio']:.3f}")

# ---- compression keeps up --------------------------------------------------------------------------
cs = jsonl("compress_scale.jsonl")
for codec in ("lz4", "zstd"):
    rows = [r for r in cs if r["compressor"] == codec]
    if len(rows) >= 2:
        top = max(rows, key=lambda r: r["threads"])
        one = [r for r in rows if r["threads"] == 1][0]
        want = 0.8 * top["threads"]
        fig("compression", f"pool pages/s, {codec}, {top['threads']} threads", top["pages_per_s"],
            "pages/s", "1 thread", one["pages_per_s"], div(top["pages_per_s"], one["pages_per_s"]),
            f"≥{want:.1f} (0.8×threads)", top["pages_per_s"] >= want * one["pages_per_s"])
for r in jsonl("stalls.jsonl"):
    ratio = div(r.get("stalls", 0), r["misses"])
    fig("compression", f"stalls/misses, uniform C={r['compressed_percent']}%, "
        f"compress_threads={r.get('compress_threads')}", r.get("stalls", 0), "stalls", "misses",
        r["misses"], ratio, "<0.01", ratio < 0.01)
    if r.get("compressions"):
        fig("compression", f"compress CPU µs/page, threads={r.get('compress_threads')}",
            r["compress_ns"] / r["compressions"] / 1000, "µs", "miss µs (engine)", r["miss_us"],
            div(r["compress_ns"] / r["compressions"] / 1000, r["miss_us"]))
ds = load_json("daemon-stats-end.json")
if ds and ds.get("misses"):
    fig("compression", "stalls/misses through the mount (all sweeps)", ds.get("stalls", 0), "stalls",
        "misses", ds["misses"], div(ds.get("stalls", 0), ds["misses"]), "<0.01",
        ds.get("stalls", 0) < 0.01 * ds["misses"])

# ---- memory -------------------------------------------------------------------------------------------
def rss_fig(label, hwm_kib, mem_bytes):
    lim = 1.1 * mem_bytes + 64 * MIB
    fig("memory", f"daemon peak RSS (VmHWM), {label}", hwm_kib * 1024 / MIB, "MiB",
        "1.1×budget+64MiB", lim / MIB, div(hwm_kib * 1024, lim), "≤1.0", hwm_kib * 1024 <= lim)


rss = load_json("daemon-rss.json")
if rss:
    rss_fig(f"budget {rss['memory']}, after all sweeps", rss["vmhwm_kib"], memory)
for r in jsonl("scale-rss.jsonl"):
    rss_fig(f"budget {r['memory']}, C={r['c']}%", r["vmhwm_kib"], size_bytes(r["memory"]))

# ---- scaling ---------------------------------------------------------------------------------------------
sc = jsonl("scale.jsonl")
by = {}
for r in sc:
    by[(r["memory_bytes"], r["compressed_percent"])] = r
mems = sorted({m for m, _ in by})
if len(mems) == 2:
    for c in sorted({c for _, c in by}):
        a, b = by.get((mems[0], c)), by.get((mems[1], c))
        if a and b:
            ratio = div(b["us_per_buffer"], a["us_per_buffer"])
            fig("scaling", f"µs/buffer, data & memory ×2, C={c}%", b["us_per_buffer"], "µs",
                f"{mems[0] // MIB}MiB / {a['dataset_bytes'] // MIB}MiB", a["us_per_buffer"], ratio,
                "0.9..1.1", 0.9 <= ratio <= 1.1)
            fig("scaling", f"hit ratio, data & memory ×2, C={c}%", b["hit_ratio"], "",
                "half size", a["hit_ratio"], div(b["hit_ratio"], a["hit_ratio"]))
ix = jsonl("index_scale.jsonl")
if ix:
    first = ix[0]
    for r in ix[1:]:
        label = f"index lookup ns, {r['pages']:.0e} pages"
        if r.get("insert_timed_out"):
            label += f" (fill timed out at {r['inserted']:,} pages)"
        fig("scaling", label, r["lookup_ns"], "ns",
            f"{first['pages']:.0e} pages", first["lookup_ns"], r["ratio_vs_first"],
            "≤1.1 (flat)", r["ratio_vs_first"] <= 1.1)

# ---- write ------------------------------------------------------------------------------------------------
with open(path("figures.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(figures[0].keys()) if figures else ["group"])
    w.writeheader()
    for r in figures:
        w.writerow(r)


def fmt(x):
    if x is None:
        return ""
    if isinstance(x, bool):
        return "met" if x else "NOT MET"
    if isinstance(x, float):
        if x != x:
            return "-"
        return f"{x:.3f}" if abs(x) < 10 else f"{x:,.1f}"
    return str(x)


lines = ["| group | figure | value | baseline (same run) | baseline value | ratio | target | |",
         "|---|---|---|---|---|---|---|---|"]
for r in figures:
    lines.append("| " + " | ".join([r["group"], r["figure"], fmt(r["value"]) + (" " + r["unit"] if r["unit"] else ""),
                                     r["baseline"], fmt(r["baseline_value"]), fmt(r["ratio"]),
                                     r["target"], fmt(r["met"])]) + " |")
elapsed = load_json("elapsed.json", {}).get("seconds")
head = (f"Machine: {machine.get('cpus')} CPUs ({machine.get('cpu')}), {machine.get('mem_total_kib', 0) // 1024} MiB RAM, "
        f"kernel {machine.get('kernel')}, libfuse {machine.get('libfuse')}, RocksDB {machine.get('rocksdb')}, "
        f"disk {machine.get('disk')}. Memory budget {machine.get('memory')}, data set {machine.get('data')} "
        f"(`ccfs mkdata` mix), 8 KiB pages, {machine.get('ops')} measured reads per mount run, "
        f"{machine.get('engine_ops')} per in-process run. Bench time {elapsed} s.")
table = head + "\n\n" + "\n".join(lines) + "\n"
with open(path("table.md"), "w") as f:
    f.write(table)
summary = dict(machine=machine, elapsed_s=elapsed, figures=figures, headline=headline,
               best_c={f"{d}/{c}": v for (d, c), v in best.items()},
               met=sum(1 for r in figures if r["met"] is True),
               not_met=sum(1 for r in figures if r["met"] is False))
with open(path("summary.json"), "w") as f:
    json.dump(summary, f, indent=1, default=str)
print(table)
print(f"targets met: {summary['met']}, not met: {summary['not_met']}")

# ---- plots --------------------------------------------------------------------------------------------------
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("bench_report: matplotlib missing; no plots", file=sys.stderr)
    sys.exit(0)

for metric, label, fname in (("us_per_buffer", "µs per buffer (client)", "us-per-buffer"),
                             ("hit_ratio", "hit ratio", "hit-ratio")):
    dists = [d for d in ("pareto", "uniform") if any(k[0] == d for k in sweeps) or d in inproc]
    if not dists:
        continue
    figure, axes = plt.subplots(1, len(dists), figsize=(6.5 * len(dists), 4.5), squeeze=False)
    for ax, dist in zip(axes[0], dists):
        for codec, style in (("lz4", "o-"), ("zstd", "s-")):
            s = sweeps.get((dist, codec))
            if s:
                cs_ = sorted(s)
                ax.plot(cs_, [s[c][metric] for c in cs_], style, label=f"ccfs mount, {codec}")
        d = inproc.get(dist, {})
        for cache, style in (("ccfs", "^--"), ("rocksdb", "v--")):
            s = d.get(cache)
            if s:
                cs_ = sorted(s)
                name = "ccfs engine in-process, lz4" if cache == "ccfs" else "RocksDB LRU+CompressedSecondary, lz4"
                ax.plot(cs_, [s[c][metric] for c in cs_], style, label=name)
        pc = pagecache.get(dist)
        if pc:
            ax.axhline(pc[metric], color="black", linestyle=":",
                       label=f"Linux page cache, {machine.get('memory')} cgroup")
        ax.set_title(f"{dist}: {machine.get('data')} data, {machine.get('memory')} memory")
        ax.set_xlabel("compressed_percent C (%)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path(f"{fname}.png"), dpi=110)
    plt.close(figure)
print(f"plots: {path('us-per-buffer.png')}, {path('hit-ratio.png')}")
