// GLSL counterpart of examples/gemm_edges.py (for benchmarks/compile_bench.py). The example unrolls its
// element copies at compile time (cd.static_range), so this file writes them out too (COPY_IN, COPY_OUT).
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

layout(local_size_x = 32, local_size_y = 1, local_size_z = 1) in;
layout(set = 0, binding = 0) readonly buffer BufA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BufB { float16_t b[]; };
layout(set = 0, binding = 2) buffer BufC { float c[]; };
layout(push_constant) uniform Sizes { uint M; uint N; uint K; };

const uint T = 16;
shared float16_t sa[T * T];
shared float16_t sb[T * T];
shared float sc[T * T];

// copy element lid + t * 32 of the A and B tiles into shared memory, zero outside the matrices
#define COPY_IN(t) {                                                   \
        uint e = lid + (t) * 32;                                       \
        uint r = e / T;                                                \
        uint col = e % T;                                              \
        float16_t va = float16_t(0.0);                                 \
        if (row0 + r < M && k0 + col < K) {                            \
            va = a[(row0 + r) * K + k0 + col];                         \
        }                                                              \
        sa[e] = va;                                                    \
        float16_t vb = float16_t(0.0);                                 \
        if (k0 + r < K && col0 + col < N) {                            \
            vb = b[(k0 + r) * N + col0 + col];                         \
        }                                                              \
        sb[e] = vb;                                                    \
    }

// write element lid + t * 32 of the C tile when it lies inside C
#define COPY_OUT(t) {                                                  \
        uint e = lid + (t) * 32;                                       \
        uint r = e / T;                                                \
        uint col = e % T;                                              \
        if (row0 + r < M && col0 + col < N) {                          \
            c[(row0 + r) * N + col0 + col] = sc[e];                    \
        }                                                              \
    }

void main() {
    uint row0 = gl_WorkGroupID.y * T;
    uint col0 = gl_WorkGroupID.x * T;
    uint lid = gl_LocalInvocationIndex;
    coopmat<float, gl_ScopeSubgroup, T, T, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeSubgroup, T, T, gl_MatrixUseAccumulator>(0.0);
    for (uint k0 = 0; k0 < K; k0 += T) {
        COPY_IN(0) COPY_IN(1) COPY_IN(2) COPY_IN(3) COPY_IN(4) COPY_IN(5) COPY_IN(6) COPY_IN(7)
        barrier();
        coopmat<float16_t, gl_ScopeSubgroup, T, T, gl_MatrixUseA> ta;
        coopmat<float16_t, gl_ScopeSubgroup, T, T, gl_MatrixUseB> tb;
        coopMatLoad(ta, sa, 0, T, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(tb, sb, 0, T, gl_CooperativeMatrixLayoutRowMajor);
        acc = coopMatMulAdd(ta, tb, acc);
        barrier();
    }
    coopMatStore(acc, sc, 0, T, gl_CooperativeMatrixLayoutRowMajor);
    barrier();
    COPY_OUT(0) COPY_OUT(1) COPY_OUT(2) COPY_OUT(3) COPY_OUT(4) COPY_OUT(5) COPY_OUT(6) COPY_OUT(7)
}
