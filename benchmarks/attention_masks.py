"""Prefill with and without a mask, launch by launch, at aligned and odd lengths (one process).

    python3 benchmarks/attention_masks.py [--lengths 777,1000,1024] [--heads 32] [--d 128] [--repeat 20]
                                          [--masks none,causal,head-f32,head-f16,shared-f32,shared-f16]
                                          [--causal-end on|off] [--causal-in-kernel on|off]
                                          [--window 128] [--window-in-kernel on|off]
                                          [--dry-run] [--out FILE]

For each length S and mask: ``ops.attention`` of Hq = Hkv = ``--heads`` heads, S x S, D ``--d``, f16 resident Q/K/V,
f32 output, called once (it builds and caches what it caches: a window's mask and its mask_opt bits), then again inside
``attention_nv2.recording()``; each launch of that second call is timed with GPU timestamps (``warm_median_ms``:
the clocks brought up, then ``--repeat`` timed dispatches after a warm-up) and printed with its kernel's name, with
torch SDPA's time for the same call where torch and CUDA are present (a float additive mask; ``is_causal`` for
causal). Masks: "none"; "causal"; an additive per-head ALiBi mask (slopes 2^(-8 h / H), distance |i - j|) given
resident as f32 ("head-f32") or f16 ("head-f16"); the first head's alone, shared by every head ("shared-f32",
"shared-f16"); causal with a sliding window of ``--window`` keys ("window"; torch gets it as a float mask).
``--causal-end``, ``--causal-in-kernel`` and ``--window-in-kernel`` set attention_nv2's switches of those names
for the process, to time each way.  The question it answers (benchmarks/notes/attention-masks-h200-2026-11-29.md): how much of a masked
call is ``build_mask``, ``fa_mask_opt`` and the masked kernel, and whether that depends on S being a multiple of 8.
Needs a GPU that runs ``ops.attention``'s prefill kernels.
"""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MASKS = ("none", "causal", "head-f32", "head-f16", "shared-f32", "shared-f16", "window")


def alibi(heads: int, s: int) -> np.ndarray:
    """(heads, s, s) f32: -slope_h * |i - j|, slope_h = 2^(-8 (h + 1) / heads)."""
    slopes = 2.0 ** (-8.0 * np.arange(1, heads + 1) / heads)
    dist = np.abs(np.arange(s)[:, None] - np.arange(s)[None, :])
    return (-slopes[:, None, None] * dist[None]).astype(np.float32)


def mask_args(kind: str, heads: int, s: int, window: int = 128) -> tuple[dict, np.ndarray | None, bool]:
    """(ops.attention keywords other than the mask, the mask as numpy or None, causal) for a mask kind."""
    if kind == "none":
        return {}, None, False
    if kind == "causal":
        return {"causal": True}, None, True
    if kind == "window":
        return {"causal": True, "window": window}, None, True
    m = alibi(heads, s)
    if kind.startswith("shared"):
        m = m[0]
    return {}, m.astype(np.float16) if kind.endswith("f16") else m, False


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="777,1000,1024")
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--masks", default=",".join(MASKS))
    ap.add_argument("--mask-opt-block-size", type=int, default=None,
                    help="invocations of a fa_mask_opt workgroup (default: attention_nv2.MASK_OPT_BLOCK_SIZE)")
    ap.add_argument("--causal-end", choices=("on", "off"), default=None,
                    help="causal tiles end their loop at the diagonal, or visit and skip the blocks past it "
                         "(default: attention_nv2.CAUSAL_END, on)")
    ap.add_argument("--window", type=int, default=128, help='the "window" mask\'s keys (causal; default 128)')
    ap.add_argument("--window-in-kernel", choices=("on", "off"), default=None,
                    help="a causal window computed by the kernel, or built and read "
                         "(default: attention_nv2.WINDOW_IN_KERNEL, off)")
    ap.add_argument("--causal-in-kernel", choices=("on", "off"), default=None,
                    help="a causal mask alone computed by the kernel, or built and read as ggml's callers give it "
                         "(default: attention_nv2.CAUSAL_IN_KERNEL, on)")
    ap.add_argument("--dry-run", action="store_true", help="list the cases, time nothing")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    args.lengths = [int(x) for x in args.lengths.split(",")]
    args.masks = args.masks.split(",")
    for m in args.masks:
        if m not in MASKS:
            ap.error(f"--masks: {m!r} is not one of {', '.join(MASKS)}")
    return args


