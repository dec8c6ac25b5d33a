"""Docs-only check of ops.attention(..., sinks=...) on the CPU interpreter.

Written from docs/ops.md ("Attention") alone; the float64 model below follows the
docs' formulas:
  scores s = scale * q k^T (scale default 1/sqrt(D)); softcap > 0: s = softcap*tanh(s/softcap);
  then + mask (user mask read as f16: < -65504 -> -inf, > 65504 -> 65504, else rounded to f16),
  causal: query i sees keys j <= i + Skv - Sq; window W: also j >= i + Skv - Sq - W + 1.
  sinks: o = sum_j e^(s_j - m) v_j / (sum_j e^(s_j - m) + e^(sink - m)),
         m = max(row's scores, sink); a row that sees no key gives 0.
Run:  python3 benchmarks/ops_unseen_sinks_cpu.py   (from the repository root; about 20 seconds)
"""
import array
import sys
import time
import traceback

import numpy as np

from coopdsl import ops
from coopdsl.ops import attention_nv2
from coopdsl.ops.flash_attention import reference

T0 = time.time()
COUNTS = {"OK": 0, "MISMATCH": 0, "ERROR": 0, "NOTE": 0}

# Tolerances, relative to the largest |output| of the model.
#   acc="f32": ggml's kernel rounds Q*scale and the probabilities to f16 (docs: 1.6e-4..3.8e-4
#   at large sizes, up to 7.4e-4 for sharp attention with masks at small sizes) -> 2e-3.
#   acc="f16": everything in f16 (docs: 5.8e-4 in a small check) -> 5e-3.
TOL_F32 = 2e-3
TOL_F16ACC = 5e-3


def say(tag, name, msg):
    COUNTS[tag] += 1
    print(f"{tag:8s} {name}: {msg}", flush=True)


# ---------------------------------------------------------------- the float64 model
def bf16_bits_to_f64(bits):
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def as_f64(x):
    x = np.asarray(x)
    if x.dtype == np.uint16:
        return bf16_bits_to_f64(x)
    return x.astype(np.float64)


def mask_as_f16(m):
    m = np.asarray(m, np.float64)
    out = np.clip(m, -65504.0, 65504.0).astype(np.float16).astype(np.float64)
    out = np.where(m < -65504.0, -np.inf, out)
    return out


