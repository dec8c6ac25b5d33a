"""Vectors in buffers, constructors, swizzles, element-wise ops; GLSL overloads of the math builtins."""

import coopdsl as cd
from coopdsl import ArgumentError, TypeMismatchError, f32, i32, u32, vec2, vec3, vec4

from ..conftest import compile_checked, expect_error


@cd.kernel(workgroup_size=(32, 1, 1))
def vector_language(v: cd.Buffer[vec4[f32]], u: cd.Buffer[vec4[u32]], s: cd.Buffer[vec2[i32]]):
    i = cd.global_invocation_id.x
    a = v[i]
    b = vec4[f32](a.xyz, 1.0)        # vector + scalar
    c = vec4[f32](a.xy, a.zw)        # two vectors
    d = vec4[f32](2.0)               # splat of a constant
    e = a.wzyx                       # swizzle
    m = a < b                        # vec4[bool]
    u[i] = vec4[u32](1, 2, 3, 4) + u[i] * 3
    s[i] = -s[i] // vec2[i32](2, 2)
    if cd.any(m) and cd.all(a == c) and not cd.any(s[i] != s[i + 1]):
        v[i] = b + c * d - e / 2.0


def test_vector_constructors_swizzles_and_element_wise_ops():
    compile_checked(vector_language, r"OpTypeRuntimeArray %v4float", r"OpTypeRuntimeArray %v4uint",
                    r"OpVectorShuffle %v3float", r"OpVectorShuffle %v4float %\w+ %\w+ 3 2 1 0",
                    r"OpCompositeConstruct %v4float", r"OpFOrdLessThan %v4bool", r"OpFOrdEqual %v4bool",
                    r"OpINotEqual %v2bool", r"OpAny %bool", r"OpAll %bool", r"OpIMul %v4uint",
                    r"OpSDiv %v2int", r"OpSNegate %v2int", r"OpFDiv %v4float")


@cd.kernel(workgroup_size=(4, 1, 1))
def swizzle_stores(out: cd.Buffer[vec4[f32]]):
    v = vec4[f32](1.0, 2.0, 3.0, 4.0)
    v.x += 10.0                                   # GLSL's v.x += 10.0
    v.zw = vec2[f32](7.0, 8.0)                    # several components from a vector of as many
    v.b = f32(cd.local_invocation_index)          # rgba names too
    out[cd.local_invocation_index] = v


def test_swizzle_assignments_replace_components():
    compile_checked(swizzle_stores, r"OpCompositeInsert %v4float", r"OpCompositeExtract %float")
    import numpy as np

    out = np.zeros((4, 4), np.float32)
    swizzle_stores.launch((1,), out, device="cpu")
    np.testing.assert_array_equal(out, [[11.0, 2.0, i, 8.0] for i in range(4)])


@cd.kernel(workgroup_size=(4, 1, 1))
def swizzle_twice(out: cd.Buffer[vec4[f32]]):
    v = vec4[f32](1.0)
    v.xx = vec2[f32](1.0, 2.0)  # E:twice
    out[0] = v


@cd.kernel(workgroup_size=(4, 1, 1))
def swizzle_wrong_size(out: cd.Buffer[vec4[f32]]):
    v = vec4[f32](1.0)
    v.xy = 1.0  # E:size
    out[0] = v


def test_swizzle_assignments_name_each_component_once_and_take_a_vector_of_as_many():
    expect_error(swizzle_twice, TypeMismatchError, "cannot assign to '.xx': it names a component twice",
                 "# E:twice", 5)
    expect_error(swizzle_wrong_size, TypeMismatchError, "cannot assign the number 1.0 to '.xy' of vec4[f32]; it "
                 "takes a vec2[f32]", "# E:size", 5)


@cd.kernel(workgroup_size=(4, 1, 1))
def swizzle_mixed_sets(out: cd.Buffer[vec4[f32]], x: cd.Buffer[f32]):
    v = out[0]
    x[0] = v.xg.y  # E:mixed


def test_a_swizzle_uses_one_set_of_component_names():
    """GLSL refuses v.xg (xyzw and rgba mixed); it compiled as (x, y)."""
    expect_error(swizzle_mixed_sets, TypeMismatchError, "swizzle '.xg' mixes the component names xyzw and rgba; use "
                 "one set", "# E:mixed", 12)


@cd.kernel(workgroup_size=(32, 1, 1))
def glsl_overloads(v: cd.Buffer[vec4[f32]], x: cd.Buffer[f32], w: cd.Buffer[vec3[u32]]):
    i = cd.global_invocation_id.x
    lo = x[0]
    hi = x[1]
    v[i] = cd.clamp(v[i], lo, hi) + cd.min(v[i], lo) + cd.max(v[i], 0.5)   # vector with scalar bounds
    v[i + 1] = cd.mix(v[i], v[i + 2], v[i] > v[i + 2])                       # bool selector: OpSelect
    x[i] = cd.atan(x[i], x[i + 1]) + cd.mix(lo, hi, lo > hi)                # atan(y, x) is Atan2
    w[i] = cd.min(w[i], w[i + 1].x)


