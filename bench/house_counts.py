#!/usr/bin/env python3
"""The house's counts (issue "The house"), measured the same way every time.

Usage: bench/house_counts.py [--top N] [CHECKOUT]   (default: the checkout this script is in)

Prints, for the server (npac/npacd/):
  - the classes with the most member functions (as declared in the class body, overloads
    each counted, constructors and operators included, `= default/delete` excluded);
  - the longest function bodies (lines from the signature to the closing brace);
and for the whole tree:
  - how many translation units (.cc) include, directly or through our own headers,
    Beast, Asio, nlohmann/json, Catch2 and <regex>;
  - `sleep_for` calls in tests/;
  - direct clock reads (`::now()` on std::chrono clocks) outside the files named as the
    time source (TIME_SOURCE_FILES below);
  - status/error families (types named Status, Result, *Error declared in a header).
Needs universal-ctags (Debian package universal-ctags).
"""
import json
import os
import re
import subprocess
import sys
from collections import defaultdict

TIME_SOURCE_FILES = (
    "common/time_source.h",
    "common/time_source.cc",
)


def ctags(paths, root):
    out = subprocess.run(
        ["ctags", "--output-format=json", "--fields=+neKZS", "--kinds-C++=+p", "--language-force=C++",
         "-o", "-"] + paths,
        cwd=root, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("_type") == "tag":
            yield tag


def sources(root, folders, exts=(".h", ".cc")):
    for folder in folders:
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for f in sorted(files):
                if f.endswith(exts):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


def class_methods(tags):
    methods = defaultdict(set)
    for t in tags:
        if t.get("kind") not in ("function", "prototype"):
            continue
        if t.get("scopeKind") not in ("class", "struct"):
            continue
        if not t["path"].endswith(".h"):  # the class body is the declaration; .cc repeats it
            continue
        pattern = t.get("pattern", "")
        if re.search(r"=\s*(default|delete)\s*;", pattern):
            continue
        methods[t["scope"]].add((t["name"], t.get("signature", "")))
    return methods


def function_lengths(tags):
    lengths = []
    for t in tags:
        if t.get("kind") == "function" and "end" in t:
            lengths.append((t["end"] - t["line"] + 1, t["path"], t["line"], t.get("scope", ""), t["name"]))
    return sorted(lengths, reverse=True)


INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
HEAVY = {
    "beast": re.compile(r"^boost/beast"),
    "asio": re.compile(r"^boost/asio"),
    "nlohmann": re.compile(r"^nlohmann/"),
    "catch2": re.compile(r"^catch2/"),
    "regex": re.compile(r"^regex$"),
}


def include_reach(root):
    cache = {}

    def includes(path):
        if path in cache:
            return cache[path]
        cache[path] = set()
        try:
            text = open(os.path.join(root, path), encoding="utf-8", errors="replace").read()
        except OSError:
            return cache[path]
        found = set()
        for inc in INCLUDE.findall(text):
            found.add(inc)
            local = inc if os.path.exists(os.path.join(root, inc)) else None
            if local is None:
                sibling = os.path.join(os.path.dirname(path), inc)
                if os.path.exists(os.path.join(root, sibling)):
                    local = os.path.normpath(sibling)
            if local:
                found |= includes(local)
        cache[path] = found
        return found

    units = [p for p in sources(root, ["common", "cmip", "dispatch", "db", "tunables", "associations",
                                       "npac", "tests", "bench", "fuzz"], (".cc",))]
    reach = {name: 0 for name in HEAVY}
    for unit in units:
        incs = includes(unit)
        for name, rx in HEAVY.items():
            if any(rx.search(i) for i in incs):
                reach[name] += 1
    return len(units), reach


def grep_count(root, folders, rx, exclude=()):
    hits = []
    for path in sources(root, folders):
        if path in exclude:
            continue
        for n, line in enumerate(open(os.path.join(root, path), encoding="utf-8", errors="replace"), 1):
            code = line.split("//")[0]
            if rx.search(code):
                hits.append(f"{path}:{n}")
    return hits


def main():
    args = sys.argv[1:]
    top = 5
    if args[:1] == ["--top"]:
        top = int(args[1])
        args = args[2:]
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    server = list(sources(root, ["npac/npacd"]))
    tags = list(ctags(server, root))
    methods = class_methods(tags)
    print("Classes with the most member functions (npac/npacd):")
    for scope, ms in sorted(methods.items(), key=lambda kv: -len(kv[1]))[:top]:
        print(f"  {len(ms):3d}  {scope}")
    print("Longest functions (npac/npacd), lines:")
    for length, path, line, scope, name in function_lengths(tags)[:top]:
        print(f"  {length:3d}  {scope + '::' if scope else ''}{name}  {path}:{line}")
    units, reach = include_reach(root)
    print(f"Translation units reached ({units} .cc in all):")
    for name, n in reach.items():
        print(f"  {n:3d}  {name}")
    sleeps = grep_count(root, ["tests"], re.compile(r"\bsleep_for\s*\("))
    print(f"sleep_for in tests/: {len(sleeps)}")
    clock_rx = re.compile(r"\b\w*[Cc]lock::now\s*\(")
    reads = grep_count(root, ["common", "cmip", "dispatch", "db", "tunables", "associations", "npac/npacd"],
                       clock_rx, exclude=TIME_SOURCE_FILES)
    print(f"Direct clock reads outside the time source (server and layers): {len(reads)}")
    if "-v" in os.environ.get("HOUSE_VERBOSE", ""):
        for r in reads:
            print("   ", r)
    timers = grep_count(root, ["npac/npacd"], re.compile(r"\bsteady_timer\b"))
    print(f"asio::steady_timer mentions in npac/npacd: {len(timers)}")
    families = set()
    for path in sources(root, ["common", "cmip", "dispatch", "db", "tunables", "associations", "npac"], (".h",)):
        text = open(os.path.join(root, path), encoding="utf-8", errors="replace").read()
        for m in re.finditer(r"^\s*(?:class|struct)\s+(?:\[\[nodiscard\]\]\s+)?(Status|Result|\w+Error)\b(?!\s*;)",
                             text, re.M):
            families.add(f"{path}: {m.group(1)}")
    print(f"Status/Result/*Error types declared: {len(families)}")
    for f in sorted(families):
        print("   ", f)


if __name__ == "__main__":
    main()
