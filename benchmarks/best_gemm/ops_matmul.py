"""``coopdsl.ops.matmul``'s two kernels on the GPU: the tiled one (sizes that are tile multiples; B row-major,
and K-major as ``transpose_b=True`` gives it; and M of no tile's multiple, ``M_EDGE`` rows fewer, through its
M edge) and the general one (any size), each with the configuration ``ops.matmul`` uses untuned.

    python benchmarks/best_gemm/ops_matmul.py [--n 4096 8192] [--rounds 3]
        [--out benchmarks/notes/gemm-best-per-pair.md]

Per kind (f16, bf16, i8, u8; B row-major, as ``ops.matmul`` takes it) and size: ``--rounds`` interleaved
rounds of ``--warmup`` untimed and ``--repeat`` timed dispatches (GPU timestamps, resident arrays), each
after ``--pause`` seconds of idle GPU (none by default); the median over all timed dispatches, with the range of the
per-round medians (after about a second of warm-up work per size). The results are checked against
numpy at 512^3 first.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.best_gemm.run import _fmt, _summary  # noqa: E402

KIND_PAIR = {"f16": "f16-f32", "bf16": "bf16-f32", "i8": "s8-s32", "u8": "u8-u32"}
M_EDGE = 77  # the M-edge column runs (n - 77) x n x n: a partial last block row, and a partial last tile


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, nargs="+", default=[4096, 8192])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--pause", type=float, default=0.0,
                   help="seconds of idle GPU before each timed round (the clocks drop while it idles, which "
                        "short dispatches then measure; 0 keeps the GPU busy, as the rounds interleave kernels)")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    from benchmarks._gpu import require_gpu
    from benchmarks.best_gemm.sweep import inputs
    from coopdsl import ops, runtime
    from coopdsl.ops import gemm, gemm_tiled

    device = require_gpu("best_gemm/ops_matmul.py")
    rows = []
    for kind, pair in KIND_PAIR.items():
        a, b, _, ref = inputs(pair, 512, 512, 512, np.random.default_rng(1))
        err = float(np.abs(ops.matmul(a, b, kind=kind, device=device).astype(np.float64) - ref).max())
        for n in args.n:
            a, b, d, _ = inputs(pair, n, n, n, np.random.default_rng(0), reference=False)
            ra, rb, rd = (runtime.array(x, device=device) for x in (a, b, d))
            rbt = runtime.array(np.ascontiguousarray(b.T), device=device)
            fast_t, spec_t = gemm_tiled.specialized(gemm.tiled_kernel(kind, True),
                                                    gemm.tiled_configs(kind, n, n, n, b_kmajor=True)[0][0])
            g_fast_t = gemm._tiled_grid({"M": n, "N": n, **spec_t})
            fast, spec = gemm_tiled.specialized(gemm.tiled_kernel(kind), gemm.tiled_configs(kind, n, n, n)[0][0])
            general = gemm.kernel(kind)
            g_fast = gemm._tiled_grid({"M": n, "N": n, **spec})
            g_general = gemm._grid({"M": n, "N": n, **gemm.DEFAULT.values})
            m_e = n - M_EDGE
            configs_e, edge = gemm.tiled_configs(kind, m_e, n, n)
            assert edge, "the M-edge column must run the kernel's M edge"
            fast_e, spec_e = gemm_tiled.specialized(gemm.tiled_kernel(kind, False, True), configs_e[0])
            g_fast_e = gemm._tiled_grid({"M": m_e, "N": n, **spec_e})
            fast.bench(g_fast, ra, rb, rd, M=n, N=n, K=n, device=device, warmup=200, repeat=10,
                       **spec)  # bring the clocks up after the seconds spent making the inputs
            times: dict[str, list[list[float]]] = {"tiled": [], "general": [], "kmajor": [], "edge": []}
            for _ in range(args.rounds):
                time.sleep(args.pause)
                times["tiled"].append(fast.bench(g_fast, ra, rb, rd, M=n, N=n, K=n, device=device,
                                                 warmup=args.warmup, repeat=args.repeat, **spec).times_ms)
                time.sleep(args.pause)
                times["kmajor"].append(fast_t.bench(g_fast_t, ra, rbt, rd, M=n, N=n, K=n, device=device,
                                                    warmup=args.warmup, repeat=args.repeat, **spec_t).times_ms)
                time.sleep(args.pause)
                times["edge"].append(fast_e.bench(g_fast_e, ra, rb, rd, M=m_e, N=n, K=n, device=device,
                                                  warmup=args.warmup, repeat=args.repeat, **spec_e).times_ms)
                time.sleep(args.pause)
                times["general"].append(general.bench(g_general, ra, rb, rd, M=n, N=n, K=n, device=device,
                                                      warmup=args.warmup, repeat=args.repeat).times_ms)
            for x in (ra, rb, rbt, rd):
                x.free()
            tiled_s, kmajor_s, general_s = (_fmt(_summary(times[x], n)) for x in ("tiled", "kmajor", "general"))
            edge_s = _fmt(_summary(times["edge"], n, 2.0 * m_e * n * n))
            rows.append(f"| {kind} | {n} | {tiled_s} | {kmajor_s} | {edge_s} | {general_s} | {err:.1e} |")
            print(rows[-1], flush=True)
    info = device.info
    lines = [f"Date: {datetime.date.today()}. Machine: {info.name}, driver {info.driver_name} {info.driver_info}.", "",
             f"Command: `python benchmarks/best_gemm/ops_matmul.py --n {' '.join(map(str, args.n))} --rounds "
             f"{args.rounds} --warmup {args.warmup} --repeat {args.repeat} --pause {args.pause} "
             "--out benchmarks/notes/gemm-best-per-pair.md`", "",
             "`ops.matmul`'s kernels with the configuration it uses untuned (tiled: the first of "
             "`coopdsl.ops.gemm.TILED`, or of `TILED_KMAJOR` for `transpose_b=True`, that divides the size; "
             "general: 64 x 64 blocks), n x n x n, B row-major unless said (the M-edge column: "
             f"(n - {M_EDGE}) x n x n, the size `ops.matmul` ran on the general kernel before the M edge); "
             "TFLOP/s (TOP/s for 8-bit), median over the rounds with the range of the per-round medians. Max abs "
             "error: `ops.matmul` at 512^3 against numpy (float64).", "",
             "| kind | n | tiled kernel | tiled kernel, `transpose_b=True` (B K-major) | "
             f"tiled kernel, M = n - {M_EDGE} (M edge) | general kernel | max abs error at 512^3 |",
             "|---|---|---|---|---|---|---|", *rows]
    print("\n".join(lines))
    if args.out:
        from benchmarks._report import replace_section

        replace_section(args.out, "## ops.matmul: tiled and general kernel (H100)", "\n".join(lines))


if __name__ == "__main__":
    main()
