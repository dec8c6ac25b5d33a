"""A tiled GEMM for every type pair: D = A x B with subgroup-scope cooperative matrices (coopdsl's fastest).

A is M x K row-major; B is K x N row-major, or (``make(..., b_kmajor=True)``) given as its N x K
transpose, row-major, so that each column of B is contiguous (the layout of a linear layer's weights,
and the one NVIDIA loads 8-bit B fragments fastest from); D is M x N of the accumulator type. A and B
are read as 128-bit vectors. ``make(a_type, c_type)`` builds the kernel for one type pair:

* each workgroup of WG invocations computes a TILE_M x TILE_N block of D; its subgroups form a
  (TILE_M / SG_M) x (TILE_N / SG_N) grid, each holding (SG_M / 16) x (SG_N / LN) accumulators of
  16 x LN (LN, a Const, is 16 or 8; a row-major B needs LN to be a whole number of 128-bit vectors, so
  8-bit inputs with a row-major B take LN=16);
* per TILE_K step the next slices of A and B are prefetched from global memory into registers
  (128-bit loads, each guarded by its own "not the last step" test, which lets the driver interleave
  them with the multiplies) while the current ones are multiplied from shared memory, rows padded by
  one vector against bank conflicts;
* ``A_FIRST=1`` (a Const) loads a step's A fragments first and streams the B fragments through them,
  ``A_FIRST=0`` the other way round; ``STAGES=2`` keeps two shared buffers (alternating) and stores the
  prefetched slice into the idle one after the multiply, one barrier a step (``STAGES=1``: store,
  wait, multiply, wait);
* workgroups are numbered along a one-dimensional grid and mapped to blocks of D in groups of GROUP_M
  block rows walked column by column (the grouped ordering of Triton's matmul tutorial), so that the
  workgroups resident together share slices of A and B in L2.

The subgroups are of 32 invocations: WG is 32 times the number of subgroup blocks (:func:`config` sets it),
and the kernel requires that size (``subgroup_size=32``, as do ``coopdsl.ops.gemm``'s general kernel and
``examples/gemm_shared.py``): the runtime requests it from the driver (NVIDIA runs only 32; RADV would
otherwise choose wave64) and refuses a device that cannot run it.

Sizes are specialization constants: N and K multiples of TILE_N and TILE_K, and M a multiple of TILE_M,
or any M with ``make(..., edge_m=True)``: the rows of A past M are read as row M - 1 (clamped, branch-free:
row i of D depends only on row i of A), the tiles wholly past row M - 1 are not written, and the one
that straddles it goes through shared memory, element by element up to row M - 1 (the token count of a
linear layer is rarely a multiple of 128; its other two sizes usually are). Dispatch
``grid(M, N, TILE_M, TILE_N)`` workgroups. :func:`config` builds a ``coopdsl.autotune.Config`` of these
parameters. ``coopdsl.ops.matmul`` uses this kernel when N and K are multiples of a tile;
``benchmarks/best_gemm/`` measures it per type pair.
"""

from typing import Any, cast, no_type_check

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, u32, vec4
from coopdsl.autotune import Config

SHARED_LIMIT = 49152  # bytes of shared memory per workgroup: the H100's Vulkan limit (and the common one)


