"""gemv_xregs's knobs on the GPU: its layouts (rows of W a workgroup, subgroups), the unroll hint of its loop over
K's slices and the rows of W a reduction takes, against ``ops.gemv``'s "prew" kernel (q4_K: its "pre" kernel with
4 rows of W over 4 subgroups, the one-row default), for q4_0, q8_0 and q4_K weights and several rows of x, each timed
in one process.

    python3 benchmarks/gemv_xregs_sweep.py [--rows 4,8] [--formats q4_0,q8_0] [--layouts 8x4,8x7] [--unrolls 0,2]
        [--stats]

4096 x 14336 weights; each time is ``gemv.stream_ms`` of x's rounding and the product (200 calls back to back in
one command buffer, each after ``benchmarks._clocks.clocks_up``, every kernel compiled before the first), us a
call.  ``--stats`` adds the driver's register count and binary size (bytes; 16 a machine instruction on NVIDIA)
of each kernel.  Prints a markdown table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._clocks import clocks_up  # noqa: E402
from benchmarks._gpu import require_gpu  # noqa: E402
from benchmarks.ops_llm import weights  # noqa: E402
from coopdsl import runtime  # noqa: E402
from coopdsl.ops import gemv as G  # noqa: E402
from coopdsl.ops import gemv_q8 as Q8  # noqa: E402
from coopdsl.ops import gemv_xregs as GX  # noqa: E402

LAYOUTS = ((8, 4), (4, 4), (8, 2))
UNROLLS = (None, 2)


def _batches(fmt: str, n: int, rows: int) -> list[int]:
    """The rows of W a reduction takes that are timed: the default and half of it."""
    b = GX.batch(fmt, n, rows)
    return sorted({b, max(1, b // 2)})


def _stats(kern: object, dev: object, want: bool) -> str:
    """The driver's register count and binary size of ``kern`` (two table cells) where asked and reported, else
    empty cells."""
    if not want:
        return " |"
    try:
        stats = kern.statistics(device=dev)  # type: ignore[attr-defined]
    except Exception as e:  # noqa: BLE001 (a device without the extension: say so in the table)
        return f"({type(e).__name__}) |"
    found = {name.lower(): v for ex in stats for name, v in ex.get("statistics", {}).items()}
    return f"{found.get('register count', '')} | {found.get('binary size', '')}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="4,8")
    ap.add_argument("--formats", default="q4_0,q8_0")
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--k", type=int, default=14336)
    ap.add_argument("--layouts", default="", help="rows of W a workgroup x subgroups, e.g. 8x4,8x7 (default "
                    f"{','.join(f'{r}x{s}' for r, s in LAYOUTS)})")
    ap.add_argument("--unrolls", default="0,2", help="unroll hints to time (0: none)")
    ap.add_argument("--stats", action="store_true", help="add each kernel's register count and binary size "
                    "(driver statistics)")
    args = ap.parse_args()
    layouts = [tuple(int(v) for v in t.split("x")) for t in args.layouts.split(",") if t] or list(LAYOUTS)
    unrolls = [int(u) or None for u in args.unrolls.split(",")]
    dev = require_gpu("gemv_xregs_sweep.py")
    rng = np.random.default_rng(0)
    m, k = args.m, args.k
    lines = [f"`python3 benchmarks/gemv_xregs_sweep.py --rows {args.rows} --formats {args.formats} --m {m} --k {k} "
             f"--layouts {','.join(f'{r}x{s}' for r, s in layouts)} --unrolls {args.unrolls}"
             f"{' --stats' if args.stats else ''}` on "
             f"{dev.info.name}; {m} x {k} weights; us a call (x's rounding + the product, 200 calls back to "
             "back)",
             "", "| weights | rows of x | kernel | rows of W a workgroup | subgroups | unroll | rows a reduction | us "
             "| registers | binary bytes |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    clocks_up(dev)
    for fmt in args.formats.split(","):
        w, _ = weights(fmt, m, k, rng)
        wr = runtime.array(G.word_view(w, fmt).view(np.uint32), device=dev)
        for n in (int(v) for v in args.rows.split(",")):
            x = runtime.array((rng.standard_normal((n, k)) * 0.5).astype(np.float32).reshape(-1, 4), device=dev)
            y = runtime.zeros((n, m), np.float32, device=dev)
            blocks = n * k // 32
            xq = runtime.empty(blocks * Q8.Q8_WORDS, np.int32, device=dev)
            first = (Q8.quantize_kernel(), Q8.grid(blocks), (x, xq, blocks), {"device": dev})
            base = ("pre", 4, 4) if fmt == "q4_K" else ("prew", 2, 2)   # (how, rows, split)
            prew = G.kernel(fmt, n, rows=base[1], split=base[2], how=base[0])
            kernels = [GX.kernel(fmt, n, rows, split, unroll, bt) for rows, split in layouts for unroll in unrolls
                       for bt in _batches(fmt, n, rows)]
            for kern in (prew, *kernels):
                kern.compile()
            clocks_up(dev)
            ms = G.stream_ms([first, (prew, G.grid(m, fmt, n, base[1], base[2]), (wr, xq, y),
                                      {"M": m, "K": k, "device": dev})],
                             dev)
            lines.append(f"| {fmt} | {n} | {base[0]} | {base[1]} | {base[2]} | | | {ms * 1e3:.1f} | "
                         f"{_stats(prew, dev, args.stats)} |")
            print(lines[-1], flush=True)
            for rows, split in layouts:
                for unroll in unrolls:
                    for bt in _batches(fmt, n, rows):
                        kern = GX.kernel(fmt, n, rows, split, unroll, bt)
                        clocks_up(dev)
                        ms = G.stream_ms([first, (kern, GX.grid(m, rows), (wr, xq, y),
                                                  {"M": m, "K": k, "device": dev})], dev)
                        lines.append(f"| {fmt} | {n} | xregs | {rows} | {split} | {unroll or ''} | {bt} | "
                                     f"{ms * 1e3:.1f} | {_stats(kern, dev, args.stats)} |")
                        print(lines[-1], flush=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
