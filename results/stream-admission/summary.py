"""The rounds of ab.sh side by side: python3 summary.py DIR (DIR holds old-rN/ and new-rN/)."""
import collections
import glob
import json
import os
import sys

d = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for b in ("old", "new"):
    for path in sorted(glob.glob(os.path.join(d, b + "-r*", "stream.jsonl"))):
        for line in open(path):
            r = json.loads(line)
            rows[(r["store"], r["phase"], r["target"])][b].append((r["mib_s"], r.get("hit_ratio")))
print("| store | phase | target | before, MiB/s (rounds) | after | hit ratio before ; after |")
print("|---|---|---|---|---|---|")
for key, v in rows.items():
    speed = lambda xs: ", ".join("%.0f" % x[0] for x in xs)
    hits = lambda xs: "/".join("%.2f" % x[1] for x in xs if x[1] is not None)
    target = key[2].replace("ccfs-", "").replace("store", "page cache")
    print(f"| {key[0]} | {key[1]} | {target} | {speed(v['old'])} | {speed(v['new'])} | "
          f"{hits(v['old'])} ; {hits(v['new'])} |")
