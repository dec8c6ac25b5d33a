"""coopdsl.ops: every kernel compiles and validates; bad arguments are clear errors before any launch;
results match numpy on the CPU interpreter (and on the GPU in tests/gpu/test_ops_gpu.py)."""

import importlib.util

import numpy as np
import pytest

from coopdsl import ops
from coopdsl.ops import flash_attention, gemm

from ..conftest import compile_checked, matmul_inputs

HAVE_INTERP = importlib.util.find_spec("coopdsl.interp") is not None


@pytest.mark.parametrize("kind", sorted(gemm.KINDS))
def test_matmul_kernels_validate(kind):
    compile_checked(gemm.kernel(kind), "OpCooperativeMatrixMulAddKHR", "OpCooperativeMatrixLoadKHR",
                    "OpCooperativeMatrixStoreKHR")


@pytest.mark.parametrize("d", [16, 64, 128])
def test_attention_kernels_validate(d):
    compile_checked(flash_attention.kernel(d), r"OpCooperativeMatrixLoadKHR %\w+ %\w+ %uint_1 ",  # K^T
                    "OpCooperativeMatrixMulAddKHR", r"OpExtInst %float %\w+ Exp")


def test_bf16_bit_patterns_round_trip():
    x = np.array([1.0, -2.5, 3.14159, 1e-3, 65504.0, np.inf], np.float32)
    bits = ops.to_bf16(x)
    assert bits.dtype == np.uint16
    assert np.allclose(ops.from_bf16(bits)[:-1], x[:-1], rtol=1 / 128)
    assert np.isinf(ops.from_bf16(bits)[-1])
    assert ops.to_bf16(np.float32(1.0 + 1 / 256))[()] == ops.to_bf16(np.float32(1.0))[()]  # tie to even


def test_from_bf16_takes_bit_patterns_only():
    """A cast to uint16 took float32 1.0 as the pattern 1 (9.2e-41) and wrapped ints past 65535 (found by a check
    written from the docs alone); ml_dtypes' bfloat16 was cast by value."""
    import ml_dtypes

    assert ops.from_bf16([0x3F80, 0x4020]).tolist() == [1.0, 2.5]
    assert ops.from_bf16(np.array([1.0, 2.5], ml_dtypes.bfloat16)).tolist() == [1.0, 2.5]
    for bad in (np.array([1.0, 2.5], np.float32), np.array([0.5], np.float16), np.array([True])):
        with pytest.raises(TypeError, match=r"from_bf16: x must hold bf16 bit patterns \(uint16\) or be ml_dtypes' "
                                            r"bfloat16, got (float32|float16|bool) \(to round float values"):
            ops.from_bf16(bad)
    with pytest.raises(ValueError, match=r"from_bf16: bit patterns are 0 to 65535, got values from 16256 to 81792"):
        ops.from_bf16([16256, 81792])


def _nearest_bf16(v: float) -> int:
    """The bf16 pattern nearest to ``v`` exactly (ties to even), by comparing the two candidates around it."""
    from fractions import Fraction

    lo = int(np.array([v], np.float32).view(np.uint32)[0]) >> 16        # a candidate near v
    best = None
    for c in range(max(lo - 2, 0), lo + 3):
        for sign in (0, 0x8000):
            bits = (c & 0x7FFF) | sign
            f = float(np.array([bits << 16], np.uint32).view(np.float32)[0])
            if not np.isfinite(f):
                continue
            key = (abs(Fraction(f) - Fraction(v)), bits & 1)
            if best is None or key < best[0]:
                best = (key, bits)
    assert best is not None
    return best[1]


def test_float64_values_round_to_bf16_once():
    # rounding float64 to float32 first and then to bf16 rounds twice: 1 + 2**-8 + 2**-40 is above the tie
    # between 1.0 and 1.0078125, so it goes up (0x3f81); through float32 it became the tie and went to even
    # (found by a check written from the docs alone)
    assert int(ops.to_bf16(np.array([1 + 2 ** -8 + 2 ** -40]))[0]) == 0x3F81
    rng = np.random.default_rng(3)
    x = rng.standard_normal(400) * 10.0 ** rng.integers(-30, 30, 400)
    ties = np.array([1 + 2 ** -8 + 2 ** -30, -(3 + 2 ** -7 - 2 ** -35), 2 ** -120 * (1 + 2 ** -8 + 2 ** -50)])
    for v in np.concatenate([x, ties]):
        assert int(ops.to_bf16(np.array([v]))[0]) == _nearest_bf16(float(v)), v
    assert ops.to_bf16(np.array([1e300, -1e300])).tolist() == [0x7F80, 0xFF80]   # past the largest: inf
    with pytest.raises(TypeError, match="complex values have no bf16"):
        ops.to_bf16(np.array([1 + 2j]))
    with pytest.raises(TypeError, match="to_bf16: x must be an array of numbers, got str"):
        ops.to_bf16("abc")


