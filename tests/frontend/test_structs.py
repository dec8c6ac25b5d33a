"""Structs, uniform blocks, push-constant structs and buffer device addresses (Ptr[T])."""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, NameResolutionError, f16, f32, u32, vec2, vec4

from ..conftest import compile_checked, expect_error


@cd.struct
class Params:
    M: u32
    alpha: f32
    src: cd.Ptr[f32]
    a: cd.Ptr[f16]


@cd.struct
class Item:
    x: f32
    y: u32
    v: vec4[f32]


@cd.kernel(workgroup_size=(32, 1, 1))
def with_structs(items: cd.Buffer[Item], out: cd.Buffer[f32], cfg: cd.Uniform[Params], p: Params,
                 dst: cd.Ptr[f32]):
    i = cd.global_invocation_id.x
    it = items[i]
    v = p.src[i] * p.alpha + it.x + cfg.alpha + f32(it.y) + it.v.w
    dst[i] = v
    q = dst + 4
    q[i] = v * 2.0
    ta = MatA[f16, 16, 16].load(p.a, 0, stride=16)
    acc = cd.muladd(ta, MatB[f16, 16, 16].load(p.a, 256, stride=16), Acc[f32, 16, 16].splat(0.0))
    acc.store(dst, 1024, stride=16)
    out[i] = f32(cfg.M + p.M)


def test_structs_uniforms_and_pointers():
    compile_checked(
        with_structs, r"OpMemoryModel PhysicalStorageBuffer64 Vulkan", r"OpCapability PhysicalStorageBufferAddresses",
        r"%cfg = OpVariable %_ptr_Uniform_cfg_ubo Uniform", r"OpMemberDecorate %Item 2 Offset 16",
        r"OpDecorate %_runtimearr_Item ArrayStride 32", r"OpMemberDecorate %Params 2 Offset 8",
        r"OpLoad %float %\w+ Aligned 4", r"OpStore %\w+ %\w+ Aligned 4", r"OpConvertPtrToU %ulong",
        r"OpConvertUToPtr", r"OpCooperativeMatrixLoadKHR %\w+ %\w+ %uint_0 %uint_16 Aligned 2",
        r"OpCooperativeMatrixStoreKHR %\w+ %\w+ %uint_0 %uint_16 Aligned 4", r"OpDecorate %cfg Binding 2")
    r = with_structs.reflect()
    assert [(b["name"], b["kind"], b["binding"]) for b in r["bindings"]] == [
        ("items", "storage_buffer", 0), ("out", "storage_buffer", 1), ("cfg", "uniform_buffer", 2)]
    assert r["push_constants"]["members"] == [
        {"name": "p.M", "offset": 0, "type": "u32", "size": 4},
        {"name": "p.alpha", "offset": 4, "type": "f32", "size": 4},
        {"name": "p.src", "offset": 8, "type": "ptr", "size": 8, "pointee": "f32"},
        {"name": "p.a", "offset": 16, "type": "ptr", "size": 8, "pointee": "f16"},
        {"name": "dst", "offset": 24, "type": "ptr", "size": 8, "pointee": "f32"}]


def test_scalar_layout():
    packed = cd.struct(type("Packed", (), {"__annotations__": {"a": f16, "b": vec4[f32]}}), layout_rule="scalar")
    assert packed.offsets == (0, 4)
    std = cd.struct(type("Std", (), {"__annotations__": {"a": f16, "b": vec4[f32]}}))
    assert std.offsets == (0, 16)


@cd.kernel
def k_member(p: Params, out: cd.Buffer[f32]):
    out[0] = p.beta  # E:member


def test_unknown_struct_member():
    expect_error(k_member, NameResolutionError, "struct Params has no member 'beta' (it has: M, alpha, src, a)",
                 "# E:member", 14)


@cd.struct
class Job:
    n: u32
    scale: f32
    data: cd.Ptr[f32]


