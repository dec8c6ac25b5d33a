"""coopdsl's best GEMM per type pair on the GPU: tiles chosen by coopdsl.autotune, then timed next to cuBLAS.

    python benchmarks/best_gemm/run.py [--n 8192] [--rounds 5] [--pairs f16-f32 ...] [--values uniform harness]
        [--peer-shaders DIR] [--out benchmarks/notes/gemm-best-per-pair.md]

For each type pair of ``benchmarks/best_gemm/kernel.py`` (the kernel of ``coopdsl/ops/gemm_tiled.py`` and the
configurations to tune it over):

1. ``coopdsl.autotune.Autotuner`` times every configuration of ``CONFIGS[pair]`` on the problem
   (n x n x n, resident arrays) and keeps the fastest in its cache (``--cache``, default a file in the
   system's temporary folder, so that every run tunes afresh; pass the user cache to reuse choices);
2. for each kind of input values (``--values``: uniform random, and the peer harness's few-bit ones, which
   draw less power and so run faster under the H100's power limit), the chosen configuration is checked
   against numpy at ``--check`` (default 2048) cubed and timed in ``--rounds`` rounds; with
   ``--peer-shaders DIR`` the peer's own kernel and coopdsl's port of it are checked and timed in the same
   rounds, on the same inputs, in the peer's best configuration (``benchmarks/best_gemm/peer.py``), so
   that "ours / peer" compares kernels measured one way;
3. the reference (torch.matmul on the same GPU for f16 and bf16 inputs, torch._int_mm for s8; none for u8)
   and, for f16->f32, ``examples/gemm_shared.py`` are timed in rounds of their own;
   each round is ``--warmup`` untimed and ``--repeat`` timed dispatches (GPU timestamps) after
   ``--pause`` seconds of idle GPU, and the tables give the median over all timed dispatches with the
   range of the per-round medians;
4. the driver's register count for the chosen pipeline (``Kernel.statistics``).

B is K-major (N x K) for the 8-bit pairs, row-major (K x N) for the others (see kernel.py).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.best_gemm import peer  # noqa: E402
from benchmarks.best_gemm.kernel import CONFIGS, PAIRS, kernel  # noqa: E402
from benchmarks.best_gemm.sweep import inputs  # noqa: E402

TARGETS = {"f16-f16": 470, "f16-f32": 300, "bf16-f32": 300, "s8-s32": 580, "u8-u32": 580}  # issue 16
PEER_BEST = {"f16-f16": 429, "f16-f32": 203, "bf16-f32": 201, "s8-s32": 528, "u8-u32": 529}  # shmem.comp, issue 16


def _grid(p: dict) -> tuple[int, int, int]:
    return ((p["M"] // p["TILE_M"]) * (p["N"] // p["TILE_N"]), 1, 1)


def _torch_timer(pair: str, n: int):
    """A function timing one round of the torch reference (list of ms), or None where there is none."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available() or pair == "u8-u32":
        return None
    if pair == "s8-s32":
        a = torch.randint(-128, 128, (n, n), dtype=torch.int8, device="cuda")
        b = torch.randint(-128, 128, (n, n), dtype=torch.int8, device="cuda").t()  # K-major, as cuBLASLt wants

        def op():
            return torch._int_mm(a, b)
    else:
        dt = torch.float16 if pair.startswith("f16") else torch.bfloat16
        a = torch.rand(n, n, dtype=dt, device="cuda")
        b = torch.rand(n, n, dtype=dt, device="cuda")

        def op():
            return torch.matmul(a, b)

    def one_round(warmup: int, repeat: int) -> list[float]:
        for _ in range(warmup):
            op()
        times = []
        for _ in range(repeat):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            op()
            e.record()
            torch.cuda.synchronize()
            times.append(s.elapsed_time(e))
        return times

    return one_round


def _summary(rounds: list[list[float]], n: int, flop: float | None = None) -> dict:
    flop = flop or 2.0 * n ** 3
    med = float(np.median([t for r in rounds for t in r]))
    per_round = [flop / (float(np.median(r)) * 1e-3) / 1e12 for r in rounds]
    return {"ms": med, "tflops": flop / (med * 1e-3) / 1e12, "lo": min(per_round), "hi": max(per_round)}


