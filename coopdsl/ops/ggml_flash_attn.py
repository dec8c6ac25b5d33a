# mypy: disable-error-code="valid-type"
# (FaPush's members are annotated with coopdsl types, which mypy does not know as Python types)
"""ggml's Vulkan ``flash_attn_cm2.comp`` (FLASH_ATTN_EXT with SPV_NV_cooperative_matrix2) for F16 K and V.

A drop-in replacement, interface for interface, for the four pipelines ggml
(llama.cpp's tensor library, Vulkan back end, commit d99724f2) builds from
``flash_attn_cm2.comp`` with ``Q_TYPE = D_TYPE = float`` and
``FLOAT_TYPE = float16_t``:

=========================================== ============ ===============================
pipeline                                    ``F16ACC``   ``Clamp`` (spec id 5) set by ggml
=========================================== ============ ===============================
``flash_attn_f32_f16_f16acc_cm2``           1            1 (unaligned: clamped loads)
``flash_attn_f32_f16_f32acc_cm2``           0            1
``flash_attn_f32_f16_aligned_f16acc_cm2``   1            0 (aligned: no clamping)
``flash_attn_f32_f16_aligned_f32acc_cm2``   0            0
=========================================== ============ ===============================

``F16ACC`` is a compile-time parameter of :data:`flash_attn_cm2` (``flash_attn_cm2.specialize(F16ACC=1)``): it
selects ACC_TYPE, the component type of S, P, the row maxima M and the row
sums L (f16 with ``ACC_TYPE_MAX = 65504``, or f32). The running output O is
an f16 accumulator in both (``O_TYPE = FLOAT_TYPE``), as in the GLSL; coopdsl's
``O_F32=1`` variant (with ``F16ACC=0``, what ``ops.attention`` runs by default)
accumulates O in f32, which a row spreading its weight over many keys with
large V values needs (f16's 65504 is reached at 2049 keys of V about 300).
Two more coopdsl variants, with ``O_F32``: ``L16=1`` keeps the row sums L in a
Br x 16 matrix, the product of P with a Bc x 16 matrix of ones (ggml's L is
Br x Bc, a product with Bc x Bc ones: Bc / 16 times the multiply-adds), and
``D_F16=1`` stores the output as f16 into ``o``'s memory where the kernel
stores through its tensor layout (no split_k, ``gqa_ratio`` 1); ``M16=1`` (with
``L16``) keeps the row maxima M and each step's rescale factors eM in Br x 16
matrices too (a quarter of those exponentials at Bc 64; M smeared back to
Br x Bc for P), the same output bit for bit. ``EDGE=1`` clamps only the last
block of an unaligned KV length. ``MASK_FAST=1`` (what ``ops.attention`` runs
with any mask; 2 also says the mask's rows are a multiple of 8 keys) trusts the
mask_opt bits instead of reducing each loaded mask block to its maximum, adds
nothing for a block they mark all 0, leaves out the ALiBi slopes when
``max_bias`` is 0, and with ``EDGE`` loads the inner mask blocks unclamped.
``CAUSAL_END=1`` (a causal mask at least) ends each row tile's loop at the
block of the last key its last row sees; ``CAUSAL=1`` (a launch without a
mask, ``gqa_ratio`` 1) does that and computes the causal mask (aligned at the
end) itself, setting the scores of the keys past each row's diagonal to -inf
in the blocks that cross it, bit for bit what the mask's -inf gives, and with
``WINDOW=W`` a sliding window too (each row sees its W latest keys; the loop
starts at the tile's first row's first key); ``SINK_BATCH=1`` reads the sink
of head ``iq3`` (ggml's batch: ``ops.attention`` passes query heads there
when Sq > 1) where ggml's reads ``iq2 + r % gqa_ratio``; ``NO_ALIBI=1`` (the host promises
``max_bias`` 0, as ``ops.attention`` always has it) builds no slopes and adds
the mask without them, with no branch on ``max_bias`` in the loop.
Without them (their default) ggml's modules are unchanged.
``benchmarks/ggml/fa_kernels.toml`` builds the four modules.

**Only K and V of type F16** (ggml's ``FaTypeK = FaTypeV = 1``, spec ids 12
and 13) are supported: the GLSL's decode paths for F32 and quantized K/V
(``fa_block_elems(...) > 1``, ``faDecodeK/V``) are not written. The spec
constants are declared, but the kernel does not read them; a host must load
this module only when both are 1 (the ``.when`` sidecars next to the built
modules say so to ggml's override loader).

The interface, identical to the GLSL's:

* entry point ``main`` (ggml creates every pipeline with that name; the Python function is
  ``flash_attn_cm2``);
* descriptor set 0, bindings 0-6, all storage buffers: ``q`` (0), ``k`` (1),
  ``v`` (2), ``m`` (3, the f16 mask) declared as bytes (``u8``, as the GLSL's
  ``uint8_t``), so the byte offsets ggml passes (``nb02``, ``nb12``, ...) are
  used as they are; ``s`` (4, sinks, f32), ``o`` (5, the f32 output or the
  split_k scratch), ``mo`` (6, the mask_opt bits, u32);
* the push-constant block :class:`FaPush`: 32 members of 4 bytes (128 bytes;
  ``vk_flash_attn_push_constants`` of ggml-vulkan.cpp), same order and offsets;
* specialization constants 0-15 with the GLSL's ids and names; the workgroup
  size x is spec constant 0 (``LocalSizeId``). Used: WorkGroupSize, Br, Bc,
  HSK, HSV, Clamp, Flags (bit 0 mask_opt, bit 1 mask, bit 2 logit softcap);
  the others (D_split, row_split, SubGroupSize, SHMEM_STAGING,
  LIMIT_OCCUPANCY_SHMEM, FaTypeK/V, FaBlockBytesK/V) are declared and unused,
  as they are in the GLSL for F16 K/V;
* workgroups: x = query-row tile ``i`` (or, with GQA, the query row
  ``gqa_iq1``), interleaved with the split_k index when ``k_num > 1``;
  y = head (group of ``gqa_ratio`` heads with GQA); z = ``ne3`` batch;
* output: O / L stored through a 3-D clamped tensor layout [ne2, ne1, HSV]
  (permuted view), or per element for GQA; with ``k_num > 1`` the unscaled
  O, then L and M per row, in the layout ggml's ``flash_attn_split_k_reduce``
  reads ([HSV, ne1, k_num, ne2, ne3] matrices followed by [ne1, 2 (L, M),
  k_num, ne2, ne3] rows).

Everything the GLSL computes is here, line by line: Q scaled then converted
to f16, S = Q K^T (K read through a transposing view), logit softcap, the
mask times the ALiBi slopes, the mask_opt skip bits and the all -inf block
skip, -inf/0 padding of rows >= N and columns >= KV in the clamped variant,
the row maximum plus ``FATTN_KQ_MAX_OFFSET``, P = exp(S - M),
L = eM L + P 1, O = eM O + P V, sinks, 1/L (0 for an empty row), the f16acc
output clamp to +-65504. ``coopdsl/ops/ggml_host.py`` computes the push
constants and grid as ggml's ``ggml_vk_flash_attn`` does (for tests).

Differences that do not change results: per-element loops over
``m.length()`` (softcap, sinks, 1/L, the clamp) are per-element functions
(``m.map``); the sinks' per-element branch is written as two matrices ms and
vs (ms = 1 where the GLSL leaves O alone: multiplying by 1 is exact); the
mask's head/batch offsets (``% nem2``, ``% nem3``) are computed only when the
mask is enabled (the GLSL computes them, dividing by zero when there is no
mask, and never uses them).
"""