def window_mask(s: int, window: int) -> np.ndarray:
    """(s, s) f32 additive mask of a causal sliding window (what torch SDPA is given for "window")."""
    i, j = np.arange(s)[:, None], np.arange(s)[None, :]
    return np.where((j <= i) & (j > i - window), 0.0, -np.inf).astype(np.float32)


def torch_ms(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None, causal: bool,
             repeat: int) -> float | None:
    """Median ms of torch SDPA on the same call (CUDA events), or None without torch and CUDA."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    qt, kt, vt = (torch.from_numpy(x).to("cuda")[None] for x in (q, k, v))
    kw: dict = {"is_causal": causal}
    if mask is not None:
        kw["attn_mask"] = torch.from_numpy(mask.astype(np.float32)).to("cuda").to(qt.dtype)
    for _ in range(20):
        F.scaled_dot_product_attention(qt, kt, vt, **kw)
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        F.scaled_dot_product_attention(qt, kt, vt, **kw)
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    return float(np.median(times))


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    if args.dry_run:
        for s in args.lengths:
            for m in args.masks:
                print(f"{args.heads}/{args.heads} heads, {s} tokens, D {args.d}: {m}")
        return
    from benchmarks._clocks import warm_median_ms
    from benchmarks._gpu import require_gpu
    from coopdsl import ops, runtime
    from coopdsl.ops import attention_nv2 as nv2

    dev = require_gpu("attention_masks.py")
    if args.mask_opt_block_size is not None:
        nv2.MASK_OPT_BLOCK_SIZE = args.mask_opt_block_size
    if args.causal_end is not None:
        nv2.CAUSAL_END = args.causal_end == "on"
    if args.causal_in_kernel is not None:
        nv2.CAUSAL_IN_KERNEL = args.causal_in_kernel == "on"
    if args.window_in_kernel is not None:
        nv2.WINDOW_IN_KERNEL = args.window_in_kernel == "on"
    rng = np.random.default_rng(0)
    lines = [f"`python3 benchmarks/attention_masks.py {' '.join(sys.argv[1:] if argv is None else argv)}` on "
             f"{dev.info.name}, {date.today()}; GPU us of each launch of the second call", "",
             "| tokens | mask | launches | sum | torch SDPA |", "|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for s in args.lengths:
        q, k, v = (rng.standard_normal((args.heads, s, args.d)).astype(np.float16) for _ in range(3))
        dq, dk, dv = (runtime.array(x, device=dev) for x in (q, k, v))
        out = runtime.zeros((args.heads, s, args.d), np.float32, device=dev)
        for kind in args.masks:
            kw, mask, causal = mask_args(kind, args.heads, s, args.window)
            if mask is not None:
                kw["mask"] = runtime.array(mask, device=dev)
            ops.attention(dq, dk, dv, out=out, **kw)
            with nv2.recording() as launches:
                ops.attention(dq, dk, dv, out=out, **kw)
            parts = [(kern.name, warm_median_ms(dev, kern, grid, a, kwa, args.repeat) * 1e3)
                     for kern, grid, a, kwa in launches]
            if kind == "window":
                t = torch_ms(q, k, v, window_mask(s, args.window), False, args.repeat)
            else:
                t = torch_ms(q, k, v, mask, causal, args.repeat)
            lines.append(f"| {s} | {kind} | {' + '.join(f'{n} {us:.0f}' for n, us in parts)} | "
                         f"{sum(us for _, us in parts):.0f} | {'' if t is None else f'{t * 1e3:.0f}'} |")
            print(lines[-1], flush=True)
        for x in (dq, dk, dv, out):
            x.free()
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