def test_glsl_overloads_of_min_max_clamp_mix_atan():
    compile_checked(glsl_overloads, r"FClamp %\w+ %\w+ %\w+", r"OpCompositeConstruct %v4float %\w+ %\w+ %\w+ %\w+",
                    r"OpExtInst %v4float %\w+ FMin", r"OpExtInst %v4float %\w+ FMax", r"OpSelect %v4float %\w+",
                    r"OpSelect %float", r"OpExtInst %float %\w+ Atan2", r"OpExtInst %v3uint %\w+ UMin",
                    absent=(r"FMix",))


@cd.kernel
def k_vec_size_math(v: cd.Buffer[vec4[f32]], w: cd.Buffer[vec3[f32]]):
    v[0] = cd.max(v[1], w[0])  # E:vsize-math


def test_vector_size_mismatch_in_math():
    expect_error(k_vec_size_math, TypeMismatchError, "max() arguments must have one type, got vec4[f32] and vec3[f32]",
                 "# E:vsize-math", 12)


@cd.kernel
def k_vec_size_arith(v: cd.Buffer[vec4[f32]], w: cd.Buffer[vec3[f32]]):
    v[0] = v[1] + w[0]  # E:vsize-arith


def test_vector_size_mismatch_in_arithmetic():
    expect_error(k_vec_size_arith, TypeMismatchError, "operands of '+' have different sizes: vec4[f32] and vec3[f32]; "
                 "take components of the vec4[f32] (e.g. v.xyz) or widen the vec3[f32] (e.g. vec4[f32](v, 0))",
                 "# E:vsize-arith", 12)


@cd.kernel
def k_vec_size_elem_arith(v: cd.Buffer[vec4[f32]], w: cd.Buffer[vec2[u32]]):
    v[0] = w[0] * v[1]  # E:vsize-elem


def test_vectors_of_other_sizes_and_component_types_are_told_both():
    expect_error(k_vec_size_elem_arith, TypeMismatchError, "operands of '*' have different sizes: vec2[u32] and "
                 "vec4[f32]; take components of the vec4[f32] (e.g. v.xy) or widen the vec2[u32] (e.g. "
                 "vec4[u32](v, 0, 0)); the component types must match too", "# E:vsize-elem", 12)


@cd.kernel
def k_ctor_count(v: cd.Buffer[vec4[f32]], w: cd.Buffer[vec2[f32]]):
    v[0] = vec4[f32](w[0], 1.0)  # E:ctor


def test_vector_constructor_needs_every_component():
    expect_error(k_ctor_count, ArgumentError, "vec4[f32](...) needs 4 components, got 3", "# E:ctor", 12)


@cd.kernel
def k_scalar_bound_type(v: cd.Buffer[vec4[f32]], x: cd.Buffer[i32]):
    v[0] = cd.clamp(v[1], x[0], x[1])  # E:clampty


def test_scalar_bounds_must_be_the_component_type():
    expect_error(k_scalar_bound_type, TypeMismatchError, "clamp() arguments must have one type, got vec4[f32] and i32",
                 "# E:clampty", 12)


@cd.kernel
def k_mix_bool_size(v: cd.Buffer[vec4[f32]], x: cd.Buffer[f32]):
    v[0] = cd.mix(v[1], v[2], x[0] > 0.0)  # E:mixbool


def test_mix_bool_selector_matches_the_values():
    expect_error(k_mix_bool_size, TypeMismatchError, "mix() with a bool selector needs vec4[bool] for vec4[f32]",
                 "# E:mixbool", 12)


@cd.kernel
def k_cross4(v: cd.Buffer[vec4[f32]]):
    v[0] = cd.cross(v[1], v[2])  # E:cross


def test_cross_takes_3_vectors():
    expect_error(k_cross4, TypeMismatchError, "cross() takes 3-component vectors, got vec4[f32]", "# E:cross", 12)


@cd.kernel
def k_fma_int(x: cd.Buffer[i32]):
    x[0] = cd.fma(x[1], 2, 3)  # E:fma


def test_fma_takes_floats():
    expect_error(k_fma_int, TypeMismatchError, "fma() takes floats, got i32", "# E:fma", 12)


@cd.kernel
def k_abs_unsigned(x: cd.Buffer[u32]):
    x[0] = cd.abs(x[1])  # E:absu


def test_abs_of_unsigned_is_rejected():
    expect_error(k_abs_unsigned, TypeMismatchError, "abs() takes floats, signed ints, got u32", "# E:absu", 12)


@cd.kernel
def k_dot_int(x: cd.Buffer[vec4[i32]], y: cd.Buffer[i32]):
    y[0] = cd.dot(x[1], x[2])  # E:dot


