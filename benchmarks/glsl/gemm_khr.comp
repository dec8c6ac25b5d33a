// GLSL counterpart of examples/gemm_khr.py (for benchmarks/compile_bench.py).
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

layout(local_size_x = 32, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint M = 64;
layout(constant_id = 1) const uint N = 64;
layout(constant_id = 2) const uint K = 64;
layout(set = 0, binding = 0) readonly buffer BufA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BufB { float16_t b[]; };
layout(set = 0, binding = 2) buffer BufC { float c[]; };

const uint TILE = 16;

void main() {
    uint row = gl_WorkGroupID.y * TILE;
    uint col = gl_WorkGroupID.x * TILE;
    coopmat<float, gl_ScopeSubgroup, TILE, TILE, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeSubgroup, TILE, TILE, gl_MatrixUseAccumulator>(0.0);
    for (uint k = 0; k < K; k += TILE) {
        coopmat<float16_t, gl_ScopeSubgroup, TILE, TILE, gl_MatrixUseA> ta;
        coopmat<float16_t, gl_ScopeSubgroup, TILE, TILE, gl_MatrixUseB> tb;
        coopMatLoad(ta, a, row * K + k, K, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(tb, b, k * N + col, N, gl_CooperativeMatrixLayoutRowMajor);
        acc = coopMatMulAdd(ta, tb, acc);
    }
    coopMatStore(acc, c, row * N + col, N, gl_CooperativeMatrixLayoutRowMajor);
}
