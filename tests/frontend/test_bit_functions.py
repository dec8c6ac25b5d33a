"""GLSL's bit functions: cd.bit_count, bit_reverse, bitfield_extract, bitfield_insert (SPIR-V core OpBitCount,
OpBitReverse, OpBitFieldS/UExtract, OpBitFieldInsert) and cd.find_lsb, find_msb (GLSL.std.450 FindILsb,
FindSMsb, FindUMsb): the instructions in the validated module, the interpreter against a Python model of each
at the edges (0, all ones, the sign bit, fields at either end), and the mistakes (not 32-bit, floats, a
field past 32 bits, an insert of another type) at their line."""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f32, i32, u32, vec2, vec4
from coopdsl.errors import TypeMismatchError

from ..conftest import compile_checked, expect_error

M = 0xFFFFFFFF


@cd.kernel(workgroup_size=(32, 1, 1))
def bits(a: cd.Buffer[u32], b: cd.Buffer[i32], out: cd.Buffer[u32], outi: cd.Buffer[i32], v: cd.Buffer[vec2[u32]],
         vo: cd.Buffer[vec2[u32]], off: u32, n: u32):
    i = cd.global_invocation_id.x
    x = a[i]
    y = b[i]
    out[6 * i + 0] = cd.bit_count(x)
    out[6 * i + 1] = cd.bit_reverse(x)
    out[6 * i + 2] = cd.bitfield_extract(x, off, n)
    out[6 * i + 3] = cd.bitfield_insert(x, a[(i + 1) % 32], off, n)
    out[6 * i + 4] = cd.find_lsb(x)
    out[6 * i + 5] = cd.find_msb(x)
    outi[4 * i + 0] = cd.bitfield_extract(y, off, n)
    outi[4 * i + 1] = cd.find_msb(y)
    outi[4 * i + 2] = cd.bit_count(y)
    outi[4 * i + 3] = cd.bit_reverse(y)
    vo[i] = cd.bit_count(v[i]) + cd.bitfield_extract(v[i], 4, 8)


def test_the_instructions_are_in_the_validated_module():
    compile_checked(bits, r"OpBitCount %uint", r"OpBitCount %int", r"OpBitCount %v2uint", r"OpBitReverse %uint",
                    r"OpBitFieldUExtract %uint", r"OpBitFieldSExtract %int", r"OpBitFieldInsert %uint",
                    r"OpExtInst %uint %\w+ FindILsb", r"OpExtInst %uint %\w+ FindUMsb",
                    r"OpExtInst %int %\w+ FindSMsb")


def _count(x):
    return bin(int(x) & M).count("1")


def _reverse(x):
    return int(format(int(x) & M, "032b")[::-1], 2)


def _extract(x, o, n, signed):
    f = ((int(x) & M) >> o) & ((1 << n) - 1) if n else 0
    return f - (1 << n) if signed and n and f >> (n - 1) else f


def _insert(x, y, o, n):
    mask = (((1 << n) - 1) << o) & M
    return ((int(x) & ~mask) | ((int(y) << o) & mask)) & M


def _lsb(x):
    x = int(x) & M
    return M if x == 0 else (x & -x).bit_length() - 1


def _msb(x, signed):
    x = int(x)
    if signed:
        x = ~x if x < 0 else x
        return -1 if x == 0 else x.bit_length() - 1
    x &= M
    return M if x == 0 else x.bit_length() - 1


