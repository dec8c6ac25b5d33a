"""Subgroup-scope int8 GEMM: C = A x B with s8 inputs and s32 accumulation.

A is M x K (int8, row-major), B is K x N (int8, row-major), C is M x N
(int32).  Tiles are 16 x 16 x 32 (the shape NVIDIA GPUs offer for s8);
signed components set MatrixA/B/C/ResultSignedComponentsKHR.  Each workgroup
(one subgroup of 32) computes one 16 x 16 tile; dispatch (N / 16, M / 16, 1).
M and N are multiples of 16, K a multiple of 32 (specialization constants).
"""

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, RowMajor, i8, i32, u32


@cd.kernel(workgroup_size=(32, 1, 1))
def gemm_s8(a: cd.Buffer[i8], b: cd.Buffer[i8], c: cd.Buffer[i32],
            M: cd.Spec[u32] = 64, N: cd.Spec[u32] = 64, K: cd.Spec[u32] = 64):
    row = cd.workgroup_id.y * 16
    col = cd.workgroup_id.x * 16
    acc = Acc[i32, 16, 16].splat(0)
    for k in range(0, K, 32):
        ta = MatA[i8, 16, 32].load(a, row * K + k, stride=K, layout=RowMajor)
        tb = MatB[i8, 32, 16].load(b, k * N + col, stride=N, layout=RowMajor)
        acc = cd.muladd(ta, tb, acc)
    acc.store(c, row * N + col, stride=N, layout=RowMajor)
