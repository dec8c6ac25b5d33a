#!/usr/bin/env python3
"""coopdsl.ops at a third set of unseen model shapes and options: correctness against float64 numpy, speed against
torch in the same run.

Written from docs/ (ops.md, runtime.md, autotune.md) and README.md alone, by a tester who did not read coopdsl/ops,
as an outside reviewer would check (2026-11-29); the third such check after benchmarks/ops_unseen_shapes.py and
benchmarks/ops_unseen_models.py, whose harness (Ctx, Report, timing, float64 dequantizer, Gen) it imports.  Models:
Llama-3.1-405B (128/8 heads), Qwen2.5-14B/32B (40/8), Falcon-7B (71/1, D 64), StarCoder2-15B (48/4, window 4096),
Yi-34B (56/8), Phi-2 (32/32, D 80), GPT-2 (12/12, D 64), Gemma-2-9B (16/8, D 256, soft-cap, window), MPT-7B (ALiBi as
a per-head additive mask).  What is new here: decoding with 7, 12, 14, 15, 16, 32, 60, 64, 71 and 80 query rows a K/V
head (the two decode kernels' edges and past them), bf16 K/V in the cooperative-matrix decode kernel, 64k-131k-key
caches, f16 outputs, shared and per-head masks (values that are not f16: the docs' rounding rule), explicit scale,
mixed f16/bf16 K/V, chunked prefill, bf16 weights in ops.linear, rows 1/2/3/5/8/16 and 77/512/2048, q4_K refused at
K = 4544, a decoding loop of many distinct ops calls on resident arrays (waited and inside runtime.batch, with
Array.write between steps), and the refusals the docs promise.

  python3 benchmarks/ops_unseen_third.py --out results.md                        # default Vulkan device (H200), < 150 s
  python3 benchmarks/ops_unseen_third.py --tiny --device cpu --out /tmp/t3.md    # CPU interpreter, shapes scaled down

Tiny mode: the same code with smaller sizes: heads keep each model's query heads per K/V head (so the docs' rule picks
the same kernel), token counts stay, caches and prompts shrink, weights shrink (K stays a multiple of 256 where the
full K is, and Falcon's 4544 becomes 320: a multiple of 64, not of 256), row counts past 256 stay past 256.

Tolerances (of err/max: largest |coopdsl - float64| over the largest |reference|), from docs/ops.md:
 - attention, decode kernel of 1-4 rows (and D > 128 to 16 rows): "largest error about 4e-7 of the largest output"
   (all f32) -> 2e-5 with f32 output; an f16 output adds its rounding (2^-11 of a value) -> 1e-3;
 - cooperative-matrix decode kernel (5-128 rows, D <= 128): "about 3e-4"; prefill kernels "1.6e-4 to 3.8e-4" -> 2e-3;
 - ops.linear <= 16 rows, quantized (x rounded to 8 bits): "3e-3 to 8e-3 ... 8.9e-3 at K = 64" -> 2e-2, and output by
   output err/(|x|.|w|) <= max(1e-3, 0.05/sqrt(K)) ("at most 1e-3 at model sizes ... shrinks about as 1/sqrt(K)");
 - <= 16 rows, f16 weights: f32 sums "about 1e-7", the cooperative-matrix kernel "about 2e-4" -> 1e-3 (and 1e-3 of
   |x|.|w|: x rounded to f16 is at most 2^-11 of each term);
 - <= 16 rows, bf16 weights: the docs give no figure; x rounded to bf16 at worst is 2^-8 of each term -> 8e-3 / 4e-3;
 - past 16 rows, quantized and f16: "about 3e-4 ... up to 5e-4" -> 2e-3 / 1.5e-3 (x and weights rounded to f16);
   bf16: "about 2e-3" -> 8e-3 / 4e-3.
Masks: the reference reads each mask value as the docs say every kernel does (below -65504: -inf; above 65504: 65504;
else rounded to f16).

Timing (docs/ops.md "Timing an op yourself"): resident operands, resident out=, warm-up; coopdsl waited (median of
calls each returning with the result), coopdsl batch (calls recorded in one runtime.batch, total / calls), torch
waited (call + torch.cuda.synchronize(), median) and stream (calls back to back, one sync, / calls).  A ratio
coopdsl/torch (waited) above 1.5 is marked CLIFF; a wrong result MISMATCH; an exception FAILED.
"""
import time

T0 = time.time()

import argparse  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ops_unseen_models as H  # noqa: E402  (the harness: Ctx, Report, timing, dequant64, Gen)

import coopdsl.ops.gemv as gemv  # noqa: E402
from coopdsl import ops, runtime  # noqa: E402
from coopdsl.ops import attention_nv2  # noqa: E402

torch = H.torch
TDEV = H.TDEV
SMS_DEFAULT = 132

# ====================================================================== helpers


class Gen(H.Gen):
    """H.Gen plus fast 16-bit draws (f16 / bf16 bit patterns tiled from a converted pool): caches of 10^8 values."""

    def __init__(self, seed):
        super().__init__(seed)
        self.p16 = self.pool.astype(np.float16)
        self.pbf = ops.to_bf16(self.pool)

    def fill(self, shape, dt, scale=1.0):
        if dt == "f32" or scale != 1.0:
            a = self.normal(shape, np.float32, scale)
            return a if dt == "f32" else (a.astype(np.float16) if dt == "f16" else ops.to_bf16(a))
        n = int(np.prod(shape))
        self.off = (self.off + 7919) % len(self.pool)
        src = np.roll(self.p16 if dt == "f16" else self.pbf, -self.off)
        out = np.empty(n, src.dtype)
        done = min(n, len(src))
        out[:done] = src[:done]
        while done < n:   # tile by doubling: 10^8 values in a few copies
            c = min(done, n - done)
            out[done:done + c] = out[:c]
            done += c
        return out.reshape(shape)


def values(a, dt):
    """the values an array stands for (bf16 bit patterns -> float32)."""
    return ops.from_bf16(a) if dt == "bf16" else a


