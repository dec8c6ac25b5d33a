"""Workgroup-scope GEMM through tensor layouts (VK_NV_cooperative_matrix2): C = alpha * A x B + beta * C.

A is M x K f16 row-major; B is K x N f16, row-major, or column-major (stored
as N x K, i.e. B transposed) when the kernel is specialized with
``B_COLMAJOR=True``; C is M x N row-major, f32 (``gemm_wg``) or f16
(``gemm_wg_f16``), read for beta and written.  M, N, K, alpha and beta are push
constants, so one pipeline serves every size: nothing needs to be a multiple
of a tile.

Each workgroup computes one BM x BN tile of C with workgroup-scope matrices:
the whole workgroup (WG invocations) loads, multiplies and stores together and
the driver stages the tiles through shared memory itself.  The loads address A
and B through 2-D tensor layouts with the Constant clamp mode: elements past
M, N or K read as 0, so the partial tiles at the edges multiply correctly; C
is read and written through a clamped layout too, so elements outside C are
neither read nor written (stores outside the tensor are dropped).  The
column-major B is read through a view that swaps the two dimensions.

BM, BN, BK and WG are specialization constants (the tile and workgroup sizes
the device supports: ``coopdsl devices`` lists the workgroup-scope
granularities).  Dispatch (ceil(N / BN), ceil(M / BM), 1) workgroups.
"""

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f16, f32, u32

W = cd.Workgroup


def make_gemm(c_type):
    """The GEMM kernel writing C as ``c_type`` (f32 or f16)."""

    @cd.kernel(workgroup_size=("WG", 1, 1))
    def gemm(a: cd.Buffer[f16], b: cd.Buffer[f16], c: cd.Buffer[c_type], M: u32, N: u32, K: u32,
             alpha: f32, beta: f32, B_COLMAJOR: cd.Const[bool] = False,
             BM: cd.Spec[u32] = 128, BN: cd.Spec[u32] = 128, BK: cd.Spec[u32] = 32, WG: cd.Spec[u32] = 256):
        row0 = cd.workgroup_id.y * BM
        col0 = cd.workgroup_id.x * BN
        la = cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(M, K).stride(K, 1)
        lc = cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(M, N).stride(N, 1)
        if B_COLMAJOR:
            lb = cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(N, K).stride(K, 1)
        else:
            lb = cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(K, N).stride(N, 1)
        transposed = cd.tensor_view(2, perm=(1, 0))

        acc = Acc[f32, BM, BN, W].splat(0.0)
        for k0 in range(0, K, BK):
            ta = MatA[f16, BM, BK, W].load_tensor(a, 0, la.slice(row0, BM, k0, BK))
            if B_COLMAJOR:
                tb = MatB[f16, BK, BN, W].load_tensor(b, 0, lb.slice(col0, BN, k0, BK), view=transposed)
            else:
                tb = MatB[f16, BK, BN, W].load_tensor(b, 0, lb.slice(k0, BK, col0, BN))
            acc = cd.muladd(ta, tb, acc)

        tile = lc.slice(row0, BM, col0, BN)
        old = Acc[c_type, BM, BN, W].load_tensor(c, 0, tile)
        out = acc * alpha + Acc[f32, BM, BN, W](old) * beta
        Acc[c_type, BM, BN, W](out).store_tensor(c, 0, tile)

    return gemm


gemm_wg = make_gemm(f32)
gemm_wg_f16 = make_gemm(f16)