def test_bad_arguments_are_refused_before_launch():
    a = np.zeros((4, 8), np.float16)
    with pytest.raises(ValueError, match="a is 4 x 8 but b is 4 x 4"):
        ops.matmul(a, np.zeros((4, 4), np.float16))
    with pytest.raises(ValueError, match=r"matmul\(f16\): b must be float16, got float32"):
        ops.matmul(a, np.zeros((8, 4), np.float32))
    with pytest.raises(ValueError, match="no kind for int16 inputs"):
        ops.matmul(np.zeros((4, 8), np.int16), np.zeros((8, 4), np.int16))
    with pytest.raises(ValueError, match="out must be float32 of shape"):
        ops.matmul(a, np.zeros((8, 4), np.float16), out=np.zeros((4, 4), np.float16))
    q = np.zeros((2, 10, 24), np.float16)
    with pytest.raises(ValueError, match="multiple of 16"):
        ops.attention(q, q, q)
    with pytest.raises(ValueError, match="k has shape"):
        ops.attention(np.zeros((10, 16), np.float16), np.zeros((9, 16), np.float16), np.zeros((10, 16), np.float16))


def test_the_attention_reference_is_softmax():
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((5, 16)).astype(np.float16) for _ in range(3))
    ref = flash_attention.reference(q, k, v, causal=True)
    assert np.allclose(ref[0], v[0].astype(np.float32), atol=1e-3)  # the first query sees only key 0


@pytest.mark.skipif(not HAVE_INTERP, reason="the CPU interpreter (coopdsl.interp) is not installed")
@pytest.mark.parametrize("kind, m, n, k", [("f16", 37, 70, 45), ("bf16", 64, 64, 32), ("i8", 20, 33, 70),
                                          ("u8", 65, 17, 64)])
def test_matmul_on_the_interpreter(kind, m, n, k):
    rng = np.random.default_rng(0)
    if kind in ("f16", "bf16"):
        a32, b32 = rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (k, n)).astype(np.float32)
        if kind == "f16":
            a, b = a32.astype(np.float16), b32.astype(np.float16)
            ref = a.astype(np.float32) @ b.astype(np.float32)
        else:
            a, b = ops.to_bf16(a32), ops.to_bf16(b32)
            ref = ops.from_bf16(a) @ ops.from_bf16(b)
        out = ops.matmul(a, b, kind=kind, device="cpu")
        assert np.allclose(out, ref, atol=1e-3 * k)
    else:
        dt = np.int8 if kind == "i8" else np.uint8
        lo, hi = (-128, 128) if kind == "i8" else (0, 256)
        a, b = rng.integers(lo, hi, (m, k)).astype(dt), rng.integers(lo, hi, (k, n)).astype(dt)
        out = ops.matmul(a, b, device="cpu")
        assert np.array_equal(out, a.astype(np.int64) @ b.astype(np.int64))


@pytest.mark.skipif(not HAVE_INTERP, reason="the CPU interpreter (coopdsl.interp) is not installed")
@pytest.mark.parametrize("causal", [False, True])
def test_attention_on_the_interpreter(causal):
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((2, 21, 32)).astype(np.float16) for _ in range(3))
    out = ops.attention(q, k, v, causal=causal, device="cpu")
    assert np.allclose(out, flash_attention.reference(q, k, v, causal=causal), atol=2e-2)


@pytest.mark.parametrize("ti, tj", [(1, 1), (2, 4), (4, 2)])
def test_matmul_block_shapes_on_the_interpreter(ti, tj):
    from coopdsl.ops import gemm

    m, n, k = 70, 90, 40
    rng = np.random.default_rng(3)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float32)
    variant = gemm.kernel("f16").specialize(TI=ti, TJ=tj)
    variant.launch(gemm._grid({"M": m, "N": n, "TI": ti, "TJ": tj}), a, b, c, M=m, N=n, K=k, device="cpu")
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))


