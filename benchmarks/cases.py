"""How to run each example on real data and what numpy says it must produce.

Each case builds inputs for a size, launches the example kernel through the
documented API (``Kernel.launch``), and compares with a numpy reference.
Used by ``tests/gpu/test_examples_gpu.py`` (pytest -m gpu) and by
``benchmarks/gpu_check.py`` (writes docs/gpu-results.md).  ``QCOM_CASES`` are the
SPV_QCOM_cooperative_matrix_conversion examples, which run on the CPU interpreter
(``tests/qcom/test_examples.py``).
"""

from __future__ import annotations

import runpy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def load_example(name: str) -> dict:
    return runpy.run_path(str(ROOT / "examples" / name))


@dataclass
class Result:
    example: str
    kernel: str
    size: tuple
    max_abs_err: float
    max_rel_err: float
    tolerance: str
    passed: bool


def _rel(out: np.ndarray, ref: np.ndarray) -> tuple[float, float]:
    diff = np.abs(out.astype(np.float64) - ref.astype(np.float64))
    scale = np.maximum(np.abs(ref.astype(np.float64)), 1.0)
    return float(diff.max(initial=0.0)), float((diff / scale).max(initial=0.0))


def gemm_khr(size, rng, device=None) -> Result:
    M, N, K = size
    k = load_example("gemm_khr.py")["gemm"]
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    k.launch((N // 16, M // 16, 1), a, b, c, M=M, N=N, K=K, device=device)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    abs_err, rel_err = _rel(c, ref)
    tol = 1e-3 * np.sqrt(K)
    return Result("gemm_khr.py", "gemm", size, abs_err, rel_err, f"abs <= {tol:.3g}", abs_err <= tol)


HARNESS_FLOATS = (-0.5, 0.0, 0.5, 1.0)  # vk_cooperative_matrix_perf's float inputs: ((rand() & 3) - 1) / 2


def gemm_inputs(kind: str, m: int, n: int, k: int, rng, transpose_b: bool = False, values: str = "uniform",
                reference: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(a, b, the product in float64) for a GEMM with inputs of ``kind`` ("f16", "bf16": bit patterns as uint16,
    "i8", "u8"): a is m x k, b is k x n, or n x k with ``transpose_b`` (the product is then a @ b.T). Floats are
    uniform in [-1, 1), integers over their whole range. The one input generator of the tests and benchmarks.

    ``values="harness"``: floats drawn from {-0.5, 0, 0.5, 1} as vk_cooperative_matrix_perf fills its inputs
    (few mantissa bits, a quarter zeros: the tensor cores draw less power on them, so under the H100's power
    limit the same kernel runs at higher clocks); integers are over their whole range either way, as there.
    ``reference=False``: no product (None), for inputs only timed (an 8192^3 float64 product takes seconds)."""
    from coopdsl.ops import from_bf16, to_bf16

    if values not in ("uniform", "harness"):
        raise ValueError(f"values must be 'uniform' or 'harness', got {values!r}")
    b_shape = (n, k) if transpose_b else (k, n)
    if kind in ("f16", "bf16"):
        if values == "harness":
            a32, b32 = rng.choice(HARNESS_FLOATS, (m, k)), rng.choice(HARNESS_FLOATS, b_shape)
        else:
            a32, b32 = rng.uniform(-1, 1, (m, k)), rng.uniform(-1, 1, b_shape)
        if kind == "f16":
            a, b = a32.astype(np.float16), b32.astype(np.float16)
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
        else:
            a, b = to_bf16(a32), to_bf16(b32)
            a64, b64 = from_bf16(a).astype(np.float64), from_bf16(b).astype(np.float64)
    else:
        dt, lo, hi = (np.int8, -128, 128) if kind == "i8" else (np.uint8, 0, 256)
        a, b = rng.integers(lo, hi, (m, k)).astype(dt), rng.integers(lo, hi, b_shape).astype(dt)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return a, b, (a64 @ (b64.T if transpose_b else b64)) if reference else None


def bf16_gemm(size, rng, device=None) -> Result:
    M, N, K = size
    k = load_example("bf16_gemm.py")["gemm_bf16"]
    from coopdsl.ops import from_bf16, to_bf16

    a = to_bf16(rng.uniform(-1, 1, (M, K)).astype(np.float32))
    b = to_bf16(rng.uniform(-1, 1, (K, N)).astype(np.float32))
    c = np.zeros((M, N), np.float32)
    k.launch((N // 16, M // 16, 1), a, b, c, M=M, N=N, K=K, device=device)
    ref = from_bf16(a).astype(np.float64) @ from_bf16(b).astype(np.float64)
    abs_err, rel_err = _rel(c, ref)
    tol = 1e-3 * np.sqrt(K)
    return Result("bf16_gemm.py", "gemm_bf16", size, abs_err, rel_err, f"abs <= {tol:.3g}", abs_err <= tol)


def int8_gemm(size, rng, device=None) -> Result:
    M, N, K = size
    k = load_example("int8_gemm.py")["gemm_s8"]
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    c = np.zeros((M, N), np.int32)
    k.launch((N // 16, M // 16, 1), a, b, c, M=M, N=N, K=K, device=device)
    ref = a.astype(np.int64) @ b.astype(np.int64)
    abs_err, rel_err = _rel(c, ref)
    return Result("int8_gemm.py", "gemm_s8", size, abs_err, rel_err, "exact", abs_err == 0)


def gemm_shared(size, rng, device=None, tiles=None) -> Result:
    M, N, K = size
    k = load_example("gemm_shared.py")["gemm_shared"]
    tiles = tiles or {}
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = rng.uniform(-1, 1, (M, N)).astype(np.float32)
    alpha, beta = 1.5, -0.5
    ref = alpha * (a.astype(np.float32) @ b.astype(np.float32)) + beta * c
    tm, tn = tiles.get("TILE_M", 128), tiles.get("TILE_N", 128)
    k.launch((N // tn, M // tm, 1), a, b, c, alpha, beta, M=M, N=N, K=K, device=device, **tiles)
    abs_err, rel_err = _rel(c, ref)
    tol = 1.5e-3 * np.sqrt(K)
    label = "gemm_shared" + ("" if not tiles else " " + ",".join(f"{k}={v}" for k, v in tiles.items()))
    return Result("gemm_shared.py", label, size, abs_err, rel_err, f"abs <= {tol:.3g}", abs_err <= tol)


def gemm_shared_small_tiles(size, rng, device=None) -> Result:
    return gemm_shared(size, rng, device, dict(TILE_M=64, TILE_N=64, TILE_K=32, SG_M=32, SG_N=32, WG=128))


def gemm_edges(size, rng, device=None) -> Result:
    M, N, K = size
    k = load_example("gemm_edges.py")["gemm_any"]
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)  # every element must be written
    k.launch(((N + 15) // 16, (M + 15) // 16, 1), a, b, c, M, N, K, device=device)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    abs_err, rel_err = _rel(np.nan_to_num(c, nan=1e9), ref)
    tol = 1e-3 * np.sqrt(K)
    return Result("gemm_edges.py", "gemm_any", size, abs_err, rel_err, f"abs <= {tol:.3g}", abs_err <= tol)


def gemm_portable(size, rng, device=None) -> Result:
    """examples/gemm_portable.py with the tile the device offers (the H100 profile's on the CPU interpreter)."""
    from coopdsl import interp

    M, N, K = size
    ns = load_example("gemm_portable.py")
    if device == "cpu" or device is None and interp.wants_cpu(None):
        target = "nvidia-h100"
    else:
        from coopdsl import runtime

        target = device or runtime.default_device()
    spec = ns["tile_spec"](target)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    ns["gemm"].launch((N // spec["TN"], M // spec["TM"], 1), a, b, c, M=M, N=N, K=K, device=device, **spec)
    abs_err, rel_err = _rel(c, a.astype(np.float32) @ b.astype(np.float32))
    tol = 1e-3 * np.sqrt(K)
    label = "gemm (tile " + "x".join(str(spec[k]) for k in ("TM", "TN", "TK")) + ")"
    return Result("gemm_portable.py", label, size, abs_err, rel_err, f"abs <= {tol:.3g}", abs_err <= tol)


def gemm_workgroup(size, rng, device=None, c_type=np.float32, b_colmajor=False) -> Result:
    """examples/gemm_workgroup.py: alpha * A x B + beta * C with workgroup-scope matrices and tensor layouts."""
    M, N, K = size
    ns = load_example("gemm_workgroup.py")
    k = ns["gemm_wg" if c_type == np.float32 else "gemm_wg_f16"]
    if b_colmajor:
        k = k.specialize(B_COLMAJOR=True)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = rng.uniform(-1, 1, (M, N)).astype(c_type)
    alpha, beta = 1.5, -0.5
    ref = alpha * (a.astype(np.float64) @ b.astype(np.float64)) + beta * c.astype(np.float64)
    b_arg = np.ascontiguousarray(b.T) if b_colmajor else b
    k.launch(((N + 127) // 128, (M + 127) // 128, 1), a, b_arg, c, M, N, K, alpha, beta, device=device)
    abs_err, rel_err = _rel(c, ref)
    label = "gemm_wg" + ("_f16" if c_type != np.float32 else "") + (" B col-major" if b_colmajor else "")
    if c_type == np.float32:
        tol = 1.5e-3 * np.sqrt(K)
        return Result("gemm_workgroup.py", label, size, abs_err, rel_err, f"abs <= {tol:.3g}", abs_err <= tol)
    tol = 4e-3  # f16 output: half an ulp of f16 plus the f32 accumulation
    return Result("gemm_workgroup.py", label, size, abs_err, rel_err, f"rel <= {tol:.3g}", rel_err <= tol)


def gemm_workgroup_colmajor(size, rng, device=None) -> Result:
    return gemm_workgroup(size, rng, device, b_colmajor=True)


def gemm_workgroup_f16(size, rng, device=None) -> Result:
    return gemm_workgroup(size, rng, device, c_type=np.float16)


Q4_0 = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])  # one q4_0 block: 18 bytes


def q4_0_dequantize(blocks: np.ndarray) -> np.ndarray:
    """The weights of q4_0 ``blocks`` (shape (rows, K / 32)) as f16, computed as the decode function does."""
    lo, hi = blocks["qs"] & 0x0F, blocks["qs"] >> 4
    nibbles = np.concatenate([lo, hi], axis=-1).astype(np.int32)           # (rows, K/32, 32)
    w = (nibbles - 8).astype(np.float16) * blocks["d"][..., None]          # f16 products, like the kernel
    return w.reshape(blocks.shape[0], -1)


def q4_matmul(size, rng, device=None) -> Result:
    """examples/q4_matmul.py: y = dequant(W) x with W in q4_0 blocks read through a device address."""
    M, N, K = size
    k = load_example("q4_matmul.py")["q4_matmul"]
    blocks = np.zeros((M, K // 32), Q4_0)
    blocks["d"] = rng.uniform(0.005, 0.02, blocks.shape).astype(np.float16)
    blocks["qs"] = rng.integers(0, 256, blocks.shape + (16,), dtype=np.uint8)
    x = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    y = np.full((M, N), np.nan, np.float32)  # every element must be written
    k.launch(((N + 63) // 64, (M + 63) // 64, 1), blocks.view(np.uint8).reshape(-1), x, y, M, N, K, device=device)
    ref = q4_0_dequantize(blocks).astype(np.float64) @ x.astype(np.float64)
    abs_err, rel_err = _rel(np.nan_to_num(y, nan=1e9), ref)
    tol = 1e-3 * np.sqrt(K)
    return Result("q4_matmul.py", "q4_matmul", size, abs_err, rel_err, f"abs <= {tol:.3g}", abs_err <= tol)


def _padded(rng, heads: int, n: int, rows: int, D: int) -> np.ndarray:
    """(heads, rows, D) f16: n rows uniform in [-1, 1], the padding rows finite garbage in [-4, 4]."""
    x = rng.uniform(-4, 4, (heads, rows, D))
    x[:, :n] = rng.uniform(-1, 1, (heads, n, D))
    return x.astype(np.float16)


def attention_reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float) -> np.ndarray:
    """softmax(q k^T * scale) v per head, in float64."""
    s = np.einsum("hqd,hkd->hqk", q.astype(np.float64), k.astype(np.float64)) * scale
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.einsum("hqk,hkd->hqd", p / p.sum(axis=-1, keepdims=True), v.astype(np.float64))


def flash_attention(size, rng, device=None) -> Result:
    """size = (heads, n_q, n_kv, D): buffers padded to 64-row tiles, keys past n_kv masked by the kernel."""
    H, n_q, n_kv, D = size
    kern = load_example("flash_attention.py")["flash_attention"].specialize(D=D)
    q_rows, kv_rows = -(-n_q // 64) * 64, -(-n_kv // 64) * 64
    q, k, v = _padded(rng, H, n_q, q_rows, D), _padded(rng, H, n_kv, kv_rows, D), _padded(rng, H, n_kv, kv_rows, D)
    o = np.full((H, q_rows, D), np.nan, np.float32)
    scale = 1.0 / np.sqrt(D)
    kern.launch((q_rows // 64, H, 1), q, k, v, o, n_kv, q_rows, kv_rows, scale, device=device)
    ref = attention_reference(q[:, :n_q], k[:, :n_kv], v[:, :n_kv], scale)
    abs_err, rel_err = _rel(np.nan_to_num(o[:, :n_q], nan=1e9), ref)
    tol = 4e-3  # P is rounded to f16 before P x V and its row sums, as in llama.cpp
    return Result("flash_attention.py", f"flash_attention D={D}", size, abs_err, rel_err, f"abs <= {tol:g}",
                  abs_err <= tol)


CASES: dict[str, tuple[Callable, list[tuple]]] = {
    "gemm_khr": (gemm_khr, [(16, 16, 16), (64, 48, 32), (256, 256, 256), (512, 1024, 768), (1024, 1024, 1024)]),
    "gemm_shared": (gemm_shared, [(128, 128, 32), (256, 384, 160), (1024, 1024, 1024), (2048, 1024, 512)]),
    "gemm_shared_64": (gemm_shared_small_tiles, [(64, 64, 32), (192, 320, 96), (1024, 512, 2048)]),
    "gemm_edges": (gemm_edges, [(1, 1, 1), (17, 33, 5), (100, 75, 50), (1000, 333, 129), (512, 512, 512)]),
    "bf16_gemm": (bf16_gemm, [(16, 16, 16), (128, 64, 96), (512, 512, 512), (1024, 768, 1024)]),
    "int8_gemm": (int8_gemm, [(16, 16, 32), (64, 48, 96), (512, 512, 512), (1024, 1024, 2048)]),
    "gemm_portable": (gemm_portable, [(16, 16, 16), (64, 48, 32), (512, 512, 512), (1024, 768, 1024)]),
    "gemm_workgroup": (gemm_workgroup, [(128, 128, 32), (1, 1, 1), (100, 75, 50), (1000, 333, 129),
                                        (1024, 1024, 1024), (2048, 1536, 512)]),
    "gemm_workgroup_colmajor": (gemm_workgroup_colmajor, [(128, 128, 32), (100, 75, 50), (1000, 333, 129),
                                                          (1024, 1024, 1024)]),
    "gemm_workgroup_f16": (gemm_workgroup_f16, [(128, 128, 32), (100, 75, 50), (1024, 1024, 1024)]),
    "q4_matmul": (q4_matmul, [(64, 64, 32), (100, 37, 96), (1000, 200, 1024), (4096, 1, 4096), (512, 512, 4096)]),


    # (heads, n_q, n_kv, D); NV2 (VK_NV_cooperative_matrix2) devices only
    "flash_attention": (flash_attention, [(1, 64, 64, 64), (2, 100, 200, 64), (1, 64, 77, 128), (4, 256, 1000, 128),
                                          (8, 512, 512, 64), (2, 1024, 4096, 128)]),
}


# -- SPV_QCOM_cooperative_matrix_conversion workloads ---------------------------------------------------
# No GPU at hand offers VK_QCOM_cooperative_matrix_conversion: these run on the CPU interpreter
# (device="cpu"); on a device without the extension a launch stops with a DeviceFeatureError naming it.
def _compared(example: str, kernel: str, size: tuple, out: np.ndarray, ref: np.ndarray, tol: float) -> Result:
    abs_err, rel_err = _rel(out, ref)
    return Result(example, kernel, size, abs_err, rel_err, f"abs <= {tol:.3g}", abs_err <= tol)


def qcom_conv_im2col(size, rng, device="cpu") -> Result:
    """(H, W, C, F, filter size, stride, dilation)."""
    h, w, c, f, filt, stride, dilation = size
    out, ref = load_example("qcom_conv_im2col.py")["run"]((h, w, c, f), stride, dilation, filt, rng, device)
    return _compared("qcom_conv_im2col.py", "conv2d_nhwc", size, out, ref, 1e-5 * np.sqrt(c * filt * filt))


def qcom_ntc_mlp(size, rng, device="cpu") -> Result:
    """(texels,)."""
    out, ref = load_example("qcom_ntc_mlp.py")["run"](size[0], rng, device)
    return _compared("qcom_ntc_mlp.py", "ntc_decode", size, out, ref, 4e-3)  # two f16 roundings of values < 4


def qcom_flash_attention(size, rng, device="cpu") -> Result:
    """(queries, keys)."""
    out, ref = load_example("qcom_flash_attention.py")["run"](size[0], size[1], rng, device)
    return _compared("qcom_flash_attention.py", "attention", size, out, ref, 1e-5)


def qcom_dequant_q4(size, rng, device="cpu") -> Result:
    """(M, N, K)."""
    out, ref = load_example("qcom_dequant_q4.py")["run"](size, rng, device)
    return _compared("qcom_dequant_q4.py", "matmul_q4_0", size, out, ref, 1e-5 * np.sqrt(size[2]))


QCOM_CASES: dict[str, tuple[Callable, list[tuple]]] = {
    "qcom_conv_im2col": (qcom_conv_im2col, [(16, 16, 16, 32, 3, 1, 1), (16, 16, 8, 64, 3, 2, 2),
                                            (8, 12, 16, 32, 5, 1, 1)]),
    "qcom_ntc_mlp": (qcom_ntc_mlp, [(32,), (128,)]),
    "qcom_flash_attention": (qcom_flash_attention, [(32, 32), (64, 96), (96, 256)]),
    "qcom_dequant_q4": (qcom_dequant_q4, [(32, 32, 32), (64, 96, 128)]),
}
