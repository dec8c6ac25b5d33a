"""Each scalar/vector IR op the front end emits: compiled, validated, disassembly checked."""

import numpy as np

import coopdsl as cd
from coopdsl import TypeMismatchError, f16, f32, i32, u32, vec4

from ..conftest import compile_checked, expect_error


@cd.kernel(workgroup_size=(64, 1, 1))
def float_arith(x: cd.Buffer[f32], y: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    a = x[i]
    b = y[i]
    y[i] = (a + b) * (a - b) / (b + 1.0) % 3.0 + -a


def test_float_arithmetic():
    compile_checked(float_arith, r"OpFAdd %float", r"OpFSub %float", r"OpFMul %float", r"OpFDiv %float",
                    r"OpFRem %float", r"OpFNegate %float", r"OpStore ")


@cd.kernel(workgroup_size=(64, 1, 1))
def int_arith(x: cd.Buffer[i32], y: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    s = x[i]
    u = y[i]
    x[i] = (s + 3) * (s - 1) // 7 % 5 + -s
    y[i] = (u // 3) % 4 + (u & 7) + (u | 1) + (u ^ 2) + (u << 1) + (u >> 2) + ~u
    x[i + 1] = s >> 1


def test_integer_arithmetic_picks_signed_and_unsigned_forms():
    compile_checked(int_arith, r"OpIAdd %int", r"OpISub %int", r"OpIMul %int", r"OpSDiv %int",
                    r"OpSNegate %int", r"OpUDiv %uint", r"OpUMod %uint", r"OpBitwiseAnd %uint",
                    r"OpBitwiseOr %uint", r"OpBitwiseXor %uint", r"OpShiftLeftLogical %uint",
                    r"OpShiftRightLogical %uint", r"OpNot %uint", r"OpShiftRightArithmetic %int")


@cd.kernel(workgroup_size=(64, 1, 1))
def compares(x: cd.Buffer[f32], y: cd.Buffer[i32], z: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    f = x[i]
    s = y[i]
    u = z[i]
    r = 0
    if f < 1.0 and f <= 2.0 or f > 3.0 and f >= 4.0 and f == 5.0 and f != 6.0:
        r = 1
    if s < 1 and s <= 2 and s > -3 and s >= -4 and s == 5 and s != 6:
        r = 2
    if u < 1 and u <= 2 and u > 3 and u >= 4 and not (u == 5) and u != 6:
        r = 3
    y[i] = r


def test_comparisons_and_logic():
    compile_checked(compares, r"OpFOrdLessThan", r"OpFOrdLessThanEqual", r"OpFOrdGreaterThan ",
                    r"OpFOrdGreaterThanEqual", r"OpFOrdEqual", r"OpFUnordNotEqual", r"OpSLessThan ",
                    r"OpSLessThanEqual", r"OpSGreaterThan ", r"OpSGreaterThanEqual", r"OpIEqual", r"OpINotEqual",
                    r"OpULessThan ", r"OpULessThanEqual", r"OpUGreaterThan ", r"OpUGreaterThanEqual",
                    r"OpLogicalAnd", r"OpLogicalOr", r"OpLogicalNot", r"OpPhi %int")


@cd.kernel(workgroup_size=(64, 1, 1))
def conversions(x: cd.Buffer[f32], y: cd.Buffer[i32], z: cd.Buffer[u32], h: cd.Buffer[f16]):
    i = cd.global_invocation_id.x
    f = x[i]
    s = y[i]
    u = z[i]
    x[i] = f32(s) + f32(u) + f32(h[i])
    y[i] = i32(f) + i32(u)
    z[i] = u32(f) + u32(s) + u32(f > 0.0)
    h[i] = f16(f)
    y[i + 1] = i32(u == 0) + (7 if f > 1.0 else 9)


def test_conversions():
    compile_checked(conversions, r"OpConvertSToF %float", r"OpConvertUToF %float", r"OpFConvert %float",
                    r"OpConvertFToS %int", r"OpConvertFToU %uint", r"OpBitcast %uint", r"OpBitcast %int",
                    r"OpFConvert %half", r"OpSelect %uint", r"OpSelect %int")


@cd.kernel(workgroup_size=(32, 1, 1))
def vectors(x: cd.Buffer[f32], y: cd.Buffer[u32]):
    g = cd.global_invocation_id
    lid = cd.local_invocation_id
    v = vec4[f32](1.0, 2.0, x[g.x], x[g.y])
    j = y[g.x]
    x[g.x] = v.x + v[3] + v[j] + v.zw.y
    y[g.z] = lid.x + cd.num_workgroups.y + cd.local_invocation_index + cd.subgroup_size


def test_vectors_and_builtin_inputs():
    compile_checked(vectors, r"OpCompositeConstruct %v4float", r"OpCompositeExtract %float",
                    r"OpVectorExtractDynamic %float", r"OpDecorate %\w+ BuiltIn GlobalInvocationId",
                    r"BuiltIn LocalInvocationId", r"BuiltIn NumWorkgroups", r"BuiltIn LocalInvocationIndex",
                    r"BuiltIn SubgroupSize")


@cd.kernel(workgroup_size=(32, 1, 1))
def min_max(x: cd.Buffer[f32], y: cd.Buffer[i32], z: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    x[i] = min(x[i], 1.0) + max(x[i], 0.0)
    y[i] = min(y[i], -1) + max(y[i], 2)
    z[i] = min(z[i], 3) + max(z[i], 4, 5)


def test_min_max_pick_the_glsl_instruction_by_type():
    compile_checked(min_max, r"OpExtInstImport \"GLSL.std.450\"", r"FMin", r"FMax", r"SMin", r"SMax",
                    r"UMin", r"UMax")


@cd.kernel(workgroup_size=(32, 1, 1))
def with_push(out: cd.Buffer[f32], n: u32, scale: f32):
    i = cd.global_invocation_id.x
    if i < n:
        out[i] = out[i] * scale
    cd.barrier()


def test_push_constants_and_barrier():
    text = compile_checked(with_push, r"OpTypePointer PushConstant", r"OpMemberDecorate %\w+ 1 Offset 4",
                           r"OpControlBarrier %uint_2 %uint_2 %uint_264", r"OpSelectionMerge")
    assert "NonWritable" not in text
    r = with_push.reflect()
    assert r["push_constants"] == {"size": 8, "members": [
        {"name": "n", "offset": 0, "type": "u32", "size": 4},
        {"name": "scale", "offset": 4, "type": "f32", "size": 4}]}


@cd.kernel(workgroup_size=(32, 1, 1))
def widths(a: cd.Buffer[cd.i8], b: cd.Buffer[cd.u8], c: cd.Buffer[i32], d: cd.Buffer[cd.i16]):
    i = cd.global_invocation_id.x
    c[i] = i32(a[i]) + i32(b[i])
    b[i] = cd.u8(c[i])
    d[i] = cd.i16(b[i])


def test_integer_width_conversions():
    # u8 -> i32 widens with OpUConvert to u32 then reinterprets (OpUConvert's result must be unsigned)
    compile_checked(widths, r"OpSConvert %int", r"OpUConvert %uint", r"OpBitcast %int", r"OpSConvert %uchar",
                    r"OpUConvert %ushort", r"OpBitcast %short", r"OpCapability Int16", r"OpCapability Int8")


@cd.kernel(workgroup_size=(64, 1, 1))
def signed_rem(x: cd.Buffer[i32], v: cd.Buffer[cd.vec4[i32]]):
    i = cd.global_invocation_id.x
    x[i] = x[i] % x[i + 1]
    v[i] = v[i] % v[i + 1]


def test_signed_remainder_avoids_srem_and_smod_which_vulkan_leaves_undefined_for_negative_operands():
    # the magnitudes' OpUMod, given the dividend's sign: C's truncating % for every sign (checked against
    # math.fmod on the interpreter in tests/interp/test_arith.py and on the GPU in test_vs_lavapipe.py)
    text = compile_checked(signed_rem, r"OpSLessThan %bool", r"OpSelect %int", r"OpBitcast %uint",
                           r"OpUMod %uint", r"OpSLessThan %v4bool", r"OpUMod %v4uint", r"OpSelect %v4int")
    assert "OpSRem" not in text and "OpSMod" not in text


@cd.kernel(workgroup_size=(1, 1, 1))
def k_float_remainders(x: cd.Buffer[cd.f32], o: cd.Buffer[cd.f32]):
    o[0] = x[0] % x[1]           # OpFRem: the dividend's sign (C's fmod)
    o[1] = cd.mod(x[0], x[1])    # OpFMod: GLSL's mod, the divisor's sign (Python's %)


def test_float_percent_is_frem_and_cd_mod_is_glsl_mod():
    import numpy as np

    from ..conftest import compile_checked

    compile_checked(k_float_remainders, r"OpFRem %float", r"OpFMod %float")
    for a, b in ((-7.5, 2.0), (7.5, -2.0), (7.5, 2.0)):
        o = np.zeros(2, np.float32)
        k_float_remainders.launch((1,), np.array([a, b], np.float32), o, device="cpu")
        assert o.tolist() == [np.fmod(a, b), a % b]


@cd.kernel(workgroup_size=(1, 1, 1))
def wide_shifts(out: cd.Buffer[cd.i64], x: i32, n: u32):
    out[0] = cd.i64(x) << n                       # a u32 count for an i64 value (GLSL takes it)
    out[1] = cd.i64(-x) >> u32(3)
    out[2] = cd.i64(x << cd.u64(n - 30))          # a u64 count for an i32 value
    v = cd.vec2[cd.i64](cd.i64(x), cd.i64(x)) << cd.vec2[u32](n, u32(1))
    out[3] = v.x + v.y


def test_a_shift_count_of_another_width_is_converted_to_the_shifted_type():
    """``i64(x) << u32(40)`` was refused ('operands of '<<' have different types'); SPIR-V's shifts take a count
    of any integer width, and GLSL does: the count is converted to the shifted value's type (a count below the
    width keeps its value; larger ones are undefined anyway)."""
    import numpy as np

    compile_checked(wide_shifts, r"OpUConvert %ulong", r"OpShiftLeftLogical %long", r"OpShiftRightArithmetic %long",
                    r"OpUConvert %uint", r"OpShiftLeftLogical %int", r"OpShiftLeftLogical %v2long")
    out = np.zeros(4, np.int64)
    wide_shifts.launch((1,), out, 5, 40, device="cpu")
    assert out.tolist() == [5 << 40, -5 >> 3, 5 << 10, (5 << 40) + (5 << 1)]


@cd.kernel(workgroup_size=(1, 1, 1))
def vector_shift_40(out: cd.Buffer[cd.vec2[u32]]):
    out[0] = out[0] << cd.vec2[cd.u64](1, 40)  # E:vshift


@cd.kernel(workgroup_size=(1, 1, 1))
def vector_div_0(out: cd.Buffer[cd.vec2[u32]]):
    out[0] = out[0] // cd.vec2[u32](1, 0)  # E:vdiv


def test_a_constant_vector_count_or_divisor_is_checked_component_by_component():
    """A constant scalar shift count past the width (or divisor 0) was refused, a constant vector's was not:
    ``v << vec2[u64](1, 40)`` gave [6, 0] on the interpreter and [6, 768] on lavapipe."""
    from coopdsl.errors import ArgumentError

    from ..conftest import expect_error

    expect_error(vector_shift_40, ArgumentError, "a shift of u32 by 40: the count must be from 0 to 31", "# E:vshift",
                 14)
    expect_error(vector_div_0, ArgumentError, "integer division by the constant 0", "# E:vdiv", 14)


@cd.kernel(workgroup_size=(32, 1, 1))
def matrix_div_0(out: cd.Buffer[u32]):
    t = cd.Acc[u32, 16, 16].splat(1)
    t = t // 0  # E:mdiv
    t.store(out, 0, stride=16)


def test_an_integer_matrix_divided_by_the_constant_0_is_refused_as_a_scalar_is():
    """``Acc[u32, ...] // 0`` compiled (and ran on the interpreter) where ``u // 0`` and a vector's were refused."""
    from coopdsl.errors import ArgumentError

    from ..conftest import expect_error

    expect_error(matrix_div_0, ArgumentError, "integer division by the constant 0", "# E:mdiv", 9)


@cd.kernel(workgroup_size=(1, 1, 1))
def powers(x: cd.Buffer[f32], k: cd.Buffer[i32], o: cd.Buffer[f32], oi: cd.Buffer[i32],
           ov: cd.Buffer[cd.vec4[f32]]):
    a = x[0]
    o[0] = a ** 2
    o[1] = a ** 3
    o[2] = a ** 0
    o[3] = a ** 1
    o[4] = a ** -2
    o[5] = a ** 10
    oi[0] = k[0] ** 3
    oi[1] = k[0] ** 0
    ov[0] = cd.vec4[f32](a, a + 1.0, a + 2.0, a + 3.0) ** 2
    n = 5
    o[6] = (a + 1.0) ** n


def test_a_power_with_a_compile_time_integer_exponent_is_multiplications():
    """x ** n (n a compile-time int) squares and multiplies, as C++ code writes small powers; x ** 0 is 1 and a
    float's x ** -n is 1 / x ** n."""
    text = compile_checked(powers, r"OpFMul %float", r"OpIMul %int", r"OpFMul %v4float", r"OpFDiv %float",
                           absent=(r"Pow",))
    # a**2; a**3; a**-2 (then a division); a**10 (3 squarings, one product); (a+1)**5 (2 squarings, one product)
    assert text.count("OpFMul %float") == 1 + 2 + 1 + 4 + 3
    o, oi, ov = np.zeros(7, np.float32), np.zeros(2, np.int32), np.zeros((1, 4), np.float32)
    powers.launch((1, 1, 1), np.array([1.5], np.float32), np.array([-3], np.int32), o, oi, ov, device="cpu")
    a = np.float32(1.5)
    np.testing.assert_allclose(o, [a ** 2, a ** 3, 1.0, a, 1 / a ** 2, a ** 10, 2.5 ** 5], rtol=2e-7)
    assert oi.tolist() == [-27, 1] and ov.tolist() == [[2.25, 6.25, 12.25, 20.25]]


@cd.kernel(workgroup_size=(1, 1, 1))
def power_runtime_exponent(x: cd.Buffer[f32], k: cd.Buffer[i32]):
    x[0] = x[1] ** k[0]  # E:pow-runtime


@cd.kernel(workgroup_size=(1, 1, 1))
def power_of_a_runtime_exponent(k: cd.Buffer[i32]):
    k[0] = 2 ** k[1]  # E:pow-base


@cd.kernel(workgroup_size=(1, 1, 1))
def power_float_exponent(x: cd.Buffer[f32]):
    x[0] = x[1] ** 0.5  # E:pow-float


@cd.kernel(workgroup_size=(1, 1, 1))
def power_negative_of_an_int(k: cd.Buffer[i32]):
    k[0] = k[1] ** -1  # E:pow-negative


def test_other_powers_are_located_errors_naming_cd_pow():
    expect_error(power_runtime_exponent, TypeMismatchError, "'**' of a runtime value takes a compile-time integer "
                 "exponent (x ** 2), got i32 as the exponent; use cd.pow(x, y) for others", "# E:pow-runtime", 12)
    expect_error(power_of_a_runtime_exponent, TypeMismatchError, "'**' with a runtime exponent (i32) is not "
                 "supported; use cd.pow(x, y) for floats, or a shift (1 << k) for powers of two", "# E:pow-base", 12)
    expect_error(power_float_exponent, TypeMismatchError, "got float 0.5 as the exponent", "# E:pow-float", 12)
    expect_error(power_negative_of_an_int, TypeMismatchError, "a negative power of i32 (-1) is not an integer",
                 "# E:pow-negative", 12)


@cd.kernel(workgroup_size=(1, 1, 1))
def power_of_bf16(x: cd.Buffer[cd.bf16]):
    x[0] = x[1] ** 2  # E:pow-bf16


def test_a_power_of_bf16_names_the_power():
    expect_error(power_of_bf16, TypeMismatchError, "bf16 values cannot be used with '**'", "# E:pow-bf16", 12)
