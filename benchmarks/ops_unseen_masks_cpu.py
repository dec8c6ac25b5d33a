"""Check coopdsl.ops.attention with masks on the CPU interpreter against a float64
numpy reference written only from docs/ops.md ("## Attention").

A fourth docs-only check, written on 2026-11-29 by a tester who read docs/ops.md alone (not coopdsl/ops or the
tests): 172 numeric cases (82 chosen, 90 from a seeded sweep) of masks per head and shared, f32/f16 values that
are not f16 numbers (ALiBi slopes), -1e9 and -inf, blocks all -inf or 0, hidden rows, causal, windows, grouped
heads, Sq != Skv, decoding rows, odd and aligned lengths, bf16 inputs, f16 output; the documented refusals.
Its output of that day: benchmarks/results/ops-unseen-masks-cpu-2026-11-29.log.

Run:  python3 benchmarks/ops_unseen_masks_cpu.py   (from the repository root; about a minute)

Tolerances (max |out - ref| / max |ref|), from docs/ops.md:
  * lane = key decode kernel (<= 4 query rows per K/V head, or D > 128 with <= 16):
    "computes everything in f32 (largest error about 4e-7 of the largest output)"
    -> TOL_LANES = 1e-5.
  * cooperative-matrix decode (5..128 rows) and the prefill kernels: "about 3e-4",
    "1.6e-4 to 3.8e-4 of the largest output" -> TOL_MMA = 1e-3 (~2.5x the largest figure).
  * float16 output adds at most half an f16 ulp of the largest value: + 2**-11.
Mask values in the reference follow the docs' rule: below -65504 -> -inf, above 65504 -> 65504,
anything else rounded to f16.  Each case also prints 'sens', the error the same output would have
against a reference that does NOT round the mask to f16 (shows the check is sensitive to the rule).
"""
import math
import sys
import time
import traceback

import numpy as np

from coopdsl import ops
from coopdsl.ops import attention_nv2

try:
    import ml_dtypes
except ImportError:  # pragma: no cover
    ml_dtypes = None

TOL_LANES = 1e-5
TOL_MMA = 1e-3
F16_OUT = 2.0 ** -11

RESULTS = {"OK": 0, "MISMATCH": 0, "ERROR": 0, "NOTE": 0}
PROBLEMS = []


def report(status, line):
    RESULTS[status] += 1
    print(f"{status:8s} {line}", flush=True)
    if status != "OK":
        PROBLEMS.append(f"{status} {line}")


