"""What ggml's Vulkan host does around ``flash_attn_cm2.comp``, in numpy: for testing :mod:`ggml_flash_attn`.

:func:`flash_attn_dispatch` follows ``ggml_vk_flash_attn`` (ggml-vulkan.cpp at
ggml commit d99724f2) for F32 Q, F16 K/V, an optional F16 mask and F32
sinks on a device with ``VK_NV_cooperative_matrix2``: the GQA decision, the
tuning parameters of ``get_fa_tuning_params_coopmat2`` (Br, Bc, workgroup
size; each may be overridden, so that tests can run the smallest tiles a
device allows), aligned vs unaligned, the mask_opt decision, split_k (from
the shader core count), the push constants (``vk_flash_attn_push_constants``,
packed to its 128 bytes by :func:`pack_push`), the specialization constants
(``get_fa_spec_constants``) and the grid (``ggml_vk_dispatch_pipeline``
divides x by ``wg_denoms[0] = Br``).

Tensors are described as ggml does: ``ne`` (innermost first) and ``nb``
(byte strides, innermost first). :func:`contiguous_nb` gives the strides of
a packed tensor.

Also here, as numpy models: :func:`mask_opt` (``flash_attn_mask_opt.comp``,
the two bits per Br x Bc mask block that the kernel reads from binding 6),
:func:`split_k_reduce` (``flash_attn_split_k_reduce.comp``, which combines the
split_k scratch into dst) and :func:`flash_attn_ext_reference` (ggml's
FLASH_ATTN_EXT: softmax(scale Q K^T [softcap] + slope mask [+ sink]) V, per
head, with K/V heads broadcast over Q heads, in float64).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

# the push-constant members in order (vk_flash_attn_push_constants); the floats are scale, max_bias,
# logit_softcap, m0 and m1, everything else is uint32_t
PUSH_MEMBERS = (
    "N", "KV", "ne1", "ne2", "ne3", "neq2", "neq3", "nek2", "nek3", "nev2", "nev3", "nem1", "nem2", "nem3",
    "nb01", "nb02", "nb03", "nb11", "nb12", "nb13", "nb21", "nb22", "nb23",
    "scale", "max_bias", "logit_softcap", "mask_n_head_log2", "m0", "m1", "gqa_ratio", "split_kv", "k_num",
)
FLOAT_MEMBERS = frozenset({"scale", "max_bias", "logit_softcap", "m0", "m1"})
PUSH_SIZE = 4 * len(PUSH_MEMBERS)  # 128 bytes

# the specialization constants by id (flash_attn_base.glsl)
SPEC_NAMES = (
    "WorkGroupSize", "Br", "Bc", "HSK", "HSV", "Clamp", "D_split", "row_split", "SubGroupSize",
    "SHMEM_STAGING", "Flags", "LIMIT_OCCUPANCY_SHMEM", "FaTypeK", "FaTypeV", "FaBlockBytesK", "FaBlockBytesV",
)
GGML_TYPE_F16 = 1
MASK_OPT_ALL_NEG_INF = 1
MASK_OPT_ALL_ZERO = 2
FLT_MAX_OVER_2 = struct.unpack("<f", struct.pack("<I", 0x7EFFFFFF))[0]


@dataclass(frozen=True)
class FaDevice:
    """The device facts ``ggml_vk_flash_attn`` reads (defaults: an NVIDIA H100, 132 SMs)."""

    subgroup_size: int = 32
    shader_core_count: int = 132  # 0: ggml uses 16
    fp16: bool = True
    amd_gcn: bool = False


@dataclass
class FaDispatch:
    """One FLASH_ATTN_EXT launch as ggml makes it."""

    pipeline: str                  # e.g. "flash_attn_f32_f16_aligned_f16acc_cm2"
    f16acc: bool
    aligned: bool
    push: dict[str, Any]           # member -> value (ints, and floats for FLOAT_MEMBERS)
    spec: dict[str, int]           # spec constant name -> value, ids 0..15 in SPEC_NAMES order
    grid: tuple[int, int, int]
    Br: int
    Bc: int
    gqa_ratio: int
    split_k: int
    split_kv: int
    use_mask_opt: bool
    # the mask_opt buffer's push constants for flash_attn_mask_opt.comp (dwords per row, rows, nem2, nem3)
    mask_opt_dims: tuple[int, int, int, int] = (0, 0, 0, 0)
    split_k_floats: int = 0        # floats of the split_k scratch buffer (0 without split_k)
    notes: list[str] = field(default_factory=list)

    def push_bytes(self) -> np.ndarray:
        return pack_push(self.push)


def contiguous_nb(ne: tuple[int, ...], itemsize: int) -> tuple[int, int, int, int]:
    """ggml's byte strides of a packed tensor with dimensions ``ne`` (innermost first)."""
    nb = [itemsize]
    for n in ne[:3]:
        nb.append(nb[-1] * n)
    return nb[0], nb[1], nb[2], nb[3]


