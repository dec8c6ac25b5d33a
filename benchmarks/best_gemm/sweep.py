"""The wide search behind ``kernel.CONFIGS``: time kernel.py over many tile configurations and code shapes.

    python benchmarks/best_gemm/sweep.py --n 8192 --pairs f16-f32 s8-s32 [--variants 1T,1F,2T,1TC]
        [--group 1 8] [--rounds 2] [--check 512] [--json out.json] [--device cpu]

A variant is STAGES (1 or 2), then T or F for A_FIRST, then C for a K-major B (``make(..., b_kmajor=True)``)
and 8 for 16 x 8 accumulator tiles (LN=8).
Every (variant, configuration, GROUP_M) that fits 48 KiB of shared memory is timed in ``--rounds``
interleaved rounds on resident arrays (after about a second of warm-up work), and one line is printed
per point: median ms and TFLOP/s, then the best per pair. ``--check M`` first runs every point at
M x M x M against numpy (with ``--device cpu``, on the interpreter, and nothing is timed). For f16->f32
``examples/gemm_shared.py`` is timed in the same rounds as a control. ``run.py`` is the benchmark; this
is the exploration it started from.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.best_gemm.kernel import PAIRS, SHARED_LIMIT, grid, make, shared_bytes  # noqa: E402
from benchmarks.cases import gemm_inputs  # noqa: E402
from coopdsl import bf16, f16, i8, u8  # noqa: E402

KIND = {f16: "f16", bf16: "bf16", i8: "i8", u8: "u8"}  # A/B component type -> benchmarks.cases input kind
D_DTYPE = {"f16-f16": np.float16, "f16-f32": np.float32, "bf16-f32": np.float32, "s8-s32": np.int32,
           "u8-u32": np.uint32}


def inputs(pair: str, M: int, N: int, K: int, rng, values: str = "uniform", reference: bool = True
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """(A, B as the kernel reads them with B row-major K x N, D zeroed, A x B in float64); ``values`` and
    ``reference`` as in ``benchmarks.cases.gemm_inputs``."""
    a, b, ref = gemm_inputs(KIND[PAIRS[pair][0]], M, N, K, rng, values=values, reference=reference)
    return a, b, np.zeros((M, N), D_DTYPE[pair]), ref


def configs(pair: str) -> list[dict]:
    """Candidate tile configurations (without GROUP_M) for one pair."""
    int8 = pair in ("s8-s32", "u8-u32")
    f16acc = pair == "f16-f16"
    shapes = [(128, 128, 64, 64), (128, 256, 64, 64), (256, 128, 64, 64), (128, 128, 32, 64), (128, 128, 64, 32)]
    if f16acc or int8:  # half the accumulator registers: larger subgroup blocks fit
        shapes += [(256, 128, 128, 64), (256, 256, 128, 64), (128, 256, 64, 128), (128, 128, 128, 64)]
    if f16acc:
        shapes += [(256, 256, 64, 64), (256, 256, 64, 128)]
    out = []
    for tm, tn, sgm, sgn in shapes:
        for tk in ((64, 128) if int8 else (16, 32, 64) if f16acc else (32, 64)):
            out.append(dict(TILE_M=tm, TILE_N=tn, TILE_K=tk, SG_M=sgm, SG_N=sgn, WG=32 * (tm // sgm) * (tn // sgn)))
    return out


def fits(cfg: dict, a_t, stages: int, b_kmajor: bool) -> bool:
    """Within the shared-memory limit, at most 16 prefetched vectors per invocation, at most 1024 invocations."""
    epv = 16 // a_t.nbytes
    loads = (cfg["TILE_M"] * cfg["TILE_K"] + cfg["TILE_K"] * cfg["TILE_N"]) // epv / cfg["WG"]
    return shared_bytes(a_t, {**cfg, "STAGES": stages}, b_kmajor) <= SHARED_LIMIT and loads <= 16 \
        and cfg["WG"] <= 1024


def points(pair: str, variants: list[str], groups: list[int]) -> list[tuple[str, object, dict]]:
    """(variant, kernel, launch values) for every point of the search that fits."""
    a_t, c_t, _ = PAIRS[pair]
    out = []
    for v in variants:
        stages, a_first, kmajor, ln = int(v[0]), int(v[1] == "T"), "C" in v[2:], 8 if "8" in v[2:] else 16
        if not kmajor and ln % (16 // a_t.nbytes):
            continue  # a row-major B fragment must start on a 128-bit vector (8 8-bit columns do not)
        k = make(a_t, c_t, kmajor).specialize(STAGES=stages, A_FIRST=a_first, LN=ln)
        for cfg, g in itertools.product(configs(pair), groups):
            if fits(cfg, a_t, stages, kmajor):
                out.append((v, k, {**cfg, "GROUP_M": g}))
    return out


def bench(v: str, k, cfg: dict, n: int, arrays: dict, device, warmup: int, repeat: int) -> list[float]:
    """One round of one point: the timed dispatches' milliseconds."""
    if v == "gemm_shared":
        r = k.bench((n // 128, n // 128, 1), arrays["a"], arrays["b"], arrays["d"], 1.0, 0.0, M=n, N=n, K=n,
                    device=device, warmup=warmup, repeat=repeat)
    else:
        r = k.bench(grid(n, n, cfg["TILE_M"], cfg["TILE_N"]), arrays["a"], arrays["bt" if "C" in v[2:] else "b"],
                    arrays["d"], M=n, N=n, K=n, device=device, warmup=warmup, repeat=repeat, **cfg)
    return r.times_ms


def check(pair: str, todo: list, m: int, rng, device) -> None:
    """Run every point at m x m x m and compare with numpy."""
    c_t = PAIRS[pair][1]
    a, b, d, ref = inputs(pair, m, m, m, rng)
    for v, k, cfg in todo:
        d[...] = 0
        k.launch(grid(m, m, cfg["TILE_M"], cfg["TILE_N"]), a, np.ascontiguousarray(b.T) if "C" in v[2:] else b,
                 d, M=m, N=m, K=m, device=device, **cfg)
        err = np.abs(d.astype(np.float64) - ref).max() / max(1.0, np.abs(ref).max())
        bad = err > (0 if c_t.kind == "int" else (1e-2 if c_t is f16 else 1e-4))
        print(f"check {pair} {v} {cfg} rel_err {err:.2e} {'FAIL' if bad else 'ok'}", flush=True)


def time_pair(pair: str, todo: list, args, rng, device) -> list[dict]:
    """Time every point of one pair in interleaved rounds; one result dict per point that ran."""
    from coopdsl import runtime

    n = args.n
    a, b, d, _ = inputs(pair, n, n, n, rng, reference=False)
    arrays = {"a": runtime.array(a, device=device), "b": runtime.array(b, device=device),
              "bt": runtime.array(np.ascontiguousarray(b.T), device=device), "d": runtime.array(d, device=device)}
    if pair == "f16-f32":  # the example kernel, as a control
        from benchmarks.cases import load_example

        todo = todo + [("gemm_shared", load_example("gemm_shared.py")["gemm_shared"], {})]
    bench(*todo[0], n, arrays, device, warmup=300, repeat=100)  # bring the clocks up before anything is timed
    times: dict = {}
    for _ in range(args.rounds):
        for v, k, cfg in todo:
            key = (v, json.dumps(cfg))
            if isinstance(times.get(key), str):
                continue  # it failed in an earlier round
            try:
                times.setdefault(key, []).extend(bench(v, k, cfg, n, arrays, device, args.warmup, args.repeat))
            except Exception as e:  # a configuration the device cannot run (a tile shape it does not offer)
                times[key] = str(e)[:200]
    for x in arrays.values():
        x.free()
    results = []
    for (v, cfgs), ts in times.items():
        if isinstance(ts, str):
            print(f"{pair} {v} {cfgs} ERROR {ts}", flush=True)
            continue
        med = float(np.median(ts))
        tf = 2.0 * n ** 3 / (med * 1e-3) / 1e12
        regs = ""
        if args.stats and v != "gemm_shared":
            k = next(k for vv, k, c in todo if vv == v and json.dumps(c) == cfgs)
            st = {key: val for e in k.statistics(device=device, M=n, N=n, K=n, **json.loads(cfgs))
                  for key, val in e["statistics"].items()}
            regs = f" registers {st.get('Register Count')}"
        results.append(dict(pair=pair, variant=v, cfg=json.loads(cfgs), ms=med, tflops=tf, lo=min(ts), hi=max(ts),
                            registers=regs.strip()))
        print(f"{pair} {v} {cfgs} {med:.3f} ms {tf:.1f}{regs}", flush=True)
    return results


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=8192)
    p.add_argument("--pairs", nargs="+", default=list(PAIRS), choices=list(PAIRS))
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--check", type=int, default=0, help="also check each point at this size against numpy")
    p.add_argument("--device", default=None, help="'cpu': check on the interpreter only")
    p.add_argument("--group", type=int, nargs="+", default=[8])
    p.add_argument("--variants", default="1T,1F,2T")
    p.add_argument("--json", default=None)
    p.add_argument("--stats", action="store_true", help="print the driver's register count of every point")
    p.add_argument("--only", default=None, help="keep the points whose configuration JSON contains this text")
    args = p.parse_args(argv)
    if args.device == "cpu":
        device = "cpu"
    else:
        from benchmarks._gpu import require_gpu

        device = require_gpu("sweep.py")
    rng = np.random.default_rng(0)
    results: list[dict] = []
    for pair in args.pairs:
        todo = points(pair, args.variants.split(","), args.group)
        if args.only:
            todo = [t for t in todo if all(o in json.dumps(t[2]) for o in args.only.split("&"))]
        if args.check:
            check(pair, todo, args.check, rng, device)
        if device != "cpu":
            ran = time_pair(pair, todo, args, rng, device)
            results += ran
            print(f"BEST {pair}: {max(ran, key=lambda r: r['tflops'], default=None)}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
