#!/usr/bin/env python3
"""The fio step of scripts/bench.sh as a markdown table: fio_report.py FIO_JSONL.

One row per data set, law, job count and target: fio's mean µs per 8 KiB read (the range over the
rounds), its ratio to the page cache of the same round (below 1: ccfs faster), and for ccfs the
misses per fio read (the daemon's misses over fio's reads; in kernel mode the kernel's own hits
never reach the daemon, so this is the share of reads that went to the store).
"""
import sys

from report_lib import read_jsonl


def span(values, fmt):
    values = sorted(v for v in values if v is not None)
    if not values:
        return "-"
    lo, hi = fmt.format(values[0]), fmt.format(values[-1])
    return lo if lo == hi else f"{lo}-{hi}"


def main():
    rows = read_jsonl(sys.argv[1])
    if not rows:
        print("fio: no runs")
        return 1
    base = {(r["data"], r["dist"], r["jobs"], r["round"]): r["mean_us"]
            for r in rows if r["target"] == "pagecache"}
    print("| data | law | jobs | target | mean µs | / page cache | misses per read |")
    print("|---|---|---|---|---|---|---|")
    keys = sorted({(r["data"], r["dist"], r["jobs"]) for r in rows})
    targets = []
    for r in rows:
        if r["target"] not in targets:
            targets.append(r["target"])
    targets.sort(key=lambda t: (t != "pagecache", t))
    for data, dist, jobs in keys:
        for t in targets:
            runs = [r for r in rows
                    if (r["data"], r["dist"], r["jobs"], r["target"]) == (data, dist, jobs, t)]
            if not runs:
                continue
            ratios = [r["mean_us"] / base[(data, dist, jobs, r["round"])] for r in runs
                      if base.get((data, dist, jobs, r["round"]))]
            misses = [r["misses"] / r["fio_reads"] for r in runs
                      if t != "pagecache" and r.get("fio_reads")]
            print(f"| {data} | {dist} | {jobs} | {t} | {span([r['mean_us'] for r in runs], '{:.1f}')}"
                  f" | {span(ratios, '{:.2f}') if t != 'pagecache' else '1'}"
                  f" | {span(misses, '{:.3f}') if t != 'pagecache' else '-'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
