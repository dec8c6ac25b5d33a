"""Summarize a test-backend-ops log: cases passed/failed, and which cases ran on overridden (coopdsl) pipelines.

    python3 benchmarks/ggml/summarize.py LOG [LOG ...]

A case "ran on coopdsl" when the log (written with GGML_VK_OVERRIDE_TRACE=1, without -j) has at least one
``[override-dispatch] NAME`` line between the previous case line and its own.  Also prints the dispatch totals
the patched ggml writes at exit (``ggml_vulkan override dispatches: NAME COUNT``).
"""

from __future__ import annotations

import re
import sys
from collections import Counter

CASE = re.compile(r"^\s*([A-Z_]+)\((.*)\):\s.*?\b(OK|FAIL|not supported)\b")
HEAD = re.compile(r"^\s*([A-Z_]+)\((.*)\):")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def summarize(path: str) -> str:
    pending: list[str] = []
    cases = Counter()
    replaced = Counter()
    names = Counter()
    fails = []
    totals = []
    partial = ""   # a case line cut by a message from another thread ("NAME(...): <stderr line>" then "OK")
    for raw in open(path, errors="replace"):
        line = ANSI.sub("", raw)
        if HEAD.match(line) and not CASE.match(line):
            partial = line.split("):")[0] + "): "
            continue
        if partial and re.match(r"^\s*(OK|FAIL)\b", line):
            line, partial = partial + line, ""
        if line.startswith("[override-dispatch] "):
            pending.append(line.split()[1])
            continue
        if line.startswith("ggml_vulkan override dispatches:"):
            totals.append(line.strip())
            continue
        m = CASE.match(line)
        if not m:
            continue
        op, _, status = m.groups()
        cases[(op, status)] += 1
        if pending and status != "not supported":
            replaced[(op, status)] += 1
            names.update(set(pending))
        if status == "FAIL":
            fails.append(line.strip()[:300] + ("  [coopdsl]" if pending else ""))
        pending = []
    out = [f"== {path}"]
    for (op, status), n in sorted(cases.items()):
        out.append(f"{op} {status}: {n} cases, {replaced[(op, status)]} of them on coopdsl pipelines")
    out += [f"  cases per overridden pipeline: {n:5d}  {name}" for name, n in sorted(names.items())]
    out += ["FAILED: " + f for f in fails[:40]]
    out += totals[-3:]
    return "\n".join(out)


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(summarize(p))
