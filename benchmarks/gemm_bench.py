"""GEMM throughput of the example kernels on the GPU, next to torch.matmul.

    python benchmarks/gemm_bench.py [--sizes 4096 8192] [--out benchmarks/notes/gemm-example-kernels.md]
    python benchmarks/gemm_bench.py --statistics [--sizes 8192] [--out benchmarks/notes/gemm-example-kernels.md]

Each kernel is timed with GPU timestamps (warm-up, then repeats; median and
spread), interleaving kernels across rounds so clock ramps hit all of them.
TFLOP/s = 2*M*N*K / median time.  torch.matmul (cuBLAS) is timed with CUDA
events on the same GPU when torch is importable.  ``--statistics`` times nothing: it lists what the
driver compiled for each kernel at the first size (``Kernel.statistics``: registers per invocation,
shared memory, binary size).
"""

from __future__ import annotations

import argparse
import datetime
import platform
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._gpu import require_gpu  # noqa: E402
from benchmarks.cases import load_example  # noqa: E402

# name -> (example file, kernel name, A dtype, B dtype, C dtype, tile of C per workgroup, extra kwargs)
KERNELS = {
    "gemm_khr (f16->f32, 1 subgroup, 16x16 tile)": ("gemm_khr.py", "gemm", np.float16, np.float32, (16, 16), {}),
    "gemm_shared (f16->f32, 128x128x32 tile, 4 subgroups)": (
        "gemm_shared.py", "gemm_shared", np.float16, np.float32, (128, 128), {"alpha": 1.0, "beta": 0.0}),
    "gemm_shared (f16->f32, 128x256x32 tile, 8 subgroups)": (
        "gemm_shared.py", "gemm_shared", np.float16, np.float32, (128, 256),
        {"alpha": 1.0, "beta": 0.0, "TILE_N": 256, "WG": 256}),
    "gemm_shared (f16->f32, 128x128x32 tile, 8 subgroups of 32x64)": (
        "gemm_shared.py", "gemm_shared", np.float16, np.float32, (128, 128),
        {"alpha": 1.0, "beta": 0.0, "SG_M": 32, "WG": 256}),
    "gemm_workgroup (f16->f32, workgroup scope, 128x128x32 tile, 256 invocations)": (
        "gemm_workgroup.py", "gemm_wg", np.float16, np.float32, (128, 128), {"alpha": 1.0, "beta": 0.0}),
    "gemm_workgroup (f16->f16, workgroup scope, 128x128x32 tile, 256 invocations)": (
        "gemm_workgroup.py", "gemm_wg_f16", np.float16, np.float16, (128, 128), {"alpha": 1.0, "beta": 0.0}),
    "gemm_workgroup (f16->f32, workgroup scope, 256x128x32 tile, 256 invocations)": (
        "gemm_workgroup.py", "gemm_wg", np.float16, np.float32, (256, 128),
        {"alpha": 1.0, "beta": 0.0, "BM": 256}),
}


