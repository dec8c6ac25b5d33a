#!/usr/bin/env python3
"""coopdsl.ops at unseen model shapes on a GPU: correctness against float64 numpy, and speed against torch
on the same GPU in the same process. Self-contained (numpy references written from docs/ops.md): written by a
tester from docs/ alone, without reading coopdsl/ops, as the issue's reviewer would check (2026-11-29).

  python3 benchmarks/ops_unseen_shapes.py --out results.md   # the default Vulkan device (an H200), ~2 minutes
  python3 benchmarks/ops_unseen_shapes.py --tiny --out tiny.md          # every shape scaled down (code paths only)
  python3 benchmarks/ops_unseen_shapes.py --tiny --device cpu --out t.md  # on the CPU interpreter

Results: benchmarks/results/ops-unseen-shapes-{before,after}-h200-2026-11-29.md.

Timing, as a user of the ops API would do it (docs/ops.md "Calls in a loop", docs/runtime.md):
resident operands (runtime.array) and a resident out=, `warmup` untimed calls, then
 - "waited": the median wall time of `calls` calls, each of which returns when its result is there
   (an op call outside a batch submits and waits; from the third identical call it replays a kept
   command buffer);
 - "batch": `calls` calls recorded in one `runtime.batch(dev)` (one submission, one wait), total / calls,
   closer to the GPU time of a call.
torch: the same computation on CUDA, "waited" = median of (call + torch.cuda.synchronize()), "stream" =
`calls` calls back to back then one synchronize, total / calls.
"""
import argparse
import gc
import math
import os
import sys
import time
import traceback

import numpy as np

try:
    import coopdsl  # noqa: F401
except ImportError:  # run from a checkout without installing: scratch/unseen/ -> repo root
    sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
from coopdsl import ops, runtime  # noqa: E402
from coopdsl.ops import attention_nv2  # noqa: E402
import coopdsl.ops.gemv as gemv_mod  # noqa: E402

try:
    import torch
    HAVE_TORCH = torch.cuda.is_available()
except Exception:  # noqa: BLE001
    torch = None
    HAVE_TORCH = False

# ============================================================== float64 references (from docs/ops.md)

QK = {"q4_0": 32, "q8_0": 32, "q4_K": 256}
QB = {"q4_0": 18, "q8_0": 34, "q4_K": 144}