@pytest.mark.parametrize("off,n", [(7, 5), (0, 32), (0, 0), (31, 1), (16, 16), (3, 1)])
def test_the_interpreter_matches_the_definitions(off, n):
    rng = np.random.default_rng(off * 33 + n)
    a = rng.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
    a[:4] = (0, M, 1, 0x80000000)
    b = rng.integers(-2**31, 2**31, 32, dtype=np.int64).astype(np.int32)
    b[:4] = (0, -1, -2**31, 1)
    v = rng.integers(0, 2**32, (32, 2), dtype=np.uint64).astype(np.uint32)
    out, outi, vo = np.zeros(6 * 32, np.uint32), np.zeros(4 * 32, np.int32), np.zeros((32, 2), np.uint32)
    bits.launch((1,), a, b, out, outi, v, vo, off, n, device="cpu")
    for i in range(32):
        assert [int(g) for g in out[6 * i:6 * i + 6]] == [
            _count(a[i]), _reverse(a[i]), _extract(a[i], off, n, False), _insert(a[i], a[(i + 1) % 32], off, n),
            _lsb(a[i]), _msb(a[i], False)], i
        assert [int(g) for g in outi[4 * i:4 * i + 4]] == [
            _extract(b[i], off, n, True), _msb(b[i], True), _count(b[i]),
            int(np.array([_reverse(b[i])], np.uint32).view(np.int32)[0])], i
        assert [int(q) for q in vo[i]] == [_count(v[i][j]) + _extract(v[i][j], 4, 8, False) for j in range(2)]


@cd.kernel(workgroup_size=(1, 1, 1))
def k_wide(a: cd.Buffer[cd.u64]):
    a[0] = cd.bit_count(a[1])  # E:wide


@cd.kernel(workgroup_size=(1, 1, 1))
def k_float(a: cd.Buffer[f32]):
    a[0] = cd.find_msb(a[1])  # E:float


@cd.kernel(workgroup_size=(1, 1, 1))
def k_field(a: cd.Buffer[u32]):
    a[0] = cd.bitfield_extract(a[1], 0, 33)  # E:field


@cd.kernel(workgroup_size=(1, 1, 1))
def k_insert(a: cd.Buffer[u32], b: cd.Buffer[i32]):
    a[0] = cd.bitfield_insert(a[1], b[0], 0, 4)  # E:insert


@cd.kernel(workgroup_size=(1, 1, 1))
def k_msb16(a: cd.Buffer[cd.u16]):
    a[0] = cd.find_lsb(a[1])  # E:msb16


def test_mistakes_are_located_errors():
    expect_error(k_wide, TypeMismatchError, "bit_count() takes 32-bit integer scalars or vectors (i32, u32, "
                 "vecN[i32], vecN[u32]), got u64", "# E:wide", 12)
    expect_error(k_float, TypeMismatchError, "find_msb() takes 32-bit integers (GLSL.std.450), got f32", "# E:float",
                 12)
    expect_error(k_field, TypeMismatchError, "bitfield_extract() bits must be an integer from 0 to 32, got 33",
                 "# E:field", 12)
    expect_error(k_insert, TypeMismatchError, "bitfield_insert() insert must be u32 like base, got i32",
                 "# E:insert", 12)
    expect_error(k_msb16, TypeMismatchError, "find_lsb() takes 32-bit integers (GLSL.std.450), got u16",
                 "# E:msb16", 12)


@cd.kernel(workgroup_size=(32, 1, 1))
def halves(v: cd.Buffer[vec2[f32]], p: cd.Buffer[u32], back: cd.Buffer[vec2[f32]]):
    i = cd.global_invocation_id.x
    p[i] = cd.pack_half_2x16(v[i])
    back[i] = cd.unpack_half_2x16(p[i] ^ u32(0x80000000))   # the second half's sign flipped