from __future__ import annotations

import struct as _struct
from typing import no_type_check

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f16, f32, i32, u8, u32

W = cd.Workgroup

# uintBitsToFloat(0xFEFFFFFF): -FLT_MAX / 2, the GLSL's "-inf" that keeps Mold - M finite
NEG_FLT_MAX_OVER_2: float = _struct.unpack("<f", _struct.pack("<I", 0xFEFFFFFF))[0]
NEG_INF: float = float("-inf")   # (what an f16 mask's -inf adds to a score)
# FATTN_KQ_MAX_OFFSET = 3.0f * 0.6931f, computed in f32 as the GLSL does
FATTN_KQ_MAX_OFFSET: float = _struct.unpack(
    "<f", _struct.pack("<f", 3.0 * _struct.unpack("<f", _struct.pack("<f", 0.6931))[0]))[0]
ACC_TYPE_MAX = 65504.0  # f16acc only
SINK_ENABLE_BIT = 1 << 24
N_LOG2_MASK = 0xFFFF
MASK_OPT_ALL_NEG_INF = 1
MASK_OPT_ALL_ZERO = 2


@cd.struct
class FaPush:
    """ggml's ``vk_flash_attn_push_constants`` (flash_attn_base.glsl's ``p``): 32 x 4 bytes."""

    N: u32
    KV: u32
    ne1: u32
    ne2: u32
    ne3: u32
    neq2: u32
    neq3: u32
    nek2: u32
    nek3: u32
    nev2: u32
    nev3: u32
    nem1: u32
    nem2: u32
    nem3: u32
    nb01: u32
    nb02: u32
    nb03: u32
    nb11: u32
    nb12: u32
    nb13: u32
    nb21: u32
    nb22: u32
    nb23: u32
    scale: f32
    max_bias: f32
    logit_softcap: f32
    mask_n_head_log2: u32
    m0: f32
    m1: f32
    gqa_ratio: u32
    split_kv: u32
    k_num: u32


