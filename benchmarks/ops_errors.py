"""The error of each ops path against a float64 reference, on the CPU interpreter (the figures of docs/ops.md).

    python3 benchmarks/ops_errors.py

ops.linear with q4_0, q8_0 and q4_K weights at 1-64 rows of x (the 8-bit GEMV ways, the cooperative-matrix
GEMV, ggml's mul_mm_cm2 past 16 rows), f16 and bf16 weights, against x @ dequantize(W).T in float64; ops.attention
at decoding (the f32 kernel, the cooperative-matrix kernel) and prefill shapes against softmax(QK^T/sqrt(d))V
in float64. Each line: the path, the largest error over the largest output and, for linear, the normalized
squared error. Seeded: the same figures each run (about 20 s).
"""

from __future__ import annotations

import numpy as np

from coopdsl import ops
from coopdsl.ops import gemv as G

M, K = 53, 512


def rel(y: np.ndarray, ref: np.ndarray) -> float:
    """The largest error over the largest output."""
    return float(np.abs(y - ref).max() / np.abs(ref).max())


def path(fmt: str, n: int) -> str:
    """The way ops.linear takes for n rows of x (gemv.choice up to 16 rows)."""
    return G.choice(fmt, n, None, M, K)[0] if n <= 16 else "mul_mm"


def attention_ref(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Causal attention in float64, the diagonal aligned at the end of the keys; K/V heads shared."""
    hq, sq, d = q.shape
    hkv, skv, _ = k.shape
    out = np.zeros((hq, sq, d))
    for h in range(hq):
        kv = h // (hq // hkv)
        s = q[h].astype(np.float64) @ k[kv].astype(np.float64).T / np.sqrt(d)
        s = np.where(np.arange(skv)[None] <= np.arange(sq)[:, None] + skv - sq, s, -np.inf)
        p = np.exp(s - s.max(1, keepdims=True))
        out[h] = (p / p.sum(1, keepdims=True)) @ v[kv].astype(np.float64)
    return out


def main() -> None:
    rng = np.random.default_rng(0)
    for fmt in ("q4_0", "q8_0", "q4_K"):
        wq = ops.quantize(rng.standard_normal((M, K)).astype(np.float32), fmt)
        wd = ops.dequantize(wq, fmt, K).astype(np.float64)
        for n in (1, 3, 7, 12, 16, 20, 64):
            x = rng.standard_normal((n, K)).astype(np.float32)
            y, ref = ops.linear(x, wq, fmt, device="cpu"), x.astype(np.float64) @ wd.T
            nse = ((y - ref) ** 2).sum() / (ref ** 2).sum()
            print(f"linear {fmt} {n} rows ({path(fmt, n)}): max {rel(y, ref):.1e}, normalized squared {nse:.1e}")
    w = rng.standard_normal((M, K)).astype(np.float16)
    for n in (1, 5, 8, 16, 20, 64):
        x = rng.standard_normal((n, K)).astype(np.float32)
        y, ref = ops.linear(x, w, device="cpu"), x.astype(np.float64) @ w.astype(np.float64).T
        print(f"linear f16 {n} rows ({path('f16', n)}): max {rel(y, ref):.1e}")
    rb = np.random.default_rng(1)   # (its own stream: the figures below stay those of the runs before)
    wb = ops.to_bf16(rb.standard_normal((M, K)).astype(np.float32))
    for n in (1, 16, 20, 64):   # (past 16 rows x is rounded to bf16 for bf16 weights)
        x = rb.standard_normal((n, K)).astype(np.float32)
        y = ops.linear(x, wb, "bf16", device="cpu")
        ref = x.astype(np.float64) @ ops.from_bf16(wb).astype(np.float64).T
        print(f"linear bf16 {n} rows ({path('bf16', n)}): max {rel(y, ref):.1e}")
    for hq, hkv, sq, skv, d in ((8, 2, 1, 600, 64), (8, 2, 2, 600, 128), (16, 2, 2, 600, 80), (4, 4, 64, 64, 64)):
        q = rng.standard_normal((hq, sq, d)).astype(np.float16)
        k = rng.standard_normal((hkv, skv, d)).astype(np.float16)
        v = rng.standard_normal((hkv, skv, d)).astype(np.float16)
        o = ops.attention(q, k, v, causal=True, device="cpu")
        print(f"attention {hq}/{hkv} heads, {sq} x {skv}, D {d} ({hq // hkv * sq} rows a K/V head): "
              f"max {rel(o, attention_ref(q, k, v)):.1e}")


if __name__ == "__main__":
    main()
