"""``ops.gemv``'s default against other ways and layouts, at several weight shapes, in one process.

    python3 benchmarks/gemv_ways.py --formats f16 --rows 2,3,4 --shapes 4096x14336,8192x28672 \
        --ways f32:8:4,mma:4:4 [--runs 2] [--out FILE]

For each shape (M x K weights), format and rows of x: the default (``gemv.choice``), checked against numpy, then
each way of ``--ways`` (``how:rows:split`` as ``gemv.choice`` names them; one that does not take the problem is
skipped) timed as ``gemv.stream_ms`` (400 calls back to back in one command buffer, x's rounding included, us a
call), the default and the others in turn ``--runs`` times, every kernel compiled before the first timing and the
clocks brought up first (``benchmarks._clocks.clocks_up``).  "vs copy": the weight bytes over the call's time,
over a copy kernel's read + write rate on as many bytes in the same process.  q4_0 / q8_0 / q4_K weights are 256
rows quantized once and repeated (timing does not depend on the values; the check uses the same rows).  Prints a
markdown table (``--out`` writes it too).
"""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._clocks import clocks_up, copy16, copy_grid  # noqa: E402
from benchmarks._gpu import require_gpu  # noqa: E402
from benchmarks.ops_llm import weights  # noqa: E402
from coopdsl import runtime  # noqa: E402
from coopdsl.ops import gemv as G  # noqa: E402

CALLS = 400
TILE = 256   # rows of W made and quantized, then repeated down to M


def parse_way(text: str) -> tuple[str, int, int]:
    """``how:rows:split`` as a :func:`coopdsl.ops.gemv.choice` way."""
    how, rows, split = text.split(":")
    return how, int(rows), int(split)


def tiled_weights(fmt: str, m: int, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """M x K weights in ``fmt`` (what the kernel reads) and the f32 values of their first :data:`TILE` rows."""
    w, w32 = weights(fmt, min(m, TILE), k, rng)
    reps = -(-m // w.shape[0])
    return np.ascontiguousarray(np.tile(w, (reps, 1))[:m]), w32


def copy_gbs(dev: object, nbytes: int) -> float:
    """A copy kernel's read + write rate (GB/s) on ``nbytes``."""
    src = np.zeros(nbytes // 16 * 4, np.uint32).reshape(-1, 4)
    r = copy16.bench(copy_grid(src.shape[0]), src, np.zeros_like(src), src.shape[0], device=dev, warmup=2000,
                     repeat=20)
    return 2 * nbytes / (r.median_ms * 1e-3) / 1e9


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--formats", default="f16")
    ap.add_argument("--rows", default="2,3,4")
    ap.add_argument("--shapes", default="4096x14336", help="M x K weights, e.g. 4096x14336,8192x28672")
    ap.add_argument("--ways", default="", help="other ways to time, how:rows:split, e.g. f32:8:4,mma:4:4")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    dev = require_gpu("gemv_ways.py")
    rng = np.random.default_rng(0)
    others = [parse_way(t) for t in args.ways.split(",") if t]
    lines = [f"`python3 benchmarks/gemv_ways.py {' '.join(sys.argv[1:])}` on {dev.info.name}, {date.today()}; us a "
             f"call, {CALLS} calls back to back, the runs in turn", "",
             "| weights | M x K | rows of x | way | us a call (runs) | vs copy | default's rel. err |",
             "|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for shape in args.shapes.split(","):
        m, k = (int(v) for v in shape.split("x"))
        clocks_up(dev)
        gbs = copy_gbs(dev, m * k * 2)
        for fmt in args.formats.split(","):
            w, w32 = tiled_weights(fmt, m, k, rng)
            wr = runtime.array(w, device=dev)
            for n in (int(v) for v in args.rows.split(",")):
                x = (rng.standard_normal((n, k)) * 0.5).astype(np.float32)
                xr = runtime.array(x, device=dev)
                yr = runtime.zeros((n, m), np.float32, device=dev)
                default = G.choice(fmt, n, None, m, k, dev)
                ways = [default] + [o for o in others if o != default]
                plans = {}
                for way in ways:
                    try:
                        plans[way] = G._launches(G.word_view(wr, fmt), xr, yr, fmt, n, m, k, False, way, dev)
                        for kern, *_ in plans[way]:
                            kern.compile()
                    except Exception as e:  # noqa: BLE001 - a way that does not take this problem
                        print(f"skipped {way} at {fmt} {shape} {n} rows: {type(e).__name__}: {e}", flush=True)
                        plans.pop(way, None)
                G.hot.run(plans[default])
                ref = x.astype(np.float64) @ w32.astype(np.float64).T
                y = yr.numpy()[:, :w32.shape[0]]
                err = float(np.abs(y - ref).max() / np.abs(ref).max())
                times: dict[tuple[str, int, int], list[float]] = {way: [] for way in plans}
                clocks_up(dev)
                for _ in range(args.runs):
                    for way, launches in plans.items():
                        times[way].append(G.stream_ms(launches, dev, calls=CALLS) * 1e3)
                for way, ts in times.items():
                    best = min(ts)
                    lines.append(f"| {fmt} | {m} x {k} | {n} | {'default ' if way == default else ''}"
                                 f"{':'.join(map(str, way))} | {', '.join(f'{t:.1f}' for t in ts)} | "
                                 f"{w.nbytes / (best * 1e-6) / 1e9 / gbs:.2f} | "
                                 f"{f'{err:.1e}' if way == default else ''} |")
                    print(lines[-1], flush=True)
            wr.free()
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