def test_matmul_takes_its_block_shape_from_the_autotune_cache(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from coopdsl.autotune import Config
    from coopdsl.ops import gemm

    monkeypatch.setenv("COOPDSL_AUTOTUNE_CACHE", str(tmp_path / "tune.json"))
    gemm.tuner.cache_clear()
    gpu = SimpleNamespace(info=SimpleNamespace(name="Stand-in GPU", driver_name="test", driver_info="1"))
    t = gemm.tuner("f16")
    a, b = np.ones((40, 24), np.float16), np.ones((24, 72), np.float16)
    out = np.zeros((40, 72), np.float32)
    assert t.cached_config(a, b, out, M=40, N=72, K=24, device=gpu) is None
    entry = t._entry({"M": 40, "N": 72, "K": 24}, gpu)
    t.cache.put(entry, {"config": repr(Config(TI=1, TJ=1)), "ms": 1.0})
    assert t.cached_config(a, b, out, M=40, N=72, K=24, device=gpu) == Config(TI=1, TJ=1)
    assert t.cached_config(a, b, out, M=41, N=72, K=24, device=gpu) is None   # another problem
    gemm.tuner.cache_clear()


def test_tiled_configurations_divide_the_problem_and_fit_the_shared_memory():
    from coopdsl.ops import gemm_tiled

    assert gemm.tiled_configs("f16", 1000, 333, 129) == ((), False)  # the general kernel
    configs, edge = gemm.tiled_configs("f16", 256, 128, 64)
    assert configs[0] == gemm.TILED["f16"][0] and not edge
    assert all(c.values["TILE_N"] == 128 for c in gemm.tiled_configs("f16", 512, 384, 64)[0])  # 384 = 3 x 128
    assert gemm.tiled_configs("i8", 128, 128, 32) == ((), False)      # 8-bit tiles are 64 deep
    # M of no tile's multiple: every configuration dividing N and K, with the M edge
    configs, edge = gemm.tiled_configs("f16", 1000, 256, 64)
    assert edge and configs == tuple(c for c in gemm.TILED["f16"] if c.values["TILE_K"] <= 64)
    assert gemm.tiled_configs("f16", 384, 256, 64)[1] is False        # 384 = 3 x 128: no edge needed
    for kind, configs in gemm.TILED.items():
        a_t, c_bytes = gemm.KINDS[kind][0], gemm.KINDS[kind][1].nbytes
        first = configs[0].values
        assert (first["LN"], first["TILE_M"], first["TILE_N"]) == (16, 128, 128)  # runs wherever 16x16 tiles do
        for c in configs:
            v = c.values
            assert gemm_tiled.shared_bytes(a_t, v, edge_m=True, c_bytes=c_bytes) <= gemm_tiled.SHARED_LIMIT
            assert v["LN"] % (16 // a_t.nbytes) == 0  # a row-major B fragment starts on a 128-bit vector


@pytest.mark.skipif(not HAVE_INTERP, reason="the CPU interpreter (coopdsl.interp) is not installed")
@pytest.mark.parametrize("kind, m, n, k", [("f16", 256, 128, 64), ("bf16", 128, 256, 96), ("i8", 128, 128, 128),
                                          ("u8", 256, 128, 64)])
def test_matmul_of_tile_multiples_runs_the_tiled_kernel(kind, m, n, k, monkeypatch):
    launched = []
    real = gemm.tiled_kernel

    def spy(kind_, kmajor=False, edge_m=False):
        launched.append(kind_)
        return real(kind_, kmajor, edge_m)

    monkeypatch.setattr(gemm, "tiled_kernel", spy)
    a, b, ref = matmul_inputs(kind, m, n, k, np.random.default_rng(7))
    out = ops.matmul(a, b, kind=kind, device="cpu")
    assert out.shape == (m, n) and out.dtype == gemm.KINDS[kind][4]
    if kind in ("f16", "bf16"):
        np.testing.assert_allclose(out, ref, atol=1e-4 * k)
    else:
        np.testing.assert_array_equal(out, ref)
    assert launched == [kind]


def test_the_tiled_kernels_validate():
    for kind in gemm.TILED:
        for ln in (8, 16) if kind == "f16" else (16,):
            compile_checked(gemm.tiled_kernel(kind).specialize(LN=ln), "OpCooperativeMatrixMulAddKHR",
                            "OpCooperativeMatrixLoadKHR", "OpCooperativeMatrixStoreKHR", "OpControlBarrier")


@pytest.mark.skipif(not HAVE_INTERP, reason="the CPU interpreter (coopdsl.interp) is not installed")
@pytest.mark.parametrize("kind", ["f16", "bf16", "i8", "u8"])
@pytest.mark.parametrize("m, n, k", [(256, 128, 128), (37, 70, 45), (37, 128, 128), (300, 128, 64)])
def test_matmul_with_b_transposed(kind, m, n, k, monkeypatch):
    """Tiled, general, M edge; f16/bf16 up to 256 rows of a take ops.linear's mul_mm_cm2 launches instead."""
    from coopdsl.ops import ggml_mul_mm

    kernels = []
    real_mm = ggml_mul_mm.dispatch
    monkeypatch.setattr(ggml_mul_mm, "dispatch", lambda *a, **kw: kernels.append(("mul_mm_cm2",)) or real_mm(*a, **kw))
    for name in ("tiled_kernel", "kernel"):
        real = getattr(gemm, name)
        monkeypatch.setattr(gemm, name, lambda kind_, kmajor=False, *edge, real=real, name=name:
                            kernels.append((name, kmajor, *edge)) or real(kind_, kmajor, *edge))
    a, b, ref = matmul_inputs(kind, m, n, k, np.random.default_rng(11), transpose_b=True)
    out = ops.matmul(a, b, kind=kind, device="cpu", transpose_b=True)
    assert out.shape == (m, n)
    if kind in ("f16", "bf16"):
        np.testing.assert_allclose(out, ref, atol=1e-4 * k)
    else:
        np.testing.assert_array_equal(out, ref)
    if kind in ("f16", "bf16") and m <= 256:
        assert kernels == [("mul_mm_cm2",)]
    else:
        assert kernels == [("kernel", True) if n % 128 else ("tiled_kernel", True, m % 128 != 0)]


def test_matmul_with_b_transposed_checks_the_shapes():
    a = np.zeros((4, 8), np.float16)
    with pytest.raises(ValueError, match=r"a is 4 x 8 but b \(transpose_b=True: N x K\) is 8 x 4"):
        ops.matmul(a, np.zeros((8, 4), np.float16), transpose_b=True)
    with pytest.raises(ValueError, match="out must be float32 of shape"):
        ops.matmul(a, np.zeros((6, 8), np.float16), transpose_b=True, out=np.zeros((8, 6), np.float32))


def test_kmajor_tiled_configurations_fit_and_start_with_one_every_device_runs():
    from coopdsl.ops import gemm_tiled

    assert gemm.tiled_configs("i8", 256, 256, 256, b_kmajor=True)[0][0] == gemm.TILED_KMAJOR["i8"][0]
    for kind, configs in gemm.TILED_KMAJOR.items():
        assert configs[0].values["LN"] == 16
        for c in configs:
            assert gemm_tiled.shared_bytes(gemm.KINDS[kind][0], c.values, b_kmajor=True, edge_m=True,
                                           c_bytes=gemm.KINDS[kind][1].nbytes) <= gemm_tiled.SHARED_LIMIT


@pytest.mark.parametrize("kind", sorted(gemm.KINDS))
def test_kmajor_kernels_validate_and_load_b_column_major(kind):
    compile_checked(gemm.kernel(kind, True), "OpCooperativeMatrixMulAddKHR")
    compile_checked(gemm.tiled_kernel(kind, True), r"OpCooperativeMatrixLoadKHR %\w+ %\w+ %uint_1 ")


@pytest.mark.skipif(not HAVE_INTERP, reason="the CPU interpreter (coopdsl.interp) is not installed")
def test_the_transpose_b_example_of_docs_ops_md_runs(monkeypatch):
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "ops.md").read_text()
    (code,) = [b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "transpose_b=True" in b]
    monkeypatch.setenv("COOPDSL_DEVICE", "cpu")  # every launch on the interpreter
    exec(compile(code, "docs/ops.md", "exec"), {"np": np, "ops": ops})


@pytest.mark.skipif(not HAVE_INTERP, reason="the CPU interpreter (coopdsl.interp) is not installed")
@pytest.mark.parametrize("kind, m", [("f16", 1), ("f16", 77), ("bf16", 200), ("i8", 130), ("u8", 15)])
def test_matmul_of_any_m_runs_the_tiled_kernel_with_the_m_edge(kind, m, monkeypatch):
    # N and K tile multiples, M not: the last block row is partial (and its last tile too when M % 16 != 0)
    launched = []
    real = gemm.tiled_kernel
    monkeypatch.setattr(gemm, "tiled_kernel", lambda kind_, kmajor=False, edge_m=False:
                        launched.append(edge_m) or real(kind_, kmajor, edge_m))
    n, k = 128, 128
    a, b, ref = matmul_inputs(kind, m, n, k, np.random.default_rng(5))
    out = ops.matmul(a, b, kind=kind, device="cpu")
    if kind in ("f16", "bf16"):
        np.testing.assert_allclose(out, ref, atol=1e-4 * k)
    else:
        np.testing.assert_array_equal(out, ref)
    assert launched == [True]


@pytest.mark.skipif(not HAVE_INTERP, reason="the CPU interpreter (coopdsl.interp) is not installed")
def test_the_m_edge_writes_nothing_past_row_m():
    # the output buffer holds exactly M rows: a write past them is an out-of-bounds store the interpreter
    # reports, and a sentinel row after them in a larger buffer stays untouched
    from coopdsl.ops import gemm_tiled

    m, n, k = 40, 128, 64
    a, b, ref = matmul_inputs("f16", m, n, k, np.random.default_rng(9))
    kern, spec = gemm_tiled.specialized(gemm.tiled_kernel("f16", False, True), gemm.TILED["f16"][0])
    d = np.full((m + 8, n), 7.0, np.float32)
    kern.launch(gemm_tiled.grid(m, n, spec["TILE_M"], spec["TILE_N"]), a.view(np.uint32).reshape(-1, 4),
                b.view(np.uint32).reshape(-1, 4), d, M=m, N=n, K=k, device="cpu", **spec)
    np.testing.assert_allclose(d[:m], ref, atol=1e-4 * k)
    assert (d[m:] == 7.0).all()


def test_the_m_edge_kernels_validate():
    # the rows of A are clamped (one more UMin per load loop than the kernel without the edge) and the
    # straddling tile goes through shared memory between Subgroup-scope barriers
    for kind in gemm.TILED:
        for kmajor in (False, True):
            edge = compile_checked(gemm.tiled_kernel(kind, kmajor, True), "OpCooperativeMatrixStoreKHR",
                                   r"OpControlBarrier %uint_3 %uint_3 ")
            plain = gemm.tiled_kernel(kind, kmajor).disassemble()
            assert edge.count(" UMin ") == plain.count(" UMin ") + 2


def test_matmul_of_empty_sizes_launches_nothing():
    a, b = np.ones((0, 64), np.float16), np.ones((64, 128), np.float16)
    assert ops.matmul(a, b).shape == (0, 128)
    out = np.full((3, 5), 7.0, np.float32)                      # K = 0: a sum over nothing
    assert ops.matmul(np.ones((3, 0), np.float16), np.ones((0, 5), np.float16), out=out) is out
    assert (out == 0).all()


def test_matmul_says_how_to_pass_float32_and_strided_inputs():
    with pytest.raises(ValueError, match=r"float32 inputs are not supported; convert them: a.astype\(np.float16\), "
                                         r"or ops.to_bf16\(a\) with kind='bf16'"):
        ops.matmul(np.ones((4, 4), np.float32), np.ones((4, 4), np.float32))
    b = np.ones((64, 32), np.float16)
    with pytest.raises(ValueError, match=r"b must be C-contiguous \(row-major\); pass np.ascontiguousarray\(b\) or, "
                                         r"for a transposed b, b itself with transpose_b=True"):
        ops.matmul(np.ones((16, 32), np.float16), b.T, device="cpu")


def test_matmul_names_operands_and_devices_it_cannot_use():
    # (a list once failed with "'list' object has no attribute 'dtype'", device=3 with "'int' object has no
    # attribute 'info'")
    with pytest.raises(TypeError, match=r"matmul: a must be a numpy array or a coopdsl.runtime.Array \(or an object "
                                        r"with __array__ or the buffer protocol\), got list \(convert it, e.g. "
                                        r"np.asarray\(a\)\)"):
        ops.matmul([[1.0]], np.ones((1, 1), np.float16), device="cpu")
    # (the hint once said np.asarray(out, np.float16) for every operand: a copy an out never reaches, of a dtype
    # most outs are not)
    with pytest.raises(TypeError, match=r"matmul: out must be a numpy array or a coopdsl.runtime.Array .*, got tuple "
                                        r"\(an out is written in place: pass a numpy array of the result's dtype"):
        ops.matmul(np.ones((16, 16), np.float16), np.ones((16, 16), np.float16), out=(1, 2), device="cpu")
    with pytest.raises(TypeError, match=r"matmul: device must be None, 'cpu' or a coopdsl.runtime.Device, got int 3"):
        ops.matmul(np.ones((16, 16), np.float16), np.ones((16, 16), np.float16), device=3)


class _Tensor:
    """A CPU tensor of another library, as numpy sees it: an object with ``__array__``."""

    def __init__(self, a):
        self.a = a

    def __array__(self, dtype=None, copy=None):
        return self.a if dtype is None else self.a.astype(dtype)


def test_every_op_takes_what_numpy_reads_and_names_what_it_cannot():
    # one rule for every op (coopdsl/ops/operands.py): numpy arrays and resident arrays as they are; objects with
    # __array__ (CPU tensors of PyTorch or JAX) or the buffer protocol as np.asarray gives them; anything else a
    # TypeError naming the op and the argument (ops.linear once raised AttributeError on a list)
    import array as pyarray

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((16, 32)).astype(np.float16), rng.standard_normal((32, 16)).astype(np.float16)
    want = ops.matmul(a, b, device="cpu")
    np.testing.assert_array_equal(ops.matmul(_Tensor(a), _Tensor(b), device="cpu"), want)
    x, w = rng.standard_normal((2, 64)).astype(np.float32), rng.standard_normal((8, 64)).astype(np.float16)
    want = ops.linear(x, w, device="cpu")
    np.testing.assert_array_equal(ops.linear(_Tensor(x), _Tensor(w), device="cpu"), want)
    xb = pyarray.array("f", x.ravel())                                   # the buffer protocol (1-D: a shape error)
    with pytest.raises(ValueError, match=r"linear: x must be N x K and w M x K \(2-D.*got x \(128,\)"):
        ops.linear(xb, w, device="cpu")
    np.testing.assert_array_equal(ops.linear(memoryview(x), w, device="cpu"), want)
    q = rng.standard_normal((2, 4, 32)).astype(np.float16)
    want = ops.attention(q, q, q, device="cpu")
    np.testing.assert_array_equal(ops.attention(_Tensor(q), _Tensor(q), _Tensor(q), device="cpu"), want)
    for op, call in (("matmul", lambda z: ops.matmul(z, b, device="cpu")),
                     ("linear", lambda z: ops.linear(z, w, device="cpu")),
                     ("attention", lambda z: ops.attention(z, q, q, device="cpu"))):
        for bad, name in (([[1.0] * 64] * 2, "list"), (3.0, "float"), (b"abc", "bytes"), (None, "NoneType")):
            with pytest.raises(TypeError, match=rf"{op}: \w+ must be a numpy array or a coopdsl.runtime.Array "
                                                rf"\(or an object with __array__ or the buffer protocol\), got {name}"):
                call(bad)
    ro = np.zeros((2, 8), np.float32)
    ro.flags.writeable = False                                           # (what numpy gives for a JAX array)
    for out in (ro, _Tensor(ro)):
        with pytest.raises(ValueError, match=r"linear: out is read-only \((ndarray|_Tensor)\); pass a writable"):
            ops.linear(x, w, out=out, device="cpu")
    class _Copying(_Tensor):   # an object that hands numpy a new array each time
        def __array__(self, dtype=None, copy=None):
            return self.a.copy()

    copying = _Copying(np.zeros((2, 8), np.float32))
    with pytest.raises(ValueError, match=r"linear: numpy reads out \(_Copying\) as a copy, so the result would not "
                                         r"reach it"):
        ops.linear(x, w, out=copying, device="cpu")
    with pytest.raises(TypeError, match=r"linear: numpy reads x \(_Tensor\) as Python objects, not numbers"):
        ops.linear(_Tensor(np.array([[object()] * 64] * 2)), w, device="cpu")
    ra = np.zeros(q.shape, np.float32)
    ra.flags.writeable = False
    with pytest.raises(ValueError, match=r"attention: out is read-only"):
        ops.attention(q, q, q, device="cpu", out=ra)
    with pytest.raises(TypeError, match=r"linear: q8 must be None, True or False, got 'yes'"):
        ops.linear(x, w, device="cpu", q8="yes")
    # yes/no options are bools (numpy's too), not truth values taken silently
    for call, what in ((lambda: ops.linear(x, w, device="cpu", tune="yes"), "linear: tune"),
                       (lambda: ops.matmul(a, b, device="cpu", transpose_b=1), "matmul: transpose_b"),
                       (lambda: ops.matmul(a, b, device="cpu", tune=None), "matmul: tune"),
                       (lambda: ops.attention(q, q, q, device="cpu", causal="yes"), "attention: causal"),
                       (lambda: ops.attention(q, q, q, device="cpu", tune=1), "attention: tune")):
        with pytest.raises(TypeError, match=rf"{what} must be True or False, got "):
            call()
    np.testing.assert_array_equal(ops.attention(q, q, q, device="cpu", causal=np.bool_(True)),
                                  ops.attention(q, q, q, device="cpu", causal=True))
    with pytest.raises(ValueError, match=r"linear: q8=True \(x rounded to 8 bits\) serves quantized weights"):
        ops.linear(rng.standard_normal((20, 64)).astype(np.float32), w, device="cpu", q8=True)   # (past 16 rows too)
    for rows in (2, 20):                                                 # the decode and the prefill path
        xr = rng.standard_normal((rows, 64)).astype(np.float32)
        with pytest.raises(ValueError, match=rf"linear: out must be float32 of shape \({rows}, 8\), got float32 "
                                             r"\(4, 40\)"):
            ops.linear(xr, w, out=np.zeros((4, 40), np.float32), device="cpu")
        with pytest.raises(ValueError, match=rf"linear: out must be float32 of shape \({rows}, 8\), got float16"):
            ops.linear(xr, w, out=np.zeros((rows, 8), np.float16), device="cpu")


def test_bfloat16_arrays_are_taken_as_their_bits():
    # ml_dtypes' bfloat16 (as JAX hands it out) was a ValueError naming 'bfloat16' while docs/runtime.md said bf16 may
    # travel as it; the ops take it as the uint16 bit patterns they read bf16 as, and matmul's kind follows it
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((32, 64)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((64, 48)).astype(ml_dtypes.bfloat16)
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(ops.matmul(a, b, device="cpu") - want).max() < 1e-4
    assert np.array_equal(ops.matmul(a, b, device="cpu"), ops.matmul(a.view(np.uint16), b.view(np.uint16),
                                                                     kind="bf16", device="cpu"))
    q = rng.standard_normal((2, 3, 64)).astype(ml_dtypes.bfloat16)
    k = rng.standard_normal((1, 40, 64)).astype(ml_dtypes.bfloat16)
    got = ops.attention(q, k, k, device="cpu")
    assert np.array_equal(got, ops.attention(q.view(np.uint16), k.view(np.uint16), k.view(np.uint16), device="cpu"))
    assert np.abs(got - flash_attention.reference(q.view(np.uint16), k.view(np.uint16), k.view(np.uint16))).max() < 1e-3
    # a mask holds values, not bits: a bfloat16 mask was refused as 'uint16'; it is read as the values it holds
    m = np.where(rng.random((3, 40)) < 0.3, -np.inf, rng.standard_normal((3, 40))).astype(ml_dtypes.bfloat16)
    assert np.array_equal(ops.attention(q, k, k, mask=m, device="cpu"),
                          ops.attention(q, k, k, mask=m.astype(np.float32), device="cpu"))
    w = rng.standard_normal((40, 64)).astype(ml_dtypes.bfloat16)
    x = rng.standard_normal((2, 64)).astype(np.float32)
    assert np.abs(ops.linear(x, w, "bf16", device="cpu") - x.astype(np.float64) @ w.astype(np.float64).T).max() < 1e-5