# ----------------------------------------------------------------------------- reference
def mask_rule(m):
    """docs: below -65504 hides the key as -inf does, above 65504 it is 65504, else rounded to f16."""
    m = np.asarray(m, np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        r = np.where(m < -65504, -np.inf, np.where(m > 65504, 65504.0, m))
        r = np.where(np.isfinite(r), r.astype(np.float16).astype(np.float64), r)
    return r


def reference(q, k, v, *, causal=False, mask=None, window=None, scale=None, softcap=0.0, round_mask=True):
    q = np.asarray(q, np.float64)
    k = np.asarray(k, np.float64)
    v = np.asarray(v, np.float64)
    if q.ndim == 2:
        q, k, v = q[None], k[None], v[None]
        two_d = True
    else:
        two_d = False
    Hq, Sq, D = q.shape
    Hkv, Skv, _ = k.shape
    g = Hq // Hkv
    if scale is None:
        scale = 1.0 / math.sqrt(D)
    kk = np.repeat(k, g, axis=0)
    vv = np.repeat(v, g, axis=0)
    s = scale * np.einsum("hid,hjd->hij", q, kk)
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    if mask is not None:
        m = mask_rule(mask) if round_mask else np.asarray(mask, np.float64)
        if m.ndim == 2:
            m = m[None]
        s = s + m  # broadcasts (1, Sq, Skv)
    i = np.arange(Sq)[:, None]
    j = np.arange(Skv)[None, :]
    vis = np.ones((Sq, Skv), bool)
    if causal:
        vis &= j <= i + Skv - Sq
    if window is not None:
        vis &= j >= i + Skv - Sq - window + 1
    s = np.where(vis[None], s, -np.inf)
    with np.errstate(invalid="ignore", over="ignore"):
        mx = s.max(axis=-1, keepdims=True)
        hidden = np.isneginf(mx)
        p = np.exp(s - np.where(hidden, 0.0, mx))
        o = np.einsum("hij,hjd->hid", p, vv) / np.where(hidden, 1.0, p.sum(-1, keepdims=True))
    o = np.where(hidden, 0.0, o)
    return o[0] if two_d else o


# ----------------------------------------------------------------------------- inputs
def make(shape, dt, rng, mul=1.0):
    x = (rng.standard_normal(shape) * mul).astype(np.float32)
    if dt == "f16":
        a = x.astype(np.float16)
        return a, a.astype(np.float64)
    if dt == "f32":
        return x, x.astype(np.float64)
    if dt == "bf16":  # uint16 bit patterns
        b = ops.to_bf16(x)
        return b, ops.from_bf16(b).astype(np.float64)
    if dt == "mlbf16":
        b = x.astype(ml_dtypes.bfloat16)
        return b, b.astype(np.float64)
    raise ValueError(dt)


def alibi(H, Sq, Skv, heads=None):
    """ALiBi slopes 2**(-8*h/H), h = 1..H, times the distance (key - aligned query position)."""
    hs = np.arange(1, H + 1) if heads is None else np.asarray(heads)
    slopes = 2.0 ** (-8.0 * hs / H)
    dist = np.arange(Skv)[None, :] - (np.arange(Sq)[:, None] + Skv - Sq)
    return (slopes[:, None, None] * dist[None]).astype(np.float32)


def gen_mask(kind, H, Sq, Skv, rng):
    """(H, Sq, Skv) float64 mask of the given kind (H = 1 for a shared mask)."""
    shp = (H, Sq, Skv)
    if kind == "randn":
        return rng.standard_normal(shp) * 3
    if kind == "alibi12":
        return alibi(12, Sq, Skv, np.arange(1, H + 1) if H > 1 else [5]).astype(np.float64)
    if kind == "alibi32":
        return alibi(32, Sq, Skv, np.arange(1, H + 1) if H > 1 else [7]).astype(np.float64)
    if kind == "neg1e9":
        m = rng.standard_normal(shp) * 2
        m[rng.random(shp) < 0.3] = -1e9
        return m
    if kind == "neginf":
        m = rng.standard_normal(shp) * 2
        m[rng.random(shp) < 0.3] = -np.inf
        return m
    if kind == "f32min":
        m = rng.standard_normal(shp) * 2
        m[rng.random(shp) < 0.3] = np.finfo(np.float32).min
        return m
    if kind.startswith("blocks"):
        b = int(kind[6:])
        m = rng.standard_normal(shp) * 2
        for h in range(H):
            for r0 in range(0, Sq, b):
                for c0 in range(0, Skv, b):
                    u = rng.random()
                    if u < 0.35:
                        m[h, r0:r0 + b, c0:c0 + b] = -np.inf
                    elif u < 0.7:
                        m[h, r0:r0 + b, c0:c0 + b] = 0.0
        return m
    if kind == "hiddenrows":
        m = rng.standard_normal(shp) * 2
        rows = rng.choice(Sq, size=max(1, Sq // 7), replace=False)
        for n, r in enumerate(rows):
            m[:, r, :] = [-1e9, -np.inf, -70000.0][n % 3]
        return m
    if kind == "padcache":  # fixed-size cache, the last quarter of slots unused
        m = rng.standard_normal(shp) * 0.5
        m[:, :, Skv - Skv // 4:] = -np.inf
        return m
    raise ValueError(kind)


def expected_path(Hq, Hkv, Sq, D, impl):
    """Which kernel docs/ops.md says runs ('lanes', 'mma', 'nv2', 'khr')."""
    rows = (Hq // Hkv) * Sq
    if impl == "khr":
        return "khr"
    if impl == "nv2":
        return "nv2"
    if impl == "decode" or rows <= 16:
        if rows <= 4 or D > 128:
            return "lanes"
        return "mma"
    if rows <= 128 and D <= 128 and Hkv * math.ceil(rows / 16) <= 2 * Hq * math.ceil(Sq / 64):
        return "mma"
    return "nv2"


def observed_path(names):
    if any(n.startswith("attention_decode_mma") for n in names):
        return "mma"
    if any(n.startswith("attention_decode_d") for n in names):
        return "lanes"
    if any(n.startswith("flash_attn_cm2") for n in names):
        return "nv2"
    if "attention" in names:
        return "khr"
    return "?"


# ----------------------------------------------------------------------------- one case
def case(desc, *, Hq=4, Hkv=4, Sq=64, Skv=64, D=64, qdt="f16", kdt="f16", vdt=None,
         mask_kind=None, mask_layout="head", mask_dt=np.float32, mask=None,
         causal=False, window=None, scale=None, softcap=0.0, out_dtype=np.float32,
         impl=None, acc="f32", qmul=1.0, seed=0, two_d=False, q_zero=False, use_out=False, tol=None):
    vdt = vdt or kdt
    rng = np.random.default_rng(seed)
    params = (f"Hq={Hq} Hkv={Hkv} Sq={Sq} Skv={Skv} D={D} q={qdt} k={kdt} v={vdt} "
              f"mask={mask_kind or ('custom' if mask is not None else None)}:{mask_layout}:"
              f"{np.dtype(mask_dt).name if (mask_kind or mask is not None) else '-'} causal={causal} "
              f"window={window} scale={scale} softcap={softcap} out={np.dtype(out_dtype).name} impl={impl}"
              + (f" acc={acc}" if acc != "f32" else "") + (f" qmul={qmul}" if qmul != 1.0 else "")
              + (" q=0" if q_zero else ""))
    try:
        q, q64 = make((Hq, Sq, D), qdt, rng, qmul)
        if q_zero:
            q = np.zeros_like(q)
            q64 = np.zeros_like(q64)
        k, k64 = make((Hkv, Skv, D), kdt, rng)
        v, v64 = make((Hkv, Skv, D), vdt, rng)
        if mask is None and mask_kind is not None:
            H = Hq if mask_layout == "head" else 1
            mask = gen_mask(mask_kind, H, Sq, Skv, rng)
        m_pass = None
        if mask is not None:
            mask = np.asarray(mask, np.float64)
            if mask.ndim == 2:
                mask = mask[None]
            with np.errstate(over="ignore"):
                m_pass = mask.astype(mask_dt)
            if mask_layout == "shared":
                m_pass = m_pass[0]
            elif mask_layout == "shared1":
                m_pass = m_pass[:1]
            mask_ref = m_pass.astype(np.float64)  # what was actually passed (e.g. after an f16 cast)
        else:
            mask_ref = None
        if two_d:
            q, k, v = q[0], k[0], v[0]
            q64, k64, v64 = q64[0], k64[0], v64[0]
            if m_pass is not None and m_pass.ndim == 3:
                m_pass = m_pass[0]
                mask_ref = mask_ref[0]
        kw = dict(causal=causal, mask=m_pass, window=window, softcap=softcap, out_dtype=out_dtype,
                  device="cpu", impl=impl)
        if acc != "f32":
            kw["acc"] = acc
        if scale is not None:
            kw["scale"] = scale
        out = None
        if use_out:
            out = np.full(q.shape, 7.0, out_dtype)
            kw["out"] = out
        t0 = time.time()
        with attention_nv2.recording() as launched:
            o = ops.attention(q, k, v, **kw)
        dt = time.time() - t0
        names = [kern.name for kern, *_ in launched]
        r = reference(q64, k64, v64, causal=causal, mask=mask_ref, window=window, scale=scale, softcap=softcap)
        r_nr = reference(q64, k64, v64, causal=causal, mask=mask_ref, window=window, scale=scale,
                         softcap=softcap, round_mask=False)
        exp_p = expected_path(Hq, Hkv if not two_d else 1, Sq, D, impl)
        obs_p = observed_path(names)
        if tol is None:
            tol = TOL_LANES if exp_p == "lanes" else TOL_MMA
        if np.dtype(out_dtype) == np.float16:
            tol += F16_OUT
        notes = []
        if not isinstance(o, np.ndarray) or o.shape != q.shape or o.dtype != np.dtype(out_dtype):
            notes.append(f"result type/shape/dtype {type(o).__name__} {getattr(o, 'shape', None)} "
                         f"{getattr(o, 'dtype', None)}")
        if use_out and o is not out and not np.shares_memory(o, out):
            notes.append("result is not out")
        o64 = np.asarray(o, np.float64)
        nan_r, nan_o = np.isnan(r), np.isnan(o64)
        if not np.array_equal(nan_r, nan_o):
            notes.append(f"NaN pattern differs (ref {nan_r.sum()} NaN, got {nan_o.sum()} NaN)")
        fin = ~nan_r & ~nan_o
        den = np.abs(r[fin]).max() if fin.any() else 0.0
        err_abs = np.abs(o64[fin] - r[fin]).max() if fin.any() else 0.0
        err = err_abs / den if den > 0 else err_abs
        sens_abs = np.abs(o64[fin] - r_nr[fin]).max() if fin.any() else 0.0
        sens = sens_abs / den if den > 0 else sens_abs
        if not np.isfinite(err):
            notes.append("non-finite error")
        # exact zeros for rows that see no key
        hid = np.all(r == 0, axis=-1)
        if hid.any() and np.any(o64[hid] != 0):
            notes.append(f"hidden rows not exactly 0 (max {np.abs(o64[hid]).max():.3g})")
        ok = (not notes) and err <= tol
        path_note = "" if exp_p == obs_p else f" [PATH docs={exp_p} ran={obs_p}]"
        line = (f"{desc} | {params} | err={err:.3e} tol={tol:.1e} sens={sens:.2e} "
                f"kernels={','.join(names)} {dt:.1f}s{path_note}" + (" | " + "; ".join(notes) if notes else ""))
        report("OK" if ok else "MISMATCH", line)
        if path_note:
            report("NOTE", f"{desc}: kernel path differs from docs' rule: docs={exp_p} ran={obs_p} ({names})")
    except Exception as e:  # noqa: BLE001
        report("ERROR", f"{desc} | {params} | {type(e).__name__}: {e}")
        traceback.print_exc(limit=3)


# ----------------------------------------------------------------------------- refusals
def refused(desc, fn, exc, must_contain=(), one_of=None):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        msg = str(e)
        good = isinstance(e, exc)
        missing = [s for s in must_contain if s.lower() not in msg.lower()]
        if one_of and not any(s.lower() in msg.lower() for s in one_of):
            missing.append("one of " + "/".join(one_of))
        if good and not missing:
            report("OK", f"refuse: {desc} -> {type(e).__name__}: {msg}")
        else:
            report("MISMATCH", f"refuse: {desc} -> expected {exc.__name__} containing {list(must_contain)}"
                               f"{' ' + str(one_of) if one_of else ''}; got {type(e).__name__}: {msg}"
                               f"{' (missing ' + str(missing) + ')' if missing else ''}")
        return
    report("MISMATCH", f"refuse: {desc} -> expected {exc.__name__}, but the call succeeded")


def accepted(desc, fn):
    try:
        fn()
        report("OK", f"accept: {desc}")
    except Exception as e:  # noqa: BLE001
        report("MISMATCH", f"accept: {desc} -> {type(e).__name__}: {e}")


def main():
    t_start = time.time()
    # ---------------- additive masks, prefill kernel (ggml's flash_attn_cm2 on the interpreter)
    case("randn per-head f32", Hq=4, Hkv=4, Sq=64, Skv=64, mask_kind="randn")
    case("randn shared f16", Hq=4, Hkv=4, Sq=64, Skv=64, mask_kind="randn", mask_layout="shared", mask_dt=np.float16)
    case("randn shared (1,Sq,Skv) f32", Hq=4, Hkv=2, Sq=77, Skv=77, D=80, mask_kind="randn", mask_layout="shared1")
    case("randn shared f64 mask", Hq=2, Hkv=1, Sq=131, Skv=131, mask_kind="randn", mask_layout="shared",
         mask_dt=np.float64)
    case("ALiBi H=12 per-head f32 causal", Hq=12, Hkv=12, Sq=77, Skv=77, D=80, mask_kind="alibi12", causal=True)
    case("ALiBi H=12 per-head f16 causal", Hq=12, Hkv=12, Sq=77, Skv=77, D=80, mask_kind="alibi12", causal=True,
         mask_dt=np.float16)
    case("ALiBi H=12 GQA 12/4 Sq!=Skv causal", Hq=12, Hkv=4, Sq=131, Skv=203, D=64, mask_kind="alibi12", causal=True)
    case("ALiBi H=32 GQA 32/8 causal", Hq=32, Hkv=8, Sq=64, Skv=64, D=64, mask_kind="alibi32", causal=True)
    case("ALiBi H=32 MQA 32/1 Sq!=Skv no causal", Hq=32, Hkv=1, Sq=40, Skv=77, D=64, mask_kind="alibi32")
    case("ALiBi H=12 shared, window", Hq=4, Hkv=4, Sq=200, Skv=200, D=64, mask_kind="alibi12",
         mask_layout="shared", causal=True, window=64)
    case("ALiBi H=12 + softcap 30", Hq=12, Hkv=6, Sq=77, Skv=131, D=64, mask_kind="alibi12", causal=True,
         softcap=30.0, qmul=4.0)
    case("-1e9 per-head causal window GQA", Hq=2, Hkv=1, Sq=203, Skv=257, D=128, mask_kind="neg1e9",
         causal=True, window=50)
    case("-1e9 shared f32, f16 out", Hq=4, Hkv=4, Sq=131, Skv=131, D=64, mask_kind="neg1e9",
         mask_layout="shared", out_dtype=np.float16)
    case("-1e9 as f16 array (becomes -inf)", Hq=4, Hkv=2, Sq=77, Skv=77, D=64, mask_kind="neg1e9",
         mask_dt=np.float16)
    case("float32 min per-head", Hq=2, Hkv=2, Sq=77, Skv=131, D=80, mask_kind="f32min", causal=True)
    case("-inf shared f16 window no causal", Hq=2, Hkv=2, Sq=257, Skv=257, D=64, mask_kind="neginf",
         mask_layout="shared", mask_dt=np.float16, window=33)
    case("-inf per-head f32 scale=0.3", Hq=3, Hkv=3, Sq=100, Skv=150, D=64, mask_kind="neginf", scale=0.3)
    case("blocks64 (-inf/0/randn) shared", Hq=2, Hkv=2, Sq=256, Skv=256, D=64, mask_kind="blocks64",
         mask_layout="shared")
    case("blocks64 per-head causal", Hq=2, Hkv=1, Sq=256, Skv=256, D=64, mask_kind="blocks64", causal=True)
    case("blocks16 per-head f16 causal", Hq=2, Hkv=2, Sq=200, Skv=200, D=128, mask_kind="blocks16",
         mask_dt=np.float16, causal=True)
    case("blocks32 shared, unaligned Sq!=Skv", Hq=2, Hkv=2, Sq=131, Skv=257, D=80, mask_kind="blocks32",
         mask_layout="shared", causal=True)
    case("blocks64 shared, unaligned 203x203", Hq=2, Hkv=2, Sq=203, Skv=203, D=64, mask_kind="blocks64",
         mask_layout="shared")
    case("hidden rows (-1e9/-inf/-70000) per-head", Hq=2, Hkv=2, Sq=131, Skv=131, D=64, mask_kind="hiddenrows",
         causal=True)
    case("hidden rows shared, f16 out", Hq=4, Hkv=2, Sq=77, Skv=200, D=64, mask_kind="hiddenrows",
         mask_layout="shared", out_dtype=np.float16)
    case("padded cache (-inf tail) shared", Hq=4, Hkv=4, Sq=64, Skv=256, D=64, mask_kind="padcache",
         mask_layout="shared")
    # rows hidden only by the combination of mask and causal/window
    Sq = Skv = 77
    m = np.zeros((Sq, Skv))
    m[0, 0] = -np.inf          # row 0 sees only key 0 under causal
    m[10, :11] = -1e9          # row 10 sees keys 0..10
    case("row hidden by mask+causal", Hq=2, Hkv=2, Sq=Sq, Skv=Skv, D=64, mask=m, mask_layout="shared", causal=True)
    m = np.zeros((Sq, Skv))
    idx = np.arange(0, Sq, 3)
    m[idx, idx] = -np.inf      # window=1: each row only its own key
    case("rows hidden by mask+window=1", Hq=2, Hkv=2, Sq=Sq, Skv=Skv, D=64, mask=m, mask_layout="shared",
         causal=True, window=1)
    case("every row hidden (all -inf)", Hq=2, Hkv=2, Sq=64, Skv=64, D=64, mask=np.full((64, 64), -np.inf),
         mask_layout="shared")
    case("mask with causal Sq=Skv=256 aligned", Hq=2, Hkv=2, Sq=256, Skv=256, D=128, mask_kind="randn",
         causal=True)
    case("mask no causal Sq=Skv=64 D=128 f16 out", Hq=2, Hkv=2, Sq=64, Skv=64, D=128, mask_kind="randn",
         out_dtype=np.float16)
    case("2-D inputs (S,D) with mask", Hq=1, Hkv=1, Sq=77, Skv=131, D=64, mask_kind="randn", mask_layout="shared",
         causal=True, two_d=True)
    case("out= given numpy f32", Hq=2, Hkv=2, Sq=77, Skv=77, D=64, mask_kind="randn", use_out=True)
    # ---------------- types
    case("q f32, k/v f16, mask", Hq=4, Hkv=2, Sq=77, Skv=131, D=64, qdt="f32", mask_kind="alibi12", causal=True)
    case("bf16 q/k/v (uint16), mask", Hq=4, Hkv=2, Sq=77, Skv=131, D=64, qdt="bf16", kdt="bf16",
         mask_kind="neg1e9", causal=True)
    case("bf16 k/v, f32 q, f16 out", Hq=2, Hkv=2, Sq=131, Skv=131, D=128, qdt="f32", kdt="bf16",
         mask_kind="randn", mask_layout="shared", out_dtype=np.float16)
    case("k f16, v bf16", Hq=2, Hkv=1, Sq=64, Skv=77, D=64, kdt="f16", vdt="bf16", mask_kind="randn")
    if ml_dtypes is not None:
        case("ml_dtypes bfloat16 q/k/v, mask", Hq=2, Hkv=2, Sq=77, Skv=77, D=64, qdt="mlbf16", kdt="mlbf16",
             mask_kind="alibi12", causal=True)
    # ---------------- decoding (1..4 rows per K/V head: f32 lanes kernel; 5..128: mma kernel)
    case("decode Sq=1 GQA 8/2 ALiBi12 causal", Hq=8, Hkv=2, Sq=1, Skv=257, D=64, mask_kind="alibi12", causal=True)
    case("decode Sq=1 MHA 12/12 ALiBi12", Hq=12, Hkv=12, Sq=1, Skv=203, D=128, mask_kind="alibi12")
    case("decode Sq=1 32/8 ALiBi32 f16 mask", Hq=32, Hkv=8, Sq=1, Skv=131, D=64, mask_kind="alibi32",
         mask_dt=np.float16, causal=True)
    case("decode Sq=2 8/2 -1e9 shared f16 (mma)", Hq=8, Hkv=2, Sq=2, Skv=203, D=64, mask_kind="neg1e9",
         mask_layout="shared", mask_dt=np.float16)
    case("decode Sq=3 4/4 per-head -inf", Hq=4, Hkv=4, Sq=3, Skv=257, D=80, mask_kind="neginf", causal=True)
    case("decode Sq=4 32/8 ALiBi32 window (mma)", Hq=32, Hkv=8, Sq=4, Skv=131, D=64, mask_kind="alibi32",
         causal=True, window=64)
    case("decode Sq=4 12/12 ALiBi12 window (lanes)", Hq=12, Hkv=12, Sq=4, Skv=200, D=128, mask_kind="alibi12",
         causal=True, window=77)
    case("decode Sq=1 hidden row", Hq=4, Hkv=1, Sq=1, Skv=77, D=64, mask=np.full((1, 77), -1e9),
         mask_layout="shared")
    case("decode Sq=2 one row hidden, f16 out", Hq=2, Hkv=1, Sq=2, Skv=77, D=64,
         mask=np.concatenate([np.full((1, 77), -np.inf), np.zeros((1, 77))]), mask_layout="shared",
         out_dtype=np.float16)
    case("decode padded cache Sq=1 256 slots", Hq=8, Hkv=2, Sq=1, Skv=256, D=128, mask_kind="padcache",
         mask_layout="shared")
    case("decode padded cache Sq=4 mma", Hq=8, Hkv=2, Sq=4, Skv=256, D=128, mask_kind="padcache",
         mask_layout="shared", causal=True)
    case("decode blocks16 Sq=3 8/8", Hq=8, Hkv=8, Sq=3, Skv=257, D=64, mask_kind="blocks16")
    case("decode Sq=8 8/1 (64 rows: mma) per-head", Hq=8, Hkv=1, Sq=8, Skv=203, D=64, mask_kind="alibi12",
         causal=True)
    case("decode bf16 k/v Sq=1, f16 out", Hq=8, Hkv=2, Sq=1, Skv=200, D=64, qdt="f32", kdt="bf16",
         mask_kind="randn", out_dtype=np.float16)
    case("decode bf16 q/k/v Sq=3 mma", Hq=4, Hkv=2, Sq=3, Skv=131, D=128, qdt="bf16", kdt="bf16",
         mask_kind="neg1e9", causal=True)
    case("decode D=256 Sq=2 4/1 (8 rows, D>128: lanes)", Hq=4, Hkv=1, Sq=2, Skv=131, D=256, mask_kind="randn",
         causal=True)
    case("decode softcap Sq=1", Hq=4, Hkv=1, Sq=1, Skv=131, D=64, mask_kind="alibi12", softcap=20.0, qmul=3.0)
    case("40 rows/head Sq=5 8/1 mma", Hq=8, Hkv=1, Sq=5, Skv=77, D=80, mask_kind="neginf", mask_layout="shared",
         causal=True)
    case("160 rows/head -> prefill Sq=40 8/2", Hq=8, Hkv=2, Sq=40, Skv=77, D=64, mask_kind="alibi12", causal=True)
    # ---------------- forced kernels
    case("impl=nv2 decode Sq=1 8/2 mask", Hq=8, Hkv=2, Sq=1, Skv=257, D=64, mask_kind="alibi12", causal=True,
         impl="nv2")
    case("impl=nv2 Sq=3 4/4 -inf", Hq=4, Hkv=4, Sq=3, Skv=131, D=64, mask_kind="neginf", impl="nv2")
    case("impl=khr mask causal", Hq=2, Hkv=1, Sq=77, Skv=131, D=64, mask_kind="alibi12", causal=True, impl="khr")
    case("impl=khr hidden rows, f16 out", Hq=2, Hkv=2, Sq=40, Skv=64, D=64, mask_kind="hiddenrows",
         out_dtype=np.float16, impl="khr")
    case("impl=decode Sq=16 4/4 (64 rows)", Hq=4, Hkv=4, Sq=16, Skv=131, D=64, mask_kind="randn", causal=True,
         impl="decode")
    # ---------------- Sq > Skv with causal: the first Sq - Skv rows see no key (give 0)
    case("Sq>Skv causal + mask", Hq=2, Hkv=1, Sq=131, Skv=77, D=64, mask_kind="randn", causal=True)
    case("Sq>Skv causal + window + mask (decode mma)", Hq=4, Hkv=1, Sq=4, Skv=3, D=64, mask_kind="randn",
         causal=True, window=2)
    case("Sq>Skv causal + mask (lanes)", Hq=1, Hkv=1, Sq=4, Skv=2, D=64, mask_kind="randn", causal=True)
    case("window no causal Sq!=Skv", Hq=2, Hkv=2, Sq=77, Skv=203, D=80, mask_kind="neginf", window=40)
    # ---------------- acc="f16" (no error figure in the docs for it: tolerance 5e-3 chosen here)
    for sq, lbl in [(77, "prefill"), (1, "decode ignores acc")]:
        case(f"acc=f16 {lbl}", Hq=2, Hkv=2, Sq=sq, Skv=131, D=64, mask_kind="alibi12", causal=True,
             tol=5e-3, acc="f16")
    # ---------------- random sweep
    rs = np.random.default_rng(1234)
    sizes = [1, 2, 3, 4, 5, 8, 16, 33, 64, 77, 131, 200, 203, 256, 257]
    kinds = ["randn", "alibi12", "alibi32", "neg1e9", "neginf", "f32min", "blocks16", "blocks32", "blocks64",
             "hiddenrows", "padcache"]
    heads = [(1, 1), (2, 1), (2, 2), (4, 1), (4, 4), (8, 2), (12, 4), (12, 12), (32, 8)]
    n = 0
    while n < 90:
        Hq, Hkv = heads[rs.integers(len(heads))]
        Sq = int(rs.choice(sizes))
        Skv = int(rs.choice([s for s in sizes if s >= Sq])) if rs.random() < 0.85 else int(rs.choice(sizes))
        D = int(rs.choice([64, 80, 128]))
        if Hq * Sq * Skv * D > 6_000_000:
            continue
        n += 1
        causal = bool(rs.random() < 0.5)
        window = int(rs.integers(1, Skv + 20)) if rs.random() < 0.3 else None
        softcap = float(rs.choice([0.0, 0.0, 0.0, 15.0, 50.0]))
        qdt, kdt = [("f16", "f16"), ("f16", "f16"), ("f32", "f16"), ("bf16", "bf16"), ("f32", "bf16")][rs.integers(5)]
        case(f"sweep#{n}", Hq=Hq, Hkv=Hkv, Sq=Sq, Skv=Skv, D=D, qdt=qdt, kdt=kdt,
             mask_kind=str(rs.choice(kinds)), mask_layout=str(rs.choice(["head", "shared", "shared1"])),
             mask_dt=[np.float32, np.float16, np.float64][rs.integers(3)], causal=causal, window=window,
             softcap=softcap, out_dtype=[np.float32, np.float16][rs.integers(2)], qmul=float(rs.choice([1.0, 3.0])),
             seed=int(rs.integers(1 << 30)))
    # ---------------- mask value rule, exact with q = 0 (scores all 0: softmax of the mask alone)
    Skv = 77
    em = np.zeros((8, Skv))
    em[0, :] = -65505.0                   # below -65504: hidden -> row gives 0
    em[1, :] = -65504.0                   # not below: uniform weights
    em[2, :] = 0.0
    em[2, 3], em[2, 5], em[2, 7], em[2, 9] = 1e5, 65500.0, 65504.0, 65400.0  # 65504, 65504, 65504, 65408
    em[3, :] = -1e9
    em[3, 40] = 1.0                       # only key 40
    em[4, :] = np.linspace(1024.1, 1033.9, Skv)  # rounded to integers by f16 (spacing 1)
    em[5, :] = -65519.0                   # f16 would round to -65504; docs: below -65504 hides
    em[6, :] = np.linspace(-3, 3, Skv) + 1e-3     # not f16 numbers
    em[7, :] = np.linspace(600.2, 603.9, Skv)     # f16 spacing 0.5
    for Hq, Hkv, Sq_rep, lbl in [(1, 1, 1, "lanes"), (8, 1, 2, "mma"), (2, 2, 10, "nv2")]:
        mm = np.tile(em, (Sq_rep, 1))[: 8 * Sq_rep]
        sq = mm.shape[0]
        if lbl == "lanes":
            for r in range(8):
                case(f"rule q=0 row{r} ({lbl})", Hq=1, Hkv=1, Sq=1, Skv=Skv, D=64, q_zero=True,
                     mask=em[r:r + 1], mask_layout="shared")
        else:
            case(f"rule q=0 rows 0-7 x{Sq_rep} ({lbl})", Hq=Hq, Hkv=Hkv, Sq=sq, Skv=Skv, D=64, q_zero=True,
                 mask=mm, mask_layout="shared")
    # +inf in a mask: docs: "above 65504 it is 65504"
    pm = np.zeros((1, Skv))
    pm[0, 11] = np.inf
    pm[0, 12] = 65504.0
    case("edge +inf mask value (docs: above 65504 -> 65504)", Hq=1, Hkv=1, Sq=1, Skv=Skv, D=64, q_zero=True,
         mask=pm, mask_layout="shared")
    case("edge +inf mask value nv2", Hq=2, Hkv=2, Sq=64, Skv=Skv, D=64, q_zero=True,
         mask=np.tile(pm, (64, 1)), mask_layout="shared")
    # NaN in a mask: "makes its row NaN on the interpreter"
    nm = np.random.default_rng(5).standard_normal((64, 77))
    nm[7, 30] = np.nan
    case("NaN in mask row 7 (nv2)", Hq=2, Hkv=2, Sq=64, Skv=77, D=64, mask=nm, mask_layout="shared")
    case("NaN in mask row 0 (lanes)", Hq=2, Hkv=2, Sq=1, Skv=77, D=64, mask=nm[7:8], mask_layout="shared")
    case("NaN in mask (mma)", Hq=8, Hkv=1, Sq=2, Skv=77, D=64, mask=nm[6:8], mask_layout="shared")
    # ---------------- empty / zero sizes
    try:
        q = np.zeros((2, 0, 64), np.float16)
        kv = np.zeros((2, 10, 64), np.float16)
        o = ops.attention(q, kv, kv, mask=np.zeros((0, 10), np.float32), device="cpu")
        report("OK" if o.shape == (2, 0, 64) else "MISMATCH", f"Sq=0 with mask -> shape {o.shape}")
    except Exception as e:  # noqa: BLE001
        report("MISMATCH", f"Sq=0 with mask (0,10) -> {type(e).__name__}: {e}")
    try:
        q = np.random.default_rng(1).standard_normal((2, 5, 64)).astype(np.float16)
        kv = np.zeros((2, 0, 64), np.float16)
        o = ops.attention(q, kv, kv, mask=np.zeros((5, 0), np.float32), device="cpu")
        report("OK" if (o.shape == (2, 5, 64) and not np.any(o)) else "MISMATCH",
               f"Skv=0 with mask (5,0) -> shape {o.shape}, all zero={not np.any(o)}")
    except Exception as e:  # noqa: BLE001
        report("MISMATCH", f"Skv=0 with mask (5,0) -> {type(e).__name__}: {e}")

    # ---------------- refusals
    rng = np.random.default_rng(2)
    q = rng.standard_normal((8, 20, 64)).astype(np.float16)
    kv = rng.standard_normal((2, 30, 64)).astype(np.float16)

    def att(**kw):
        kw.setdefault("device", "cpu")
        return lambda: ops.attention(q, kv, kv, **kw)

    for shp in [(20, 31), (30, 20), (2, 20, 30), (8, 20, 31), (1, 8, 20, 30), (30,), (7, 20, 30)]:
        refused(f"mask shape {shp}", att(mask=np.zeros(shp, np.float32)), ValueError, ["mask"],
                one_of=[str(shp), " x ".join(map(str, shp)), "x".join(map(str, shp)), ", ".join(map(str, shp))])
    refused("mask int32", att(mask=np.zeros((20, 30), np.int32)), ValueError, ["mask"], one_of=["int32", "int"])
    refused("mask bool", att(mask=np.zeros((20, 30), bool)), ValueError, ["mask"], one_of=["bool"])
    refused("mask complex64", att(mask=np.zeros((20, 30), np.complex64)), ValueError, ["mask"],
            one_of=["complex"])
    refused("mask as a list", att(mask=np.zeros((20, 30)).tolist()), TypeError, ["attention", "mask"])
    refused("mask as a number", att(mask=0.0), TypeError, ["attention", "mask"])
    refused("mask big-endian >f4", att(mask=np.zeros((20, 30), ">f4")), ValueError, ["mask"],
            one_of=["byte order", "endian"])
    for w in [0, -3, True, 2.5]:
        refused(f"window={w!r}", att(window=w), ValueError, ["window"])
    accepted("window=np.int64(5) with mask", att(window=np.int64(5), mask=np.zeros((20, 30), np.float32)))
    accepted("window wider than keys (1000)", att(window=1000, mask=np.zeros((20, 30), np.float32)))
    refused("causal=1", att(causal=1), TypeError, ["causal"])
    accepted("causal=np.True_ with mask", att(causal=np.True_, mask=np.zeros((20, 30), np.float32)))
    refused("scale=inf", att(scale=float("inf")), ValueError, ["scale"])
    refused("scale=nan", att(scale=float("nan")), ValueError, ["scale"])
    refused("scale=1e39", att(scale=1e39), ValueError, ["scale"])
    refused("softcap=nan", att(softcap=float("nan")), ValueError, ["softcap"])
    refused("softcap=inf", att(softcap=float("inf")), ValueError, ["softcap"])
    refused("out wrong shape", att(out=np.zeros((8, 20, 63), np.float32)), ValueError, ["out"])
    refused("out wrong dtype (f16 for f32)", att(out=np.zeros((8, 20, 64), np.float16)), ValueError, ["out"])
    refused("out not C-contiguous", att(out=np.zeros((8, 64, 20), np.float32).transpose(0, 2, 1)), ValueError,
            ["out"])
    refused("out_dtype float64", att(out_dtype=np.float64), ValueError, ["out_dtype"])
    refused("device='gpu'", att(device="gpu"), Exception, [])
    try:
        from coopdsl.interp.errors import LaunchArgumentError
        refused("device='gpu' is LaunchArgumentError", att(device="gpu"), LaunchArgumentError, [])
    except ImportError as e:
        report("MISMATCH", f"import coopdsl.interp.errors.LaunchArgumentError: {e}")
    refused("device=3", att(device=3), TypeError, ["device"])
    accepted("device='CPU' with mask", att(device="CPU", mask=np.zeros((20, 30), np.float32)))
    refused("Hq=6 Hkv=4", lambda: ops.attention(np.zeros((6, 4, 64), np.float16), np.zeros((4, 4, 64), np.float16),
                                                np.zeros((4, 4, 64), np.float16), device="cpu"), ValueError, [])
    refused("D=72", lambda: ops.attention(np.zeros((2, 4, 72), np.float16), np.zeros((2, 4, 72), np.float16),
                                          np.zeros((2, 4, 72), np.float16), device="cpu"), ValueError, ["72"])
    refused("D=272", lambda: ops.attention(np.zeros((2, 4, 272), np.float16), np.zeros((2, 4, 272), np.float16),
                                           np.zeros((2, 4, 272), np.float16), device="cpu"), ValueError, ["272"])
    refused("q float64", lambda: ops.attention(q.astype(np.float64), kv, kv, device="cpu"), ValueError,
            ["q"], one_of=["float64"])
    refused("k float32", lambda: ops.attention(q, kv.astype(np.float32), kv, device="cpu"), ValueError,
            ["k"], one_of=["float32"])
    refused("k/v shapes differ", lambda: ops.attention(q, kv, kv[:, :29], device="cpu"), ValueError, [])
    refused("Hkv=0 with Hq=8", lambda: ops.attention(q, kv[:0], kv[:0], device="cpu"), ValueError, [])
    q40 = rng.standard_normal((8, 40, 64)).astype(np.float16)   # 4 query heads a K/V head x 40 = 160 rows
    refused("impl=decode past 128 rows (160)", lambda: ops.attention(q40, kv, kv, impl="decode", device="cpu"),
            ValueError, ["decode"])
    refused("mask (Sq,Skv) for the wrong Skv after GQA (Hkv,Sq,Skv)", att(mask=np.zeros((2, 20, 30), np.float32)),
            ValueError, ["mask"])

    el = time.time() - t_start
    print()
    print(f"SUMMARY: {RESULTS['OK']} OK, {RESULTS['MISMATCH']} MISMATCH, {RESULTS['ERROR']} ERROR, "
          f"{RESULTS['NOTE']} NOTE  ({el:.0f}s)")
    for p in PROBLEMS:
        print("  " + p)
    return 1 if RESULTS["MISMATCH"] or RESULTS["ERROR"] else 0


if __name__ == "__main__":
    sys.exit(main())