def test_half_pairs_pack_and_unpack_as_glsl_does():
    compile_checked(halves, r"OpExtInst %uint %\w+ PackHalf2x16", r"OpExtInst %v2float %\w+ UnpackHalf2x16")
    rng = np.random.default_rng(1)
    v = rng.standard_normal((32, 2)).astype(np.float32) * 100
    v[0] = (1.0, -2.0)
    v[1] = (65504.0, 1e-7)            # the largest f16, and a value f16 rounds to a subnormal
    v[2] = (np.inf, -0.0)
    p, back = np.zeros(32, np.uint32), np.zeros((32, 2), np.float32)
    halves.launch((1,), v, p, back, device="cpu")
    h = v.astype(np.float16)
    assert np.array_equal(p, h.view(np.uint16)[:, 0].astype(np.uint32) | h.view(np.uint16)[:, 1].astype(np.uint32)
                          << 16)
    assert p[0] == 0x3C00 | 0xC000 << 16
    want = h.astype(np.float32)
    want[:, 1] = -want[:, 1]
    assert np.array_equal(back, want)


@cd.kernel(workgroup_size=(32, 1, 1))
def normalized(v4: cd.Buffer[vec4[f32]], v2: cd.Buffer[vec2[f32]], p: cd.Buffer[u32], b4: cd.Buffer[vec4[f32]],
               b2: cd.Buffer[vec2[f32]], raw: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    p[4 * i] = cd.pack_unorm_4x8(v4[i])
    p[4 * i + 1] = cd.pack_snorm_4x8(v4[i])
    p[4 * i + 2] = cd.pack_unorm_2x16(v2[i])
    p[4 * i + 3] = cd.pack_snorm_2x16(v2[i])
    b4[2 * i] = cd.unpack_unorm_4x8(raw[i])
    b4[2 * i + 1] = cd.unpack_snorm_4x8(raw[i])
    b2[2 * i] = cd.unpack_unorm_2x16(raw[i])
    b2[2 * i + 1] = cd.unpack_snorm_2x16(raw[i])


def _packed(c, bits, signed):
    """GLSL's packUnorm/packSnorm in numpy: clamp, scale, round, the low bits first."""
    top = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
    q = np.rint(np.clip(c, -1.0 if signed else 0.0, 1.0).astype(np.float32) * np.float32(top)).astype(np.int64)
    q &= (1 << bits) - 1
    return sum(q[:, j].astype(np.uint64) << np.uint64(bits * j) for j in range(c.shape[1])).astype(np.uint32)


def _unpacked(p, n, bits, signed):
    q = np.stack([(p.astype(np.int64) >> (bits * j)) & ((1 << bits) - 1) for j in range(n)], axis=1)
    if signed:
        q = np.where(q >= 1 << (bits - 1), q - (1 << bits), q)
        return np.maximum(q.astype(np.float32) / np.float32((1 << (bits - 1)) - 1), np.float32(-1.0))
    return q.astype(np.float32) / np.float32((1 << bits) - 1)


def _run_normalized(device):
    rng = np.random.default_rng(4)
    v4 = rng.uniform(-1.3, 1.3, (32, 4)).astype(np.float32)
    v4[0] = (0.0, 1.0, -1.0, 2.0)                       # the ends, and past them (clamped)
    v2 = rng.uniform(-1.3, 1.3, (32, 2)).astype(np.float32)
    v2[0] = (-5.0, 0.25)
    raw = rng.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
    raw[0] = 0x807F80FF                                 # -128 and 0x8000: snorm's value below -1, clamped to -1
    p = np.zeros(128, np.uint32)
    b4, b2 = np.zeros((64, 4), np.float32), np.zeros((64, 2), np.float32)
    normalized.launch((1,), v4, v2, p, b4, b2, raw, device=device)
    assert p[0::4].tolist() == _packed(v4, 8, False).tolist() and p[1::4].tolist() == _packed(v4, 8, True).tolist()
    assert p[2::4].tolist() == _packed(v2, 16, False).tolist() and p[3::4].tolist() == _packed(v2, 16, True).tolist()
    assert p[0] == 0xFF_00_FF_00 and p[1] == 0x7F_81_7F_00     # (GLSL: 2.0 -> 255, -1 -> 0; snorm -1 -> 0x81)
    np.testing.assert_allclose(b4[0::2], _unpacked(raw, 4, 8, False), rtol=1e-6)
    np.testing.assert_allclose(b4[1::2], _unpacked(raw, 4, 8, True), rtol=1e-6)
    np.testing.assert_allclose(b2[0::2], _unpacked(raw, 2, 16, False), rtol=1e-6)
    np.testing.assert_allclose(b2[1::2], _unpacked(raw, 2, 16, True), rtol=1e-6)
    assert b4[1].tolist() == [np.float32(-1 / 127), -1.0, 1.0, -1.0]   # (bytes FF 80 7F 80: -128 clamped to -1)


def test_normalized_packings_pack_and_unpack_as_glsl_does():
    """GLSL's packUnorm4x8, packSnorm4x8, packUnorm2x16, packSnorm2x16 and their unpacks (GLSL.std.450): they
    were missing (found by porting GLSL kernels from docs/glsl-mapping.md alone)."""
    compile_checked(normalized, *(rf"OpExtInst %uint %\w+ Pack{f}\b" for f in ("Unorm4x8", "Snorm4x8", "Unorm2x16",
                                                                               "Snorm2x16")),
                    r"OpExtInst %v4float %\w+ UnpackUnorm4x8", r"OpExtInst %v4float %\w+ UnpackSnorm4x8",
                    r"OpExtInst %v2float %\w+ UnpackUnorm2x16", r"OpExtInst %v2float %\w+ UnpackSnorm2x16")
    _run_normalized("cpu")


def test_normalized_packings_on_the_device(device):
    _run_normalized(device)


@cd.kernel(workgroup_size=(1, 1, 1))
def k_pack_norm_vec2(a: cd.Buffer[vec2[f32]], o: cd.Buffer[u32]):
    o[0] = cd.pack_unorm_4x8(a[0])  # E:unorm2


@cd.kernel(workgroup_size=(1, 1, 1))
def k_unpack_norm_i32(a: cd.Buffer[i32], o: cd.Buffer[vec2[f32]]):
    o[0] = cd.unpack_snorm_2x16(a[0])  # E:snormi


def test_normalized_packings_take_their_vector_and_a_u32():
    expect_error(k_pack_norm_vec2, TypeMismatchError, "pack_unorm_4x8() takes a vec4[f32], got vec2[f32]",
                 "# E:unorm2", 12)
    expect_error(k_unpack_norm_i32, TypeMismatchError, "unpack_snorm_2x16() takes a u32, got i32", "# E:snormi", 12)


@cd.kernel(workgroup_size=(1, 1, 1))
def k_pack_vec3(a: cd.Buffer[cd.vec3[f32]], o: cd.Buffer[u32]):
    o[0] = cd.pack_half_2x16(a[0])  # E:pack3


def test_half_pairs_take_a_vec2_and_a_u32():
    expect_error(k_pack_vec3, TypeMismatchError, "pack_half_2x16() takes a vec2[f32], got vec3[f32]", "# E:pack3", 12)


@cd.kernel(workgroup_size=(1, 1, 1))
def k_past(a: cd.Buffer[u32]):
    a[0] = cd.bitfield_extract(a[1], 30, 4)  # E:past


@cd.kernel(workgroup_size=(32, 1, 1))
def k_past_runtime(a: cd.Buffer[u32], off: u32):
    a[cd.global_invocation_id.x] = cd.bitfield_insert(a[1], a[2], off + cd.global_invocation_id.x % 16, 8)  # E:runtime


def test_a_field_past_bit_31_is_reported_at_compile_time_or_by_the_interpreter():
    """offset + bits > 32 is undefined in SPIR-V: two numbers are refused by the compiler, runtime values by the
    interpreter at the first invocation whose field reaches past bit 31."""
    from coopdsl.interp import InterpreterError

    expect_error(k_past, TypeMismatchError, "bitfield_extract() field from bit 30 to 34 reaches past bit 31 "
                 "(offset + bits must be at most 32)", "# E:past", 12)
    a = np.zeros(32, np.uint32)
    k_past_runtime.launch((1,), a, 0, device="cpu")          # every field ends by bit 23
    with pytest.raises(InterpreterError, match=r"bit field from bit 25 to 33 reaches past bit 31 \(offset \+ bits "
                                               r"> 32\): the result is undefined; in workgroup \(0, 0, 0\), local "
                                               r"invocation 5 ") as e:
        k_past_runtime.launch((1,), a, 20, device="cpu")
    assert e.value.loc.line == next(i for i, t in enumerate(open(__file__).read().splitlines(), 1)
                                    if t.endswith("# E:runtime"))


@cd.kernel(workgroup_size=(4, 1, 1))
def k_guarded_shift(s: cd.Buffer[u32], o: cd.Buffer[u32]):
    i = cd.local_invocation_index
    n = s[i]
    o[i] = (u32(1) << n) - 1 if n < 32 else u32(0xFFFFFFFF)


def test_a_guarded_shift_by_the_width_runs():
    """The conditional expression is an OpSelect: both sides are computed and the shift by 32 or more, whose value
    SPIR-V leaves undefined, is discarded. Reporting that shift (as this session first did, for unguarded ones
    whose results differ between GPUs) refused this correct kernel; the interpreter gives 0 there and goes on."""
    assert "OpSelect" in k_guarded_shift.disassemble()
    o = np.zeros(4, np.uint32)
    k_guarded_shift.launch((1,), np.array([1, 5, 32, 40], np.uint32), o, device="cpu")
    assert o.tolist() == [1, 31, 0xFFFFFFFF, 0xFFFFFFFF]


@cd.kernel(workgroup_size=(8, 1, 1), subgroup_size=8)
def mixed_fields(x: cd.Buffer[u32], xv: cd.Buffer[vec4[u32]], o: cd.Buffer[u32], oi: cd.Buffer[i32],
                 ov: cd.Buffer[vec4[u32]], oc: cd.Buffer[vec4[u32]]):
    i = cd.global_invocation_id.x
    n = x[i]
    o[i] = cd.bitfield_insert(n, u32(0xFFFFFFFF), u32(4), n)          # a uniform offset, a per-lane count
    oi[i] = cd.bitfield_extract(i32(n) * -77, u32(3), n)              # the same, signed
    ov[i] = cd.bitfield_extract(xv[i], u32(2), xv[i].x & u32(7))      # a vector base, per-lane count
    oc[i] = cd.bitfield_extract(vec4[u32](0xFFFF), xv[i].x & u32(7), u32(4))  # a uniform vector base


def test_a_field_of_uniform_and_per_lane_parts_on_the_interpreter():
    """A uniform offset with a per-lane count (or a vector base against per-lane parts) was broadcast to (lanes,
    lanes) or failed to broadcast: a numpy ValueError from inside the interpreter, where lavapipe ran them (found
    by differential testing against lavapipe)."""
    x = np.arange(8, dtype=np.uint32) * 3
    xv = (np.arange(32, dtype=np.uint64) * 2654435761 % 2**32).astype(np.uint32).reshape(8, 4)
    o, oi = np.zeros(8, np.uint32), np.zeros(8, np.int32)
    ov, oc = np.zeros((8, 4), np.uint32), np.zeros((8, 4), np.uint32)
    mixed_fields.launch((1,), x, xv, o, oi, ov, oc, device="cpu")
    assert o.tolist() == [_insert(n, 0xFFFFFFFF, 4, n) for n in x.tolist()]
    assert oi.tolist() == [_extract(n * -77, 3, n, True) for n in x.tolist()]
    assert ov.tolist() == [[_extract(v, 2, int(row[0]) & 7, False) for v in row] for row in xv.tolist()]
    assert oc.tolist() == [[_extract(0xFFFF, int(row[0]) & 7, 4, False)] * 4 for row in xv.tolist()]
