"""coopdsl.ops on a real GPU against numpy (run with -m gpu)."""

import sys
from pathlib import Path

import numpy as np
import pytest

from coopdsl import ops
from coopdsl.ops import flash_attention

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.conftest import matmul_inputs  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("m, n, k", [(256, 256, 256), (1000, 333, 129), (1, 1, 1), (64, 4096, 512)])
def test_matmul_f16(m, n, k):
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-1, 1, (m, k)).astype(np.float16), rng.uniform(-1, 1, (k, n)).astype(np.float16)
    out = ops.matmul(a, b)
    assert np.allclose(out, a.astype(np.float32) @ b.astype(np.float32), atol=1e-3 * max(k, 16) ** 0.5)


def test_matmul_bf16_and_int8():
    rng = np.random.default_rng(1)
    a32, b32 = rng.uniform(-1, 1, (130, 70)).astype(np.float32), rng.uniform(-1, 1, (70, 90)).astype(np.float32)
    a, b = ops.to_bf16(a32), ops.to_bf16(b32)
    assert np.allclose(ops.matmul(a, b, kind="bf16"), ops.from_bf16(a) @ ops.from_bf16(b), atol=1e-2)
    ai, bi = rng.integers(-128, 128, (97, 200)).astype(np.int8), rng.integers(-128, 128, (200, 65)).astype(np.int8)
    assert np.array_equal(ops.matmul(ai, bi), ai.astype(np.int64) @ bi.astype(np.int64))
    au, bu = rng.integers(0, 256, (64, 96)).astype(np.uint8), rng.integers(0, 256, (96, 64)).astype(np.uint8)
    assert np.array_equal(ops.matmul(au, bu), au.astype(np.int64) @ bu.astype(np.int64))


@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("s", [128, 77])
def test_attention(d, causal, s):
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((4, s, d)).astype(np.float16) for _ in range(3))
    out = ops.attention(q, k, v, causal=causal)
    assert np.allclose(out, flash_attention.reference(q, k, v, causal=causal), atol=2e-2)


def test_resident_arrays_in_and_out():
    from coopdsl import runtime

    rng = np.random.default_rng(4)
    a, b = rng.uniform(-1, 1, (128, 64)).astype(np.float16), rng.uniform(-1, 1, (64, 96)).astype(np.float16)
    da, db = runtime.array(a), runtime.array(b)
    dc = runtime.zeros((128, 96), np.float32, device=da.device)
    ops.matmul(da, db, out=dc)
    assert np.allclose(dc.numpy(), a.astype(np.float32) @ b.astype(np.float32), atol=1e-2)


@pytest.mark.parametrize("m, n, k, tb", [(1, 512, 256, True), (40, 512, 256, True), (300, 256, 128, False),
                                        (37, 100, 72, False)])   # gemv, mul_mm_cm2, tiled, general
def test_matmul_and_linear_of_resident_inputs_without_out_give_resident_results(m, n, k, tb):
    """Without ``out``, a resident ``a`` (``x``) gives a new resident Array on its device, as ops.attention does
    for a resident q; numpy inputs give numpy."""
    from coopdsl import runtime

    rng = np.random.default_rng(m)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (n, k) if tb else (k, n)).astype(np.float16)
    da = runtime.array(a)
    c = ops.matmul(da, b, transpose_b=tb)
    assert isinstance(c, runtime.Array) and c.device is da.device and c.shape == (m, n) and c.dtype == np.float32
    ref = a.astype(np.float64) @ (b.T if tb else b).astype(np.float64)
    np.testing.assert_allclose(c.numpy(), ref, atol=2e-2)
    assert isinstance(ops.matmul(a, b, transpose_b=tb), np.ndarray)
    if tb:
        y = ops.linear(da, runtime.array(b, device=da.device))
        assert isinstance(y, runtime.Array) and y.shape == (m, n)
        np.testing.assert_allclose(y.numpy(), ref, atol=2e-2)
    y0 = ops.linear(runtime.zeros((0, 64), np.float32, device=da.device), ops.quantize(np.ones((8, 64)), "q4_0"),
                    "q4_0")
    assert isinstance(y0, runtime.Array) and y0.shape == (0, 8)


