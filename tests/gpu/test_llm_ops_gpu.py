"""The inference kernels on a real GPU against numpy (run with -m gpu): ggml's mul_mm_cm2 interface for every
A format and tile configuration ggml uses, the decode GEMVs, and ops.linear on numpy and resident arrays."""

import sys
from pathlib import Path

import numpy as np
import pytest

from coopdsl import ops, runtime
from coopdsl.ops import gemv as G
from coopdsl.ops import ggml_mul_mm as MM
from coopdsl.ops import hot

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.conftest import weights  # noqa: E402

pytestmark = pytest.mark.gpu


def _weights(fmt, m, k, rng):
    return weights(fmt, m, k, rng, scale=0.1)


@pytest.mark.parametrize("fmt,f16acc", sorted(MM.PIPELINES))
@pytest.mark.parametrize("tile,m,n,k,aligned", [("l", 512, 300, 1024, True), ("m", 256, 200, 512, True),
                                                ("s", 333, 77, 768, False)])
def test_ggml_mul_mm(fmt, f16acc, tile, m, n, k, aligned, device):
    rng = np.random.default_rng(m + n)
    a, wd = _weights(fmt, m, k, rng)
    x = rng.standard_normal((n, k)).astype(np.float32)
    b = ops.to_bf16(x) if fmt == "bf16" else x.astype(np.float16)
    xb = ops.from_bf16(b) if fmt == "bf16" else b.astype(np.float32)
    d = MM.mul_mm(a, b, fmt, f16acc=f16acc, tile=tile, aligned=aligned, device=device)
    ref = xb @ wd.T
    assert np.abs(d - ref).max() <= (0.02 if f16acc else 2e-3) * np.abs(ref).max()


def test_ggml_mul_mm_split_k_and_broadcast(device):
    rng = np.random.default_rng(9)
    a, wd = _weights("q4_K", 256, 1024, rng)
    x = rng.standard_normal((96, 1024)).astype(np.float16)
    d = MM.mul_mm(a, x, "q4_K", tile="m", split_k=3, device=device)
    assert np.abs(d - x.astype(np.float32) @ wd.T).max() <= 2e-3 * np.abs(d).max()
    a2 = np.stack([_weights("q8_0", 128, 256, rng)[0] for _ in range(2)])
    x2 = rng.standard_normal((4, 40, 256)).astype(np.float16)
    d2 = MM.mul_mm(a2, x2, "q8_0", tile="s", device=device)
    ref = np.stack([x2[i].astype(np.float32) @ ops.dequantize(a2[i // 2], "q8_0", 256).T for i in range(4)])
    assert np.abs(d2 - ref).max() <= 2e-3 * np.abs(ref).max()


@pytest.mark.parametrize("fmt", G.FORMATS)
@pytest.mark.parametrize("n", [1, 8, 16])
def test_gemv(fmt, n, device):
    rng = np.random.default_rng(n)
    w, wd = _weights(fmt, 1000, 4096, rng)
    x = rng.standard_normal((n, 4096)).astype(np.float32)
    y = G.gemv(w, x, fmt, device=device, q8=False)
    assert np.abs(y - x @ wd.T).max() <= 1e-4 * np.abs(y).max()


@pytest.mark.parametrize("fmt", ["q4_0", "q8_0", "q4_K"])
@pytest.mark.parametrize("n", [1, 8])
def test_gemv_with_8_bit_activations_matches_the_interpreter(fmt, n, device):
    rng = np.random.default_rng(n)
    w, wd = _weights(fmt, 1000, 4096, rng)
    x = rng.standard_normal((n, 4096)).astype(np.float32)
    want = G.gemv(w, x, fmt, device="cpu", q8=True)
    y = G.gemv(w, x, fmt, device=device, q8=True)                           # numpy operands
    assert np.abs(y - want).max() <= 1e-4 * np.abs(want).max()
    yr = runtime.zeros((n, 1000), np.float32, device=device)                # resident (q4_0: the scratch array)
    G.gemv(runtime.array(w, device=device), runtime.array(x, device=device), fmt, out=yr, device=device, q8=True)
    assert np.abs(yr.numpy() - want).max() <= 1e-4 * np.abs(want).max()


def _close(y, ref, fmt, n) -> bool:
    """Within 2e-3 of the largest value, or for x rounded to 8 bits (gemv's default for the quantized formats,
    gemv.CHOICE) ggml's NMSE bound."""
    if n <= G.MAX_ROWS_X and G.choice(fmt, n)[0] != "f32":
        return bool(((y - ref) ** 2).sum() / (ref ** 2).sum() < 5e-4)
    return bool(np.abs(y - ref).max() <= 2e-3 * np.abs(ref).max())


@pytest.mark.parametrize("fmt", ["f16", "q4_0", "q4_K"])
def test_linear_on_resident_arrays(fmt, device):
    rng = np.random.default_rng(5)
    w, wd = _weights(fmt, 256, 512, rng)
    wr = runtime.array(w, device=device)
    for n, dt in ((2, np.float32), (100, np.float16)):
        x = rng.standard_normal((n, 512)).astype(dt)
        y = runtime.zeros((n, 256), np.float32, device=device)
        ops.linear(runtime.array(x, device=device), wr, None if fmt == "f16" else fmt, out=y, device=device)
        ref = x.astype(np.float32) @ wd.T
        assert _close(y.numpy(), ref, fmt, n)
    for n in (2, 100):       # a call on the same arrays again is replayed (ops/hot.py): it reads x's new contents
        xr = runtime.zeros((n, 512), np.float16, device=device)
        y = runtime.zeros((n, 256), np.float32, device=device)
        for _ in range(3):
            x = rng.standard_normal((n, 512)).astype(np.float16)
            xr.write(x)
            ops.linear(xr, wr, None if fmt == "f16" else fmt, out=y, device=device)
            ref = x.astype(np.float32) @ wd.T
            assert _close(y.numpy(), ref, fmt, n)


@pytest.mark.parametrize("fmt", ["q4_0", "q8_0", "q4_K"])
@pytest.mark.parametrize("n", [2, 5, 8])
def test_gemv_with_x_held_in_registers_matches_the_interpreter(fmt, n, device):
    """gemv_xregs's layouts (gemv's default for several rows of x, gemv.XREGS), each also with its subgroups
    balanced to K (5 where 4 would make two passes over K's 130 units), M not a multiple of a workgroup's rows and K
    not of a workgroup's slice of it."""
    from coopdsl.ops import gemv_xregs as GX

    rng = np.random.default_rng(n)
    m, k = 1000, 4352 if fmt == "q4_K" else 4160
    w, _ = _weights(fmt, m, k, rng)
    x = rng.standard_normal((n, k)).astype(np.float32)
    want = G.gemv(w, x, fmt, device="cpu", q8=True)
    for rows, split in dict.fromkeys([*GX.LAYOUTS, *((r, GX.balanced_split(fmt, k, s)) for r, s in GX.LAYOUTS)]):
        y = np.zeros((n, m), np.float32)
        hot.run(G._launches(G.word_view(w, fmt), x.reshape(-1, 4), y, fmt, n, m, k, False, ("xregs", rows, split),
                            device))
        assert np.abs(y - want).max() <= 1e-4 * np.abs(want).max(), (rows, split)
