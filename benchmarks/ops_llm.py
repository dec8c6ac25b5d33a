"""The kernels of LLM inference on a GPU, side by side in one run: decode GEMV (coopdsl.ops.gemv), quantized
and f16 prefill products (``ops.linear`` past 16 rows), a plain copy kernel for the bandwidth the device
achieves, and torch.matmul on the dequantized weights when torch (with CUDA) is present.

    python3 benchmarks/ops_llm.py [--m 4096] [--k 14336] [--prefill 512] [--out FILE]

Shapes follow ggml's test-backend-ops perf cases (``MUL_MAT m=4096, n=1|8|512, k=14336``): W is M x K,
x is N x K, y = x W^T.  GPU timestamps, ``--warmup`` untimed dispatches first (the clocks of an idle GPU
need ~150 ms of work to come back, docs/runtime.md), median of ``--repeat``.  Prints markdown tables: the first
times a GEMV call launch by launch (each launch alone, the times added); the second, "GEMV calls back to back",
400 calls in one command buffer, as a decoding loop runs them (the figure docs/benchmarks.md's GEMV tables give).
"""

from __future__ import annotations

import argparse
import importlib
import platform
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._clocks import clocks_up, copy16, copy_grid  # noqa: E402
from benchmarks._gpu import require_gpu  # noqa: E402
from benchmarks._host_cost import host_costs  # noqa: E402
from coopdsl import autotune, ops, runtime  # noqa: E402
from coopdsl.ops import gemm, hot, op_tune  # noqa: E402
from coopdsl.ops import gemv as G  # noqa: E402
from coopdsl.ops.quant import dequantize, quantize  # noqa: E402

LINEAR = importlib.import_module("coopdsl.ops.linear")  # (ops.linear is the function)


