"""How fast the GPU issues the arithmetic the decoding products are made of, relative to f32 fused multiply-adds:
``cd.dot4x8`` (OpSDot / OpSUDot, four 8-bit products and their sum), i32 multiply-add, f32 and f16x2 multiply-add,
and ``subgroup_shuffle_xor``, each as eight independent dependency chains a lane over a grid that fills the GPU.

    python3 benchmarks/alu_rates.py [--iters 2048]

Prints, per operation, the operations per second and their rate relative to f32 multiply-adds (which NVIDIA's
Hopper issues at 128 a clock an SM, so a ratio of 0.5 is 64 a clock an SM).  Each kernel's time is the median of
``Kernel.bench``'s runs after ``benchmarks._clocks.clocks_up``.
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
from coopdsl import f16, f32, i32, u32, vec2  # noqa: E402
from coopdsl.ops.device_caps import shader_cores  # noqa: E402

CHAINS = 8
WG = 256


def chain_kernel(op: str) -> cd.Kernel:
    """``CHAINS`` chains of ``iters`` operations ``op`` a lane; the chains' values are stored so that none is
    dead."""

    FFMA, HFMA2, IMAD, SHFL, SDOT = (op == o for o in ("ffma", "hfma2", "imad", "shfl", "sdot"))

    @cd.kernel(workgroup_size=(WG, 1, 1), subgroup_size=32)
    @no_type_check
    def chains(out: cd.Buffer[u32], iters: u32, seed: u32):
        t = cd.global_invocation_id.x
        b = seed + t
        if FFMA:
            v = [f32(b + c) * 1e-3 for c in cd.static_range(CHAINS)]
            for _ in cd.range(iters):
                for c in cd.static_range(CHAINS):
                    v[c] = cd.fma(v[c], 0.999, 1e-4)
            res = u32(0)
            for c in cd.static_range(CHAINS):
                res = res ^ cd.bitcast(v[c], u32)
        elif HFMA2:
            v = [vec2[f16](f16(f32(c)), f16(f32(b & 7))) for c in cd.static_range(CHAINS)]
            m = vec2[f16](f16(0.999), f16(0.998))
            a = vec2[f16](f16(1e-3), f16(2e-3))
            for _ in cd.range(iters):
                for c in cd.static_range(CHAINS):
                    v[c] = v[c] * m + a
            res = u32(0)
            for c in cd.static_range(CHAINS):
                res = res ^ cd.bitcast(v[c], u32)
        elif IMAD:
            v = [b + c for c in cd.static_range(CHAINS)]
            for _ in cd.range(iters):
                for c in cd.static_range(CHAINS):
                    v[c] = v[c] * 1664525 + 1013904223
            res = u32(0)
            for c in cd.static_range(CHAINS):
                res = res ^ v[c]
        elif SHFL:
            v = [b + c for c in cd.static_range(CHAINS)]
            for _ in cd.range(iters):
                for c in cd.static_range(CHAINS):
                    v[c] = cd.subgroup_shuffle_xor(v[c], 1 + c % 4)
            res = u32(0)
            for c in cd.static_range(CHAINS):
                res = res ^ v[c]
        else:   # "sdot" (i32 x i32) or "sudot" (i32 x u32): v = dot4x8(v, w) + v
            v = [cd.bitcast(b * 2654435761 + c, i32) for c in cd.static_range(CHAINS)]
            wi = cd.bitcast(b ^ 0x5A5A5A5A, i32)
            wu = (b ^ 0x0F0F0F0F) & 0x0F0F0F0F
            for _ in cd.range(iters):
                for c in cd.static_range(CHAINS):
                    if SDOT:
                        v[c] = cd.dot4x8(v[c], wi) + v[c]
                    else:
                        v[c] = cd.dot4x8(v[c], wu) + v[c]
            res = u32(0)
            for c in cd.static_range(CHAINS):
                res = res ^ cd.bitcast(v[c], u32)
        out[t] = res

    chains.__name__ = chains.__qualname__ = f"chains_{op}"
    return chains


OPS = ("ffma", "hfma2", "imad", "sdot", "sudot", "shfl")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=2048)
    ap.add_argument("--waves", type=int, default=16, help="workgroups a shader core")
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    dev = require_gpu("alu_rates.py")
    cores = shader_cores(dev)
    groups = cores * args.waves
    out = np.zeros(groups * WG, np.uint32)
    clocks_up(dev)
    rows, base = [], None
    for op in OPS:
        r = chain_kernel(op).bench((groups, 1, 1), out, args.iters, 7, device=dev, warmup=5, repeat=args.repeat)
        ops = groups * WG * CHAINS * args.iters / (r.median_ms * 1e-3)
        base = base or ops
        rows.append(f"| {op} | {r.median_ms * 1e3:.1f} us | {ops / 1e12:.2f} T/s | {ops / base:.2f} |")
    print(f"`python3 benchmarks/alu_rates.py --iters {args.iters}` on {dev.info.name}: {groups} workgroups of {WG}, "
          f"{CHAINS} chains a lane\n\n| operation | time | operations a second | of ffma's |\n|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
