# mypy: disable-error-code="valid-type, name-defined"
# (struct members are annotated with coopdsl types, which mypy does not know as Python types; under
# --strict, cd.array is not an explicit export of coopdsl, so those annotations also read as undefined names)
"""ggml's block-quantized weight formats as coopdsl block structs and decode functions.

A quantized matrix is stored row after row as *blocks*: each block covers
``QK`` consecutive elements of one row (``QK`` = 32 or 256) and holds their
quantized values and scales.  A cooperative-matrix load through a tensor
layout with block size ``(1, QK)`` (``docs/lang/nv2.md``) hands the decode
function a pointer to the block holding an element and the element's index in
it; the function returns the element as f16.  These are the formats of
:mod:`coopdsl.ops.quant` (the numpy packers and reference dequantizers), laid
out byte for byte as ggml's ``block_q4_0``, ``block_q8_0`` and ``block_q4_K``:

* ``q4_0`` (18 bytes, 32 elements): f16 ``d``; 16 bytes ``qs``; byte ``j`` holds
  element ``j`` in its low nibble and ``j + 16`` in its high nibble; the value is
  ``(q - 8) * d``.
* ``q8_0`` (34 bytes, 32 elements): f16 ``d``; 32 signed bytes ``qs``; value ``q * d``.
* ``q4_K`` (144 bytes, 256 elements; read as a 16-byte head and 64 16-bit words): f16 ``d`` and
  ``dmin``; 12 bytes of 6-bit scales and mins for the 8 sub-blocks of 32 (ggml's ``get_scale_min_k4``); 128
  bytes ``qs``: bytes ``32 c .. 32 c + 31`` hold sub-block ``2 c`` in their low
  nibbles and ``2 c + 1`` in their high nibbles; the value is
  ``d * sc * q - dmin * m``.

:data:`FORMATS` maps a format name to ``(block struct, elements per block,
decode function)``.
"""

from __future__ import annotations

from typing import Any, no_type_check

import coopdsl as cd
from coopdsl import f16, f32, i16, i32, u16, u32, vec2, vec4


@cd.struct
class BlockQ4_0:
    d: f16                       # scale
    qs: cd.array[u16, 8]         # 32 four-bit values, two per byte (read 16 bits at a time, as ggml does)


@cd.struct
class BlockQ8_0:
    d: f16                       # scale
    qs: cd.array[i16, 16]        # 32 signed bytes, read 16 bits at a time as ggml does


@cd.struct
class BlockQ4_K:
    head: vec4[u32]              # f16 d and dmin; 12 bytes of 8 six-bit scales and 8 six-bit mins
    qs: cd.array[u16, 64]        # 256 four-bit values (128 bytes), read 16 bits at a time as ggml does


@cd.func
@no_type_check  # coopdsl source (compiled, never run by Python)
def decode_q4_0(block, block_coords, coord_in_block):
    """Element ``coord_in_block[1]`` (0 .. 31) of a q4_0 block, as f16."""
    idx = coord_in_block[1]
    # byte idx & 15 holds element idx (low nibble, idx < 16) and idx + 16 (high nibble)
    q = (u32(block.qs[(idx & 14) >> 1]) >> (((idx & 16) >> 2) + 8 * (idx & 1))) & 15
    return (f16(q) - f16(8.0)) * block.d


@cd.func
@no_type_check
def decode_q8_0(block, block_coords, coord_in_block):
    """Element ``coord_in_block[1]`` (0 .. 31) of a q8_0 block, as f16."""
    idx = coord_in_block[1]
    w = i32(block.qs[(idx & 0x1E) >> 1])            # sign-extended: the high byte by one shift, the low by two
    q = (w >> 8) if (idx & 1) == 1 else ((w << 24) >> 24)
    return f16(q) * block.d


@cd.func
@no_type_check
def level_q4_K(block, idx):
    """The 4-bit level of element ``idx`` (0 .. 255) of a q4_K block: bytes 32 c .. 32 c + 31 hold sub-block
    2 c in their low nibbles and 2 c + 1 in their high ones; read as ggml's decoder does, one 16-bit word,
    its index masked into the block (ggml's q4_K at 4096 x 512 x 14336 on an H100: 1.01 of its speed read
    this way, 0.93 through 32-bit words, benchmarks/ggml/variants.py)."""
    return (u32(block.qs[((idx & 0xC0) >> 2) + ((idx & 0x1E) >> 1)]) >> (4 * ((idx >> 5) & 1) + 8 * (idx & 1))) & 15


