#!/usr/bin/env python3
"""SQLite's read-heavy query set of scripts/apps.sh: DB opened read-only, for SECONDS, 90% point
lookups by key on Pareto 80/20 keys (scattered), 10% range scans of 100 rows by id at uniform
starts. Prints queries per second.

    bench/sqlite_queries.py DB SECONDS
"""
import random, sqlite3, sys, time
path, secs = sys.argv[1], float(sys.argv[2])
db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
n = db.execute("SELECT max(id) FROM t").fetchone()[0] + 1
rng = random.Random()
E = 7.2126  # ln 0.2 / ln 0.8: 80% of lookups on 20% of the rows
done, end = 0, time.monotonic() + secs
while time.monotonic() < end:
    for _ in range(50):
        if rng.random() < 0.9:
            i = int(n * rng.random() ** E) * 2654435761 % n  # hot rows scattered
            key = (i * 2654435761) % (1 << 32)
            db.execute("SELECT payload FROM t WHERE key = ?", (key,)).fetchall()
        else:
            lo = rng.randrange(n)
            db.execute("SELECT sum(length(payload)) FROM t WHERE id BETWEEN ? AND ?", (lo, lo + 99)).fetchall()
        done += 1
print(f"{done / secs:.1f}")
