"""The inference ops on the GPU at seeded random shapes no other test names, against numpy (run with -m gpu):
``ops.attention`` (decode and prefill, grouped heads, masks, window, soft-cap, f16/bf16/f32 q, f16/f32 out, at
sizes the interpreter cannot reach), ``ops.linear`` on every weight format (the decode GEMVs at 1-16 rows, ggml's
mul_mm_cm2 past them, 8-bit x or not; resident x, padded to whole tiles) and ``ops.matmul``, each as a user
calls it.

``COOPDSL_RANDOM_SEEDS=a:b`` runs seeds ``a`` to ``b - 1`` of every test instead of the default counts (for a
longer sweep on the device: the default counts run in the gpu suite)."""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from coopdsl import ops
from coopdsl.ops import flash_attention

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.conftest import weights  # noqa: E402

pytestmark = pytest.mark.gpu


def seeds(default: int) -> range:
    """The seeds a test runs: ``range(default)``, or the ``a:b`` of ``COOPDSL_RANDOM_SEEDS``."""
    spec = os.environ.get("COOPDSL_RANDOM_SEEDS")
    if not spec:
        return range(default)
    a, b = (int(v) for v in spec.split(":"))
    return range(a, b)

BLOCK = {"f16": 8, "bf16": 8, "q4_0": 32, "q8_0": 32, "q4_K": 256}


