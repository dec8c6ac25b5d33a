#!/usr/bin/env python3
"""coopdsl.ops at model shapes not tested before: correctness against float64 numpy and speed against torch.

Written from docs/ops.md and docs/runtime.md alone (the numpy references: the docs' formulas and block layouts), by a
tester who did not read coopdsl/ops, as the issue's reviewer would check (2026-11-29); the second such check after
benchmarks/ops_unseen_shapes.py, at other models (Mistral-7B, Llama-3.2-1B, Qwen2.5-0.5B, Gemma-2-2B, Phi-3-medium,
Llama-2-7B).  Results: benchmarks/results/ops-unseen-models-h200-2026-11-29.md.

  python3 benchmarks/ops_unseen_models.py --out results.md                       # default Vulkan device (H200), < 150 s
  python3 benchmarks/ops_unseen_models.py --tiny --device cpu --out /tmp/t.md    # CPU interpreter, every shape scaled down

The tiny mode runs the same code with smaller sizes only: heads keep the model's query-heads-per-K/V-head group
(so the same attention kernel is chosen), sequences and weight sizes shrink (q4_K's K stays a multiple of 256
except where the full size is not), rows of x stay 1, 2, 4, 7, 12, 16 (+24, 100).

Timing (docs/ops.md "Timing an op yourself"): resident operands (runtime.array), resident out=, warm-up, then
 - coopdsl waited: median wall time of calls each returning with its result;
 - coopdsl batch: `calls` calls recorded in one runtime.batch(dev), total / calls;
 - torch waited: median of (call + torch.cuda.synchronize()); torch stream: calls back to back, one sync, / calls.
"""
import time

T_START = time.time()

import argparse  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402

import numpy as np  # noqa: E402

try:
    import coopdsl  # noqa: F401
except ImportError:  # run from the checkout without installing
    sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))
    import coopdsl  # noqa: F401
from coopdsl import ops, runtime  # noqa: E402
from coopdsl.ops import attention_nv2  # noqa: E402
import coopdsl.ops.gemv as gemv  # noqa: E402

try:
    from coopdsl.ops.linear import prefill_choice  # docs/autotune.md: in the module coopdsl.ops.linear
except Exception:  # noqa: BLE001
    prefill_choice = None

try:
    import torch
    HAVE_TORCH = bool(torch.cuda.is_available())
except Exception:  # noqa: BLE001
    torch = None
    HAVE_TORCH = False

TDEV = "cuda"  # torch's device
H200_SMS = 132  # prefill_choice's SM count (ggml's default where the device does not report it; H200: 132)

# ====================================================================== float64 references (docs/ops.md)

BLOCK = {"q4_0": 32, "q8_0": 32, "q4_K": 256}
BLOCK_BYTES = {"q4_0": 18, "q8_0": 34, "q4_K": 144}


def _f16_at(blk, off):
    """little-endian f16 at byte `off` of each block -> float64."""
    return np.ascontiguousarray(blk[..., off:off + 2]).view("<f2")[..., 0].astype(np.float64)


