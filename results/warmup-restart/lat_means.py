#!/usr/bin/env python3
"""Mean fio completion latency (µs) over 0-5 s, 5-10 s and 10-31 s of a run, from the per-second
log fio writes with --write_lat_log=PREFIX --log_avg_msec=1000 (PREFIX_clat.1.log: lines of
"msec, nsec, ..."). Prints the three means on one line; nan for a span with no line.

    lat_means.py LOG
"""
import sys


def main():
    rows = [line.split(',') for line in open(sys.argv[1])]

    def mean(a, b):
        v = [int(r[1]) / 1e3 for r in rows if a * 1000 <= int(r[0]) < b * 1000]
        return sum(v) / len(v) if v else float('nan')

    print(f"{mean(0, 5):.1f} {mean(5, 10):.1f} {mean(10, 31):.1f}")


if __name__ == '__main__':
    main()
