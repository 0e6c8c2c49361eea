#!/usr/bin/env python3
"""Plots a `ccfs advise` CSV: predicted µs per buffer and hit ratio against C%, one line per codec.

Usage: plot_advise.py ADVISE.csv PREFIX [ADVICE]   -> PREFIX.png (ADVICE, if given, is the title)
Needs matplotlib (Debian: python3-matplotlib).
"""
import csv
import sys


def load(path):
    lines = {}
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        need = {"compressed_percent", "codec", "hit_ratio", "us_per_buffer"}
        missing = need - set(reader.fieldnames or [])
        if missing:
            sys.exit(f"plot_advise: {path}: missing columns {', '.join(sorted(missing))}")
        for line, row in enumerate(reader, start=2):
            try:
                lines.setdefault(row["codec"], []).append(
                    (int(row["compressed_percent"]), float(row["us_per_buffer"]),
                     float(row["hit_ratio"])))
            except (KeyError, ValueError) as e:
                sys.exit(f"plot_advise: {path}:{line}: bad value: {e}")
    if not lines:
        sys.exit(f"plot_advise: {path}: no rows")
    for points in lines.values():
        points.sort()
    return lines


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.strip().splitlines()[2])
    path, prefix = sys.argv[1], sys.argv[2]
    title = sys.argv[3] if len(sys.argv) == 4 else "ccfs advise"
    lines = load(path)
    try:
        import matplotlib
    except ImportError:
        sys.exit("plot_advise: matplotlib is missing (apt-get install python3-matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (us_ax, hit_ax) = plt.subplots(1, 2, figsize=(11, 4.5))
    for codec, points in sorted(lines.items()):
        c = [p[0] for p in points]
        us_ax.plot(c, [p[1] for p in points], "o-", label=codec)
        hit_ax.plot(c, [100 * p[2] for p in points], "o-", label=codec)
    us_ax.set_ylabel("predicted µs per buffer")
    hit_ax.set_ylabel("predicted hit ratio (%)")
    for ax in (us_ax, hit_ax):
        ax.set_xlabel("compressed tier, % of cache memory (C)")
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    out = f"{prefix}.png"
    fig.savefig(out, dpi=120)
    plt.close(fig)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