def config(tm: int, tn: int, tk: int, sgm: int, sgn: int, group: int = 8, a_first: int = 1, stages: int = 1,
           ln: int = 16) -> Config:
    """The Config of a TILE_M x TILE_N x TILE_K block computed by subgroups of SG_M x SG_N (WG follows)."""
    return Config(TILE_M=tm, TILE_N=tn, TILE_K=tk, SG_M=sgm, SG_N=sgn, WG=32 * (tm // sgm) * (tn // sgn),
                  GROUP_M=group, A_FIRST=a_first, STAGES=stages, LN=ln)


CONSTS = ("A_FIRST", "STAGES", "LN")  # the configuration values that are Const parameters (the rest are Spec)


def specialized(kernel: cd.Kernel, c: Config) -> tuple[cd.Kernel, dict[str, int]]:
    """(``kernel`` specialized with the Const values of configuration ``c``, its Spec values for the launch),
    as ``coopdsl.autotune.Autotuner.variant`` splits them."""
    v = c.values
    return kernel.specialize(**{n: v[n] for n in CONSTS}), {n: x for n, x in v.items() if n not in CONSTS}


def depth(a_type: Any) -> int:
    """The MulAdd depth (K of one MatA) for A/B components ``a_type``: 32 for 8-bit integers, else 16."""
    return 32 if a_type.nbytes == 1 else 16


def grid(M: int, N: int, TILE_M: int, TILE_N: int) -> tuple[int, int, int]:
    """The dispatch size for an M x N result with TILE_M x TILE_N blocks (the last block row may be partial)."""
    return ((-(-M // TILE_M)) * (N // TILE_N), 1, 1)


def shared_bytes(a_type: Any, c: dict[str, Any], b_kmajor: bool = False, edge_m: bool = False,
                 c_bytes: int = 4) -> int:
    """The shared memory configuration ``c`` (TILE_*, STAGES) uses, in bytes (``edge_m``: with the staging of
    one 16 x LN accumulator tile of ``c_bytes`` components per subgroup)."""
    epv = 16 // a_type.nbytes
    a_rows, a_len = c["TILE_M"], c["TILE_K"]
    b_rows, b_len = (c["TILE_N"], c["TILE_K"]) if b_kmajor else (c["TILE_K"], c["TILE_N"])
    staging = c["WG"] // 32 * 16 * c.get("LN", 16) * c_bytes if edge_m else 0
    return cast(int, 16 * c.get("STAGES", 1) * (a_rows * (a_len // epv + 1) + b_rows * (b_len // epv + 1)) + staging)


def make(a_type: Any, c_type: Any, b_kmajor: bool = False, edge_m: bool = False) -> cd.Kernel:
    """The GEMM kernel for A/B components ``a_type`` and accumulator/result components ``c_type``;
    ``b_kmajor``: B is given as its N x K transpose (row-major); ``edge_m``: M need not be a multiple of
    TILE_M (see the module's docstring)."""
    epv = 16 // a_type.nbytes  # elements per 128-bit vector
    lk = depth(a_type)
    zero = 0 if c_type.is_int else 0.0
    TA = MatA[a_type, 16, lk]
    b_layout = cd.ColumnMajor if b_kmajor else cd.RowMajor

    @cd.kernel(workgroup_size=("WG", 1, 1), subgroup_size=32)
    @no_type_check
    def gemm_tiled(a: cd.Buffer[vec4[u32]], b: cd.Buffer[vec4[u32]], d: cd.Buffer[c_type],
                   M: cd.Spec[u32] = 256, N: cd.Spec[u32] = 256, K: cd.Spec[u32] = 256,
                   TILE_M: cd.Spec[u32] = 128, TILE_N: cd.Spec[u32] = 128, TILE_K: cd.Spec[u32] = 32,
                   SG_M: cd.Spec[u32] = 64, SG_N: cd.Spec[u32] = 64, WG: cd.Spec[u32] = 128,
                   GROUP_M: cd.Spec[u32] = 8, A_FIRST: cd.Const[int] = 1, STAGES: cd.Const[int] = 1,
                   LN: cd.Const[int] = 16):
        TB = MatB[a_type, lk, LN]
        TC = Acc[c_type, 16, LN]
        KV = K // epv                # row lengths in vectors
        NV = N // epv
        A_ROW = TILE_K // epv        # vectors per row of an A slice, and of a B slice
        B_ROW = TILE_K // epv if b_kmajor else TILE_N // epv
        A_STRIDE = A_ROW + 1         # padded shared rows, in vectors
        B_STRIDE = B_ROW + 1
        A_SIZE = TILE_M * A_STRIDE   # one shared buffer, in vectors
        B_SIZE = (TILE_N if b_kmajor else TILE_K) * B_STRIDE
        A_LOADS = TILE_M * A_ROW // WG  # vectors each invocation moves per step
        B_LOADS = TILE_K * TILE_N // epv // WG
        C_ROWS = SG_M // 16
        C_COLS = SG_N // LN
        BLOCKS_M = M // TILE_M
        BLOCKS_N = N // TILE_N
        if edge_m:
            BLOCKS_M = (M + TILE_M - 1) // TILE_M  # the last block row may be partial
            LAST_ROW = M - 1                       # rows of A past M read this one

        a_sh = cd.shared(vec4[u32], STAGES * A_SIZE)
        b_sh = cd.shared(vec4[u32], STAGES * B_SIZE)
        a_reg = cd.local_array(vec4[u32], A_LOADS)
        b_reg = cd.local_array(vec4[u32], B_LOADS)
        acc = cd.local_array(TC, C_ROWS * C_COLS)
        a_frag = cd.local_array(TA, C_ROWS)
        b_frag = cd.local_array(TB, C_COLS)
        if edge_m:
            stage = cd.shared(c_type, (WG // 32) * 16 * LN)  # one accumulator tile per subgroup

        # grouped ordering: GROUP_M block rows are walked column by column
        wid = cd.workgroup_id.x
        in_group = GROUP_M * BLOCKS_N
        first_m = (wid // in_group) * GROUP_M
        group_rows = min(BLOCKS_M - first_m, GROUP_M)
        row0 = (first_m + (wid % in_group) % group_rows) * TILE_M
        col0 = ((wid % in_group) // group_rows) * TILE_N

        tid = cd.local_invocation_index
        sg = cd.subgroup_id
        sg_row = (sg // (TILE_N // SG_N)) * SG_M
        sg_col = (sg % (TILE_N // SG_N)) * SG_N

        for t in cd.range(C_ROWS * C_COLS, unroll=True):
            acc[t] = TC.splat(zero)

        for t in cd.range(A_LOADS, unroll=True):
            i = t * WG + tid
            row = row0 + i // A_ROW
            if edge_m:
                row = min(row, LAST_ROW)
            a_reg[t] = a[row * KV + i % A_ROW]
        for t in cd.range(B_LOADS, unroll=True):
            i = t * WG + tid
            if b_kmajor:
                b_reg[t] = b[(col0 + i // B_ROW) * KV + i % B_ROW]
            else:
                b_reg[t] = b[(i // B_ROW) * NV + col0 // epv + i % B_ROW]

        if STAGES == 2:
            for t in cd.range(A_LOADS, unroll=True):
                i = t * WG + tid
                a_sh[(i // A_ROW) * A_STRIDE + i % A_ROW] = a_reg[t]
            for t in cd.range(B_LOADS, unroll=True):
                i = t * WG + tid
                b_sh[(i // B_ROW) * B_STRIDE + i % B_ROW] = b_reg[t]
            cd.barrier()

        for k0 in range(0, K, TILE_K):
            more = k0 + TILE_K < K
            a_cur = 0   # the shared buffer multiplied in this step (STAGES=2: alternating)
            b_cur = 0
            if STAGES == 2:
                a_cur = ((k0 // TILE_K) % 2) * A_SIZE
                b_cur = ((k0 // TILE_K) % 2) * B_SIZE
            else:
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
                    row = row0 + i // A_ROW
                    if edge_m:
                        row = min(row, LAST_ROW)
                    a_reg[t] = a[row * KV + (k0 + TILE_K) // epv + i % A_ROW]
            for t in cd.range(B_LOADS, unroll=True):
                if more:
                    i = t * WG + tid
                    if b_kmajor:
                        b_reg[t] = b[(col0 + i // B_ROW) * KV + (k0 + TILE_K) // epv + i % B_ROW]
                    else:
                        b_reg[t] = b[(k0 + TILE_K + i // B_ROW) * NV + col0 // epv + i % B_ROW]
            for kk in cd.range(0, TILE_K, lk, unroll=True):
                if A_FIRST == 1:
                    for i in cd.range(C_ROWS, unroll=True):
                        a_frag[i] = TA.load(a_sh, a_cur + (sg_row + i * 16) * A_STRIDE + kk // epv, stride=A_STRIDE)
                    for j in cd.range(C_COLS, unroll=True):
                        bj = TB.load(b_sh, b_cur + ((sg_col + j * LN) * B_STRIDE + kk // epv if b_kmajor
                                                    else kk * B_STRIDE + (sg_col + j * LN) // epv),
                                     stride=B_STRIDE, layout=b_layout)
                        for i in cd.range(C_ROWS, unroll=True):
                            acc[i * C_COLS + j] = cd.muladd(a_frag[i], bj, acc[i * C_COLS + j])
                else:
                    for j in cd.range(C_COLS, unroll=True):
                        b_frag[j] = TB.load(b_sh, b_cur + ((sg_col + j * LN) * B_STRIDE + kk // epv if b_kmajor
                                                           else kk * B_STRIDE + (sg_col + j * LN) // epv),
                                            stride=B_STRIDE, layout=b_layout)
                    for i in cd.range(C_ROWS, unroll=True):
                        ai = TA.load(a_sh, a_cur + (sg_row + i * 16) * A_STRIDE + kk // epv, stride=A_STRIDE)
                        for j in cd.range(C_COLS, unroll=True):
                            acc[i * C_COLS + j] = cd.muladd(ai, b_frag[j], acc[i * C_COLS + j])
            if STAGES == 2:
                if more:  # into the idle buffer, which nobody has read since the last barrier
                    for t in cd.range(A_LOADS, unroll=True):
                        i = t * WG + tid
                        a_sh[A_SIZE - a_cur + (i // A_ROW) * A_STRIDE + i % A_ROW] = a_reg[t]
                    for t in cd.range(B_LOADS, unroll=True):
                        i = t * WG + tid
                        b_sh[B_SIZE - b_cur + (i // B_ROW) * B_STRIDE + i % B_ROW] = b_reg[t]
                cd.barrier()

        for i in cd.range(C_ROWS, unroll=True):
            for j in cd.range(C_COLS, unroll=True):
                if edge_m:
                    r = row0 + sg_row + i * 16  # the tile's first row (the same in the whole subgroup)
                    if r + 16 <= M:
                        acc[i * C_COLS + j].store(d, r * N + col0 + sg_col + j * LN, stride=N)
                    elif r < M:  # straddles row M: through shared memory, up to row M - 1
                        base = sg * (16 * LN)
                        acc[i * C_COLS + j].store(stage, base, stride=LN)
                        cd.control_barrier(cd.Subgroup, cd.Subgroup, ("AcquireRelease", "WorkgroupMemory"))
                        for t in cd.range(16 * LN // 32, unroll=True):
                            e = t * 32 + cd.subgroup_invocation_id
                            if r + e // LN < M:
                                d[(r + e // LN) * N + col0 + sg_col + j * LN + e % LN] = stage[base + e]
                        cd.control_barrier(cd.Subgroup, cd.Subgroup, ("AcquireRelease", "WorkgroupMemory"))
                else:
                    acc[i * C_COLS + j].store(d, (row0 + sg_row + i * 16) * N + col0 + sg_col + j * LN, stride=N)

    return cast(cd.Kernel, gemm_tiled)