def weights(fmt: str, m: int, k: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """(what the kernel reads, the float32 values it stands for)."""
    w = (rng.standard_normal((m, k)) * 0.05).astype(np.float32)
    if fmt == "f16":
        a = w.astype(np.float16)
        return a, a.astype(np.float32)
    if fmt == "bf16":   # bf16 bit patterns (the top half of each f32, rounded to nearest even)
        bits = w.view(np.uint32)
        b = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        return b, (b.astype(np.uint32) << 16).view(np.float32)
    q = quantize(w, fmt)
    return q, dequantize(q, fmt, k)


def torch_ms(w32: np.ndarray, x: np.ndarray, repeat: int) -> float | None:
    """Median ms of torch.matmul(x, W^T) in f16 on the dequantized weights (CUDA events), or None."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    wt = torch.from_numpy(w32).to("cuda", torch.float16)
    xt = torch.from_numpy(x).to("cuda", torch.float16)
    end = time.perf_counter() + 1.0   # a second of calls first: the GPU's clocks (benchmarks/_clocks.py)
    while time.perf_counter() < end:
        for _ in range(10):
            torch.matmul(xt, wt.T)
        torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        torch.matmul(xt, wt.T)
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    return float(np.median(times))


def bench_launches(launches, args) -> float:
    """GPU time of ``launches`` (``ops.gemv.plan``'s): each launch's median, added; they run once first, so that
    each reads what the one before it wrote (the 8-bit activations)."""
    hot.run(launches)
    return sum(k.bench(grid, *a, warmup=args.warmup, repeat=args.repeat, **kw).median_ms for k, grid, a, kw in launches)


def stream_us(launches, dev, calls: int = 400) -> float:
    """GPU time a call when ``calls`` calls of ``launches`` (on resident arrays) run back to back in one
    command buffer, as a decoding loop runs them: the wall time of the submission and its wait, a call."""
    with runtime.batch(dev, flush_every=None) as b:
        for _ in range(calls):
            hot.run(launches)
        t = time.perf_counter()
        b.submit()
        return (time.perf_counter() - t) / calls * 1e6


def overhead(dev, n: int = 200, rounds: int = 5) -> str:
    """Host cost of ops.matmul / ops.linear on resident arrays against the Kernel.launch they make, 1 x 4096 x
    4096 f16 (the decode kernel): wall time per call, each waited for (median of ``rounds`` interleaved
    rounds of ``n`` calls), and the host time per call recorded inside a batch (``n`` calls, flushed every 64)."""
    from coopdsl import ops

    rng = np.random.default_rng(1)
    w = runtime.array(rng.standard_normal((4096, 4096)).astype(np.float16), device=dev)
    x1 = runtime.array(rng.standard_normal((1, 4096)).astype(np.float16), device=dev)
    y1 = runtime.zeros((1, 4096), np.float32, device=dev)
    wv = G.word_view(w, "f16")
    k1 = G.kernel("f16", 1, True)
    grid1 = G.grid(4096, "f16", 1)
    fns = {"Kernel.launch": lambda: k1.launch(grid1, wv, x1, y1, M=4096, K=4096, device=dev),
           "ops.matmul(transpose_b=True)": lambda: ops.matmul(x1, w, out=y1, device=dev, transpose_b=True),
           "ops.linear": lambda: ops.linear(x1, w, out=y1, device=dev)}
    med, medb = host_costs(fns, dev, n, rounds)
    base, baseb = med["Kernel.launch"], medb["Kernel.launch"]
    parts = [f"{name} {med[name]:.1f} us" + ("" if name == "Kernel.launch" else f" (+{med[name] - base:.1f})")
             for name in fns]
    partsb = [f"{name} {medb[name]:.1f} us" + ("" if name == "Kernel.launch" else f" (+{medb[name] - baseb:.1f})")
              for name in fns]
    return (f"host cost, 1 x 4096 x 4096 f16 on resident arrays, median of {rounds} interleaved rounds of {n} calls: "
            f"each waited for: {', '.join(parts)}; recorded in a batch (host time a call): {', '.join(partsb)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--k", type=int, default=14336)
    ap.add_argument("--prefill", type=int, default=512, help="rows of x for the prefill product (0: none)")
    ap.add_argument("--formats", default="f16,q4_0,q8_0,q4_K", help="weight formats (also bf16)")
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--layouts", default="",
                    help="GEMV layouts to time besides the default at 1 and 8 rows of x, e.g. 1:1,2:2 (rows:split)")
    ap.add_argument("--modes", default="f32,pre,inline",
                    help="activations in the --layouts sweep: f32 (as given), pre (8 bits by a first kernel), inline "
                         "(8 bits in the product's kernel)")
    ap.add_argument("--rows", default="1,8", help="rows of x of the GEMV cases")
    ap.add_argument("--tune", action="store_true", help="also tune each GEMV case (gemv(..., tune=True), "
                    "in a fresh autotune cache file) and print the choice and the times")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    dev = require_gpu("ops_llm.py")
    if args.tune:
        import os
        import tempfile

        os.environ["COOPDSL_AUTOTUNE_CACHE"] = str(Path(tempfile.mkdtemp()) / "autotune.json")
    rng = np.random.default_rng(0)
    m, k = args.m, args.k
    lines = [f"`python3 benchmarks/ops_llm.py {' '.join(sys.argv[1:])}` (--m {m} --k {k}) on {dev.info.name}, "
             f"{date.today()} ({platform.node()})", ""]

    # the yardstick: a copy of the f16 weights' bytes
    nbytes = m * k * 2
    src = np.zeros(nbytes // 16 * 4, np.uint32).reshape(-1, 4)
    dst = np.zeros_like(src)
    n16 = src.shape[0]
    grid = copy_grid(n16)
    clocks_up(dev)
    r = copy16.bench(grid, src, dst, n16, device=dev, warmup=max(args.warmup, 2000), repeat=args.repeat)  # (clocks up)
    copy_gbs = 2 * nbytes / (r.median_ms * 1e-3) / 1e9
    lines += [f"copy kernel: {nbytes / 1e6:.0f} MB read + written in {r.median_ms * 1e3:.1f} us = "
              f"{copy_gbs:.0f} GB/s (read + write)", ""]

    lines += ["Up to 16 rows of x, \"coopdsl\" is the GPU time of the call's launches (x's rounding, the product), "
              "each timed on its own (GPU timestamps, median of --repeat) and the times added, so each launch's "
              "fixed cost counts in full; what a decoding loop sees, 400 calls back to back, is the table after "
              "this one.", "",
              "| weights | rows of x | coopdsl | weight GB/s | vs copy | torch.matmul (f16, dequantized) "
              "| coopdsl check |",
              "|---|---|---|---|---|---|---|"]
    layouts = [tuple(int(v) for v in item.split(":")) for item in args.layouts.split(",") if item]
    tune_note = ["| weights | rows of x | picked (way, rows, split) | fastest six, us |", "|---|---|---|---|"]
    stream_note = ["| weights | rows of x | a call, 400 calls in one command buffer | vs copy |", "|---|---|---|---|"]
    sweep = ["| weights | rows of x | rows of W a group | subgroups a group | coopdsl | vs copy | rel. err |",
             "|---|---|---|---|---|---|---|"]
    for fmt in args.formats.split(","):
        w, w32 = weights(fmt, m, k, rng)
        nrows = tuple(int(v) for v in args.rows.split(","))
        for n in (*nrows, args.prefill) if args.prefill else nrows:
            x = (rng.standard_normal((n, k)) * 0.5).astype(np.float32)
            ref = x @ w32.T
            if n <= G.MAX_ROWS_X:
                y = G.gemv(w, x, fmt, device=dev)     # what gemv does by default: timed below, kernel by kernel
                wv = G.word_view(w, fmt)
                clocks_up(dev)
                ms = bench_launches(G.plan(w, x, fmt, device=dev)[0], args)   # what gemv launches by default
                wr, xr, yr = runtime.array(w, device=dev), runtime.array(x, device=dev), \
                    runtime.zeros((n, m), np.float32, device=dev)
                hot.run(G.plan(wr, xr, fmt, out=yr, device=dev)[0])
                if args.tune:   # gemv(..., tune=True): what the device picks, and each candidate's time
                    G.plan(wr, xr, fmt, out=yr, device=dev, tune=True)
                    prob = f"fmt={fmt},nx={n},x=f32,q8=None,m={m},k={k}"
                    rec = op_tune.cache().get(f"ops.gemv|{prob}|{autotune.device_key(dev)}") or {}
                    times = sorted((t, c) for c, t in rec.get("times_ms", {}).items() if t == t)
                    tune_note.append(f"| {fmt} | {n} | {rec.get('way')} | "
                                     + ", ".join(f"{c} {t * 1e3:.1f}" for t, c in times[:6]) + " |")
                    print(tune_note[-1], flush=True)
                clocks_up(dev)
                streamed = stream_us(G.plan(wr, xr, fmt, out=yr, device=dev)[0], dev)
                stream_note.append(f"| {fmt} | {n} | {streamed:.1f} us | "
                                   f"{w.nbytes / (streamed * 1e-6) / 1e9 / copy_gbs:.2f} |")
                way = {"f32": "", "pre": " (x in 8 bits)", "prew": " (x in 8 bits, W as words)",
                       "inline": " (x in 8 bits, inline)", "xregs": " (x in 8 bits, held in registers)",
                       "mma": " (x in f16, cooperative matrices)"}[G.choice(fmt, n, None, m, k, dev)[0]]
                what = f"{ms * 1e3:.1f} us{way}"
                modes = [(False, False)] * ("f32" in args.modes) + \
                    [(True, False)] * (fmt in G.Q8_FORMATS and "pre" in args.modes) + \
                    [(False, True)] * (fmt in G.INLINE_FORMATS and "inline" in args.modes)
                for q8, inline in modes:
                    xq, tq = None, 0.0
                    if q8:   # the activations' quantization (G.quantize_kernel), timed on its own and added
                        blocks = n * k // 32
                        xq = np.empty(blocks * G.Q8_WORDS, np.int32)
                        quantize = (G.quantize_kernel(), (-(-blocks // (G.WG // 8)), 1, 1),
                                    (x.reshape(-1, 4), xq, blocks), {"device": dev})
                        tq = bench_launches([quantize], args)
                    clocks_up(dev)
                    for rows, split, *unroll in [(None, None), *layouts] if n in nrows and (layouts or len(modes) > 1) \
                            else ():
                        yl = np.zeros_like(y)
                        lr, ls = (rows, split) if rows else G.choice(fmt, n, q8 or inline)[1:]
                        kl = G.kernel(fmt, n, rows=lr, split=ls, how="pre" if q8 else "inline" if inline else "f32",
                                      unroll=(unroll or [None])[0])
                        rl = kl.bench(G.grid(m, fmt, n, lr, ls), wv, xq if q8 else x.reshape(-1, 4), yl, M=m,
                                      K=k, device=dev, warmup=args.warmup, repeat=args.repeat)
                        el = float(np.abs(yl - ref).max() / np.abs(ref).max())
                        total = rl.median_ms + tq
                        how = " (x in 8 bits)" if q8 else " (x rounded to 8 bits in the kernel)" if inline else ""
                        how += f" (unroll {unroll[0]})" if unroll else ""
                        sweep.append(f"| {fmt}{how} | {n} | {lr} | {ls} | "
                                     f"{total * 1e3:.1f} us" + (f" ({tq * 1e3:.1f} us quantizing x)" if q8 else "")
                                     + f" | {w.nbytes / (total * 1e-3) / 1e9 / copy_gbs:.2f} | {el:.1e} |")
                        print(sweep[-1], flush=True)
            else:
                # ops.linear past 16 rows (its launches: x padded, mul_mm_cm2 with its tile and split of K, the
                # sum of the slices; ops.matmul's for f16 past 256 rows), back to back on resident arrays
                b = x.astype(np.float16)
                y = ops.linear(b, w, fmt, device=dev)
                br, wr = runtime.array(b, device=dev), runtime.array(w, device=dev)
                yr = runtime.zeros((n, m), np.float32, device=dev)
                ops.linear(br, wr, fmt, out=yr, device=dev)
                mod = gemm if fmt == "f16" and n > LINEAR.FLOAT_MUL_MM_ROWS else LINEAR
                clocks_up(dev)
                ms = G.stream_ms(list(mod._HOT.launches), dev, calls=50)
                what = f"{ms * 1e3:.1f} us ({2 * m * n * k / (ms * 1e-3) / 1e12:.0f} TFLOP/s)"
            err = float(np.abs(y - ref).max() / np.abs(ref).max())
            gbs = w.nbytes / (ms * 1e-3) / 1e9
            t = torch_ms(w32, x, args.repeat)
            tt = "n/a" if t is None else f"{t * 1e3:.1f} us"
            lines.append(f"| {fmt} | {n} | {what} | {gbs:.0f} | {gbs / copy_gbs:.2f} | {tt} | "
                         f"rel. err {err:.1e} |")
            print(lines[-1], flush=True)
    lines += ["", "GEMV calls back to back (`ops.gemv`'s launches on resident arrays, 400 calls recorded in one "
                  "command buffer; the wall time of its submission and wait, a call):", ""] + stream_note
    if args.tune:
        lines += ["", "`gemv(..., tune=True)` on this device (the default's way is 'default'):", ""] + tune_note
    if len(sweep) > 2:
        lines += ["", "GEMV layouts (`--layouts`; the default is ops.gemv.choice(format, rows of x, q8)), x as given, "
                      "quantized to 8 bits per block of 32 first, or rounded to 8 bits in the kernel:", ""] + sweep
    lines += ["", overhead(dev)]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"({time.time() - t0:.0f} s)")
