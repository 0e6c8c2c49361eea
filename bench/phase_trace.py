#!/usr/bin/env python3
"""Writes a phase-change trace whose hot set moves between parts of a data set.

Each --phase names files of the data set (comma-separated shell patterns on their paths relative
to DATA, e.g. "text-*" or "logs/*,*.csv"); the trace reads pages of the first phase's files,
uniformly, for --phase-ops reads, then the second's, and so on, --cycles times round. Where the
parts compress differently (text, then media or random data) the best split moves with
the phase: the case `compressed_percent = auto` is for. `ccfs replay --trace OUT` replays it (it
wraps round at its end, so --warmup plus --ops may exceed its length); bench/auto_compare.py takes
it as the law `phase-trace:OUT`.

Output: ccfs's trace CSV (header "file,offset,length,op"), one page read per line.

Usage: bench/phase_trace.py DATA OUT --phase "text-000.txt,text-002.txt" --phase "random-*"
       [--phase-ops 1000000] [--cycles 2] [--page-size 8192] [--seed 1]
"""

import argparse
import csv
import fnmatch
import os
import random
import sys


def phase_pages(root, patterns, page_size):
    """(relative path, offset) of every page of the files under root matching any pattern."""
    pages = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not (dirpath == root and d == ".ccfs"))
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            if not any(fnmatch.fnmatch(rel, p) for p in patterns):
                continue
            n = (os.path.getsize(path) + page_size - 1) // page_size
            pages += [(rel, i * page_size) for i in range(n)]
    return pages


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("data", help="data set directory")
    p.add_argument("out", help="trace file to write")
    p.add_argument("--phase", action="append", required=True,
                   help="files of one phase: comma-separated patterns (give two or more)")
    p.add_argument("--phase-ops", type=int, default=1000000)
    p.add_argument("--cycles", type=int, default=2)
    p.add_argument("--page-size", type=int, default=8192)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    if not os.path.isdir(args.data):
        sys.exit(f"phase_trace: {args.data}: not a directory")
    if len(args.phase) < 2:
        sys.exit("phase_trace: --phase: give at least two phases")
    if args.phase_ops <= 0 or args.cycles <= 0 or args.page_size <= 0:
        sys.exit("phase_trace: --phase-ops, --cycles and --page-size must be > 0")
    phases = []
    for spec in args.phase:
        pages = phase_pages(args.data, [x for x in spec.split(",") if x], args.page_size)
        if not pages:
            sys.exit(f"phase_trace: --phase {spec!r}: no non-empty file of {args.data} matches")
        phases.append(pages)
    rng = random.Random(args.seed)
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        f.write("file,offset,length,op\n")
        for _ in range(args.cycles):
            for pages in phases:
                for _ in range(args.phase_ops):
                    rel, off = pages[rng.randrange(len(pages))]
                    w.writerow([rel, off, args.page_size, "read"])
    for spec, pages in zip(args.phase, phases):
        mib = len(pages) * args.page_size / 2**20
        print(f"phase {spec!r}: {len(pages)} pages ({mib:.1f} MiB)")
    print(f"wrote {args.out}: {args.cycles} cycles of {len(phases)} phases of {args.phase_ops} reads")


if __name__ == "__main__":
    main()