def val64(a, dt):
    """float64 values of (part of) an array: bf16 bit patterns are the high 16 bits of an f32 (exact)."""
    if dt == "bf16":
        return (np.asarray(a).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return np.asarray(a).astype(np.float64)


def mask_f16_rule(m):
    """docs/ops.md: every kernel reads a mask value as the f16 it stands for: below -65504 -inf, above 65504 65504,
    anything else rounded to f16."""
    m = np.asarray(m, np.float64)
    r = np.clip(m, -65504.0, 65504.0).astype(np.float16).astype(np.float64)
    r = np.where(m < -65504.0, -np.inf, r)
    return np.where(np.isnan(m), np.nan, r)


def attn_ref(q, k, v, heads, rows, *, causal, window, softcap, scale, mask64, dts=(None, None, None)):
    """float64 softmax(scale q k^T [soft-capped] + mask) v for the given heads and rows (dts: "bf16" for bit
    patterns, converted head by head). mask64 None, (Sq, Skv) or (Hq, Sq, Skv), already read by the f16 rule;
    a row that sees no key gives 0."""
    Hq, Sq, D = q.shape
    Hkv, Skv, _ = k.shape
    g = Hq // Hkv
    i = np.asarray(rows)[:, None]
    j = np.arange(Skv)[None, :]
    seen = np.ones((len(rows), Skv), bool)
    if causal:
        seen &= j <= i + Skv - Sq
    if window is not None:
        seen &= j >= i + Skv - Sq - window + 1
    out = np.zeros((len(heads), len(rows), D))
    for kvh in sorted({h // g for h in heads}):
        kh = val64(k[kvh], dts[1])
        vh = val64(v[kvh], dts[2])
        for a, h in enumerate(heads):
            if h // g != kvh:
                continue
            s = (val64(q[h][rows], dts[0]) @ kh.T) * scale
            if softcap:
                s = softcap * np.tanh(s / softcap)
            if mask64 is not None:
                s = s + (mask64[rows] if mask64.ndim == 2 else mask64[h][rows])
            s = np.where(seen, s, -np.inf)
            mx = s.max(axis=1, keepdims=True)
            ok = np.isfinite(mx)
            p = np.exp(s - np.where(ok, mx, 0.0))
            den = p.sum(axis=1, keepdims=True)
            out[a] = np.where(ok, (p @ vh) / np.where(den > 0, den, 1.0), 0.0)
    return out


def ratio_cell(c, t):
    if not c or not t:
        return ""
    r = c / t
    return f"{r:.2f}" + (" CLIFF" if r > 1.5 else "")


def sm_count(ctx):
    if ctx.cpu:
        return SMS_DEFAULT
    try:
        from coopdsl.ops import device_caps
        return int(device_caps.shader_cores(ctx.dev)) or SMS_DEFAULT
    except Exception:  # noqa: BLE001
        return SMS_DEFAULT


def write(ctx, arr, data):
    """new inputs into an array that stays (docs/ops.md: x.write(...)); numpy arrays on the interpreter in place."""
    if ctx.cpu:
        arr[...] = data
    else:
        arr.write(data)


def tt(a, dt):
    """numpy (f16 / bf16 bits / f32) -> torch tensor on the GPU."""
    if dt == "bf16":
        return torch.from_numpy(np.ascontiguousarray(a).view(np.int16)).to(TDEV).view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(a)).to(TDEV)


# ====================================================================== attention

# name: (Hq, Hkv, D, softcap, window, tiny (Hq, Hkv), tiny window)
AMODELS = {
    "Llama-3.1-405B": (128, 8, 128, 0.0, None, (16, 1), None),
    "Qwen2.5-32B": (40, 8, 128, 0.0, None, (5, 1), None),
    "Qwen2.5-14B": (40, 8, 128, 0.0, None, (5, 1), None),
    "Falcon-7B": (71, 1, 64, 0.0, None, (71, 1), None),
    "StarCoder2-15B": (48, 4, 128, 0.0, 4096, (12, 1), 100),
    "Yi-34B": (56, 8, 128, 0.0, None, (7, 1), None),
    "Phi-2": (32, 32, 80, 0.0, None, (2, 2), None),
    "GPT-2": (12, 12, 64, 0.0, None, (2, 2), None),
    "Gemma-2-9B": (16, 8, 256, 50.0, 4096, (2, 1), 64),
    "MPT-7B": (32, 32, 128, 0.0, None, (2, 2), None),
}


def A(model, kind, Sq, Skv, tSq, tSkv, dts=("f16", "f16", "f16"), out=np.float32, **opt):
    return dict(model=model, kind=kind, Sq=Sq, Skv=Skv, tSq=tSq, tSkv=tSkv, dts=dts, out=out, **opt)


BF = ("bf16", "bf16", "bf16")
DECODE_CASES = [
    A("Llama-3.1-405B", "decode", 1, 131072, 1, 700),                                      # 16 rows: mma
    A("Llama-3.1-405B", "decode", 1, 131072, 1, 700, BF, np.float16),                      # bf16 K/V in mma
    A("Llama-3.1-405B", "spec decode", 2, 65536, 2, 500, ("f32", "bf16", "bf16")),        # 32 rows: mma alone
    A("Llama-3.1-405B", "spec decode", 4, 32768, 4, 400),                                  # 64 rows: the last mma
    A("Llama-3.1-405B", "spec decode", 5, 16384, 5, 300),                                  # 80 rows: prefill kernels
    A("Qwen2.5-32B", "decode", 1, 100000, 1, 650, ("f32", "f16", "f16"), mask="pad"),      # 5 rows + shared mask
    A("Qwen2.5-32B", "spec decode", 3, 65536, 3, 450, BF, np.float16),                     # 15 rows bf16
    A("Qwen2.5-32B", "decode", 1, 32768, 1, 400, ("f16", "f16", "bf16")),                  # k f16, v bf16
    A("Falcon-7B", "decode", 1, 2048, 1, 200),                                             # 71 rows: past 64
    A("Falcon-7B", "decode", 1, 16384, 1, 300, BF),
    A("StarCoder2-15B", "decode", 1, 16384, 1, 300, out=np.float16, window=True),          # 12 rows, window
    A("StarCoder2-15B", "spec decode", 5, 16384, 5, 300, window=True),                     # 60 rows, window
    A("Yi-34B", "decode", 1, 131072, 1, 600, ("f16", "bf16", "bf16")),                     # 7 rows bf16
    A("Yi-34B", "spec decode", 2, 65536, 2, 450, out=np.float16, scale=0.1),               # 14 rows, own scale
    A("Phi-2", "decode", 1, 2048, 1, 250, BF, np.float16),                                 # D 80, 1 row
    A("Phi-2", "spec decode", 4, 2048, 4, 250, mask="pad"),                                # D 80, 4 rows
    A("GPT-2", "decode", 1, 1024, 1, 200, mask="pad"),
    A("GPT-2", "spec decode", 16, 1024, 16, 200),                                          # 16 rows D 64: mma
    A("Gemma-2-9B", "spec decode", 8, 8192, 8, 300, BF, window=True),                      # 16 rows D 256: lanes
    A("Gemma-2-9B", "decode", 1, 65536, 1, 500, out=np.float16, window=True),
    A("Gemma-2-9B", "spec decode", 9, 8192, 9, 300, window=True),                          # 18 rows D 256: prefill
    A("MPT-7B", "decode", 1, 8192, 1, 300, mask="alibi"),                                  # per-head f32 mask
]
PREFILL_CASES = [
    A("Llama-3.1-405B", "prefill", 1031, 1031, 67, 67, BF),
    A("Qwen2.5-14B", "chunked prefill", 777, 8969, 37, 301, BF, np.float16),
    A("Yi-34B", "prefill", 2049, 2049, 81, 81, out=np.float16),
    A("Falcon-7B", "prefill", 1999, 1999, 99, 99),
    A("Phi-2", "prefill", 2047, 2047, 77, 77, out=np.float16),
    A("GPT-2", "prefill", 1023, 1023, 71, 71, mask="pad"),
    A("StarCoder2-15B", "chunked prefill", 512, 16384, 40, 300, window=True),
    A("Gemma-2-9B", "prefill", 4500, 4500, 90, 90, BF, window=True),
    A("MPT-7B", "prefill", 777, 777, 69, 69, mask="alibi", causal=False),                 # bidirectional ALiBi
]


def expected_attn_path(g, Sq, D, Hkv=1):
    """the kernel docs/ops.md says runs (a device with NV2 and 16x16x16 f16 matrices: the H200, the interpreter);
    past 16 rows the cooperative-matrix decode kernel to 128 rows while Hkv * ceil(rows / 16) <= 2 * Hq * ceil(Sq / 64)
    (docs/ops.md "Decoding", as it reads since the fixes this check led to; it said 64 rows before)."""
    rows = g * Sq
    if rows <= 16:
        return "lanes" if (rows <= 4 or D > 128) else "mma"
    if rows <= 128 and D <= 128 and Hkv * -(-rows // 16) <= 2 * (g * Hkv) * -(-Sq // 64):
        return "mma"
    return "nv2"


def actual_attn_path(names):
    if any(n.startswith("attention_decode_mma") for n in names):
        return "mma"
    if any(re.match(r"attention_decode_d\d+_r\d+", n) for n in names):
        return "lanes"
    if any("flash_attn_cm2" in n for n in names):
        return "nv2"
    return "other"


def make_mask(kind, Hq, Sq, Skv, causal):
    if kind == "pad":      # left padding of a batched prompt: the first keys hidden from every query (shared)
        m = np.zeros((Sq, Skv), np.float16)
        m[:, :max(1, Skv // 7)] = -np.inf
        return m
    if kind == "alibi":    # per-head ALiBi bias, float32 (values that are not f16 numbers)
        slopes = 2.0 ** (-8.0 * np.arange(1, Hq + 1) / Hq)
        i = np.arange(Sq)[:, None] + (Skv - Sq)
        j = np.arange(Skv)[None, :]
        dist = (i - j) if causal else np.abs(i - j)
        return (-slopes[:, None, None] * np.maximum(dist, 0)[None]).astype(np.float32)
    raise ValueError(kind)


def torch_attention(tq, tk, tv, g, Sq, Skv, causal, window, softcap, scale, tmask):
    """fastest faithful torch call: SDPA (enable_gqa, else K/V repeated) with no mask / is_causal /
    causal_lower_right / bool / additive mask; eager for the soft-cap (as HF Gemma-2)."""
    sdpa = torch.nn.functional.scaled_dot_product_attention
    dev = tq.device
    i = torch.arange(Sq, device=dev)[:, None]
    j = torch.arange(Skv, device=dev)[None, :]
    allow = torch.ones(Sq, Skv, dtype=torch.bool, device=dev)
    if causal:
        allow &= j <= i + (Skv - Sq)
    if window is not None:
        allow &= j >= i + (Skv - Sq) - window + 1
    addm = None
    if tmask is not None:
        addm = tmask.float().masked_fill(~allow, float("-inf"))[None]   # (1, 1 or Hq, Sq, Skv)
    if softcap:
        tk2, tv2 = tk.repeat_interleave(g, dim=1), tv.repeat_interleave(g, dim=1)
        am = addm if addm is not None else torch.zeros(Sq, Skv, device=dev).masked_fill(~allow, float("-inf"))

        def eager():
            s = (tq @ tk2.transpose(-1, -2)).float() * scale
            s = softcap * torch.tanh(s / softcap) + am
            return torch.softmax(s, dim=-1).to(tq.dtype) @ tv2
        eager()
        return eager, "torch eager (soft-cap)"
    variants = []
    if addm is not None:
        variants.append(("additive mask", {"attn_mask": addm.to(tq.dtype)}))
    elif bool(allow.all()):
        variants.append(("no mask", {}))
    elif causal and Sq == Skv and window is None:
        variants.append(("is_causal", {"is_causal": True}))
    elif causal and window is None:
        try:
            from torch.nn.attention.bias import causal_lower_right
            variants.append(("causal_lower_right", {"attn_mask": causal_lower_right(Sq, Skv)}))
        except Exception:  # noqa: BLE001
            pass
    if addm is None and not bool(allow.all()):
        variants.append(("bool mask", {"attn_mask": allow}))
    return H.first_sdpa(sdpa, tq, tk, tv, g, scale, variants)


def attention_case(ctx, rep, c):
    Hq, Hkv, D, softcap, mwin, theads, twin = AMODELS[c["model"]]
    Sq, Skv = c["Sq"], c["Skv"]
    if ctx.tiny:
        (Hq, Hkv), mwin, Sq, Skv = theads, twin, c["tSq"], c["tSkv"]
    window = mwin if c.get("window") else None
    causal = c.get("causal", True)
    scale = c.get("scale")
    mkind = c.get("mask")
    qdt, kdt, vdt = c["dts"]
    out_dtype = c["out"]
    g = Hq // Hkv
    name = (f"attn {c['kind']} {c['model']} {Hq}/{Hkv}h ({g * Sq} rows a K/V head) D{D} Sq{Sq} Skv{Skv}"
            + (" causal" if causal else " non-causal") + (f" win{window}" if window else "")
            + (f" softcap{softcap:g}" if softcap else "") + (f" mask:{mkind}" if mkind else "")
            + (f" scale{scale:g}" if scale else "")
            + f" q {qdt} k {kdt} v {vdt}, {np.dtype(out_dtype).name} out")
    rec = {"case": name}
    arrays = []
    if ctx.left() < 3:
        rec["check"] = "SKIPPED (time budget)"
        rep.add(**rec)
        return
    try:
        q = ctx.gen.fill((Hq, Sq, D), qdt)
        k = ctx.gen.fill((Hkv, Skv, D), kdt)
        v = ctx.gen.fill((Hkv, Skv, D), vdt)
        mask = make_mask(mkind, Hq, Sq, Skv, causal) if mkind else None
        mask64 = mask_f16_rule(mask) if mask is not None else None
        opts = dict(causal=causal, window=window, softcap=softcap, out_dtype=out_dtype)
        if scale is not None:
            opts["scale"] = scale
        dq, dk, dv = ctx.put(q), ctx.put(k), ctx.put(v)
        out = ctx.zeros(q.shape, out_dtype)
        arrays += [dq, dk, dv, out]
        if mask is not None:
            dm = ctx.put(mask)
            arrays.append(dm)
            opts["mask"] = dm

        def call():
            return ops.attention(dq, dk, dv, out=out, **opts, **ctx.kw())

        with attention_nv2.recording() as launched:
            call()
        names = list(dict.fromkeys(kern.name for kern, *_ in launched))
        exp, act = expected_attn_path(g, Sq, D, Hkv), actual_attn_path(names)
        rec["kernel path"] = " + ".join(names) + ("" if exp == act else f" (PATH differs: docs say {exp})")
        got = ctx.get(out)
        heads = sorted({0, 1 % Hq, g - 1, g % Hq, Hq // 2, Hq - 1})
        if Sq <= 32:
            rows = list(range(Sq))
        else:
            rows = {0, 1, Sq // 2, Sq - 2, Sq - 1} | set(range(0, Sq, max(1, Sq // 20)))
            if window is not None:
                rows |= {r for r in (window - 2, window - 1, window, window + 1) if 0 <= r < Sq}
            rows = sorted(rows)
        sc = 1.0 / math.sqrt(D) if scale is None else scale
        ref = attn_ref(q, k, v, heads, rows, causal=causal, window=window, softcap=softcap, scale=sc,
                       mask64=mask64, dts=(qdt, kdt, vdt))
        sub = got[heads][:, rows].astype(np.float64)
        err = float(np.abs(sub - ref).max() / np.abs(ref).max())
        finite = bool(np.isfinite(got).all())
        if act == "lanes":
            tol = 1e-3 if out_dtype == np.float16 else 2e-5
        else:
            tol = 2e-3
        ok = err <= tol and finite
        rec["check"] = (f"{'OK' if ok else 'MISMATCH'} err/max {err:.1e} (tol {tol:.0e}; {len(heads)} heads x "
                        f"{len(rows)} rows)" + ("" if finite else " NON-FINITE output"))
        seen = Skv if window is None else min(Skv, window + Sq - 1)
        kvb = {"f16": 2, "bf16": 2}
        kv_bytes = Hkv * seen * D * (kvb[kdt] + kvb[vdt])
        cw = H.time_waited(call, ctx.warm, ctx.calls, ctx.warm_s)
        rec["coopdsl waited us"] = H.us(cw)
        notes = []
        if not ctx.cpu:
            try:
                rec["coopdsl batch us"] = H.us(H.time_batch(ctx.dev, call, ctx.calls))
            except Exception as ex:  # noqa: BLE001
                notes.append(f"batch: {type(ex).__name__}: {str(ex)[:100]}")
        else:
            rec["coopdsl batch us"] = "n/a (interpreter)"
        decode = "decode" in c["kind"]
        if not ctx.cpu:
            if decode:
                rec["coopdsl GB/s"] = H.gbs(kv_bytes, cw)
            else:
                i = np.arange(Sq)
                hi = np.minimum(i + Skv - Sq, Skv - 1) if causal else np.full(Sq, Skv - 1)
                lo = np.zeros(Sq, np.int64) if window is None else np.maximum(i + Skv - Sq - window + 1, 0)
                pairs = float(np.clip(hi - lo + 1, 0, None).sum())
                notes.append(f"coopdsl {4.0 * Hq * D * pairs / (cw * 1e-6) / 1e12:.1f} TFLOP/s (seen pairs)")
        if ctx.torch:
            try:
                tdt_name = kdt if kdt == vdt else "f16"
                tq, tk, tv = tt(q, qdt)[None], tt(k, kdt)[None], tt(v, vdt)[None]
                tdt = tk.dtype if kdt == vdt else torch.float16
                conv = []
                if tq.dtype != tdt:
                    tq = tq.to(tdt)
                    conv.append(f"q to {tdt_name}")
                if tk.dtype != tdt:
                    tk = tk.to(tdt)
                    conv.append("k to f16")
                if tv.dtype != tdt:
                    tv = tv.to(tdt)
                    conv.append("v to f16")
                tmask = None
                if mask64 is not None:
                    tmask = torch.from_numpy(mask64.astype(np.float32)).to(TDEV)
                tcall, tnote = torch_attention(tq, tk, tv, g, Sq, Skv, causal, window, softcap, sc, tmask)
                to = tcall()[0].float().cpu().numpy()
                terr = float(np.abs(to[heads][:, rows] - ref).max() / np.abs(ref).max())
                tw, ts = H.torch_time(tcall, ctx.warm, ctx.calls)
                rec["torch waited us"] = H.us(tw)
                rec["torch stream us"] = H.us(ts)
                rec["ratio coopdsl/torch (waited)"] = ratio_cell(cw, tw)
                if decode:
                    rec["torch GB/s"] = H.gbs(kv_bytes, tw)
                notes.append(f"torch: {tnote}" + (f" ({', '.join(conv)})" if conv else "") + f", err/max {terr:.1e}")
                del tq, tk, tv, tcall, tmask
                torch.cuda.empty_cache()
            except Exception as ex:  # noqa: BLE001
                notes.append(f"torch failed: {type(ex).__name__}: {str(ex)[:120]}")
        rec["note"] = "; ".join(notes)
        rep.add(**rec)
    except Exception as ex:  # noqa: BLE001
        H.fail_row(ctx, rep, rec, ex)
    finally:
        H.free(arrays)
        gc.collect()


# ====================================================================== linear

D_ROWS = [1, 2, 3, 5, 8, 16]
# (model layer, M (out), K (in), tiny M, tiny K, formats, rows (tiny: past 256 stays past 256)); tiny M is a multiple of
# 128 where the full M is and f16/bf16 rows past 256 run (ops.matmul's tiled kernel), else odd; Falcon-7B's down
# (4544, not a multiple of 128) keeps the general kernel in both
LINEAR = [
    ("Qwen2.5-32B up", 27648, 5120, 256, 768, ["q4_0", "q8_0", "q4_K", "f16", "bf16"], D_ROWS + [77, 512, 2048]),
    ("Qwen2.5-32B down", 5120, 27648, 128, 1024, ["q4_0", "q4_K", "bf16"], [1, 2, 5, 16, 512]),
    ("Qwen2.5-14B up", 13824, 5120, 131, 512, ["q8_0"], [1, 3, 8, 16]),
    ("Falcon-7B up", 18176, 4544, 256, 320, ["q4_0", "q4_K", "f16", "bf16"], D_ROWS + [77, 512]),
    ("Falcon-7B down", 4544, 18176, 192, 768, ["q4_K", "bf16"], [1, 3, 8, 16, 512]),
    ("Falcon-7B qkv", 4672, 4544, 146, 320, ["q4_0"], [1, 5, 16]),
    ("Llama-3.1-405B o", 16384, 16384, 257, 1024, ["q4_0", "q4_K", "bf16"], [1, 3, 8, 16, 77]),
    ("Yi-34B up", 20480, 7168, 163, 512, ["q4_K", "q8_0"], [1, 2, 5, 16, 2048]),
    ("StarCoder2-15B down", 6144, 24576, 97, 768, ["q4_0", "f16"], [1, 3, 8, 16]),
    ("Phi-2 up", 10240, 2560, 128, 256, ["f16", "bf16"], D_ROWS + [77, 512, 2048]),
    ("GPT-2 up", 3072, 768, 128, 256, ["q8_0", "f16"], [1, 2, 5, 16, 77, 512]),
    ("Gemma-2-9B up", 14336, 3584, 128, 512, ["bf16", "q4_0"], [1, 3, 8, 16, 512]),
]
TINY_ROWS = {2048: 300, 512: 264}


def linear_tols(fmt, n, K):
    """(err/max, err/(|x|.|w|)) from docs/ops.md (see the module docstring)."""
    if n <= 16:
        if fmt in ("q4_0", "q8_0", "q4_K"):
            return 2e-2, max(1e-3, 0.05 / math.sqrt(K))
        if fmt == "f16":
            return 1e-3, 1e-3
        return 8e-3, 4e-3
    if fmt == "bf16":
        return 8e-3, 4e-3
    return 2e-3, 1.5e-3


def linear_path(ctx, fmt, n, M, K, dw, dx, y):
    gf = fmt  # gemv's fmt names the weights' format always ("f16" for float16)
    try:
        if n <= 16:
            how = gemv.choice(gf, n, None, M, K, None if ctx.cpu else ctx.dev)
            s = f"gemv {how}"
            try:
                launches, _ = gemv.plan(dw, dx, gf, out=y, device="cpu" if ctx.cpu else ctx.dev)
                s += ": " + " + ".join(dict.fromkeys(kern.name for kern, *_ in launches))
            except Exception as ex:  # noqa: BLE001
                s += f" (plan: {type(ex).__name__}: {str(ex)[:60]})"
            return s
        if fmt in ("f16", "bf16") and n > 256:
            tiled = M % 128 == 0 and K % 32 == 0
            return "ops.matmul(transpose_b) " + ("tiled kernel" if tiled else "general kernel (N % 128 != 0)")
        try:
            from coopdsl.ops.linear import prefill_choice
            sms = sm_count(ctx)
            return f"mul_mm_cm2 prefill_choice {prefill_choice(fmt, M, n, K, sms)} (at {sms} SMs)"
        except Exception as ex:  # noqa: BLE001
            return f"mul_mm_cm2 (prefill_choice: {type(ex).__name__})"
    except Exception as ex:  # noqa: BLE001
        return f"choice: {type(ex).__name__}: {str(ex)[:80]}"


def linear_refusal(ctx, rep, label, M, K, fmt, rows_list):
    """q4_K with K not a multiple of 256 (Falcon-7B's 4544): docs/ops.md gives the message, for K = 896:
    `linear: x's K = 896 is not a multiple of 256 (q4_K weights: blocks of 256 values)`; ops.quantize refuses too."""
    want = f"linear: x's K = {K} is not a multiple of 256 (q4_K weights: blocks of 256 values)"
    try:
        ops.quantize(ctx.gen.normal((4, K), np.float32), fmt)
        qmsg, q_ok = "ops.quantize ACCEPTED", False
    except ValueError as ex:
        qmsg, q_ok = f"ops.quantize: ValueError '{str(ex)[:140]}'", (str(K) in str(ex) and "256" in str(ex))
    except Exception as ex:  # noqa: BLE001
        qmsg, q_ok = f"ops.quantize: {type(ex).__name__} '{str(ex)[:140]}'", False
    wb = ops.quantize(ctx.gen.normal((M, K), np.float32, 0.02), "q4_0")   # bytes of K values at 0.5625 B each
    arrays = []
    try:
        dw = ctx.put(wb)
        arrays.append(dw)
        for n in rows_list:
            rec = {"case": f"linear {label} {fmt} {n}x{K} @ {M}x{K}^T"}
            x = ctx.gen.normal((n, K), np.float32 if n <= 16 else np.float16)
            dx, y = ctx.put(x), ctx.zeros((n, M), np.float32)
            arrays += [dx, y]
            try:
                ops.linear(dx, dw, fmt, out=y, **ctx.kw())
                rec["check"] = "MISMATCH: not refused"
            except ValueError as ex:
                m = str(ex)
                rec["check"] = ("REFUSED as documented" if (m == want and q_ok) else
                                "MISMATCH: refused, but not with the documented message" if q_ok else
                                "MISMATCH: ops.quantize did not refuse K")
                rec["note"] = f"ops.linear: ValueError '{m[:160]}'" + ("" if m == want else f" (docs: '{want}')")
            except Exception as ex:  # noqa: BLE001
                rec["check"] = f"FAILED {type(ex).__name__} (expected ValueError)"
                rec["note"] = str(ex)[:200]
            rec["note"] = (rec.get("note", "") + "; " + qmsg).strip("; ")
            rep.add(**rec)
    finally:
        H.free(arrays)


def linear_weight(ctx, rep, label, M, K, tM, tK, fmt, rows_list):
    if ctx.tiny:
        M, K = tM, tK
        rows_list = [TINY_ROWS.get(n, n) for n in rows_list]
    if ctx.left() < 4:
        rep.add(case=f"linear {label} {fmt} {M}x{K}", check="SKIPPED (time budget)")
        return
    if fmt == "q4_K" and K % 256:
        linear_refusal(ctx, rep, label, M, K, fmt, rows_list)
        return
    arrays = []
    tw = None
    try:
        R = min(M, H.unique_rows(K, ctx.tiny))
        wu = ctx.gen.normal((R, K), np.float32, 0.02)   # real weights are ~0.02
        lib_note = ""
        if fmt == "f16":
            wq = wu.astype(np.float16)
            wdeq = wq.astype(np.float64)
        elif fmt == "bf16":
            wq = ops.to_bf16(wu)                        # docs: bit patterns with fmt="bf16"
            wdeq = ops.from_bf16(wq).astype(np.float64)
        else:
            wq = ops.quantize(wu, fmt)
            wdeq = H.dequant64(wq, fmt, K)
            lib = ops.dequantize(wq[:5], fmt, K)
            if not np.array_equal(lib, wdeq[:5].astype(np.float32)):
                lib_note = f"ops.dequantize DIFFERS from the docs' layout by {np.abs(lib - wdeq[:5]).max():.1e}"
        reps = -(-M // R)
        w = np.ascontiguousarray(np.tile(wq, (reps, 1))[:M])   # row r is unique row r % R
        wbytes = w.nbytes
        dw = ctx.put(w)
        arrays.append(dw)
        del w
        cols = np.unique(np.r_[0, 1, R - 1, R, M - 2, M - 1, np.linspace(0, M - 1, 150).astype(int)])
        cols = cols[(cols >= 0) & (cols < M)]
        wsel = wdeq[cols % R]
        if ctx.torch:
            if fmt == "bf16":
                tu = tt(wq, "bf16")
            else:
                tu = torch.from_numpy(wdeq.astype(np.float16)).to(TDEV)
            tw = tu[torch.arange(M, device=TDEV) % R].contiguous()
            del tu
        api_fmt = None if fmt == "f16" else fmt
        for n in rows_list:
            rec = {"case": f"linear {label} {fmt} {n}x{K} @ {M}x{K}^T"}
            if ctx.left() < 1:
                rec["check"] = "SKIPPED (time budget)"
                rep.add(**rec)
                continue
            try:
                # docs: past 16 rows a resident x must be float16 (bf16 bit patterns for bf16 weights)
                if n <= 16:
                    xdt = "f32"
                else:
                    xdt = "bf16" if fmt == "bf16" else "f16"
                x = ctx.gen.fill((n, K), xdt)
                x64 = values(x, xdt).astype(np.float64)
                dx = ctx.put(x)
                y = ctx.zeros((n, M), np.float32)
                arrays += [dx, y]

                def call(dx=dx, y=y):
                    return ops.linear(dx, dw, api_fmt, out=y, **ctx.kw())
                call()
                yall = ctx.get(y)
                finite = bool(np.isfinite(yall).all())
                got = yall[:, cols].astype(np.float64)
                ref = x64 @ wsel.T
                err = float(np.abs(got - ref).max() / np.abs(ref).max())
                nat = float((np.abs(got - ref) / (np.abs(x64) @ np.abs(wsel).T)).max())
                tol_max, tol_nat = linear_tols(fmt, n, K)
                ok = err <= tol_max and nat <= tol_nat and not lib_note and finite
                rec["check"] = (f"{'OK' if ok else 'MISMATCH'} err/max {err:.1e} err/(|x|.|w|) {nat:.1e} "
                                f"(tol {tol_max:.0e}, {tol_nat:.0e}; {len(cols)} of {M} outputs; x {xdt})"
                                + (f"; {lib_note}" if lib_note else "") + ("" if finite else "; NON-FINITE"))
                cw = H.time_waited(call, ctx.warm, ctx.calls, ctx.warm_s)
                rec["coopdsl waited us"] = H.us(cw)
                notes = []
                decode = n <= 16
                if decode and not ctx.cpu:
                    rec["coopdsl GB/s"] = H.gbs(wbytes, cw)
                if not ctx.cpu:
                    try:
                        cb = H.time_batch(ctx.dev, call, ctx.calls)
                        rec["coopdsl batch us"] = H.us(cb)
                        if decode:
                            rec["coopdsl GB/s"] += f" ({H.gbs(wbytes, cb)} batch)"
                    except Exception as ex:  # noqa: BLE001
                        notes.append(f"batch: {type(ex).__name__}: {str(ex)[:100]}")
                    if not decode:
                        notes.append(f"coopdsl {2.0 * n * M * K / (cw * 1e-6) / 1e12:.1f} TFLOP/s")
                else:
                    rec["coopdsl batch us"] = "n/a (interpreter)"
                rec["kernel path"] = linear_path(ctx, api_fmt or "f16", n, M, K, dw, dx, y)
                if tw is not None:
                    try:
                        tx = tt(x, xdt).to(tw.dtype)

                        def tcall(tx=tx):
                            return torch.matmul(tx, tw.T)
                        t_w, t_s = H.torch_time(tcall, ctx.warm, ctx.calls)
                        rec["torch waited us"] = H.us(t_w)
                        rec["torch stream us"] = H.us(t_s)
                        rec["ratio coopdsl/torch (waited)"] = ratio_cell(cw, t_w)
                        tbytes = M * K * 2
                        if decode:
                            rec["torch GB/s"] = f"{H.gbs(tbytes, t_w)} ({H.gbs(tbytes, t_s)} stream)"
                        else:
                            notes.append(f"torch {2.0 * n * M * K / (t_w * 1e-6) / 1e12:.1f} TFLOP/s")
                        tdesc = "bf16 matmul" if fmt == "bf16" else "f16 matmul" + (
                            "" if fmt == "f16" else " of the dequantized weights")
                        notes.append("torch: " + tdesc)
                    except Exception as ex:  # noqa: BLE001
                        notes.append(f"torch failed: {type(ex).__name__}: {str(ex)[:100]}")
                if decode:
                    notes.append(f"weights {wbytes / 1e6:.1f} MB")
                rec["note"] = "; ".join(notes)
                rep.add(**rec)
            except Exception as ex:  # noqa: BLE001
                H.fail_row(ctx, rep, rec, ex)
            finally:
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
        H.free(arrays)
        tw = None
        if ctx.torch:
            torch.cuda.empty_cache()
        gc.collect()


# ====================================================================== a decoding loop

# Qwen2.5-14B-like decoding step, one token: per layer q, k, v projections, attention against the layer's cache,
# o projection, gate, up, down: 8 distinct ops calls a layer on resident arrays, each layer its own arrays.
LOOP = dict(model="Qwen2.5-14B", Hq=40, Hkv=8, D=128, hidden=5120, inter=13824, cache=8192)
LOOP_TINY = dict(model="Qwen2.5-14B (tiny)", Hq=5, Hkv=1, D=64, hidden=256, inter=512, cache=200)
LOOP_RUNS = [("q4_0", 8, 2), ("f16", 4, 2)]   # (format, layers full, layers tiny)


def decode_loop(ctx, rep, fmt, layers):
    cfg = LOOP_TINY if ctx.tiny else LOOP
    Hq, Hkv, D, Hd, Hi, S = cfg["Hq"], cfg["Hkv"], cfg["D"], cfg["hidden"], cfg["inter"], cfg["cache"]
    label = f"loop {cfg['model']} {fmt}, {layers} layers x 8 calls"
    if ctx.left() < 10:
        rep.add(case=label, check="SKIPPED (time budget)")
        return
    kinds = [("q", Hq * D, Hd, "x"), ("k", Hkv * D, Hd, "x"), ("v", Hkv * D, Hd, "x"), ("attn", None, None, "qa"),
             ("o", Hd, Hq * D, "xo"), ("gate", Hi, Hd, "x"), ("up", Hi, Hd, "x"), ("down", Hd, Hi, "h")]
    arrays = []
    tstate = {}
    try:
        api_fmt = None if fmt == "f16" else fmt
        W = {}   # kind -> (R, deq64 unique rows, tiled numpy weights)
        for kind, M, K, _ in kinds:
            if M is None:
                continue
            R = min(M, H.unique_rows(K, ctx.tiny))
            wu = ctx.gen.normal((R, K), np.float32, 0.02)
            if fmt == "f16":
                wq = wu.astype(np.float16)
                wd = wq.astype(np.float64)
            else:
                wq = ops.quantize(wu, fmt)
                wd = H.dequant64(wq, fmt, K)
            W[kind] = (R, wd, np.ascontiguousarray(np.tile(wq, (-(-M // R), 1))[:M]))
        Ls = []
        for _ in range(layers):
            L = {"w": {}, "y": {}}
            for kind, M, _K, _ in kinds:
                if M is None:
                    continue
                L["w"][kind] = ctx.put(W[kind][2])
                L["y"][kind] = ctx.zeros((1, M), np.float32)
            L["kc"] = ctx.put(ctx.gen.fill((Hkv, S, D), "f16"))
            L["vc"] = ctx.put(ctx.gen.fill((Hkv, S, D), "f16"))
            L["y"]["attn"] = ctx.zeros((Hq, 1, D), np.float32)
            L["in"] = {"x": ctx.zeros((1, Hd), np.float32), "xo": ctx.zeros((1, Hq * D), np.float32),
                       "h": ctx.zeros((1, Hi), np.float32), "qa": ctx.zeros((Hq, 1, D), np.float32)}
            arrays += list(L["w"].values()) + list(L["y"].values()) + list(L["in"].values()) + [L["kc"], L["vc"]]
            Ls.append(L)
        kvals = [(ctx.get(L["kc"]), ctx.get(L["vc"])) for L in Ls]
        shapes = {"x": (1, Hd), "xo": (1, Hq * D), "h": (1, Hi), "qa": (Hq, 1, D)}

        def new_inputs():
            data = [{key: ctx.gen.fill(shp, "f32", 1.0) for key, shp in shapes.items()} for _ in Ls]
            return data

        def write_inputs(data):
            for L, d in zip(Ls, data):
                for key, arr in L["in"].items():
                    write(ctx, arr, d[key])

        calls = []   # (kind, layer index, fn)
        for li, L in enumerate(Ls):
            for kind, _M, _K, src in kinds:
                if kind == "attn":
                    def fn(L=L):
                        return ops.attention(L["in"]["qa"], L["kc"], L["vc"], causal=True, out=L["y"]["attn"],
                                             **ctx.kw())
                else:
                    def fn(L=L, kind=kind, src=src):
                        return ops.linear(L["in"][src], L["w"][kind], api_fmt, out=L["y"][kind], **ctx.kw())
                calls.append((kind, li, fn))

        def step():
            for _, _, fn in calls:
                fn()

        def check(data):
            """every call's output against float64: {kind: (worst err/max, worst err/(|x|.|w|), ok)}."""
            res = {}
            for li, (L, d) in enumerate(zip(Ls, data)):
                for kind, M, K, src in kinds:
                    got = ctx.get(L["y"][kind]).astype(np.float64)
                    if kind == "attn":
                        kk, vv = kvals[li]
                        ref = attn_ref(d["qa"], kk, vv, list(range(Hq)), [0], causal=True, window=None, softcap=0.0,
                                       scale=1.0 / math.sqrt(D), mask64=None)
                        e = float(np.abs(got - ref).max() / np.abs(ref).max())
                        n_ = 0.0
                        tol = (2e-3, 1.0) if expected_attn_path(Hq // Hkv, 1, D) != "lanes" else (2e-5, 1.0)
                    else:
                        R, wd, _ = W[kind]
                        x64 = d[src].astype(np.float64)
                        idx = np.arange(M) % R
                        ref = (x64 @ wd.T)[:, idx]
                        mag = (np.abs(x64) @ np.abs(wd).T)[:, idx]
                        e = float(np.abs(got - ref).max() / np.abs(ref).max())
                        n_ = float((np.abs(got - ref) / mag).max())
                        tol = linear_tols(fmt, 1, K)
                    ok = e <= tol[0] and n_ <= tol[1] and bool(np.isfinite(got).all())
                    pe, pn, pok, _ = res.get(kind, (0.0, 0.0, True, tol))
                    res[kind] = (max(pe, e), max(pn, n_), pok and ok, tol)
            return res

        # 1. waited calls: the first step plans, the second records the kept command buffers, the third replays
        dA = new_inputs()
        write_inputs(dA)
        for _ in range(3 if not ctx.cpu else 1):
            step()
        resA = check(dA)
        # 2. waited timing, each call timed alone
        nsteps = 1 if ctx.cpu else 5
        per = {kind: [] for kind, *_ in kinds}
        t_step = []
        for _ in range(nsteps):
            t0 = time.perf_counter()
            for kind, _, fn in calls:
                t = time.perf_counter()
                fn()
                per[kind].append(time.perf_counter() - t)
            t_step.append(time.perf_counter() - t0)
        waited_call = float(np.median(t_step)) / len(calls) * 1e6
        # 3. inside runtime.batch: new inputs written in the batch, then the step; checked after the batch
        resB, batch_call, bnote = None, None, ""
        if not ctx.cpu:
            dB = new_inputs()
            with runtime.batch(ctx.dev) as b:
                write_inputs(dB)
                step()
            resB = check(dB)
            bnote = f"batch of one step: {b.launches} launches for {len(calls)} calls"
            nb = 5
            t = time.perf_counter()
            with runtime.batch(ctx.dev):
                for _ in range(nb):
                    step()
            batch_call = (time.perf_counter() - t) / (nb * len(calls)) * 1e6
        # 4. the step captured once as a graph (runtime.graph.capture: one submission a step), replayed after new
        # inputs are written outside it; checked after the replay, timed over replays (each waited)
        resG, graph_call = None, None
        if not ctx.cpu:
            from coopdsl.runtime import graph as rgraph

            g = rgraph.capture(ctx.dev, step)
            if g is None:
                bnote += "; graph: not kept"
            else:
                try:
                    dG = new_inputs()
                    write_inputs(dG)
                    if g.run():
                        resG = check(dG)
                        ng = 5
                        t = time.perf_counter()
                        for _ in range(ng):
                            g.run()
                        graph_call = (time.perf_counter() - t) / (ng * len(calls)) * 1e6
                finally:
                    g.release()
        # 5. torch: the same step (f16 weights, f16 activations, SDPA with enable_gqa)
        tper, t_stream_call, t_wait_call = {}, None, None
        if ctx.torch:
            try:
                tW = {kind: torch.from_numpy(W[kind][1].astype(np.float16)).to(TDEV) for kind in W}
                tls = []
                for li in range(layers):
                    tl = {kind: tW[kind][torch.arange(M, device=TDEV) % W[kind][0]].contiguous()
                          for kind, M, K, _ in kinds if M is not None}
                    tl["kc"] = tt(kvals[li][0], "f16")[None]
                    tl["vc"] = tt(kvals[li][1], "f16")[None]
                    tl["in"] = {key: tt(dA[li][key].astype(np.float16), "f16") for key in shapes}
                    tl["in"]["qa"] = tl["in"]["qa"].reshape(1, Hq, 1, D)
                    tls.append(tl)
                tstate["tls"] = tls
                sdpa = torch.nn.functional.scaled_dot_product_attention
                tcalls = []
                for tl in tls:
                    for kind, _M, _K, src in kinds:
                        if kind == "attn":
                            def f(tl=tl):
                                return sdpa(tl["in"]["qa"], tl["kc"], tl["vc"], enable_gqa=True)
                        else:
                            def f(tl=tl, kind=kind, src=src):
                                return torch.matmul(tl["in"][src], tl[kind].T)
                        tcalls.append((kind, f))
                for _ in range(3):
                    for _, f in tcalls:
                        f()
                torch.cuda.synchronize()
                tper = {kind: [] for kind, *_ in kinds}
                tsteps = []
                for _ in range(nsteps):
                    t0 = time.perf_counter()
                    for kind, f in tcalls:
                        t = time.perf_counter()
                        f()
                        torch.cuda.synchronize()
                        tper[kind].append(time.perf_counter() - t)
                    tsteps.append(time.perf_counter() - t0)
                t_wait_call = float(np.median(tsteps)) / len(tcalls) * 1e6
                ts = []
                for _ in range(nsteps):
                    t = time.perf_counter()
                    for _, f in tcalls:
                        f()
                    torch.cuda.synchronize()
                    ts.append(time.perf_counter() - t)
                t_stream_call = float(np.median(ts)) / len(tcalls) * 1e6
            except Exception as ex:  # noqa: BLE001
                tper = {}
                bnote += f"; torch failed: {type(ex).__name__}: {str(ex)[:100]}"
        # rows
        all_ok = True
        for kind, M, K, _ in kinds:
            eA, nA, okA, tol = resA[kind]
            s = f"waited: err/max {eA:.1e}" + (f" err/(|x|.|w|) {nA:.1e}" if kind != "attn" else "")
            ok = okA
            if resB is not None:
                eB, nB, okB, _ = resB[kind]
                s += f"; in batch after x.write: err/max {eB:.1e}"
                ok = ok and okB
            if resG is not None:
                eG, _, okG, _ = resG[kind]
                s += f"; graph replay after x.write: err/max {eG:.1e}"
                ok = ok and okG
            all_ok &= ok
            shape = (f"{M}x{K}" if M else f"{Hq}/{Hkv}h D{D} Skv{S}")
            cw = float(np.median(per[kind])) * 1e6
            rec = {"case": f"{label}: {kind} ({shape}) x{layers}",
                   "check": f"{'OK' if ok else 'MISMATCH'} {s} (tol {tol[0]:.0e})",
                   "coopdsl waited us": H.us(cw)}
            if ctx.cpu:
                rec["coopdsl batch us"] = "n/a (interpreter)"
            if not ctx.cpu:
                nbytes = (W[kind][2].nbytes if M else Hkv * S * D * 4)
                rec["coopdsl GB/s"] = H.gbs(nbytes, cw)
            if tper.get(kind):
                tw_ = float(np.median(tper[kind])) * 1e6
                rec["torch waited us"] = H.us(tw_)
                rec["ratio coopdsl/torch (waited)"] = ratio_cell(cw, tw_)
                rec["torch GB/s"] = H.gbs((M * K * 2 if M else Hkv * S * D * 4), tw_)
            rec["note"] = "median of the calls of this kind, each waited" + (
                "; torch: f16 weights" if (M and fmt != "f16" and tper) else "")
            rep.add(**rec)
        rec = {"case": f"{label}: whole step, per call ({len(calls)} calls)",
               "check": ("OK all calls" if all_ok else "MISMATCH (see the rows above)"),
               "coopdsl waited us": H.us(waited_call),
               "coopdsl batch us": H.us(batch_call) if batch_call else "n/a (interpreter)",
               "torch waited us": H.us(t_wait_call), "torch stream us": H.us(t_stream_call),
               "ratio coopdsl/torch (waited)": ratio_cell(waited_call, t_wait_call),
               "note": bnote.strip("; ") + (f"; batch/torch stream {batch_call / t_stream_call:.2f}"
                                            if (batch_call and t_stream_call) else "")
               + (f"; the step captured as a graph (runtime.graph.capture), each replay waited: {graph_call:.1f} us a "
                  "call" + (f", {graph_call / t_stream_call:.2f} of torch stream" if t_stream_call else "")
                  if graph_call else "")}
        rep.add(**rec)
    except Exception as ex:  # noqa: BLE001
        H.fail_row(ctx, rep, {"case": label}, ex)
    finally:
        tstate.clear()
        H.free(arrays)
        if ctx.torch:
            torch.cuda.empty_cache()
        gc.collect()


# ====================================================================== documented errors and edge behaviour

def error_checks(ctx, rep):
    """Each: what docs/ops.md says is refused (type and what the message names) or how an edge behaves."""
    kw = ctx.kw()
    rng = np.random.default_rng(7)

    def h16(*shape):
        return rng.standard_normal(shape).astype(np.float16)

    def row(name, doc, fn):
        if ctx.left() < 1:
            rep.add(case=f"doc: {name}", check="SKIPPED (time budget)")
            return
        rec = {"case": f"doc: {name}", "kernel path": "", "note": f"docs: {doc}"}
        try:
            check, note = fn()
        except Exception as ex:  # noqa: BLE001
            check, note = f"FAILED {type(ex).__name__}", str(ex)[:200]
            if ctx.a.verbose:
                traceback.print_exc()
        rec["check"] = check
        if note:
            rec["note"] += f"; got: {note}"
        rep.add(**rec)

    def refused(fn, types, *groups):
        """call fn; it must raise one of `types` whose message (lower case) holds one item of each group."""
        try:
            fn()
        except types as ex:
            m = str(ex)
            missing = [g for g in groups if not any(s.lower() in m.lower() for s in g)]
            if missing:
                return (f"MISMATCH: {type(ex).__name__} without {' / '.join(missing[0])} in the message",
                        f"{type(ex).__name__}: {m[:220]}")
            return "REFUSED as documented", f"{type(ex).__name__}: {m[:220]}"
        except Exception as ex:  # noqa: BLE001
            return (f"MISMATCH: {type(ex).__name__}, docs say {'/'.join(t.__name__ for t in types)}",
                    f"{type(ex).__name__}: {str(ex)[:220]}")
        return "MISMATCH: accepted", ""

    q4 = h16(4, 1, 64)
    kv40 = h16(1, 40, 64)

    # --- attention refusals
    row("attention: Hkv (2) not dividing Hq (71), Falcon-like", "Hkv dividing Hq; ValueError naming the argument",
        lambda: refused(lambda: ops.attention(h16(71, 1, 64), h16(2, 40, 64), h16(2, 40, 64), **kw), (ValueError,),
                        ["71", "2"]))
    row("attention: D 72 (not a multiple of 16)", "D a multiple of 16 from 16 to 256",
        lambda: refused(lambda: ops.attention(h16(4, 1, 72), h16(1, 40, 72), h16(1, 40, 72), **kw), (ValueError,),
                        ["72"]))
    row("attention: D 272 (past 256)", "D a multiple of 16 from 16 to 256",
        lambda: refused(lambda: ops.attention(h16(2, 1, 272), h16(1, 40, 272), h16(1, 40, 272), **kw),
                        (ValueError,), ["272", "256"]))
    for wbad in (0, -3, True, 2.5):
        row(f"attention: window={wbad!r}", "W a positive int: 0, a negative number, a bool or a float is a ValueError",
            lambda wbad=wbad: refused(lambda: ops.attention(q4, kv40, kv40, causal=True, window=wbad, **kw),
                                      (ValueError,), ["window"]))
    row("attention: causal=1 (not a bool)", "yes/no options are True or False (numpy's bools too), anything else "
        "a TypeError",
        lambda: refused(lambda: ops.attention(q4, kv40, kv40, causal=1, **kw), (TypeError,), ["causal"]))

    def np_bool():
        o = ops.attention(q4, kv40, kv40, causal=np.bool_(True), **kw)
        r = attn_ref(q4, kv40, kv40, [0, 3], [0], causal=True, window=None, softcap=0, scale=1 / 8, mask64=None)
        e = float(np.abs(o[[0, 3]] - r).max() / np.abs(r).max())
        return ("OK as documented" if e < 2e-5 else "MISMATCH"), f"err/max {e:.1e}"
    row("attention: causal=np.bool_(True) accepted", "numpy's bools too", np_bool)
    # (the docs' limit of impl="decode" was 64 rows a K/V head when this check was written; it is now 128 with
    # cooperative matrices and D up to 128, so 80 and 71 rows run and 160 is refused)
    def decode_runs(q, k, causal):
        o = ops.attention(q, k, k, causal=causal, impl="decode", **kw)
        heads = [0, q.shape[0] - 1]
        r = attn_ref(q, k, k, heads, list(range(q.shape[1])), causal=causal, window=None, softcap=0,
                     scale=1 / 8, mask64=None)
        e = float(np.abs(o[heads] - r).max() / np.abs(r).max())
        return ("OK as documented" if e < 2e-3 else "MISMATCH"), f"err/max {e:.1e}"
    row("attention: impl='decode' at 80 rows a K/V head (405B, 5 tokens)",
        "up to 128 rows a K/V head with cooperative matrices and D up to 128",
        lambda: decode_runs(h16(16, 5, 64), h16(1, 50, 64), True))
    row("attention: impl='decode' at 71 rows (Falcon-7B, one token)",
        "up to 128 rows a K/V head with cooperative matrices and D up to 128",
        lambda: decode_runs(h16(71, 1, 64), kv40, False))
    row("attention: impl='decode' at 160 rows a K/V head",
        "for impl=\"decode\" past what it takes (a ValueError that says so)",
        lambda: refused(lambda: ops.attention(h16(32, 5, 64), h16(1, 50, 64), h16(1, 50, 64), causal=True,
                                              impl="decode", **kw), (ValueError,), ["decode", "160", "128", "rows"]))
    row("attention: softcap 1e-5 at D 128 with impl='nv2'",
        "where scale / softcap passes 2048 ... refuses impl=\"nv2\" with a ValueError",
        lambda: refused(lambda: ops.attention(h16(4, 40, 128), h16(1, 40, 128), h16(1, 40, 128), causal=True,
                                              softcap=1e-5, impl="nv2", **kw), (ValueError,), ["softcap", "soft-cap"]))

    def tiny_softcap():
        q, k, v = h16(4, 40, 128), h16(1, 40, 128), h16(1, 40, 128)
        with attention_nv2.recording() as L:
            o = ops.attention(q, k, v, causal=True, softcap=1e-5, **kw)
        names = list(dict.fromkeys(kk.name for kk, *_ in L))
        r = attn_ref(q, k, v, [0, 3], list(range(40)), causal=True, window=None, softcap=1e-5,
                     scale=1 / math.sqrt(128), mask64=None)
        e = float(np.abs(o[[0, 3]] - r).max() / np.abs(r).max())
        return ("OK as documented" if e < 2e-3 else "MISMATCH"), f"err/max {e:.1e}; kernels {names}"
    row("attention: softcap 1e-5 at D 128, 40 rows, default impl (runs the KHR kernel)",
        "ops.attention runs the KHR kernel, which applies the soft-cap in f32", tiny_softcap)
    row("attention: scale=inf", "scale is a finite number within f32's range (error type not given)",
        lambda: refused(lambda: ops.attention(q4, kv40, kv40, scale=float("inf"), **kw), (ValueError, TypeError),
                        ["scale"]))
    row("attention: mask of shape (1, 41) for Skv 40", "mask (Sq, Skv) or (1, Sq, Skv) or (Hq, Sq, Skv)",
        lambda: refused(lambda: ops.attention(q4, kv40, kv40, mask=np.zeros((1, 41), np.float32), **kw),
                        (ValueError,), ["mask"], ["41", "(1, 41)"]))
    row("attention: q in big-endian >f2", "an array in the other byte order is a ValueError that says so",
        lambda: refused(lambda: ops.attention(q4.astype(">f2"), kv40, kv40, **kw), (ValueError,),
                        ["byte order", "endian", ">f2", "big"]))
    row("attention: Hkv = 0 with query heads", "Hkv = 0 with query heads is a ValueError",
        lambda: refused(lambda: ops.attention(q4, h16(0, 40, 64), h16(0, 40, 64), **kw), (ValueError,), ["0"]))

    def empties():
        o1 = ops.attention(h16(4, 0, 64), kv40, kv40, **kw)
        o2 = ops.attention(q4, h16(1, 0, 64), h16(1, 0, 64), **kw)
        ok = o1.shape == (4, 0, 64) and o2.shape == (4, 1, 64) and not np.asarray(o2).any()
        return ("OK as documented" if ok else "MISMATCH"), f"Sq=0 -> {o1.shape}; Skv=0 -> max |o| {np.abs(o2).max()}"
    row("attention: Sq = 0 and Skv = 0", "every query gives 0 when Skv is 0; Sq = 0 gives an empty result", empties)

    def device_str():
        try:
            from coopdsl.interp import LaunchArgumentError
        except Exception:  # noqa: BLE001
            LaunchArgumentError = None
        try:
            ops.attention(q4, kv40, kv40, device="gpu")
        except Exception as ex:  # noqa: BLE001
            cls_ok = (LaunchArgumentError is not None and isinstance(ex, LaunchArgumentError)) or \
                type(ex).__name__ == "LaunchArgumentError"
            le_ok = isinstance(ex, runtime.LaunchError)
            res = f"device='gpu': {type(ex).__name__} (a LaunchError: {le_ok}): {str(ex)[:120]}"
            try:
                o = ops.attention(q4, kv40, kv40, device="CPU")
                res += f"; device='CPU' ran ({np.asarray(o).shape})"
                cpu_ok = True
            except Exception as ex2:  # noqa: BLE001
                res += f"; device='CPU': {type(ex2).__name__}: {str(ex2)[:80]}"
                cpu_ok = False
            return (("REFUSED as documented" if cls_ok and le_ok else "MISMATCH: not a LaunchArgumentError")
                    + ("" if cpu_ok else " (device='CPU' refused: docs ambiguous)")), res
        return "MISMATCH: accepted", ""
    row("attention: device='gpu' (and 'CPU')", "a string other than \"cpu\" (in any case: \"CPU\" too) a "
        "LaunchArgumentError (a LaunchError)", device_str)
    row("attention: device=3", "a device that is not None, a string or a runtime.Device is a TypeError",
        lambda: refused(lambda: ops.attention(q4, kv40, kv40, device=3), (TypeError,), ["device"]))

    def resident_cpu():
        try:
            dev = ctx.dev or runtime.default_device()
            rq = runtime.array(q4, device=dev)
        except Exception as ex:  # noqa: BLE001
            return "SKIPPED (no Vulkan device for a resident array)", f"{type(ex).__name__}: {str(ex)[:100]}"
        r = refused(lambda: ops.attention(rq, kv40, kv40, device="cpu"), (ValueError,), ["cpu", "interpreter",
                                                                                        "resident", "numpy"])
        rq.free()
        return r
    row("attention: resident q with device='cpu'", "resident arrays with device=\"cpu\" are a ValueError",
        resident_cpu)

    # --- attention edge behaviour on each path: a row that sees no key gives 0; a NaN in the mask gives a NaN row
    def edge(Hq, Hkv, Sq, Skv, D, what):
        q, k, v = h16(Hq, Sq, D), h16(Hkv, Skv, D), h16(Hkv, Skv, D)
        m = np.zeros((Sq, Skv), np.float32)
        m[Sq - 1, :] = -1e9 if what == "hidden" else 0.0
        if what == "nan":
            m[Sq - 1, 3] = np.nan
        with attention_nv2.recording() as L:
            o = np.asarray(ops.attention(q, k, v, causal=True, mask=m, **kw))
        names = list(dict.fromkeys(kk.name for kk, *_ in L))
        last = o[:, Sq - 1]
        rest = o[:, :Sq - 1]
        ok_rest = bool(np.isfinite(rest).all()) if Sq > 1 else True
        if Sq > 1:
            r = attn_ref(q, k, v, [0], list(range(Sq - 1)), causal=True, window=None, softcap=0,
                         scale=1 / math.sqrt(D), mask64=mask_f16_rule(m))
            ok_rest &= float(np.abs(o[0, :Sq - 1] - r[0]).max() / np.abs(r).max()) < 2e-3
        if what == "hidden":
            ok = bool((last == 0).all()) and ok_rest
            return ("OK as documented" if ok else "MISMATCH"), f"{names}; max |row| {np.abs(last).max():.3g}"
        ok = bool(np.isnan(last).all()) and ok_rest
        return ("OK as documented" if ok else "MISMATCH"), f"{names}; NaNs in the row: {int(np.isnan(last).sum())} " \
                                                           f"of {last.size}; other rows finite: {ok_rest}"
    for (Hq, Hkv, Sq, Skv, D, lab) in ((4, 1, 1, 300, 64, "1 row (lanes)"), (8, 1, 2, 300, 128, "16 rows (mma)"),
                                       (2, 1, 40, 60, 64, "prefill")):
        row(f"attention: query row masked with -1e9 gives 0, {lab}",
            "a padding row masked with -1e9 gives 0 on every path", lambda a=(Hq, Hkv, Sq, Skv, D): edge(*a, "hidden"))
        row(f"attention: NaN in a mask row gives a NaN row, {lab}", "A NaN in the mask makes its row NaN",
            lambda a=(Hq, Hkv, Sq, Skv, D): edge(*a, "nan"))

    def wide_window():
        q, k = h16(4, 3, 64), h16(1, 40, 64)
        a = np.asarray(ops.attention(q, k, k, causal=True, window=10 ** 6, **kw))
        b = np.asarray(ops.attention(q, k, k, causal=True, **kw))
        d = float(np.abs(a - b).max() / np.abs(b).max())
        return ("OK as documented" if d <= 1e-6 else "MISMATCH"), f"max diff / max {d:.2g}"
    row("attention: window wider than the keys", "a window wider than the keys hides none", wide_window)

    # --- linear refusals
    w16 = h16(64, 256)
    wbf = ops.to_bf16(rng.standard_normal((64, 256)).astype(np.float32))
    x1 = rng.standard_normal((1, 256)).astype(np.float32)
    x77 = rng.standard_normal((77, 256)).astype(np.float32)
    row("linear: q8=True with f16 weights, 1 row",
        "q8=True with f16/bf16 weights is a ValueError at any number of rows",
        lambda: refused(lambda: ops.linear(x1, w16, None, q8=True, **kw), (ValueError,), ["q8"]))
    row("linear: q8=True with bf16 weights, 77 rows", "a ValueError at any number of rows",
        lambda: refused(lambda: ops.linear(x77, wbf, "bf16", q8=True, **kw), (ValueError,), ["q8"]))
    row("linear: q8='yes'", "q8 is None, True or False ... anything else a TypeError",
        lambda: refused(lambda: ops.linear(x1, w16, None, q8="yes", **kw), (TypeError,), ["q8"]))
    wq4 = ops.quantize(rng.standard_normal((64, 256)).astype(np.float32), "q4_0")
    row("linear: fmt=4 (not a string)", "a weight format ... that is not a string a TypeError",
        lambda: refused(lambda: ops.linear(x1, wq4, 4, **kw), (TypeError,), ["fmt", "format"]))
    row("linear: fmt='q5_K' (unknown)", "An unknown format ... ValueError naming the problem",
        lambda: refused(lambda: ops.linear(x1, wq4, "q5_K", **kw), (ValueError,), ["q5_K"]))
    row("linear: q4_0 bytes (K 256: 144 B a row) given as q8_0",
        "fmt is only checked against the row's length in bytes",
        lambda: refused(lambda: ops.linear(x1, wq4, "q8_0", **kw), (ValueError,), ["q8_0", "bytes", "144", "272"]))

    def q4k_alias():
        y = ops.linear(x1, wq4, "q4_K", **kw)   # 144 bytes a row is one q4_K block of 256: accepted (documented)
        return ("OK as documented" if np.asarray(y).shape == (1, 64) else "MISMATCH"), \
            "q4_0 bytes read as q4_K: accepted, as the docs warn (no check possible)"
    row("linear: q4_0 bytes of K 256 given as q4_K", "q4_0 and q4_K both take 0.5625 bytes a weight, so fmt is only "
        "checked against the row's length in bytes", q4k_alias)
    row("linear: out float16", "out (float32, N x M) is checked before anything runs (error type not given)",
        lambda: refused(lambda: ops.linear(x1, w16, None, out=np.zeros((1, 64), np.float16), **kw),
                        (ValueError, TypeError), ["out"]))
    row("linear: x's K 512 against weights of K 256", "shapes it does not take are ValueErrors",
        lambda: refused(lambda: ops.linear(rng.standard_normal((1, 512)).astype(np.float32), w16, None, **kw),
                        (ValueError,), ["512"]))

    def resident_f32_prefill():
        try:
            dev = ctx.dev or runtime.default_device()
            rx, rw = runtime.array(x77, device=dev), runtime.array(w16, device=dev)
        except Exception as ex:  # noqa: BLE001
            return "SKIPPED (no Vulkan device for a resident array)", f"{type(ex).__name__}: {str(ex)[:100]}"
        try:
            return refused(lambda: ops.linear(rx, rw, None), (ValueError,), ["float16", "f16"])
        finally:
            rx.free()
            rw.free()
    row("linear: resident float32 x of 77 rows", "Past 16 rows a resident x must be float16", resident_f32_prefill)

    def linear_empty():
        y = np.asarray(ops.linear(np.zeros((0, 256), np.float32), w16, None, **kw))
        return ("OK as documented" if y.shape == (0, 64) else "MISMATCH"), f"shape {y.shape}"
    row("linear: N = 0 rows", "N = 0 gives an empty result", linear_empty)

    def strided():
        xs = rng.standard_normal((3, 512)).astype(np.float32)[:, ::2]
        ws = h16(64, 512)[:, ::2]
        y = np.asarray(ops.linear(xs, ws, None, **kw))
        r = xs.astype(np.float64) @ ws.astype(np.float64).T
        e = float(np.abs(y - r).max() / np.abs(r).max())
        return ("OK as documented" if e < 1e-3 else "MISMATCH"), f"err/max {e:.1e}"
    row("linear: strided numpy views of x and w", "x and w may be strided numpy views (copied once)", strided)

    # --- numpy helpers
    row("ops.quantize: K 4544 as q4_K (Falcon-7B)", "a K that is not a multiple of the block ... ValueError",
        lambda: refused(lambda: ops.quantize(np.zeros((2, 4544), np.float32), "q4_K"), (ValueError,), ["4544"],
                        ["256"]))

    def nanq():
        w = np.zeros((4, 64), np.float32)
        w[2, 37] = np.nan
        return refused(lambda: ops.quantize(w, "q8_0"), (ValueError,), ["2"], ["37"])
    row("ops.quantize: NaN at row 2, column 37", "a NaN or infinite value ... named by row and column", nanq)
    row("ops.from_bf16([1.5])", "floats are a TypeError",
        lambda: refused(lambda: ops.from_bf16([1.5]), (TypeError,), ["float", "1.5", "bf16"]))
    row("ops.from_bf16([70000])", "an integer outside 0..65535 a ValueError",
        lambda: refused(lambda: ops.from_bf16([70000]), (ValueError,), ["70000", "65535"]))

    def rne():
        b = ops.to_bf16(np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, -(1 + 2 ** -8)], np.float32))
        want = np.array([0x3F80, 0x3F82, 0xBF80], np.uint16)
        return ("OK as documented" if np.array_equal(b, want) else "MISMATCH"), f"{[hex(int(x)) for x in b]}"
    row("ops.to_bf16 ties round to even", "bf16 bit patterns (uint16, round to nearest even)", rne)

    def noncontig():
        a = h16(64, 128)[:, ::2]
        return refused(lambda: ops.matmul(a, h16(64, 128), **kw), (ValueError, TypeError), ["contiguous"])
    row("matmul: a not C-contiguous", "ops.matmul instead refuses an array that is not C-contiguous, with a message "
        "that says so", noncontig)


# ====================================================================== main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="markdown report")
    ap.add_argument("--tiny", action="store_true", help="every shape scaled down (same code paths)")
    ap.add_argument("--device", default="vulkan", choices=["vulkan", "cpu"])
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds from start; cases not started by then are SKIPPED (default 140 on a GPU, "
                         "1500 on the interpreter)")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--calls", type=int, default=25)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--only", default="", help="comma list of: errors,decode,loop,linear,prefill")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    if a.budget is None:
        a.budget = 1500.0 if a.device == "cpu" else 140.0
    H.T_START = T0   # the harness's budget clock (Ctx.left) counts from this script's start
    ctx = H.Ctx(a)
    ctx.gen = Gen(a.seed)
    devname = "CPU interpreter" if ctx.cpu else str(ctx.dev)
    tdesc = (f"torch {torch.__version__} on {torch.cuda.get_device_name()}" if ctx.torch
             else "torch absent, without CUDA, or not used on the interpreter: torch columns empty")
    header = (f"# coopdsl.ops at a third set of unseen shapes (benchmarks/ops_unseen_third.py)\n\n"
              f"{time.strftime('%Y-%m-%d %H:%M:%S')}; coopdsl on {devname}; {tdesc}; python "
              f"{sys.version.split()[0]}; numpy {np.__version__}; {'TINY shapes; ' if a.tiny else ''}warm-up "
              f"{ctx.warm} calls{f' (and >= {ctx.warm_s * 1e3:.0f} ms)' if ctx.warm_s else ''}, {ctx.calls} timed "
              f"calls; `{' '.join(sys.argv)}`\n\n"
              "err/max: largest |coopdsl - float64 numpy| over the largest |reference| (attention: a subset of heads "
              "and rows; linear: a subset of output columns; the loop: every output); err/(|x|.|w|): the largest "
              "error output by output over the sum of magnitudes. Tolerances from docs/ops.md (the script's "
              "docstring says which figure each comes from). Linear GB/s: weight bytes per waited call (torch: its "
              "f16/bf16 weights). Attention GB/s: K/V bytes of the keys seen. ratio > 1: coopdsl slower; CLIFF: "
              "ratio > 1.5. 'PATH differs' in kernel path: the kernel that ran is not the one docs/ops.md's rule "
              "names.")
    rep = H.Report(a.out, header)
    only = set(filter(None, a.only.split(",")))

    def want(s):
        return not only or s in only
    H.copy_yardstick(ctx, rep)
    if want("errors"):
        error_checks(ctx, rep)
    if want("decode"):
        for c in DECODE_CASES:
            attention_case(ctx, rep, c)
    if want("loop"):
        for fmt, lf, lt in LOOP_RUNS:
            decode_loop(ctx, rep, fmt, lt if ctx.tiny else lf)
    if want("prefill"):
        for c in PREFILL_CASES:
            attention_case(ctx, rep, c)
    if want("linear"):
        for label, M, K, tM, tK, fmts, rows in LINEAR:
            for fmt in fmts:
                linear_weight(ctx, rep, label, M, K, tM, tK, fmt, rows)
    checks = [str(r.get("check", "")) for r in rep.rows]
    n_ok = sum(1 for c in checks if c.startswith(("OK", "REFUSED as documented")))
    n_bad = sum(1 for c in checks if c.startswith(("MISMATCH", "FAILED")))
    n_skip = sum(1 for c in checks if c.startswith("SKIPPED"))
    cliffs = [r["case"] for r in rep.rows if "CLIFF" in str(r.get("ratio coopdsl/torch (waited)", ""))]
    paths = [r["case"] for r in rep.rows if "PATH differs" in str(r.get("kernel path", ""))]
    bad = [r["case"] for r in rep.rows if str(r.get("check", "")).startswith(("MISMATCH", "FAILED"))]
    summary = (f"{n_ok} checks OK, {n_bad} mismatched or failed" + (f" ({n_skip} skipped)" if n_skip else "")
               + f", {len(cliffs)} CLIFF (coopdsl > 1.5x torch waited), {len(paths)} kernel paths other than the "
               f"docs' rule; {time.time() - T0:.0f} s in all.")
    body = summary
    if bad:
        body += "\n\nMISMATCH / FAILED:\n" + "\n".join(f"- {c}" for c in bad)
    if cliffs:
        body += "\n\nCLIFF:\n" + "\n".join(f"- {c}" for c in cliffs)
    if paths:
        body += "\n\nPATH differs from docs/ops.md:\n" + "\n".join(f"- {c}" for c in paths)
    rep.footer(body)
    print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
