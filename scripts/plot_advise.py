#!/usr/bin/env python3
"""Plots a `ccfs advise` CSV: predicted µs per buffer (with its band) and hit ratio against C%,
one line per raw tier and codec, and the page cache alone as a level line.

Usage: plot_advise.py ADVISE.csv PREFIX [TITLE]   -> PREFIX.png
Needs matplotlib (Debian: python3-matplotlib); exits 3 without it.
"""
import csv
import sys
import textwrap

# The exit status `ccfs advise` reads as "no matplotlib" (src/cli/plot_script.h kPlotNoMatplotlib).
NO_MATPLOTLIB = 3
NEED = {"raw_tier", "compressed_percent", "codec", "hit_ratio", "us_per_buffer", "us_low",
        "us_high"}


def load(path):
    """Returns ({(tier, codec): [(C, us, low, high, hit)]}, page cache (us, low, high, hit))."""
    lines, page_cache = {}, None
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = NEED - set(reader.fieldnames or [])
        if missing:
            sys.exit(f"plot_advise: {path}: missing columns {', '.join(sorted(missing))}")
        for line, row in enumerate(reader, start=2):
            try:
                point = (int(row["compressed_percent"]), float(row["us_per_buffer"]),
                         float(row["us_low"]), float(row["us_high"]), float(row["hit_ratio"]))
            except (KeyError, ValueError) as e:
                sys.exit(f"plot_advise: {path}:{line}: bad value: {e}")
            if row["raw_tier"] == "page_cache":
                page_cache = point[1:]
            else:
                lines.setdefault((row["raw_tier"], row["codec"]), []).append(point)
    if not lines:
        sys.exit(f"plot_advise: {path}: no rows")
    if page_cache is None:
        sys.exit(f"plot_advise: {path}: no page_cache row")
    for points in lines.values():
        points.sort()
    return lines, page_cache


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.strip().splitlines()[3])
    path, prefix = sys.argv[1], sys.argv[2]
    title = sys.argv[3] if len(sys.argv) == 4 else "ccfs advise"
    lines, page_cache = load(path)
    try:
        import matplotlib
    except ImportError:
        print("plot_advise: matplotlib is missing (apt-get install python3-matplotlib)",
              file=sys.stderr)
        sys.exit(NO_MATPLOTLIB)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (us_ax, hit_ax) = plt.subplots(1, 2, figsize=(12, 5))
    c_max = max(p[0] for points in lines.values() for p in points)
    pc_us, pc_low, pc_high, pc_hit = page_cache
    us_ax.axhspan(pc_low, pc_high, color="grey", alpha=0.15)
    us_ax.axhline(pc_us, color="black", linestyle="--", label="page cache alone")
    hit_ax.axhline(100 * pc_hit, color="black", linestyle="--", label="page cache alone")
    for (tier, codec), points in sorted(lines.items()):
        c = [p[0] for p in points]
        label = f"{tier}, {codec}"
        style = "o-" if tier == "daemon" else "s-"
        drawn = us_ax.plot(c, [p[1] for p in points], style, label=label)
        us_ax.fill_between(c, [p[2] for p in points], [p[3] for p in points],
                           color=drawn[0].get_color(), alpha=0.12)
        hit_ax.plot(c, [100 * p[4] for p in points], style, label=label)
    # Honest axes: both start at zero, so a gap between lines reads as what it is.
    us_ax.set_ylim(bottom=0)
    hit_ax.set_ylim(0, 100)
    us_ax.set_ylabel("predicted µs per buffer (shaded: the band)")
    hit_ax.set_ylabel("predicted hit ratio (%)")
    for ax in (us_ax, hit_ax):
        ax.set_xlabel("compressed tier, % of cache memory (C)")
        ax.set_xlim(0, max(c_max, 10))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle("\n".join(textwrap.wrap(title, 110)), fontsize="medium")
    fig.tight_layout()
    out = f"{prefix}.png"
    fig.savefig(out, dpi=120)
    plt.close(fig)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