def dequant64(q, fmt, K):
    """ggml blocks (rows x bytes, uint8) -> float64 rows x K, from docs/ops.md's layout table."""
    q = np.ascontiguousarray(q, dtype=np.uint8)
    R = q.shape[0]
    nb = K // BLOCK[fmt]
    blk = q.reshape(R, nb, BLOCK_BYTES[fmt])
    if fmt == "q4_0":  # d f16; 16 bytes: byte j = element j (low nibble), element j + 16 (high nibble); (q - 8) * d
        d = _f16_at(blk, 0)
        qs = blk[..., 2:18]
        lev = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.float64) - 8.0
        return (lev * d[..., None]).reshape(R, K)
    if fmt == "q8_0":  # d f16; 32 int8; q * d
        d = _f16_at(blk, 0)
        lev = blk[..., 2:34].view(np.int8).astype(np.float64)
        return (lev * d[..., None]).reshape(R, K)
    if fmt == "q4_K":  # d, dmin f16; 12 bytes of 6-bit scales/mins; 128 bytes qs; d * sc * q - dmin * m
        d = _f16_at(blk, 0)
        dmin = _f16_at(blk, 2)
        s = blk[..., 4:16].astype(np.int64)
        qs = blk[..., 16:144]
        out = np.empty((R, nb, 256))
        for j in range(8):
            if j < 4:
                sc = s[..., j] & 63
                m = s[..., j + 4] & 63
            else:
                sc = (s[..., j + 4] & 15) | ((s[..., j - 4] >> 6) << 4)
                m = (s[..., j + 4] >> 4) | ((s[..., j] >> 6) << 4)
            grp = qs[..., 32 * (j // 2):32 * (j // 2) + 32]           # 32 bytes for each 64 elements
            lev = (grp & 0x0F) if j % 2 == 0 else (grp >> 4)          # low nibbles: sub-block 2j', high: 2j'+1
            out[..., 32 * j:32 * j + 32] = (d * sc)[..., None] * lev - (dmin * m)[..., None]
        return out.reshape(R, K)
    raise ValueError(fmt)


def attention_ref(q, k, v, heads, rows, *, causal, window, softcap, scale=None):
    """float64 softmax(scale q k^T [soft-capped] + mask) v for the given query heads and rows.
    q (Hq, Sq, D), k/v (Hkv, Skv, D); query head h reads K/V head h // (Hq // Hkv);
    causal: query i sees j <= i + Skv - Sq; window W: also j >= i + Skv - Sq - W + 1; a row seeing no key -> 0."""
    Hq, Sq, D = q.shape
    Hkv, Skv, _ = k.shape
    g = Hq // Hkv
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    i = np.asarray(rows)[:, None]
    j = np.arange(Skv)[None, :]
    seen = np.ones((len(rows), Skv), bool)
    if causal:
        seen &= j <= i + Skv - Sq
    if window is not None:
        seen &= j >= i + Skv - Sq - window + 1
    out = np.zeros((len(heads), len(rows), D))
    for a, h in enumerate(heads):
        kh = k[h // g].astype(np.float64)
        vh = v[h // g].astype(np.float64)
        s = (q[h][rows].astype(np.float64) @ kh.T) * scale
        if softcap:
            s = softcap * np.tanh(s / softcap)
        s = np.where(seen, s, -np.inf)
        mx = s.max(axis=1, keepdims=True)
        any_seen = np.isfinite(mx)
        p = np.exp(s - np.where(any_seen, mx, 0.0))
        den = p.sum(axis=1, keepdims=True)
        out[a] = np.where(any_seen, (p @ vh) / np.where(den > 0, den, 1.0), 0.0)
    return out


# ====================================================================== data

class Gen:
    """Reproducible N(0, 1) data, fast at 10^7-10^8 values: a prime-length pool, rotated and tiled."""

    def __init__(self, seed):
        self.pool = np.random.default_rng(seed).standard_normal(1_000_003).astype(np.float32)
        self.off = 0

    def normal(self, shape, dtype=np.float32, scale=1.0):
        n = int(np.prod(shape))
        self.off = (self.off + 7919) % len(self.pool)
        a = np.resize(np.roll(self.pool, -self.off), n).reshape(shape)
        if scale != 1.0:
            a = a * np.float32(scale)
        return np.ascontiguousarray(a.astype(dtype))


# ====================================================================== timing

def med_us(ts):
    return float(np.median(ts)) * 1e6


def time_waited(fn, warm, calls, warm_s):
    t0 = time.perf_counter()
    n = 0
    while n < warm or (time.perf_counter() - t0 < warm_s and n < 5000):
        fn()
        n += 1
    ts = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return med_us(ts)


def time_batch(dev, fn, calls):
    t = time.perf_counter()
    with runtime.batch(dev):
        for _ in range(calls):
            fn()
    return (time.perf_counter() - t) / calls * 1e6


def torch_time(fn, warm, calls):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t)
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return med_us(ts), (time.perf_counter() - t) / calls * 1e6


def us(x):
    return "" if x is None else f"{x:.1f}"


def gbs(nbytes, t_us):
    return "" if not t_us else f"{nbytes / (t_us * 1e-6) / 1e9:.0f}"


# ====================================================================== report

COLS = ["case", "kernel path", "check", "coopdsl waited us", "coopdsl batch us", "torch waited us",
        "torch stream us", "ratio coopdsl/torch (waited)", "coopdsl GB/s", "torch GB/s", "note"]


class Report:
    def __init__(self, path, header):
        self.path = path
        self.rows = []
        with open(path, "w") as f:
            f.write(header + "\n\n| " + " | ".join(COLS) + " |\n|" + "---|" * len(COLS) + "\n")

    def add(self, **kw):
        self.rows.append(kw)
        cells = [str(kw.get(c, "")).replace("|", "/").replace("\n", " ") for c in COLS]
        with open(self.path, "a") as f:
            f.write("| " + " | ".join(cells) + " |\n")
        print(" | ".join(cells), flush=True)

    def footer(self, text):
        with open(self.path, "a") as f:
            f.write("\n" + text + "\n")


# ====================================================================== context

class Ctx:
    def __init__(self, a):
        self.a = a
        self.cpu = a.device == "cpu"
        self.tiny = a.tiny
        self.dev = None if self.cpu else runtime.default_device()
        self.gen = Gen(a.seed)
        self.torch = HAVE_TORCH and not self.cpu
        if self.cpu:
            self.warm, self.calls, self.warm_s = 1, 2, 0.0
        else:
            self.warm, self.calls, self.warm_s = a.warmup, a.calls, 0.02

    def left(self):
        return self.a.budget - (time.time() - T_START)

    def put(self, x):
        return x if self.cpu else runtime.array(x, device=self.dev)

    def zeros(self, shape, dtype):
        return np.zeros(shape, dtype) if self.cpu else runtime.zeros(shape, dtype, device=self.dev)

    def get(self, a):
        return a if self.cpu else a.numpy()

    def kw(self):
        return {"device": "cpu"} if self.cpu else {}


def free(arrs):
    for a in arrs:
        if isinstance(a, runtime.Array):
            try:
                a.free()
            except Exception:  # noqa: BLE001
                pass
    arrs.clear()


def fail_row(ctx, rep, rec, ex):
    rec["check"] = f"FAILED {type(ex).__name__}"
    rec["note"] = ((rec.get("note", "") + " ") if rec.get("note") else "") + (str(ex).splitlines() or [""])[0][:300]
    if ctx.a.verbose:
        traceback.print_exc()
    rep.add(**rec)


# ====================================================================== attention

# name: (Hq, Hkv, D, softcap, window, tiny (Hq, Hkv), tiny window)
MODELS = {
    "Mistral-7B": (32, 8, 128, 0.0, 4096, (4, 1), 96),
    "Llama-3.2-1B": (32, 8, 64, 0.0, None, (4, 1), None),
    "Qwen2.5-0.5B": (14, 2, 64, 0.0, None, (7, 1), None),
    "Gemma-2-2B": (8, 4, 256, 50.0, 4096, (2, 1), 200),
    "Phi-3-medium": (40, 10, 128, 0.0, None, (4, 1), None),
    "Llama-2-7B": (32, 32, 128, 0.0, None, (2, 2), None),
}
# (model, kind, Sq, Skv, tiny Sq, tiny Skv, input dtype, out dtype)
ATTN_CASES = [
    ("Mistral-7B", "decode", 1, 20000, 1, 700, "f16", np.float32),
    ("Llama-3.2-1B", "decode", 1, 30000, 1, 500, "f16", np.float32),
    ("Llama-3.2-1B", "decode", 4, 30000, 4, 500, "f16", np.float32),
    ("Llama-3.2-1B", "decode", 1, 30000, 1, 500, "bf16", np.float32),
    ("Qwen2.5-0.5B", "decode", 3, 9000, 3, 333, "f16", np.float32),
    ("Gemma-2-2B", "decode", 1, 6000, 1, 300, "f16", np.float32),
    ("Phi-3-medium", "decode", 8, 12000, 8, 400, "f16", np.float32),
    ("Llama-2-7B", "decode", 1, 4000, 1, 250, "f16", np.float16),
    ("Mistral-7B", "prefill", 5000, 5000, 160, 160, "f16", np.float32),
    ("Llama-3.2-1B", "prefill", 2048, 2048, 128, 128, "f16", np.float32),
    ("Qwen2.5-0.5B", "prefill", 777, 777, 77, 77, "f16", np.float32),
    ("Gemma-2-2B", "prefill", 1500, 1500, 90, 90, "f16", np.float32),
    ("Phi-3-medium", "prefill", 1200, 1200, 100, 100, "f16", np.float32),
    ("Phi-3-medium", "chunked prefill", 512, 4096, 40, 320, "f16", np.float32),
]


def torch_attention_call(tq, tk, tv, Sq, Skv, g, window, softcap, scale):
    """The fastest faithful torch call that runs: SDPA (enable_gqa, else K/V repeated) with no mask, is_causal
    (square), causal_lower_right (Sq < Skv) or a bool mask; eager attention for the soft-cap."""
    sdpa = torch.nn.functional.scaled_dot_product_attention
    dev = tq.device
    i = torch.arange(Sq, device=dev)[:, None]
    j = torch.arange(Skv, device=dev)[None, :]
    allow = j <= i + (Skv - Sq)
    if window is not None:
        allow &= j >= i + (Skv - Sq) - window + 1
    if softcap:
        tk2, tv2 = tk.repeat_interleave(g, dim=1), tv.repeat_interleave(g, dim=1)
        addm = torch.zeros(Sq, Skv, device=dev, dtype=torch.float32).masked_fill(~allow, float("-inf"))

        def eager():  # as HF Gemma-2's eager attention: f16 products, f32 soft-cap/softmax
            s = (tq @ tk2.transpose(-1, -2)).float() * scale
            s = softcap * torch.tanh(s / softcap) + addm
            return torch.softmax(s, dim=-1).to(tq.dtype) @ tv2
        eager()
        return eager, "torch eager (soft-cap)"
    masks = []
    if bool(allow.all()):
        masks.append(("no mask", {}))
    elif Sq == Skv and window is None:
        masks.append(("is_causal", {"is_causal": True}))
    elif window is None:
        try:
            from torch.nn.attention.bias import causal_lower_right
            masks.append(("causal_lower_right", {"attn_mask": causal_lower_right(Sq, Skv)}))
        except Exception:  # noqa: BLE001
            pass
    if not bool(allow.all()):
        masks.append(("bool mask", {"attn_mask": allow}))
    return first_sdpa(sdpa, tq, tk, tv, g, scale, masks)


def first_sdpa(sdpa, tq, tk, tv, g, scale, masks):
    """The first of torch SDPA's calls that runs: each (name, keywords) of ``masks`` with ``enable_gqa``, then with
    K/V repeated to the query heads (older torch); (the call, what it is).  Shared with ops_unseen_third.py."""
    errs = []
    for mname, mkw in masks:
        for gname in ("enable_gqa", "K/V repeated"):
            try:
                if gname == "enable_gqa":
                    kk, vv, extra = tk, tv, {"enable_gqa": True}
                else:
                    kk, vv, extra = tk.repeat_interleave(g, dim=1), tv.repeat_interleave(g, dim=1), {}

                def f(kk=kk, vv=vv, mkw=mkw, extra=extra):
                    return sdpa(tq, kk, vv, scale=scale, **mkw, **extra)
                f()
                torch.cuda.synchronize()
                return f, f"SDPA {gname}, {mname}"
            except Exception as ex:  # noqa: BLE001
                errs.append(f"{gname}/{mname}: {type(ex).__name__}")
    raise RuntimeError("no SDPA variant ran: " + "; ".join(errs))


def attention_case(ctx, rep, model, kind, Sq, Skv, tSq, tSkv, in_dt, out_dtype):
    Hq, Hkv, D, softcap, window, theads, twin = MODELS[model]
    if ctx.tiny:
        (Hq, Hkv), window, Sq, Skv = theads, twin, tSq, tSkv
    g = Hq // Hkv
    name = (f"attn {kind} {model} {Hq}/{Hkv}h D{D} Sq{Sq} Skv{Skv} causal"
            + (f" win{window}" if window else "") + (f" softcap{softcap:g}" if softcap else "")
            + f" {in_dt} in, {np.dtype(out_dtype).name} out")
    rec = {"case": name}
    arrays = []
    if ctx.left() < 3:
        rec["check"] = "SKIPPED (time budget)"
        rep.add(**rec)
        return
    try:
        q = ctx.gen.normal((Hq, Sq, D), np.float32)
        k = ctx.gen.normal((Hkv, Skv, D), np.float32)
        v = ctx.gen.normal((Hkv, Skv, D), np.float32)
        if in_dt == "bf16":  # docs: bf16 as uint16 bit patterns (ops.to_bf16) for q, k and v
            q, k, v = ops.to_bf16(q), ops.to_bf16(k), ops.to_bf16(v)
            qv, kv, vv = ops.from_bf16(q), ops.from_bf16(k), ops.from_bf16(v)   # the values they stand for
        else:
            q, k, v = q.astype(np.float16), k.astype(np.float16), v.astype(np.float16)
            qv, kv, vv = q, k, v
        opts = dict(causal=True, window=window, softcap=softcap, out_dtype=out_dtype)
        dq, dk, dv = ctx.put(q), ctx.put(k), ctx.put(v)
        out = ctx.zeros(q.shape, out_dtype)
        arrays += [a for a in (dq, dk, dv, out)]

        def call():
            return ops.attention(dq, dk, dv, out=out, **opts, **ctx.kw())

        with attention_nv2.recording() as launched:
            call()
        rec["kernel path"] = " + ".join(dict.fromkeys(kern.name for kern, *_ in launched))
        got = ctx.get(out)
        heads = sorted({0, 1 % Hq, g - 1, g % Hq, Hq // 2, Hq - 1})
        if Sq <= 32:
            rows = list(range(Sq))
        else:
            rows = {0, 1, Sq // 2, Sq - 2, Sq - 1} | set(range(0, Sq, max(1, Sq // 20)))
            if window is not None:
                rows |= {r for r in (window - 2, window - 1, window, window + 1) if 0 <= r < Sq}
            rows = sorted(rows)
        ref = attention_ref(qv, kv, vv, heads, rows, causal=True, window=window, softcap=softcap)
        sub = got[heads][:, rows].astype(np.float64)
        err = float(np.abs(sub - ref).max() / np.abs(ref).max())
        finite = bool(np.isfinite(got).all())
        tol = 3e-3 if out_dtype == np.float16 else 2e-3
        ok = err <= tol and finite
        rec["check"] = (f"{'OK' if ok else 'MISMATCH'} err/max {err:.1e} (tol {tol:.0e}; {len(heads)} heads x "
                        f"{len(rows)} rows)" + ("" if finite else " NON-FINITE output"))
        seen = Skv if window is None else min(Skv, window + Sq - 1)
        kv_bytes = 2 * Hkv * seen * D * 2
        cw = time_waited(call, ctx.warm, ctx.calls, ctx.warm_s)
        rec["coopdsl waited us"] = us(cw)
        notes = []
        if not ctx.cpu:
            try:
                rec["coopdsl batch us"] = us(time_batch(ctx.dev, call, ctx.calls))
            except Exception as ex:  # noqa: BLE001
                notes.append(f"batch: {type(ex).__name__}: {str(ex)[:100]}")
        else:
            rec["coopdsl batch us"] = "n/a (interpreter)"
        decode = kind == "decode"
        if ctx.cpu:
            pass
        elif decode:
            rec["coopdsl GB/s"] = gbs(kv_bytes, cw)
        else:
            # (query, key) pairs the causal mask and window let through, for TFLOP/s
            i = np.arange(Sq)
            hi = np.minimum(i + Skv - Sq, Skv - 1)
            low = np.zeros(Sq, np.int64) if window is None else np.maximum(i + Skv - Sq - window + 1, 0)
            pairs = float(np.clip(hi - low + 1, 0, None).sum())
            flops = 4.0 * Hq * D * pairs
            notes.append(f"coopdsl {flops / (cw * 1e-6) / 1e12:.1f} TFLOP/s (seen pairs)")
        if in_dt == "bf16":
            notes.append("bf16 K/V converted to f16 per call (documented)")
        if ctx.torch:
            try:
                tdt = torch.bfloat16 if in_dt == "bf16" else torch.float16

                def tt(a):
                    if in_dt == "bf16":
                        return torch.from_numpy(a.view(np.int16)).to(TDEV).view(torch.bfloat16)[None]
                    return torch.from_numpy(a).to(TDEV)[None]
                tq, tk, tv = tt(q), tt(k), tt(v)
                assert tq.dtype == tdt
                tcall, tnote = torch_attention_call(tq, tk, tv, Sq, Skv, g, window, softcap, 1.0 / math.sqrt(D))
                to = tcall()[0].float().cpu().numpy()
                terr = float(np.abs(to[heads][:, rows] - ref).max() / np.abs(ref).max())
                tw, ts = torch_time(tcall, ctx.warm, ctx.calls)
                rec["torch waited us"] = us(tw)
                rec["torch stream us"] = us(ts)
                rec["ratio coopdsl/torch (waited)"] = f"{cw / tw:.2f}"
                if decode:
                    rec["torch GB/s"] = gbs(kv_bytes, tw)
                notes.append(f"torch: {tnote}, err/max {terr:.1e}")
                del tq, tk, tv, tcall
                torch.cuda.empty_cache()
            except Exception as ex:  # noqa: BLE001
                notes.append(f"torch failed: {type(ex).__name__}: {str(ex)[:120]}")
        rec["note"] = "; ".join(notes)
        rep.add(**rec)
    except Exception as ex:  # noqa: BLE001
        fail_row(ctx, rep, rec, ex)
    finally:
        free(arrays)
        gc.collect()


# ====================================================================== linear

LINEAR = [  # (model, layer, M (out features), K (in features))
    ("Llama-3.2-1B", "up", 8192, 2048), ("Llama-3.2-1B", "down", 2048, 8192),
    ("Qwen2.5-0.5B", "up", 4864, 896), ("Qwen2.5-0.5B", "down", 896, 4864),
    ("Gemma-2-2B", "up", 9216, 2304), ("Gemma-2-2B", "down", 2304, 9216),
    ("Phi-3-medium", "up", 17920, 5120), ("Phi-3-medium", "down", 5120, 17920),
    ("Llama-2-7B", "up", 11008, 4096), ("Llama-2-7B", "down", 4096, 11008),
]
PREFILL_MODELS = ("Llama-3.2-1B", "Phi-3-medium")
DECODE_ROWS = [1, 2, 4, 7, 12, 16]
PREFILL_ROWS = [24, 100]
FORMATS = ["q4_0", "q8_0", "q4_K", "f16"]
# tiny sizes: M odd, K a multiple of 256 where the full K is, 896 -> 320 (a multiple of 64, not of 256)
TINY_M = {8192: 161, 2048: 97, 4864: 131, 896: 67, 9216: 177, 2304: 83, 17920: 203, 5120: 149, 11008: 189,
          4096: 123}
TINY_K = {2048: 256, 8192: 512, 896: 320, 4864: 768, 2304: 256, 9216: 512, 5120: 512, 17920: 768, 4096: 256,
          11008: 512}


def unique_rows(K, tiny):
    """rows of W actually made (then tiled to M): a few hundred, odd so that tiling does not align to powers of 2."""
    if tiny:
        return 37
    return max(31, (1 << 19) // K) | 1


def linear_path(ctx, fmt, n, M, K, dw, dx, y):
    try:
        if n <= 16:
            how = gemv.choice(fmt, n, None, M, K, None if ctx.cpu else ctx.dev)
            s = f"gemv {how}"
            try:
                launches, _ = gemv.plan(dw, dx, fmt, out=y, device="cpu" if ctx.cpu else ctx.dev)
                s += ": " + " + ".join(dict.fromkeys(kern.name for kern, *_ in launches))
            except Exception as ex:  # noqa: BLE001
                s += f" (plan: {type(ex).__name__})"
            return s
        if prefill_choice is not None:
            return f"mul_mm_cm2 prefill_choice {prefill_choice(fmt, M, n, K, H200_SMS)} (at {H200_SMS} SMs)"
        return "mul_mm_cm2 (prefill_choice not found)"
    except Exception as ex:  # noqa: BLE001
        return f"choice: {type(ex).__name__}: {str(ex)[:80]}"


def refusal_rows(ctx, rep, label, M, K, fmt, rows_list):
    """q4_K with K not a multiple of 256: docs/ops.md says quantize and linear refuse it with a ValueError."""
    msgs = []
    try:
        ops.quantize(ctx.gen.normal((4, K), np.float32), fmt)
        msgs.append("ops.quantize ACCEPTED")
        q_ok = False
    except ValueError as ex:
        q_ok = "256" in str(ex)
        msgs.append(f"ops.quantize: ValueError '{str(ex)[:140]}'")
    except Exception as ex:  # noqa: BLE001
        q_ok = False
        msgs.append(f"ops.quantize: {type(ex).__name__} '{str(ex)[:140]}'")
    # bytes of the right length for K values at 0.5625 bytes each (q4_0 blocks: the same 18/32 as q4_K's 144/256)
    wb = ops.quantize(ctx.gen.normal((M, K), np.float32, 0.02), "q4_0")
    arrays = []
    try:
        dw = ctx.put(wb)
        arrays.append(dw)
        for n in rows_list:
            rec = {"case": f"linear {label} {fmt} {n}x{K} @ {M}x{K}^T"}
            x = ctx.gen.normal((n, K), np.float32 if n <= 16 else np.float16)
            dx = ctx.put(x)
            y = ctx.zeros((n, M), np.float32)
            arrays += [dx, y]
            try:
                ops.linear(dx, dw, fmt, out=y, **ctx.kw())
                rec["check"] = "MISMATCH: not refused"
                rec["note"] = f"ops.linear accepted q4_K weights with K = {K}; " + "; ".join(msgs)
            except ValueError as ex:
                m = str(ex)
                named = "256" in m and str(K) in m
                rec["check"] = ("REFUSED as documented" if (named and q_ok) else
                                "MISMATCH: refused, message does not name the problem")
                rec["note"] = f"ops.linear: ValueError '{m[:200]}'; " + "; ".join(msgs)
            except Exception as ex:  # noqa: BLE001
                rec["check"] = f"FAILED {type(ex).__name__} (expected ValueError)"
                rec["note"] = str(ex)[:200]
            rep.add(**rec)
    finally:
        free(arrays)


def linear_weight(ctx, rep, model, layer, M, K, fmt, rows_list):
    if ctx.tiny:
        M, K = TINY_M[M], TINY_K[K]
    label = f"{model} {layer}"
    if ctx.left() < 4:
        rep.add(case=f"linear {label} {fmt} {M}x{K}", check="SKIPPED (time budget)")
        return
    if fmt == "q4_K" and K % 256:
        refusal_rows(ctx, rep, label, M, K, fmt, rows_list)
        return
    arrays = []
    tw16 = None
    try:
        R = min(M, unique_rows(K, ctx.tiny))
        wu = ctx.gen.normal((R, K), np.float32, 0.02)        # real weights are ~0.02
        if fmt == "f16":
            wq = wu.astype(np.float16)
            wdeq = wq.astype(np.float64)
            lib_note = ""
        else:
            wq = ops.quantize(wu, fmt)
            wdeq = dequant64(wq, fmt, K)
            # our float64 decoder (from the docs' layout table) against ops.dequantize on a few rows
            lib = ops.dequantize(wq[:5], fmt, K)
            d = float(np.abs(lib.astype(np.float64) - wdeq[:5]).max())
            lib_note = "deq==ops.dequantize" if np.array_equal(lib, wdeq[:5].astype(np.float32)) else \
                f"ops.dequantize DIFFERS by {d:.1e}"
        reps = -(-M // R)
        w = np.ascontiguousarray(np.tile(wq, (reps, 1))[:M])  # M rows: row r is unique row r % R
        wbytes = w.nbytes
        dw = ctx.put(w)
        arrays.append(dw)
        del w
        # output columns checked against numpy: first, last, spread, and one tile period's edges
        cols = np.unique(np.r_[0, 1, R - 1, R, M - 2, M - 1, np.linspace(0, M - 1, 150).astype(int)])
        cols = cols[(cols >= 0) & (cols < M)]
        wsel = wdeq[cols % R]
        if ctx.torch:
            tu = torch.from_numpy(wdeq.astype(np.float16)).to(TDEV)
            tw16 = tu[torch.arange(M, device=TDEV) % R].contiguous()
            del tu
        for n in rows_list:
            rec = {"case": f"linear {label} {fmt} {n}x{K} @ {M}x{K}^T"}
            if ctx.left() < 1:
                rec["check"] = "SKIPPED (time budget)"
                rep.add(**rec)
                continue
            try:
                xdt = np.float32 if n <= 16 else np.float16   # docs: past 16 rows a resident x must be float16
                x = ctx.gen.normal((n, K), xdt)
                dx = ctx.put(x)
                y = ctx.zeros((n, M), np.float32)
                arrays += [dx, y]
                f = None if fmt == "f16" else fmt

                def call():
                    return ops.linear(dx, dw, f, out=y, **ctx.kw())
                call()
                yall = ctx.get(y)
                finite = bool(np.isfinite(yall).all())
                got = yall[:, cols].astype(np.float64)
                x64 = x.astype(np.float64)
                ref = x64 @ wsel.T
                err = float(np.abs(got - ref).max() / np.abs(ref).max())
                nat = float((np.abs(got - ref) / (np.abs(x64) @ np.abs(wsel).T)).max())
                # 8-bit x (quantized weights, <= 16 rows): docs give 3e-3..8e-3 of the largest output (8.9e-3 at
                # K = 64) and at most 1e-3 of |x|.|w| output by output at model shapes; that ratio shrinks as
                # 1/sqrt(K) (random rounding errors), so small (tiny-mode) K gets 0.05/sqrt(K)
                tol_max, tol_nat = (3e-3, 1e-3) if fmt == "f16" else (2e-2, max(1e-3, 0.05 / math.sqrt(K)))
                ok = err <= tol_max and nat <= tol_nat and "DIFFERS" not in lib_note and finite
                rec["check"] = (f"{'OK' if ok else 'MISMATCH'} err/max {err:.1e} err/(|x|.|w|) {nat:.1e} "
                                f"(tol {tol_max:.0e}, {tol_nat:.0e}; {len(cols)} of {M} outputs)"
                                + (f"; {lib_note}" if lib_note else "") + ("" if finite else "; NON-FINITE output"))
                cw = time_waited(call, ctx.warm, ctx.calls, ctx.warm_s)
                rec["coopdsl waited us"] = us(cw)
                notes = []
                decode = n <= 16
                if decode and not ctx.cpu:
                    rec["coopdsl GB/s"] = gbs(wbytes, cw)
                if not ctx.cpu:
                    try:
                        cb = time_batch(ctx.dev, call, ctx.calls)
                        rec["coopdsl batch us"] = us(cb)
                        if decode:
                            rec["coopdsl GB/s"] += f" ({gbs(wbytes, cb)} batch)"
                    except Exception as ex:  # noqa: BLE001
                        notes.append(f"batch: {type(ex).__name__}: {str(ex)[:100]}")
                else:
                    rec["coopdsl batch us"] = "n/a (interpreter)"
                if not decode and not ctx.cpu:
                    notes.append(f"coopdsl {2.0 * n * M * K / (cw * 1e-6) / 1e12:.2f} TFLOP/s")
                rec["kernel path"] = linear_path(ctx, fmt, n, M, K, dw, dx, y)
                if tw16 is not None:
                    try:
                        tx = torch.from_numpy(x).to(TDEV).half()

                        def tcall():
                            return torch.matmul(tx, tw16.T)
                        tw, ts = torch_time(tcall, ctx.warm, ctx.calls)
                        rec["torch waited us"] = us(tw)
                        rec["torch stream us"] = us(ts)
                        rec["ratio coopdsl/torch (waited)"] = f"{cw / tw:.2f}"
                        if decode:
                            rec["torch GB/s"] = f"{gbs(M * K * 2, tw)} ({gbs(M * K * 2, ts)} stream)"
                        notes.append("torch: f16 matmul of the dequantized weights")
                    except Exception as ex:  # noqa: BLE001
                        notes.append(f"torch failed: {type(ex).__name__}: {str(ex)[:100]}")
                if decode:
                    notes.append(f"weights {wbytes / 1e6:.1f} MB")
                rec["note"] = "; ".join(notes)
                rep.add(**rec)
            except Exception as ex:  # noqa: BLE001
                fail_row(ctx, rep, rec, ex)
            finally:
                # keep dw; drop this row's x and y
                for a in arrays[1:]:
                    if isinstance(a, runtime.Array):
                        try:
                            a.free()
                        except Exception:  # noqa: BLE001
                            pass
                del arrays[1:]
    except Exception as ex:  # noqa: BLE001
        if ctx.a.verbose:
            traceback.print_exc()
        rep.add(case=f"linear {label} {fmt} {M}x{K}", check=f"FAILED {type(ex).__name__}", note=str(ex)[:300])
    finally:
        free(arrays)
        tw16 = None
        if ctx.torch:
            torch.cuda.empty_cache()
        gc.collect()


# ====================================================================== yardstick

def copy_yardstick(ctx, rep):
    if not ctx.torch:
        rep.add(case="torch copy (bandwidth yardstick)", check="", note="skipped: torch absent or no CUDA")
        return
    n = (1 << 20) if ctx.tiny else (1 << 28)
    a = torch.empty(n, dtype=torch.float32, device=TDEV)
    b = torch.empty_like(a)
    t = time.time()
    while time.time() - t < 0.6:  # bring the clocks up (docs: about half a second of work)
        for _ in range(20):
            b.copy_(a)
        torch.cuda.synchronize()
    def copy(src=a, dst=b):
        return dst.copy_(src)
    tw, ts = torch_time(copy, 5, 30)
    rep.add(case=f"torch copy {n * 4 >> 20} MiB f32 (bandwidth yardstick: read + write)",
            **{"torch waited us": us(tw), "torch stream us": us(ts),
               "torch GB/s": f"{gbs(2 * n * 4, tw)} ({gbs(2 * n * 4, ts)} stream)"})
    a = b = copy = None
    torch.cuda.empty_cache()


# ====================================================================== main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="markdown report")
    ap.add_argument("--tiny", action="store_true", help="every shape scaled down (same code paths)")
    ap.add_argument("--device", default="vulkan", choices=["vulkan", "cpu"])
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds from start; cases not started by then are SKIPPED (default 132 on a GPU, "
                         "900 on the interpreter)")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--calls", type=int, default=25)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="", help="comma list of: decode,prefill,linear")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    if a.budget is None:
        a.budget = 900.0 if a.device == "cpu" else 132.0
    ctx = Ctx(a)
    devname = "CPU interpreter" if ctx.cpu else str(ctx.dev)
    tdesc = (f"torch {torch.__version__} on {torch.cuda.get_device_name()}" if ctx.torch
             else "torch absent, without CUDA, or not used on the interpreter: torch columns skipped")
    header = (f"# coopdsl.ops at unseen model shapes (benchmarks/ops_unseen_models.py)\n\n"
              f"{time.strftime('%Y-%m-%d %H:%M:%S')}; coopdsl {getattr(coopdsl, '__version__', '?')} on {devname}; "
              f"{tdesc}; python {sys.version.split()[0]}; numpy {np.__version__}; "
              f"{'TINY shapes; ' if a.tiny else ''}warm-up {ctx.warm} calls"
              f"{f' (and >= {ctx.warm_s * 1e3:.0f} ms)' if ctx.warm_s else ''}, {ctx.calls} timed calls; "
              f"`{' '.join(sys.argv)}`\n\n"
              "err/max: largest |coopdsl - float64 numpy| over the largest |reference| on a subset of heads/rows "
              "(attention) or output columns (linear); err/(|x|.|w|): the largest error output by output over "
              "the sum of magnitudes. Linear GB/s: weight bytes per waited call (torch: its f16 weights). "
              "Attention GB/s: K/V bytes the keys seen take. ratio > 1: coopdsl slower.")
    rep = Report(a.out, header)
    only = set(filter(None, a.only.split(",")))
    copy_yardstick(ctx, rep)
    cases = []
    for c in ATTN_CASES:
        kind = "decode" if c[1] == "decode" else "prefill"
        if not only or kind in only:
            cases.append(("attn", c))
    if not only or "linear" in only:
        for model, layer, M, K in LINEAR:
            rows = DECODE_ROWS + (PREFILL_ROWS if model in PREFILL_MODELS else [])
            for fmt in FORMATS:
                cases.append(("linear", (model, layer, M, K, fmt, rows)))
    for kind, args in cases:
        if kind == "attn":
            attention_case(ctx, rep, *args)
        else:
            linear_weight(ctx, rep, *args)
    checks = [str(r.get("check", "")) for r in rep.rows]
    n_ok = sum(1 for c in checks if c.startswith(("OK", "REFUSED as documented")))
    n_bad = sum(1 for c in checks if c.startswith(("MISMATCH", "FAILED")))
    n_skip = sum(1 for c in checks if c.startswith("SKIPPED"))
    summary = (f"{n_ok} checks OK, {n_bad} mismatched or failed"
               + (f" ({n_skip} skipped for the time budget)" if n_skip else "")
               + f"; {time.time() - T_START:.0f} s in all.")
    rep.footer(summary)
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
