"""How the GPU's clocks follow load: a copy kernel's time per dispatch, submission after submission, from idle.

    python3 benchmarks/clock_ramp.py [--seconds 6] [--mb 64] [--pauses 0.02,0.1,0.5,2]

Starts ``nvidia-smi -lms 50`` (SM clock, power) in the background where it exists, leaves the GPU idle ``--idle``
seconds, then submits back-to-back batches of copies of ``--mb`` MB (about 10 ms of work each) on resident
arrays for ``--seconds`` and prints, every quarter second, the median GPU time of a copy; then, for each of
``--pauses``, it idles that long and prints the first batch's time.  It shows how much sustained work the
clocks need before timings mean anything (benchmarks/notes).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._clocks import copy16  # noqa: E402
from benchmarks._gpu import require_gpu  # noqa: E402
from coopdsl import runtime  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--mb", type=int, default=64)
    ap.add_argument("--pauses", default="0.02,0.1,0.5,2")
    ap.add_argument("--idle", type=float, default=4.0, help="seconds of idle GPU before the load")
    args = ap.parse_args()
    dev = require_gpu("clock_ramp.py")
    n16 = args.mb * (1 << 20) // 16
    src = runtime.array(np.zeros((n16, 4), np.uint32), device=dev)
    dst = runtime.array(np.zeros((n16, 4), np.uint32), device=dev)
    grid = (min(-(-n16 // 256), 65535), -(-n16 // (256 * 65535)), 1)
    one = copy16.bench(grid, src, dst, n16, device=dev, warmup=0, repeat=5).median_ms
    per = max(1, int(10.0 / max(one, 1e-3)))   # dispatches in about 10 ms at idle clocks
    log = Path(tempfile.mkdtemp()) / "smi.csv"
    try:
        smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw",
                                "--format=csv,noheader", "-lms", "50"], stdout=log.open("w"))
    except OSError:
        smi = None
    time.sleep(args.idle)
    t0 = time.perf_counter()
    window: list[float] = []
    mark = 0.05
    print("| seconds of load | copy, us a dispatch (median since the last line) | GB/s read + written |")
    print("|---|---|---|")
    while (t := time.perf_counter() - t0) < args.seconds:
        window.append(copy16.bench(grid, src, dst, n16, device=dev, warmup=0, repeat=per).median_ms)
        if t >= mark:
            med = float(np.median(window))
            print(f"| {t:.2f} | {med * 1e3:.1f} | {2 * args.mb * (1 << 20) / (med * 1e-3) / 1e9:.0f} |", flush=True)
            window, mark = [], mark + (0.05 if mark < 0.5 else 0.25)
    for pause in (float(p) for p in args.pauses.split(",")):
        time.sleep(pause)
        first = copy16.bench(grid, src, dst, n16, device=dev, warmup=0, repeat=per).times_ms
        print(f"after {pause} s idle: first copies {', '.join(f'{v * 1e3:.0f}' for v in first[:3])} us, "
              f"median {np.median(first) * 1e3:.1f} us", flush=True)
    if smi is not None:
        smi.terminate()
        rows = log.read_text().splitlines()
        print(f"nvidia-smi every 50 ms ({len(rows)} rows; timestamp, SM MHz, memory MHz, power):")
        print("\n".join(rows[:: max(1, len(rows) // 60)]))


if __name__ == "__main__":
    main()