def test_dot_takes_float_vectors():
    expect_error(k_dot_int, TypeMismatchError, "dot() takes two float vectors of one type", "# E:dot", 12)


@cd.kernel
def k_any_scalar(x: cd.Buffer[f32]):
    if cd.any(x[0] > 1.0):  # E:any
        x[0] = 1.0


def test_any_takes_a_bool_vector():
    expect_error(k_any_scalar, TypeMismatchError, "any() takes a bool vector, got bool", "# E:any", 8)


@cd.kernel
def k_math_on_matrix(x: cd.Buffer[f32]):
    m = cd.Acc[f32, 16, 16].splat(1.0)
    n = cd.exp(m)  # E:matexp


def test_math_on_a_cooperative_matrix():
    expect_error(k_math_on_matrix, TypeMismatchError, "exp() takes scalars or vectors", "# E:matexp", 9)


@cd.kernel
def k_atomic_vector(x: cd.Buffer[vec4[u32]]):
    cd.atomic_add(x, 0, 1)  # E:atomvec


def test_atomic_on_a_vector_buffer():
    expect_error(k_atomic_vector, TypeMismatchError, "atomic_add() needs 32- or 64-bit scalar elements, got buffer 'x'",
                 "# E:atomvec", 5)


@cd.kernel
def atomic_f64_add(x: cd.Buffer[cd.f64]):
    cd.atomic_add(x, 0, 1.0)


def test_f64_atomic_add_capability():
    compile_checked(atomic_f64_add, r"OpCapability AtomicFloat64AddEXT", r"OpAtomicFAddEXT %double",
                    r'OpExtension "SPV_EXT_shader_atomic_float_add"')


@cd.kernel
def dynamic_broadcast(x: cd.Buffer[f32], y: cd.Buffer[u32]):
    x[0] = cd.subgroup_broadcast(x[1], y[0])


def test_runtime_lane_broadcast_is_a_shuffle_before_spirv_1_5():
    compile_checked(dynamic_broadcast, r"OpGroupNonUniformShuffle %float %uint_3",
                    r"OpCapability GroupNonUniformShuffle",
                    target_env="vulkan1.1", absent=(r"OpGroupNonUniformBroadcast ",))


@cd.kernel
def vec3_buffer(w: cd.Buffer[vec3[f32]]):
    i = cd.global_invocation_id.x
    w[i] = w[i].zxy


def test_vec3_buffer_strides_16_bytes_std430():
    compile_checked(vec3_buffer, r"OpDecorate %_runtimearr_v3float ArrayStride 16",
                    r"OpVectorShuffle %v3float %\w+ %\w+ 2 0 1")


@cd.kernel(workgroup_size=(64, 1, 1))
def shade(v: cd.Buffer[vec4[f32]], lim: cd.Buffer[f32], n: cd.Buffer[i32]):
    i = cd.global_invocation_id.x
    c = cd.clamp(v[i], lim[0], lim[1])            # vec4 with scalar bounds
    c = cd.mix(c, vec4[f32](c.xyz, 1.0), c > 0.5)  # bool selector: OpSelect
    v[i] = cd.normalize(c.wzyx) * abs(c.x)       # swizzle: OpVectorShuffle
    n[i] = abs(n[i])


def test_doc_example_and_python_abs_on_runtime_values():
    compile_checked(shade, r"FClamp", r"OpSelect %v4float", r"OpVectorShuffle %v4float %\w+ %\w+ 3 2 1 0",
                    r"OpExtInst %float %\w+ FAbs", r"OpExtInst %int %\w+ SAbs", r"Normalize")


@cd.struct
class Particle:
    pos: vec4[f32]
    w: f32


@cd.kernel(workgroup_size=(4, 1, 1))
def component_stores(out: cd.Buffer[vec4[f32]], ps: cd.Buffer[Particle]):
    i = cd.local_invocation_index
    out[i].y = f32(i)                           # GLSL's out[i].y = float(i): one component in memory
    out[i].zw = vec2[f32](5.0, 6.0)
    ps[i].pos.xw = vec2[f32](1.0, 2.0)          # components of a struct member


def test_components_of_vectors_in_memory_are_stored_in_place():
    import numpy as np

    compile_checked(component_stores, r"OpAccessChain %_ptr_StorageBuffer_float %\w+ %uint_1",
                    r"OpAccessChain %_ptr_StorageBuffer_float %\w+ %uint_0 %uint_3")
    out = np.zeros((4, 4), np.float32)
    ps = np.zeros((4, 8), np.float32)
    component_stores.launch((1,), out, ps, device="cpu")
    np.testing.assert_array_equal(out, [[0.0, i, 5.0, 6.0] for i in range(4)])
    np.testing.assert_array_equal(ps[:, :4], [[1.0, 0.0, 0.0, 2.0]] * 4)