@cd.func
@no_type_check
def scale_min_q4_K(v, sub):
    """``(d * scale, dmin * min)`` of sub-block ``sub`` (0 .. 7) of the q4_K block whose 16-byte head is ``v``,
    as f32: ggml's ``get_scale_min_k4``, branch-free as ggml's cm2 decoder does it (sub-blocks 0-3: the low six
    bits of bytes 4-7 and 8-11; 4-7: the nibbles of bytes 12-15 and the top two bits of bytes 4-11).  The one
    place q4_K's scales are read: the decode functions here, :mod:`coopdsl.ops.gemv` and
    :mod:`coopdsl.ops.gemv_mma` call it."""
    dm = cd.bitcast(v.x, vec2[f16])
    sc_hi = (v.w & 0x0F0F0F0F) | ((v.y & 0xC0C0C0C0) >> 2)
    mb_hi = ((v.w & 0xF0F0F0F0) >> 4) | ((v.z & 0xC0C0C0C0) >> 2)
    sh = 8 * (sub & 3)
    sc = ((v.y if sub < 4 else sc_hi) >> sh) & 63
    mn = ((v.z if sub < 4 else mb_hi) >> sh) & 63
    return vec2[f32](f32(dm.x) * f32(sc), f32(dm.y) * f32(mn))


@cd.func
@no_type_check
def decode_q4_K(block, block_coords, coord_in_block):
    """Element ``coord_in_block[1]`` (0 .. 255) of a q4_K block, as f16: one 16-byte load of the
    head gives the scales (:func:`scale_min_q4_K`)."""
    idx = coord_in_block[1]
    s = scale_min_q4_K(block.head, idx >> 5)       # sub-block of 32: 0 .. 7
    return f16(s.x * f32(level_q4_K(block, idx)) - s.y)


# format -> (block struct, elements per block, decode function)
FORMATS: dict[str, tuple[Any, int, Any]] = {
    "q4_0": (BlockQ4_0, 32, decode_q4_0),
    "q8_0": (BlockQ8_0, 32, decode_q8_0),
    "q4_K": (BlockQ4_K, 256, decode_q4_K),
}
# format -> bytes per block
FORMATS_BYTES = {"q4_0": 18, "q8_0": 34, "q4_K": 144}


# -- q4_K with its scales staged in shared memory (ggml's mul_mm_cm2 does this) ---------------------
# A workgroup computing a BM-row tile decodes each row's 8 (scale, min) pairs of the current 256-wide
# block column once, into shared memory (store_scales_q4_K, between two barriers); the decode function
# then reads them there instead of unpacking them for every element.  fetch_scales_q4_K loads the
# 16-byte block heads one step ahead (each invocation one row, BLOCK_SIZE / BM invocations a row).

@cd.func
@no_type_check
def fetch_scales_q4_K(data_a, row0, pos_a, stride_a, block_k, M, in_bounds, BLOCK_SIZE, BM):
    """The head (d, dmin, packed scales) of this invocation's row's block at column ``block_k``."""
    row = row0 + cd.local_invocation_index // (BLOCK_SIZE // BM)
    v = vec4[u32](u32(0))
    if in_bounds or row < M:
        v = data_a[pos_a + row * stride_a + block_k // 256].head
    return v


@cd.func
@no_type_check
def store_scales_q4_K(scales, v, BLOCK_SIZE, BM):
    """Unpack this invocation's share of its row's 8 (d * scale, dmin * min) pairs into ``scales``."""
    cd.barrier()
    tids_per_row = BLOCK_SIZE // BM
    per_tid = 8 // tids_per_row
    tid = cd.local_invocation_index
    first = per_tid * (tid % tids_per_row)
    row = tid // tids_per_row
    for i in range(per_tid):
        sub = first + i
        scales[sub * (BM + 2) + row] = scale_min_q4_K(v, sub)
    cd.barrier()


@cd.func
@no_type_check
def decode_q4_K_shared(block, block_coords, coord_in_block, scales, bm):
    """Element ``coord_in_block[1]`` of a q4_K block, its sub-block's scale and min read from ``scales``
    (row ``block_coords[0] % bm`` of the tile, as :func:`store_scales_q4_K` wrote them)."""
    idx = coord_in_block[1]
    sub = idx >> 5
    s = scales[sub * (bm + 2) + block_coords[0] % bm]
    return f16(s.x * f32(level_q4_K(block, idx)) - s.y)
