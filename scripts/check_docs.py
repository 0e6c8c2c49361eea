#!/usr/bin/env python3
"""Checks that the docs describe the tree that is there. Needs no build; scripts/test.sh runs it first.

1. The README's Layout section: every path it names exists (and every file its lines name inside
   a directory, e.g. scripts/test.sh), and it names every top-level directory and every room of
   src/.
2. References: every relative link of the Markdown docs points at a file that exists (and, with
   #anchor, at a heading of it); every docs/NAME and results/NAME that a tracked file mentions
   exists (results/README.md may name the sets it says were removed).
3. Versions: every ccfs_X.Y.Z and "ccfs X.Y.Z" in the docs, and the newest entry of
   packaging/changelog, is project()'s version in CMakeLists.txt.
4. Stages: the README's numbered list of scripts/test.sh's stages names the stages of
   scripts/stages.sh's table, in its order.

Usage: scripts/check_docs.py [REPO]   (exit 1 and one line per problem when a check fails)
"""
import os
import re
import subprocess
import sys

# Example names the docs use for a RESULTS_DIR of one's own, not sets in the tree.
EXAMPLE_RESULTS = {"NAME", "crossover-DATE", "bench-DATE", "x", "x-local", "x-delay1", "x-*", "mine",
                   "crossover-", "bench-"}


def tracked_files(repo):
    try:
        out = subprocess.run(["git", "-C", repo, "ls-files"], check=True, capture_output=True,
                             text=True).stdout
        return [f for f in out.splitlines() if os.path.exists(os.path.join(repo, f))]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for root, dirs, names in os.walk(repo):
            dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
            files += [os.path.relpath(os.path.join(root, n), repo) for n in names]
        return files


def layout_block(readme):
    m = re.search(r"^## Layout\n.*?^```\n(.*?)^```", readme, re.S | re.M)
    return m.group(1) if m else None


def check_layout(repo, files, problems):
    readme = open(os.path.join(repo, "README.md"), encoding="utf-8").read()
    block = layout_block(readme)
    if block is None:
        problems.append("README.md: no ``` block under '## Layout'")
        return
    named = []
    for line in block.splitlines():
        if not line or line[0] == " ":
            continue
        path, _, rest = line.partition(" ")
        named.append(path.rstrip("/"))
        full = os.path.join(repo, path)
        if not os.path.exists(full):
            problems.append(f"README.md Layout: {path} does not exist")
            continue
        if os.path.isdir(full):
            # File names its description gives for that directory (setup.sh, MODEL.md, ...).
            for name in re.findall(r"(?<![\w/.-])([\w-]+\.(?:sh|py|md|cc|h|toml))\b", rest):
                if not os.path.exists(os.path.join(full, name)):
                    problems.append(f"README.md Layout: {path} names {name}, which is not in it")
    # Continuation lines may name more files of the line above: check those under that path too.
    current = None
    for line in block.splitlines():
        if line and line[0] != " ":
            current = line.split(" ", 1)[0]
            continue
        if current and os.path.isdir(os.path.join(repo, current)):
            for name in re.findall(r"(?<![\w/.-])([\w-]+\.(?:sh|py|md))\b", line):
                if not os.path.exists(os.path.join(repo, current, name)):
                    problems.append(f"README.md Layout: {current} names {name}, "
                                    "which is not in it")
    top = sorted({f.split("/", 1)[0] for f in files if "/" in f and not f.startswith(".")})
    for d in top:
        if not any(n == d or n.startswith(d + "/") for n in named):
            problems.append(f"README.md Layout: the top-level directory {d}/ is missing")
    rooms = sorted({f.split("/")[1] for f in files if f.startswith("src/") and f.count("/") >= 2})
    for room in rooms:
        if f"src/{room}" not in named:
            problems.append(f"README.md Layout: src/{room}/ is missing")


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return {slug(h) for h in re.findall(r"^#+ (.*)$", text, re.M)}


