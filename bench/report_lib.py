"""What the benchmark reports share: their JSON lines, their JSON files, and medians.

bench_report.py, crossover_report.py and levels_report.py import it (it sits beside them), and so
do the reports scripts/stream_bench.sh and scripts/walk_bench.sh print (from the checkout's root,
with bench/ on sys.path).
"""
import json
import statistics


def read_jsonl(path):
    """The JSON objects of PATH's lines that start with "{" (after leading blanks), in order. A
    line that does not parse (a run cut short mid-line) is left out; no file: none."""
    rows = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError:
                        pass
    except FileNotFoundError:
        pass
    return rows


def read_json(path, default=None):
    """The JSON document at PATH; DEFAULT if there is none or it does not parse."""
    try:
        with open(path) as f:
            return json.load(f)
    except (FileNotFoundError, json.JSONDecodeError):
        return default


def median(values, empty=None):
    """The median of the VALUES that are not None (of an even count, the mean of the middle two);
    EMPTY if there are none."""
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else empty


def upper_median(values):
    """The middle value of VALUES sorted (of an even count, the upper of the middle two: always one
    of the measurements); NaN if there are none. bench_report.py's figures are these."""
    values = sorted(values)
    return values[len(values) // 2] if values else float("nan")
