"""ops.attention against torch.nn.functional.scaled_dot_product_attention on the same GPU, in one run.

    python3 benchmarks/attention_bench.py [--acc f32,f16] [--repeat 30] [--warmup-ms 200] [--shapes 0,6]
                                          [--tiles 64x64x128,128x64x256] [--decode-impls nv2,decode]
                                          [--chunks 16,32,64] [--decode-hows lanes,mma] [--kv bf16] [--sinks] [--out FILE]
    python3 benchmarks/attention_bench.py --host-cost

Shapes: prefill (heads, S, D) = (32, 4096, 128) causal and not, (32, 4096, 64), (16, 8192, 128)
(Sq = Skv = S, one K/V head per query head), and decoding: 32 query heads sharing 8 K/V heads, one
query row, Skv = 16384 and 131072, D = 128; then more decoding (rows 8 on): 4 query rows on the same
heads (16 rows per K/V head), 32 heads without grouping, D = 64 and 256, 2 and 3 query rows (8 and 12 rows
per K/V head), 3 query rows of 16 heads on 8 (6 rows), 5 and 3 rows of 64 heads on 8 (Llama-3-70B), and one
token of 28 heads on 4 (Qwen2-7B: 7 rows); then 64 to 128 rows a K/V head (Falcon-7B's 71 heads on one, 5 tokens of
Llama-3.1-405B's 128 on 8, chunks of 24 to 128 tokens of a long prompt, a 100-token prompt). TFLOP/s counts 4 H Sq Skv D
flops (half of it for causal prefill); decoding also shows the K/V bytes read per second and their ratio
to a copy kernel's bandwidth (16-byte loads and stores over as many bytes as K and V hold: read + write
bytes per second).

Decoding shapes (at most 16 query rows per K/V head) run once per ``--decode-impls`` (default ``nv2,decode``:
ggml's kernel with split_k, ``coopdsl.ops.attention_decode``'s flash-decoding kernel; ``auto`` is
``ops.attention``'s own choice), so the two paths are timed in the same run on the same arrays; ``--chunks
N,...`` adds decode-kernel rows with N chunks per K/V head instead of ``attention_decode.default_chunks``;
``--decode-hows lanes,mma`` adds rows of each decode kernel (``attention_decode.run(..., how=)``: lane = key, or
cooperative matrices; or the lane kernel with one knob, ``lanes:loads3``, ``attention_decode.variant``) with its
default chunks.

coopdsl runs on resident arrays (f16 Q, K, V; f32 output; ``--kv bf16``: K and V bf16, ``ops.to_bf16``,
and torch's Q, K and V bf16, as its SDPA takes one type). Its time is the GPU time of the kernels one
``ops.attention`` call launches (``attention_nv2.recording``: after a first call has built and cached the
causal mask and its mask_opt bits, that is the flash-attention kernel, plus the split_k reduce when
decoding), each timed with ``Kernel.bench`` (GPU timestamps, median of
``--repeat``) and summed; "wall" is the host time per call of 20 calls recorded in one batch (host
overhead and GPU time overlapping). torch is timed with CUDA events around each call (median). Before
each measurement ``--warmup-ms`` of the same work runs untimed, after ``benchmarks._clocks.clocks_up`` has
brought the GPU's clocks up (an idle H100's need about half a second of work, ``benchmarks/clock_ramp.py``).
Each coopdsl result is checked against float64 numpy on a few heads.
Prints a markdown table. ``--tiles BrxBcxWG,...`` adds rows with those tiles (Br query rows, Bc keys,
WG invocations) in place of ggml's tuning (``attention_nv2.run(..., tiles=)``), to look for better ones;
a device that cannot run a tile shows the error. ``--host-cost`` only measures what a decoding call of
``ops.attention`` on resident arrays costs the host beyond the launches it makes (each call waited for, and
recorded in a batch), as ``benchmarks/ops_llm.py``'s last line does for ``ops.linear``.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._clocks import copy16, copy_grid, warm_median_ms  # noqa: E402
from benchmarks._gpu import require_gpu  # noqa: E402
from benchmarks._host_cost import host_costs  # noqa: E402
from coopdsl import ops, runtime  # noqa: E402
from coopdsl.ops import attention_decode as AD  # noqa: E402
from coopdsl.ops import attention_decode_mma as ADM  # noqa: E402
from coopdsl.ops import attention_nv2 as nv2  # noqa: E402
from coopdsl.ops import device_caps as caps  # noqa: E402
from coopdsl.ops import flash_attention  # noqa: E402

# (label, Hq, Hkv, Sq, Skv, D, causal)
SHAPES = [
    ("prefill", 32, 32, 4096, 4096, 128, False),
    ("prefill causal", 32, 32, 4096, 4096, 128, True),
    ("prefill", 32, 32, 4096, 4096, 64, False),
    ("prefill causal", 32, 32, 4096, 4096, 64, True),
    ("prefill", 16, 16, 8192, 8192, 128, False),
    ("prefill causal", 16, 16, 8192, 8192, 128, True),
    ("decode", 32, 8, 1, 16384, 128, True),
    ("decode", 32, 8, 1, 131072, 128, True),
    ("decode 4 rows", 32, 8, 4, 16384, 128, True),
    ("decode 4 rows", 32, 8, 4, 131072, 128, True),
    ("decode MHA", 32, 32, 1, 16384, 128, True),
    ("decode", 32, 8, 1, 32768, 64, True),
    ("decode", 16, 4, 1, 32768, 256, True),
    ("decode 2 rows", 32, 8, 2, 65536, 128, True),
    ("decode 3 rows", 32, 8, 3, 32768, 128, True),
    ("decode 3 rows", 16, 8, 3, 32768, 128, True),
    ("prefill", 32, 32, 4096, 4096, 80, False),
    ("prefill", 32, 32, 4096, 4096, 96, False),
    ("prefill", 16, 16, 4096, 4096, 256, False),
    ("prefill causal", 32, 32, 4096, 4096, 80, True),
    ("prefill causal", 32, 32, 4096, 4096, 96, True),
    ("prefill causal GQA", 32, 8, 1024, 1024, 128, True),
    ("prefill causal GQA", 32, 8, 2048, 2048, 128, True),
    ("prefill GQA", 32, 8, 1024, 1024, 128, False),
    ("prefill causal GQA", 32, 8, 512, 512, 128, True),
    ("prefill causal GQA", 32, 8, 1000, 1000, 128, True),
    ("prefill GQA", 32, 8, 1000, 1000, 128, False),
    ("prefill causal", 32, 32, 3000, 3000, 96, True),
    ("prefill", 32, 32, 3000, 3000, 96, False),
    ("decode 5 rows GQA 8", 64, 8, 5, 70000, 128, True),
    ("decode 3 rows GQA 8", 64, 8, 3, 70000, 128, True),
    ("decode GQA 7", 28, 4, 1, 32768, 128, True),
    ("decode MQA 71", 71, 1, 1, 16384, 64, True),
    ("decode 5 rows GQA 16", 128, 8, 5, 16384, 128, True),
    ("chunk 128 rows", 32, 32, 128, 32768, 128, True),
    ("chunk 24 rows GQA 4", 32, 8, 24, 32768, 128, True),
    ("prompt 100 rows", 12, 12, 100, 100, 64, True),
    ("chunk 64 rows", 32, 32, 64, 32768, 128, True),
]


def copy_gbs(dev, nbytes: int, repeat: int, warmup_ms: float = 200.0) -> float:
    """Read + write GB/s of :func:`copy16` over ``nbytes`` bytes on ``dev`` (after ``warmup_ms`` of copies)."""
    n16 = nbytes // 16
    src = runtime.zeros((n16, 4), np.uint32, device=dev)
    dst = runtime.zeros((n16, 4), np.uint32, device=dev)
    ms = warm_median_ms(dev, copy16, copy_grid(n16), (src, dst, n16), {"device": dev}, repeat, warmup_ms)
    src.free()
    dst.free()
    return 2 * nbytes / (ms * 1e-3) / 1e9


def is_decode(hq: int, hkv: int, sq: int) -> bool:
    """Whether a shape has few enough query rows per K/V head for a decode kernel (to 16, or to 128 on the
    cooperative-matrix one; D and ``attention_decode.matrices_beat_prefill`` are not checked here)."""
    return hq // hkv * sq <= ADM.MAX_ROWS


def flops(hq: int, sq: int, skv: int, d: int, causal: bool) -> float:
    f = 4.0 * hq * sq * skv * d
    return f / 2 if causal and sq == skv else f


def coopdsl_time(dev, q, k, v, out, causal: bool, acc: str, repeat: int, warmup_ms: float, tiles=None,
                 impl: str | None = None, chunks: int | None = None, how: str | None = None, sinks=None):
    """(summed GPU ms of the call's kernels, [(kernel name, ms)], wall ms per call in a batch, or None with
    ``tiles``, ``chunks`` or ``how``). ``impl``: ops.attention's (None: its own choice); ``chunks``: the decode
    kernel with that many chunks per K/V head; ``how``: that decode kernel ("lanes" or "mma"); ``sinks``: a
    resident array of attention sinks, one a query head (``--sinks``)."""
    hq, sq, d = q.shape
    hkv, skv, _ = k.shape
    if tiles is not None:
        def call():
            return nv2.run(q, k, v, (hq, sq, d, hkv, skv), causal=causal, mask=None, window=0, scale=d ** -0.5,
                           softcap=0.0, out_dtype=out.dtype, out=out, dev=dev, acc=acc, tiles=tiles, sinks=sinks)
    elif chunks is not None or how is not None:
        def call():
            return AD.run(q, k, v, (hq, sq, d, hkv, skv), causal=causal, mask=None, window=0, scale=d ** -0.5,
                          softcap=0.0, out_dtype=out.dtype, out=out, dev=dev, chunks=chunks, how=how, sinks=sinks)
    else:
        def call():
            return ops.attention(q, k, v, causal=causal, out=out, out_dtype=out.dtype, acc=acc, impl=impl,
                                 sinks=sinks)
    call()  # builds and caches the mask, compiles
    with nv2.recording() as launches:
        call()
    parts = []
    for kernel, grid, args, kwargs in launches:
        parts.append((kernel.name, warm_median_ms(dev, kernel, grid, args, kwargs, repeat, warmup_ms)))
    if tiles is not None or chunks is not None or how is not None:
        return sum(ms for _, ms in parts), parts, None
    n = 20
    with runtime.batch(dev):
        for _ in range(n):
            call()
    t = time.perf_counter()
    with runtime.batch(dev):
        for _ in range(n):
            call()
    wall = (time.perf_counter() - t) / n * 1e3
    return sum(ms for _, ms in parts), parts, wall


def torch_time(q, k, v, causal: bool, repeat: int, warmup_ms: float, bf16: bool = False) -> tuple[float | None, str]:
    """Median ms of torch's scaled_dot_product_attention (CUDA events), and which call it was (``bf16``: Q, K
    and V as torch.bfloat16)."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return None, "no torch"
    if not torch.cuda.is_available():
        return None, "no CUDA"
    qt, kt, vt = (torch.from_numpy(x).to("cuda")[None] for x in (q, k, v))  # (1, H, S, D) f16
    if bf16:
        qt, kt, vt = (x.to(torch.bfloat16) for x in (qt, kt, vt))
    hq, hkv = q.shape[0], k.shape[0]
    sq = q.shape[1]
    # torch's is_causal aligns the diagonal at the top left: right for Sq == Skv; new rows after a cache (Sq <
    # Skv, the diagonal at the end) get it as a boolean mask (one query row sees every key: no mask)
    skv = k.shape[1]
    kw: dict = {"is_causal": causal and sq == skv}
    note = "SDPA"
    if causal and 1 < sq < skv:
        rows = torch.arange(sq, device="cuda")[:, None] + (skv - sq)
        kw["attn_mask"] = torch.arange(skv, device="cuda")[None, :] <= rows
        note = "SDPA, causal mask at the end"
    if hkv != hq:
        try:
            F.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True)
            kw["enable_gqa"] = True
            note = "SDPA enable_gqa"
        except TypeError:  # torch < 2.5: K/V heads repeated
            kt, vt = kt.repeat_interleave(hq // hkv, 1), vt.repeat_interleave(hq // hkv, 1)
            note = "SDPA, K/V repeated"

    def call():
        return F.scaled_dot_product_attention(qt, kt, vt, **kw)

    end = time.perf_counter() + max(warmup_ms, 1000.0) / 1e3   # by the wall clock: the GPU's clocks follow time
    while time.perf_counter() < end:
        for _ in range(10):
            call()
        torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        call()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    return float(np.median(times)), f"{note} ({torch.__version__})"


def check(q, k, v, out, causal: bool, heads: int = 1, sinks=None) -> float:
    """Largest error of the first ``heads`` query heads against float64 numpy, relative to the largest value
    (``sinks``: numpy, one a query head)."""
    hq, hkv = q.shape[0], k.shape[0]
    got = out.numpy()[:heads].astype(np.float64)
    g = hq // hkv
    kk = np.stack([k[h // g] for h in range(heads)])
    vv = np.stack([v[h // g] for h in range(heads)])
    want = flash_attention.reference(q[:heads], kk, vv, causal, sinks=None if sinks is None else sinks[:heads])
    return float(np.abs(got - want).max() / np.abs(want).max())


def host_cost(dev, n: int = 200, rounds: int = 5) -> str:
    """Host cost of ``ops.attention`` on resident arrays against the launches it makes (one token, 32 query heads
    on 8 K/V heads, 4096 keys, D 128, f32 out): wall time per call, each waited for (median of ``rounds``
    interleaved rounds of ``n`` calls), and the host time per call recorded inside a batch."""
    from coopdsl.ops import hot

    rng = np.random.default_rng(1)
    q = runtime.array(rng.standard_normal((32, 1, 128)).astype(np.float16), device=dev)
    k, v = (runtime.array(rng.standard_normal((8, 4096, 128)).astype(np.float16), device=dev) for _ in range(2))
    out = runtime.zeros((32, 1, 128), np.float32, device=dev)
    with nv2.recording() as launches:
        ops.attention(q, k, v, causal=True, out=out)
    fns = {"its launches (Kernel.launch)": lambda: hot.run(launches),
           "ops.attention": lambda: ops.attention(q, k, v, causal=True, out=out)}
    parts = []
    labels = ("each waited for", "recorded in a batch (host time a call)")
    for label, med in zip(labels, host_costs(fns, dev, n, rounds)):
        base = med["its launches (Kernel.launch)"]
        parts.append(f"{label}: " + ", ".join(f"{name} {ms:.1f} us" + (f" (+{ms - base:.1f})" if name == "ops.attention"
                                                                       else "") for name, ms in med.items()))
    names = " + ".join(kern.name for kern, *_ in launches)
    return (f"host cost of ops.attention, one token, 32/8 heads, 4096 keys, D 128 on resident arrays ({names}), "
            f"median of {rounds} interleaved rounds of {n} calls: " + "; ".join(parts))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--acc", default="f32,f16", help="ggml's softmax accumulator types to run (f32, f16)")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--warmup-ms", type=float, default=200.0)
    ap.add_argument("--shapes", default="", help="comma-separated row numbers of SHAPES (default: all)")
    ap.add_argument("--tiles", default="", help="extra rows with these tiles, BrxBcxWG,... (e.g. 128x64x256)")
    ap.add_argument("--decode-impls", default="nv2,decode",
                    help="ops.attention impls timed on decoding shapes: nv2, decode, khr, auto (its own choice)")
    ap.add_argument("--chunks", default="", help="extra decode-kernel rows with these chunks per K/V head, N,...")
    ap.add_argument("--decode-hows", default="",
                    help="extra rows of each decode kernel: lanes, mma, or lanes with a knob (lanes:loads3)")
    ap.add_argument("--l16-max-head", type=int, default=None,
                    help="run the prefill kernel's L16 variant (row sums Br x 16) to this head size (default: "
                         "attention_nv2.L16_MAX_HEAD)")
    ap.add_argument("--m16-max-head", type=int, default=None,
                    help="with L16, also the row maxima and rescale factors Br x 16 (M16) to this head size "
                         "(default: attention_nv2.M16_MAX_HEAD)")
    ap.add_argument("--split-cores", type=int, default=None,
                    help="the SM count ggml's split_k rule sees (more splits the keys of fewer row tiles)")
    ap.add_argument("--kv", default="f16", choices=("f16", "bf16"), help="K and V's type (default f16)")
    ap.add_argument("--out-dtype", default="f32", choices=("f32", "f16"), help="the output's type (default f32)")
    ap.add_argument("--sinks", action="store_true",
                    help="ops.attention with an attention sink a query head (log of the keys: about the keys' weight); "
                         "torch SDPA has none and runs without")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--dry-run", action="store_true", help="list the shapes and what runs on each, time nothing")
    ap.add_argument("--host-cost", action="store_true",
                    help="only measure what an ops.attention decoding call costs the host beyond its launches")
    args = ap.parse_args()
    tile_list = [tuple(int(x) for x in t.split("x")) for t in args.tiles.split(",") if t]
    chunk_list = [int(c) for c in args.chunks.split(",") if c]
    how_list = [h for h in args.decode_hows.split(",") if h]
    for h in how_list:
        try:
            AD.variant(h)
        except ValueError as e:
            ap.error(f"--decode-hows: {e}")
    decode_impls = [i for i in args.decode_impls.split(",") if i]
    for i in decode_impls:
        if i not in ("auto", *flash_attention.IMPLS):
            ap.error(f"--decode-impls: {i!r} is not auto, {', '.join(flash_attention.IMPLS)}")
    rows = [int(i) for i in args.shapes.split(",")] if args.shapes else range(len(SHAPES))
    if args.l16_max_head is not None:
        nv2.L16_MAX_HEAD = args.l16_max_head
    if args.m16_max_head is not None:
        nv2.M16_MAX_HEAD = args.m16_max_head
    if args.split_cores is not None:
        cores_seen = args.split_cores
        caps.shader_cores = lambda dev: cores_seen
    if args.dry_run:
        for i in rows:
            label, hq, hkv, sq, skv, d, causal = SHAPES[i]
            variants = "decode impls " + ",".join(decode_impls) if is_decode(hq, hkv, sq) else "ops.attention"
            print(f"{i}: {label} Hq/Hkv {hq}/{hkv} Sq {sq} Skv {skv} D {d} causal {causal}: {variants}")
        return
    dev = require_gpu("attention_bench.py")
    if args.host_cost:
        print(host_cost(dev))
        return
    path = "ggml flash_attn_cm2 (NV2)" if caps.has_nv2(dev) else "KHR fallback kernel"
    lines = [f"`python3 benchmarks/attention_bench.py {' '.join(sys.argv[1:])}` on {dev.info.name} "
             f"({caps.shader_cores(dev)} SMs as ggml counts them), {date.today()} ({platform.node()}); "
             f"coopdsl path: {path}", "",
             "| case | Hq/Hkv | Sq | Skv | D | path / acc | coopdsl GPU | TFLOP/s | K/V GB/s | wall/call (batch) "
             "| torch | TFLOP/s | K/V GB/s | coopdsl / torch | rel. err | kernels |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    rng = np.random.default_rng(0)
    t_ms, note = None, ""
    copies: dict[int, float] = {}  # K/V bytes -> the copy kernel's GB/s
    for i in rows:
        label, hq, hkv, sq, skv, d, causal = SHAPES[i]
        q = rng.standard_normal((hq, sq, d)).astype(np.float16)
        k = rng.standard_normal((hkv, skv, d)).astype(np.float16)
        v = rng.standard_normal((hkv, skv, d)).astype(np.float16)
        if args.kv == "bf16":   # (the bit patterns resident; k and v the values they stand for, for the check)
            kb, vb = ops.to_bf16(k.astype(np.float32)), ops.to_bf16(v.astype(np.float32))
            k, v = ops.from_bf16(kb), ops.from_bf16(vb)
            dq, dk, dv = (runtime.array(x, device=dev) for x in (q, kb, vb))
        else:
            dq, dk, dv = (runtime.array(x, device=dev) for x in (q, k, v))
        out = runtime.zeros((hq, sq, d), np.float16 if args.out_dtype == "f16" else np.float32, device=dev)
        sinks = np.full(hq, np.log(skv), np.float32) if args.sinks else None
        dsinks = runtime.array(sinks, device=dev) if sinks is not None else None
        f = flops(hq, sq, skv, d, causal)
        kv_bytes = 2 * hkv * skv * d * 2
        decode = is_decode(hq, hkv, sq)
        if decode and kv_bytes not in copies:
            copies[kv_bytes] = copy_gbs(dev, kv_bytes, args.repeat, args.warmup_ms)
        t_ms, note = torch_time(q, k, v, causal, args.repeat, args.warmup_ms, args.kv == "bf16")
        # (tag, acc, tiles, impl, chunks, how) of each row
        variants: list[tuple[str, str, tuple | None, str | None, int | None, str | None]] = []
        for impl in decode_impls if decode else [None]:
            impl_arg = None if impl == "auto" else impl
            if impl in ("decode", "khr"):
                variants.append((impl, "f32", None, impl_arg, None, None))
                continue
            for acc in args.acc.split(","):
                for tiles in [None, *tile_list]:
                    tag = acc if tiles is None else f"{acc}, tiles {'x'.join(map(str, tiles))}"
                    variants.append((tag if impl is None else f"{impl} {tag}", acc, tiles, impl_arg, None, None))
        if decode:
            variants += [(f"decode, {c} chunks", "f32", None, "decode", c, None) for c in chunk_list]
            variants += [(f"decode {h}", "f32", None, "decode", None, h) for h in how_list]
        for tag, acc, tiles, impl_arg, chunks, how in variants:
            try:
                ms, parts, wall = coopdsl_time(dev, dq, dk, dv, out, causal, acc, args.repeat, args.warmup_ms,
                                               tiles, impl_arg, chunks, how, dsinks)
            except Exception as e:  # a tile the device cannot run
                lines.append(f"| {label} | {hq}/{hkv} | {sq} | {skv} | {d} | {tag} | {type(e).__name__}: "
                             f"{str(e).splitlines()[0][:120]} |")
                print(lines[-1], flush=True)
                continue
            err = check(q, k, v, out, causal, sinks=sinks)
            kv = f"{kv_bytes / (ms * 1e-3) / 1e9:.0f} ({kv_bytes / (ms * 1e-3) / 1e9 / copies[kv_bytes]:.2f})" \
                if decode else ""
            if t_ms is None:
                tt = tf = tkv = ratio = note
            else:
                tt, tf = f"{t_ms * 1e3:.0f} us", f"{f / (t_ms * 1e-3) / 1e12:.1f}"
                tkv = f"{kv_bytes / (t_ms * 1e-3) / 1e9:.0f}" if decode else ""
                ratio = f"{t_ms / ms:.2f}"
            kernels = " + ".join(f"{name} {p * 1e3:.0f} us" for name, p in parts)
            walls = "" if wall is None else f"{wall * 1e3:.0f} us"
            lines.append(f"| {label} | {hq}/{hkv} | {sq} | {skv} | {d} | {tag} | {ms * 1e3:.0f} us | "
                         f"{f / (ms * 1e-3) / 1e12:.1f} | {kv} | {walls} | {tt} | {tf} | {tkv} | "
                         f"{ratio} | {err:.1e} | {kernels} |")
            print(lines[-1], flush=True)
        for x in (dq, dk, dv, out, dsinks):
            if x is not None:
                x.free()
    if copies:
        lines += ["", "K/V GB/s in parentheses: the fraction of a copy kernel's bandwidth (read + write bytes per "
                  "second of `copy16` over as many bytes as K and V hold): "
                  + ", ".join(f"{b / 1e6:.0f} MB {g:.0f} GB/s" for b, g in copies.items())]
    text = "\n".join(lines) + "\n"
    if note:
        text += f"\ntorch: {note}\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"({time.time() - t0:.0f} s)")
