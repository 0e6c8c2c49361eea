#!/usr/bin/env python3
"""The table of results/public-traces/replay.sh: per memory and target, the measured hit ratio and
µs per buffer (range over the rounds), beside the exact LRU hit ratio of the same reads and the
model's prediction for that configuration (ccfs advise). Writes OUT/traces.md and prints it.

    results/public-traces/report.py OUT
"""
import collections
import json
import sys


def rng(values, fmt):
    lo, hi = fmt % min(values), fmt % max(values)
    return lo if lo == hi else f"{lo}-{hi}"


def main():
    out = sys.argv[1]
    meta = json.load(open(f"{out}/meta.json"))
    runs = [json.loads(line) for line in open(f"{out}/runs.jsonl")]
    advise = {r["memory"]: r for r in runs if r["run"] == "advise"}
    measured = collections.defaultdict(list)
    for r in runs:
        if r["run"] != "advise":
            measured[(r["memory"], r["run"])].append(r)
    lines = [f"Trace {meta['trace']} (sha1 {meta['trace_sha1'][:12]}), "
             f"{'reads only, ' if meta.get('only') == 'reads' else ''}{meta['page_ops']} page "
             f"operations, one pass from a cold cache; {meta['rounds']} rounds.", "",
             "| memory | target | hit ratio | µs per buffer | exact LRU hit ratio | model: hit ratio | model: µs per buffer |",
             "|---|---|---|---|---|---|---|"]
    for (memory, target), v in measured.items():
        a = advise.get(memory)
        lru = a["page_cache"]["hit_ratio"] if a else None
        model = None
        if a and target == "pagecache":
            model = a["page_cache"]
        elif a:
            c = int(target.split(":")[1])
            model = next((row for row in a["rows"] if row["raw_tier"] == "daemon"
                          and row["codec"] == "zstd" and row["compressed_percent"] == c), None)
        # The page cache's own counters count reads; ccfs's count every request it saw.
        hr = [r["hit_ratio"] for r in v]
        us = [r["us_per_buffer"] for r in v]
        lines.append(f"| {memory} | {target} | {rng(hr, '%.3f')} | {rng(us, '%.1f')} | "
                     f"{'%.3f' % lru if lru is not None else ''} | "
                     f"{'%.3f' % model['hit_ratio'] if model else ''} | "
                     f"{'%.1f' % model['us_per_buffer'] if model else ''} |")
    text = "\n".join(lines) + "\n"
    open(f"{out}/traces.md", "w").write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
