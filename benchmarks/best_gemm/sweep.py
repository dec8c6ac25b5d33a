"""Time benchmarks/best_gemm/kernel.py over tile configurations for every type pair (exploration).

    python benchmarks/best_gemm/sweep.py --n 8192 --pairs f16-f32 bf16-f32 [--check 512] [--device cpu]

Prints one line per (pair, variant, configuration) with the median TFLOP/s over interleaved rounds.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.best_gemm.kernel import grid, make  # noqa: E402
from benchmarks.cases import to_bf16_bits  # noqa: E402
from coopdsl import bf16, f16, f32, i8, i32, u8, u32  # noqa: E402

PAIRS = {"f16-f16": (f16, f16), "f16-f32": (f16, f32), "bf16-f32": (bf16, f32),
         "s8-s32": (i8, i32), "u8-u32": (u8, u32)}


def inputs(pair: str, M: int, N: int, K: int, rng):
    """(a, b as the kernel reads them, d, reference as float64)."""
    a_t, c_t = PAIRS[pair]
    if a_t in (i8, u8):
        lo, hi, dt = (-128, 128, np.int8) if a_t is i8 else (0, 256, np.uint8)
        a = rng.integers(lo, hi, (M, K)).astype(dt)
        b = rng.integers(lo, hi, (K, N)).astype(dt)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        d = np.zeros((M, N), np.int32 if a_t is i8 else np.uint32)
        return a, b, d, ref
    a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    if a_t is bf16:
        ab, bb = to_bf16_bits(a), to_bf16_bits(b)
        af = (ab.astype(np.uint32) << 16).view(np.float32)
        bf = (bb.astype(np.uint32) << 16).view(np.float32)
        ref = af.astype(np.float64) @ bf.astype(np.float64)
        a, b = ab, bb
    else:
        a, b = a.astype(np.float16), b.astype(np.float16)
        ref = a.astype(np.float64) @ b.astype(np.float64)
    d = np.zeros((M, N), np.float16 if c_t is f16 else np.float32)
    return a, b, d, ref


def configs(pair: str) -> list[dict]:
    """Candidate tile configurations for one pair."""
    int8 = pair in ("s8-s32", "u8-u32")
    f16acc = pair == "f16-f16"
    out = []
    shapes = [(128, 128, 64, 64), (128, 256, 64, 64), (256, 128, 64, 64), (128, 128, 32, 64), (128, 128, 64, 32)]
    if f16acc or int8:  # half the accumulator registers: larger subgroup blocks fit
        shapes += [(256, 128, 128, 64), (256, 256, 128, 64), (128, 256, 64, 128), (128, 128, 128, 64)]
    for tm, tn, sgm, sgn in shapes:
        wg = 32 * (tm // sgm) * (tn // sgn)
        for tk in ((64, 128) if int8 else (32, 64)):
            out.append(dict(TILE_M=tm, TILE_N=tn, TILE_K=tk, SG_M=sgm, SG_N=sgn, WG=wg))
    return out


def fits(cfg: dict, a_t, stages: int) -> bool:
    epv = 16 // a_t.nbytes
    a_vec = cfg["TILE_M"] * (cfg["TILE_K"] // epv + 1)
    b_vec = cfg["TILE_K"] * (cfg["TILE_N"] // epv + 1)
    loads = (cfg["TILE_M"] * cfg["TILE_K"] + cfg["TILE_K"] * cfg["TILE_N"]) // epv / cfg["WG"]
    return stages * (a_vec + b_vec) * 16 <= 49152 and loads <= 16 and cfg["WG"] <= 1024


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=8192)
    p.add_argument("--pairs", nargs="+", default=list(PAIRS))
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--check", type=int, default=0, help="also check each kernel at this size against numpy")
    p.add_argument("--device", default=None)
    p.add_argument("--group", type=int, nargs="+", default=[8])
    p.add_argument("--variants", default="1F,2F,2T")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    if args.device == "cpu":
        device = "cpu"
    else:
        from benchmarks._gpu import require_gpu
        device = require_gpu("sweep.py")
    rng = np.random.default_rng(0)
    results = []
    for pair in args.pairs:
        a_t, c_t = PAIRS[pair]
        n = args.n
        a, b, d, _ = inputs(pair, n, n, n, rng)
        todo = []
        for v in args.variants.split(","):
            stages, a_first, colmajor = int(v[0]), v[1] == "T", v.endswith("C")
            k = make(a_t, c_t, stages, a_first, colmajor)
            for cfg, g in itertools.product(configs(pair), args.group):
                if fits(cfg, a_t, stages):
                    todo.append((v, k, {**cfg, "GROUP_M": g}))
        if args.check:
            m = args.check
            ca, cb, cdd, ref = inputs(pair, m, m, m, rng)
            for v, k, cfg in todo:
                cdd[...] = 0
                k.launch(grid(m, m, cfg["TILE_M"], cfg["TILE_N"]), ca, np.ascontiguousarray(cb.T) if v.endswith("C") else cb, cdd, M=m, N=m, K=m, device=device, **cfg)
                err = np.abs(cdd.astype(np.float64) - ref).max() / max(1.0, np.abs(ref).max())
                bad = err > (0 if c_t.kind == "int" else (1e-2 if c_t is f16 else 1e-4))
                print(f"check {pair} {v} {cfg} rel_err {err:.2e} {'FAIL' if bad else 'ok'}", flush=True)
        if device == "cpu":
            continue
        from coopdsl import runtime
        ra, rb, rd = runtime.array(a, device=device), runtime.array(b, device=device), runtime.array(d, device=device)
        rbt = runtime.array(np.ascontiguousarray(b.T), device=device)
        if pair == "f16-f32":  # the example kernel, as a control
            from benchmarks.cases import load_example
            ctl = load_example("gemm_shared.py")["gemm_shared"]
            todo.append(("gemm_shared", ctl, {}))

        def bench(v, k, cfg, warmup, repeat):
            if v == "gemm_shared":
                return k.bench((n // 128, n // 128, 1), ra, rb, rd, 1.0, 0.0, M=n, N=n, K=n, device=device,
                               warmup=warmup, repeat=repeat, flops=2.0 * n ** 3)
            return k.bench(grid(n, n, cfg["TILE_M"], cfg["TILE_N"]), ra, rbt if v.endswith("C") else rb, rd, M=n, N=n, K=n, device=device,
                           warmup=warmup, repeat=repeat, flops=2.0 * n ** 3, **cfg)

        bench(*todo[0], warmup=100, repeat=100)  # bring the clocks up before anything is timed
        times: dict = {}
        for _ in range(args.rounds):
            for v, k, cfg in todo:
                key = (v, json.dumps(cfg))
                try:
                    times.setdefault(key, []).extend(bench(v, k, cfg, args.warmup, args.repeat).times_ms)
                except Exception as e:  # a configuration the device cannot run
                    times[key] = str(e)[:100]
        for x in (ra, rb, rbt, rd):
            x.free()
        for (v, cfgs), ts in times.items():
            if isinstance(ts, str):
                print(f"{pair} {v} {cfgs} ERROR {ts}", flush=True)
                continue
            med = float(np.median(ts))
            tf = 2.0 * n ** 3 / (med * 1e-3) / 1e12
            results.append(dict(pair=pair, variant=v, cfg=json.loads(cfgs), ms=med, tflops=tf,
                                lo=min(ts), hi=max(ts)))
            print(f"{pair} {v} {cfgs} {med:.3f} ms {tf:.1f}", flush=True)
        best = max((r for r in results if r["pair"] == pair), key=lambda r: r["tflops"], default=None)
        print(f"BEST {pair}: {best}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