@pytest.mark.parametrize("op", ["linear q4_0", "linear f16 prefill", "matmul gemv", "attention decode",
                                "attention prefill f16 out"])
def test_repeated_calls_on_the_same_resident_arrays_follow_their_contents(op):
    """A loop calling an op again on the same resident arrays replays its launches: with out= given, from the
    third call on from a kept command buffer (coopdsl/runtime/graph.py); without out, into a new output array
    each call (results kept from earlier calls stay as they were). Every call reads the inputs as they are then."""
    from coopdsl import runtime

    rng = np.random.default_rng(5)
    dev = runtime.default_device()
    if op.startswith("linear") or op == "matmul gemv":
        rows = 40 if "prefill" in op else 3
        w = rng.uniform(-1, 1, (256, 512)).astype(np.float32)
        wq = ops.quantize(w, "q4_0") if "q4_0" in op else w.astype(np.float16)
        wd = ops.dequantize(wq, "q4_0", 512) if "q4_0" in op else wq.astype(np.float64)
        xr = runtime.zeros((rows, 512), np.float32 if "q4_0" in op else np.float16, device=dev)
        wr, out = runtime.array(wq, device=dev), runtime.zeros((rows, 256), np.float32, device=dev)

        def call(o):
            if op == "matmul gemv":
                return ops.matmul(xr, wr, transpose_b=True, out=o)
            return ops.linear(xr, wr, "q4_0" if "q4_0" in op else None, out=o)

        def want(x):
            return x.astype(np.float64) @ np.asarray(wd, np.float64).T
        tol = 1e-2 if "q4_0" in op else 2e-3   # of the largest output (q4_0 rounds x to 8 bits: about 5e-3)
    else:
        sq = 1 if "decode" in op else 200
        odt = np.float16 if "f16 out" in op else np.float32
        xr = runtime.zeros((8, sq, 64), np.float16, device=dev)
        kv = [rng.uniform(-1, 1, (2, 300, 64)).astype(np.float16) for _ in range(2)]
        kr, vr = (runtime.array(t, device=dev) for t in kv)
        out = runtime.zeros((8, sq, 64), odt, device=dev)

        def call(o):
            return ops.attention(xr, kr, vr, causal=True, out_dtype=odt, out=o)

        def want(x):
            return flash_attention.reference(x, np.repeat(kv[0], 4, 0), np.repeat(kv[1], 4, 0), causal=True)
        tol = 1e-2
    kept = []
    for i in range(10):
        x = rng.uniform(-1, 1, xr.shape).astype(xr.dtype)
        xr.write(x)
        ref = want(x)
        got = call(out if i < 5 else None)
        if i < 5:
            assert got is out
            got = out.numpy()
        else:
            assert isinstance(got, runtime.Array) and got is not out and got.shape == out.shape
        kept.append((got, ref, i))
    for got, ref, i in kept:
        np.testing.assert_allclose(np.asarray(got).astype(np.float64), ref, atol=tol * np.abs(ref).max(),
                                   err_msg=f"call {i}")


def test_matmul_tunes_its_block_shape_once_and_then_reads_it(tmp_path, monkeypatch):
    import json

    from coopdsl.ops import gemm

    monkeypatch.setenv("COOPDSL_AUTOTUNE_CACHE", str(tmp_path / "tune.json"))
    gemm.tuner.cache_clear()
    m, n, k = 1000, 1500, 700
    rng = np.random.default_rng(5)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    c = ops.matmul(a, b, tune=True)                     # times the four block shapes, keeps the fastest
    np.testing.assert_array_equal(c, ref)
    (entry,) = json.loads((tmp_path / "tune.json").read_text())["entries"].values()
    print(entry["timings"])
    assert set(entry["timings"]) == {repr(cfg) for cfg in gemm.CONFIGS}
    assert all(isinstance(t, float) for t in entry["timings"].values())
    best = gemm.tuner("f16").cached_config(a, b, c, M=m, N=n, K=k)
    assert repr(best) == entry["config"]
    np.testing.assert_array_equal(ops.matmul(a, b), ref)  # from the cache, nothing timed
    gemm.tuner.cache_clear()


