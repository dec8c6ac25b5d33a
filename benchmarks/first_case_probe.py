"""Is the first GEMV timed in a process slower than the same GEMV timed later?  (benchmarks/notes: the first
case of ops_llm.py / linear_prefill.py runs was 2-4x slower than in other runs of the same SPIR-V.)

Times ``ops.gemv``'s launches (400 calls back to back in one command buffer, and ``Kernel.bench`` of each launch)
for a sequence of (format, rows of x) cases, each on freshly uploaded arrays, and prints the GPU's clocks between
cases.  ``python3 benchmarks/first_case_probe.py --cases q4_K:1,q4_K:4,q4_K:1,f16:1,q4_K:1``
"""

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._clocks import clocks_up  # noqa: E402
from benchmarks._gpu import require_gpu  # noqa: E402
from benchmarks.ops_llm import bench_launches, stream_us, weights  # noqa: E402
from coopdsl import runtime  # noqa: E402
from coopdsl.ops import gemv as G  # noqa: E402


def clocks() -> str:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=pstate,clocks.sm,clocks.mem", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--k", type=int, default=14336)
    ap.add_argument("--cases", default="q4_K:1,q4_K:4,q4_K:1,f16:1,q4_K:1")
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--same-weights", action="store_true", help="upload each format's weights once")
    args = ap.parse_args()
    dev = require_gpu("first_case_probe.py")
    rng = np.random.default_rng(0)
    cache: dict[str, tuple] = {}
    t0 = time.time()
    for i, case in enumerate(args.cases.split(",")):
        fmt, n = case.split(":")[0], int(case.split(":")[1])
        if fmt not in cache:
            cache[fmt] = weights(fmt, args.m, args.k, rng)
        w = cache[fmt][0]
        x = (rng.standard_normal((int(n), args.k)) * 0.5).astype(np.float32)
        if args.same_weights and f"r{fmt}" in cache:
            wr = cache[f"r{fmt}"]
        else:
            wr = runtime.array(w, device=dev)
            cache[f"r{fmt}"] = wr
        xr, yr = runtime.array(x, device=dev), runtime.zeros((n, args.m), np.float32, device=dev)
        launches = G.plan(wr, xr, fmt, out=yr, device=dev)[0]
        before = clocks()
        clocks_up(dev)
        s1 = stream_us(launches, dev)
        b = bench_launches(launches, args) * 1e3
        s2 = stream_us(launches, dev)
        print(f"{i} {fmt} x{n}: stream {s1:.1f} us, bench {b:.1f} us, stream again {s2:.1f} us "
              f"(clocks before: {before}; after: {clocks()}; t={time.time() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
