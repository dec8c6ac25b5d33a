"""Writing a benchmark's results into docs/benchmarks.md without touching the other sections."""

from __future__ import annotations

import platform
from pathlib import Path


def replace_section(path: str | Path, heading: str, body: str) -> None:
    """Put ``heading`` (a ``## `` line) and ``body`` in the markdown file at ``path``: in place of the section
    with the same heading (up to the next ``## `` heading), or appended when there is none."""
    p = Path(path)
    lines = p.read_text().splitlines() if p.exists() else []
    new = [heading, "", *body.rstrip("\n").splitlines()]
    try:
        start = lines.index(heading)
    except ValueError:
        out = lines + ([""] if lines and lines[-1].strip() else []) + new
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        out = lines[:start] + new + ([""] + lines[end:] if end < len(lines) else [])
    p.write_text("\n".join(out) + "\n")


def cpu_name() -> str:
    """The host CPU's model name (from /proc/cpuinfo on Linux)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
