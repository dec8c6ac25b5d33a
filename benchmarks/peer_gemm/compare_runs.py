"""Two runs of the peer harness side by side: which configurations are below the peer in either.

    python benchmarks/peer_gemm/compare_runs.py --run A1.json A2.json --run B1.json B2.json
        [--out benchmarks/notes/peer-harness-shmem.md]

Each ``--run`` is the ``--save-raw`` files of one ``run_peer.py`` run (type pairs split over device calls).
Prints, per run, how many configurations are at 1.00 or above (ratio of medians, rounded to two decimals as
run_peer.py's table does) and the lowest ratio, then a table of every configuration below 1.00 in any run with
its ratio in each: a gap that is real shows in every run, one that is spread moves between them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path


def ratios(files: list[Path]) -> dict[str, float]:
    """Configuration key -> ours/theirs (medians) over the raw files of one run."""
    out = {}
    for f in files:
        for key, v in json.loads(f.read_text())["results"].items():
            if "ours" in v and "theirs" in v:
                out[key] = statistics.median(v["ours"]) / statistics.median(v["theirs"])
    return out


def report(runs: list[dict[str, float]], names: list[str]) -> list[str]:
    lines = []
    for name, r in zip(names, runs):
        at = sum(1 for x in r.values() if round(x, 2) >= 1.00)
        lines.append(f"- {name}: {at} of {len(r)} configurations at 1.00 or above, lowest "
                     f"{min(r.values()):.3f}")
    keys = sorted({k for r in runs for k, x in r.items() if round(x, 2) < 1.00})
    both = [k for k in keys if all(k in r and round(r[k], 2) < 1.00 for r in runs)]
    lines += [f"- below 1.00 in every run: {len(both)}" + (f" ({', '.join(both)})" if both else ""), "",
              "| types | lMxlNxlK | TILE_M x TILE_N x TILE_K | B col-major | " + " | ".join(names) + " |",
              "|---" * (4 + len(names)) + "|"]
    for k in keys:
        t, shape, tm, tn, tk, bcol, _wg = k.split("|")
        cells = [f"{r[k]:.3f}" if k in r else "-" for r in runs]
        lines.append(f"| {t} | {shape} | {tm}x{tn}x{tk} | {bcol} | " + " | ".join(cells) + " |")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", nargs="+", action="append", type=Path, required=True,
                   help="the --save-raw files of one run (repeat for each run)")
    p.add_argument("--name", action="append", help="a label per run (default: run 1, run 2, ...)")
    args = p.parse_args(argv)
    names = args.name or [f"run {i + 1}" for i in range(len(args.run))]
    if len(names) != len(args.run):
        p.error("give one --name per --run")
    print("\n".join(report([ratios(files) for files in args.run], names)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
