"""Subgroup-scope GEMM with bf16 inputs (SPV_KHR_bfloat16): C = A x B, f32 accumulate.

A is M x K (bf16, row-major), B is K x N (bf16, row-major), C is M x N (f32).
bf16 values are carried in numpy as uint16 bit patterns (the upper half of an
f32).  Each workgroup (one subgroup of 32) computes a 16 x 16 tile of C;
dispatch (N / 16, M / 16, 1).  M, N, K are specialization constants,
multiples of 16.
"""

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, RowMajor, bf16, f32, u32


@cd.kernel(workgroup_size=(32, 1, 1))
def gemm_bf16(a: cd.Buffer[bf16], b: cd.Buffer[bf16], c: cd.Buffer[f32],
              M: cd.Spec[u32] = 64, N: cd.Spec[u32] = 64, K: cd.Spec[u32] = 64):
    row = cd.workgroup_id.y * 16
    col = cd.workgroup_id.x * 16
    acc = Acc[f32, 16, 16].splat(0.0)
    for k in range(0, K, 16):
        ta = MatA[bf16, 16, 16].load(a, row * K + k, stride=K, layout=RowMajor)
        tb = MatB[bf16, 16, 16].load(b, k * N + col, stride=N, layout=RowMajor)
        acc = cd.muladd(ta, tb, acc)
    acc.store(c, row * N + col, stride=N, layout=RowMajor)
