// GLSL counterpart of examples/gemm_portable.py (for benchmarks/compile_bench.py).
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

layout(local_size_x_id = 6, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint M = 64;
layout(constant_id = 1) const uint N = 64;
layout(constant_id = 2) const uint K = 64;
layout(constant_id = 3) const uint TM = 16;
layout(constant_id = 4) const uint TN = 16;
layout(constant_id = 5) const uint TK = 16;
layout(constant_id = 6) const uint WG = 32;
layout(set = 0, binding = 0) readonly buffer BufA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BufB { float16_t b[]; };
layout(set = 0, binding = 2) buffer BufC { float c[]; };

void main() {
    uint row = gl_WorkGroupID.y * TM;
    uint col = gl_WorkGroupID.x * TN;
    coopmat<float, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>(0.0);
    for (uint k = 0; k < K; k += TK) {
        coopmat<float16_t, gl_ScopeSubgroup, TM, TK, gl_MatrixUseA> ta;
        coopmat<float16_t, gl_ScopeSubgroup, TK, TN, gl_MatrixUseB> tb;
        coopMatLoad(ta, a, row * K + k, K, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(tb, b, k * N + col, N, gl_CooperativeMatrixLayoutRowMajor);
        acc = coopMatMulAdd(ta, tb, acc);
    }
    coopMatStore(acc, c, row * N + col, N, gl_CooperativeMatrixLayoutRowMajor);
}
