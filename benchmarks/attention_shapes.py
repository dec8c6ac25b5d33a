"""GPU time of ops.attention's kernels at prompt lengths that are not a multiple of 64 (next to aligned ones) and
at decoding shapes past 16 query rows a K/V head, against torch SDPA, one markdown row a case.

    python3 benchmarks/attention_shapes.py [0,1,2]     # the cases of CASES to run (default: all)

Each row: case, Hq/Hkv, Sq, Skv, D, causal, coopdsl us (the summed GPU time of the call's kernels,
``attention_bench.coopdsl_time``), each kernel's us, torch SDPA us (``attention_bench.torch_time``: a boolean mask
for causal rows after a KV cache, its slower path).
Results: benchmarks/results/attention-unaligned-h200-2026-11-29.md.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._clocks import clocks_up  # noqa: E402
from benchmarks.attention_bench import coopdsl_time, torch_time  # noqa: E402
from coopdsl import runtime  # noqa: E402

dev = runtime.default_device()
clocks_up(dev)
rng = np.random.default_rng(0)
CASES = [  # hq, hkv, sq, skv, d, causal
    (32, 8, 1024, 1024, 128, True), (32, 8, 1000, 1000, 128, True), (32, 8, 1008, 1008, 128, True),
    (32, 8, 1000, 1000, 128, False), (32, 8, 1024, 1024, 128, False), (32, 8, 960, 960, 128, True),
    (64, 8, 1000, 1000, 128, True), (64, 8, 1024, 1024, 128, True),
    (32, 32, 3000, 3000, 96, True), (32, 32, 3072, 3072, 96, True), (32, 32, 3000, 3000, 96, False),
    (28, 4, 1000, 1000, 128, True),
    (64, 8, 5, 70000, 128, True), (64, 8, 3, 70000, 128, True), (28, 4, 5, 70000, 128, True),
    (64, 8, 2, 70000, 128, True),
]
only = sys.argv[1:] and [int(i) for i in sys.argv[1].split(",")]
for i, (hq, hkv, sq, skv, d, causal) in enumerate(CASES):
    if only and i not in only:
        continue
    q = runtime.array(rng.standard_normal((hq, sq, d)).astype(np.float16), device=dev)
    k = runtime.array(rng.standard_normal((hkv, skv, d)).astype(np.float16), device=dev)
    v = runtime.array(rng.standard_normal((hkv, skv, d)).astype(np.float16), device=dev)
    out = runtime.array(np.zeros((hq, sq, d), np.float16), device=dev)
    ms, parts, wall = coopdsl_time(dev, q, k, v, out, causal, "f32", 20, 100.0)
    tq = [rng.standard_normal((hq, sq, d)).astype(np.float16), rng.standard_normal((hkv, skv, d)).astype(np.float16)]
    tms, how = torch_time(tq[0], tq[1], tq[1], causal, 20, 100.0)
    pstr = " + ".join(f"{n} {p*1e3:.0f}" for n, p in parts)
    print(f"| {i} | {hq}/{hkv} | {sq} | {skv} | {d} | {causal} | {ms*1e3:.0f} | {pstr} | "
          f"{tms*1e3 if tms else 0:.0f} ({how}) |", flush=True)
    for a in (q, k, v, out):
        a.free()
