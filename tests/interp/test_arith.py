"""Scalar and vector arithmetic: integer wrap, division, shifts, conversions with rounding, bitcasts, math."""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import bf16, f16, f32, f64, i8, i32, i64, u8, u16, u32, u64, vec2, vec3, vec4


@cd.kernel(workgroup_size=(16, 1, 1))
def int_ops(a: cd.Buffer[i32], b: cd.Buffer[i32], out: cd.Buffer[i32], uo: cd.Buffer[u32], small: cd.Buffer[u8]):
    i = cd.local_invocation_index
    x = a[i]
    y = b[i]
    out[i * 6] = x + y
    out[i * 6 + 1] = x * y
    out[i * 6 + 2] = x // y
    out[i * 6 + 3] = x % y
    out[i * 6 + 4] = x >> 3
    out[i * 6 + 5] = -x ^ (y << 2)
    ux = u32(x)
    uo[i * 3] = ux // u32(y)
    uo[i * 3 + 1] = ux >> 3
    uo[i * 3 + 2] = ux * 3 + 7
    small[i] = u8(x) + u8(200)


def test_integer_wrap_truncating_division_and_shifts():
    rng = np.random.default_rng(1)
    a = rng.integers(-2**31, 2**31, 16).astype(np.int32)
    b = rng.integers(-100, 100, 16).astype(np.int32)
    b[b == 0] = 3
    a[0], b[0] = -7, 2   # truncation toward zero: -3, remainder -1
    a[1], b[1] = 7, -2
    out, uo, small = np.zeros(96, np.int32), np.zeros(48, np.uint32), np.zeros(16, np.uint8)
    int_ops.launch((1,), a, b, out, uo, small, device="cpu")
    r = out.reshape(16, 6)
    A, B = a.astype(np.int64), b.astype(np.int64)
    wrap = lambda v: ((v + 2**31) % 2**32 - 2**31).astype(np.int32)  # noqa: E731
    np.testing.assert_array_equal(r[:, 0], wrap(A + B))
    np.testing.assert_array_equal(r[:, 1], wrap(A * B))
    np.testing.assert_array_equal(r[:, 2], np.trunc(A / B).astype(np.int64))
    np.testing.assert_array_equal(r[:, 3], np.fmod(A, B))
    np.testing.assert_array_equal(r[:, 4], A >> 3)
    np.testing.assert_array_equal(r[:, 5], wrap(-A ^ (B << 2)))
    assert (r[0, 2], r[0, 3], r[1, 2], r[1, 3]) == (-3, -1, -3, 1)
    ua, ub = a.view(np.uint32).astype(np.uint64), b.view(np.uint32).astype(np.uint64)
    np.testing.assert_array_equal(uo.reshape(16, 3)[:, 0], ua // ub)
    np.testing.assert_array_equal(uo.reshape(16, 3)[:, 1], ua >> 3)
    np.testing.assert_array_equal(uo.reshape(16, 3)[:, 2], (ua * 3 + 7) % 2**32)
    np.testing.assert_array_equal(small, (a.astype(np.int64) + 200) % 256)


@cd.kernel(workgroup_size=(16, 1, 1))
def conversions(x: cd.Buffer[f32], wide: cd.Buffer[f64], h: cd.Buffer[f16], b: cd.Buffer[bf16],
                i: cd.Buffer[i32], u: cd.Buffer[u8], back: cd.Buffer[f32], big: cd.Buffer[i64]):
    k = cd.local_invocation_index
    v = x[k]
    h[k] = f16(v)
    b[k] = bf16(v)
    i[k] = i32(v)
    u[k] = u8(v)
    back[k] = f32(f16(wide[k]))
    big[k] = i64(i8(i[k] + 0)) + i64(u64(u16(u32(i[k]))))


def test_conversions_round_to_nearest_even_and_saturate():
    x = np.array([1.0 + 2**-11, 1.0 + 3 * 2**-11, 65520.0, -70000.0, 2.5, -2.7, 300.0, -1.0,
                  1.0 + 2**-8, 1.0 + 3 * 2**-8, np.nan, 3e9, -3e9, 255.9, 0.1, 1e-8], np.float32)
    wide = np.array([1.0 + 2**-11 + 2**-40] * 16)  # above the tie: double rounding would be wrong
    h, b = np.zeros(16, np.float16), np.zeros(16, np.uint16)
    i, u, back, big = np.zeros(16, np.int32), np.zeros(16, np.uint8), np.zeros(16, np.float32), np.zeros(16, np.int64)
    conversions.launch((1,), x, wide, h, b, i, u, back, big, device="cpu")
    np.testing.assert_array_equal(h[:4], np.array([1.0, 1.0 + 4 * 2**-11, np.inf, -np.inf], np.float16))
    bits = (x.view(np.uint32) >> 16).astype(np.uint16)
    assert b[8] == bits[8] and b[9] == bits[9] + 1  # ties to even in bf16
    assert b[10] & 0x7FFF > 0x7F80  # NaN stays NaN
    assert list(i[[4, 5, 10, 11, 12]]) == [2, -2, 0, 2**31 - 1, -2**31]  # truncate, NaN -> 0, saturate
    assert list(u[[6, 7, 13]]) == [255, 0, 255]
    assert back[0] == np.float32(1.0 + 2**-10)
    np.testing.assert_array_equal(big, i.astype(np.int8).astype(np.int64) + (i.astype(np.uint32) & 0xFFFF))


@cd.kernel(workgroup_size=(8, 1, 1))
def fp8(x: cd.Buffer[f32], a: cd.Buffer[cd.e4m3], b: cd.Buffer[cd.e5m2], back: cd.Buffer[f32]):
    k = cd.local_invocation_index
    a[k] = cd.e4m3(x[k])
    b[k] = cd.e5m2(x[k])
    back[k] = f32(cd.e4m3(x[k])) + f32(cd.e5m2(x[k])) * 1000.0


def test_fp8_conversions_round_to_nearest_even():
    from coopdsl.spirv.fp8 import fp8_bits

    x = np.array([1.0625, 1.1875, 448.0, 470.0, -0.001, 3.0, 70000.0, 2.0**-9], np.float32)
    a, b, back = np.zeros(8, np.uint8), np.zeros(8, np.uint8), np.zeros(8, np.float32)
    fp8.launch((1,), x, a, b, back, device="cpu")
    for k in (0, 1, 2, 4, 5, 7):  # in range: the compiler's encoder (round to nearest even) agrees
        assert a[k] == fp8_bits("Float8E4M3EXT", float(x[k])), k
    assert a[0] == 0x38 and a[1] == 0x3A  # 1.0625 ties down to 1.0, 1.1875 ties up to 1.25
    assert a[3] == 0x7F  # beyond E4M3's range: NaN (no infinities)
    assert b[6] == 0x7C  # beyond E5M2's range: infinity
    assert back[5] == 3.0 + 3000.0


@cd.kernel(workgroup_size=(4, 1, 1))
def bits(x: cd.Buffer[f32], v: cd.Buffer[vec2[f16]], out: cd.Buffer[u32], f: cd.Buffer[f32]):
    k = cd.local_invocation_index
    out[k] = cd.bitcast(x[k], u32)
    out[k + 4] = cd.bitcast(v[k], u32)
    f[k] = cd.bitcast(out[k] + 1, f32)


def test_bitcasts():
    x = np.array([1.0, -2.5, 0.0, np.inf], np.float32)
    v = np.arange(8, dtype=np.float16)
    out, f = np.zeros(8, np.uint32), np.zeros(4, np.float32)
    bits.launch((1,), x, v, out, f, device="cpu")
    np.testing.assert_array_equal(out[:4], x.view(np.uint32))
    np.testing.assert_array_equal(out[4:], v.view(np.uint32))
    np.testing.assert_array_equal(f, (x.view(np.uint32) + 1).view(np.float32))


@cd.kernel(workgroup_size=(16, 1, 1))
def vectors(a: cd.Buffer[vec4[f32]], b: cd.Buffer[vec3[f32]], out: cd.Buffer[vec4[f32]], flags: cd.Buffer[u32]):
    i = cd.local_invocation_index
    p = a[i]
    q = b[i]
    s = vec4[f32](q.zyx, cd.dot(p, p))
    s = cd.clamp(s, -1.0, 5.0) + p.wzyx * 0.5
    s = vec4[f32](s.x, cd.length(q), s.zw)
    out[i] = cd.mix(s, vec4[f32](0.0), p > 2.0)
    flags[i] = u32(cd.any(p > 3.0)) + u32(cd.all(p > -10.0)) * 2 + u32(cd.isnan(q.x)) * 4


def test_vectors_swizzles_and_vector_math():
    rng = np.random.default_rng(3)
    a = rng.uniform(-3, 4, (16, 4)).astype(np.float32)
    b = rng.uniform(-3, 4, (16, 4)).astype(np.float32)  # vec3 elements stride 16 bytes
    b[5, 0] = np.nan
    out, flags = np.zeros((16, 4), np.float32), np.zeros(16, np.uint32)
    vectors.launch((1,), a, b, out, flags, device="cpu")
    q = b[:, :3]
    s = np.concatenate([q[:, ::-1], (a * a).sum(1, keepdims=True)], axis=1)
    s = np.clip(s, -1, 5) + a[:, ::-1] * 0.5
    s[:, 1] = np.sqrt((q * q).sum(1))
    ref = np.where(a > 2, 0, s)
    ok = ~np.isnan(ref)
    np.testing.assert_allclose(out[ok], ref[ok], rtol=1e-5)
    np.testing.assert_array_equal(flags, (a > 3).any(1) + 2 * (a > -10).all(1) + 4 * np.isnan(b[:, 0]))


MATH = ["exp", "log2", "sqrt", "inversesqrt", "floor", "fract", "sin", "atan", "tanh", "abs", "sign", "round_even"]


@pytest.mark.parametrize("t,dtype", [(f32, np.float32), (f16, np.float16)], ids=["f32", "f16"])
def test_math_functions_match_numpy(t, dtype):
    @cd.kernel(workgroup_size=(32, 1, 1))
    def fns(x: cd.Buffer[t], out: cd.Buffer[t]):
        i = cd.local_invocation_index
        v = x[i]
        out[i * 14] = cd.exp(v)
        out[i * 14 + 1] = cd.log2(cd.abs(v) + 1.0)
        out[i * 14 + 2] = cd.sqrt(cd.abs(v))
        out[i * 14 + 3] = cd.inversesqrt(cd.abs(v) + 1.0)
        out[i * 14 + 4] = cd.floor(v)
        out[i * 14 + 5] = cd.fract(v)
        out[i * 14 + 6] = cd.sin(v)
        out[i * 14 + 7] = cd.atan(v)
        out[i * 14 + 8] = cd.tanh(v)
        out[i * 14 + 9] = cd.sign(v)
        out[i * 14 + 10] = cd.round_even(v)
        out[i * 14 + 11] = cd.min(v, 0.5)
        out[i * 14 + 12] = cd.fma(v, v, 1.0)
        out[i * 14 + 13] = cd.pow(cd.abs(v), 0.5) + cd.mod(v, 1.5)

    x = np.linspace(-3, 3, 32).astype(dtype)
    out = np.zeros(32 * 14, dtype)
    fns.launch((1,), x, out, device="cpu")
    r = out.reshape(32, 14).astype(np.float64)
    v = x.astype(np.float64)
    ref = [np.exp(v), np.log2(abs(v) + 1), np.sqrt(abs(v)), 1 / np.sqrt(abs(v) + 1), np.floor(v), v - np.floor(v),
           np.sin(v), np.arctan(v), np.tanh(v), np.sign(v), np.rint(v), np.minimum(v, 0.5), v * v + 1,
           np.sqrt(abs(v)) + (v - 1.5 * np.floor(v / 1.5))]
    tol = 1e-5 if t is f32 else 2e-3
    np.testing.assert_allclose(r, np.stack(ref, 1), rtol=tol, atol=tol)


@cd.kernel(workgroup_size=(8, 1, 1))
def compare(x: cd.Buffer[f32], out: cd.Buffer[u32]):
    i = cd.local_invocation_index
    v = x[i]
    out[i] = u32(v < 1.0) + u32(v == v) * 2 + u32(v != v) * 4 + cd.select(v > 0.0, u32(1), u32(2)) * 8


def test_comparisons_are_ordered_except_not_equal():
    x = np.array([0.0, 2.0, np.nan, -1.0, 1.0, np.inf, -np.inf, 0.5], np.float32)
    out = np.zeros(8, np.uint32)
    compare.launch((1,), x, out, device="cpu")
    with np.errstate(invalid="ignore"):
        ref = (x < 1) + 2 * (x == x) + 4 * (x != x) + 8 * np.where(x > 0, 1, 2)
    np.testing.assert_array_equal(out, ref)


@cd.kernel(workgroup_size=(16, 1, 1))
def rem_only(a: cd.Buffer[i32], b: cd.Buffer[i32], o: cd.Buffer[i32]):
    i = cd.local_invocation_index
    o[i] = a[i] % b[i]


def test_signed_remainder_truncates_for_every_sign_and_the_extremes():
    import math

    a = np.array([7, -7, 7, -7, -2**31, 5, 0, -1, 2**31 - 1, -100, 100, 3, -3, 9, -9, 1], np.int32)
    b = np.array([2, 2, -2, -2, -1, -3, 5, 7, -2**31, 7, -7, 2**31 - 1, 5, -1, 4, -2**31], np.int32)
    o = np.zeros(16, np.int32)
    rem_only.launch((1,), a, b, o, device="cpu")
    np.testing.assert_array_equal(o, [int(math.fmod(int(x), int(y))) for x, y in zip(a, b)])


@cd.kernel(workgroup_size=(1, 1, 1))
def mixed_shifts(y: cd.Buffer[i32], z: cd.Buffer[u32], s: u32, t: i32):
    y[0] = i32(-8) >> s
    y[1] = i32(-8) << s
    z[0] = u32(0x80000000) >> t
    z[1] = u32(3) << t


def test_a_shift_keeps_the_type_of_what_it_shifts():
    # i32 >> u32 took u32 (the int -> uint rule of other operators), a logical shift that could not even be stored to
    # an i32 buffer; GLSL and SPIR-V keep the shifted value's type (found by a user checking the docs alone)
    y, z = np.zeros(2, np.int32), np.zeros(2, np.uint32)
    mixed_shifts.launch((1,), y, z, 1, 1, device="cpu")
    assert y.tolist() == [-4, -16] and z.tolist() == [0x40000000, 6]
    text = mixed_shifts.disassemble()
    assert "OpShiftRightArithmetic %int" in text and "OpShiftRightLogical %uint" in text