def check_links(repo, files, problems):
    docs = [f for f in files if f.endswith(".md") and not f.startswith("results/")
            or f == "results/README.md"]
    for doc in docs:
        text = open(os.path.join(repo, doc), encoding="utf-8").read()
        text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(repo, os.path.dirname(doc), path))
            if not os.path.exists(full):
                problems.append(f"{doc}: link to {target}: no such file")
            elif anchor and full.endswith(".md") and anchor not in anchors(full):
                problems.append(f"{doc}: link to {target}: no such heading")


def check_mentions(repo, files, problems):
    text_ext = (".md", ".cc", ".h", ".sh", ".py", ".toml", ".txt", ".mount", ".example")
    for f in files:
        if not f.endswith(text_ext) and os.path.basename(f) != "CMakeLists.txt":
            continue
        if f.startswith("results/") and f != "results/README.md":
            continue
        try:
            text = open(os.path.join(repo, f), encoding="utf-8").read()
        except (UnicodeDecodeError, OSError):
            continue
        for m in re.finditer(r"(?<![\w/.-])docs/([\w.-]+\.md)", text):
            if not os.path.exists(os.path.join(repo, "docs", m.group(1))):
                problems.append(f"{f}: mentions docs/{m.group(1)}, which does not exist")
        if f == "results/README.md":
            continue  # it names the sets it removed, with the commit that last held them
        for m in re.finditer(r"(?<![\w/.-])results/([\w.*-]+)((?:/[\w.-]*[\w])*)", text):
            name, rest = m.group(1), m.group(2)
            if name in EXAMPLE_RESULTS:
                continue
            if not os.path.exists(os.path.join(repo, "results", name + rest)):
                problems.append(f"{f}: mentions results/{name}{rest}, which does not exist")


def check_versions(repo, files, problems):
    cmake = open(os.path.join(repo, "CMakeLists.txt"), encoding="utf-8").read()
    m = re.search(r"^project\(ccfs VERSION ([0-9.]+)", cmake, re.M)
    if not m:
        problems.append("CMakeLists.txt: no project(ccfs VERSION ...)")
        return
    version = m.group(1)
    for f in files:
        if not (f.endswith(".md") or f.startswith("conf/")) or f.startswith("results/"):
            continue
        text = open(os.path.join(repo, f), encoding="utf-8").read()
        for v in re.findall(r"\bccfs[_ ](\d+\.\d+\.\d+)(?![\d.])", text):
            if v != version:
                problems.append(f"{f}: names version {v}; CMakeLists.txt's project() is {version}")
    changelog = os.path.join(repo, "packaging", "changelog")
    if os.path.exists(changelog):
        first = open(changelog, encoding="utf-8").readline()
        m = re.match(r"^ccfs \(([^)]+)\)", first)
        if not m or m.group(1) != version:
            problems.append(f"packaging/changelog: the newest entry is not ccfs ({version})")


def stage_names(repo):
    """The NAME column of scripts/stages.sh's stage_table, in order (None without a table)."""
    text = open(os.path.join(repo, "scripts", "stages.sh"), encoding="utf-8").read()
    m = re.search(r"^stage_table=\$\(cat <<EOF\n(.*?)^EOF$", text, re.S | re.M)
    return [line.split("|", 1)[0].strip() for line in m.group(1).splitlines()] if m else None


def check_stages(repo, problems):
    declared = stage_names(repo)
    if declared is None:
        problems.append("scripts/stages.sh: no stage_table")
        return
    readme = open(os.path.join(repo, "README.md"), encoding="utf-8").read()
    m = re.search(r"^- `scripts/test\.sh` .*?\n((?:  .*\n)+)", readme, re.M)
    listed = re.findall(r"^  \d+\. `([\w-]+)`", m.group(1), re.M) if m else []
    if listed != declared:
        problems.append(f"README.md: the stages of scripts/test.sh are {', '.join(listed) or 'none'}; "
                        f"scripts/stages.sh declares {', '.join(declared)}")


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    repo = os.path.abspath(repo)
    files = tracked_files(repo)
    problems = []
    check_layout(repo, files, problems)
    check_links(repo, files, problems)
    check_mentions(repo, files, problems)
    check_versions(repo, files, problems)
    check_stages(repo, problems)
    for p in problems:
        print(f"check_docs: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"check_docs: ok (Layout, links and mentions in {len(files)} files, versions, stages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
