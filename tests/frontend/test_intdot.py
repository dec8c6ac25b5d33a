"""cd.dot4x8: integer dot products of four 8-bit lanes (SPV_KHR_integer_dot_product), validated by spirv-val
on SPIR-V 1.6 (core) and 1.3 (the extension), matched against numpy on the interpreter, and its errors."""

from __future__ import annotations

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import i8, i32, u8, u32, vec4
from coopdsl.errors import TypeMismatchError

from ..conftest import compile_checked, expect_error


@cd.kernel(workgroup_size=(32, 1, 1))
def packed(a: cd.Buffer[i32], b: cd.Buffer[i32], ua: cd.Buffer[u32], ub: cd.Buffer[u32],
           ss: cd.Buffer[i32], uu: cd.Buffer[u32], su: cd.Buffer[i32], us: cd.Buffer[i32]):
    i = cd.global_invocation_id.x
    ss[i] = cd.dot4x8(a[i], b[i])
    uu[i] = cd.dot4x8(ua[i], ub[i])
    su[i] = cd.dot4x8(a[i], ub[i])
    us[i] = cd.dot4x8(ua[i], b[i])


@cd.kernel(workgroup_size=(32, 1, 1))
def vectors(a: cd.Buffer[vec4[i8]], b: cd.Buffer[vec4[i8]], ua: cd.Buffer[vec4[u8]], ub: cd.Buffer[vec4[u8]],
            ss: cd.Buffer[i32], uu: cd.Buffer[u32], su: cd.Buffer[i32]):
    i = cd.global_invocation_id.x
    ss[i] = cd.dot4x8(a[i], b[i])
    uu[i] = cd.dot4x8(ua[i], ub[i])
    su[i] = cd.dot4x8(a[i], ub[i])


def _lanes(x: np.ndarray, signed: bool) -> np.ndarray:
    return x.view(np.int8 if signed else np.uint8).reshape(-1, 4).astype(np.int64)


@pytest.mark.parametrize("env", ["vulkan1.3", "vulkan1.1"])
def test_packed_lanes_compile_to_the_dot_instructions(env):
    text = compile_checked(packed, r"OpCapability DotProductInput4x8BitPacked", r"OpCapability DotProduct\b",
                           r"OpSDot %int %\w+ %\w+ PackedVectorFormat4x8Bit",
                           r"OpUDot %uint %\w+ %\w+ PackedVectorFormat4x8Bit",
                           r"OpSUDot %int %\w+ %\w+ PackedVectorFormat4x8Bit", target_env=env)
    assert ('OpExtension "SPV_KHR_integer_dot_product"' in text) == (env == "vulkan1.1")


def test_vectors_of_8_bit_lanes_compile_to_the_dot_instructions():
    compile_checked(vectors, r"OpCapability DotProductInput4x8Bit\b", r"OpSDot %int %\w+ %\w+\n",
                    r"OpUDot %uint %\w+ %\w+\n", r"OpSUDot %int %\w+ %\w+\n")


def test_packed_lanes_on_the_interpreter_match_numpy():
    rng = np.random.default_rng(0)
    a, b = (rng.integers(-2**31, 2**31, 32).astype(np.int32) for _ in range(2))
    ua, ub = a.view(np.uint32).copy(), b.view(np.uint32).copy()
    out = {k: np.zeros(32, np.uint32 if k == "uu" else np.int32) for k in ("ss", "uu", "su", "us")}
    packed.launch((1,), a, b, ua, ub, out["ss"], out["uu"], out["su"], out["us"], device="cpu")
    sa, sb, la, lb = _lanes(a, True), _lanes(b, True), _lanes(a, False), _lanes(b, False)
    assert out["ss"].tolist() == (sa * sb).sum(1).tolist()
    assert out["uu"].tolist() == (la * lb).sum(1).tolist()
    assert out["su"].tolist() == (sa * lb).sum(1).tolist()
    assert out["us"].tolist() == (la * sb).sum(1).tolist()  # (the signed operand's lanes are signed)


def test_vector_lanes_on_the_interpreter_match_numpy():
    rng = np.random.default_rng(1)
    a, b = (rng.integers(-128, 128, (32, 4)).astype(np.int8) for _ in range(2))
    ua, ub = a.view(np.uint8).copy(), b.view(np.uint8).copy()
    ss, su = np.zeros(32, np.int32), np.zeros(32, np.int32)
    uu = np.zeros(32, np.uint32)
    vectors.launch((1,), a, b, ua, ub, ss, uu, su, device="cpu")
    assert ss.tolist() == (a.astype(np.int64) * b).sum(1).tolist()
    assert uu.tolist() == (ua.astype(np.int64) * ub).sum(1).tolist()
    assert su.tolist() == (a.astype(np.int64) * ub).sum(1).tolist()


