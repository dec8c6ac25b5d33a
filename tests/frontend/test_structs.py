"""Structs, uniform blocks, push-constant structs and buffer device addresses (Ptr[T])."""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, NameResolutionError, TypeMismatchError, f16, f32, u32, vec2, vec4

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


@cd.kernel(workgroup_size=(32, 1, 1))
def job_before(job: Job, out: cd.Buffer[f32]):
    out[0] = job.data[-1]  # E:ptrneg


@cd.kernel(workgroup_size=(32, 1, 1))
def job_offset(job: Job, out: cd.Buffer[f32]):
    out[0] = (job.data + 2)[0] + (job.data + 3 - 1)[1]


def test_a_negative_constant_pointer_index_is_refused_and_an_offset_pointer_reads_before_it():
    """``p[-1]`` would be an access chain outside the array the pointer points at (undefined behaviour in
    SPIR-V, not Python's last element): refused at its line, with the offset that reaches that element."""
    expect_error(job_before, TypeMismatchError, "pointer index -1: indices count from 0 (Python's negative indices "
                 "are not supported); for an element before the pointer, offset it first: (p - 1)[0]",
                 "# E:ptrneg", 14)
    compile_checked(job_offset, r"OpConvertUToPtr")
    d = np.arange(8, dtype=np.float32)
    out = np.zeros(1, np.float32)
    job_offset.launch((1, 1, 1), {"n": 8, "scale": 1.0, "data": d}, out, device="cpu")
    assert out[0] == 2.0 + 3.0


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


@cd.struct
class Inner2:
    w: vec2[f32]
    k: u32


@cd.struct
class Pair2:
    a: u32
    b: f32
    inner: Inner2


@cd.func
def _make_pair(i: u32) -> Pair2:
    return Pair2(i, f32(i) * 0.5, Inner2(w=vec2[f32](1.0, f32(i)), k=7))


