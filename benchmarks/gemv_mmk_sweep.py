"""Time :mod:`coopdsl.ops.gemv_mmk` (K split over workgroups, x staged in shared memory) against ``ops.gemv``'s default.

``python3 benchmarks/gemv_mmk_sweep.py --rows 4,8,16 --formats f16,q4_0,q8_0,q4_K`` on a GPU: for each format and
row count of f32 x, ``ops.gemv``'s default launches, then every (tiles, depth, x chunk bytes) of ``--layouts``,
each ``gemv.stream_ms`` (200 calls back to back in one command buffer, after ``benchmarks._clocks.clocks_up``;
the product and, with more than one chunk of K, the reduction of the chunks), us a call; the first call of each
case is checked against the default's result.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._clocks import clocks_up  # noqa: E402
from benchmarks._gpu import require_gpu  # noqa: E402
from benchmarks.ops_llm import weights  # noqa: E402
from coopdsl import runtime  # noqa: E402
from coopdsl.ops import gemv as G  # noqa: E402
from coopdsl.ops import gemv_mmk as GK  # noqa: E402
from coopdsl.ops import ggml_mul_mm as MM  # noqa: E402

LAYOUTS = "4x2x24,4x1x24,2x2x24,4x2x12,1x2x24"   # tiles x depth x KB of x a workgroup


def launches(wr, x, part, y, fmt, n, m, k, tiles, depth, xkb, dev):
    np_ = GK.cols(n)
    kc = GK.chunk(fmt, np_, k, xkb * 1024)
    grid = GK.grid(m, k, tiles, kc)
    kern = GK.kernel(fmt, np_, tiles, kc, depth)
    out = [(kern, grid, (wr, x, y if grid[1] == 1 else part), {"M": m, "K": k, "N": n, "device": dev})]
    if grid[1] > 1:
        out.append((MM.reduce_kernel(), MM.flat_grid(n * m), (part, y, n * m, grid[1], n * m), {"device": dev}))
    return out, kc, grid


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="4,8,16")
    ap.add_argument("--formats", default="f16,q4_0,q8_0,q4_K")
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--k", type=int, default=14336)
    ap.add_argument("--layouts", default=LAYOUTS)
    args = ap.parse_args()
    dev = require_gpu("gemv_mmk_sweep.py")
    rng = np.random.default_rng(0)
    m, k = args.m, args.k
    lines = [f"`python3 benchmarks/gemv_mmk_sweep.py --rows {args.rows} --formats {args.formats} --m {m} --k {k} "
             f"--layouts {args.layouts}` on {dev.info.name}; {m} x {k} weights, f32 x; us a call (200 calls back "
             "to back)", "", "| weights | rows of x | kernel | tiles | depth | K a workgroup | grid | us | max rel. "
             "diff from the default |", "|---|---|---|---|---|---|---|---|---|"]
    clocks_up(dev)
    for fmt in args.formats.split(","):
        w, _ = weights(fmt, m, k, rng)
        wn = G.word_view(w, fmt)
        wr = runtime.array(wn, device=dev)
        wq = runtime.array(wn.view(np.uint32), device=dev) if fmt in ("q4_0", "q8_0") else wr
        for n in (int(v) for v in args.rows.split(",")):
            xn = (rng.standard_normal((n, k)) * 0.5).astype(np.float32)
            x = runtime.array(xn.reshape(-1, 4), device=dev)
            y = runtime.zeros((n, m), np.float32, device=dev)
            part = runtime.zeros(((k // 64) * n * m,), np.float32, device=dev)
            base, y0 = G.plan(runtime.array(w, device=dev), runtime.array(xn, device=dev), fmt, device=dev)
            for kern, *_ in base:
                kern.compile()
            cases = []
            for t in args.layouts.split(","):
                tiles, depth, xkb = (int(v) for v in t.split("x"))
                ls, kc, grid = launches(wq, x, part, y, fmt, n, m, k, tiles, depth, xkb, dev)
                for kern, *_ in ls:
                    kern.compile()
                cases.append((tiles, depth, kc, grid, ls))
            clocks_up(dev)
            ms = G.stream_ms(base, dev)
            ref = y0.numpy()
            way = G.choice(fmt, n, None, m, k, dev)
            lines.append(f"| {fmt} | {n} | default {way} | | | | | {ms * 1e3:.1f} | |")
            print(lines[-1], flush=True)
            for tiles, depth, kc, grid, ls in cases:
                clocks_up(dev)
                ms = G.stream_ms(ls, dev)
                got = y.numpy()
                diff = float(np.abs(got - ref).max() / np.abs(ref).max())
                lines.append(f"| {fmt} | {n} | mmk | {tiles} | {depth} | {kc} | {grid[0]} x {grid[1]} | "
                             f"{ms * 1e3:.1f} | {diff:.1e} |")
                print(lines[-1], flush=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