@cd.kernel(workgroup_size=(32, 1, 1))
def k_float(a: cd.Buffer[cd.f32], o: cd.Buffer[i32]):
    o[0] = cd.dot4x8(a[0], a[0])  # E:float


@cd.kernel(workgroup_size=(32, 1, 1))
def k_mixed(a: cd.Buffer[i32], v: cd.Buffer[vec4[i8]], o: cd.Buffer[i32]):
    o[0] = cd.dot4x8(a[0], v[0])  # E:mixed


@cd.kernel(workgroup_size=(32, 1, 1))
def k_number(a: cd.Buffer[i32], o: cd.Buffer[i32]):
    o[0] = cd.dot4x8(a[0], 0x01010101) + cd.dot4x8(-0x01010102, a[1])   # (lanes of -2, -1, -1, -1 ... as i32)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_too_big(a: cd.Buffer[i32], o: cd.Buffer[i32]):
    o[0] = cd.dot4x8(a[0], 0x101010101)  # E:big


@cd.kernel(workgroup_size=(32, 1, 1))
def k_float_number(a: cd.Buffer[i32], o: cd.Buffer[i32]):
    o[0] = cd.dot4x8(a[0], 1.0)  # E:fnum


@cd.kernel(workgroup_size=(32, 1, 1))
def k_two_numbers(o: cd.Buffer[i32]):
    o[0] = cd.dot4x8(1, 2)  # E:two


@cd.kernel(workgroup_size=(32, 1, 1))
def k_vector_and_number(v: cd.Buffer[vec4[i8]], o: cd.Buffer[i32]):
    o[0] = cd.dot4x8(v[0], 1)  # E:vecnum


@cd.kernel(workgroup_size=(32, 1, 1))
def k_wide(a: cd.Buffer[vec4[u32]], o: cd.Buffer[u32]):
    o[0] = cd.dot4x8(a[0], a[0])  # E:wide


@pytest.mark.parametrize("k,marker,got", [
    (k_float, "# E:float", "f32 and f32"), (k_mixed, "# E:mixed", "i32 and vec4[i8]"),
    (k_wide, "# E:wide", "vec4[u32] and vec4[u32]")])
def test_operands_that_are_not_four_8_bit_lanes_are_refused_at_the_call(k, marker, got):
    expect_error(k, TypeMismatchError, f"dot4x8() takes two 32-bit integers holding four 8-bit lanes each (i32 or "
                                       f"u32), or two 4-vectors of 8-bit integers (vec4[i8] or vec4[u8]), got {got}",
                 marker, 12)


def test_a_python_int_is_a_constant_of_the_other_operands_type():
    """As glslang's dotPacked4x8EXT(x, 0x01010101u): the int becomes an i32/u32 constant, which it must fit."""
    text = compile_checked(k_number)
    assert "OpSDot %int" in text and "%int_16843009 = OpConstant %int 16843009" in text
    a = np.array([np.frombuffer(np.array([1, 2, -3, 4], np.int8).tobytes(), np.int32)[0], 0x01020304], np.int32)
    o = np.zeros(1, np.int32)
    k_number.launch((1, 1, 1), a, o, device="cpu")
    lanes = np.frombuffer(np.int32(-0x01010102).tobytes(), np.int8).astype(np.int64)
    assert o[0] == 4 + int(lanes @ np.array([4, 3, 2, 1]))


@pytest.mark.parametrize("k,marker,message", [
    (k_too_big, "# E:big", "the literal 4311810305 does not fit in i32"),
    (k_float_number, "# E:fnum", "dot4x8() takes an int with a packed 32-bit operand (i32 or u32), got 1.0 with i32"),
    (k_two_numbers, "# E:two", "dot4x8() takes at least one runtime operand, got the numbers 1 and 2"),
    (k_vector_and_number, "# E:vecnum",
     "dot4x8() takes an int with a packed 32-bit operand (i32 or u32), got 1 with vec4[i8]")])
def test_numbers_that_cannot_be_an_operand_are_refused_at_the_call(k, marker, message):
    expect_error(k, TypeMismatchError, message, marker, 12)


def test_packed_lanes_on_a_vulkan_device(device):
    rng = np.random.default_rng(2)
    a, b = (rng.integers(-2**31, 2**31, 32).astype(np.int32) for _ in range(2))
    ua, ub = a.view(np.uint32).copy(), b.view(np.uint32).copy()
    got = {k: np.zeros(32, np.uint32 if k == "uu" else np.int32) for k in ("ss", "uu", "su", "us")}
    want = {k: np.zeros(32, np.uint32 if k == "uu" else np.int32) for k in ("ss", "uu", "su", "us")}
    packed.launch((1,), a, b, ua, ub, *got.values(), device=device)
    packed.launch((1,), a, b, ua, ub, *want.values(), device="cpu")
    for k in got:
        assert got[k].tolist() == want[k].tolist(), k