@cd.func
@no_type_check
def larger(r, c, x, y):
    """GLSL ``Max``: the per-element max of two accumulators."""
    return max(x, y)


@cd.func
@no_type_check
def exp_elem(r, c, x):
    """GLSL ``Exp``."""
    return cd.exp(x)


@cd.func
@no_type_check
def smear(x, y):
    """GLSL ``smearReduce``: every element of a row is equal, keeping either resizes the matrix."""
    return x


@cd.func
@no_type_check
def replace_padding(r, c, x, replace, num_rows, num_cols):
    """GLSL ``replacePadding``: elements at rows >= num_rows or columns >= num_cols become ``replace``."""
    if r >= num_rows or c >= num_cols:
        return replace
    return x


@cd.func
@no_type_check
def hide_future(r, c, x, replace, past):
    """coopdsl's CAUSAL: the element of row ``r``, column ``c`` of a block becomes ``replace`` (-inf) where its key
    is past the row's last visible key (``past`` + r, in the block's columns)."""
    if i32(c) > i32(r) + past:
        return replace
    return x


@cd.func
@no_type_check
def hide_outside(r, c, x, replace, past, window):
    """coopdsl's CAUSAL with a WINDOW: as :func:`hide_future`, and the keys ``window`` or more before the row's
    last visible key become ``replace`` too."""
    last = i32(r) + past
    if i32(c) > last or i32(c) <= last - window:
        return replace
    return x


@cd.func
@no_type_check
def softcap(r, c, x, p, acc_t):
    """The GLSL's softcap loop: ``S[k] = ACC_TYPE(p.logit_softcap) * tanh(S[k])``."""
    return acc_t(p.logit_softcap) * cd.tanh(x)


@cd.func
@no_type_check
def compute_slope(r, c, x, iq2, p, acc_t):
    """GLSL ``perElemOpComputeSlope``: the ALiBi slope of head ``iq2 + r % gqa_ratio``."""
    h = iq2 + (r % p.gqa_ratio)
    n_head_log2 = p.mask_n_head_log2 & N_LOG2_MASK
    base = acc_t(p.m0 if h < n_head_log2 else p.m1)
    exph = i32(h + 1 if h < n_head_log2 else 2 * (h - n_head_log2) + 1)
    return acc_t(cd.pow(base, acc_t(exph)))


@cd.func
@no_type_check
def get_sink(r, c, x, iq2, p, s, acc_t):
    """GLSL ``perElemOpGetSink``: the sink of head ``iq2 + r % gqa_ratio``."""
    h = iq2 + (r % p.gqa_ratio)
    return acc_t(s[h])


@cd.func
@no_type_check
def sink_ms(r, c, mr, sink, acc_t):
    """The factor the GLSL applies to O and L when the sink exceeds the row maximum (else 1)."""
    if sink > mr:
        return cd.exp(mr - sink)
    return acc_t(1.0)


@cd.func
@no_type_check
def sink_vs(r, c, mr, sink, acc_t):
    """The sink's own weight, added to L (1 when it exceeds the row maximum)."""
    if sink > mr:
        return acc_t(1.0)
    return cd.exp(sink - mr)


@cd.func
@no_type_check
def reciprocal(r, c, x, acc_t):
    """``Ldiag[k] = Ldiag[k] == 0 ? 0 : 1 / Ldiag[k]``."""
    if x == 0.0:
        return acc_t(0.0)
    return acc_t(1.0) / x


@cd.func
@no_type_check
def clamp_acc_max(r, c, x):
    """The f16acc output clamp to +-ACC_TYPE_MAX."""
    return cd.clamp(x, -ACC_TYPE_MAX, ACC_TYPE_MAX)


@cd.func
@no_type_check
def gqa_store(r, c, x, o_offset, iq2, n, o, HSV):
    """GLSL ``perElemOpGqaStore``: rows index Q's dimension 2; the first ``n`` rows are valid."""
    if r < n and c < HSV:
        o[o_offset + (iq2 + r) * HSV + c] = f32(x)
    return x


@cd.func
@no_type_check
def store_col0(r, c, x, o_offset, iq2, n, o):
    """GLSL ``perElemOpStoreCol0``: column 0 (the per-row L or M) of the first ``n`` rows."""
    if r < n and c == 0:
        o[o_offset + iq2 + r] = f32(x)
    return x


