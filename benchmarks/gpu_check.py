"""Run every example on the GPU against numpy and write the results table.

    python benchmarks/gpu_check.py [--out docs/gpu-results.md] [--cases NAME ...]

Uses the cases in benchmarks/cases.py (the same ones `pytest -m gpu` runs).
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._gpu import require_gpu  # noqa: E402
from benchmarks.cases import CASES  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=None)
    p.add_argument("--cases", nargs="+", choices=sorted(CASES), help="run only these cases (default: all)")
    args = p.parse_args(argv)
    dev = require_gpu("gpu_check.py")
    info = dev.info
    rows, failed = [], 0
    for name, (fn, sizes) in CASES.items():
        if args.cases and name not in args.cases:
            continue
        for size in sizes:
            t0 = time.perf_counter()
            try:
                r = fn(size, np.random.default_rng(0), device=dev)
                status = "pass" if r.passed else "FAIL"
                failed += not r.passed
                row = (r.example, r.kernel, "x".join(map(str, size)), f"{r.max_abs_err:.3g}",
                       f"{r.max_rel_err:.3g}", r.tolerance, status)
            except Exception as e:  # report, keep going
                failed += 1
                row = (name, "", "x".join(map(str, size)), "", "", "", f"ERROR {type(e).__name__}: {e}")
            rows.append(row)
            print(" | ".join(row), f"({time.perf_counter() - t0:.1f}s)", flush=True)
    header = [f"# GPU results ({datetime.date.today()})", "",
              f"Device: {info.name}; driver {info.driver_name} {info.driver_info}; Vulkan {info.api_version}.", "",
              "Command: `python benchmarks/gpu_check.py --out docs/gpu-results.md` "
              "(or `python -m pytest -m gpu tests/gpu`). Inputs are uniform random in [-1, 1] (seed 0); "
              "references are computed by numpy in float32/float64.", "",
              "| example | kernel | size (MxNxK) | max abs err | max rel err | tolerance | result |",
              "|---|---|---|---|---|---|---|"]
    text = "\n".join(header + ["| " + " | ".join(r) + " |" for r in rows]) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(f"{len(rows) - failed}/{len(rows)} passed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
