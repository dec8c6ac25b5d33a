"""A coopdsl port of vk_cooperative_matrix_perf's ``workgroup.comp``, keeping its interface exactly.

The peer harness (jeffbolznv/vk_cooperative_matrix_perf, run without
``--shmem``) loads ``shaders/workgroup<A>_<C>.spv`` for each workgroup-scope
flexible-dimension configuration the device advertises
(VK_NV_cooperative_matrix2) and drives it with:

* descriptor set 0, binding 0: a uniform block of four buffer device addresses
  (A, B, C and the output D);
* the same specialization constants as ``shmem.comp`` (ids 0..20: lM, lN, lK,
  TILE_M, TILE_N, TILE_K, K, the four strides, alpha, beta, BColMajor, the A/B
  tile row lengths and row counts, the workgroup size at id 18, M, N); the
  kernel uses TILE_M/N/K, K, M, N, alpha, beta, BColMajor and the workgroup size;
* entry point ``main``; dispatch (N / TILE_N, M / TILE_M, 1).

The algorithm is the peer's: each workgroup computes one TILE_M x TILE_N block
of D = alpha * A x B + beta * C with workgroup-scope matrices of those
dimensions, loading TILE_K slices of A and B through 2-D tensor layouts (B
column-major through a transposing view) and leaving the staging through
shared memory to the driver.  The peer declares A and B as ``uvec4`` arrays;
a tensor load addresses elements of the matrix's component type from the
pointer, so the port declares them with that type (the block still holds four
64-bit addresses).  ``variant(a, c)`` builds the kernel for one (A/B, C/D)
component-type pair.
"""

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, bf16, e4m3, e5m2, f16, f32, i8, i32, u8, u32

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

W = cd.Workgroup


# Code-shape forms (as shmem.FORMS; docs/benchmarks.md): "glsl_order" writes the GLSL's shape where the
# port's differs: one B layout, re-dimensioned under `if BColMajor` (a specialization-constant branch), instead
# of one layout per B layout, and the C and D tiles sliced separately, each where the GLSL slices it.
FORMS = ("glsl_order",)
DEFAULT_FORMS: tuple[str, ...] = ()


def variant(a_type, c_type, opts=None) -> cd.Kernel:
    """The workgroup kernel for A/B components ``a_type`` and C/D components ``c_type``, in the code-shape
    forms ``opts`` of :data:`FORMS` (default: :data:`DEFAULT_FORMS`)."""
    opts = set(DEFAULT_FORMS if opts is None else opts)
    if opts - set(FORMS):
        raise ValueError(f"unknown forms {sorted(opts - set(FORMS))}; known: {', '.join(FORMS)}")
    ORDER = "glsl_order" in opts

    @cd.struct
    class Params:
        inputA: cd.Ptr[a_type]
        inputB: cd.Ptr[a_type]
        inputC: cd.Ptr[c_type]
        outputO: cd.Ptr[c_type]

    @cd.kernel(workgroup_size=("WG", 1, 1))
    def main(params: cd.Uniform[Params],
             lM: cd.Spec[u32, 0] = 1, lN: cd.Spec[u32, 1] = 1, lK: cd.Spec[u32, 2] = 1,
             TILE_M: cd.Spec[u32, 3] = 128, TILE_N: cd.Spec[u32, 4] = 128, TILE_K: cd.Spec[u32, 5] = 32,
             K: cd.Spec[u32, 6] = 1, strideA: cd.Spec[u32, 7] = 1, strideB: cd.Spec[u32, 8] = 1,
             strideC: cd.Spec[u32, 9] = 1, strideD: cd.Spec[u32, 10] = 1,
             alpha: cd.Spec[f32, 11] = 1.0, beta: cd.Spec[f32, 12] = 1.0, BColMajor: cd.Spec[cd.boolean, 13] = False,
             A_ROW_LEN: cd.Spec[u32, 14] = 1, A_NUM_ROWS: cd.Spec[u32, 15] = 1,
             B_ROW_LEN: cd.Spec[u32, 16] = 1, B_NUM_ROWS: cd.Spec[u32, 17] = 1,
             WG: cd.Spec[u32, 18] = 256, M: cd.Spec[u32, 19] = 1, N: cd.Spec[u32, 20] = 1):
        tile_x = cd.workgroup_id.x
        tile_y = cd.workgroup_id.y
        a_ptr = params.inputA
        b_ptr = params.inputB
        c_ptr = params.inputC
        d_ptr = params.outputO

        result = Acc[c_type, TILE_M, TILE_N, W].splat(0)
        layout_a = cd.tensor_layout(2).dimension(M, K)
        if ORDER:  # the GLSL's: A, B, C, the view, then B re-dimensioned for column-major B
            layout_b = cd.tensor_layout(2).dimension(K, N)
            layout_c = cd.tensor_layout(2).dimension(M, N)
            transposed = cd.tensor_view(2, perm=(1, 0))
            if BColMajor:
                layout_b = layout_b.dimension(N, K)
            layout_b_cm = layout_b
        else:
            layout_c = cd.tensor_layout(2).dimension(M, N)
            layout_b = cd.tensor_layout(2).dimension(K, N)
            layout_b_cm = cd.tensor_layout(2).dimension(N, K)
            transposed = cd.tensor_view(2, perm=(1, 0))

        for chunk_k in range(0, K, TILE_K):
            mat_a = MatA[a_type, TILE_M, TILE_K, W].load_tensor(
                a_ptr, 0, layout_a.slice(TILE_M * tile_y, TILE_M, chunk_k, TILE_K))
            if BColMajor:
                mat_b = MatB[a_type, TILE_K, TILE_N, W].load_tensor(
                    b_ptr, 0, layout_b_cm.slice(TILE_N * tile_x, TILE_N, chunk_k, TILE_K), view=transposed)
            else:
                mat_b = MatB[a_type, TILE_K, TILE_N, W].load_tensor(
                    b_ptr, 0, layout_b.slice(chunk_k, TILE_K, TILE_N * tile_x, TILE_N))
            result = cd.muladd(mat_a, mat_b, result)

        tile = layout_c.slice(TILE_M * tile_y, TILE_M, TILE_N * tile_x, TILE_N)
        mat_c = Acc[c_type, TILE_M, TILE_N, W].load_tensor(c_ptr, 0, tile)
        out = result * c_type(alpha) + mat_c * c_type(beta)
        if ORDER:
            tile = layout_c.slice(TILE_M * tile_y, TILE_M, TILE_N * tile_x, TILE_N)
        out.store_tensor(d_ptr, 0, tile)

    return main


def emit_all(folder) -> list[str]:
    """Write ``workgroup<A>_<C>.spv`` for every variant into ``folder``; returns the file names."""
    from benchmarks.peer_gemm._emit import emit_variants

    return emit_variants("workgroup", VARIANTS, variant, folder)


if __name__ == "__main__":
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script: the repository's root

    print("\n".join(emit_all(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/peer_gemm/shaders")))
