"""GEMM for any M, N, K (not only tile multiples): C = A x B, f16 inputs, f32 output.

A is M x K, B is K x N, C is M x N, all row-major; M, N, K are push
constants, so one pipeline serves every size.  Each workgroup is one subgroup
of 32 invocations and computes one 16 x 16 tile of C: the tiles of A and B
are copied into shared memory with bounds checks (zero outside the matrix),
multiplied with cooperative matrices, and the result goes back through shared
memory so only elements inside C are written.  The cooperative-matrix
operations stay in uniform control flow; only the element copies branch.
Dispatch (ceil(N / 16), ceil(M / 16), 1) workgroups.
"""

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f16, f32, u32

T = 16  # tile edge
PER_THREAD = T * T // 32  # elements each invocation copies


@cd.kernel(workgroup_size=(32, 1, 1))
def gemm_any(a: cd.Buffer[f16], b: cd.Buffer[f16], c: cd.Buffer[f32], M: u32, N: u32, K: u32):
    row0 = cd.workgroup_id.y * T
    col0 = cd.workgroup_id.x * T
    lid = cd.local_invocation_index
    sa = cd.shared(f16, T * T)
    sb = cd.shared(f16, T * T)
    sc = cd.shared(f32, T * T)
    acc = Acc[f32, T, T].splat(0.0)
    for k0 in range(0, K, T):
        for t in cd.static_range(PER_THREAD):
            e = lid + t * 32
            r = e // T
            col = e % T
            va = f16(0.0)
            if row0 + r < M and k0 + col < K:
                va = a[(row0 + r) * K + k0 + col]
            sa[e] = va
            vb = f16(0.0)
            if k0 + r < K and col0 + col < N:
                vb = b[(k0 + r) * N + col0 + col]
            sb[e] = vb
        cd.barrier()
        acc = cd.muladd(MatA[f16, T, T].load(sa, 0, stride=T), MatB[f16, T, T].load(sb, 0, stride=T), acc)
        cd.barrier()
    acc.store(sc, 0, stride=T)
    cd.barrier()
    for t in cd.static_range(PER_THREAD):
        e = lid + t * 32
        r = e // T
        col = e % T
        if row0 + r < M and col0 + col < N:
            c[(row0 + r) * N + col0 + col] = sc[e]
