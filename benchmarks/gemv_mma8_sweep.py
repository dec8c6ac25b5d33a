"""gemv_mma8's products on 8-bit cooperative matrices on the GPU: each (depth, split) against ``ops.gemv``'s default
way and the x-in-registers and "prew" kernels, for q4_0 and q8_0 weights and several rows of x, in one process.

    python3 benchmarks/gemv_mma8_sweep.py [--rows 2,4,8,16] [--formats q4_0,q8_0]

4096 x 14336 weights; each time is ``gemv.stream_ms`` of x's rounding and the product (200 calls back to back in
one command buffer, each after ``benchmarks._clocks.clocks_up``, every kernel compiled before the first), us a
call; "vs copy" is W's bytes a second over a copy kernel's read + write rate on the f16 weights' bytes.  Prints a
markdown table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._clocks import clocks_up, copy16, copy_grid  # noqa: E402
from benchmarks._gpu import require_gpu  # noqa: E402
from benchmarks.ops_llm import weights  # noqa: E402
from coopdsl import runtime  # noqa: E402
from coopdsl.ops import gemv as G  # noqa: E402
from coopdsl.ops import gemv_mma8 as GM8  # noqa: E402
from coopdsl.ops import gemv_xregs as GX  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="2,4,8,16")
    ap.add_argument("--formats", default="q4_0,q8_0")
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--k", type=int, default=14336)
    ap.add_argument("--probes", action="store_true",
                    help="also time depth 2, split 4 with gemv_mma8.kernel's probes (wrong results: what a part costs)")
    args = ap.parse_args()
    dev = require_gpu("gemv_mma8_sweep.py")
    rng = np.random.default_rng(0)
    m, k = args.m, args.k
    n16 = m * k * 2 // 16
    src = runtime.array(np.zeros((n16, 4), np.uint32), device=dev)
    dst = runtime.array(np.zeros((n16, 4), np.uint32), device=dev)
    clocks_up(dev)
    r = copy16.bench(copy_grid(n16), src, dst, n16, device=dev, warmup=2000, repeat=50)
    copy_gbs = 2 * n16 * 16 / (r.median_ms * 1e-3) / 1e9
    lines = [f"`python3 benchmarks/gemv_mma8_sweep.py --rows {args.rows} --formats {args.formats}` on "
             f"{dev.info.name}; {m} x {k} weights; copy kernel {copy_gbs:.0f} GB/s (read + write); us a call (x's "
             "rounding + the product, 200 calls back to back)",
             "", "| weights | rows of x | way | depth / rows of W | split | us | vs copy |",
             "|---|---|---|---|---|---|---|"]
    for fmt in args.formats.split(","):
        w, _ = weights(fmt, m, k, rng)
        wbytes = w.nbytes
        wr = runtime.array(G.word_view(w, fmt), device=dev)
        for n in (int(v) for v in args.rows.split(",")):
            x = runtime.array((rng.standard_normal((n, k)) * 0.5).astype(np.float32).reshape(-1, 4), device=dev)
            y = runtime.zeros((n, m), np.float32, device=dev)
            default = G.choice(fmt, n, None, m, k, dev)
            ways = [("default " + default[0], default), ("prew", ("prew", 2, 2))]
            if GX.takes(fmt, n, k):
                ways += [("xregs", ("xregs", 8, 4)), ("xregs", ("xregs", 4, 4))]
            ways += [("mma8", ("mma8", d, s)) for d in GM8.DEPTHS for s in GM8.SPLITS if GM8.fits(GM8.cols(n), s)]
            if args.probes:
                ways += [(f"mma8 probe {p}", ("mma8", 2, 4)) for p in GM8.PROBES]
            runs = []
            for name, way in ways:
                launches = G._launches(wr, x, y, fmt, n, m, k, False, way, dev)
                if "probe" in name:
                    kern, *rest = launches[-1]
                    launches[-1] = (GM8.kernel(fmt, GM8.cols(n), 4, 2, name.split()[-1]), *rest)
                for kern, *_ in launches:
                    kern.compile()
                runs.append((name, way, launches))
            for name, way, launches in runs:
                clocks_up(dev)
                ms = G.stream_ms(launches, dev)
                lines.append(f"| {fmt} | {n} | {name} | {way[1]} | {way[2]} | {ms * 1e3:.1f} | "
                             f"{wbytes / (ms * 1e-3) / 1e9 / copy_gbs:.2f} |")
                print(lines[-1], flush=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
