"""coopdsl's fastest GEMM per type pair: D = A x B, subgroup-scope cooperative matrices.

A is M x K, B is K x N (both row-major, read as 128-bit vectors), D is M x N of the accumulator type.
``make(a_type, c_type, stages=..)`` builds the kernel for one type pair:

* each workgroup of WG invocations computes a TILE_M x TILE_N block of D; its subgroups form a
  (TILE_M / SG_M) x (TILE_N / SG_N) grid, each holding (SG_M / 16) x (SG_N / 16) accumulators;
* per TILE_K step the next slices of A and B are prefetched from global memory into registers
  (128-bit loads) while the current ones are multiplied from shared memory (rows padded by one vector);
* ``stages=2`` keeps two shared buffers: the prefetched slice is stored into the other buffer after the
  multiply, so one barrier per step is enough (``stages=1`` stores, waits, multiplies, waits);
* workgroups are numbered along a one-dimensional grid and mapped to blocks of D in groups of GROUP_M
  block rows (the "grouped ordering" of Triton's matmul tutorial), so that the workgroups resident at
  the same time share slices of A and B in L2.

Every size is a specialization constant; M, N and K must be multiples of the tile sizes. Dispatch
``grid(M, N, TILE_M, TILE_N)`` workgroups.
"""

from typing import Any, no_type_check

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, u32, vec4


def depth(a_type: Any) -> int:
    """The MulAdd depth (K of one MatA) for A/B components ``a_type``: 32 for 8-bit integers, else 16."""
    return 32 if a_type.nbytes == 1 else 16


