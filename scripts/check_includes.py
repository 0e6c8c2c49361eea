#!/usr/bin/env python3
"""Checks that every #include between the rooms under src/ points down a floor.

The floors are docs/ARCHITECTURE.md's map, bottom up. A file may include its own room, the
contracts (include/ccfs/, "ccfs/..."), and any room on a lower floor; rooms on one floor do not
include each other. The contracts include only each other. A directory under src/ that is not on
the map fails too, so a new room has to be placed before it is used.

Usage: check_includes.py [REPO]   (default: the repository this script is in)
Prints each offending include as file:line and exits 1; needs no build.
"""
import pathlib
import re
import sys

# Bottom up. Keep in step with docs/ARCHITECTURE.md ("The rooms, bottom up").
FLOORS = [
    ["util"],
    ["compress", "backing", "config", "stats", "model"],
    ["cache", "client"],
    ["trace", "fuse"],
    ["datagen"],
    ["cli"],
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"(([^"/]+)/[^"]*)"')


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent / "..")
    root = root.resolve()
    floor = {room: level for level, rooms in enumerate(FLOORS) for room in rooms}
    src = root / "src"
    problems = []
    for room_dir in sorted(p for p in src.iterdir() if p.is_dir()):
        if room_dir.name not in floor:
            problems.append(f"src/{room_dir.name}/: a room that is not on the map "
                            f"(place it in FLOORS in scripts/check_includes.py and in "
                            f"docs/ARCHITECTURE.md)")
    files = [(path, "ccfs") for path in sorted((root / "include" / "ccfs").glob("*.h"))]
    files += [(path, path.relative_to(src).parts[0])
              for path in sorted(src.rglob("*")) if path.suffix in (".h", ".cc")]
    includes = 0
    for path, room in files:
        rel = path.relative_to(root)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            m = INCLUDE.match(line)
            if not m or (m.group(2) not in floor and m.group(2) != "ccfs"):
                continue
            name, target = m.group(1), m.group(2)
            includes += 1
            if room == "ccfs":
                if target != "ccfs":
                    problems.append(f"{rel}:{number}: a contract includes {name}: "
                                    f"contracts include only ccfs/")
            elif target in ("ccfs", room) or room not in floor:
                continue
            elif floor[target] > floor[room]:
                problems.append(f"{rel}:{number}: {room} (floor {floor[room]}) includes {name} "
                                f"(floor {floor[target]}): up a floor")
            elif floor[target] == floor[room]:
                problems.append(f"{rel}:{number}: {room} includes {name}: sideways, both on "
                                f"floor {floor[room]}")
    for p in problems:
        print(p)
    if problems:
        print(f"check_includes: {len(problems)} problem(s) with the floors "
              f"(docs/ARCHITECTURE.md)", file=sys.stderr)
        return 1
    print(f"check_includes: {includes} includes in {len(files)} files, all down the floors "
          f"({len(floor)} rooms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
