#!/usr/bin/env python3
"""sizes.py [SRC]: files and functions a reader can hold (issue 49).

Fails (exit 1) when a file under SRC (default: src) is over 900 lines or a function over 150
lines, unless the file or `file:function` is in ALLOWED below; it also fails when an allowed
item is back within the limits, so that the list only shrinks. Strings and comments are blanked
before braces are counted, so a brace in a literal does not end a function early.
"""
import os
import re
import sys

MAX_FILE_LINES = 900
MAX_FN_LINES = 150

# Still too long, each to be split along its seams by the work that owns it (issue 49, item 4).
# Remove an entry when its item is split; add none. Empty: every file and function fits.
ALLOWED: set[str] = set()


def strip(code):
    """Blank strings, chars and comments, keeping newlines (line numbers stay right)."""
    out = []
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if code.startswith("//", i):
            j = code.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
            continue
        if code.startswith("/*", i):
            j = code.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", code[i:j]))
            i = j
            continue
        m = re.match(r'b?r(#*)"', code[i : i + 10])
        if m and (i == 0 or not (code[i - 1].isalnum() or code[i - 1] == "_")):
            end = '"' + m.group(1)
            j = code.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", code[i:j]))
            i = j
            continue
        if c == '"':
            j = i + 1
            while j < n and code[j] != '"':
                j += 2 if code[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", code[i:j]))
            i = j
            continue
        if c == "'":
            m = re.match(r"'(\\.[^']*|[^\\'])'", code[i : i + 12])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
                continue
        out.append(c)
        i += 1
    return "".join(out)


def functions(code):
    """(name, first line, lines) of every function with a body."""
    for m in re.finditer(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)", code):
        i, depth = m.end(), 0
        while i < len(code):
            ch = code[i]
            if ch in "([<":
                depth += 1
            elif ch in ")]>":
                depth -= 1
            elif ch == ";" and depth <= 0:
                i = -1
                break
            elif ch == "{" and depth <= 0:
                break
            i += 1
        if i < 0 or i >= len(code):
            continue
        d, j = 0, i
        while j < len(code):
            if code[j] == "{":
                d += 1
            elif code[j] == "}":
                d -= 1
                if d == 0:
                    break
            j += 1
        l0 = code.count("\n", 0, m.start()) + 1
        l1 = code.count("\n", 0, j) + 1
        yield m.group(1), l0, l1 - l0 + 1


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "src"
    over, seen = [], set()
    for root, _, files in sorted(os.walk(src)):
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, src)
            text = open(path, encoding="utf-8", errors="replace").read()
            lines = text.count("\n") + (not text.endswith("\n") and text != "")
            if lines > MAX_FILE_LINES:
                seen.add(rel)
                if rel not in ALLOWED:
                    over.append(f"{path}: {lines} lines (at most {MAX_FILE_LINES})")
            for name, line, n in functions(strip(text)):
                if n > MAX_FN_LINES:
                    key = f"{rel}:{name}"
                    seen.add(key)
                    if key not in ALLOWED:
                        over.append(f"{path}:{line}: fn {name} is {n} lines (at most {MAX_FN_LINES})")
    stale = sorted(ALLOWED - seen)
    for s in over:
        print(s)
    for s in stale:
        print(f"scripts/sizes.py: {s} is within the limits now: remove it from ALLOWED")
    if over or stale:
        return 1
    print(f"sizes: no file over {MAX_FILE_LINES} lines, no function over {MAX_FN_LINES} (allowed for now: {len(ALLOWED)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