def bench_kernel(entry, n, device, warmup, repeat):
    file, name, ab, cdt, (tm, tn), extra = entry
    k = load_example(file)[name]
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (n, n)).astype(ab)
    b = rng.uniform(-1, 1, (n, n)).astype(ab)
    c = np.zeros((n, n), cdt)
    return k.bench((n // tn, n // tm, 1), a, b, c, M=n, N=n, K=n, device=device, warmup=warmup,
                   repeat=repeat, flops=2.0 * n ** 3, **extra)


def kernel_statistics(entry, n, device) -> dict:
    """The driver's statistics for one KERNELS entry specialized for n x n x n (all executables merged)."""
    file, name, _, _, _, extra = entry
    k = load_example(file)[name]
    spec_names = {s["name"] for s in k.reflect()["spec_constants"]}
    spec = {key: v for key, v in {**extra, "M": n, "N": n, "K": n}.items() if key in spec_names}
    return {key: v for e in k.statistics(device=device, **spec) for key, v in e["statistics"].items()}


def statistics_table(device, n: int) -> list[str]:
    """A markdown table of kernel_statistics for every KERNELS entry."""
    stats = {label: kernel_statistics(entry, n, device) for label, entry in KERNELS.items()}
    names = list(dict.fromkeys(key for s in stats.values() for key in s))
    lines = ["| kernel | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for label, s in stats.items():
        lines.append(f"| {label} | " + " | ".join(str(s.get(key, "")) for key in names) + " |")
    return lines


def bench_torch(n, dtype_name):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    dt = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype_name]
    a = torch.rand(n, n, dtype=dt, device="cuda")
    b = torch.rand(n, n, dtype=dt, device="cuda")
    for _ in range(5):
        torch.matmul(a, b)
    times = []
    for _ in range(20):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        torch.matmul(a, b)
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    med = float(np.median(times))
    return med, 2.0 * n ** 3 / (med * 1e-3) / 1e12


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", type=int, nargs="+", default=[4096, 8192])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--out", default=None)
    p.add_argument("--statistics", action="store_true", help="list the driver's statistics instead of timing")
    args = p.parse_args(argv)
    device = require_gpu("gemm_bench.py")
    info = device.info
    if args.statistics:
        n = args.sizes[0]
        lines = statistics_table(device, n)
        print("\n".join(lines))
        if args.out:
            from benchmarks._report import replace_section

            head = [f"Date: {datetime.date.today()}. Machine: {info.name}, driver {info.driver_name} "
                    f"{info.driver_info}.", "",
                    f"Command: `python benchmarks/gemm_bench.py --statistics --sizes {n} --out {args.out}`", "",
                    "What the driver reports for each kernel of the throughput table "
                    f"(VK_KHR_pipeline_executable_properties, `Kernel.statistics`), specialized for {n}^3.", ""]
            replace_section(args.out, "## GEMM kernels: what the driver compiled", "\n".join(head + lines))
        return
    rows = []
    for n in args.sizes:
        results = {label: [] for label in KERNELS}
        for _ in range(args.rounds):  # interleave kernels so clock changes hit all of them
            for label, entry in KERNELS.items():
                results[label].append(bench_kernel(entry, n, device, args.warmup, args.repeat))
        for label, rs in results.items():
            times = [t for r in rs for t in r.times_ms]
            med = float(np.median(times))
            tf = 2.0 * n ** 3 / (med * 1e-3) / 1e12
            rows.append((label, n, med, min(times), max(times), tf))
            print(f"{label:62s} {n:6d} median {med:9.3f} ms  {tf:7.1f} TFLOP/s", flush=True)
        t = bench_torch(n, "f16")
        if t:
            rows.append(("torch.matmul f16 (cuBLAS, reference)", n, t[0], None, None, t[1]))
            print(f"{'torch.matmul f16':62s} {n:6d} median {t[0]:9.3f} ms  {t[1]:7.1f} TFLOP/s", flush=True)
    if args.out:
        lines = [f"Date: {datetime.date.today()}. Machine: {info.name}, driver {info.driver_name} {info.driver_info}; "
                 f"host {platform.node()}", "",
                 "Command: `python benchmarks/gemm_bench.py --sizes " + " ".join(map(str, args.sizes))
                 + f" --rounds {args.rounds} --warmup {args.warmup} --repeat {args.repeat}`", "",
                 f"Each kernel: {args.rounds} interleaved rounds of {args.warmup} warm-up + {args.repeat} timed "
                 "dispatches, GPU timestamps around each dispatch; median/min/max over all timed dispatches. "
                 "A = B = uniform random f16 in [-1, 1], f32 accumulate, M = N = K.", "",
                 "| kernel | M=N=K | median ms | min ms | max ms | TFLOP/s |", "|---|---|---|---|---|---|"]
        for label, n, med, lo, hi, tf in rows:
            lines.append(f"| {label} | {n} | {med:.3f} | {'' if lo is None else f'{lo:.3f}'} | "
                         f"{'' if hi is None else f'{hi:.3f}'} | {tf:.1f} |")
        from benchmarks._report import replace_section

        replace_section(args.out, "## GEMM throughput: coopdsl's example kernels", "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
