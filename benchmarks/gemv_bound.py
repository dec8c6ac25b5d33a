"""What bounds the decoding product at several rows of x: the "prew" q4_0 GEMV's loop (``gemv.kernel``: a lane
a whole block of each of 2 rows of W, 2 subgroups splitting K, the step loop unrolled twice) with its per-(block,
row of x) arithmetic swapped, timed back to back in one process.

    python3 benchmarks/gemv_bound.py [--rows 4,8,16] [--modes dp4a8,dp4a4,loads,hfma2]

Modes (results are not products, except ``dp4a8``'s, which is ``gemv``'s arithmetic):

* ``dp4a8``: eight integer dot products of four 8-bit lanes a block and row of x, then four f32 operations
  (what ``gemv`` does);
* ``dp4a4``: four of them (the low nibbles only), the same loads;
* ``loads``: the same loads of W and x, one XOR a row of x and row of W to keep them;
* ``hfma2``: x as f16 (64 bytes a block row, four 16-byte loads), W's levels decoded once to f16 pairs (one AND-OR
  on 1024.0's pattern, then a subtraction, for two levels), and sixteen f16x2 fused multiply-adds a block and row
  of x, summed in f16 over the block and added to an f32 sum with the block's scale.

``--cm2``: also ``ops.linear``'s prefill kernel (ggml's ``mul_mm_cm2``: workgroup-scope matrices, W read through a
tensor layout with q4_0's decode function, no shared-memory tile of W) with 16-wide tiles of x (f16, padded to 16
rows), for each (BLOCK_SIZE, BM, BN, BK) of ``--tiles`` and each count of K's slices of ``--splits``.

4096 x 14336 q4_0 weights; each time is ``gemv.stream_ms`` of the kernel alone (200 calls back to back in one
command buffer, after ``benchmarks._clocks.clocks_up``), and ``gemv``'s own launches (x rounded to 8 bits, then
the product) for reference.  Prints a markdown table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import no_type_check

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import coopdsl as cd  # noqa: E402
from benchmarks._clocks import clocks_up  # noqa: E402
from benchmarks._gpu import require_gpu  # noqa: E402
from benchmarks.ops_llm import weights  # noqa: E402
from coopdsl import (  # noqa: E402
    f16,
    f32,
    i32,
    runtime,  # noqa: E402
    u32,
    vec2,
    vec4,
)
from coopdsl.ops import gemv as G  # noqa: E402
from coopdsl.ops import gemv_q8 as Q8  # noqa: E402
from coopdsl.ops.linear import prefill_launches  # noqa: E402

MODES = ("dp4a8", "dp4a4", "loads", "hfma2")


def probe(nx: int, mode: str) -> cd.Kernel:
    """The prew q4_0 loop (2 rows of W a lane, split 2) with ``mode``'s arithmetic; x is ivec4s of 8-bit
    blocks (three a block) or, for hfma2, uvec4s of f16 (four a block)."""
    f16x = mode == "hfma2"
    d4 = 8 if mode == "dp4a8" else 4 if mode == "dp4a4" else 0

    @cd.kernel(workgroup_size=(128, 1, 1), subgroup_size=32)
    @no_type_check
    def gemv_probe(w: cd.Buffer[u32], x: cd.Buffer[vec4[u32]], y: cd.Buffer[f32], M: u32, K: u32):
        lane = cd.subgroup_invocation_id
        group = cd.subgroup_id // 2
        first = lane + 32 * (cd.subgroup_id % 2)
        row0 = (cd.workgroup_id.x * 2 + group) * 2
        acc = [[f32(0.0) for j in cd.static_range(nx)] for r in cd.static_range(2)]
        nu = K // 32
        for u in cd.range(first, nu, 64, unroll=2):
            h = u & 1
            wr = []
            for r in cd.static_range(2):
                base = min(row0 + r, M - 1) * (K // 64 * 9) + (u >> 1) * 9 + 4 * h
                t = [w[base + j] for j in cd.static_range(5)]
                d = f32(cd.bitcast(t[0] >> (16 * h), vec2[f16]).x)
                q = [t[j + 1] if h == 1 else (t[j] >> 16) | (t[j + 1] << 16) for j in cd.static_range(4)]
                if f16x:
                    pairs = []
                    for c in cd.static_range(4):
                        for s in cd.static_range(4):
                            v = cd.bitcast(((q[c] >> (4 * s)) & 0x000F000F) | 0x64006400, vec2[f16])
                            pairs = pairs + [v - vec2[f16](f16(1032.0))]
                    wr = wr + [[d, pairs]]
                else:
                    wr = wr + [[d, q]]
            for j in cd.static_range(nx):
                if f16x:
                    xb = (j * nu + u) * 4
                    xv = [x[xb + i] for i in cd.static_range(4)]
                    xs = []
                    for i in cd.static_range(4):
                        xs = xs + [cd.bitcast(xv[i].x, vec2[f16]), cd.bitcast(xv[i].y, vec2[f16]),
                                   cd.bitcast(xv[i].z, vec2[f16]), cd.bitcast(xv[i].w, vec2[f16])]
                    for r in cd.static_range(2):
                        p = wr[r][1]
                        s2 = p[0] * xs[0]
                        for e in cd.static_range(1, 16):
                            s2 = cd.fma(p[e], xs[e], s2)
                        acc[r][j] += wr[r][0] * (f32(s2.x) + f32(s2.y))
                else:
                    xb = (j * nu + u) * 3
                    xa = x[xb]
                    xc = x[xb + 1]
                    sc = x[xb + 2]
                    xs = [cd.bitcast(e, i32) for e in (xa.x, xa.y, xa.z, xa.w, xc.x, xc.y, xc.z, xc.w)]
                    dx = cd.bitcast(sc.x, f32)
                    sx = cd.bitcast(sc.y, f32)
                    for r in cd.static_range(2):
                        q = wr[r][1]
                        if d4 == 0:
                            acc[r][j] += cd.bitcast((xa.x ^ xc.w) ^ (q[0] ^ q[3]), f32)
                        else:
                            dots = i32(Q8.MAGIC_BITS)
                            for c in cd.static_range(4):
                                dots += cd.dot4x8(xs[c], q[c] & 0x0F0F0F0F)
                                if d4 == 8:
                                    dots += cd.dot4x8(xs[4 + c], (q[c] >> 4) & 0x0F0F0F0F)
                            acc[r][j] += wr[r][0] * (dx * (cd.bitcast(dots, f32) - Q8.MAGIC) - 8.0 * sx)
        for r in cd.static_range(2):
            for j in cd.static_range(nx):
                total = cd.subgroup_add(acc[r][j])
                if lane == 0 and row0 + r < M:
                    y[j * M + row0 + r] = total

    gemv_probe.__name__ = gemv_probe.__qualname__ = f"gemv_probe_{mode}_x{nx}"
    return gemv_probe


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="4,8,16")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--k", type=int, default=14336)
    ap.add_argument("--cm2", action="store_true")
    ap.add_argument("--tiles", default="128:64:16:128,64:32:16:128,128:128:16:64,128:64:16:256")
    ap.add_argument("--splits", default="1,2,4,8")
    args = ap.parse_args()
    dev = require_gpu("gemv_bound.py")
    rng = np.random.default_rng(0)
    m, k = args.m, args.k
    modes = args.modes.split(",")
    w = weights("q4_0", m, k, rng)[0]
    wr = runtime.array(w, device=dev)
    ww = runtime.array(G.word_view(w, "q4_0").view(np.uint32), device=dev)
    print(f"{dev.info.name}; q4_0 {m} x {k}; us a call (200 back to back in one command buffer)")
    print("| rows of x | gemv (x to 8 bits + product) | " + " | ".join(modes) + " |")
    print("|---|---|" + "---|" * len(modes))
    for n in (int(r) for r in args.rows.split(",")):
        x = runtime.array((rng.standard_normal((n, k)) * 0.5).astype(np.float32), device=dev)
        y = runtime.zeros((n, m), np.float32, device=dev)
        clocks_up(dev)
        ref = G.stream_ms(G._launches(G.word_view(wr, "q4_0"), x, y, "q4_0", n, m, k, False,
                                      ("prew", 2, 2), dev), dev)
        cells = []
        for mode in modes:
            words = n * k // 32 * (16 if mode == "hfma2" else 12)
            xp = runtime.array(rng.integers(0, 2**16, words, dtype=np.uint32).reshape(-1, 4) & 0x3BFF3BFF,
                               device=dev)
            launch = (probe(n, mode), (-(-m // 4), 1, 1), (ww, xp, y), {"M": m, "K": k, "device": dev})
            clocks_up(dev)
            cells.append(f"{G.stream_ms([launch], dev) * 1e3:.1f}")
        print(f"| {n} | {ref * 1e3:.1f} | " + " | ".join(cells) + " |", flush=True)
    if not args.cm2:
        return
    splits = [int(s) for s in args.splits.split(",")]
    print("\nmul_mm_cm2, x f16 padded to 16 rows; us a call (200 back to back)")
    print("| rows of x | tile | " + " | ".join(f"split {s}" for s in splits) + " |")
    print("|---|---|" + "---|" * len(splits))
    for n in (int(r) for r in args.rows.split(",")):
        xh = runtime.array((rng.standard_normal((16, k)) * 0.5).astype(np.float16), device=dev)
        y = runtime.zeros((n, m), np.float32, device=dev)
        for tile in args.tiles.split(","):
            spec = (*(int(v) for v in tile.split(":")), 0)
            cells = []
            for sp in splits:
                clocks_up(dev)
                launches = prefill_launches(xh, wr, y, "q4_0", device=dev, tile=spec, split_k=sp)
                cells.append(f"{G.stream_ms(launches, dev) * 1e3:.1f}")
            print(f"| {n} | {tile} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