@cd.kernel(workgroup_size=(32, 1, 1))
def scaled_job(job: Job, cfg: cd.Uniform[Job], out: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    if i < job.n:
        out[i] = job.data[i] * job.scale + cfg.scale


def _launch_errors(device):
    """What each wrong struct argument raises with ``device`` (the class name and message)."""
    from coopdsl.errors import CoopDSLError
    from coopdsl.runtime import LaunchError

    d = np.arange(32, dtype=np.float32)
    good = {"n": 32, "scale": 2.0, "data": d}
    bad = {"misspelt member": ({**good, "scael": 1.0}, good),
           "wrong pointee": ({**good, "data": d.astype(np.float64)}, good),
           "uniform extra key": (good, {**good, "zz": 1}),
           "negative address": ({**good, "data": -5}, good)}
    out = {}
    for name, (job, cfg) in bad.items():
        try:
            scaled_job.launch((1,), job, cfg, np.zeros(32, np.float32), device=device)
            out[name] = "ran"
        except (CoopDSLError, LaunchError) as e:
            out[name] = str(e)
    return out


def test_struct_arguments_are_checked_on_the_interpreter():
    # a misspelt member, a pointer given an array of another type (float64 data read as f32 was garbage) and
    # a negative address (a numpy OverflowError) are named
    got = _launch_errors("cpu")
    assert got["misspelt member"] == "push constant 'job' has no member 'scael'; its members are n, scale, data"
    assert got["wrong pointee"] == "push constant 'job.data' points to f32; got a float64 array (pass float32)"
    assert got["uniform extra key"] == "uniform block 'cfg' has no member 'zz'; its members are n, scale, data"
    assert got["negative address"] == "push constant 'job.data' is a pointer: the address -5 is not a 64-bit " \
                                      "unsigned int"


@pytest.mark.vulkan
def test_struct_arguments_are_checked_by_the_gpu_runtime(device):
    if not device.has_device_address:
        pytest.skip("the device has no bufferDeviceAddress")
    # the one packer (coopdsl/_packing.py): the same words as the interpreter's
    assert _launch_errors(device) == _launch_errors("cpu")


@cd.struct
class Inner:
    w: vec2[f32]
    k: u32


@cd.struct
class Outer:
    a: f32
    n: u32
    inner: Inner


@cd.kernel(workgroup_size=(4, 1, 1))
def struct_value_stores(out: cd.Buffer[f32], src: cd.Buffer[Outer]):
    s = src[0]
    s.a = 2.5                                   # GLSL's s.a = 2.5 on a local struct
    s.a += 1.0
    s.n = u32(7)
    s.inner.k = cd.local_invocation_index       # a member of a member
    s.inner.w.y = 9.0                           # a component of a vector member
    src[cd.local_invocation_index + 1] = s
    out[cd.local_invocation_index] = s.a + f32(s.n) + f32(s.inner.k) + s.inner.w.y


@cd.kernel(workgroup_size=(4, 1, 1))
def struct_value_bad_member(src: cd.Buffer[Outer]):
    s = src[0]
    s.b = 1.0  # E:nomember
    src[1] = s


@cd.kernel(workgroup_size=(4, 1, 1))
def struct_value_bad_type(src: cd.Buffer[Outer]):
    s = src[0]
    s.inner = 1.0  # E:membertype
    src[1] = s


def test_members_of_struct_values_held_by_names_are_assigned():
    compile_checked(struct_value_stores, r"OpCompositeInsert %Outer", r"OpCompositeInsert %Inner",
                    r"OpCompositeInsert %v2float")
    out = np.zeros(4, np.float32)
    src = np.zeros(5 * 24, np.uint8)
    struct_value_stores.launch((1,), out, src, device="cpu")
    np.testing.assert_array_equal(out, [19.5, 20.5, 21.5, 22.5])
    rows = np.frombuffer(src.tobytes(), np.dtype({"names": ["a", "n", "w0", "w1", "k"],
                                                  "formats": ["<f4", "<u4", "<f4", "<f4", "<u4"],
                                                  "offsets": [0, 4, 8, 12, 16], "itemsize": 24}))
    assert [tuple(r) for r in rows[1:]] == [(3.5, 7, 0.0, 9.0, k) for k in range(4)]
    expect_error(struct_value_bad_member, NameResolutionError, "struct Outer has no member 'b' (it has: a, n, "
                 "inner)", "# E:nomember", 5)
    expect_error(struct_value_bad_type, cd.TypeMismatchError, "cannot assign the number 1.0 to member 'inner' of "
                 "struct Outer, which is Inner", "# E:membertype", 5)


@cd.struct
class Taps:
    n: f32
    w: cd.array[f32, 4]


@cd.struct
class Pair:
    a: f32


@cd.struct
class AfterStruct:
    x: vec4[f32]
    inner: Pair
    y: f32


@cd.struct
class Std140:
    v: vec4[f32]
    s: f32
    rows: cd.array[vec4[f32], 2]
    inner: Pair
    z: vec4[f32]


@cd.kernel(workgroup_size=(1, 1, 1))
def k_taps(o: cd.Buffer[f32], u: cd.Uniform[Taps]):  # E:taps
    o[0] = u.n


@cd.kernel(workgroup_size=(1, 1, 1))
def k_after(o: cd.Buffer[f32], u: cd.Uniform[AfterStruct]):  # E:after
    o[0] = u.y


@cd.kernel(workgroup_size=(1, 1, 1))
def k_std140(o: cd.Buffer[f32], u: cd.Uniform[Std140], b: cd.Buffer[Taps]):
    o[0] = u.s + u.z.x + b[0].w[1]


def test_a_uniform_block_that_std140_cannot_hold_is_a_located_error():
    """Uniform blocks follow std140 in Vulkan (relaxed): an array or struct at an offset that is no multiple of
    16, an array stride that is none, a member inside the rounding after an array or struct. These reached
    spirv-val as an internal compiler error; now the parameter is named, with what to do instead."""
    from coopdsl.errors import DeclarationError

    expect_error(k_taps, DeclarationError, "uniform block 'u' (struct Taps): member 'w' (f32[4]) is at offset 4; a "
                 "uniform block needs arrays and structs at multiples of 16 (std140). Use vec4 elements or padding "
                 "members, pass the struct as a cd.Buffer[Taps] (std430), or declare it with "
                 "@cd.struct(layout_rule=\"scalar\")", "# E:taps", 31)
    expect_error(k_after, DeclarationError, "member 'y' (f32) is at offset 20, inside the 16-byte rounding std140 "
                 "gives the array or struct before it (a uniform block needs it at 32)", "# E:after", 32)
    # the same struct as a storage buffer's element (std430) is fine, and so is a block std140 can hold
    compile_checked(k_std140, r"OpVariable %_ptr_Uniform_u_ubo Uniform", r"OpDecorate %_arr_v4float_uint_2 "
                    r"ArrayStride 16")
