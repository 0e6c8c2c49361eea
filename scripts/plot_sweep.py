#!/usr/bin/env python3
"""Plots a `ccfs replay --sweep` CSV: hit ratio vs C% and µs per buffer vs C%, measured beside
the model, with the page-cache baseline (a `baseline` row) drawn as a horizontal line.

Usage: plot_sweep.py SWEEP.csv PREFIX   -> PREFIX-hit-ratio.png, PREFIX-us-per-buffer.png
Needs matplotlib (Debian: python3-matplotlib).
"""
import csv
import sys


def load(path):
    sweep, baseline = [], None
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        need = {"mode", "compressed_percent", "hit_ratio", "us_per_buffer", "model_hit_ratio",
                "model_us_per_buffer"}
        missing = need - set(reader.fieldnames or [])
        if missing:
            sys.exit(f"plot_sweep: {path}: missing columns {', '.join(sorted(missing))}")
        for line, row in enumerate(reader, start=2):
            try:
                if row["mode"] == "baseline":
                    baseline = row
                    continue
                sweep.append({
                    "c": int(row["compressed_percent"]),
                    "hit": float(row["hit_ratio"]),
                    "us": float(row["us_per_buffer"]),
                    "model_hit": float(row["model_hit_ratio"]),
                    "model_us": float(row["model_us_per_buffer"]),
                    "mode": row["mode"],
                })
            except (KeyError, ValueError) as e:
                sys.exit(f"plot_sweep: {path}:{line}: bad value: {e}")
    if not sweep:
        sys.exit(f"plot_sweep: {path}: no sweep rows")
    sweep.sort(key=lambda r: r["c"])
    return sweep, baseline


def plot(sweep, baseline, prefix, key, model_key, ylabel, title, out, scale=1.0):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    c = [r["c"] for r in sweep]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(c, [r[key] * scale for r in sweep], "o-", label=f"measured ({sweep[0]['mode']})")
    ax.plot(c, [r[model_key] * scale for r in sweep], "s--", label="model")
    if baseline is not None:
        value = float(baseline[{"hit": "hit_ratio", "us": "us_per_buffer"}[key]]) * scale
        ax.axhline(value, color="gray", linestyle=":", label="Linux page cache, same RAM")
    ax.set_xlabel("compressed tier, % of cache memory (C)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    print(f"wrote {out}")


# The exit status `ccfs replay` reads as "no matplotlib" (src/cli/plot_script.h kPlotNoMatplotlib).
NO_MATPLOTLIB = 3


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2])
    path, prefix = sys.argv[1], sys.argv[2]
    sweep, baseline = load(path)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("plot_sweep: matplotlib is missing (apt-get install python3-matplotlib)",
              file=sys.stderr)
        sys.exit(NO_MATPLOTLIB)
    plot(sweep, baseline, prefix, "hit", "model_hit", "hit ratio (%)", "Hit ratio vs C%",
         f"{prefix}-hit-ratio.png", scale=100.0)
    plot(sweep, baseline, prefix, "us", "model_us", "µs per buffer (client mean)",
         "µs per buffer vs C%", f"{prefix}-us-per-buffer.png")


if __name__ == "__main__":
    main()
