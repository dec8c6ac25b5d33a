"""A coopdsl port of vk_cooperative_matrix_perf's ``shmem.comp``, keeping its interface exactly.

The peer harness (jeffbolznv/vk_cooperative_matrix_perf, run with ``--shmem``)
loads ``shaders/shmem<A>_<C>.spv`` and drives it with:

* descriptor set 0, binding 0: a uniform block of four buffer device addresses
  (A and B read as ``uvec4`` arrays, C and the output D as arrays of C's type);
* specialization constants 0..21 with the same ids and meanings (lM, lN, lK,
  TILE_M, TILE_N, TILE_K, K, the four strides, alpha, beta, BColMajor, the A/B
  tile row lengths and row counts, the workgroup size (``local_size_x_id = 18``),
  M, N, and the subgroup size);
* entry point ``main``; dispatch (N / TILE_N, M / TILE_M, 1).

The algorithm is the peer's: each workgroup of 8 subgroups (4 wide, 2 high)
computes a TILE_M x TILE_N block of D = alpha * A x B + beta * C, staging
TILE_K slices of A and B through padded shared memory with 128-bit copies and
register prefetch of the next slice, and each subgroup accumulating
(TILE_M / 2 / lM) x (TILE_N / 4 / lN) accumulator tiles.  ``variant(a, c)``
builds the kernel for one (A/B, C/D) component-type pair.
"""

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, bf16, e4m3, e5m2, f16, f32, i8, i32, u8, u32, vec4

# harness file-name tokens -> (A/B component type, C/D component type)
VARIANTS = {
    ("fp16", "fp16"): (f16, f16),
    ("fp16", "fp32"): (f16, f32),
    ("bf16", "fp32"): (bf16, f32),
    ("s8", "s32"): (i8, i32),
    ("u8", "u32"): (u8, u32),
    # fp8 inputs (VK_EXT_shader_float8): the harness sweeps them where the device offers them
    ("e5m2", "fp16"): (e5m2, f16),
    ("e4m3", "fp16"): (e4m3, f16),
    ("e5m2", "fp32"): (e5m2, f32),
    ("e4m3", "fp32"): (e4m3, f32),
}

SG_WIDE, SG_HIGH = 4, 2  # subgroups per workgroup, across and down

# Code shape matters to the driver's compiler (measured on the H100, docs/benchmarks.md), so the port keeps
# the GLSL's shape where the driver was seen to react to it; each choice is a form of FORMS, and
# COOPDSL_PEER_OPTS (comma-separated) or variant(..., opts) picks other ones:
# * "not last" is tested inside each unrolled prefetch iteration, as the GLSL does ("outer_if": one branch
#   around the prefetch loops, which cost up to 25%: f16->f16 256x256 tiles, int8 with column-major B);
# * "func" (default): every offset through a device function, as the GLSL's coordToOffset (OpFunctionCall);
#   without it the offsets are inlined arithmetic, 7% slower at f16->f32 128x256x16 with row-major B and
#   3-4% for int8 with column-major B;
# * "private" (default): the accumulators in a module-scope array (OpVariable Private), as the GLSL's global
#   `result`; without it (a Function array) f16->f32 256x128x16 with column-major B runs 5% slower;
# * "visibility": shared-memory accesses made available/visible at Workgroup scope, as glslang writes them;
#   "writeback": alpha * result + beta * C stored back into the accumulator array before the store to D, as
#   the GLSL does; "aligned": the C load and D store declared 16-byte aligned (glslang's buffer_reference
#   default). None of the three changed anything measurable.
# * "glsl_order" (default): statements in the GLSL's order where Python's differs: A's base offset and loads
#   before B's, each row index computed before the `not last` test, a shared-memory element index before the
#   value stored there. Without it f16->f16 16x8x16 256x128x32 with row-major B runs 4% slower and 16x16x16
#   256x256x32 with column-major B 3% (docs/benchmarks.md, "which code-shape differences");
# * "reread" (default): the invocation index read from its built-in at each use, as the GLSL reads
#   gl_LocalInvocationID.x, instead of once into a value.
# * "grouped" (not the GLSL's algorithm): workgroups take their blocks of D in groups of GROUP_M block rows
#   walked column by column (Triton's grouped ordering, as coopdsl/ops/gemm_tiled.py does) instead of the
#   dispatch's row-major order, so that the blocks in flight at once share more of A and B in L2. Measured on the
#   harness: -7% to +6.5% depending on the configuration (docs/benchmarks.md, "ours+grouped"), so not a default.
DEFAULT_FORMS = ("func", "private", "glsl_order", "reread")
_ENV = __import__("os").environ.get("COOPDSL_PEER_OPTS")
OPTS = set(filter(None, _ENV.split(","))) if _ENV is not None else set(DEFAULT_FORMS)
FORMS = ("outer_if", "visibility", "func", "private", "writeback", "aligned", "glsl_order", "reread", "grouped")
GROUP_M = 8  # block rows per group of the "grouped" form