def _attention_case(seed):
    rng = np.random.default_rng(7000 + seed)
    hkv = int(rng.choice([1, 2, 4, 8]))
    group = int(rng.choice([1, 2, 4, 8]))
    hq = hkv * group
    if rng.random() < 0.5:      # decode: at most 16 query rows per K/V head, a long cache
        sq, skv = int(rng.integers(1, 16 // group + 1)), int(rng.integers(1, 20000))
    else:
        sq, skv = int(rng.integers(1, 700)), int(rng.integers(1, 1500))
    d = int(rng.choice([64, 80, 96, 128, 256, 32, 112]))
    causal = bool(rng.random() < 0.5)
    window = int(rng.integers(1, skv + 50)) if rng.random() < 0.25 else None
    softcap = float(rng.choice([0.0, 0.0, 0.0, 30.0]))
    mask = None
    if rng.random() < 0.25:
        shape = (sq, skv) if rng.random() < 0.5 else (hq, sq, skv)
        mask = rng.uniform(-2, 2, shape).astype(np.float32)
        mask[rng.random(shape) < 0.2] = -np.inf
    kv_t = np.float16 if rng.random() < 0.7 else "bf16"
    q_t = np.float32 if rng.random() < 0.3 else kv_t
    odt = np.float16 if rng.random() < 0.3 else np.float32
    return hkv, hq, sq, skv, d, causal, window, softcap, mask, kv_t, q_t, odt, rng


@pytest.mark.parametrize("seed", seeds(48))
def test_attention_at_random_shapes_matches_numpy(seed, device):
    hkv, hq, sq, skv, d, causal, window, softcap, mask, kv_t, q_t, odt, rng = _attention_case(seed)

    def make(shape, t):
        x = rng.standard_normal(shape).astype(np.float32)
        return ops.to_bf16(x) if t == "bf16" else x.astype(t)

    q, k, v = make((hq, sq, d), q_t), make((hkv, skv, d), kv_t), make((hkv, skv, d), kv_t)
    out = ops.attention(q, k, v, causal=causal, window=window, mask=mask, softcap=softcap, out_dtype=odt,
                        device=device)
    want = flash_attention.reference(q, k, v, causal, mask=mask, window=window, softcap=softcap)
    assert out.shape == (hq, sq, d) and out.dtype == odt
    # rows with no key left (a causal or windowed row before the cache, a fully masked row) are 0 in both
    assert np.isfinite(out).all()
    assert np.abs(out.astype(np.float64) - want).max() <= 1.5e-2 * max(1.0, np.abs(want).max())


@pytest.mark.parametrize("seed", seeds(40))
def test_linear_at_random_shapes_matches_numpy(seed, device):
    rng = np.random.default_rng(8000 + seed)
    fmt = ["f16", "bf16", "q4_0", "q8_0", "q4_K"][seed % 5]
    m = int(rng.integers(1, 5000))
    k = BLOCK[fmt] * int(rng.integers(1, 4097 // BLOCK[fmt] + 1))
    n = int(rng.integers(1, 17)) if rng.random() < 0.6 else int(rng.integers(17, 300))
    q8 = [None, True, False][seed % 3] if fmt not in ("f16", "bf16") and n <= 16 else None
    w, wd = weights(fmt, m, k, rng, scale=0.1)
    x = rng.standard_normal((n, k)).astype(np.float16 if rng.random() < 0.5 else np.float32)
    if fmt == "bf16" and n > 16:
        x = ops.to_bf16(x)              # past the decode kernels bf16 weights take bf16 x
    y = ops.linear(x, w, fmt if fmt != "f16" else None, device=device, q8=q8)
    if fmt == "bf16" and n > 16:
        x = ops.from_bf16(x)
    elif n > 16 and x.dtype == np.float32:
        x = x.astype(np.float16)        # past the decode kernels x travels as f16
    ref = x.astype(np.float64) @ wd.astype(np.float64).T
    assert y.shape == (n, m) and y.dtype == np.float32
    # x rounded to 8 bits: by a first kernel (gemv.PRE_WAYS: "pre", "prew", "xregs") or inside the product ("inline")
    eight_bit = n <= 16 and ops.gemv.choice(fmt, n, q8, m, k, device)[0] in (*ops.gemv.PRE_WAYS, "inline")
    if eight_bit:
        assert ((y - ref) ** 2).sum() / (ref ** 2).sum() < 5e-4
    else:
        assert np.abs(y - ref).max() <= 3e-3 * np.abs(ref).max()


@pytest.mark.parametrize("seed", seeds(15))
def test_linear_prefill_on_resident_arrays_matches_numpy(seed, device):
    """Past 16 rows of x on resident arrays: x copied to whole tiles of rows (32- or 16-bit words, for K even
    or odd), K split with the partial products added, ops.matmul past 256 rows of f16/bf16; twice, the second
    call replaying the first's launches."""
    from coopdsl import runtime

    rng = np.random.default_rng(8500 + seed)
    fmt = ["f16", "bf16", "q4_0", "q8_0", "q4_K"][seed % 5]
    m = int(rng.integers(16, 3000))
    k = int(rng.integers(1, 3000)) if fmt in ("f16", "bf16") else BLOCK[fmt] * int(rng.integers(1, 8193 // BLOCK[fmt]))
    n = int(rng.integers(17, 400))
    w, wd = weights(fmt, m, k, rng, scale=0.1)
    x = rng.standard_normal((n, k)).astype(np.float16)
    xs, xf = (ops.to_bf16(x), ops.from_bf16(ops.to_bf16(x))) if fmt == "bf16" else (x, x.astype(np.float32))
    xr, wr = runtime.array(xs, device=device), runtime.array(w, device=device)
    yr = runtime.zeros((n, m), np.float32, device=device)
    ref = xf.astype(np.float64) @ wd.astype(np.float64).T
    for _ in range(2):
        yr.write(np.full((n, m), np.nan, np.float32))
        ops.linear(xr, wr, fmt, out=yr, device=device)
        assert np.abs(yr.numpy() - ref).max() <= 3e-3 * np.abs(ref).max(), (fmt, m, n, k)


@pytest.mark.parametrize("seed", seeds(16))
def test_matmul_at_random_shapes_matches_numpy(seed, device):
    rng = np.random.default_rng(9000 + seed)
    kind = ["f16", "bf16", "i8", "u8"][seed % 4]
    m, n, kk = (int(rng.integers(1, 1500)) for _ in range(3))
    if rng.random() < 0.5:      # sizes the tiled kernel takes
        n, kk = 128 * int(rng.integers(1, 12)), 64 * int(rng.integers(1, 40))
    tb = bool(rng.random() < 0.5)
    shape_b = (n, kk) if tb else (kk, n)
    if kind in ("i8", "u8"):
        lo, hi, t = (-128, 128, np.int8) if kind == "i8" else (0, 256, np.uint8)
        a = rng.integers(lo, hi, (m, kk)).astype(t)
        b = rng.integers(lo, hi, shape_b).astype(t)
        c = ops.matmul(a, b, transpose_b=tb, device=device)
        bb = b.T if tb else b
        assert (c == a.astype(np.int64) @ bb.astype(np.int64)).all()
        return
    x = rng.standard_normal((m, kk)).astype(np.float32)
    y = rng.standard_normal(shape_b).astype(np.float32)
    if kind == "bf16":
        a, b = ops.to_bf16(x), ops.to_bf16(y)
        av, bv = ops.from_bf16(a), ops.from_bf16(b)
        c = ops.matmul(a, b, kind="bf16", transpose_b=tb, device=device)
    else:
        a, b = x.astype(np.float16), y.astype(np.float16)
        av, bv = a.astype(np.float32), b.astype(np.float32)
        c = ops.matmul(a, b, transpose_b=tb, device=device)
    ref = av.astype(np.float64) @ (bv.T if tb else bv).astype(np.float64)
    assert np.abs(c - ref).max() <= 1e-3 * max(1.0, np.abs(ref).max())