def model(q, k, v, *, causal=False, mask=None, window=None, scale=None, softcap=0.0, sinks=None):
    q, k, v = as_f64(q), as_f64(k), as_f64(v)
    two_d = q.ndim == 2
    if two_d:
        q, k, v = q[None], k[None], v[None]
    Hq, Sq, D = q.shape
    Hkv, Skv, _ = k.shape
    g = Hq // Hkv
    if scale is None:
        scale = 1.0 / np.sqrt(D)
    out = np.zeros((Hq, Sq, D))
    empty = np.zeros((Hq, Sq), bool)
    i = np.arange(Sq)[:, None]
    j = np.arange(Skv)[None, :]
    add = np.zeros((Sq, Skv))
    if causal:
        add = np.where(j > i + Skv - Sq, -np.inf, add)
    if window is not None:
        add = np.where(j < i + Skv - Sq - window + 1, -np.inf, add)
    if mask is not None:
        mk = mask_as_f16(mask)
        if mk.ndim == 2:
            mk = mk[None]
        mk = np.broadcast_to(mk, (Hq, Sq, Skv))
    for h in range(Hq):
        s = scale * (q[h] @ k[h // g].T)
        if softcap > 0:
            s = softcap * np.tanh(s / softcap)
        s = s + add
        if mask is not None:
            s = s + mk[h]
        for r in range(Sq):
            row = s[r]
            vis = row > -np.inf
            if not vis.any():
                empty[h, r] = True
                continue  # a row that sees no key gives 0
            m = row[vis].max()
            sk = None
            if sinks is not None:
                sk = float(np.asarray(sinks, np.float64)[h])
                m = max(m, sk)
            p = np.where(vis, np.exp(np.where(vis, row, 0.0) - m), 0.0)
            den = p.sum()
            if sk is not None:
                den += np.exp(sk - m)
            out[h, r] = (p @ v[h // g]) / den
    model.last_empty = empty[0] if two_d else empty
    return out[0] if two_d else out


# ---------------------------------------------------------------- helpers
rng = np.random.default_rng(12345)


def make(Hq, Hkv, Sq, Skv, D, qmul=1.0, qdt=np.float16, vmean=0.5):
    q = (qmul * rng.standard_normal((Hq, Sq, D))).astype(qdt)
    k = rng.standard_normal((Hkv, Skv, D)).astype(np.float16)
    v = (vmean + rng.standard_normal((Hkv, Skv, D))).astype(np.float16)
    return q, k, v


def sinks_near(n_visible, Hq, spread=1.5, dt=np.float32):
    # sum_j e^(s_j) ~ n e^(var/2); offsets spread the sink weight from ~20% to ~80%
    return (np.log(max(n_visible, 1)) + 0.5 + np.linspace(-spread, spread, Hq)).astype(dt)


def rel(a, b, scale_):
    if scale_ == 0:
        return float(np.abs(a - b).max()) if a.size else 0.0
    return float(np.abs(a - b).max() / scale_)


def run_case(name, q, k, v, sinks, tol=None, expect_ggml=True, **kw):
    """Main check: library vs own model; print no-sink distance too."""
    acc = kw.get("acc", "f32")
    if tol is None:
        tol = TOL_F16ACC if acc == "f16" else TOL_F32
    mkw = {x: kw[x] for x in ("causal", "mask", "window", "scale", "softcap") if x in kw}
    try:
        t = time.time()
        with attention_nv2.recording() as launched:
            o = ops.attention(q, k, v, sinks=sinks, device="cpu", **kw)
        dt = time.time() - t
        names = [kk.name for kk, *_ in launched]
    except Exception as e:  # noqa: BLE001
        say("ERROR", name, f"{type(e).__name__}: {e}")
        return
    want = model(q, k, v, sinks=sinks, **mkw)
    empty = model.last_empty
    nos = model(q, k, v, sinks=None, **mkw)
    # a wrong head mapping (sinks reversed over the query heads) should be caught too
    sv = np.asarray(sinks)
    perm = model(q, k, v, sinks=sv[::-1].copy() if sv.ndim == 1 and sv.size > 1 else sv, **mkw)
    big = float(np.abs(want).max()) if want.size else 0.0
    problems = []
    od = kw.get("out_dtype", np.float32)
    if o.dtype != np.dtype(od):
        problems.append(f"dtype {o.dtype} != {np.dtype(od)}")
    if o.shape != q.shape:
        problems.append(f"shape {o.shape} != {q.shape}")
    if not np.all(np.isfinite(o)):
        problems.append(f"{int((~np.isfinite(o)).sum())} non-finite outputs")
    err = rel(o.astype(np.float64), want, big) if o.shape == want.shape else float("inf")
    dev = rel(nos, want, big)
    pdev = rel(perm, want, big)
    n_empty = int(empty.sum())
    if n_empty and o.shape == want.shape:
        bad = int((o[empty] != 0).any(axis=-1).sum())
        if bad:
            problems.append(f"{bad} of {n_empty} rows that see no key are not exactly 0")
    if err > tol:
        problems.append(f"err {err:.2e} > tol {tol:.0e}")
    if expect_ggml:
        # (docs/ops.md as first written: calls with sinks ran ggml's kernel; since, the decode kernels take sinks too,
        # as one more chunk combined by their combine launch, and the KHR kernel does not)
        decode = any(n.startswith("attention_decode") for n in names)
        if decode and not any(n.startswith("attention_decode_sinks") for n in names):
            problems.append(f"kernels {names}: a decode call with sinks without the sink chunk's launch")
        if not decode and "flash_attn_cm2" not in names:
            problems.append(f"kernels {names}: sinks run on the decode kernels or ggml's kernel")
    try:
        r = reference(q, k, v, sinks=sinks, **{x: mkw[x] for x in mkw if x not in ("causal", "scale")},
                      causal=mkw.get("causal", False), scale=mkw.get("scale"))
        rerr = f"{rel(r, want, big):.1e}"
    except Exception as e:  # noqa: BLE001
        rerr = f"{type(e).__name__}"
    msg = (f"err={err:.2e} (tol {tol:.0e}) no-sink dist={dev:.2e} (x{dev / tol:.0f} tol) "
           f"reversed-sinks dist={pdev:.1e} empty rows={n_empty} max|o|={big:.3f} reference-vs-model={rerr} kernels={'+'.join(names)} {dt:.1f}s")
    say("MISMATCH" if problems else "OK", name, ("; ".join(problems) + " | " if problems else "") + msg)


def expect_raise(name, exc_types, must_name, fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        ok_type = isinstance(e, exc_types)
        named = all(s.lower() in str(e).lower() for s in must_name)
        tag = "OK" if ok_type and named else "MISMATCH"
        extra = "" if named else f" (message does not name {must_name})"
        say(tag, name, f"{type(e).__name__}: {str(e)[:200]}{extra}")
        return
    say("MISMATCH", name, f"no exception (expected {exc_types})")


def note(name, fn):
    try:
        res = fn()
        say("NOTE", name, res)
    except Exception as e:  # noqa: BLE001
        say("NOTE", name, f"raised {type(e).__name__}: {str(e)[:200]}")


# ---------------------------------------------------------------- part 1: numerics
print("== part 1: sinks against the float64 model ==")

# A: decoding, GQA 8 on 2, Sq=1, odd Skv, causal (Sq=1 sees every key)
q, k, v = make(8, 2, 1, 203, 64)
run_case("A decode Hq8/Hkv2 Sq1 Skv203 D64 causal", q, k, v, sinks_near(203, 8), causal=True)

# B: multi-query decode, Hq6/Hkv1, D128, f16 sinks, no causal
q, k, v = make(6, 1, 1, 129, 128)
run_case("B decode Hq6/Hkv1 Sq1 Skv129 D128 f16-sinks", q, k, v, sinks_near(129, 6, dt=np.float16))

# B2: 3 tokens on a GQA head group (12 rows a K/V head: decode-sized without sinks), q float32
q, k, v = make(8, 2, 3, 203, 80, qdt=np.float32)
run_case("B2 decode-size Hq8/Hkv2 Sq3 Skv203 D80 q-f32 causal", q, k, v, sinks_near(203, 8), causal=True)

# C: prefill after a KV cache (Skv > Sq), D 80
q, k, v = make(8, 2, 37, 203, 80)
run_case("C prefill Hq8/Hkv2 Sq37 Skv203 D80 causal", q, k, v, sinks_near(180, 8), causal=True)

# D: more queries than keys, causal: first Sq-Skv rows see no key -> 0
q, k, v = make(4, 2, 129, 37, 64)
run_case("D Sq129>Skv37 Hq4/Hkv2 D64 causal (92 empty rows)", q, k, v, sinks_near(20, 4), causal=True)

# D2: more queries than keys, no causal
q, k, v = make(6, 1, 129, 37, 128)
run_case("D2 Sq129>Skv37 Hq6/Hkv1 D128 no-causal", q, k, v, sinks_near(37, 6))

# E: causal + window
q, k, v = make(6, 1, 37, 129, 128)
run_case("E Hq6/Hkv1 Sq37 Skv129 D128 causal window=16", q, k, v, sinks_near(16, 6), causal=True, window=16)

# F: window without causal
q, k, v = make(8, 2, 37, 129, 64)
run_case("F Hq8/Hkv2 Sq37 Skv129 D64 window=50 no-causal", q, k, v, sinks_near(80, 8), window=50)

# F2: decode with window (Sq=1)
q, k, v = make(8, 2, 1, 300, 64)
run_case("F2 decode Hq8/Hkv2 Sq1 Skv300 D64 causal window=37", q, k, v, sinks_near(37, 8), causal=True, window=37)

# G: per-head user mask with -inf, -1e9, random finite values, big values, a row seeing no key; + causal
Hq, Hkv, Sq, Skv, D = 8, 2, 37, 203, 64
q, k, v = make(Hq, Hkv, Sq, Skv, D)
mask = rng.uniform(-2, 1, (Hq, Sq, Skv)).astype(np.float32)
mask[:, :, :7] = -np.inf                # hide the first keys from every query
mask[2, 5, :] = -np.inf                 # head 2, row 5 sees no key
mask[:, 11, :] = -1e9                   # row 11 of every head: padding
mask[3, 20, 100:150] = -np.inf
mask[1, 30, 50] = 1e5                   # > 65504: read as 65504
run_case("G Hq8/Hkv2 Sq37 Skv203 D64 causal + per-head mask (-inf, -1e9, empty rows, 1e5)", q, k, v,
         sinks_near(150, Hq), causal=True, mask=mask)

# G2: shared (1, Sq, Skv) mask (float64 numpy) on decode, one key shown only
Hq, Hkv, Sq, Skv, D = 8, 2, 1, 300, 80
q, k, v = make(Hq, Hkv, Sq, Skv, D)
mask = np.zeros((1, Sq, Skv))
mask[0, 0, ::3] = -np.inf
mask[0, 0, 1::3] = rng.uniform(-3, 0.5, Skv)[1::3]
run_case("G2 decode Hq8/Hkv2 Sq1 Skv300 D80 shared (1,Sq,Skv) f64 mask", q, k, v, sinks_near(100, Hq), mask=mask)

# G3: decode with a per-head mask where one head sees no key at all
Hq, Hkv, Sq, Skv, D = 6, 1, 1, 129, 64
q, k, v = make(Hq, Hkv, Sq, Skv, D)
mask = np.zeros((Hq, Sq, Skv), np.float16)
mask[4] = -np.inf
mask[1, 0, 60:] = -np.inf
run_case("G3 decode Hq6/Hkv1 Sq1 Skv129 D64 per-head f16 mask, head 4 sees nothing", q, k, v,
         sinks_near(129, Hq), mask=mask)

# H: softcap (sharper Q), custom scale
q, k, v = make(6, 1, 37, 129, 64, qmul=3.0)
run_case("H Hq6/Hkv1 Sq37 Skv129 D64 softcap=5 q*3", q, k, v, np.linspace(-1, 6, 6).astype(np.float32),
         softcap=5.0)
q, k, v = make(8, 2, 37, 129, 128)
run_case("H2 Hq8/Hkv2 Sq37 Skv129 D128 scale=0.05 softcap=3 causal", q, k, v,
         np.linspace(0.0, 6.0, 8).astype(np.float32), scale=0.05, softcap=3.0, causal=True)
q, k, v = make(8, 2, 1, 203, 64, qmul=3.0)
run_case("H3 decode Hq8/Hkv2 Sq1 Skv203 D64 softcap=4 q*3", q, k, v, sinks_near(40, 8), softcap=4.0)

# I: out_dtype float16 (prefill and decode), also with out=
q, k, v = make(8, 2, 37, 129, 128)
run_case("I out f16 Hq8/Hkv2 Sq37 Skv129 D128 causal", q, k, v, sinks_near(110, 8), causal=True,
         out_dtype=np.float16)
q, k, v = make(6, 1, 1, 203, 80)
outbuf = np.empty((6, 1, 80), np.float16)
run_case("I2 out= f16 decode Hq6/Hkv1 Sq1 Skv203 D80", q, k, v, sinks_near(203, 6, dt=np.float16),
         out_dtype=np.float16, out=outbuf)

# J: acc="f16"
q, k, v = make(8, 2, 37, 203, 64)
run_case("J acc=f16 Hq8/Hkv2 Sq37 Skv203 D64 causal", q, k, v, sinks_near(180, 8), causal=True, acc="f16")
q, k, v = make(6, 1, 1, 129, 128)
run_case("J2 acc=f16 decode Hq6/Hkv1 Sq1 Skv129 D128 f16 sinks out f16", q, k, v,
         sinks_near(129, 6, dt=np.float16), acc="f16", out_dtype=np.float16)

# K: extreme but finite sinks: very large (rows -> ~0), very negative (= no sink), zero, huge f16
q, k, v = make(6, 2, 37, 129, 64)
run_case("K extreme finite sinks [60,-60,0,30,-1e4,65504] Hq6/Hkv2 Sq37 Skv129", q, k, v,
         np.array([60, -60, 0, 30, -1e4, 65504], np.float32), causal=True)
q, k, v = make(6, 2, 1, 129, 64)
run_case("K2 decode extreme f16 sinks [65504,-65504,0,12,-12,5]", q, k, v,
         np.array([65504, -65504, 0, 12, -12, 5], np.float16))

# L: explicit impl="nv2" with sinks on decode; bf16 K/V
q, k, v = make(8, 2, 1, 129, 64)
run_case("L impl=nv2 decode Hq8/Hkv2 Sq1 Skv129 D64", q, k, v, sinks_near(129, 8), impl="nv2")
q, k, v = make(8, 2, 37, 129, 64)
kb, vb = ops.to_bf16(k.astype(np.float32)), ops.to_bf16(v.astype(np.float32))
run_case("L2 bf16 K/V Hq8/Hkv2 Sq37 Skv129 D64 causal", q, kb, vb, sinks_near(110, 8), causal=True)

# M: 2-D inputs (one head), sinks shape (1,)
q2 = rng.standard_normal((37, 64)).astype(np.float16)
k2 = rng.standard_normal((129, 64)).astype(np.float16)
v2 = (0.5 + rng.standard_normal((129, 64))).astype(np.float16)
run_case("M 2-D one head Sq37 Skv129 D64 sinks (1,)", q2, k2, v2, np.array([np.log(129) + 0.5], np.float32),
         causal=True)

# O: 5 tokens of 4 query heads a K/V head (20 rows: the cooperative-matrix decode range without sinks), bf16 Q
q, k, v = make(8, 2, 5, 203, 64)
qb = ops.to_bf16(q.astype(np.float32))
run_case("O Hq8/Hkv2 Sq5 Skv203 D64 bf16 Q causal", qb, k, v, sinks_near(200, 8), causal=True)

# Z: everything at once: MQA, D128, Skv 300, causal+window+per-head mask+softcap, acc f16, out f16, f16 sinks
Hq, Hkv, Sq, Skv, D = 6, 1, 37, 300, 128
q, k, v = make(Hq, Hkv, Sq, Skv, D, qmul=2.0)
mask = rng.uniform(-1, 0.5, (Hq, Sq, Skv)).astype(np.float16)
mask[0, 3] = -np.inf
mask[5, :, 250:280] = -np.inf
run_case("Z Hq6/Hkv1 Sq37 Skv300 D128 causal window=100 mask softcap=8 acc=f16 out f16 f16-sinks", q, k, v,
         sinks_near(100, Hq, dt=np.float16), causal=True, window=100, mask=mask, softcap=8.0, acc="f16",
         out_dtype=np.float16)

# K3: extreme sinks with acc=f16 (f16 exponent range)
q, k, v = make(6, 2, 37, 129, 80)
run_case("K3 acc=f16 extreme f16 sinks [65504,-65504,0,12,-12,5] Sq37 Skv129 D80", q, k, v,
         np.array([65504, -65504, 0, 12, -12, 5], np.float16), acc="f16", causal=True)

# N: Skv = 0 with sinks: every query gives 0 (docs)
def n_case():
    q = rng.standard_normal((4, 5, 64)).astype(np.float16)
    k = np.zeros((2, 0, 64), np.float16)
    o = ops.attention(q, k, k, sinks=np.ones(4, np.float32), device="cpu")
    if o.shape == q.shape and np.all(o == 0):
        say("OK", "N Skv=0 with sinks", "all zeros, q's shape")
    else:
        say("MISMATCH", "N Skv=0 with sinks", f"shape {o.shape}, max|o|={np.abs(o).max()}")
try:
    n_case()
except Exception as e:  # noqa: BLE001
    say("ERROR", "N Skv=0 with sinks", f"{type(e).__name__}: {e}")

def n2_case():
    q = np.zeros((4, 0, 64), np.float16)
    k = rng.standard_normal((2, 10, 64)).astype(np.float16)
    o = ops.attention(q, k, k, sinks=np.ones(4, np.float32), device="cpu")
    say("OK" if o.shape == q.shape else "MISMATCH", "N2 Sq=0 with sinks", f"shape {o.shape}")
try:
    n2_case()
except Exception as e:  # noqa: BLE001
    say("ERROR", "N2 Sq=0 with sinks", f"{type(e).__name__}: {e}")

# ---------------------------------------------------------------- part 2: refusals
print("== part 2: refusals ==")
q, k, v = make(8, 2, 37, 64, 64)
qd, kd, vd = make(8, 2, 1, 64, 64)
good = np.zeros(8, np.float32)
A = lambda **kw: (lambda: ops.attention(q, k, v, device="cpu", **kw))  # noqa: E731
Ad = lambda **kw: (lambda: ops.attention(qd, kd, vd, device="cpu", **kw))  # noqa: E731
expect_raise("R1 sinks shape (7,) for Hq=8", ValueError, ["sinks"], A(sinks=np.zeros(7, np.float32)))
expect_raise("R2 sinks shape (9,) for Hq=8", ValueError, ["sinks"], A(sinks=np.zeros(9, np.float32)))
expect_raise("R3 sinks shape (8,1)", ValueError, ["sinks"], A(sinks=np.zeros((8, 1), np.float32)))
expect_raise("R4 sinks shape (1,8)", ValueError, ["sinks"], A(sinks=np.zeros((1, 8), np.float32)))
expect_raise("R5 sinks shape (2,) = Hkv", ValueError, ["sinks"], A(sinks=np.zeros(2, np.float32)))
expect_raise("R6 sinks 0-d array for Hq=8", ValueError, ["sinks"], A(sinks=np.array(1.0, np.float32)))
expect_raise("R7 sinks float64", ValueError, ["sinks"], A(sinks=np.zeros(8, np.float64)))
expect_raise("R8 sinks int32", ValueError, ["sinks"], A(sinks=np.zeros(8, np.int32)))
expect_raise("R9 sinks uint16 (bf16 bits)", ValueError, ["sinks"], A(sinks=np.zeros(8, np.uint16)))
expect_raise("R10 sinks complex64", ValueError, ["sinks"], A(sinks=np.zeros(8, np.complex64)))
# (R11, R14: docs/ops.md as first written refused impl="decode" with sinks; the decode kernels now take them, so a
# decoding shape runs and a prefill shape is refused for its rows, as impl="decode" is past what it takes)
def r11():
    o = Ad(sinks=good, impl="decode")()
    say("OK" if np.isfinite(o).all() else "MISMATCH", "R11 impl=decode with sinks (decode shape) runs", "finite")


r11()
# (R12, R13: docs/ops.md as first written refused impl="khr" with sinks; the KHR kernel now takes them)
def r12(label, call):
    o = call()
    say("OK" if np.isfinite(o).all() else "MISMATCH", label, "finite")


r12("R12 impl=khr with sinks (prefill) runs", A(sinks=good, impl="khr"))
r12("R13 impl=khr with sinks (decode shape) runs", Ad(sinks=good, impl="khr"))
expect_raise("R14 impl=decode with sinks (prefill shape)", ValueError, ["decode", "rows"], A(sinks=good, impl="decode"))
expect_raise("R15 sinks '>f4' byte order", ValueError, ["sinks"], A(sinks=np.zeros(8, ">f4")))
expect_raise("R16 sinks a Python list (Interoperability: a list is a TypeError)", TypeError, ["sinks"],
             A(sinks=[0.0] * 8))
expect_raise("R17 sinks a Python float", TypeError, ["sinks"], A(sinks=1.0))

# ---------------------------------------------------------------- part 3: what the docs leave open
print("== part 3: unclear cases (NOTEs) ==")
qn, kn, vn = make(4, 2, 37, 129, 64)
base_s = sinks_near(80, 4)


def describe(o, want=None, nos=None):
    o = np.asarray(o, np.float64)
    parts = [f"finite rows/head={[int(np.isfinite(o[h]).all(axis=-1).sum()) for h in range(o.shape[0])]}"]
    if want is not None:
        for h in range(o.shape[0]):
            fin = np.isfinite(o[h]).all()
            desc = f"h{h}:"
            if fin:
                big = max(np.abs(want[h]).max(), 1e-30)
                desc += f"errVsModel={np.abs(o[h] - want[h]).max() / big:.1e}"
                if nos is not None:
                    desc += f",errVsNoSink={np.abs(o[h] - nos[h]).max() / max(np.abs(nos[h]).max(), 1e-30):.1e}"
                desc += f",max|o|={np.abs(o[h]).max():.2g}"
            else:
                desc += f"nan={int(np.isnan(o[h]).sum())},inf={int(np.isinf(o[h]).sum())}"
            parts.append(desc)
    return " ".join(parts)


def ref_desc(s):
    with np.errstate(all="ignore"):
        r = reference(qn, kn, vn, causal=True, sinks=s)
    fin = [int(np.isfinite(r[h]).all(axis=-1).sum()) for h in range(r.shape[0])]
    return f"finite rows/head={fin}, h0 max|r|={np.nanmax(np.abs(r[0])) if np.isfinite(r[0]).any() else 'nan'}"


def special_sinks(vals, dt, causal=True):
    s = base_s.astype(dt).copy()
    s[: len(vals)] = vals
    o = ops.attention(qn, kn, vn, causal=causal, sinks=s, device="cpu")
    with np.errstate(all="ignore"):
        want = model(qn, kn, vn, causal=causal, sinks=np.where(np.isfinite(s), s, 0.0))
    nos = model(qn, kn, vn, causal=causal)
    return o, want, nos


def p3_inf():
    o, want, nos = special_sinks([np.inf, -np.inf], np.float32)
    return ("sinks[0]=+inf, sinks[1]=-inf (f32): " + describe(o, None) +
            f" | h0 max|o|={np.nanmax(np.abs(o[0])) if np.isfinite(o[0]).any() else 'nan'}"
            f" | h1 vs no-sink model: {np.abs(o[1] - nos[1]).max() / np.abs(nos[1]).max():.1e}"
            f" | reference(): {ref_desc(np.array([np.inf, -np.inf] + list(base_s[2:]), np.float32))}")
note("P1 +inf / -inf sinks (prefill)", p3_inf)


def p3_nan():
    o, *_ = special_sinks([np.nan], np.float32)
    return ("sinks[0]=NaN (f32): " + describe(o) +
            f" | reference(): {ref_desc(np.array([np.nan] + list(base_s[1:]), np.float32))}")
note("P2 NaN sink (prefill)", p3_nan)


def p3_inf_decode():
    q1, k1, v1 = make(4, 2, 1, 129, 64)
    s = np.array([np.inf, -np.inf, np.nan, 1.0], np.float32)
    o = ops.attention(q1, k1, v1, sinks=s, device="cpu")
    nos = model(q1, k1, v1)
    return ("decode sinks [+inf,-inf,NaN,1]: " + describe(o) +
            f" | h0 max|o|={np.abs(o[0]).max() if np.isfinite(o[0]).all() else 'non-finite'}"
            f" | h1 vs no-sink model: {np.abs(o[1] - nos[1]).max() / np.abs(nos[1]).max():.1e}")
note("P3 +inf/-inf/NaN sinks (decode)", p3_inf_decode)


def p3_inf_f16():
    o, *_ = special_sinks([np.inf, -np.inf], np.float16)
    return "f16 sinks [+inf,-inf]: " + describe(o)
note("P4 +inf/-inf f16 sinks", p3_inf_f16)


def p3_inf_empty_row():
    # +inf sink in a row that sees no key: docs say such a row "still gives 0"
    q1, k1, v1 = make(2, 1, 5, 16, 64)
    m = np.zeros((5, 16), np.float32)
    m[2] = -np.inf
    o = ops.attention(q1, k1, v1, mask=m, sinks=np.array([np.inf, -np.inf], np.float32), device="cpu")
    return f"row 2 (no key) with sink +inf: {o[0, 2, :4]}, with sink -inf: {o[1, 2, :4]}"
note("P5 +inf/-inf sinks on a row that sees no key", p3_inf_empty_row)


def p3_2d_scalar():
    o = ops.attention(q2, k2, v2, sinks=np.float32(2.0), device="cpu")
    want = model(q2, k2, v2, sinks=np.array([2.0]))
    return f"2-D inputs, sinks=np.float32(2.0) (0-d) accepted; err vs model {np.abs(o - want).max() / np.abs(want).max():.1e}"
note("P6 2-D inputs with a 0-d sink", p3_2d_scalar)


def p3_2d_shape11():
    o = ops.attention(q2, k2, v2, sinks=np.full((1, 1), 2.0, np.float32), device="cpu")
    return f"2-D inputs, sinks shape (1,1) accepted, shape {o.shape}"
note("P7 2-D inputs with sinks (1,1)", p3_2d_shape11)


def p3_2d_hq1_3d():
    o = ops.attention(q2[None], k2[None], v2[None], sinks=np.float32(2.0), device="cpu")
    return f"3-D Hq=1, 0-d sink accepted, shape {o.shape}"
note("P8 3-D Hq=1 with a 0-d sink", p3_2d_hq1_3d)


def p3_list_2d():
    o = ops.attention(q2, k2, v2, sinks=[2.0], device="cpu")
    return f"2-D inputs, sinks=[2.0] (list) accepted, shape {o.shape}"
note("P9 2-D inputs with sinks a 1-element list", p3_list_2d)


def p3_arrayarray():
    s = array.array("f", [float(x) for x in base_s])
    o = ops.attention(qn, kn, vn, causal=True, sinks=s, device="cpu")
    want = model(qn, kn, vn, causal=True, sinks=np.asarray(s, np.float64))
    return f"array.array('f') sinks accepted; err vs model {np.abs(o - want).max() / np.abs(want).max():.1e}"
note("P10 sinks an array.array('f') (buffer protocol)", p3_arrayarray)


def p3_strided():
    s = np.repeat(base_s, 2)[::2]
    o = ops.attention(qn, kn, vn, causal=True, sinks=s, device="cpu")
    want = model(qn, kn, vn, causal=True, sinks=s)
    return f"non-contiguous f32 sinks (stride 8 bytes) accepted; err vs model {np.abs(o - want).max() / np.abs(want).max():.1e}"
note("P11 non-contiguous sinks", p3_strided)


def p3_hq0():
    q0 = np.zeros((0, 5, 64), np.float16)
    k0 = np.zeros((0, 7, 64), np.float16)
    o = ops.attention(q0, k0, k0, sinks=np.zeros(0, np.float32), device="cpu")
    return f"Hq=0 Hkv=0 with sinks shape (0,): result shape {o.shape}"
note("P12 Hq=0 with empty sinks", p3_hq0)


def p3_hq0_nonempty():
    q0 = np.zeros((0, 5, 64), np.float16)
    k0 = np.zeros((0, 7, 64), np.float16)
    o = ops.attention(q0, k0, k0, sinks=np.zeros(3, np.float32), device="cpu")
    return f"Hq=0 with sinks shape (3,) accepted: result shape {o.shape}"
note("P13 Hq=0 with wrong-length sinks", p3_hq0_nonempty)


def p3_bf16_mldtypes():
    try:
        import ml_dtypes
    except ImportError:
        return "ml_dtypes not installed; skipped"
    s = base_s.astype(ml_dtypes.bfloat16)
    o = ops.attention(qn, kn, vn, causal=True, sinks=s, device="cpu")
    return f"ml_dtypes bfloat16 sinks accepted, shape {o.shape}"
note("P14 ml_dtypes bfloat16 sinks", p3_bf16_mldtypes)


def p3_scale_softcap_applies():
    # Do scale / softcap apply to the sink? The docs' formula says no; show how far the
    # alternatives are from the result, for a case where they differ a lot.
    q1, k1, v1 = make(4, 2, 37, 129, 64)
    s = np.array([2.0, 4.0, 6.0, 8.0], np.float32)
    o = ops.attention(q1, k1, v1, sinks=s, softcap=2.0, scale=0.25, device="cpu")
    raw = model(q1, k1, v1, sinks=s, softcap=2.0, scale=0.25)
    capped = model(q1, k1, v1, sinks=2.0 * np.tanh(s / 2.0), softcap=2.0, scale=0.25)
    scaled = model(q1, k1, v1, sinks=0.25 * s, softcap=2.0, scale=0.25)
    big = np.abs(raw).max()
    return (f"softcap=2 scale=0.25 sinks [2,4,6,8]: err vs raw-sink model {np.abs(o - raw).max() / big:.1e}, "
            f"vs softcapped-sink {np.abs(o - capped).max() / big:.1e}, vs scaled-sink {np.abs(o - scaled).max() / big:.1e}")
note("P15 is the sink scaled or soft-capped?", p3_scale_softcap_applies)


def p3_reference_empty_row_inf():
    q1, k1, v1 = make(2, 1, 5, 16, 64)
    m = np.zeros((5, 16), np.float32)
    m[2] = -np.inf
    r = reference(q1, k1, v1, mask=m, sinks=np.array([np.inf, -np.inf], np.float32))
    return f"reference(): row with no key, sink +inf -> {r[0, 2, :3]}, -inf -> {r[1, 2, :3]}; finite rows h0: {int(np.isfinite(r[0]).all(axis=-1).sum())}/5"
note("P16 reference() with infinite sinks", p3_reference_empty_row_inf)

el = time.time() - T0
print(f"SUMMARY OK={COUNTS['OK']} MISMATCH={COUNTS['MISMATCH']} ERROR={COUNTS['ERROR']} "
      f"NOTE={COUNTS['NOTE']} time={el:.1f}s")
