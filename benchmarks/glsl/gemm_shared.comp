// GLSL counterpart of examples/gemm_shared.py (for benchmarks/compile_bench.py): the same
// algorithm, interface and specialization constants, written the way GLSL users write it.
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require

layout(local_size_x_id = 8, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint M = 256;
layout(constant_id = 1) const uint N = 256;
layout(constant_id = 2) const uint K = 256;
layout(constant_id = 3) const uint TILE_M = 128;
layout(constant_id = 4) const uint TILE_N = 128;
layout(constant_id = 5) const uint TILE_K = 32;
layout(constant_id = 6) const uint SG_M = 64;
layout(constant_id = 7) const uint SG_N = 64;
layout(constant_id = 8) const uint WG = 128;
layout(set = 0, binding = 0) readonly buffer BufA { uvec4 a[]; };
layout(set = 0, binding = 1) readonly buffer BufB { uvec4 b[]; };
layout(set = 0, binding = 2) buffer BufC { float c[]; };
layout(push_constant) uniform Params { float alpha; float beta; };

const uint K8 = K / 8;
const uint N8 = N / 8;
const uint A_ROW = TILE_K / 8;
const uint B_ROW = TILE_N / 8;
const uint A_STRIDE = A_ROW + 1;
const uint B_STRIDE = B_ROW + 1;
const uint A_LOADS = TILE_M * A_ROW / WG;
const uint B_LOADS = TILE_K * B_ROW / WG;
const uint C_ROWS = SG_M / 16;
const uint C_COLS = SG_N / 16;

shared uvec4 a_sh[TILE_M * A_STRIDE];
shared uvec4 b_sh[TILE_K * B_STRIDE];

void main() {
    uvec4 a_reg[A_LOADS];
    uvec4 b_reg[B_LOADS];
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[C_ROWS * C_COLS];
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b_frag[C_COLS];

    uint tid = gl_LocalInvocationIndex;
    uint row0 = gl_WorkGroupID.y * TILE_M;
    uint col0 = gl_WorkGroupID.x * TILE_N;
    uint sg = gl_SubgroupID;
    uint sg_row = (sg / (TILE_N / SG_N)) * SG_M;
    uint sg_col = (sg % (TILE_N / SG_N)) * SG_N;

    [[unroll]] for (uint t = 0; t < C_ROWS * C_COLS; ++t) {
        acc[t] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    }
    [[unroll]] for (uint t = 0; t < A_LOADS; ++t) {
        uint i = t * WG + tid;
        a_reg[t] = a[(row0 + i / A_ROW) * K8 + i % A_ROW];
    }
    [[unroll]] for (uint t = 0; t < B_LOADS; ++t) {
        uint i = t * WG + tid;
        b_reg[t] = b[(i / B_ROW) * N8 + col0 / 8 + i % B_ROW];
    }

    for (uint k0 = 0; k0 < K; k0 += TILE_K) {
        barrier();
        [[unroll]] for (uint t = 0; t < A_LOADS; ++t) {
            uint i = t * WG + tid;
            a_sh[(i / A_ROW) * A_STRIDE + i % A_ROW] = a_reg[t];
        }
        [[unroll]] for (uint t = 0; t < B_LOADS; ++t) {
            uint i = t * WG + tid;
            b_sh[(i / B_ROW) * B_STRIDE + i % B_ROW] = b_reg[t];
        }
        barrier();
        bool more = k0 + TILE_K < K;
        [[unroll]] for (uint t = 0; t < A_LOADS; ++t) {
            uint i = t * WG + tid;
            if (more) {
                a_reg[t] = a[(row0 + i / A_ROW) * K8 + (k0 + TILE_K) / 8 + i % A_ROW];
            }
        }
        [[unroll]] for (uint t = 0; t < B_LOADS; ++t) {
            uint i = t * WG + tid;
            if (more) {
                b_reg[t] = b[(k0 + TILE_K + i / B_ROW) * N8 + col0 / 8 + i % B_ROW];
            }
        }
        [[unroll]] for (uint kk = 0; kk < TILE_K; kk += 16) {
            [[unroll]] for (uint j = 0; j < C_COLS; ++j) {
                coopMatLoad(b_frag[j], b_sh, kk * B_STRIDE + (sg_col + j * 16) / 8, B_STRIDE,
                            gl_CooperativeMatrixLayoutRowMajor);
            }
            [[unroll]] for (uint i = 0; i < C_ROWS; ++i) {
                coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a_frag;
                coopMatLoad(a_frag, a_sh, (sg_row + i * 16) * A_STRIDE + kk / 8, A_STRIDE,
                            gl_CooperativeMatrixLayoutRowMajor);
                [[unroll]] for (uint j = 0; j < C_COLS; ++j) {
                    acc[i * C_COLS + j] = coopMatMulAdd(a_frag, b_frag[j], acc[i * C_COLS + j]);
                }
            }
        }
    }

    [[unroll]] for (uint i = 0; i < C_ROWS; ++i) {
        [[unroll]] for (uint j = 0; j < C_COLS; ++j) {
            uint offset = (row0 + sg_row + i * 16) * N + col0 + sg_col + j * 16;
            coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> old;
            coopMatLoad(old, c, offset, N, gl_CooperativeMatrixLayoutRowMajor);
            coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> result =
                acc[i * C_COLS + j] * alpha + old * beta;
            coopMatStore(result, c, offset, N, gl_CooperativeMatrixLayoutRowMajor);
        }
    }
}
