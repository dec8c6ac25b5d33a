"""ggml's cooperative-matrix-2 matrix multiplication (``mul_mm_cm2``), written in coopdsl.

The kernels have exactly the interface of the pipelines ggml's Vulkan back end
creates from its GLSL ``mul_mm_cm2.comp`` (non-``MUL_MAT_ID`` variants), so
ggml can load their SPIR-V in place of its own (``benchmarks/ggml/``):

* bindings (set 0): 0 = A (``data_a``: f16, bf16 or blocks of a quantized
  format), 1 = B (f16; bf16 for the bf16 kernel), 2 = D (f32);
* push constants, 17 ``u32`` in this order (ggml's ``vk_mat_mat_push_constants``):
  ``M N K stride_a stride_b stride_d batch_stride_a batch_stride_b
  batch_stride_d base_work_group_z num_batches k_split ne02 ne12 broadcast2
  broadcast3 padded_N`` (strides in elements);
* specialization constants: 0 ``BLOCK_SIZE`` (the workgroup size), 1 ``BM``,
  2 ``BN``, 3 ``BK``, 4 ``enable_smaller_matrices`` (0/1), 5 ``ALIGNED`` (0/1);
* dispatch: ``(ceil(M / BM) * split_k, ceil(N / BN), batches)`` workgroups.

In ggml's terms the product is ``D[n][m] = sum_k A[m][k] * B[n][k]``: A is M x K
(row ``m`` at ``m * stride_a``), B is N x K (row ``n`` at ``n * stride_b``), and
D is stored N x M (row ``n`` at ``n * stride_d``), one matrix per batch (the
``ne02``/``ne12``/``broadcast`` push constants map a batch of B and D to the
batch of A it multiplies).  With ``k_split < K`` workgroup ``x`` also selects a
slice of K and writes a partial product ``batch_stride_d * num_batches`` further
on, for ggml's split-k reduction.

Each workgroup computes a BM x BN tile of ``D^T`` with workgroup-scope
matrices; A is read through a tensor layout (with block size ``(1, QK)`` and
a decode function of :mod:`coopdsl.ops.ggml_formats` for quantized formats),
B through a transposing view, D stored through a transposing view.  As in
the GLSL, tiles that lie wholly inside the matrices with K aligned take an
unclamped, 8x-unrolled fast path, and with ``enable_smaller_matrices`` a
narrow last column of tiles uses BN / 2 or BN / 4 wide matrices.

:func:`kernel` builds the kernel for an A format and accumulator type;
:data:`PIPELINES` lists ggml's pipeline names each one serves.
"""


from functools import cache
from typing import Any, cast, no_type_check

import numpy as np

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, bf16, f16, f32, u32, vec2

from .ggml_formats import FORMATS, FORMATS_BYTES, decode_q4_K_shared, fetch_scales_q4_K, store_scales_q4_K

W = cd.Workgroup
ALIGN8 = 0xFFFFFFF8          # ~7: a multiple of 8 (GLSL's "stride &= ~7" alignment hint)
START_ALIGN_K = 256
F16_MAX = 65504.0

# A format -> ggml's pipeline-name stem (ggml names quantized cm2 matmuls "<stem>_f16": B is f16)
STEMS = {"f16": "matmul_f16", "bf16": "matmul_bf16", "q4_0": "matmul_q4_0_f16",
         "q8_0": "matmul_q8_0_f16", "q4_K": "matmul_q4_k_f16"}


def pipeline_names(fmt: str, f16acc: bool) -> list[str]:
    """ggml's names of the six pipelines ({l, m, s} x {unaligned, aligned}) one module serves."""
    stem = STEMS[fmt] + ("_f16acc" if f16acc else "")
    return [f"{stem}{a}_{size}" for a in ("", "_aligned") for size in ("l", "m", "s")]


# (A format, f16 accumulator) -> the pipeline names; bf16 has only an f32 accumulator, as in ggml
PIPELINES: dict[tuple[str, bool], list[str]] = {
    (fmt, acc): pipeline_names(fmt, acc)
    for fmt in STEMS for acc in (False, True) if not (fmt == "bf16" and acc)
}