@cd.kernel(workgroup_size=(4, 1, 1))
def built_structs(out: cd.Buffer[Pair2], o2: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    p = _make_pair(i)
    out[i] = p
    q = Pair2(b=2.0, a=3, inner=p.inner)
    o2[i] = f32(q.a) + q.b + q.inner.w.y + f32(q.inner.k)


def _run_built(device):
    out = np.zeros(4, dtype=np.dtype({"names": ["a", "b", "w", "k"], "formats": ["<u4", "<f4", ("<f4", 2), "<u4"],
                                      "offsets": [0, 4, 8, 16], "itemsize": 24}))
    o2 = np.zeros(4, np.float32)
    built_structs.launch((1,), out, o2, device=device)
    i = np.arange(4)
    assert o2.tolist() == (3 + 2 + i + 7).astype(np.float32).tolist()
    assert out["a"].tolist() == i.tolist() and out["b"].tolist() == (i * 0.5).tolist()
    assert out["w"].tolist() == [[1.0, float(j)] for j in i] and out["k"].tolist() == [7] * 4


def test_a_struct_is_built_by_its_constructor_as_in_glsl():
    """``S(a, b)`` or ``S(a=..., b=...)``, every member (OpCompositeConstruct): it was 'the type Pair cannot be
    called in a kernel' (found by a check written from the docs alone)."""
    compile_checked(built_structs, r"OpCompositeConstruct %Pair2", r"OpCompositeConstruct %Inner2")
    _run_built("cpu")


def test_a_built_struct_runs_on_the_device(device):
    _run_built(device)


@cd.kernel(workgroup_size=(1, 1, 1))
def bad_missing(o: cd.Buffer[f32]):
    q = Pair2(1, 2.0)  # E:missing
    o[0] = q.b


@cd.kernel(workgroup_size=(1, 1, 1))
def bad_unknown(o: cd.Buffer[f32]):
    q = Inner2(w=vec2[f32](1.0), k=1, z=2)  # E:unknown
    o[0] = q.w.x


@cd.kernel(workgroup_size=(1, 1, 1))
def bad_twice(o: cd.Buffer[f32]):
    q = Inner2(vec2[f32](1.0), w=vec2[f32](1.0))  # E:twice
    o[0] = q.w.x


@cd.kernel(workgroup_size=(1, 1, 1))
def bad_type(o: cd.Buffer[f32], n: u32):
    q = Inner2(vec2[f32](1.0), f32(n))  # E:type
    o[0] = q.w.x


@cd.kernel(workgroup_size=(1, 1, 1))
def bad_keyword(o: cd.Buffer[f32], n: u32):
    q = Inner2(w=vec2[f32](1.0), k=f32(n))  # E:kw
    o[0] = q.w.x


@cd.kernel(workgroup_size=(1, 1, 1))
def bad_fit(o: cd.Buffer[f32]):
    q = Inner2(vec2[f32](1.0), -1)  # E:fit
    o[0] = q.w.x


@cd.kernel(workgroup_size=(1, 1, 1))
def bad_many(o: cd.Buffer[f32]):
    q = Inner2(vec2[f32](1.0), 1, 2)  # E:many
    o[0] = q.w.x


def test_a_struct_constructors_mistakes_are_located():
    from coopdsl.errors import ArgumentError, TypeMismatchError

    expect_error(bad_missing, ArgumentError, "Pair2(...) needs every member (as GLSL's constructor): missing inner",
                 "# E:missing", 9)
    expect_error(bad_unknown, ArgumentError, "Inner2 has no member 'z'; its members are w, k", "# E:unknown", 9)
    expect_error(bad_twice, ArgumentError, "Inner2(...) got member 'w' twice", "# E:twice", 9)
    expect_error(bad_type, TypeMismatchError, "member 'k' of Inner2 is u32, got a runtime f32; convert it first "
                 "(e.g. u32(x))", "# E:type", 32)   # (at the argument)
    expect_error(bad_fit, TypeMismatchError, "-1 does not fit in u32", "# E:fit", 32)
    expect_error(bad_keyword, TypeMismatchError, "member 'k' of Inner2 is u32, got a runtime f32", "# E:kw", 36)
    expect_error(bad_many, ArgumentError, "Inner2(...) takes its 2 members (w, k), got 3 values", "# E:many", 9)


@cd.func
def _first(v: cd.vec3[f32]) -> f32:
    return v.x + v.z


@cd.func
def _scaled(s: f32) -> f32:
    return s * 2.0


@cd.kernel(workgroup_size=(1, 1, 1))
def tuple_for_vector(o: cd.Buffer[f32], x: f32):
    o[0] = _first((1.0, 2.0, x))


@cd.kernel(workgroup_size=(1, 1, 1))
def tuple_for_scalar(o: cd.Buffer[f32], x: f32):
    o[0] = _scaled((1.0, x))  # E:tuple


def test_a_tuple_for_a_vector_annotated_parameter_is_that_vector():
    """A tuple given for ``v: vec3[f32]`` failed inside the function ('a compile-time tuple of 3 has no attribute
    x'), not at the call: it is the vector now; a tuple for a scalar parameter is refused at the call."""
    from coopdsl.errors import TypeMismatchError

    compile_checked(tuple_for_vector, r"OpCompositeConstruct %v3float")
    o = np.zeros(1, np.float32)
    tuple_for_vector.launch((1,), o, 5.0, device="cpu")
    assert o[0] == 6.0
    expect_error(tuple_for_scalar, TypeMismatchError, "_scaled(): argument 's' is a compile-time tuple of 2, but the "
                 "parameter is annotated f32", "# E:tuple", 12)


@cd.func
def _second(s: Pair2) -> f32:
    return s.b


@cd.kernel(workgroup_size=(1, 1, 1))
def tuple_for_struct(o: cd.Buffer[f32]):
    o[0] = _second((1, 1.0))  # E:stuple


@cd.struct
class WithArray:
    xs: cd.array[f32, 3]
    k: u32


@cd.kernel(workgroup_size=(1, 1, 1))
def struct_from_array(out: cd.Buffer[WithArray], n: u32):
    out[0] = WithArray(cd.array[f32, 3](1.0, 2.0, f32(n)), 9)


@cd.kernel(workgroup_size=(1, 1, 1), target_env="vulkan1.1")
def struct_select_spirv13(out: cd.Buffer[Pair2], n: u32):
    out[0] = Pair2(1, 1.0, Inner2(vec2[f32](0.0), 0)) if n > 3 else out[2]


def test_struct_values_in_the_corners_a_check_of_the_constructor_found():
    """A tuple for a struct parameter is refused at the call (it failed inside the function); an array value
    builds an array member (it was 'member xs is f32[3], got a runtime f32[3]': the member is laid out for
    memory); a struct ``x if c else y`` before SPIR-V 1.4 is a branch and an OpPhi (OpSelect of a struct was an
    InternalCompilerError from spirv-val)."""
    from coopdsl.errors import TypeMismatchError

    expect_error(tuple_for_struct, TypeMismatchError, "_second(): argument 's' is a compile-time tuple of 2, but the "
                 "parameter is annotated Pair2; build it: Pair2(...)", "# E:stuple", 12)
    out = np.zeros(16, np.uint8)
    compile_checked(struct_from_array, r"OpCompositeConstruct %WithArray")
    struct_from_array.launch((1,), out, 5, device="cpu")
    assert out[:12].view(np.float32).tolist() == [1.0, 2.0, 5.0] and out[12:].view(np.uint32).tolist() == [9]
    compile_checked(struct_select_spirv13, r"OpPhi %Pair2", target_env="vulkan1.1", absent=(r"OpSelect %Pair2",))
    compile_checked(struct_select_spirv13, r"OpSelect %Pair2")   # (SPIR-V 1.4 on: OpSelect takes structs)
    out = np.zeros(4 * 24, np.uint8)
    out[2 * 24:2 * 24 + 4] = [7, 0, 0, 0]
    struct_select_spirv13.launch((1,), out, 2, device="cpu")
    assert out[:4].view(np.uint32)[0] == 7


@cd.struct
class Body:
    pos: vec2[f32]
    w: f32
    n: u32
    hist: cd.array[u32, 3]


@cd.kernel(workgroup_size=(32, 1, 1))
def structs_in_kernel_memory(src: cd.Buffer[Body], dst: cd.Buffer[Body]):
    t = cd.local_invocation_index
    sh = cd.shared(Body, 32)
    sh[t] = src[t]                    # a buffer's (laid-out) struct into shared memory
    cd.barrier()
    s = sh[31 - t]
    s.w = s.w * 2.0
    sh[31 - t].n += 1                 # members in place
    sh[31 - t].hist[t % 3] = t
    cd.barrier()
    dst[t] = s                        # ... and back into a buffer
    dst[t].n = sh[31 - t].n
    back = sh[31 - t]
    dst[t].hist = back.hist
    loc = cd.local_array(Body, 4)
    loc[t % 4] = s
    loc[0].pos.x = 5.0
    pr = cd.private_array(Body, 2)
    pr[t % 2] = loc[t % 4]
    dst[t].pos = pr[t % 2].pos


BODY = np.dtype({"names": ["pos", "w", "n", "hist"], "formats": [("<f4", 2), "<f4", "<u4", ("<u4", 3)],
                 "offsets": [0, 8, 12, 16], "itemsize": 32})


def _run_bodies(device):
    src = np.zeros(32, BODY)
    src["pos"] = np.arange(64).reshape(32, 2)
    src["w"] = np.arange(32)
    src["n"] = np.arange(32)
    src["hist"] = np.arange(96).reshape(32, 3)
    dst = np.zeros(32, BODY)
    structs_in_kernel_memory.launch((1,), src, dst, device=device)
    t = np.arange(32)
    r = 31 - t
    assert dst["w"].tolist() == (2.0 * r).tolist() and dst["n"].tolist() == (r + 1).tolist()
    hist = src["hist"][r].copy()
    hist[t, t % 3] = t                    # (invocation t wrote element r's hist[t % 3])
    assert dst["hist"].tolist() == hist.tolist()
    pos = src["pos"][r].copy()
    pos[t % 4 == 0, 0] = 5.0              # (loc[0].pos.x = 5 reaches the invocations that read loc[0])
    assert dst["pos"].tolist() == pos.tolist()


def test_structs_in_shared_local_and_private_arrays():
    """GLSL's ``shared Body s[32];`` and arrays of structs in a function: they were refused ("the element type
    must be a numeric scalar or vector type"; found by porting GLSL kernels from the docs alone). The element is
    the struct without layout decorations (Vulkan allows none in Workgroup, Function or Private memory); a
    buffer's struct is rebuilt into it and back."""
    text = compile_checked(structs_in_kernel_memory, r"OpVariable %_ptr_Workgroup_\w+ Workgroup",
                           r"OpVariable %_ptr_Function_\w+ Function", r"OpVariable %_ptr_Private_\w+ Private",
                           r"OpCompositeConstruct %Body")
    assert text.count("OpMemberDecorate %Body 1 Offset 8") == 1    # (only the buffer's struct is laid out)
    compile_checked(structs_in_kernel_memory, target_env="vulkan1.1")
    _run_bodies("cpu")
    shared = structs_in_kernel_memory.reflect()["shared_memory"]["arrays"][0]
    assert (shared["element_type"], shared["components"], shared["stride"], shared["bytes"]) == ("u8", 32, 32, 1024)


def test_structs_in_shared_local_and_private_arrays_on_the_device(device):
    _run_bodies(device)


@cd.struct
class Hist:
    k: u32
    arr: cd.array[f32, 3]


@cd.struct
class Rec:
    w: f32
    arr: cd.array[f32, 3]
    inner: Hist


@cd.kernel(workgroup_size=(4, 1, 1))
def element_updates(src: cd.Buffer[Rec], dst: cd.Buffer[Rec], rows_out: cd.Buffer[f32], j: u32):
    i = cd.global_invocation_id.x
    s = src[i]
    s.arr[2] = -1.0                   # an element of an array member of a struct value held by a name
    s.arr[j] = f32(i)
    s.inner.arr[0] = 7.0
    s.inner.arr[i % 3] += 0.5
    dst[i] = s
    rows = cd.array(cd.array[f32, 2], 3)
    rows[1][0] = 1.0                  # an element of an inner array
    rows[2][j] = 5.0
    rows[j][1] += f32(i)
    for r in cd.static_range(3):
        rows_out[6 * i + 2 * r] = rows[r][0]
        rows_out[6 * i + 2 * r + 1] = rows[r][1]


REC = np.dtype({"names": ["w", "arr", "k", "iarr"], "formats": ["<f4", ("<f4", 3), "<u4", ("<f4", 3)],
                "offsets": [0, 4, 16, 20], "itemsize": 32})


def _run_element_updates(device):
    src = np.zeros(4, REC)
    src["arr"] = 1.0
    src["iarr"] = 2.0
    dst, rows = np.zeros(4, REC), np.zeros(24, np.float32)
    element_updates.launch((1,), src, dst, rows, 0, device=device)
    i = np.arange(4)
    arr = np.ones((4, 3), np.float32)
    arr[:, 2] = -1.0
    arr[:, 0] = i
    iarr = np.full((4, 3), 2.0, np.float32)
    iarr[:, 0] = 7.0
    iarr[i, i % 3] += 0.5
    assert dst["arr"].tolist() == arr.tolist() and dst["iarr"].tolist() == iarr.tolist()
    want = np.zeros((4, 3, 2), np.float32)
    want[:, 1, 0] = 1.0
    want[:, 2, 0] = 5.0
    want[:, 0, 1] = i
    assert rows.reshape(4, 3, 2).tolist() == want.tolist()


def test_elements_of_array_members_and_of_inner_arrays_are_assigned():
    """``s.arr[j] = x`` on a struct value and ``rows[i][j] = x`` on an array of arrays, as GLSL assigns them: both
    were "only arrays held by a name can be updated element-wise" (found by porting GLSL kernels from the docs
    alone). The updated inner array replaces the member (OpCompositeInsert) or the element."""
    compile_checked(element_updates, r"OpCompositeInsert %_arr_float_uint_3 ", r"OpCompositeInsert %Rec ")
    _run_element_updates("cpu")


def test_elements_of_array_members_are_assigned_on_the_device(device):
    _run_element_updates(device)


_MEMBER_MISTAKES = [
    ("int", "member 'a' has unsupported type int (use numeric scalars"),
    ("float", "member 'a' has unsupported type float (use numeric scalars"),
    ("cd.Buffer[f32]", "member 'a' is annotated Buffer[...], which declares a kernel parameter"),
    ("cd.MatA[cd.f16, 16, 16]", "member 'a' has unsupported type MatA[f16, 16, 16]"),
    ("cd.boolean", "member 'a' has unsupported type bool"),
    ("cd.vec2[cd.boolean]", "member 'a' has unsupported type vec2[bool]"),   # (was accepted: spirv-val refused it)
    ("'Node'", "cannot evaluate the annotation of member 'a' (NameError: name 'Node' is not defined)"),
    ("'Nope'", "cannot evaluate the annotation of member 'a' (NameError: name 'Nope' is not defined)"),
]


@pytest.mark.parametrize("annotation, message", _MEMBER_MISTAKES)
def test_a_bad_member_is_located_at_its_line_in_a_module_run_without_import(tmp_path, annotation, message):
    """A module run from its file without an import (runpy, exec) is not one ``inspect`` finds a class's source
    through: the error pointed at the decorator's line, column 1; the member's own line is found from there."""
    from coopdsl.errors import DeclarationError

    from ..conftest import exec_source

    src = ("import coopdsl as cd\nfrom coopdsl import f32\n\n@cd.struct\nclass Node:\n    x: f32\n"
           f"    a: {annotation}\n\n@cd.kernel\ndef k(u: cd.Uniform[Node], o: cd.Buffer[f32]):\n    o[0] = u.x\n")
    path = tmp_path / "members.py"
    with pytest.raises(DeclarationError) as info:
        exec_source(src, path)["k"].compile()
    err = info.value
    assert f"struct Node: {message}" in err.message
    assert (err.loc.file, err.loc.line, err.loc.col) == (str(path), 7, 5)


def _run_module(src, path, run):
    """Run ``src`` from file ``path``: imported (``inspect`` finds its classes) or executed without an import."""
    import importlib.util

    from ..conftest import exec_source

    if run == "exec":
        exec_source(src, path)
        return
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


@pytest.mark.parametrize("run", ["import", "exec"])
def test_a_member_default_is_refused_at_its_line(tmp_path, run):
    """``b: f32 = 1.0`` was accepted and ignored: ``D(2.0)`` then said 'missing b'."""
    from coopdsl.errors import DeclarationError

    src = "import coopdsl as cd\nfrom coopdsl import f32\n\n@cd.struct\nclass D:\n    a: f32\n    b: f32 = 1.0\n"
    path = tmp_path / f"defaults_{run}.py"
    with pytest.raises(DeclarationError) as info:
        _run_module(src, path, run)
    err = info.value
    assert "struct D: member 'b' takes no default: every construction gives it (D(a, b)); remove '= 1.0'" \
        in err.message
    assert (err.loc.file, err.loc.line, err.loc.col) == (str(path), 7, 5)


@pytest.mark.parametrize("run", ["import", "exec"])
def test_a_member_is_located_by_its_statement_not_by_text_that_looks_like_it(tmp_path, run):
    """The member's line comes from the class's tree (``coopdsl._sources``): a docstring line that reads
    like the member (``a: the count``) and a same-named class earlier in the file are not taken for it."""
    from coopdsl.errors import DeclarationError

    src = ("import coopdsl as cd\nfrom coopdsl import f32\n\nclass P:\n    a: int\n\n"
           "@cd.struct\nclass P:\n    '''Members:\n    a: the count\n    '''\n    x: f32\n    a: int\n")
    path = tmp_path / f"lookalike_{run}.py"
    with pytest.raises(DeclarationError) as info:
        _run_module(src, path, run)
    err = info.value
    assert "struct P: member 'a' has unsupported type int" in err.message
    assert (err.loc.file, err.loc.line, err.loc.col) == (str(path), 13, 5)