@cd.func
@no_type_check
def non_gqa_split_k_store(r, c, x, unused, iq2, n, i, split_k_index, iq3, o, p, Br, HSV):
    """GLSL ``perElemOpNonGqaSplitKStore`` (its globals i, split_k_index, iq3 passed as operands)."""
    global_row = i * Br + r
    if global_row < n and c < HSV:
        o_off = HSV * p.ne1 * (split_k_index + p.k_num * (global_row + p.ne2 * iq3))
        o[o_off + iq2 * HSV + c] = f32(x)
    return x


@cd.func
@no_type_check
def non_gqa_split_k_store_col0(r, c, x, lm_base, iq2, n, i, split_k_index, iq3, o, p, Br, HSV):
    """GLSL ``perElemOpNonGqaSplitKStoreCol0``: L (lm_base 0) or M (lm_base ne1) of each row."""
    global_row = i * Br + r
    if global_row < n and c == 0:
        lm_off = (HSV * p.ne1 * p.k_num * p.ne2 * p.ne3
                  + p.ne1 * 2 * (split_k_index + p.k_num * (global_row + p.ne2 * iq3)))
        o[lm_off + lm_base + iq2] = f32(x)
    return x


@cd.kernel(workgroup_size=("WorkGroupSize", 1, 1), entry_point="main")  # ggml enters every module at "main"
@no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
def flash_attn_cm2(q: cd.Buffer[u8], k: cd.Buffer[u8], v: cd.Buffer[u8], m: cd.Buffer[u8],
         s: cd.Buffer[f32], o: cd.Buffer[f32], mo: cd.Buffer[u32], p: FaPush,
         WorkGroupSize: cd.Spec[u32, 0] = 128, Br: cd.Spec[u32, 1] = 1, Bc: cd.Spec[u32, 2] = 32,
         HSK: cd.Spec[u32, 3] = 32, HSV: cd.Spec[u32, 4] = 32, Clamp: cd.Spec[u32, 5] = 0,
         D_split: cd.Spec[u32, 6] = 16, row_split: cd.Spec[u32, 7] = 1,
         SubGroupSize: cd.Spec[u32, 8] = 32, SHMEM_STAGING: cd.Spec[u32, 9] = 0,
         Flags: cd.Spec[u32, 10] = 0, LIMIT_OCCUPANCY_SHMEM: cd.Spec[u32, 11] = 0,
         FaTypeK: cd.Spec[u32, 12] = 0, FaTypeV: cd.Spec[u32, 13] = 0,
         FaBlockBytesK: cd.Spec[u32, 14] = 2, FaBlockBytesV: cd.Spec[u32, 15] = 2,
         F16ACC: cd.Const[int] = 0, Q_F16: cd.Const[int] = 0, O_F32: cd.Const[int] = 0,
         L16: cd.Const[int] = 0, D_F16: cd.Const[int] = 0, M16: cd.Const[int] = 0, EDGE: cd.Const[int] = 0,
         MASK_FAST: cd.Const[int] = 0, CAUSAL_END: cd.Const[int] = 0, NO_ALIBI: cd.Const[int] = 0,
         CAUSAL: cd.Const[int] = 0, WINDOW: cd.Const[int] = 0, SINK_BATCH: cd.Const[int] = 0):
    ACC = f16 if F16ACC == 1 else f32
    O32 = O_F32 == 1 and F16ACC == 0   # coopdsl's variant: O accumulates in f32 (ACC's type) instead of ggml's f16
    OT = f32 if O32 else f16
    # coopdsl's variant: the row sums L are a Br x 16 matrix, P's product with a Bc x 16 matrix of ones (ggml's
    # is Br x Bc, by a Bc x Bc matrix of ones: Bc / 16 times the products)
    LW = 16 if L16 == 1 else Bc
    # coopdsl's variant (with L16): the row maxima M and the rescale factors eM are Br x 16 matrices too, so each
    # step's exp(Mold - M) is Br x 16 exponentials instead of Br x Bc; M is smeared back to Br x Bc for P
    NARROW_M = M16 == 1 and L16 == 1
    MW = 16 if NARROW_M else Bc
    QE = 2 if Q_F16 == 1 else 4   # bytes a Q value (coopdsl's Q_F16 variant; ggml's Q is always f32)
    USE_MASK_OPT = (Flags & 1) != 0
    MASK_ENABLE = (Flags & 2) != 0
    LOGIT_SOFTCAP = (Flags & 4) != 0
    HSK_pad = (HSK + 15) & 0xFFFFFFF0
    HSV_pad = (HSV + 15) & 0xFFFFFFF0

    # init_indices()
    N = p.N
    KV = p.KV
    i = u32(0)
    gqa_iq1 = u32(0)
    split_k_index = u32(0)
    if p.k_num > 1:
        if p.gqa_ratio > 1:
            gqa_iq1 = cd.workgroup_id.x // p.k_num  # batch and split_k share workgroup_id.x
            split_k_index = cd.workgroup_id.x % p.k_num
        else:
            split_k_index = cd.workgroup_id.x % p.k_num
            i = cd.workgroup_id.x // p.k_num
    elif p.gqa_ratio > 1:
        gqa_iq1 = cd.workgroup_id.x
    else:
        i = cd.workgroup_id.x
    start_j = split_k_index * p.split_kv // Bc
    end_j = (min(KV, (split_k_index + 1) * p.split_kv) + Bc - 1) // Bc
    if (CAUSAL_END == 1 or CAUSAL == 1) and p.gqa_ratio <= 1:
        # coopdsl's variant, for a mask that is causal (aligned at the end) at least: the loop ends at the block of
        # the last key the tile's last row sees, where ggml's visits every block and skips those mask_opt marks
        seen = min((i + 1) * Br, N) + KV   # (the last row's last key, + 1, + N)
        if seen <= N:
            end_j = start_j   # no row of the tile sees a key
        else:
            end_j = min(end_j, (seen - N + Bc - 1) // Bc)
    if CAUSAL == 1 and WINDOW > 0:
        # coopdsl's variant, a sliding window of WINDOW keys: the loop starts at the block of the first key the
        # tile's first row sees (the blocks before it are hidden from every row of the tile)
        first = i32(i * Br) + i32(KV) - i32(N) - i32(WINDOW - 1)
        if first > 0:
            start_j = max(start_j, u32(first) // Bc)
    iq2 = cd.workgroup_id.y * p.gqa_ratio
    iq3 = cd.workgroup_id.z
    rk2 = p.neq2 // p.nek2
    rk3 = p.neq3 // p.nek3
    rv2 = p.neq2 // p.nev2
    rv3 = p.neq3 // p.nev3
    ik3 = iq3 // rk3
    ik2 = iq2 // rk2
    iv3 = iq3 // rv3
    iv2 = iq2 // rv2
    q_stride = p.nb01
    m_stride = KV
    if p.gqa_ratio > 1:
        q_stride = p.nb02 // QE
        m_stride = p.gqa_ratio >> 16  # zero: all rows use the same mask row
    k_stride = p.nb11
    v_stride = p.nb21

    tl_q = cd.tensor_layout(2, clamp=cd.ClampConstant)
    tl_k = cd.tensor_layout(2, clamp=Clamp)
    tl_v = cd.tensor_layout(2, clamp=Clamp)
    transpose = cd.tensor_view(2, perm=(1, 0))
    tl_q = tl_q.dimension(N, HSK)
    tl_k = tl_k.dimension(KV, HSK)
    tl_v = tl_v.dimension(KV, HSV)
    if Clamp != 1:  # the aligned variant: strides are multiples of 8
        q_stride = q_stride & 0xFFFFFFF8
        k_stride = k_stride & 0xFFFFFFF8
        v_stride = v_stride & 0xFFFFFFF8
        m_stride = m_stride & 0xFFFFFFF8
    if EDGE == 1:  # coopdsl's variant: KV is not a multiple of Bc, but the Q, K and V strides are multiples of 8
        q_stride = q_stride & 0xFFFFFFF8
        k_stride = k_stride & 0xFFFFFFF8
        v_stride = v_stride & 0xFFFFFFF8
    if MASK_FAST == 2:  # coopdsl's variant: the mask's rows (KV values) are a multiple of 8 too
        m_stride = m_stride & 0xFFFFFFF8
    tl_q = tl_q.stride(q_stride, 1)
    tl_k = tl_k.stride(k_stride, 1)
    tl_v = tl_v.stride(v_stride, 1)

    q_offset = gqa_iq1 * p.nb01 * QE + iq2 * p.nb02 + iq3 * p.nb03  # bytes
    if Q_F16 == 1:   # f16 Q read as it is (the same values as ggml's f32 copy of it)
        Q = Acc[f32, Br, HSK_pad, W](Acc[f16, Br, HSK_pad, W].load_tensor(q, q_offset,
                                                                          tl_q.slice(i * Br, Br, 0, HSK_pad)))
    else:
        Q = Acc[f32, Br, HSK_pad, W].load_tensor(q, q_offset, tl_q.slice(i * Br, Br, 0, HSK_pad))
    Q = Q * p.scale
    Qf16 = MatA[f16, Br, HSK_pad, W](Q)

    Oacc = Acc[OT, Br, HSV_pad, W](0.0)
    L = Acc[ACC, Br, LW, W](0.0)
    if F16ACC == 1:
        M = Acc[ACC, Br, MW, W](-ACC_TYPE_MAX / 2.0)
    else:
        M = Acc[ACC, Br, MW, W](NEG_FLT_MAX_OVER_2)

    slope_mat = Acc[ACC, Br, Bc, W](1.0)
    if NO_ALIBI == 0 and p.max_bias > 0.0:  # ALiBi
        slope_mat = slope_mat.map(cd.partial(compute_slope, p=p, acc_t=ACC), iq2)

    mo_stride = (KV + 16 * Bc - 1) // (16 * Bc)
    mo_offset = mo_stride * i  # the mask_opt row of tile i, column 0
    m_offset = gqa_iq1 * KV * 2  # bytes
    if MASK_ENABLE:
        if p.nem2 != 1 or p.nem3 != 1:
            mask_batch = (iq3 % p.nem3) * p.nem2 + (iq2 % p.nem2)
            m_offset += mask_batch * p.nem1 * KV * 2
            mo_offset += mask_batch * ((p.nem1 + Br - 1) // Br) * mo_stride

    mask_opt = u32(0)
    mask_opt_idx = u32(0xFFFFFFFF)
    # coopdsl's variant (EDGE): the key blocks inside KV first, loading K and V through unclamped layouts, then
    # the last block (if KV is not a multiple of Bc) through the clamped ones: two loops of the same body (one
    # where EDGE is 0, as ggml's, whose unaligned pipeline clamps every load)
    for phase in cd.static_range(2 if EDGE == 1 else 1):
        lo_j = start_j
        hi_j = end_j
        if EDGE == 1:
            full_j = KV // Bc   # the blocks inside KV
            if phase == 0:
                hi_j = min(end_j, full_j)
            else:
                lo_j = max(start_j, full_j)
        for j in cd.range(lo_j, hi_j, unroll=False):
            mv = Acc[f16, Br, Bc, W](0.0)
            if MASK_FAST != 0:
                mask_opt_bits = u32(0)   # (read again below: assigned on every path)
            if MASK_ENABLE:
                if USE_MASK_OPT and mask_opt_idx != j // 16:
                    mask_opt_idx = j // 16
                    mask_opt = mo[mo_offset + mask_opt_idx]
                mask_opt_bits = (mask_opt >> ((j % 16) * 2)) & 0x3
                if mask_opt_bits == MASK_OPT_ALL_NEG_INF:
                    continue  # skip this block
                if mask_opt_bits != MASK_OPT_ALL_ZERO:  # load only if the block is not all zeros
                    nem1_bounds_check = not (p.gqa_ratio > 1) and (p.nem1 % Br) != 0
                    # coopdsl's variant (MASK_FAST): where mask_opt has run it has already skipped every block
                    # whose values are all -inf, so the block's maximum is not reduced again; and (with EDGE) a
                    # block inside the keys, of a tile whose rows are inside the mask, loads unclamped
                    fast = MASK_FAST != 0
                    reduce = not (fast and USE_MASK_OPT)
                    rows_in = p.gqa_ratio > 1 or (i + 1) * Br <= p.nem1
                    if fast and EDGE == 1 and phase == 0 and rows_in:
                        tl_m = cd.tensor_layout(2).dimension(p.nem1 if p.gqa_ratio <= 1 else u32(0xFFFFFFFF), KV)
                        tl_m = tl_m.stride(m_stride, 1)
                        mv = Acc[f16, Br, Bc, W].load_tensor(m, m_offset, tl_m.slice(i * Br, Br, j * Bc, Bc))
                        if reduce:
                            mvmax = mv.reduce(cd.Row | cd.Column, cd.reduce_max)
                            if f32(mvmax[0]) <= NEG_FLT_MAX_OVER_2:
                                continue
                    elif nem1_bounds_check:
                        tl_m = cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(p.nem1, KV)
                        tl_m = tl_m.stride(m_stride, 1).clamp_value(0xFC00)  # -inf in f16
                        mv = Acc[f16, Br, Bc, W].load_tensor(m, m_offset, tl_m.slice(i * Br, Br, j * Bc, Bc))
                        if reduce:
                            mvmax = mv.reduce(cd.Row | cd.Column, cd.reduce_max)
                            if f32(mvmax[0]) <= NEG_FLT_MAX_OVER_2:
                                continue  # the mask is -inf on the whole block
                    else:
                        m_height = p.nem1
                        if p.gqa_ratio > 1:
                            m_height = u32(0xFFFFFFFF)  # no clamping against nem1 with GQA
                        tl_m = cd.tensor_layout(2, clamp=Clamp).dimension(m_height, KV).stride(m_stride, 1)
                        mv = Acc[f16, Br, Bc, W].load_tensor(m, m_offset, tl_m.slice(i * Br, Br, j * Bc, Bc))
                        if reduce:
                            mvmax = mv.reduce(cd.Row | cd.Column, cd.reduce_max)
                            if f32(mvmax[0]) <= NEG_FLT_MAX_OVER_2:
                                continue

            k_offset = ik2 * p.nb12 + ik3 * p.nb13  # bytes
            inside = EDGE == 1 and phase == 0
            if inside:
                tl_k_in = cd.tensor_layout(2).dimension(KV, HSK).stride(k_stride, 1)
                K_T = MatB[f16, HSK_pad, Bc, W].load_tensor(k, k_offset, tl_k_in.slice(j * Bc, Bc, 0, HSK_pad),
                                                            view=transpose)
            else:
                K_T = MatB[f16, HSK_pad, Bc, W].load_tensor(k, k_offset, tl_k.slice(j * Bc, Bc, 0, HSK_pad),
                                                            view=transpose)
            S = cd.muladd(Qf16, K_T, Acc[ACC, Br, Bc, W](0.0))

            if LOGIT_SOFTCAP:
                S = S.map(cd.partial(softcap, p=p, acc_t=ACC))

            if CAUSAL == 1:
                # coopdsl's variant: the causal mask computed, not read: row r of the tile sees the keys up to
                # r + KV - N; only a block that crosses the first row's last key has keys to hide
                past = i32(i * Br) + i32(KV) - i32(N) - i32(j * Bc)   # the tile's first row's last key, in the block
                if WINDOW > 0:   # and a sliding window: keys at or before the row's last key - WINDOW hidden too
                    if past < i32(Bc) - 1 or past + i32(Br) - 1 >= i32(WINDOW):
                        S = S.map(hide_outside, ACC(f32(NEG_INF)), past, i32(WINDOW))
                elif past < i32(Bc) - 1:
                    S = S.map(hide_future, ACC(f32(NEG_INF)), past)
            if MASK_ENABLE:
                if MASK_FAST != 0:
                    # coopdsl's variant: a block mask_opt marks all 0 adds nothing, and without ALiBi the slopes
                    # are all 1 (ggml's adds the zeros and multiplies by the ones: elementwise work on each block)
                    if mask_opt_bits != MASK_OPT_ALL_ZERO:
                        if NO_ALIBI == 1:   # coopdsl's variant: the launch's max_bias is 0 (known on the host)
                            S = S + Acc[ACC, Br, Bc, W](mv)
                        elif p.max_bias > 0.0:
                            S = S + slope_mat * Acc[ACC, Br, Bc, W](mv)
                        else:
                            S = S + Acc[ACC, Br, Bc, W](mv)
                else:
                    S = S + slope_mat * Acc[ACC, Br, Bc, W](mv)

            # padding (rows >= N, columns >= KV) to -inf, so it does not count in the row maximum
            pad_rows = (i + 1) * Br > N
            pad_cols = (j + 1) * Bc > KV
            if Clamp != 0 and (pad_cols or pad_rows):
                R = Br
                if pad_rows:
                    R = N % Br
                C = Bc
                if pad_cols:
                    C = KV % Bc
                S = S.map(replace_padding, ACC(f32(NEG_FLT_MAX_OVER_2)), R, C)

            rowmax = S.reduce(cd.Row, cd.reduce_max, into=Acc[ACC, Br, MW, W])
            rowmax = rowmax + Acc[ACC, Br, MW, W](FATTN_KQ_MAX_OFFSET)
            Mold = M
            M = rowmax.map(larger, Mold)  # M = max(rowmax, Mold)
            if NARROW_M:   # M smeared to Br x Bc for P
                SM = S - M.reduce(cd.Row, smear, into=Acc[ACC, Br, Bc, W])
            else:
                SM = S - M
            P = SM.map(exp_elem)  # P = e^(S - M)
            eM = (Mold - M).map(exp_elem)  # eM = e^(Mold - M)

            if Clamp != 0 and (pad_cols or pad_rows):  # padding to 0, so it does not count in the row sum
                R = Br
                if pad_rows:
                    R = N % Br
                C = Bc
                if pad_cols:
                    C = KV % Bc
                P = P.map(replace_padding, ACC(0.0), R, C)

            P_A = MatA[f16, Br, Bc, W](P)
            One = MatB[f16, Bc, LW, W](1.0)
            if L16 == 1:   # L = eM L + P 1, eM resized to Br x 16
                if NARROW_M:
                    L = cd.muladd(P_A, One, eM * L)
                else:
                    L = cd.muladd(P_A, One, eM.reduce(cd.Row, smear, into=Acc[ACC, Br, LW, W]) * L)
            else:
                rowsum = cd.muladd(P_A, One, Acc[ACC, Br, Bc, W](0.0))  # the row sums, by a product with ones

            v_offset = iv2 * p.nb22 + iv3 * p.nb23  # bytes
            if inside:
                tl_v_in = cd.tensor_layout(2).dimension(KV, HSV).stride(v_stride, 1)
                V = MatB[f16, Bc, HSV_pad, W].load_tensor(v, v_offset, tl_v_in.slice(j * Bc, Bc, 0, HSV_pad))
            else:
                V = MatB[f16, Bc, HSV_pad, W].load_tensor(v, v_offset, tl_v.slice(j * Bc, Bc, 0, HSV_pad))

            if L16 != 1:
                L = eM * L + rowsum
            eMdiag = eM.reduce(cd.Row, smear, into=Acc[ACC, Br, HSV_pad, W])  # eM resized to Br x HSV_pad
            Oacc = Oacc * (eMdiag if O32 else Acc[f16, Br, HSV_pad, W](eMdiag))
            Oacc = cd.muladd(P_A, V, Oacc)

    # split_k: the reduce shader divides by L; store the unscaled O and each row's L and M
    if p.k_num > 1:
        O_D = Oacc if O32 else Acc[f32, Br, HSV_pad, W](Oacc)
        if p.gqa_ratio > 1:  # O and Q have swapped coordinates 1 and 2
            o_offset = HSV * p.ne1 * (split_k_index + p.k_num * (gqa_iq1 + p.ne2 * iq3))
            O_D.map(cd.partial(gqa_store, o=o, HSV=HSV), o_offset, iq2, N)
            o_offset = (HSV * p.ne1 * p.k_num * p.ne2 * p.ne3
                        + p.ne1 * 2 * (split_k_index + p.k_num * (gqa_iq1 + p.ne2 * iq3)))
            L.map(cd.partial(store_col0, o=o), o_offset, iq2, N)
            M.map(cd.partial(store_col0, o=o), o_offset + p.ne1, iq2, N)
        else:
            O_D.map(cd.partial(non_gqa_split_k_store, o=o, p=p, Br=Br, HSV=HSV),
                    u32(0), iq2, N, i, split_k_index, iq3)
            L.map(cd.partial(non_gqa_split_k_store_col0, o=o, p=p, Br=Br, HSV=HSV),
                  u32(0), iq2, N, i, split_k_index, iq3)
            M.map(cd.partial(non_gqa_split_k_store_col0, o=o, p=p, Br=Br, HSV=HSV),
                  p.ne1, iq2, N, i, split_k_index, iq3)
        return

    Ldiag = L.reduce(cd.Row, smear, into=Acc[ACC, Br, HSV_pad, W])  # L resized to Br x HSV_pad

    if (p.mask_n_head_log2 & SINK_ENABLE_BIT) != 0:
        sink_head = iq2
        if SINK_BATCH == 1:   # coopdsl's variant: the heads are ggml's batch (iq3), one query head a batch
            sink_head = iq3
        sinks = Acc[ACC, Br, HSV_pad, W](0.0).map(cd.partial(get_sink, p=p, s=s, acc_t=ACC), sink_head)
        Mr = M.reduce(cd.Row, smear, into=Acc[ACC, Br, HSV_pad, W])  # M resized to Br x HSV_pad
        ms = Mr.map(cd.partial(sink_ms, acc_t=ACC), sinks)  # exp(M - sink) where the sink is larger, else 1
        vs = Mr.map(cd.partial(sink_vs, acc_t=ACC), sinks)  # 1 where the sink is larger, else exp(sink - M)
        Oacc = Oacc * (ms if O32 else Acc[f16, Br, HSV_pad, W](ms))
        Ldiag = Ldiag * ms + vs

    Ldiag = Ldiag.map(cd.partial(reciprocal, acc_t=ACC))
    O_D = Oacc if O32 else Acc[f32, Br, HSV_pad, W](Oacc)
    O_D = Acc[f32, Br, HSV_pad, W](Ldiag) * O_D
    if F16ACC == 1:
        O_D = O_D.map(clamp_acc_max)

    o_offset = gqa_iq1 * p.ne1 * HSV + iq3 * p.ne2 * p.ne1 * HSV
    if p.gqa_ratio > 1:
        O_D.map(cd.partial(gqa_store, o=o, HSV=HSV), o_offset, iq2, N)
    else:
        tl_d = cd.tensor_layout(3, clamp=cd.ClampConstant).dimension(p.ne2, p.ne1, HSV)
        permute = cd.tensor_view(3, perm=(1, 0, 2))
        if D_F16 == 1:  # coopdsl's variant: O stored as f16 into o's memory (o_offset, in f16 elements, is even)
            Acc[f16, Br, HSV_pad, W](O_D).store_tensor(o, o_offset // 2, tl_d.slice(i * Br, Br, iq2, N, 0, HSV_pad),
                                                        view=permute)
        else:
            O_D.store_tensor(o, o_offset, tl_d.slice(i * Br, Br, iq2, N, 0, HSV_pad), view=permute)
