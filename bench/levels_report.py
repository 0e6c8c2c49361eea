#!/usr/bin/env python3
"""The two levels (raw_tier = kernel) against the page cache, from scripts/bench.sh's levels step:
reads RESULTS_DIR/levels.jsonl (interleaved rounds of `ccfs replay --json`) and
levels-fuse_rtt.txt (the null-FUSE round trip of the same run), prints a Markdown table of medians
per configuration with ratios against the page cache of the same data set and trace, and the
issue's targets with the measured value and whether each holds.

Usage: levels_report.py RESULTS_DIR
"""
import os
import re
import sys

from report_lib import median, read_jsonl

out = sys.argv[1]


def null_rtt_us():
    try:
        text = open(os.path.join(out, "levels-fuse_rtt.txt")).read()
    except FileNotFoundError:
        return None
    m = re.search(r"^null fixed:2\s+([\d.]+)", text, re.M)
    return float(m.group(1)) if m else None


def config(r):
    if r["mode"] == "directory":
        return "page cache"
    name = "ccfs {} C={}%".format(r.get("raw_tier", "daemon"), r["compressed_percent"])
    if r["compressed_percent"]:
        name += " " + r["compressor"]
    # bench.sh puts "raw_tier:codec:C:kernel_evict:transport:kernel_demote" in front of each line
    # (older runs: without kernel_demote).
    tier, _, _, evict, transport, *demote = (r.get("config") or "daemon:::true:dev").split(":")
    if tier == "kernel":
        name += " (daemon evicts)" if evict == "true" else " (cgroup)"
        if demote and demote[0] != "off":
            name += " demote=" + demote[0]
    if transport != "dev":
        name += " " + transport
    return name


groups = {}
for r in read_jsonl(os.path.join(out, "levels.jsonl")):
    ratio = round(r["dataset_bytes"] / r["memory_bytes"]) if r.get("memory_bytes") else 0
    dist = r["dist"].split(":")[0]
    groups.setdefault((ratio, dist), {}).setdefault(config(r).strip(), []).append(r)

null = null_rtt_us()
print("# The two levels: raw pages in the daemon or in the kernel's page cache\n")
print("Medians of interleaved rounds; equal RAM held by the kernel (memory cgroups); ratios against "
      "the page cache of the same data set and trace in the same run. Null-FUSE round trip of this "
      "run: {}.\n".format(f"{null:.1f} µs" if null else "not measured"))
checks = []
for (ratio, dist) in sorted(groups, key=lambda k: (-k[0], k[1])):
    g = groups[(ratio, dist)]
    med = {c: {k: median(x[k] for x in rs) for k in ("us_per_buffer", "p50_us", "p99_us", "hit_ratio")}
           | {"n": len(rs)} for c, rs in g.items()}
    base = med.get("page cache")
    print(f"## data {ratio}x memory, {dist}\n")
    print("| configuration | rounds | µs/buffer | ratio | p50 µs | p50 ratio | p99 µs | hit ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for c in sorted(med, key=lambda c: (c != "page cache", c)):
        m = med[c]
        ratio_us = m["us_per_buffer"] / base["us_per_buffer"] if base else float("nan")
        ratio_p50 = m["p50_us"] / base["p50_us"] if base and base["p50_us"] else float("nan")
        print(f"| {c} | {m['n']} | {m['us_per_buffer']:.1f} | {ratio_us:.2f}x | {m['p50_us']:.1f} | "
              f"{ratio_p50:.2f}x | {m['p99_us']:.1f} | {m['hit_ratio']:.3f} |")
    print()
    if not base:
        continue
    kernel = {c: m for c, m in med.items() if c.startswith("ccfs kernel")}
    k0_name = min((c for c in kernel if "C=0%" in c), key=lambda c: kernel[c]["us_per_buffer"],
                  default=None)
    k0 = kernel.get(k0_name)
    kbest_name = min(kernel, key=lambda c: kernel[c]["us_per_buffer"], default=None)
    kbest = kernel.get(kbest_name)
    pc = base["us_per_buffer"]
    if ratio >= 8 and dist == "pareto":
        if kbest:
            checks.append((f"8x pareto: kernel mode best C ({kbest_name}) <= 1.2x page cache",
                           kbest["us_per_buffer"] / pc, 1.2))
            checks.append((f"8x pareto: kernel mode best C p50 within 1.2x page cache",
                           kbest["p50_us"] / base["p50_us"], 1.2))
        if k0:
            checks.append((f"8x pareto: kernel mode C=0 ({k0_name}) <= 1.35x page cache",
                           k0["us_per_buffer"] / pc, 1.35))
    if ratio >= 8 and dist == "uniform" and null:
        best_any = min((m["us_per_buffer"] for c, m in med.items() if c != "page cache"), default=None)
        if best_any:
            checks.append((f"8x uniform: ccfs best mean <= page cache + one null-FUSE trip "
                           f"({pc:.1f} + {null:.1f} µs)", best_any / (pc + null), 1.0))
    if ratio <= 2 and kbest:
        limit = 0.8 if dist == "uniform" else 1.0
        checks.append((f"2x {dist}: kernel mode best C ({kbest_name}) <= {limit}x page cache",
                       kbest["us_per_buffer"] / pc, limit))

seq = {}
for r in read_jsonl(os.path.join(out, "levels-seq.jsonl")):
    seq.setdefault(r["raw_tier"], []).append(r["bytes"] / r["seconds"] / 2**20)
if seq:
    print("## Sequential: cat of the whole data set, cold (MiB/s, median)\n")
    for tier, v in sorted(seq.items()):
        print(f"- raw_tier = {tier}: {median(v):.0f} MiB/s ({len(v)} rounds)")
    print()
    if "daemon" in seq and "kernel" in seq:
        checks.append(("sequential: kernel mode streams at least as fast as daemon mode (daemon/kernel time)",
                       median(seq["daemon"]) / median(seq["kernel"]), 1.0))

if checks:
    print("## Targets\n")
    print("| target | measured | limit | holds |")
    print("|---|---|---|---|")
    for name, value, limit in checks:
        print(f"| {name} | {value:.2f} | {limit} | {'yes' if value <= limit else 'NO'} |")
