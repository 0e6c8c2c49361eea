#!/usr/bin/env python3
"""Times 8 KiB page reads of one file, one at a time, and prints the median in µs.

    page_reader.py FILE direct|repeat COUNT SEED

direct    COUNT reads of random pages with O_DIRECT; prints their median.
repeat    COUNT random pages, each read twice in a row without O_DIRECT; prints the median of the
          first reads and that of the second reads. If any cache between the reader and the store
          answers, it answers the second; the two are interleaved so that the machine's load
          falls on both alike.

Only the pread itself is timed (time.perf_counter_ns around os.preadv into a page-aligned buffer,
which O_DIRECT needs). Used by tests/stores/stores_test.sh.
"""
import mmap
import os
import random
import statistics
import sys
import time

PAGE = 8192


def main():
    if len(sys.argv) != 5 or sys.argv[2] not in ("direct", "repeat"):
        sys.exit(__doc__)
    path, mode, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    flags = os.O_RDONLY | (os.O_DIRECT if mode == "direct" else 0)
    fd = os.open(path, flags)
    pages = os.fstat(fd).st_size // PAGE
    if pages == 0:
        sys.exit(f"page_reader: {path}: shorter than one {PAGE}-byte page")
    buf = mmap.mmap(-1, PAGE)  # anonymous, so page-aligned
    rng = random.Random(seed)
    reads_per_page = 2 if mode == "repeat" else 1
    times = [[] for _ in range(reads_per_page)]
    for _ in range(count):
        off = rng.randrange(pages) * PAGE
        for i in range(reads_per_page):
            t0 = time.perf_counter_ns()
            n = os.preadv(fd, [buf], off)
            times[i].append((time.perf_counter_ns() - t0) / 1000.0)
            if n != PAGE:
                sys.exit(f"page_reader: {path}: read {n} bytes at {off}, want {PAGE}")
    os.close(fd)
    print(" ".join(f"{statistics.median(t):.1f}" for t in times))


if __name__ == "__main__":
    main()
