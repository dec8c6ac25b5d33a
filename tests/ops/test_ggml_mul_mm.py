"""ggml's mul_mm_cm2 interface in coopdsl (coopdsl/ops/ggml_mul_mm.py): the modules validate with ggml's
bindings, push constants, specialization ids and entry point, and compute ggml's product on the CPU
interpreter for every A format and every path of the kernel (edge tiles, the unrolled fast path, the
narrow BN/2 and BN/4 tiles, split-k, broadcast batches), against numpy on dequantized weights."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from coopdsl.ops import ggml_mul_mm as g
from coopdsl.ops import to_bf16
from coopdsl.ops.quant import dequantize, quantize

ROOT = Path(__file__).resolve().parents[2]
PUSH = ("M N K stride_a stride_b stride_d batch_stride_a batch_stride_b batch_stride_d base_work_group_z "
        "num_batches k_split ne02 ne12 broadcast2 broadcast3 padded_N").split()


@pytest.mark.parametrize("fmt,f16acc", sorted(g.PIPELINES))
def test_each_module_has_ggmls_interface(fmt, f16acc):
    k = g.kernel(fmt, f16acc)
    text = k.disassemble()  # compiling ran spirv-val (vulkan1.3)
    assert 'OpEntryPoint GLCompute %main "main"' in text
    assert "OpCooperativeMatrixLoadTensorNV" in text and "OpCooperativeMatrixStoreTensorNV" in text
    assert text.count("OpCooperativeMatrixMulAddKHR") >= 4
    r = k.reflect()
    assert [(b["binding"], b["name"]) for b in r["bindings"]] == [(0, "data_a"), (1, "data_b"), (2, "data_d")]
    members = r["push_constants"]["members"]
    assert [(m["name"], m["offset"]) for m in members] == [(n, 4 * i) for i, n in enumerate(PUSH)]
    assert [(s["name"], s["id"]) for s in r["spec_constants"]] == [
        ("BLOCK_SIZE", 0), ("BM", 1), ("BN", 2), ("BK", 3), ("SMALL", 4), ("ALIGNED", 5)]
    if fmt in ("q4_0", "q8_0", "q4_K"):
        assert "DecodeFunc" in text


def test_pipeline_names_follow_ggmls():
    assert g.PIPELINES[("q4_K", True)] == [
        "matmul_q4_k_f16_f16acc_l", "matmul_q4_k_f16_f16acc_m", "matmul_q4_k_f16_f16acc_s",
        "matmul_q4_k_f16_f16acc_aligned_l", "matmul_q4_k_f16_f16acc_aligned_m", "matmul_q4_k_f16_f16acc_aligned_s"]
    assert g.PIPELINES[("f16", False)][3] == "matmul_f16_aligned_l"
    assert ("bf16", True) not in g.PIPELINES
    assert sum(len(v) for v in g.PIPELINES.values()) == 54


def test_the_build_spec_is_the_generated_one():
    sys.path.insert(0, str(ROOT / "benchmarks" / "ggml"))
    try:
        from make_kernels_toml import spec_toml
    finally:
        sys.path.pop(0)
    assert (ROOT / "benchmarks" / "ggml" / "kernels.toml").read_text() == spec_toml()


def _weights(fmt, m, k, rng, batches=1):
    w = rng.standard_normal((batches, m, k)).astype(np.float32)
    if fmt == "f16":
        a = w.astype(np.float16)
        return a, a.astype(np.float32)
    if fmt == "bf16":
        a = to_bf16(w)
        return a, (a.astype(np.uint32) << 16).view(np.float32)
    q = np.stack([quantize(x, fmt) for x in w])
    return q, np.stack([dequantize(x, fmt, k) for x in q])


# (name, M, N, K, tile (BLOCK_SIZE, BM, BN, BK, SMALL), aligned, split_k, padded_N, A batches, B batches)
CASES = [
    ("edges", 40, 24, 96, (128, 32, 32, 32, 0), False, 1, None, 1, 1),
    ("fast", 64, 32, 512, (128, 32, 32, 32, 0), True, 1, None, 1, 1),
    ("fast_quarter", 32, 8, 256, (128, 32, 64, 32, 1), True, 1, 64, 1, 1),
    ("fast_half", 32, 24, 256, (128, 32, 64, 32, 1), True, 1, 64, 1, 1),
    ("split_k", 32, 32, 768, (128, 32, 32, 32, 0), False, 3, None, 1, 1),
    ("broadcast", 32, 16, 256, (128, 32, 32, 32, 0), False, 1, None, 2, 4),
]


@pytest.mark.parametrize("fmt", ["f16", "bf16", "q4_0", "q8_0", "q4_K"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_numpy_on_the_interpreter(fmt, case):
    name, m, n, k, tile, aligned, split_k, padded, ba, bb = case
    k = max(k, 512) if fmt == "q4_K" else k  # q4_K blocks hold 256 weights
    rng = np.random.default_rng(len(name) * 7 + len(fmt))
    a, wd = _weights(fmt, m, k, rng, ba)
    rows = padded or n
    x = rng.standard_normal((bb, rows, k)).astype(np.float32)
    b = to_bf16(x) if fmt == "bf16" else x.astype(np.float16)
    xb = (b.astype(np.uint32) << 16).view(np.float32) if fmt == "bf16" else b.astype(np.float32)
    ref = np.stack([xb[i, :n] @ wd[i // (bb // ba)].T for i in range(bb)])
    for f16acc in (False, True) if fmt != "bf16" else (False,):
        d = g.mul_mm(a if ba > 1 else a[0], b if bb > 1 else b[0], fmt, f16acc=f16acc, tile=tile,
                     aligned=aligned, split_k=split_k, n=n, device="cpu")
        d = d if bb > 1 else d[None]
        tol = 0.02 if f16acc else 1e-3
        assert np.abs(d - ref).max() <= tol * np.abs(ref).max(), (name, fmt, f16acc)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="unknown A format 'q5_0'"):
        g.kernel("q5_0")
    with pytest.raises(ValueError, match="accumulates in f32 only"):
        g.kernel("bf16", True)
    with pytest.raises(ValueError, match="must be the uint8 q4_0 blocks of an M x 64 matrix"):
        g.mul_mm(np.zeros((4, 64), np.float16), np.zeros((4, 64), np.float16), "q4_0", device="cpu")
