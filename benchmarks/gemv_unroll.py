"""The GEMV's step-loop unroll hint against its default (``gemv.kernel``'s ``unroll``: 4 where rows of x times
rows of W a lane is at most 4, else 2), for the default way and layout of each case, in one process.

    python3 benchmarks/gemv_unroll.py [--formats q4_0,q8_0,q4_K] [--rows 2,4,8,16] [--unrolls 1,2,4,8]

4096 x 14336 weights; each time is ``gemv.stream_ms`` (200 calls back to back in one command buffer, after
``benchmarks._clocks.clocks_up``).  Prints a markdown table.
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--formats", default="q4_0,q8_0,q4_K")
    ap.add_argument("--rows", default="2,4,8,16")
    ap.add_argument("--unrolls", default="1,2,4,8")
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--k", type=int, default=14336)
    args = ap.parse_args()
    dev = require_gpu("gemv_unroll.py")
    rng = np.random.default_rng(0)
    m, k = args.m, args.k
    unrolls = [int(u) for u in args.unrolls.split(",")]
    print(f"{dev.info.name}; us a call (200 back to back); default unroll marked *")
    print("| weights | rows of x | way | " + " | ".join(f"unroll {u}" for u in unrolls) + " |")
    print("|---|---|---|" + "---|" * len(unrolls))
    for fmt in args.formats.split(","):
        w = weights(fmt, m, k, rng)[0]
        wr = runtime.array(w, device=dev)
        for n in (int(r) for r in args.rows.split(",")):
            x = runtime.array((rng.standard_normal((n, k)) * 0.5).astype(np.float32), device=dev)
            y = runtime.zeros((n, m), np.float32, device=dev)
            way = G.choice(fmt, n, None, m, k, dev)
            if way[0] == "mma":
                continue
            how, rows, split = way
            default = 4 if n * rows <= 4 else 2
            cells = []
            for u in unrolls:
                launches = G._launches(G.word_view(wr, fmt), x, y, fmt, n, m, k, False, way, dev)
                kern, grid, a, kw = launches[-1]
                launches[-1] = (G.kernel(fmt, n, False, rows, split, how, unroll=u), grid, a, kw)
                clocks_up(dev)
                ms = G.stream_ms(launches, dev)
                cells.append(f"{ms * 1e3:.1f}{' *' if u == default else ''}")
            print(f"| {fmt} | {n} | {how} {rows}x{split} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