@cd.func
def coord_to_offset(i, j, stride, col_major):
    """The GLSL's ``coordToOffset``: element (i, j) of a matrix with ``stride``, row- or column-major."""
    return stride * j + i if col_major else stride * i + j


def variant(a_type, c_type, opts=None) -> cd.Kernel:
    """The shmem kernel for A/B components ``a_type`` and C/D components ``c_type``; ``opts`` names its
    code-shape forms of :data:`FORMS` (default: ``COOPDSL_PEER_OPTS`` when set, else :data:`DEFAULT_FORMS`)."""
    opts = OPTS if opts is None else set(opts)
    if opts - set(FORMS):
        raise ValueError(f"unknown forms {sorted(opts - set(FORMS))}; known: {', '.join(FORMS)}")
    INNER_IF, VISIBILITY, FUNC, PRIVATE, WRITEBACK = ("outer_if" not in opts, "visibility" in opts,
                                                      "func" in opts, "private" in opts, "writeback" in opts)
    CD_ALIGN = 16 if "aligned" in opts else None
    ORDER, REREAD, GROUPED = "glsl_order" in opts, "reread" in opts, "grouped" in opts
    if (ORDER or REREAD) and not (FUNC and INNER_IF):
        raise ValueError("the glsl_order and reread forms need the func form and the per-row test (no outer_if)")
    epv = 16 // a_type.nbytes  # A/B elements per 128-bit vector

    @cd.struct
    class Params:
        inputAV4: cd.Ptr[vec4[u32]]
        inputBV4: cd.Ptr[vec4[u32]]
        inputC: cd.Ptr[c_type]
        outputO: cd.Ptr[c_type]

    @cd.kernel(workgroup_size=("WG", 1, 1))
    def main(params: cd.Uniform[Params],
             lM: cd.Spec[u32, 0] = 1, lN: cd.Spec[u32, 1] = 1, lK: cd.Spec[u32, 2] = 1,
             TILE_M: cd.Spec[u32, 3] = 1, TILE_N: cd.Spec[u32, 4] = 1, TILE_K: cd.Spec[u32, 5] = 1,
             K: cd.Spec[u32, 6] = 1, strideA: cd.Spec[u32, 7] = 1, strideB: cd.Spec[u32, 8] = 1,
             strideC: cd.Spec[u32, 9] = 1, strideD: cd.Spec[u32, 10] = 1,
             alpha: cd.Spec[f32, 11] = 1.0, beta: cd.Spec[f32, 12] = 1.0, BColMajor: cd.Spec[cd.boolean, 13] = False,
             A_ROW_LEN: cd.Spec[u32, 14] = 1, A_NUM_ROWS: cd.Spec[u32, 15] = 1,
             B_ROW_LEN: cd.Spec[u32, 16] = 1, B_NUM_ROWS: cd.Spec[u32, 17] = 1,
             WG: cd.Spec[u32, 18] = 256, M: cd.Spec[u32, 19] = 1, N: cd.Spec[u32, 20] = 1,
             SUBGROUP_SIZE: cd.Spec[u32, 21] = 32):
        INVOCATIONS = SUBGROUP_SIZE * (SG_WIDE * SG_HIGH)
        C_ROWS = TILE_M // SG_HIGH // lM
        C_COLS = TILE_N // SG_WIDE // lN
        STRIDE_A_SH = A_ROW_LEN + epv  # rows padded by one vector against bank conflicts
        STRIDE_B_SH = B_ROW_LEN + epv
        INVS_PER_ROW_A = A_ROW_LEN // epv
        INVS_PER_ROW_B = B_ROW_LEN // epv
        A_STEP = INVOCATIONS // INVS_PER_ROW_A  # rows one pass of the workgroup copies
        B_STEP = INVOCATIONS // INVS_PER_ROW_B
        b_layout = u32(1) if BColMajor else u32(0)  # a specialization-constant layout

        a_sh = cd.shared(vec4[u32], A_NUM_ROWS * STRIDE_A_SH // epv)
        b_sh = cd.shared(vec4[u32], B_NUM_ROWS * STRIDE_B_SH // epv)
        temp_a = cd.local_array(vec4[u32], A_NUM_ROWS // A_STEP)
        temp_b = cd.local_array(vec4[u32], B_NUM_ROWS // B_STEP)
        if PRIVATE:
            result = cd.private_array(Acc[c_type, lM, lN], C_ROWS * C_COLS)
        else:
            result = cd.local_array(Acc[c_type, lM, lN], C_ROWS * C_COLS)
        mat_a = cd.local_array(MatA[a_type, lM, lK], C_ROWS)
        mat_c = cd.local_array(Acc[c_type, lM, lN], C_COLS)

        a_ptr = params.inputAV4
        b_ptr = params.inputBV4
        c_ptr = params.inputC
        d_ptr = params.outputO
        tid = cd.local_invocation_id.x
        if GROUPED:  # the dispatch is (N / TILE_N, M / TILE_M): number it in rows, walk groups of rows by column
            blocks_n = cd.num_workgroups.x
            wid = cd.workgroup_id.y * blocks_n + cd.workgroup_id.x
            in_group = GROUP_M * blocks_n
            first_m = (wid // in_group) * GROUP_M
            group_rows = min(cd.num_workgroups.y - first_m, GROUP_M)
            tile_x = (wid % in_group) // group_rows
            tile_y = first_m + (wid % in_group) % group_rows
        else:
            tile_x = cd.workgroup_id.x
            tile_y = cd.workgroup_id.y
        warp_x = cd.subgroup_id % SG_WIDE
        warp_y = cd.subgroup_id // SG_WIDE

        for t in cd.range(C_ROWS * C_COLS, unroll=True):
            result[t] = Acc[c_type, lM, lN].splat(0)

        atilek = epv * ((cd.local_invocation_id.x if REREAD else tid) % INVS_PER_ROW_A)
        if not ORDER:
            btilej = epv * (tid % INVS_PER_ROW_B)
        if FUNC:
            gabase = coord_to_offset(TILE_M * tile_y, u32(0), strideA, False)
            if not ORDER:
                gbbase = coord_to_offset(u32(0), TILE_N * tile_x, strideB, BColMajor)
        else:
            gabase = strideA * (TILE_M * tile_y)
            gbbase = strideB * (TILE_N * tile_x) if BColMajor else TILE_N * tile_x
        for i in cd.range(0, A_NUM_ROWS, A_STEP, unroll=True):
            if ORDER:
                atilei = i + cd.local_invocation_id.x // INVS_PER_ROW_A if REREAD else i + tid // INVS_PER_ROW_A
                slot = i // A_STEP
                temp_a[slot] = a_ptr[(gabase + strideA * atilei + atilek) // epv]
            else:
                temp_a[i // A_STEP] = a_ptr[(gabase + strideA * (i + tid // INVS_PER_ROW_A) + atilek) // epv]
        if ORDER:
            btilej = epv * ((cd.local_invocation_id.x if REREAD else tid) % INVS_PER_ROW_B)
            gbbase = coord_to_offset(u32(0), TILE_N * tile_x, strideB, BColMajor)
        for k in cd.range(0, B_NUM_ROWS, B_STEP, unroll=True):
            if ORDER:
                btilek = k + cd.local_invocation_id.x // INVS_PER_ROW_B if REREAD else k + tid // INVS_PER_ROW_B
                slot = k // B_STEP
                temp_b[slot] = b_ptr[(gbbase + strideB * btilek + btilej) // epv]
            else:
                temp_b[k // B_STEP] = b_ptr[(gbbase + strideB * (k + tid // INVS_PER_ROW_B) + btilej) // epv]

        for chunk_k in range(0, K, TILE_K):
            last = chunk_k + TILE_K >= K
            cd.barrier()  # everyone finished reading shared memory in the last iteration
            for i in cd.range(0, A_NUM_ROWS, A_STEP, unroll=True):
                if ORDER:  # the GLSL's order: the row, the element index, then the value
                    si = i + cd.local_invocation_id.x // INVS_PER_ROW_A if REREAD else i + tid // INVS_PER_ROW_A
                    at = (STRIDE_A_SH * si + atilek) // epv
                    a_sh[at] = temp_a[i // A_STEP]
                elif VISIBILITY:
                    cd.store_element(a_sh, (STRIDE_A_SH * (i + tid // INVS_PER_ROW_A) + atilek) // epv,
                                     temp_a[i // A_STEP], available=cd.Workgroup)
                else:
                    a_sh[(STRIDE_A_SH * (i + tid // INVS_PER_ROW_A) + atilek) // epv] = temp_a[i // A_STEP]
            for k in cd.range(0, B_NUM_ROWS, B_STEP, unroll=True):
                if ORDER:
                    sk = k + cd.local_invocation_id.x // INVS_PER_ROW_B if REREAD else k + tid // INVS_PER_ROW_B
                    at = (STRIDE_B_SH * sk + btilej) // epv
                    b_sh[at] = temp_b[k // B_STEP]
                elif VISIBILITY:
                    cd.store_element(b_sh, (STRIDE_B_SH * (k + tid // INVS_PER_ROW_B) + btilej) // epv,
                                     temp_b[k // B_STEP], available=cd.Workgroup)
                else:
                    b_sh[(STRIDE_B_SH * (k + tid // INVS_PER_ROW_B) + btilej) // epv] = temp_b[k // B_STEP]
            cd.barrier()

            # prefetch the next slice while this one is multiplied
            if ORDER:  # the GLSL's order: A's base, A's loads, B's base, B's loads; each row index before the test
                gabase = coord_to_offset(TILE_M * tile_y, chunk_k + TILE_K,
                                         strideA, False)
                for i in cd.range(0, A_NUM_ROWS, A_STEP, unroll=True):
                    atilei = i + cd.local_invocation_id.x // INVS_PER_ROW_A if REREAD else i + tid // INVS_PER_ROW_A
                    if not last:
                        slot = i // A_STEP
                        temp_a[slot] = a_ptr[(gabase + strideA * atilei + atilek) // epv]
                gbbase = coord_to_offset(chunk_k + TILE_K, TILE_N * tile_x,
                                         strideB, BColMajor)
                for k in cd.range(0, B_NUM_ROWS, B_STEP, unroll=True):
                    btilek = k + cd.local_invocation_id.x // INVS_PER_ROW_B if REREAD else k + tid // INVS_PER_ROW_B
                    if not last:
                        slot = k // B_STEP
                        temp_b[slot] = b_ptr[(gbbase + strideB * btilek + btilej) // epv]
            else:
                if FUNC:
                    gabase = coord_to_offset(TILE_M * tile_y, chunk_k + TILE_K, strideA, False)
                    gbbase = coord_to_offset(chunk_k + TILE_K, TILE_N * tile_x, strideB, BColMajor)
                else:
                    gabase = strideA * (TILE_M * tile_y) + chunk_k + TILE_K
                    gbbase = strideB * (TILE_N * tile_x) + chunk_k + TILE_K if BColMajor else \
                        strideB * (chunk_k + TILE_K) + TILE_N * tile_x
                if INNER_IF:
                    for i in cd.range(0, A_NUM_ROWS, A_STEP, unroll=True):
                        if not last:
                            temp_a[i // A_STEP] = a_ptr[(gabase + strideA * (i + tid // INVS_PER_ROW_A) + atilek)
                                                        // epv]
                    for k in cd.range(0, B_NUM_ROWS, B_STEP, unroll=True):
                        if not last:
                            temp_b[k // B_STEP] = b_ptr[(gbbase + strideB * (k + tid // INVS_PER_ROW_B) + btilej)
                                                        // epv]
                elif not last:
                    for i in cd.range(0, A_NUM_ROWS, A_STEP, unroll=True):
                        temp_a[i // A_STEP] = a_ptr[(gabase + strideA * (i + tid // INVS_PER_ROW_A) + atilek) // epv]
                    for k in cd.range(0, B_NUM_ROWS, B_STEP, unroll=True):
                        temp_b[k // B_STEP] = b_ptr[(gbbase + strideB * (k + tid // INVS_PER_ROW_B) + btilej) // epv]

            for kk in cd.range(TILE_K // lK, unroll=True):
                sk = lK * kk
                for i in cd.range(C_ROWS, unroll=True):
                    si = lM * (C_ROWS * warp_y + i)
                    if FUNC:
                        mat_a[i] = MatA[a_type, lM, lK].load(
                            a_sh, coord_to_offset(si, sk, STRIDE_A_SH, False) // epv, stride=STRIDE_A_SH // epv)
                    elif VISIBILITY:
                        mat_a[i] = MatA[a_type, lM, lK].load(a_sh, (STRIDE_A_SH * si + sk) // epv,
                                                              stride=STRIDE_A_SH // epv, visible=cd.Workgroup)
                    else:
                        mat_a[i] = MatA[a_type, lM, lK].load(a_sh, (STRIDE_A_SH * si + sk) // epv,
                                                              stride=STRIDE_A_SH // epv)
                for j in cd.range(C_COLS, unroll=True):
                    sj = lN * (C_COLS * warp_x + j)
                    if FUNC:
                        b_off = coord_to_offset(sk, sj, STRIDE_B_SH, BColMajor)
                    else:
                        b_off = STRIDE_B_SH * sj + sk if BColMajor else STRIDE_B_SH * sk + sj
                    if VISIBILITY:
                        mat_b = MatB[a_type, lK, lN].load(b_sh, b_off // epv, stride=STRIDE_B_SH // epv,
                                                           layout=b_layout, visible=cd.Workgroup)
                    else:
                        mat_b = MatB[a_type, lK, lN].load(b_sh, b_off // epv, stride=STRIDE_B_SH // epv,
                                                           layout=b_layout)
                    for i in cd.range(C_ROWS, unroll=True):
                        result[i * C_COLS + j] = cd.muladd(mat_a[i], mat_b, result[i * C_COLS + j])

        for i in cd.range(C_ROWS, unroll=True):
            gi = TILE_M * tile_y + lM * (C_ROWS * warp_y + i)
            for j in cd.range(C_COLS, unroll=True):
                gj = TILE_N * tile_x + lN * (C_COLS * warp_x + j)
                c_off = coord_to_offset(gi, gj, strideC, False) if FUNC else strideC * gi + gj
                mat_c[j] = Acc[c_type, lM, lN].load(c_ptr, c_off, stride=strideC, aligned=CD_ALIGN)
            for j in cd.range(C_COLS, unroll=True):
                gj = TILE_N * tile_x + lN * (C_COLS * warp_x + j)
                out = result[i * C_COLS + j] * c_type(alpha) + mat_c[j] * c_type(beta)
                if WRITEBACK:
                    result[i * C_COLS + j] = out
                    out = result[i * C_COLS + j]
                out.store(d_ptr, coord_to_offset(gi, gj, strideD, False) if FUNC else strideD * gi + gj, stride=strideD,
                          aligned=CD_ALIGN)

    return main


def emit_all(folder) -> list[str]:
    """Write ``shmem<A>_<C>.spv`` for every variant into ``folder``; returns the file names."""
    from benchmarks.peer_gemm._emit import emit_variants

    return emit_variants("shmem", VARIANTS, variant, folder)


if __name__ == "__main__":
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script: the repository's root

    print("\n".join(emit_all(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/peer_gemm/shaders")))
