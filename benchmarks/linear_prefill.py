"""Prefill products (more than 16 rows of x) of ``ops.linear`` against its other tile choices, ggml's
tile choice and torch.matmul, in one run.

    python3 benchmarks/linear_prefill.py [--m 4096] [--k 14336] [--rows 32,128,512,2048]
        [--formats f16,q4_0,q8_0,q4_K] [--out FILE]

For each weight format and row count: ``ops.linear``'s launches on resident arrays (x float16), timed as
``--calls`` calls back to back in one command buffer (the wall time of the submission and its wait, a
call); the same ``mul_mm_cm2`` kernel (:mod:`coopdsl.ops.ggml_mul_mm`) with each of ``ops.linear``'s tiles
and ``--splits`` of K, and with the tile and split ggml itself would pick; for f16 weights also
``ops.matmul(..., transpose_b=True)``; and torch.matmul in f16 on the dequantized weights (CUDA events,
median).  Prints a markdown table; TFLOP/s = 2 M N K / time.
"""

from __future__ import annotations

import argparse
import importlib
import platform
import sys
from datetime import date
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._clocks import clocks_up  # noqa: E402
from benchmarks._gpu import require_gpu  # noqa: E402
from benchmarks.ops_llm import torch_ms, weights  # noqa: E402
from coopdsl import ops, runtime  # noqa: E402
from coopdsl.ops import gemm  # noqa: E402
from coopdsl.ops import gemv as G  # noqa: E402
from coopdsl.ops import ggml_mul_mm as MM  # noqa: E402
from coopdsl.ops.device_caps import shader_cores  # noqa: E402
from coopdsl.ops.linear import prefill_launches  # noqa: E402

linear = importlib.import_module("coopdsl.ops.linear")  # (ops.linear is the function)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--k", type=int, default=14336)
    ap.add_argument("--rows", default="32,128,512,2048")
    ap.add_argument("--formats", default="f16,q4_0,q8_0,q4_K")
    ap.add_argument("--splits", default="1,2,3,4", help="splits of K timed with each tile")
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    dev = require_gpu("linear_prefill.py")
    rng = np.random.default_rng(0)
    m, k = args.m, args.k
    lines = [f"`python3 benchmarks/linear_prefill.py --m {m} --k {k} --rows {args.rows}` on {dev.info.name}, "
             f"{date.today()} ({platform.node()})", "",
             "| weights | rows of x | ops.linear | how | fastest other | others (us) | torch.matmul f16 | "
             "linear / torch | rel. err |", "|---|---|---|---|---|---|---|---|---|"]
    for fmt in args.formats.split(","):
        w, w32 = weights(fmt, m, k, rng)
        wr = runtime.array(w, device=dev)
        for n in (int(v) for v in args.rows.split(",")):
            x = (rng.standard_normal((n, k)) * 0.5).astype(np.float16)
            ref = x.astype(np.float32) @ w32.T
            xr = runtime.array(x, device=dev)
            xp = runtime.array(np.pad(x, ((0, -n % 256), (0, 0))), device=dev)
            yr = runtime.zeros((n, m), np.float32, device=dev)
            ops.linear(xr, wr, fmt, out=yr, device=dev)
            err = float(np.abs(yr.numpy() - ref).max() / np.abs(ref).max())
            cands: dict[str, list] = {}
            if fmt == "f16":
                gemm.matmul(xr, wr, out=yr, kind="f16", device=dev, transpose_b=True)
                cands["ops.matmul"] = list(gemm._HOT.launches)
            for tile in linear.TILES:
                for split in (int(v) for v in args.splits.split(",")):
                    if split == 1 or MM.k_slice(k, split) * (split - 1) < k:
                        cands[f"{tile}/{split}"] = prefill_launches(xr, wr, yr, fmt, device=dev, tile=tile,
                                                                    split_k=split)
                        if n % 256:   # x with rows up to a multiple of 256, so that every tile is inside it
                            cands[f"{tile}/{split}p"] = prefill_launches(xp, wr, yr, fmt, device=dev, tile=tile,
                                                                         split_k=split)
            cores = shader_cores(dev)
            gtile = MM.guess_tile(fmt, m, n, cores)        # ggml's own choice, with ggml's tiles
            gsplit = MM.guess_split_k(fmt, m, n, k, gtile, cores)
            cands[f"ggml {gtile}/{gsplit}"] = prefill_launches(
                xr, wr, yr, fmt, device=dev, tile=MM.TILES["quant" if fmt in MM.FORMATS else "float"][gtile],
                split_k=gsplit)
            float_matmul = fmt not in MM.FORMATS and n > linear.FLOAT_MUL_MM_ROWS
            how = "ops.matmul" if float_matmul else "/".join(map(str, linear.prefill_choice(fmt, m, n, k, cores)))
            clocks_up(dev)
            ops.linear(xr, wr, fmt, out=yr, device=dev)
            t_lin = G.stream_ms(list((gemm._HOT if float_matmul else linear._HOT).launches), dev,
                                 calls=args.calls)
            times = {}
            for name, launches in cands.items():
                times[name] = G.stream_ms(launches, dev, calls=args.calls)
            t_torch = torch_ms(w32, x.astype(np.float32), 20)
            others = sorted(times.items(), key=lambda kv: kv[1])
            best = others[0]
            flops = 2 * m * n * k

            def tf(ms: float, flops: int = flops) -> str:
                return f"{ms * 1e3:.1f} us ({flops / (ms * 1e-3) / 1e12:.0f} TFLOP/s)"
            lines.append(f"| {fmt} | {n} | {tf(t_lin)} | {how} | {best[0]}: {tf(best[1])} | "
                         + ", ".join(f"{c} {t * 1e3:.0f}" for c, t in others) + " | "
                         + ("n/a" if t_torch is None else tf(t_torch)) + " | "
                         + ("" if t_torch is None else f"{t_torch / t_lin:.2f}") + f" | {err:.1e} |")
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