def pack_push(push: dict[str, Any]) -> np.ndarray:
    """The 128 bytes of ``vk_flash_attn_push_constants`` (little endian)."""
    out = bytearray()
    for name in PUSH_MEMBERS:
        value = push[name]
        if name in FLOAT_MEMBERS:
            out += struct.pack("<f", float(value))
        else:
            out += struct.pack("<I", int(value) & 0xFFFFFFFF)
    return cast(np.ndarray, np.frombuffer(bytes(out), np.uint8).copy())


def _ceil_div(a: int, b: int) -> int:
    return a // b + (a % b != 0)


def _roundup_pow2(m: int, n: int) -> int:
    return (m + n - 1) & ~(n - 1)


def coopmat2_tuning(hsk: int, hsv: int, n_rows: int, subgroup_size: int = 32) -> tuple[int, int, int]:
    """``get_fa_tuning_params_coopmat2`` for F16 K/V: (block_rows Br, block_cols Bc, workgroup size)."""
    d = hsk | hsv
    small_rows = n_rows < 32
    if small_rows:
        br, bc = 32, 32
    elif hsk >= 256 or hsv >= 256:
        br, bc = (32 if hsk >= 512 or hsv >= 512 else 64), 32
    else:
        br, bc = 64, 64
    wg = 256 if small_rows and d % 32 == 0 else 128
    return br, bc, wg