@pytest.mark.parametrize("kind", ["f16", "bf16", "i8", "u8"])
def test_matmul_of_tile_multiples_on_the_tiled_kernel(kind):
    from coopdsl.ops import gemm

    m, n, k = 1024, 512, 384
    assert gemm.tiled_configs(kind, m, n, k)[0] and not gemm.tiled_configs(kind, m, n, k)[1]
    a, b, ref = matmul_inputs(kind, m, n, k, np.random.default_rng(6))
    out = ops.matmul(a, b, kind=kind)
    if kind in ("f16", "bf16"):
        np.testing.assert_allclose(out, ref, atol=1e-4 * k)
    else:
        np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("kind, m", [("f16", 1), ("f16", 1000), ("bf16", 77), ("i8", 999), ("u8", 130)])
@pytest.mark.parametrize("transpose_b", [False, True], ids=["B row-major", "B K-major"])
def test_matmul_of_any_m_on_the_tiled_kernel_with_the_m_edge(kind, m, transpose_b):
    from coopdsl.ops import gemm

    n, k = 512, 256
    assert gemm.tiled_configs(kind, m, n, k, transpose_b)[1]  # the M edge
    a, b, ref = matmul_inputs(kind, m, n, k, np.random.default_rng(12), transpose_b=transpose_b)
    out = ops.matmul(a, b, kind=kind, transpose_b=transpose_b)
    if kind in ("f16", "bf16"):
        np.testing.assert_allclose(out, ref, atol=1e-4 * k)
    else:
        np.testing.assert_array_equal(out, ref)


def test_matmul_tunes_the_tiled_configurations_that_divide_the_problem(tmp_path, monkeypatch):
    import json

    from coopdsl.ops import gemm

    monkeypatch.setenv("COOPDSL_AUTOTUNE_CACHE", str(tmp_path / "tune.json"))
    gemm.tiled_tuner.cache_clear()
    m, n, k = 512, 384, 256                       # 384 = 3 x 128: the 256-wide tiles do not divide it
    rng = np.random.default_rng(8)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_array_equal(ops.matmul(a, b, tune=True), ref)
    (entry,) = json.loads((tmp_path / "tune.json").read_text())["entries"].values()
    assert set(entry["timings"]) == {repr(c) for c in gemm.tiled_configs("f16", m, n, k)[0]}
    assert all(isinstance(t, float) for t in entry["timings"].values())
    np.testing.assert_array_equal(ops.matmul(a, b), ref)  # from the cache
    gemm.tiled_tuner.cache_clear()


def test_matmul_of_large_resident_arrays_on_the_tiled_kernel():
    # (its speed is measured by benchmarks/best_gemm/run.py and reported in docs/benchmarks.md, not here)
    from coopdsl import runtime

    n = 4096
    rng = np.random.default_rng(9)
    a = runtime.array(rng.uniform(-1, 1, (n, n)).astype(np.float16))
    b = runtime.array(rng.uniform(-1, 1, (n, n)).astype(np.float16), device=a.device)
    c = runtime.zeros((n, n), np.float32, device=a.device)
    ops.matmul(a, b, out=c)
    row = rng.integers(0, n)
    ref = a.numpy()[row].astype(np.float64) @ b.numpy().astype(np.float64)
    np.testing.assert_allclose(c.numpy()[row], ref, atol=1e-2)


@pytest.mark.parametrize("kind", ["f16", "i8", "u8"])
@pytest.mark.parametrize("m, n, k", [(1024, 512, 384), (97, 65, 200)])  # the tiled kernel, the general one
def test_matmul_with_b_transposed(kind, m, n, k):
    a, b, ref = matmul_inputs(kind, m, n, k, np.random.default_rng(12), transpose_b=True)
    out = ops.matmul(a, b, kind=kind, transpose_b=True)
    if kind == "f16":
        np.testing.assert_allclose(out, ref, atol=1e-4 * k)
    else:
        np.testing.assert_array_equal(out, ref)
