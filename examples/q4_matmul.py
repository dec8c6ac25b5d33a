"""Matrix multiply with q4_0 weights dequantized by a decode function (VK_NV_cooperative_matrix2 block loads).

y = dequant(W) x: W is M x K in llama.cpp's q4_0 format, x is K x N f16
row-major, y is M x N f32 row-major.  A q4_0 block holds 32 consecutive
weights of a row: one f16 scale ``d`` and 16 bytes ``qs``; byte j holds weight
j in its low nibble and weight j + 16 in its high nibble, and a weight's value
is (nibble - 8) * d.  Row r of W is blocks r * K / 32 .. (r + 1) * K / 32 - 1,
so K must be a multiple of 32 (M and N are free).

The weights are read through a device address (``Ptr[BlockQ4_0]``, a push
constant: pass the uint8 array of blocks).  Their tensor layout has block size
(1, 32): element (r, k) is in block (r, k // 32), element k % 32 of it, so the
layout's strides count blocks, and the decode function ``dequant_q4_0``
receives a pointer to that block and the element's coordinates in it.

Each workgroup of WG invocations computes a BM x BN tile of y with
workgroup-scope matrices; loads clamp to the tensor (Constant mode: zeros
outside), stores outside y are dropped.  Dispatch (ceil(N / BN), ceil(M / BM), 1)
workgroups.
"""

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f16, f32, i32, u8, u32

QK = 32  # weights per q4_0 block
W = cd.Workgroup


@cd.struct
class BlockQ4_0:
    d: f16                     # scale
    qs: cd.array[u8, QK // 2]  # 32 four-bit weights, two per byte (18 bytes in all)


@cd.func
def dequant_q4_0(block, block_coords, coord_in_block):
    """The weight at ``coord_in_block[1]`` (0 .. 31) of ``block``."""
    i = coord_in_block[1]
    q = (u32(block.qs[i % 16]) >> ((i // 16) * 4)) & 15
    return f16(i32(q) - 8) * block.d


@cd.kernel(workgroup_size=("WG", 1, 1))
def q4_matmul(w: cd.Ptr[BlockQ4_0], x: cd.Buffer[f16], y: cd.Buffer[f32], M: u32, N: u32, K: u32,
              BM: cd.Spec[u32] = 64, BN: cd.Spec[u32] = 64, BK: cd.Spec[u32] = 32, WG: cd.Spec[u32] = 128):
    row0 = cd.workgroup_id.y * BM
    col0 = cd.workgroup_id.x * BN
    lw = cd.tensor_layout(2, clamp=cd.ClampConstant).block_size(1, QK).dimension(M, K).stride(K // QK, 1)
    lx = cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(K, N).stride(N, 1)
    ly = cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(M, N).stride(N, 1)
    acc = Acc[f32, BM, BN, W].splat(0.0)
    for k0 in range(0, K, BK):
        ta = MatA[f16, BM, BK, W].load_tensor(w, 0, lw.slice(row0, BM, k0, BK), decode=dequant_q4_0)
        tb = MatB[f16, BK, BN, W].load_tensor(x, 0, lx.slice(k0, BK, col0, BN))
        acc = cd.muladd(ta, tb, acc)
    acc.store_tensor(y, 0, ly.slice(row0, BM, col0, BN))