def flash_attn_dispatch(q_ne: tuple[int, int, int, int], k_ne: tuple[int, int, int, int],
                        v_ne: tuple[int, int, int, int], mask_ne: tuple[int, int, int, int] | None = None,
                        sinks: bool = False, scale: float = 1.0, max_bias: float = 0.0,
                        logit_softcap: float = 0.0, prec_f32: bool = False, *,
                        q_nb: tuple[int, ...] | None = None, k_nb: tuple[int, ...] | None = None,
                        v_nb: tuple[int, ...] | None = None, device: FaDevice = FaDevice(),
                        Br: int | None = None, Bc: int | None = None,
                        workgroup_size: int | None = None, q_f16: bool = False,
                        narrow_mask_opt: bool = False) -> FaDispatch:
    """What ``ggml_vk_flash_attn`` passes to the cm2 pipeline for these tensors.

    ``q_ne``/``k_ne``/``v_ne``/``mask_ne`` are ggml ``ne`` (innermost first: head size, rows, heads,
    batch); Q is F32, K, V and the mask F16, dst F32 ``[HSV, neq2, neq1, neq3]``. Byte strides default
    to packed tensors. ``Br``, ``Bc``, ``workgroup_size`` replace what the tuning function picks
    (the same override for the GQA limit, which ggml takes from the tuning at 512 rows).  ``q_f16``: Q is F16
    (a coopdsl extension of the kernel, ``flash_attn_cm2``'s ``Q_F16``; ggml's Q is always F32).
    ``narrow_mask_opt``: the mask_opt pass also for a mask narrower than 16 blocks of keys (ggml's rule wants
    ``nem0 >= 16 Bc``; ``ops.attention`` asks for it: without it every block of keys loads the mask)."""
    q_size = 2 if q_f16 else 4
    q_nb = tuple(q_nb) if q_nb is not None else contiguous_nb(q_ne, q_size)
    k_nb = tuple(k_nb) if k_nb is not None else contiguous_nb(k_ne, 2)
    v_nb = tuple(v_nb) if v_nb is not None else contiguous_nb(v_ne, 2)
    neq0, neq1, neq2, neq3 = q_ne
    nek0, nek1, nek2, nek3 = k_ne
    nev0, nev1, nev2, nev3 = v_ne
    ne1, ne2, ne3 = neq2, neq1, neq3  # dst is [HSV, neq2, neq1, neq3]
    nem0, nem1, nem2, nem3 = mask_ne if mask_ne is not None else (0, 0, 0, 0)
    HSK, HSV, KV = nek0, nev0, nek1
    N = neq1
    assert neq0 == HSK and nev1 == nek1 and q_nb[0] == q_size and k_nb[0] == 2 and v_nb[0] == 2

    def tuning(n_rows: int) -> tuple[int, int, int]:
        br, bc, wg = coopmat2_tuning(HSK, HSV, n_rows, device.subgroup_size)
        return (Br if Br is not None else br, Bc if Bc is not None else bc,
                workgroup_size if workgroup_size is not None else wg)

    gqa_ratio = 1
    qk_ratio = neq2 // nek2
    workgroups_x, workgroups_y, workgroups_z = neq1, neq2, neq3
    f32acc = (not device.fp16) or prec_f32
    max_gqa = min(tuning(512)[0], 32)
    if N <= 8 and 1 < qk_ratio <= max_gqa and qk_ratio * nek2 == neq2 and nek2 == nev2 and nem2 <= 1:
        gqa_ratio = qk_ratio  # the rows of a tile are the heads of one group
        N = gqa_ratio
        workgroups_y //= gqa_ratio
    br, bc, wg = tuning(N)

    q_stride = q_nb[1] // q_size
    k_stride = k_nb[1] // 2
    v_stride = v_nb[1] // 2
    aligned = KV % bc == 0 and q_stride % 8 == 0 and k_stride % 8 == 0 and v_stride % 8 == 0
    if (HSK | HSV) % 16 != 0:
        aligned = False

    if logit_softcap != 0:
        scale = float(np.float32(scale) / np.float32(logit_softcap))

    use_mask_opt = (mask_ne is not None and nem1 >= 32 and nem0 * nem1 > 32768 and (nem0 >= bc * 16 or narrow_mask_opt)
                    and (not device.amd_gcn or HSK > 256 or HSV > 256))
    flags = (1 if use_mask_opt else 0) | (2 if mask_ne is not None else 0) | (4 if logit_softcap != 0 else 0)

    split_kv, split_k = KV, 1
    cores = device.shader_core_count if device.shader_core_count else 16
    tr = _ceil_div(N, br)
    if gqa_ratio > 1 and workgroups_x <= br:
        split_k = cores * 2 // (workgroups_x * workgroups_y * workgroups_z)
    elif gqa_ratio <= 1:
        total = tr * workgroups_y * workgroups_z
        if total < cores * 2:
            split_k = cores * 2 // total
    if split_k > 1:
        split_kv = _roundup_pow2(max(1, KV // split_k), bc)
        split_k = _ceil_div(KV, split_kv)
    split_k_floats = (HSV * ne1 + ne1 * 2) * split_k * ne2 * ne3 if split_k > 1 else 0

    n_head_log2 = 1 << int(math.floor(math.log2(float(neq2))))
    f = np.float32
    m0 = float(np.power(f(2.0), -f(max_bias) / f(n_head_log2), dtype=np.float32))
    m1 = float(np.power(f(2.0), -(f(max_bias) / f(2.0)) / f(n_head_log2), dtype=np.float32))
    mask_n_head_log2 = (int(sinks) << 24) | n_head_log2

    push = dict(zip(PUSH_MEMBERS, (
        N, KV, ne1, ne2, ne3, neq2, neq3, nek2, nek3, nev2, nev3, nem1, nem2, nem3,
        q_stride, q_nb[2], q_nb[3], k_stride, k_nb[2], k_nb[3], v_stride, v_nb[2], v_nb[3],
        scale, max_bias, logit_softcap, mask_n_head_log2, m0, m1, gqa_ratio, split_kv, split_k)))

    # get_fa_spec_constants; the cm2 tuning leaves d_split, row_split, shmem_staging and
    # limit_occupancy_shmem value-initialised (0)
    spec = dict(zip(SPEC_NAMES, (
        wg, br, bc, HSK, HSV, int(not aligned), 0, 0, device.subgroup_size, 0, flags, 0,
        GGML_TYPE_F16, GGML_TYPE_F16, 2, 2)))

    if split_k > 1:
        if gqa_ratio > 1:
            dispatch_x = split_k * workgroups_x * br
        else:
            dispatch_x = tr * split_k * br
    else:
        dispatch_x = workgroups_x * br if gqa_ratio > 1 else workgroups_x
    grid = (_ceil_div(dispatch_x, br), workgroups_y, workgroups_z)

    acc = "f32acc" if f32acc else "f16acc"
    name = f"flash_attn_f32_f16_{'aligned_' if aligned else ''}{acc}_cm2"
    nd = _ceil_div(nem0, 16 * bc)
    return FaDispatch(pipeline=name, f16acc=not f32acc, aligned=aligned, push=push, spec=spec, grid=grid,
                      Br=br, Bc=bc, gqa_ratio=gqa_ratio, split_k=split_k, split_kv=split_kv,
                      use_mask_opt=use_mask_opt,
                      mask_opt_dims=(nd, _ceil_div(nem1, br), nem2, nem3) if mask_ne is not None else (0, 0, 0, 0),
                      split_k_floats=split_k_floats)


def mask_opt(mask: np.ndarray, Br: int, Bc: int) -> np.ndarray:
    """``flash_attn_mask_opt.comp``: per Br x Bc block of the mask (shape (nem3, nem2, nem1, nem0),
    packed f16), 1 when every value in bounds is <= -FLT_MAX/2 (or none is), 2 when all are 0; 16
    blocks per u32, laid out [nem3][nem2][ceil(nem1 / Br)][ceil(nem0 / (16 Bc))] as the kernel reads."""
    nem3, nem2, nem1, nem0 = mask.shape
    nd = _ceil_div(nem0, 16 * Bc)
    rows = _ceil_div(nem1, Br)
    out = np.zeros((nem3, nem2, rows, nd), np.uint32)
    m = mask.astype(np.float32)
    for i3 in range(nem3):
        for i2 in range(nem2):
            for i1 in range(rows):
                for i0 in range(nd):
                    result = 0
                    for bx in range(16):
                        c0 = (i0 * 16 + bx) * Bc
                        block = m[i3, i2, i1 * Br:(i1 + 1) * Br, c0:c0 + Bc]
                        lo = float(block.min()) if block.size else FLT_MAX_OVER_2
                        hi = float(block.max()) if block.size else -FLT_MAX_OVER_2
                        if hi <= -FLT_MAX_OVER_2:
                            result |= MASK_OPT_ALL_NEG_INF << (2 * bx)
                        if lo == 0.0 and hi == 0.0:
                            result |= MASK_OPT_ALL_ZERO << (2 * bx)
                    out[i3, i2, i1, i0] = result
    return out.reshape(-1)


def split_k_reduce(scratch: np.ndarray, HSV: int, ne1: int, ne2: int, ne3: int, k_num: int,
                   sinks: np.ndarray | None = None) -> np.ndarray:
    """``flash_attn_split_k_reduce.comp``: dst (ne3, ne2, ne1, HSV) from the split_k scratch."""
    o_part = scratch[:HSV * ne1 * k_num * ne2 * ne3].reshape(ne3, ne2, k_num, ne1, HSV).astype(np.float64)
    lm = scratch[HSV * ne1 * k_num * ne2 * ne3:][:2 * ne1 * k_num * ne2 * ne3]
    lm = lm.reshape(ne3, ne2, k_num, 2, ne1).astype(np.float64)
    ls, ms = lm[:, :, :, 0, :], lm[:, :, :, 1, :]  # (ne3, ne2, k, ne1)
    m_max = ms.max(axis=2, keepdims=True)
    w = np.exp(ms - m_max)
    big_l = (w * ls).sum(axis=2)
    o = (w[..., None] * o_part).sum(axis=2)  # (ne3, ne2, ne1, HSV)
    m_max = m_max[:, :, 0, :]
    if sinks is not None:
        sk = sinks.astype(np.float64)[None, None, :]
        above = sk > m_max
        ms_ = np.where(above, np.exp(m_max - sk), 1.0)
        vs_ = np.where(above, 1.0, np.exp(sk - m_max))
        big_l = big_l * ms_ + vs_
        o = o * ms_[..., None]
    inv = np.where(big_l == 0.0, 0.0, 1.0 / np.where(big_l == 0.0, 1.0, big_l))
    return cast(np.ndarray, (o * inv[..., None]).astype(np.float32))


def alibi_slopes(n_head: int, max_bias: float) -> np.ndarray:
    """ggml's ALiBi slope per head (1 for every head when max_bias is 0)."""
    if max_bias <= 0.0:
        return np.ones(n_head)
    n_head_log2 = 1 << int(math.floor(math.log2(n_head)))
    m0 = 2.0 ** (-max_bias / n_head_log2)
    m1 = 2.0 ** (-(max_bias / 2.0) / n_head_log2)
    h = np.arange(n_head)
    return cast(np.ndarray, np.where(h < n_head_log2, m0 ** (h + 1), m1 ** (2 * (h - n_head_log2) + 1)))


def attention_scores(q: np.ndarray, k: np.ndarray, mask: np.ndarray | None, scale: float,
                     max_bias: float = 0.0, logit_softcap: float = 0.0) -> np.ndarray:
    """The logits of FLASH_ATTN_EXT, float64, shape (B, H, N, KV): scale Q K^T, softcap, + slope mask.
    q: (B, H, N, HSK); k: (Bk, Hk, KV, HSK) broadcast over heads and batches; mask: (nem3, nem2, nem1,
    KV) with nem1 >= N, broadcast over heads (h % nem2) and batches (b % nem3)."""
    b, h = q.shape[:2]
    kk = k.astype(np.float64)
    kk = np.repeat(np.repeat(kk, b // k.shape[0], axis=0), h // k.shape[1], axis=1)
    s = np.einsum("bhnd,bhkd->bhnk", q.astype(np.float64), kk) * scale
    if logit_softcap != 0.0:
        s = logit_softcap * np.tanh(s / logit_softcap)
    if mask is not None:
        n = q.shape[2]
        mm = mask.astype(np.float64)[:, :, :n, :]
        mm = mm[np.arange(b) % mask.shape[0]][:, np.arange(h) % mask.shape[1]]
        s = s + alibi_slopes(h, max_bias)[None, :, None, None] * mm
    return cast(np.ndarray, s)


def flash_attn_ext_reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None = None,
                             sinks: np.ndarray | None = None, scale: float = 1.0, max_bias: float = 0.0,
                             logit_softcap: float = 0.0) -> np.ndarray:
    """ggml's FLASH_ATTN_EXT in float64: dst of shape (B, N, H, HSV) (ggml ``[HSV, H, N, B]``).

    Rows whose logits are all -inf (and no sink) give 0, as ggml's kernels do."""
    s = attention_scores(q, k, mask, scale, max_bias, logit_softcap)
    b, h = q.shape[:2]
    vv = v.astype(np.float64)
    vv = np.repeat(np.repeat(vv, b // v.shape[0], axis=0), h // v.shape[1], axis=1)
    mx = s.max(axis=-1, keepdims=True)
    if sinks is not None:
        mx = np.maximum(mx, sinks.astype(np.float64)[None, :, None, None])
    mx = np.where(np.isfinite(mx), mx, 0.0)
    e = np.exp(s - mx)
    total = e.sum(axis=-1, keepdims=True)
    if sinks is not None:
        total = total + np.exp(sinks.astype(np.float64)[None, :, None, None] - mx)
    o = np.einsum("bhnk,bhkd->bhnd", e, vv) / np.where(total == 0.0, 1.0, total)
    return cast(np.ndarray, o.transpose(0, 2, 1, 3))
