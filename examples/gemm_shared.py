"""The classic high-performance subgroup-scope GEMM: C = alpha * A x B + beta * C.

A is M x K f16 row-major, B is K x N f16 row-major, C is M x N f32 row-major
(read for beta and written).  The kernel sees A and B as arrays of 128-bit
vectors (``vec4[u32]``, 8 halves each), so M, N and K must be multiples of the
tile sizes below and K, N multiples of 8.

Each workgroup computes a TILE_M x TILE_N block of C with
(TILE_M / SG_M) * (TILE_N / SG_N) subgroups of 32 invocations (the kernel
requires that subgroup size: ``subgroup_size=32``); set the workgroup size
spec constant WG to 32 times that (default 128 = 4 subgroups).
Per K step of TILE_K:

* the next slice of A and B is prefetched from global memory into registers
  (128-bit loads) while the current slice is multiplied;
* slices are staged in shared memory, rows padded by one 128-bit vector to
  spread banks;
* each subgroup keeps (SG_M / 16) x (SG_N / 16) accumulator tiles of 16 x 16
  f32 in a local array whose length is a specialization constant, and
  multiplies 16 x 16 x 16 f16 tiles from shared memory.

Every tile size is a specialization constant.  Dispatch (N / TILE_N,
M / TILE_M, 1) workgroups.  alpha and beta are push constants.
"""

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f16, f32, u32, vec4


@cd.kernel(workgroup_size=("WG", 1, 1), subgroup_size=32)
def gemm_shared(a: cd.Buffer[vec4[u32]], b: cd.Buffer[vec4[u32]], c: cd.Buffer[f32], alpha: f32, beta: f32,
                M: cd.Spec[u32] = 256, N: cd.Spec[u32] = 256, K: cd.Spec[u32] = 256,
                TILE_M: cd.Spec[u32] = 128, TILE_N: cd.Spec[u32] = 128, TILE_K: cd.Spec[u32] = 32,
                SG_M: cd.Spec[u32] = 64, SG_N: cd.Spec[u32] = 64, WG: cd.Spec[u32] = 128):
    # sizes in 128-bit vectors (8 halves)
    K8 = K // 8
    N8 = N // 8
    A_ROW = TILE_K // 8          # vectors per A-tile row in global memory
    B_ROW = TILE_N // 8          # vectors per B-tile row in global memory
    A_STRIDE = A_ROW + 1         # padded shared-memory rows
    B_STRIDE = B_ROW + 1
    A_LOADS = TILE_M * A_ROW // WG  # vectors each invocation moves per K step
    B_LOADS = TILE_K * B_ROW // WG
    C_ROWS = SG_M // 16
    C_COLS = SG_N // 16

    a_sh = cd.shared(vec4[u32], TILE_M * A_STRIDE)
    b_sh = cd.shared(vec4[u32], TILE_K * B_STRIDE)
    a_reg = cd.local_array(vec4[u32], A_LOADS)
    b_reg = cd.local_array(vec4[u32], B_LOADS)
    acc = cd.local_array(Acc[f32, 16, 16], C_ROWS * C_COLS)
    b_frag = cd.local_array(MatB[f16, 16, 16], C_COLS)

    tid = cd.local_invocation_index
    row0 = cd.workgroup_id.y * TILE_M
    col0 = cd.workgroup_id.x * TILE_N
    sg = cd.subgroup_id
    sg_row = (sg // (TILE_N // SG_N)) * SG_M
    sg_col = (sg % (TILE_N // SG_N)) * SG_N

    for t in cd.range(C_ROWS * C_COLS, unroll=True):
        acc[t] = Acc[f32, 16, 16].splat(0.0)

    # prefetch the first K slice
    for t in cd.range(A_LOADS, unroll=True):
        i = t * WG + tid
        a_reg[t] = a[(row0 + i // A_ROW) * K8 + i % A_ROW]
    for t in cd.range(B_LOADS, unroll=True):
        i = t * WG + tid
        b_reg[t] = b[(i // B_ROW) * N8 + col0 // 8 + i % B_ROW]

    for k0 in range(0, K, TILE_K):
        cd.barrier()  # everyone is done reading the previous slice
        for t in cd.range(A_LOADS, unroll=True):
            i = t * WG + tid
            a_sh[(i // A_ROW) * A_STRIDE + i % A_ROW] = a_reg[t]
        for t in cd.range(B_LOADS, unroll=True):
            i = t * WG + tid
            b_sh[(i // B_ROW) * B_STRIDE + i % B_ROW] = b_reg[t]
        cd.barrier()
        if k0 + TILE_K < K:  # prefetch the next slice while this one is multiplied
            for t in cd.range(A_LOADS, unroll=True):
                i = t * WG + tid
                a_reg[t] = a[(row0 + i // A_ROW) * K8 + (k0 + TILE_K) // 8 + i % A_ROW]
            for t in cd.range(B_LOADS, unroll=True):
                i = t * WG + tid
                b_reg[t] = b[(k0 + TILE_K + i // B_ROW) * N8 + col0 // 8 + i % B_ROW]
        for kk in cd.range(0, TILE_K, 16, unroll=True):
            for j in cd.range(C_COLS, unroll=True):
                b_frag[j] = MatB[f16, 16, 16].load(b_sh, kk * B_STRIDE + (sg_col + j * 16) // 8, stride=B_STRIDE)
            for i in cd.range(C_ROWS, unroll=True):
                a_frag = MatA[f16, 16, 16].load(a_sh, (sg_row + i * 16) * A_STRIDE + kk // 8, stride=A_STRIDE)
                for j in cd.range(C_COLS, unroll=True):
                    acc[i * C_COLS + j] = cd.muladd(a_frag, b_frag[j], acc[i * C_COLS + j])

    for i in cd.range(C_ROWS, unroll=True):
        for j in cd.range(C_COLS, unroll=True):
            offset = (row0 + sg_row + i * 16) * N + col0 + sg_col + j * 16
            old = Acc[f32, 16, 16].load(c, offset, stride=N)
            result = acc[i * C_COLS + j] * alpha + old * beta
            result.store(c, offset, stride=N)
