"""Subgroup-scope GEMM with SPV_KHR_cooperative_matrix: C = A x B.

A is M x K (f16, row-major), B is K x N (f16, row-major), C is M x N (f32).
Each workgroup is one subgroup of 32 invocations and computes one 16 x 16
tile of C, walking K in steps of 16.  M, N, K are specialization constants
(multiples of 16); dispatch (N / 16, M / 16, 1) workgroups.

    coopdsl emit examples/gemm_khr.py -o gemm.spv
"""

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, RowMajor, f16, f32, u32

TILE = 16


@cd.kernel(workgroup_size=(32, 1, 1))
def gemm(a: cd.Buffer[f16], b: cd.Buffer[f16], c: cd.Buffer[f32],
         M: cd.Spec[u32] = 64, N: cd.Spec[u32] = 64, K: cd.Spec[u32] = 64):
    row = cd.workgroup_id.y * TILE
    col = cd.workgroup_id.x * TILE
    acc = Acc[f32, TILE, TILE].splat(0.0)
    for k in range(0, K, TILE):
        ta = MatA[f16, TILE, TILE].load(a, row * K + k, stride=K, layout=RowMajor)
        tb = MatB[f16, TILE, TILE].load(b, k * N + col, stride=N, layout=RowMajor)
        acc = cd.muladd(ta, tb, acc)
    acc.store(c, row * N + col, stride=N, layout=RowMajor)
