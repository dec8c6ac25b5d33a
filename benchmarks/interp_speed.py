"""Wall-clock speed of the CPU interpreter on the examples, on one core.

    python benchmarks/interp_speed.py [--repeat 3] [--out docs/benchmarks.md]

Pins the process to one CPU and one BLAS thread (before numpy loads), runs
each case once to compile it, then times ``--repeat`` launches with
``device="cpu"`` (median and min wall-clock seconds, the numpy check
included).  With ``--out`` the "CPU interpreter speed" section of that
Markdown file is replaced (or appended) with the table, the command, the
machine and the date.  Targets (issue 7): gemm_khr 256^3 under 5 s,
gemm_shared 512^3 under 30 s.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._report import cpu_name, replace_section  # noqa: E402
from benchmarks.cases import CASES  # noqa: E402

HEADING = "## CPU interpreter speed"
# (case, size, target seconds or None)
RUNS = [
    ("gemm_khr", (256, 256, 256), 5.0),
    ("gemm_shared", (512, 512, 512), 30.0),
    ("gemm_khr", (1024, 1024, 1024), None),
    ("gemm_edges", (512, 512, 512), None),
    ("bf16_gemm", (512, 512, 512), None),
    ("int8_gemm", (512, 512, 512), None),
]


def time_case(case: str, size: tuple, repeat: int) -> tuple[float, float, bool]:
    """(median s, min s, all results correct) over ``repeat`` launches after a compiling run."""
    fn, _ = CASES[case]
    rng = np.random.default_rng(0)
    fn(size, rng, device="cpu")
    times, ok = [], True
    for _ in range(repeat):
        t = time.perf_counter()
        r = fn(size, rng, device="cpu")
        times.append(time.perf_counter() - t)
        ok = ok and r.passed
    return statistics.median(times), min(times), ok


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--out", default=None, help="Markdown file whose interpreter section to rewrite")
    args = p.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    rows, failed = [], False
    for case, size, target in RUNS:
        med, best, ok = time_case(case, size, args.repeat)
        met = "" if target is None else ("yes" if med < target else "NO")
        failed |= not ok or met == "NO"
        rows.append((case, size, med, best, ok, target, met))
        print(f"{case:14s} {'x'.join(map(str, size)):15s} median {med:7.2f} s  min {best:7.2f} s  "
              f"{'ok' if ok else 'WRONG'}  {'' if target is None else f'target {target:g} s: {met}'}", flush=True)
    if args.out:
        cpu = cpu_name()
        load = f", load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs" if hasattr(os, "getloadavg") else ""
        lines = [f"Measured {datetime.date.today()} on {platform.node()} ({cpu}, Python {platform.python_version()}, "
                 f"numpy {np.__version__}{load}), one core and one BLAS thread.", "",
                 f"Command: `python benchmarks/interp_speed.py --repeat {args.repeat} --out docs/benchmarks.md`", "",
                 "Wall-clock seconds per `launch(..., device=\"cpu\")` (inputs, launch and numpy check; compile "
                 f"excluded), median and min of {args.repeat} runs; subgroup size 32.", "",
                 "| example | M x N x K | median s | min s | matches numpy | target |", "|---|---|---|---|---|---|"]
        for case, size, med, best, ok, target, met in rows:
            goal = "" if target is None else f"< {target:g} s: {met}"
            lines.append(f"| {case} | {'x'.join(map(str, size))} | {med:.2f} | {best:.2f} | {'yes' if ok else 'NO'} "
                         f"| {goal} |")
        replace_section(args.out, HEADING, "\n".join(lines))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
