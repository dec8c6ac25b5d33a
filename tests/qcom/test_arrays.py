"""Per-invocation arrays as values (cd.array): building, reading, updating, passing, specialization lengths."""

import pytest

import coopdsl as cd
from coopdsl import (
    ArgumentError,
    TypeMismatchError,
    UnsupportedSyntaxError,
    f16,
    f32,
    i8,
    i32,
    u32,
    vec2,
)
from coopdsl.errors import DeclarationError

from ..conftest import compile_checked, expect_error


@cd.kernel(workgroup_size=(32, 1, 1))
def build_and_update(src: cd.Buffer[f32], out: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    row = cd.array(f32, 4)                      # zeros
    ones = cd.array(f32, 4, 1.0)                # a constant fill
    listed = cd.array[f32, 4](src[i], 2, 3.5, src[i + 1])
    copies = cd.array(f32, 4, src[i])           # a runtime fill
    for k in cd.static_range(4):
        row[k] = listed[k] * ones[k] + copies[k]
    out[i] = row[0] + row[3] + f32(len(row))


def test_constant_indices_are_composite_extract_and_insert():
    text = compile_checked(
        build_and_update,
        r"%\w+ = OpConstantNull %_arr_float_uint_4",
        r"OpConstantComposite %_arr_float_uint_4 %float_1 %float_1 %float_1 %float_1",
        r"OpCompositeConstruct %_arr_float_uint_4 %\w+ %float_2 %float_3_5 %\w+",
        r"OpCompositeInsert %_arr_float_uint_4 %\w+ %\w+ 3",
        r"OpCompositeExtract %float %\w+ 3",
        r"OpFAdd %float %\w+ %float_4",
        absent=(r"OpVariable %_ptr_Function",))  # registers only: no memory
    assert text.count("OpCompositeInsert") == 4


@cd.kernel(workgroup_size=(32, 1, 1))
def runtime_indices(out: cd.Buffer[u32], n: u32):
    i = cd.global_invocation_id.x
    row = cd.array(u32, 8)
    for k in range(n):
        row[k % 8] = row[k % 8] + k             # a loop-carried array (an OpPhi)
    out[i] = row[i % 8]


def test_runtime_indices_go_through_a_function_variable_and_loops_carry_arrays():
    compile_checked(runtime_indices,
                    r"OpPhi %_arr_uint_uint_8",
                    r"OpStore %\w+ %\w+\n\s+%\w+ = OpAccessChain %_ptr_Function_uint %\w+ %\w+",
                    r"OpLoad %_arr_uint_uint_8")


@cd.func
def scaled(row, s):
    for k in cd.static_range(len(row)):
        row[k] = row[k] * s
    return row


@cd.func
def first(row):
    return row[0]


@cd.kernel(workgroup_size=(32, 1, 1))
def through_functions(out: cd.Buffer[f16]):
    row = scaled(cd.array(f16, 16, 1.0), f16(2.0))
    out[cd.global_invocation_id.x] = first(row)


def test_arrays_are_function_parameters_and_results():
    compile_checked(through_functions,
                    r"OpFunctionParameter %_arr_half_uint_16",
                    r"%\w+ = OpTypeFunction %_arr_half_uint_16 %_arr_half_uint_16 %half",
                    r"OpFunctionCall %_arr_half_uint_16 %scaled %\w+ %half_0x1p_1")


@cd.kernel(workgroup_size=(32, 1, 1))
def spec_length(out: cd.Buffer[f32], K: cd.Spec[u32] = 8):
    row = cd.array(f32, K)                      # zeros of a specialization-constant length
    half = cd.array(f32, K // 2)
    row[1] = 2.0
    out[0] = row[1] + half[0] + f32(len(row)) + f32(len(half))


def test_specialization_constant_lengths():
    compile_checked(spec_length,
                    r"%K = OpSpecConstant %uint 8",
                    r"%_arr_float_K = OpTypeArray %float %K",
                    r"OpConstantNull %_arr_float_K",
                    r"OpSpecConstantOp %uint UDiv %K %uint_2")


@cd.kernel(workgroup_size=(32, 1, 1))
def nested_and_vectors(out: cd.Buffer[f32]):
    pairs = cd.array(vec2[f32], 2, vec2[f32](1.0, 2.0))
    rows = cd.array(cd.array[f32, 2], 3)        # an array of arrays
    inner = rows[1]
    inner[0] = pairs[1].y
    rows[1] = inner
    out[0] = rows[1][0]


def test_arrays_of_vectors_and_of_arrays():
    compile_checked(nested_and_vectors,
                    r"%_arr__arr_float_uint_2_uint_3 = OpTypeArray %_arr_float_uint_2 %uint_3",
                    r"OpCompositeInsert %_arr__arr_float_uint_2_uint_3 %\w+ %\w+ 1",
                    r"OpCompositeConstruct %_arr_v2float_uint_2")


@cd.kernel(workgroup_size=(32, 1, 1))
def choose(out: cd.Buffer[f32]):
    a = cd.array(f32, 4)
    b = a if out[0] > 0.0 else cd.array(f32, 4, 1.0)
    out[1] = b[2]


@pytest.mark.parametrize("env", ["vulkan1.1", "vulkan1.3"])
def test_choosing_between_arrays_is_a_branch_and_a_phi(env):
    # OpSelect takes arrays only from SPIR-V 1.4: a selection and an OpPhi work everywhere
    compile_checked(choose, r"OpPhi %_arr_float_uint_4", target_env=env, absent=(r"OpSelect ",))


def test_the_array_type_outside_kernels():
    assert str(cd.array[f16, 16]) == "f16[16]"
    with pytest.raises(DeclarationError, match="array\\[...\\] takes \\[element type, length\\], got 1"):
        cd.array[f16]
    with pytest.raises(TypeError, match="can only be called inside a @coopdsl.kernel"):
        cd.array(f16, 4)


# -- mistakes -------------------------------------------------------------------------------------
@cd.kernel
def k_bool_elem(out: cd.Buffer[f32]):
    a = cd.array(cd.boolean, 4)  # E:boolelem


@cd.kernel
def k_zero_length(out: cd.Buffer[f32]):
    a = cd.array[f32, 0]()  # E:zerolen


@cd.kernel
def k_runtime_length(out: cd.Buffer[f32], n: u32):
    a = cd.array(f32, n)  # E:rtlen


@cd.kernel
def k_index_range(out: cd.Buffer[f32]):
    a = cd.array(f32, 4)
    out[0] = a[4]  # E:range


@cd.kernel
def k_store_range(out: cd.Buffer[f32]):
    a = cd.array(f32, 4)
    a[-1] = 1.0  # E:negative


@cd.kernel
def k_store_type(out: cd.Buffer[f32]):
    a = cd.array(f32, 4)
    a[0] = out[0] > 1.0  # E:storetype


@cd.kernel
def k_nested_store(out: cd.Buffer[f32]):
    rows = cd.array(cd.array[f32, 2], 3)
    rows[u32(out[0])][0] = 1.0  # E:nested


@cd.kernel
def k_count(out: cd.Buffer[f32]):
    a = cd.array[f32, 4](1.0, 2.0)  # E:count


@cd.kernel
def k_spec_fill(out: cd.Buffer[f32], K: cd.Spec[u32] = 4):
    a = cd.array(f32, K, out[0])  # E:specfill


@cd.kernel
def k_elem_type(out: cd.Buffer[f32]):
    a = cd.array[vec2[f32], 2](out[0], out[1])  # E:elemtype


@cd.kernel
def k_literal(out: cd.Buffer[f32]):
    a = cd.array(i32, 4, 1.5)  # E:literal


@cd.kernel
def k_arith(out: cd.Buffer[f32]):
    a = cd.array(f32, 4)
    b = a + a  # E:arith


@cd.kernel
def k_narrowing_element(out: cd.Buffer[i32]):
    a = cd.array[i8, 2](out[0], out[1])  # E:narrow


@cd.kernel
def k_converting_element(out: cd.Buffer[f32], n: u32):
    a = cd.array[f32, 2](out[0], n)  # E:convert


@cd.kernel
def k_converting_fill(out: cd.Buffer[f32], n: u32):
    a = cd.array(f32, 2, n)  # E:fill


@cd.kernel
def k_literal_past_element(out: cd.Buffer[f32]):
    a = cd.array[i8, 2](1, 300)  # E:litrange
@pytest.mark.parametrize("k,cls,message,marker,col", [
    (k_bool_elem, TypeMismatchError, "array elements are numeric scalars or vectors, not bool",
     "# E:boolelem", 9),
    (k_zero_length, TypeMismatchError, "an array length is an int from 1 to 65536, got 0", "# E:zerolen", 9),
    (k_runtime_length, TypeMismatchError, "an array length is an int from 1 to 65536 or an integer Spec constant, "
     "got a runtime u32", "# E:rtlen", 9),
    (k_index_range, TypeMismatchError, "index 4 is out of range for f32[4] (indices 0..3)", "# E:range", 14),
    (k_store_range, TypeMismatchError, "index -1 is out of range for f32[4]", "# E:negative", 5),
    (k_store_type, TypeMismatchError, "cannot store a runtime bool into an element of f32[4]; convert it first",
     "# E:storetype", 5),
    (k_nested_store, UnsupportedSyntaxError, "an inner array is updated element-wise through indices without calls",
     "# E:nested", 5),
    (k_count, ArgumentError, "f32[4](...) takes one value for every element or exactly 4 elements, got 2",
     "# E:count", 9),
    (k_spec_fill, TypeMismatchError, "an array of K elements (a specialization constant) starts as zeros",
     "# E:specfill", 9),
    (k_elem_type, TypeMismatchError, "an element of vec2[f32][2] must be a vec2[f32] value, got a runtime f32",
     "# E:elemtype", 9),
    (k_literal, TypeMismatchError, "cannot use the float literal 1.5 as i32", "# E:literal", 9),
    (k_narrowing_element, TypeMismatchError, "an element of i8[2] must be a i8 value, got a runtime i32; convert "
     "it first (e.g. i8(x))", "# E:narrow", 9),
    (k_converting_element, TypeMismatchError, "an element of f32[2] must be a f32 value, got a runtime u32",
     "# E:convert", 9),
    (k_converting_fill, TypeMismatchError, "an element of f32[2] must be a f32 value, got a runtime u32",
     "# E:fill", 9),
    (k_literal_past_element, TypeMismatchError, "the literal 300 does not fit in i8 (-128..127)", "# E:litrange", 9),
    (k_arith, TypeMismatchError, "f32[4] is an array: arrays take no arithmetic, comparisons or conversions",
     "# E:arith", 9),
])
def test_array_mistakes_are_located(k, cls, message, marker, col):
    expect_error(k, cls, message, marker, col)