@cd.func
@no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
def clamp_f16(r, c, x):
    """GLSL's ACC_TYPE_MAX clamp of an f16 accumulator before it is widened."""
    return cd.clamp(x, f16(-F16_MAX), f16(F16_MAX))


@cd.func
@no_type_check
def k_loop(TA, TB, TS, TD, QK, dec, data_a, data_b, data_d, la, la_edge, lb, ld, pos_a, pos_b, pos_d,
           row0, rows, rows_in, col0, cols, block_k, end_k, BK, unrolled, f16acc, stage, scales, M, sa, BLOCK_SIZE):
    """One tile: D^T[row0 .., col0 ..] = A[row0 .., k] B[col0 .., k]^T over k in [block_k, end_k).

    ``unrolled``: the fast path (every load inside the matrices, K a multiple of BK): steps of
    8 (32-element blocks) or 256 // BK (256-element blocks) loads, unrolled, then the rest.
    Otherwise A is read through ``la`` while the step lies inside A (``rows_in`` and the step
    inside K) and through the clamped ``la_edge`` elsewhere, as the GLSL does.
    ``stage`` (q4_K): each 256-wide block column's scales are staged in ``scales`` for the decode
    function (fetched one block column ahead), as ggml's fetch_scales / store_scales do."""
    transposed = cd.tensor_view(2, perm=(1, 0))
    s = TS(0.0)
    if stage:
        head = fetch_scales_q4_K(data_a, row0, pos_a, sa, block_k, M, unrolled, BLOCK_SIZE, rows)
    if unrolled:
        if QK == 256:
            step = u32(256)
        else:
            step = BK * 8
        k_iters = (end_k - block_k) // step
        for _i in range(k_iters):
            if QK == 256:
                if stage:
                    store_scales_q4_K(scales, head, BLOCK_SIZE, rows)
                    if block_k + 256 < end_k:
                        head = fetch_scales_q4_K(data_a, row0, pos_a, sa, block_k + 256, M, True, BLOCK_SIZE, rows)
                for _j in cd.range(0, 256 // BK, 1, unroll=True):
                    a = TA.load_tensor(data_a, pos_a, la.slice(row0, rows, block_k, BK), decode=dec)
                    b = TB.load_tensor(data_b, pos_b, lb.slice(col0, cols, block_k, BK), view=transposed)
                    s = cd.muladd(a, b, s)
                    block_k += BK
            else:
                for _j in cd.range(0, 8, 1, unroll=True):   # as GLSL's [[unroll]]: the driver unrolls
                    a = TA.load_tensor(data_a, pos_a, la.slice(row0, rows, block_k, BK), decode=dec)
                    b = TB.load_tensor(data_b, pos_b, lb.slice(col0, cols, block_k, BK), view=transposed)
                    s = cd.muladd(a, b, s)
                    block_k += BK
    while block_k < end_k:
        if stage:
            if block_k % 256 == 0:
                store_scales_q4_K(scales, head, BLOCK_SIZE, rows)
            if block_k + BK < end_k and (block_k + BK) % 256 == 0:
                head = fetch_scales_q4_K(data_a, row0, pos_a, sa, block_k + BK, M, unrolled, BLOCK_SIZE, rows)
        b = TB.load_tensor(data_b, pos_b, lb.slice(col0, cols, block_k, BK), view=transposed)
        if unrolled or (rows_in and block_k + BK <= end_k):
            s = cd.muladd(TA.load_tensor(data_a, pos_a, la.slice(row0, rows, block_k, BK), decode=dec), b, s)
        else:
            s = cd.muladd(TA.load_tensor(data_a, pos_a, la_edge.slice(row0, rows, block_k, BK), decode=dec), b, s)
        block_k += BK
    if f16acc:
        s = s.map(clamp_f16)
    TD(s).store_tensor(data_d, pos_d, ld.slice(col0, cols, row0, rows), view=transposed)


@cache
def kernel(fmt: str, f16acc: bool = False, paths: str = "all", staged: bool = True) -> cd.Kernel:
    """The ``mul_mm_cm2`` kernel for A in ``fmt`` (``f16``, ``bf16``, ``q4_0``, ``q8_0`` or ``q4_K``)
    with an f16 (``f16acc``) or f32 accumulator; B is f16 (bf16 for ``fmt="bf16"``), D f32.

    ``paths`` ("all", the default; "nosmall": no BN/2 and BN/4 tiles; "generic": no fast path)
    leaves code paths out, for measuring what each costs the driver's compiler.  ``staged``
    (q4_K): decode with the scales staged in shared memory per tile, as ggml does (False: every
    element unpacks its scale from the block head)."""
    if fmt not in STEMS:
        raise ValueError(f"mul_mm_cm2: unknown A format {fmt!r}; expected one of {', '.join(STEMS)}")
    if paths not in ("all", "nosmall", "generic"):
        raise ValueError(f"mul_mm_cm2: paths must be 'all', 'nosmall' or 'generic', got {paths!r}")
    if fmt == "bf16" and f16acc:
        raise ValueError("mul_mm_cm2: the bf16 kernel accumulates in f32 only (as ggml's)")
    if fmt in FORMATS:
        a_type, QK, decode = FORMATS[fmt]
        mat_t = f16
    else:
        mat_t = bf16 if fmt == "bf16" else f16
        a_type, QK, decode = mat_t, 1, None
    b_type = mat_t
    use_fast, use_small = paths != "generic", paths == "all"
    stage = fmt == "q4_K" and staged
    acc_t = f16 if f16acc else f32

    @no_type_check
    def mul_mm_cm2(data_a: cd.Buffer[a_type], data_b: cd.Buffer[b_type], data_d: cd.Buffer[f32],
                   M: u32, N: u32, K: u32, stride_a: u32, stride_b: u32, stride_d: u32,
                   batch_stride_a: u32, batch_stride_b: u32, batch_stride_d: u32,
                   base_work_group_z: u32, num_batches: u32, k_split: u32,
                   ne02: u32, ne12: u32, broadcast2: u32, broadcast3: u32, padded_N: u32,
                   BLOCK_SIZE: cd.Spec[u32, 0] = 256, BM: cd.Spec[u32, 1] = 64, BN: cd.Spec[u32, 2] = 64,
                   BK: cd.Spec[u32, 3] = 32, SMALL: cd.Spec[u32, 4] = 0, ALIGNED: cd.Spec[u32, 5] = 0):
        ic = cd.workgroup_id.y
        batch_idx = cd.workgroup_id.z + base_work_group_z
        i13 = batch_idx // ne12
        i12 = batch_idx % ne12
        batch_idx_a = (i13 // broadcast3) * ne02 + i12 // broadcast2
        blocks_m = (M + BM - 1) // BM
        ir = cd.workgroup_id.x % blocks_m
        ik = cd.workgroup_id.x // blocks_m
        start_k = ik * k_split
        end_k = min(K, (ik + 1) * k_split)
        pos_a = batch_idx_a * (batch_stride_a // QK)
        pos_b = batch_idx * batch_stride_b
        pos_d = batch_idx * batch_stride_d + ik * batch_stride_d * num_batches
        sa = stride_a // QK
        sb = stride_b
        if ALIGNED != 0:
            if QK == 1:
                sa = sa & ALIGN8
            sb = sb & ALIGN8
        row0 = ir * BM
        col0 = ic * BN
        scales = 0
        dec = decode
        if stage:
            scales = cd.shared(vec2[f32], 8 * (BM + 2))
            dec = cd.partial(decode_q4_K_shared, scales=scales, bm=BM)
        la = cd.tensor_layout(2)
        la_clamp = cd.tensor_layout(2, clamp=cd.ClampConstant)
        if QK > 1:
            la = la.block_size(1, QK)
            la_clamp = la_clamp.block_size(1, QK)
        la = la.dimension(M, end_k)
        la_clamp = la_clamp.dimension(M, end_k)
        lb = cd.tensor_layout(2).dimension(padded_N, end_k)
        lb_clamp = cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(padded_N, end_k)
        ld = cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(N, M).stride(stride_d, 1)

        fast = row0 + BM <= M and col0 + BN <= padded_N and start_k % START_ALIGN_K == 0 and end_k % BK == 0
        if QK == 1:
            fast = fast and sa % 8 == 0
        if use_fast and fast and sb % 8 == 0:
            # every load inside the matrices: unclamped layouts, aligned strides, unrolled steps
            start_k = start_k & (0xFFFFFFFF - (START_ALIGN_K - 1))
            if QK == 1:
                sa = sa & ALIGN8
            la = la.stride(sa, 1)
            lb = lb.stride(sb & ALIGN8, 1)
            for t in cd.static_range(2):   # a narrow last column of tiles: BN / 4 wide, else BN / 2
                div = 4 >> t
                if use_small and SMALL != 0 and col0 + BN // div >= N:
                    k_loop(MatA[mat_t, BM, BK, W], MatB[mat_t, BK, BN // div, W], Acc[acc_t, BM, BN // div, W],
                           Acc[f32, BM, BN // div, W], QK, dec, data_a, data_b, data_d, la, la, lb, ld,
                           pos_a, pos_b, pos_d, row0, BM, True, col0, BN // div, start_k, end_k, BK, True, f16acc,
                           stage, scales, M, sa, BLOCK_SIZE)
                    return
            k_loop(MatA[mat_t, BM, BK, W], MatB[mat_t, BK, BN, W], Acc[acc_t, BM, BN, W],
                   Acc[f32, BM, BN, W], QK, dec, data_a, data_b, data_d, la, la, lb, ld,
                   pos_a, pos_b, pos_d, row0, BM, True, col0, BN, start_k, end_k, BK, True, f16acc,
                       stage, scales, M, sa, BLOCK_SIZE)
            return
        # edges: A clamped where the tile leaves it, B always clamped
        la = la.stride(sa, 1)
        la_clamp = la_clamp.stride(sa, 1)
        lb_clamp = lb_clamp.stride(sb, 1)
        k_loop(MatA[mat_t, BM, BK, W], MatB[mat_t, BK, BN, W], Acc[acc_t, BM, BN, W],
               Acc[f32, BM, BN, W], QK, dec, data_a, data_b, data_d, la, la_clamp, lb_clamp, ld,
               pos_a, pos_b, pos_d, row0, BM, row0 + BM <= M, col0, BN, start_k, end_k, BK, False, f16acc,
               stage, scales, M, sa, BLOCK_SIZE)

    # named as ggml's module (matmul_q4_0_f16_f16acc_cm2), entered as "main" like ggml's pipelines
    mul_mm_cm2.__name__ = mul_mm_cm2.__qualname__ = STEMS[fmt] + ("_f16acc" if f16acc else "") + "_cm2"
    return cd.kernel(mul_mm_cm2, workgroup_size=("BLOCK_SIZE", 1, 1), entry_point="main")


# ggml's tile configurations for cm2 (``ggml_vk_load_shaders``): spec constants 0..4
# (BLOCK_SIZE, BM, BN, BK, enable_smaller_matrices) for float A and for quantized A
TILES = {
    "float": {"l": (256, 128, 256, 64, 1), "m": (256, 128, 128, 64, 0), "s": (128, 64, 64, 64, 0)},
    "quant": {"l": (256, 128, 256, 64, 1), "m": (256, 128, 128, 64, 1), "s": (256, 32, 64, 128, 0)},
}
SPEC_NAMES = ("BLOCK_SIZE", "BM", "BN", "BK", "SMALL")


def dispatch(fmt: str, f16acc: bool, m: int, n: int, k: int, *, tile: str | tuple[int, ...] = "m",
             aligned: bool = False, rows_b: int | None = None, batches_a: int = 1, batches_b: int = 1,
             k_split: int | None = None) -> tuple[cd.Kernel, tuple[int, int, int], dict[str, int]]:
    """(kernel, grid, push and specialization values) of one launch as ggml's ``ggml_vk_matmul`` makes it:
    D (``batches_b`` x N x M) = B A^T for M x K weights in ``fmt``, B holding ``rows_b`` (>= N) rows a batch,
    ``k_split`` (a multiple of 256, default K) splitting K over workgroups. The one place the push constants,
    tile spec values and grid are computed (mul_mm, ops.linear and the benchmarks launch through it)."""
    qk = FORMATS[fmt][1] if fmt in FORMATS else 1
    bs, bm, bn, bk, small = TILES["quant" if qk > 1 else "float"][tile] if isinstance(tile, str) else tuple(tile)
    rows_b = n if rows_b is None else rows_b
    k_split = k if k_split is None else k_split
    parts = -(-k // k_split)
    # without enable_smaller_matrices the BN/2 and BN/4 tiles are dead code; leaving them out keeps
    # matrix shapes the device may not offer (32 x 16 at 256 invocations) out of the module
    kern = kernel(fmt, f16acc, "all" if small else "nosmall")
    grid = (-(-m // bm) * parts, -(-n // bn), batches_b)
    values = dict(M=m, N=n, K=k, stride_a=k, stride_b=k, stride_d=m, batch_stride_a=m * k,
                  batch_stride_b=rows_b * k, batch_stride_d=m * n, base_work_group_z=0, num_batches=batches_b,
                  k_split=k_split, ne02=batches_a, ne12=batches_b, broadcast2=batches_b // batches_a,
                  broadcast3=1, padded_N=rows_b, BLOCK_SIZE=bs, BM=bm, BN=bn, BK=bk, SMALL=small,
                  ALIGNED=int(aligned))
    return kern, grid, values


def guess_tile(fmt: str, m: int, n: int, cores: int) -> str:
    """The tile configuration (:data:`TILES` key) ggml's ``ggml_vk_guess_matmul_pipeline`` picks on a
    cooperative-matrix-2 device with ``cores`` SMs for D (N x M) = B A^T: the large tile (BN 256) only where
    N is wider than the medium tile and medium or large tiles would more than fill the GPU (or large tiles
    split three ways fit and medium ones do not fill half); the medium tile (BN 128) where N is wider than
    the small tile's 64; else the small tile."""
    t = TILES["quant" if fmt in FORMATS else "float"]
    tiles = {size: -(-m // t[size][1]) * -(-n // t[size][2]) for size in ("l", "m")}
    prefer_large = tiles["m"] > cores or tiles["l"] > cores or \
        (tiles["l"] <= cores // 3 and tiles["m"] > cores // 2)
    if n > t["m"][2] and prefer_large:
        return "l"
    return "m" if n > t["s"][2] else "s"


def guess_split_k(fmt: str, m: int, n: int, k: int, tile: str, cores: int) -> int:
    """How many slices of K ggml's ``ggml_vk_guess_split_k`` splits the product into: with K >= 2048 and
    tiles that fill at most half of the ``cores`` SMs, ``cores // tiles`` (at most 8); at most two thirds, 3;
    fewer where slices of K rounded up to 256 would leave the last one empty."""
    _, bm, bn, _, _ = TILES["quant" if fmt in FORMATS else "float"][tile]
    if m < bm or n < bn or k < 2048:
        return 1
    tiles = -(-m // bm) * -(-n // bn)
    split = cores // tiles if tiles <= cores // 2 else 3 if tiles <= cores * 2 // 3 else 1
    split = min(split, 8)
    while split > 1 and k_slice(k, split) * (split - 1) >= k:
        split -= 1
    return split


def k_slice(k: int, split_k: int) -> int:
    """The values of K one of ``split_k`` slices takes: ``ceil(K / split_k)`` rounded up to 256, as ggml's."""
    return k if split_k == 1 else (-(-k // split_k) + START_ALIGN_K - 1) // START_ALIGN_K * START_ALIGN_K


def flat_grid(n: int, size: int = 256) -> tuple[int, int, int]:
    """Workgroups of ``size`` invocations for ``n`` invocations numbered ``x + 65535 * size * y`` (Vulkan
    guarantees 65535 workgroups a dimension)."""
    groups = -(-n // size)
    return (min(groups, 65535), -(-groups // 65535), 1)


@cache
def reduce_kernel() -> cd.Kernel:
    """ggml's ``split_k_reduce``: ``d[i] = sum_s part[s * stride + i]`` for ``i < ne``, over ``k_num`` partial
    products ``stride`` values apart (ggml's: ``ne``; a multiple of 4, so that each partial product's tensor
    store starts 16-byte aligned, as SPV_NV_cooperative_matrix2 requires); 256 invocations a workgroup, one value
    an invocation, launched on :func:`flat_grid` ``(ne)``."""

    @cd.kernel(workgroup_size=(256, 1, 1))
    @no_type_check
    def mul_mat_split_k_reduce(part: cd.Buffer[f32], d: cd.Buffer[f32], ne: u32, k_num: u32, stride: u32):
        i = cd.global_invocation_id.x + cd.global_invocation_id.y * (65535 * 256)
        if i < ne:
            total = part[i]
            for s in cd.range(1, k_num):
                total += part[s * stride + i]
            d[i] = total

    return cast(cd.Kernel, mul_mat_split_k_reduce)


def mul_mm(a: Any, b: Any, fmt: str, *, f16acc: bool = False, tile: str | tuple[int, ...] = "m",
           split_k: int = 1, aligned: bool = False, n: int | None = None, device: Any = None) -> Any:
    """Run the kernel as ggml dispatches it: ``D[i] = B[i] A[i // r]^T`` (N x M, float32 each).

    ``a``: M x K weights in ``fmt`` (float16, bfloat16 bit patterns as uint16, or the uint8
    blocks of :func:`coopdsl.ops.quant.quantize`, one row of blocks per weight row), or a stack
    of ``ne02`` of them; ``b``: N x K activations (float16; uint16 bf16 bit patterns for
    ``fmt="bf16"``), or a stack of ``ne12`` of them, ``ne12`` a multiple of ``ne02`` (ggml's
    broadcast: batch ``i`` of B multiplies batch ``i // (ne12 // ne02)`` of A).  ``tile`` is
    ``"l"``, ``"m"``, ``"s"`` (ggml's configurations, :data:`TILES`) or the five spec values;
    ``split_k`` > 1 splits K over workgroups and sums their partial products on the host
    (ggml's reduction shader does it there); ``n`` (default: all of B's rows) is how many
    rows of B are real: the kernel may read all of B's rows (ggml's ``padded_N``) but writes
    only ``n`` rows of D.  ``device`` as ``Kernel.launch``.  Returns D (``n`` x M, float32)
    with ``b``'s leading shape."""
    qk = FORMATS[fmt][1] if fmt in FORMATS else 1
    a3 = np.ascontiguousarray(a)[None] if np.ndim(a) == 2 else np.ascontiguousarray(a)
    b3 = np.ascontiguousarray(b)[None] if np.ndim(b) == 2 else np.ascontiguousarray(b)
    ne02, m = a3.shape[0], a3.shape[1]
    ne12, rows_b, kk = b3.shape
    n = rows_b if n is None else n
    if not 0 < n <= rows_b:
        raise ValueError(f"mul_mm: n={n} but b holds {rows_b} rows a batch")
    if fmt in FORMATS:
        if a3.dtype != np.uint8 or a3.shape[2] * qk != kk * FORMATS_BYTES[fmt]:
            raise ValueError(f"mul_mm: a must be the uint8 {fmt} blocks of an M x {kk} matrix "
                             f"({kk // qk * FORMATS_BYTES[fmt]} bytes a row), got {a3.dtype} {a3.shape}")
    elif a3.shape[2] != kk:
        raise ValueError(f"mul_mm: a has {a3.shape[2]} columns but b has {kk}")
    if ne12 % ne02:
        raise ValueError(f"mul_mm: b's {ne12} batches are not a multiple of a's {ne02}")
    k_split = k_slice(kk, split_k)
    kern, grid, values = dispatch(fmt, f16acc, m, n, kk, tile=tile, aligned=aligned, rows_b=rows_b,
                                  batches_a=ne02, batches_b=ne12, k_split=k_split)
    d = np.zeros((-(-kk // k_split), ne12, n, m), np.float32)
    kern.launch(grid, a3, b3, d, **values, device=device)
    out = d.sum(axis=0)
    return out[0] if np.ndim(b) == 2 else out