def run_pair(pair: str, args, device) -> dict:
    from coopdsl import runtime
    from coopdsl.autotune import Autotuner, bench_timer

    n = args.n
    rng = np.random.default_rng(0)
    k = kernel(pair)
    b_kmajor = PAIRS[pair][2]
    timer = bench_timer(args.warmup, args.repeat)

    def paused_timer(*a):  # every configuration starts from the same idle GPU (see --pause)
        time.sleep(args.pause)
        return timer(*a)

    def resident(values: str, m: int, reference: bool = False) -> tuple[dict, np.ndarray | None]:
        a, b, d, ref = inputs(pair, m, m, m, rng, values, reference)
        ours = [runtime.array(x, device=device) for x in (a, np.ascontiguousarray(b.T) if b_kmajor else b, d)]
        return {"ours": ours, "peer": peer.arrays(pair, a, b, device) if args.peer_shaders else None}, ref

    tuned, _ = resident(args.values[0], n)
    ra, rb, rd = tuned["ours"]
    tuner = Autotuner(k, CONFIGS[pair], key=["M", "N", "K"], cache=args.cache, timer=paused_timer)
    first, spec0 = tuner.variant(CONFIGS[pair][0])
    first.bench(_grid({"M": n, "N": n, **spec0}), ra, rb, rd, M=n, N=n, K=n, device=device, warmup=300,
                repeat=100, **spec0)  # bring the clocks up (about a second of work) before anything is timed
    best = tuner.best_config(_grid, ra, rb, rd, M=n, N=n, K=n, device=device)
    tuning = {_short(c.values): tuner.last_timings.get(repr(c)) for c in CONFIGS[pair]}
    variant, spec = tuner.variant(best)
    g = _grid({"M": n, "N": n, **spec})
    _free(tuned)

    torch_round = _torch_timer(pair, n)
    control = None
    if pair == "f16-f32":
        from benchmarks.cases import load_example

        control = load_example("gemm_shared.py")["gemm_shared"]
    others = peer.timers(pair, args.peer_shaders, device) if args.peer_shaders else {}
    by_values = {}
    for values in args.values:
        m = args.check  # correctness against numpy, on these inputs, of each kernel timed
        small, ref = resident(values, m, reference=True)
        assert ref is not None
        errors = {}
        for name in ("ours", *others):
            out = small["ours"][2] if name == "ours" else small["peer"]["outputO"]
            out.write(np.zeros(out.shape, out.dtype))
            if name == "ours":
                variant.launch(_grid({"M": m, "N": m, **spec}), *small["ours"], M=m, N=m, K=m, device=device, **spec)
            else:
                others[name](small["peer"], m, 0, 1)
            got = out.numpy().astype(np.float64)
            errors[name] = float(np.abs(got - ref).max() / max(1.0, np.abs(ref).max()))
        _free(small)
        big, _ = resident(values, n)
        ra, rb, rd = big["ours"]
        times: dict[str, list[list[float]]] = {"ours": [], **{name: [] for name in others}}
        for r in range(args.rounds):
            for name in (list(times) if r % 2 == 0 else list(times)[::-1]):
                time.sleep(args.pause)
                if name == "ours":
                    times[name].append(variant.bench(g, ra, rb, rd, M=n, N=n, K=n, device=device,
                                                     warmup=args.warmup, repeat=args.repeat, **spec).times_ms)
                else:
                    times[name].append(others[name](big["peer"], n, args.warmup, args.repeat))
        _free(big)
        by_values[values] = {name: _summary(t, n) for name, t in times.items()} | {"errors": errors}
    theirs, ctl = [], []
    control_arrays = resident("uniform", n)[0] if control is not None else None
    for _ in range(args.rounds if torch_round is not None or control is not None else 0):
        if torch_round is not None:
            time.sleep(args.pause)
            theirs.append(torch_round(args.warmup, args.repeat))
        if control is not None and control_arrays is not None:
            time.sleep(args.pause)
            ctl.append(control.bench((n // 128, n // 128, 1), *control_arrays["ours"], 1.0, 0.0, M=n, N=n, K=n,
                                     device=device, warmup=args.warmup, repeat=args.repeat).times_ms)
    if control_arrays is not None:
        _free(control_arrays)
    stats = {key: v for e in variant.statistics(device=device, M=n, N=n, K=n, **spec)
             for key, v in e["statistics"].items()}
    return {"pair": pair, "config": best.values, "tuning": tuning, "by_values": by_values,
            "torch": _summary(theirs, n) if theirs else None, "gemm_shared": _summary(ctl, n) if ctl else None,
            "statistics": stats}


def _free(arrays: dict) -> None:
    for x in (*arrays["ours"], *(arrays["peer"] or {}).values()):
        x.free()


def _short(c: dict) -> str:
    """A configuration in a few characters: TILE_MxTILE_NxTILE_K/SG_MxSG_N/gGROUP_M/aA_FIRST/sSTAGES/lLN."""
    return (f"{c['TILE_M']}x{c['TILE_N']}x{c['TILE_K']}/{c['SG_M']}x{c['SG_N']}/g{c['GROUP_M']}/a{c['A_FIRST']}"
            f"/s{c['STAGES']}/l{c['LN']}")


def _fmt(s: dict | None) -> str:
    return "-" if s is None else f"{s['tflops']:.1f} ({s['lo']:.1f}..{s['hi']:.1f})"


def report(results: list[dict], args, device) -> list[str]:
    info = device.info
    values = list(args.values)
    lines = [f"Date: {datetime.date.today()}. Machine: {info.name}, driver {info.driver_name} {info.driver_info}.", "",
             f"Command: `python benchmarks/best_gemm/run.py --n {args.n} --rounds {args.rounds} --warmup {args.warmup} "
             f"--repeat {args.repeat} --pause {args.pause} --pairs {' '.join(args.pairs)} "
             f"--values {' '.join(values)}{' --peer-shaders SHADERS' if args.peer_shaders else ''} "
             "--out benchmarks/notes/gemm-best-per-pair.md`"
             + (" (split over device calls, each with --save-raw and its --pairs, tabled with --merge)"
                if getattr(args, "merge", None) else ""), "",
             "The kernel is `coopdsl/ops/gemm_tiled.py` (one source for every type pair); "
             "`coopdsl.autotune.Autotuner` chose each configuration from the `CONFIGS` of "
             f"`benchmarks/best_gemm/kernel.py` on this GPU, on {values[0]} inputs "
             "(every configuration's time is in the last column). TFLOP/s (TOP/s for 8-bit) of the median over "
             f"{args.rounds} interleaved rounds of {args.warmup} untimed and {args.repeat} timed dispatches, each "
             f"after {args.pause} s of idle GPU (so that power capping after the previous kernel does not slow it; "
             "the untimed dispatches bring the clocks back up), with the range of the per-round medians; "
             "n x n x n. Inputs: \"uniform\" floats in [-1, 1); \"harness\" floats from {-0.5, 0, 0.5, 1}, as "
             "vk_cooperative_matrix_perf fills them (they draw less power); integers over their whole range in "
             "both. B is K-major for the 8-bit pairs (as the peer's fastest int8 configurations "
             "and cuBLASLt's int8 GEMM take it), row-major otherwise. \"Peer on its harness\" is issue 16's "
             "figure (vk_cooperative_matrix_perf `shmem.comp`, best configuration, its own harness and inputs); "
             "the reference is torch.matmul (torch._int_mm for s8; torch.rand inputs) on the same GPU in the same "
             "run. Configurations are written TILE_MxTILE_NxTILE_K/SG_MxSG_N/gGROUP_M/aA_FIRST/sSTAGES/lLN. "
             f"Error: max |D - numpy| / max |numpy| of the chosen configuration at {args.check}^3 on "
             f"{values[0]} inputs.", "",
             "| pair | " + " | ".join(f"coopdsl, {v} inputs" for v in values) + " | target | peer on its harness "
             "| reference (cuBLAS) | chosen configuration | registers | error | every configuration tried, ms |",
             "|---|" + "---|" * len(values) + "---|---|---|---|---|---|---|"]
    for r in results:
        c = r["config"]
        chosen = _short(c) + f", WG {c['WG']}"
        regs = next((v for key, v in r["statistics"].items() if "register" in key.lower()), "-")
        tuning = "; ".join(f"{key} {v:.3f}" if isinstance(v, float) else f"{key} {v}"
                           for key, v in r["tuning"].items())
        ours = " | ".join(_fmt(r["by_values"][v]["ours"]) for v in values)
        lines.append(f"| {r['pair']} | {ours} | {TARGETS[r['pair']]} | {PEER_BEST[r['pair']]} | "
                     f"{_fmt(r['torch'])} | {chosen} | {regs} | {r['by_values'][values[0]]['errors']['ours']:.1e} | "
                     f"{tuning} |")
    ctl = next((r["gemm_shared"] for r in results if r["gemm_shared"]), None)
    if ctl:
        lines += ["", f"`examples/gemm_shared.py` (f16->f32, 128x128x32, uniform inputs) in the same run: "
                      f"{_fmt(ctl)}."]
    if args.peer_shaders:
        lines += ["", "The peer's kernel by the same method, on the same inputs, in the same rounds "
                      "(`benchmarks/best_gemm/peer.py`): its glslang module (`shmem<A>_<C>.spv` of its checkout) "
                      "and coopdsl's port of it (`benchmarks/peer_gemm/shmem.py`), each in the peer's best "
                      "configuration for the pair (written lMxlNxlK TILE_MxTILE_NxTILE_K, B row- or "
                      "column-major). Errors as above, at the same size, on the same inputs "
                      "(coopdsl, peer, port).", "",
                  "| pair | inputs | coopdsl | peer's kernel | port | coopdsl / peer | peer configuration | errors |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in results:
            lm, ln, lk, tm, tn, tk, col = peer.PEER[r["pair"]][1]
            for v in values:
                x = r["by_values"][v]
                e = x["errors"]
                lines.append(f"| {r['pair']} | {v} | {_fmt(x['ours'])} | {_fmt(x['peer'])} | {_fmt(x['port'])} | "
                             f"{x['ours']['tflops'] / x['peer']['tflops']:.2f} | {lm}x{ln}x{lk} {tm}x{tn}x{tk} "
                             f"{'column' if col else 'row'}-major B | {e['ours']:.1e}, {e['peer']:.1e}, "
                             f"{e['port']:.1e} |")
    return lines


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=8192)
    p.add_argument("--pairs", nargs="+", default=list(PAIRS), choices=list(PAIRS))
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--warmup", type=int, default=100,
                   help="untimed dispatches after each pause: an idle H100 lowers its clocks, and they take about "
                        "150 ms of work to come back (with 10, up to 13 of 20 timed dispatches ran 4x slower)")
    p.add_argument("--values", nargs="+", default=["uniform", "harness"], choices=["uniform", "harness"],
                   help="input values (benchmarks.cases.gemm_inputs), each timed; the first is tuned on")
    p.add_argument("--peer-shaders", type=Path, default=None,
                   help="the shaders folder of a vk_cooperative_matrix_perf checkout: time the peer's kernel and "
                        "coopdsl's port of it in the same rounds (benchmarks/best_gemm/peer.py)")
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--check", type=int, default=2048)
    p.add_argument("--pause", type=float, default=1.0,
                   help="seconds of idle GPU before each timed round: at 8192^3 these kernels and cuBLAS draw up "
                        "to the H100's 700 W limit and its power capping lowers the clocks of whatever runs next")
    p.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "coopdsl-best-gemm-autotune.json"))
    p.add_argument("--out", default=None)
    p.add_argument("--save-raw", type=Path, help="write the results so far (JSON) to this file after each pair")
    p.add_argument("--merge", type=Path, nargs="+",
                   help="no GPU: table the --save-raw files of runs split over several calls (give the same "
                        "options as those runs, --pairs naming every pair of them)")
    args = p.parse_args(argv)
    if args.merge:
        raws = [json.loads(f.read_text()) for f in args.merge]
        by_pair = {r["pair"]: r for raw in raws for r in raw["results"]}
        device = SimpleNamespace(info=SimpleNamespace(**raws[0]["device"]))
        results = [by_pair[pair] for pair in args.pairs]
    else:
        from benchmarks._gpu import require_gpu

        device = require_gpu("best_gemm/run.py")
        Path(args.cache).unlink(missing_ok=True)
        results = []
        for pair in args.pairs:
            r = run_pair(pair, args, device)
            results.append(r)
            for v, got in r["by_values"].items():
                print(f"{pair}, {v} inputs: " + ", ".join(f"{k} {_fmt(x)}" for k, x in got.items() if k != "errors")
                      + f", errors {got['errors']}", flush=True)
            print(f"{pair}: reference {_fmt(r['torch'])}, config {r['config']}, {r['statistics']}", flush=True)
            if args.save_raw:
                info = {k: getattr(device.info, k) for k in ("name", "driver_name", "driver_info")}
                args.save_raw.write_text(json.dumps({"device": info, "results": results}, indent=1))
    lines = report(results, args, device)
    print("\n".join(lines))
    if args.out:
        from benchmarks._report import replace_section

        replace_section(args.out, "## Best GEMM per type pair (issue 16)", "\n".join(lines))


if __name__ == "__main__":
    main()