def attention_ref_rows(q, k, v, heads, rows, *, causal, window, softcap, scale=None):
    """float64 attention for the query heads `heads` and query rows `rows` only.
    q (Hq, Sq, D), k/v (Hkv, Skv, D). causal: query i sees j <= i + Skv - Sq; window W: j >= i + Skv - Sq - W + 1;
    soft-cap before the mask; a row that sees no key is 0."""
    Hq, Sq, D = q.shape
    Hkv, Skv, _ = k.shape
    g = Hq // Hkv
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    out = np.zeros((len(heads), len(rows), D))
    i = np.asarray(rows)[:, None]
    j = np.arange(Skv)[None, :]
    allowed = np.ones((len(rows), Skv), bool)
    if causal:
        allowed &= j <= i + Skv - Sq
    if window is not None:
        allowed &= j >= i + Skv - Sq - window + 1
    for a, h in enumerate(heads):
        kh = k[h // g].astype(np.float64)
        vh = v[h // g].astype(np.float64)
        s = q[h, rows].astype(np.float64) @ kh.T * scale
        if softcap:
            s = softcap * np.tanh(s / softcap)
        s = np.where(allowed, s, -np.inf)
        mx = s.max(-1, keepdims=True)
        seen = np.isfinite(mx)
        p = np.exp(s - np.where(seen, mx, 0))
        den = p.sum(-1, keepdims=True)
        out[a] = np.where(seen, (p @ vh) / np.where(den > 0, den, 1), 0)
    return out


def _f16(b2):
    return np.ascontiguousarray(b2).view("<f2")[..., 0].astype(np.float64)


def dequant(q, fmt, k):
    """ggml blocks -> float64, from the docs' layout table."""
    q = np.asarray(q, np.uint8)
    rows = q.shape[0]
    nb = k // QK[fmt]
    blk = q.reshape(rows, nb, QB[fmt])
    if fmt == "q8_0":
        return (blk[..., 2:34].view(np.int8).astype(np.float64) * _f16(blk[..., 0:2])[..., None]).reshape(rows, k)
    if fmt == "q4_0":
        qs = blk[..., 2:18]
        vals = np.concatenate([(qs & 15).astype(np.float64) - 8, (qs >> 4).astype(np.float64) - 8], -1)
        return (vals * _f16(blk[..., 0:2])[..., None]).reshape(rows, k)
    d, dmin = _f16(blk[..., 0:2]), _f16(blk[..., 2:4])
    s = blk[..., 4:16].astype(np.int64)
    qs = blk[..., 16:144]
    out = np.zeros((rows, nb, 256))
    for j in range(8):
        if j < 4:
            sc, m = s[..., j] & 63, s[..., j + 4] & 63
        else:
            sc = (s[..., j + 4] & 15) | ((s[..., j - 4] >> 6) << 4)
            m = (s[..., j + 4] >> 4) | ((s[..., j] >> 6) << 4)
        c, h = divmod(j, 2)
        b = qs[..., 32 * c:32 * c + 32]
        nib = (b & 15) if h == 0 else (b >> 4)
        out[..., 32 * j:32 * j + 32] = d[..., None] * sc[..., None] * nib - dmin[..., None] * m[..., None]
    return out.reshape(rows, k)


# ============================================================== fast, reproducible data

class Pool:
    """np.resize of a prime-length pool of N(0, 1) values: quick to make at 10^8 elements."""

    def __init__(self, seed=0, n=1_000_003):
        self.v = np.random.default_rng(seed).standard_normal(n, dtype=np.float32)
        self.off = 0

    def normal(self, shape, dtype=np.float16, scale=1.0):
        size = int(np.prod(shape))
        self.off = (self.off + 7919) % len(self.v)
        a = np.resize(np.roll(self.v, -self.off), size).reshape(shape)
        if scale != 1.0:
            a = a * np.float32(scale)
        return a.astype(dtype)

    def blocks(self, fmt, M, K):
        """random but valid ggml blocks (finite small f16 scales), M x K values."""
        nb = K // QK[fmt]
        bb = QB[fmt]
        raw = np.resize(np.roll((self.v * 1e4).astype(np.int64).astype(np.uint8), -self.off), M * nb * bb)
        raw = raw.reshape(M, nb, bb)
        nsc = 2 if fmt == "q4_K" else 1
        sc = np.resize(np.abs(self.v[:4099]) * {"q4_0": 0.01, "q8_0": 0.0004, "q4_K": 0.002}[fmt] + 1e-4,
                       M * nb * nsc).astype("<f2").reshape(M, nb, nsc)
        raw[..., : 2 * nsc] = sc.view(np.uint8).reshape(M, nb, 2 * nsc)
        self.off = (self.off + 104729) % len(self.v)
        return np.ascontiguousarray(raw.reshape(M, nb * bb))


# ============================================================== timing helpers

def med_us(ts):
    return float(np.median(ts) * 1e6)


def time_waited(fn, warmup, calls):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return med_us(ts)


def time_batch(dev, fn, calls):
    t0 = time.perf_counter()
    with runtime.batch(dev):
        for _ in range(calls):
            fn()
    return (time.perf_counter() - t0) / calls * 1e6


def torch_times(fn, warmup, calls):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return med_us(ts), (time.perf_counter() - t0) / calls * 1e6


# ============================================================== report

COLS = ["case", "kernel path", "check", "coopdsl waited us", "coopdsl batch us", "torch waited us",
        "torch stream us", "ratio (coopdsl/torch, waited)", "coopdsl GB/s", "torch GB/s", "note"]


class Report:
    def __init__(self, path, header):
        self.path = path
        self.rows = []
        with open(path, "w") as f:
            f.write(header + "\n\n| " + " | ".join(COLS) + " |\n|" + "---|" * len(COLS) + "\n")

    def add(self, **kw):
        row = [str(kw.get(c, "")) for c in COLS]
        self.rows.append(kw)
        with open(self.path, "a") as f:
            f.write("| " + " | ".join(x.replace("|", "/").replace("\n", " ") for x in row) + " |\n")
        print(" | ".join(row), flush=True)

    def footer(self, text):
        with open(self.path, "a") as f:
            f.write("\n" + text + "\n")


def fmt_us(x):
    return "" if x is None else f"{x:.1f}"


def gbs(nbytes, us):
    return "" if not us else f"{nbytes / (us * 1e-6) / 1e9:.0f}"


# ============================================================== cases

MODELS = {  # name: (Hq, Hkv, D, softcap, window)
    "Qwen2-7B": (28, 4, 128, 0.0, None),
    "Llama3-70B": (64, 8, 128, 0.0, None),
    "Gemma2-9B": (16, 8, 256, 50.0, 4096),
    "Phi3-mini": (32, 32, 96, 0.0, None),
    "D80 (Phi-2 like)": (32, 32, 80, 0.0, None),
}
TINY_HEADS = {"Qwen2-7B": (7, 1), "Llama3-70B": (8, 1), "Gemma2-9B": (2, 1), "Phi3-mini": (2, 2), "D80 (Phi-2 like)": (2, 2)}
LINEAR = [("Qwen2-7B up", 18944, 3584), ("Qwen2-7B down", 3584, 18944),
          ("Llama3-70B up", 28672, 8192), ("Llama3-70B down", 8192, 28672)]
TINY_M = {18944: 177, 3584: 113, 28672: 225, 8192: 129}   # odd
TINY_K = {18944: 768, 3584: 512, 28672: 1024, 8192: 768}   # multiples of 256


class Ctx:
    def __init__(self, a):
        self.a = a
        self.cpu = a.device == "cpu"
        self.dev = None if self.cpu else runtime.default_device()
        self.tiny = a.tiny
        self.t0 = time.time()
        self.pool = Pool(a.seed)
        self.warm = 3 if (self.tiny or self.cpu) else a.warmup
        self.calls = 3 if (self.tiny or self.cpu) else a.calls

    def left(self):
        return self.a.budget - (time.time() - self.t0)

    def put(self, x):
        return x if self.cpu else runtime.array(x, device=self.dev)

    def kw(self):
        return {"device": "cpu"} if self.cpu else {}


def free(*arrs):
    for a in arrs:
        if isinstance(a, runtime.Array):
            try:
                a.free()
            except Exception:  # noqa: BLE001
                pass


def failed(ctx, rep, rec, ex):
    """Record a case that raised: its exception's type and first line (the traceback with --verbose)."""
    rec["check"] = f"FAILED {type(ex).__name__}"
    rec["note"] = (str(ex).splitlines() or [""])[0][:300]
    if ctx.a.verbose:
        traceback.print_exc()
    rep.add(**rec)


def attention_case(ctx, rep, model, Sq, Skv, kind):
    Hq, Hkv, D, softcap, window = MODELS[model]
    if ctx.tiny:
        Hq, Hkv = TINY_HEADS[model]
        window = 50 if window else None
    name = f"attn {kind} {model} {Hq}/{Hkv}h D{D} Sq{Sq} Skv{Skv}" + (f" softcap{softcap:g} win{window}" if softcap else "")
    causal = True
    rec = {"case": name}
    arrays = []
    try:
        q = ctx.pool.normal((Hq, Sq, D), np.float16)
        k = ctx.pool.normal((Hkv, Skv, D), np.float16)
        v = ctx.pool.normal((Hkv, Skv, D), np.float16)
        opts = dict(causal=causal, window=window, softcap=softcap)
        dq, dk, dv = ctx.put(q), ctx.put(k), ctx.put(v)
        out_dtype = np.float16 if kind == "prefill" else np.float32
        out = ctx.put(np.zeros(q.shape, out_dtype))
        arrays = [dq, dk, dv, out]

        def call():
            return ops.attention(dq, dk, dv, out=out, out_dtype=out_dtype, **opts, **ctx.kw())

        with attention_nv2.recording() as launched:
            call()
        rec["kernel path"] = "+".join(dict.fromkeys(kk.name for kk, *_ in launched))
        got = out if ctx.cpu else out.numpy()
        heads = sorted({0, Hq // 2, Hq - 1})
        rows = sorted({0, Sq // 3, Sq - 1} | set(range(0, Sq, max(1, Sq // 24))))
        ref = attention_ref_rows(q, k, v, heads, rows, causal=causal, window=window, softcap=softcap)
        err = float(np.abs(got[heads][:, rows].astype(np.float64) - ref).max() / np.abs(ref).max())
        tol = 6e-3 if out_dtype == np.float16 else 4e-3
        ok = bool(err <= tol) and np.isfinite(got).all()
        rec["check"] = f"{'OK' if ok else 'MISMATCH'} err/max {err:.1e} (tol {tol:.0e}; {len(heads)} heads x {len(rows)} rows)"
        # K/V bytes a decoding call must read (a window's earlier keys are not read)
        seen = Skv if window is None else min(Skv, window + Sq - 1)
        kv_bytes = 2 * Hkv * seen * D * 2
        cw = time_waited(call, ctx.warm, ctx.calls)
        rec["coopdsl waited us"] = fmt_us(cw)
        if not ctx.cpu:
            try:
                rec["coopdsl batch us"] = fmt_us(time_batch(ctx.dev, call, ctx.calls))
            except Exception as ex:  # noqa: BLE001
                rec["note"] = f"batch: {type(ex).__name__}: {str(ex)[:80]}"
        if kind == "decode":
            rec["coopdsl GB/s"] = gbs(kv_bytes, cw)
        if HAVE_TORCH and not ctx.cpu:
            tq = torch.from_numpy(q).cuda()[None]
            tk = torch.from_numpy(k).cuda()[None]
            tv = torch.from_numpy(v).cuda()[None]
            i = torch.arange(Sq, device="cuda")[:, None]
            j = torch.arange(Skv, device="cuda")[None, :]
            allow = j <= i + Skv - Sq
            if window is not None:
                allow &= j >= i + Skv - Sq - window + 1
            need_mask = not bool(allow.all())
            full_causal = Sq == Skv and (window is None or window >= Skv)
            sdpa = torch.nn.functional.scaled_dot_product_attention
            g = Hq // Hkv

            def pick_sdpa():
                """the fastest faithful SDPA call: is_causal for square causal, causal_lower_right for Sq < Skv,
                else a bool mask; enable_gqa where torch takes it, else K/V repeated."""
                variants = []
                if not need_mask:
                    variants.append(("", dict()))
                elif full_causal:
                    variants.append((" is_causal", dict(is_causal=True)))
                elif window is None:
                    try:
                        from torch.nn.attention.bias import causal_lower_right
                        variants.append((" causal_lower_right", dict(attn_mask=causal_lower_right(Sq, Skv))))
                    except Exception:  # noqa: BLE001
                        pass
                variants.append((" bool mask", dict(attn_mask=allow)))
                for vname, vkw in variants:
                    for gname, (kk_, vv_, extra) in (("enable_gqa", (tk, tv, dict(enable_gqa=True))),
                                                     ("repeated K/V", (None, None, {}))):
                        try:
                            if kk_ is None:
                                kk_, vv_ = tk.repeat_interleave(g, 1), tv.repeat_interleave(g, 1)

                            def f(kk_=kk_, vv_=vv_, vkw=vkw, extra=extra):
                                return sdpa(tq, kk_, vv_, **vkw, **extra)
                            f()
                            torch.cuda.synchronize()
                            return f, f"SDPA {gname}{vname}"
                        except Exception:  # noqa: BLE001
                            continue
                raise RuntimeError("no SDPA variant ran")

            tcall, tnote = pick_sdpa()
            if softcap:  # SDPA has no soft-cap: eager attention as HF Gemma-2 runs it; SDPA without it as a bound
                tk2 = tk.repeat_interleave(g, dim=1)
                tv2 = tv.repeat_interleave(g, dim=1)
                addm = torch.zeros(Sq, Skv, device="cuda", dtype=torch.float32).masked_fill(~allow, float("-inf"))
                nocap_call, nocap_note = tcall, tnote
                nw, _ = torch_times(nocap_call, ctx.warm, ctx.calls)

                def tcall():
                    s = (tq @ tk2.transpose(-1, -2)).float() * (1.0 / math.sqrt(D))
                    s = softcap * torch.tanh(s / softcap) + addm
                    return (torch.softmax(s, -1).to(torch.float16) @ tv2)
                tnote = f"torch eager (softcap); {nocap_note} without softcap {nw:.1f} us"
            to = tcall().float().cpu().numpy()[0]
            terr = float(np.abs(to[heads][:, rows] - ref).max() / np.abs(ref).max())
            tw, ts = torch_times(tcall, ctx.warm, ctx.calls)
            rec["torch waited us"] = fmt_us(tw)
            rec["torch stream us"] = fmt_us(ts)
            rec["ratio (coopdsl/torch, waited)"] = f"{cw / tw:.2f}"
            if kind == "decode":
                rec["torch GB/s"] = gbs(kv_bytes, tw)
            rec["note"] = (rec.get("note", "") + f" {tnote}; torch err/max {terr:.1e}").strip()
            del tq, tk, tv
            torch.cuda.empty_cache()
        rep.add(**rec)
    except Exception as ex:  # noqa: BLE001
        failed(ctx, rep, rec, ex)
    finally:
        free(*arrays)
        gc.collect()


def linear_case(ctx, rep, label, M, K, fmt, rows_list):
    if ctx.tiny:
        M, K = TINY_M[M], TINY_K[K]
    arrays = []
    try:
        if fmt == "f16":
            w = ctx.pool.normal((M, K), np.float16, scale=0.02)
            wbytes = w.nbytes
        else:
            w = ctx.pool.blocks(fmt, M, K)
            wbytes = w.nbytes
        dw = ctx.put(w)
        arrays.append(dw)
        # the reference on a subset of W's rows (first, last and spread)
        sel = np.unique(np.r_[0, M - 1, np.linspace(0, M - 1, 200).astype(int)])
        wsub = w[sel].astype(np.float64) if fmt == "f16" else dequant(w[sel], fmt, K)
        # the library's documented reference dequantizer must agree with ours
        lib_ok = True
        if fmt != "f16":
            lib_ok = bool(np.array_equal(ops.dequantize(w[sel[:8]], fmt, K), dequant(w[sel[:8]], fmt, K).astype(np.float32)))
        tw16 = None
        if HAVE_TORCH and not ctx.cpu:
            # torch gets f16 weights of the same shape: the dequantized copy it would multiply by
            if fmt == "f16":
                tw16 = torch.from_numpy(w).cuda()
            else:
                tw16 = torch.empty((M, K), dtype=torch.float16, device="cuda")
                step = 2048
                for r0 in range(0, M, step):
                    tw16[r0:r0 + step] = torch.from_numpy(ops.dequantize(w[r0:r0 + step], fmt, K)).cuda().half()
        for n in rows_list:
            if ctx.left() < 0:
                rep.add(case=f"linear {label} {fmt} rows{n}", check="SKIPPED (time budget)")
                continue
            rec = {"case": f"linear {label} {fmt} {n}x{K} @ {M}x{K}^T"}
            try:
                x = ctx.pool.normal((n, K), np.float32)
                dx = ctx.put(x)
                y = ctx.put(np.zeros((n, M), np.float32))
                arrays += [dx, y]
                f = None if fmt == "f16" else fmt

                def call():
                    return ops.linear(dx, dw, f, out=y, **ctx.kw())
                call()
                try:
                    how = gemv_mod.choice(fmt, n, None, M, K, None if ctx.cpu else ctx.dev)
                    rec["kernel path"] = f"{how}"
                except Exception as ex:  # noqa: BLE001
                    rec["kernel path"] = f"choice(): {type(ex).__name__}"
                got = (y if ctx.cpu else y.numpy())[:, sel].astype(np.float64)
                ref = x.astype(np.float64) @ wsub.T
                err = float(np.abs(got - ref).max() / np.abs(ref).max())
                nat = float((np.abs(got - ref) / (np.abs(x.astype(np.float64)) @ np.abs(wsub).T)).max())
                tol = 3e-3 if fmt == "f16" else 2e-2
                ok = (err <= tol or nat <= tol / 10) and lib_ok
                rec["check"] = (f"{'OK' if ok else 'MISMATCH'} err/max {err:.1e} err/(|x|.|w|) {nat:.1e} "
                                f"(tol {tol:.0e}; {len(sel)} of {M} rows)" + ("" if lib_ok else " ops.dequantize differs!"))
                nbytes = wbytes + x.nbytes + n * M * 4
                cw = time_waited(call, ctx.warm, ctx.calls)
                rec["coopdsl waited us"] = fmt_us(cw)
                rec["coopdsl GB/s"] = gbs(nbytes, cw)
                if not ctx.cpu:
                    try:
                        cb = time_batch(ctx.dev, call, ctx.calls)
                        rec["coopdsl batch us"] = fmt_us(cb)
                        rec["coopdsl GB/s"] += f" ({gbs(nbytes, cb)} batch)"
                    except Exception as ex:  # noqa: BLE001
                        rec["note"] = f"batch: {type(ex).__name__}: {str(ex)[:80]}"
                if tw16 is not None:
                    tx = torch.from_numpy(x).cuda().half()

                    def tcall():
                        return torch.matmul(tx, tw16.T)
                    tbytes = M * K * 2 + n * K * 2 + n * M * 2
                    tw, ts = torch_times(tcall, ctx.warm, ctx.calls)
                    rec["torch waited us"] = fmt_us(tw)
                    rec["torch stream us"] = fmt_us(ts)
                    rec["ratio (coopdsl/torch, waited)"] = f"{cw / tw:.2f}"
                    rec["torch GB/s"] = f"{gbs(tbytes, tw)} ({gbs(tbytes, ts)} stream)"
                    rec["note"] = (rec.get("note", "") + " torch: f16 matmul of the dequantized weights").strip()
                rep.add(**rec)
            except Exception as ex:  # noqa: BLE001
                failed(ctx, rep, rec, ex)
        del tw16
    except Exception as ex:  # noqa: BLE001
        rep.add(case=f"linear {label} {fmt}", check=f"FAILED {type(ex).__name__}", note=str(ex)[:300])
    finally:
        free(*arrays)
        if HAVE_TORCH:
            torch.cuda.empty_cache()
        gc.collect()


def copy_bandwidth(ctx, rep):
    if not HAVE_TORCH or ctx.cpu:
        return
    n = (1 << 28) if not ctx.tiny else (1 << 20)
    a = torch.empty(n, dtype=torch.float32, device="cuda")
    b = torch.empty_like(a)
    tw, ts = torch_times(lambda: b.copy_(a), 5, 20)
    rep.add(case=f"torch copy {n * 4 >> 20} MiB (bandwidth yardstick)",
            **{"torch waited us": fmt_us(tw), "torch stream us": fmt_us(ts), "torch GB/s": gbs(2 * n * 4, tw)})
    del a, b
    torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tiny", action="store_true", help="scale every shape down (code paths only)")
    ap.add_argument("--device", default="vulkan", choices=["vulkan", "cpu"])
    ap.add_argument("--budget", type=float, default=330.0, help="seconds; later cases are skipped past it")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="", help="comma list of: prefill,decode,linear")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    ctx = Ctx(a)
    dev_name = "CPU interpreter" if ctx.cpu else str(ctx.dev)
    tdesc = f"torch {torch.__version__} on {torch.cuda.get_device_name()}" if HAVE_TORCH else "torch: absent or no CUDA (column skipped)"
    header = (f"# coopdsl ops at unseen shapes\n\n{time.strftime('%Y-%m-%d %H:%M:%S')}; coopdsl {coopdsl.__version__} "
              f"on {dev_name}; {tdesc}; python {sys.version.split()[0]}; numpy {np.__version__}; "
              f"{'TINY shapes; ' if a.tiny else ''}warm-up {ctx.warm}, {ctx.calls} calls; `{' '.join(sys.argv)}`\n\n"
              "err/max: largest |coopdsl - float64 numpy| over the largest |reference| (subset of heads/rows); "
              "GB/s: bytes a call must read (K/V seen, or weights + x + y) per waited call; ratio > 1: coopdsl slower.")
    rep = Report(a.out, header)
    only = set(filter(None, a.only.split(",")))
    copy_bandwidth(ctx, rep)

    S1, S2 = (61, 97) if a.tiny else (1000, 3000)
    K1, K2 = (77, 300) if a.tiny else (5000, 70000)
    cases = []
    if not only or "decode" in only:
        for model in MODELS:
            for Sq in (1, 5):
                for Skv in (K1, K2):
                    cases.append(("attn", (model, Sq, Skv, "decode")))
    if not only or "linear" in only:
        for label, M, K in LINEAR:
            for fmt in ("q4_0", "q4_K", "q8_0", "f16"):
                cases.append(("linear", (label, M, K, fmt, [1, 3, 5, 8])))
    if not only or "prefill" in only:
        for model in MODELS:
            for S in (S1, S2):
                cases.append(("attn", (model, S, S, "prefill")))
    for kind, args in cases:
        if ctx.left() < 0:
            rep.add(case=f"{kind} {args[:4]}", check="SKIPPED (time budget)")
            continue
        if kind == "attn":
            attention_case(ctx, rep, *args)
        else:
            linear_case(ctx, rep, *args)
    n_bad = sum(1 for r in rep.rows if str(r.get("check", "")).startswith(("MISMATCH", "FAILED")))
    n_ok = sum(1 for r in rep.rows if str(r.get("check", "")).startswith("OK"))
    summary = f"{n_ok} checks OK, {n_bad} mismatched or failed; {time.time() - ctx.t0:.0f} s in all."
    rep.footer(summary)
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