def grid(M: int, N: int, TILE_M: int, TILE_N: int) -> tuple[int, int, int]:
    """The dispatch size for an M x N result with TILE_M x TILE_N blocks."""
    return ((M // TILE_M) * (N // TILE_N), 1, 1)


def make(a_type: Any, c_type: Any, stages: int = 1, a_first: bool = True, b_colmajor: bool = False) -> cd.Kernel:
    """The GEMM kernel for A/B components ``a_type`` and accumulator/result components ``c_type``.

    ``stages`` is 1 or 2 shared-memory buffers; ``a_first`` loads every A fragment of a step before
    the B fragments (otherwise every B fragment before the A fragments); ``b_colmajor`` reads B as its
    N x K transpose, row-major (each column of B contiguous: the layout of a linear layer's weights, and
    the one 8-bit MulAdds load fastest on NVIDIA)."""
    epv = 16 // a_type.nbytes  # elements per 128-bit vector
    lk = depth(a_type)
    zero = 0 if c_type.kind == "int" else 0.0
    TA = MatA[a_type, 16, lk]
    TB = MatB[a_type, lk, 16]
    TC = Acc[c_type, 16, 16]

    @cd.kernel(workgroup_size=("WG", 1, 1))
    @no_type_check
    def gemm_best(a: cd.Buffer[vec4[u32]], b: cd.Buffer[vec4[u32]], d: cd.Buffer[c_type],
                  M: cd.Spec[u32] = 256, N: cd.Spec[u32] = 256, K: cd.Spec[u32] = 256,
                  TILE_M: cd.Spec[u32] = 128, TILE_N: cd.Spec[u32] = 128, TILE_K: cd.Spec[u32] = 32,
                  SG_M: cd.Spec[u32] = 64, SG_N: cd.Spec[u32] = 64, WG: cd.Spec[u32] = 128,
                  GROUP_M: cd.Spec[u32] = 8):
        KV = K // epv                # row lengths in vectors
        NV = N // epv
        A_ROW = TILE_K // epv        # vectors per A-slice row
        B_ROW = TILE_K // epv if b_colmajor else TILE_N // epv
        A_STRIDE = A_ROW + 1         # padded shared rows, in vectors
        B_STRIDE = B_ROW + 1
        A_SIZE = TILE_M * A_STRIDE   # one buffer, in vectors
        B_SIZE = (TILE_N if b_colmajor else TILE_K) * B_STRIDE
        A_LOADS = TILE_M * A_ROW // WG
        B_LOADS = TILE_K * TILE_N // epv // WG
        C_ROWS = SG_M // 16
        C_COLS = SG_N // 16
        BLOCKS_M = M // TILE_M
        BLOCKS_N = N // TILE_N

        a_sh = cd.shared(vec4[u32], stages * A_SIZE)
        b_sh = cd.shared(vec4[u32], stages * B_SIZE)
        a_reg = cd.local_array(vec4[u32], A_LOADS)
        b_reg = cd.local_array(vec4[u32], B_LOADS)
        acc = cd.local_array(TC, C_ROWS * C_COLS)
        a_frag = cd.local_array(TA, C_ROWS)
        b_frag = cd.local_array(TB, C_COLS)

        # grouped ordering: GROUP_M block rows are walked column by column
        wid = cd.workgroup_id.x
        in_group = GROUP_M * BLOCKS_N
        first_m = (wid // in_group) * GROUP_M
        group_rows = min(BLOCKS_M - first_m, GROUP_M)
        block_m = first_m + (wid % in_group) % group_rows
        block_n = (wid % in_group) // group_rows
        row0 = block_m * TILE_M
        col0 = block_n * TILE_N

        tid = cd.local_invocation_index
        sg = cd.subgroup_id
        sg_row = (sg // (TILE_N // SG_N)) * SG_M
        sg_col = (sg % (TILE_N // SG_N)) * SG_N

        b_layout = cd.ColumnMajor if b_colmajor else cd.RowMajor

        for t in cd.range(C_ROWS * C_COLS, unroll=True):
            acc[t] = TC.splat(zero)

        for t in cd.range(A_LOADS, unroll=True):
            i = t * WG + tid
            a_reg[t] = a[(row0 + i // A_ROW) * KV + i % A_ROW]
        for t in cd.range(B_LOADS, unroll=True):
            i = t * WG + tid
            if b_colmajor:
                b_reg[t] = b[(col0 + i // B_ROW) * KV + i % B_ROW]
            else:
                b_reg[t] = b[(i // B_ROW) * NV + col0 // epv + i % B_ROW]

        if stages == 2:
            for t in cd.range(A_LOADS, unroll=True):
                i = t * WG + tid
                a_sh[(i // A_ROW) * A_STRIDE + i % A_ROW] = a_reg[t]
            for t in cd.range(B_LOADS, unroll=True):
                i = t * WG + tid
                b_sh[(i // B_ROW) * B_STRIDE + i % B_ROW] = b_reg[t]
            cd.barrier()

        for k0 in range(0, K, stages * TILE_K):
            for s in cd.static_range(stages):
                kc = k0 + s * TILE_K
                more = kc + TILE_K < K
                a_cur = s * A_SIZE
                b_cur = s * B_SIZE
                if stages == 1:
                    cd.barrier()  # everyone is done reading the previous slice
                    for t in cd.range(A_LOADS, unroll=True):
                        i = t * WG + tid
                        a_sh[(i // A_ROW) * A_STRIDE + i % A_ROW] = a_reg[t]
                    for t in cd.range(B_LOADS, unroll=True):
                        i = t * WG + tid
                        b_sh[(i // B_ROW) * B_STRIDE + i % B_ROW] = b_reg[t]
                    cd.barrier()
                # prefetch the next slice while this one is multiplied
                for t in cd.range(A_LOADS, unroll=True):
                    if more:
                        i = t * WG + tid
                        a_reg[t] = a[(row0 + i // A_ROW) * KV + (kc + TILE_K) // epv + i % A_ROW]
                for t in cd.range(B_LOADS, unroll=True):
                    if more:
                        i = t * WG + tid
                        if b_colmajor:
                            b_reg[t] = b[(col0 + i // B_ROW) * KV + (kc + TILE_K) // epv + i % B_ROW]
                        else:
                            b_reg[t] = b[(kc + TILE_K + i // B_ROW) * NV + col0 // epv + i % B_ROW]
                for kk in cd.range(0, TILE_K, lk, unroll=True):
                    if a_first:
                        for i in cd.range(C_ROWS, unroll=True):
                            a_frag[i] = TA.load(a_sh, a_cur + (sg_row + i * 16) * A_STRIDE + kk // epv,
                                                stride=A_STRIDE)
                        for j in cd.range(C_COLS, unroll=True):
                            bj = TB.load(b_sh, b_cur + ((sg_col + j * 16) * B_STRIDE + kk // epv if b_colmajor
                                                       else kk * B_STRIDE + (sg_col + j * 16) // epv), stride=B_STRIDE, layout=b_layout)
                            for i in cd.range(C_ROWS, unroll=True):
                                acc[i * C_COLS + j] = cd.muladd(a_frag[i], bj, acc[i * C_COLS + j])
                    else:
                        for j in cd.range(C_COLS, unroll=True):
                            b_frag[j] = TB.load(b_sh, b_cur + ((sg_col + j * 16) * B_STRIDE + kk // epv if b_colmajor
                                                       else kk * B_STRIDE + (sg_col + j * 16) // epv), stride=B_STRIDE, layout=b_layout)
                        for i in cd.range(C_ROWS, unroll=True):
                            ai = TA.load(a_sh, a_cur + (sg_row + i * 16) * A_STRIDE + kk // epv, stride=A_STRIDE)
                            for j in cd.range(C_COLS, unroll=True):
                                acc[i * C_COLS + j] = cd.muladd(ai, b_frag[j], acc[i * C_COLS + j])
                if stages == 2:
                    if more:  # into the other buffer, read by nobody since the last barrier
                        a_nxt = (1 - s) * A_SIZE
                        b_nxt = (1 - s) * B_SIZE
                        for t in cd.range(A_LOADS, unroll=True):
                            i = t * WG + tid
                            a_sh[a_nxt + (i // A_ROW) * A_STRIDE + i % A_ROW] = a_reg[t]
                        for t in cd.range(B_LOADS, unroll=True):
                            i = t * WG + tid
                            b_sh[b_nxt + (i // B_ROW) * B_STRIDE + i % B_ROW] = b_reg[t]
                    cd.barrier()

        for i in cd.range(C_ROWS, unroll=True):
            for j in cd.range(C_COLS, unroll=True):
                acc[i * C_COLS + j].store(d, (row0 + sg_row + i * 16) * N + col0 + sg_col + j * 16, stride=N)

    return gemm_best
