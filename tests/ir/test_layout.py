"""coopdsl/ir/layout.py, the one memory layout: a table of types with the size, alignment, array stride and
member offsets glslang gives them, under std430 and under scalar block layout.

The expected numbers follow the rules glslang implements (``TIntermediate::getBaseAlignment`` for std430,
``getScalarAlignment`` for GL_EXT_scalar_block_layout), written out per row:

std430 -- a scalar aligns to its size (bool is laid out as a 32-bit int); vecN aligns to N scalars, vec3 to
4 (its size stays 3 scalars); an array aligns like its element and strides by the element's size rounded up
to its alignment; a struct aligns like its most aligned member, its members sit at the running offset
rounded up to their alignment, and its size is rounded up to its alignment.

scalar -- everything aligns like the scalar it is made of (a struct like its most aligned member); a struct's
size is its last member's end, not rounded up; array strides are the element's size rounded up to that
alignment (so a vec3 strides 3 scalars).

Both -- a PhysicalStorageBuffer pointer is an 8-byte address aligned to 8.  GLSL matrices have no IR type
here; a cooperative matrix in (local) memory takes length() components, through the resolver the
interpreter gives.
"""

from __future__ import annotations

import pytest

import coopdsl as cd
from coopdsl import f16, f32, f64, u8, u32, vec2, vec3, vec4
from coopdsl.ir import types as T
from coopdsl.ir.layout import (
    SCALAR,
    STD430,
    Layouter,
    access_alignment,
    align_of,
    array_block,
    array_stride,
    flat_members,
    laid_out,
    size_of,
)

SPEC_N = T.SymDim("spec", (0, "N", "u32", 5))

# (type, std430 (size, align, stride of an array of it), scalar (size, align, stride))
SCALARS_AND_VECTORS = [
    (f16, (2, 2, 2), (2, 2, 2)),
    (f32, (4, 4, 4), (4, 4, 4)),
    (f64, (8, 8, 8), (8, 8, 8)),
    (u8, (1, 1, 1), (1, 1, 1)),
    (T.boolean, (4, 4, 4), (4, 4, 4)),                  # bool: a 32-bit int in memory
    (vec2[f16], (4, 4, 4), (4, 2, 4)),                  # vecN: N scalars
    (vec3[f16], (6, 8, 8), (6, 2, 6)),                  # vec3 aligns like vec4 in std430
    (vec3[f32], (12, 16, 16), (12, 4, 12)),
    (vec4[f32], (16, 16, 16), (16, 4, 16)),
    (vec2[f64], (16, 16, 16), (16, 8, 16)),
    (vec3[f64], (24, 32, 32), (24, 8, 24)),
    (cd.Ptr[f32], (8, 8, 8), (8, 8, 8)),                # a 64-bit device address
]


@pytest.mark.parametrize("t,std430,scalar", SCALARS_AND_VECTORS, ids=lambda x: str(x))
def test_scalars_vectors_and_pointers(t, std430, scalar):
    assert (size_of(t), align_of(t), array_stride(t)) == std430
    assert (size_of(t, "scalar"), align_of(t, "scalar"), array_stride(t, "scalar")) == scalar


# (array type, std430 (size, align, stride), scalar (size, align, stride))
ARRAYS = [
    (T.ArrayType(f32, 4), (16, 4, 4), (16, 4, 4)),
    (T.ArrayType(vec3[f32], 3), (48, 16, 16), (36, 4, 12)),       # std430: vec3 elements stride 16
    (T.ArrayType(vec2[f16], 5), (20, 4, 4), (20, 2, 4)),
    (T.ArrayType(f32, 4, 8), (32, 4, 8), (32, 4, 8)),             # an explicit ArrayStride is used as given
    (T.ArrayType(T.ArrayType(f32, 2), 3), (24, 4, 8), (24, 4, 8)),  # arrays of arrays
]


@pytest.mark.parametrize("t,std430,scalar", ARRAYS, ids=lambda x: str(x))
def test_arrays(t, std430, scalar):
    for lay, want in ((STD430, std430), (SCALAR, scalar)):
        assert (lay.size(t), lay.align(t), lay.stride(t)) == want


def test_runtime_arrays_and_spec_constant_lengths():
    rt = T.RuntimeArrayType(vec3[f32], 16)
    assert (STD430.align(rt), STD430.stride(rt)) == (16, 16)
    with pytest.raises(TypeError, match="no fixed size"):
        STD430.size(rt)  # a runtime array's size is the buffer's
    spec = T.ArrayType(vec4[f32], SPEC_N)
    with pytest.raises(TypeError, match="specialization constant"):
        STD430.size(spec)  # no launch: no length
    launch = Layouter("std430", dim=lambda d: d if isinstance(d, int) else 5)  # what the interpreter gives
    assert (launch.size(spec), launch.length(spec), launch.stride(spec)) == (80, 5, 16)


def test_cooperative_matrices_take_their_length_in_components():
    m = T.CoopMatType(f16, 3, 16, 16, 2)
    with pytest.raises(TypeError, match="no fixed size"):
        STD430.size(m)
    lay = Layouter(coop_length=lambda t: 8)  # 16x16 over a 32-invocation subgroup
    assert (lay.size(m), lay.align(m)) == (16, 2)


def _struct(members, rule="std430"):
    return laid_out("S", list(members), rule)


# (members, std430 (offsets, size, align), scalar (offsets, size, align))
STRUCTS = [
    ([("a", f32), ("b", vec3[f32]), ("c", f32)], ((0, 16, 28), 32, 16), ((0, 4, 16), 20, 4)),
    ([("a", f16), ("b", vec4[f32])], ((0, 16), 32, 16), ((0, 4), 20, 4)),
    ([("a", vec3[f32]), ("b", f32)], ((0, 12), 16, 16), ((0, 12), 16, 4)),   # a scalar fills vec3's tail
    ([("a", f32), ("b", vec2[f32])], ((0, 8), 16, 8), ((0, 4), 12, 4)),      # scalar: no tail padding
    ([("d", f16), ("qs", T.ArrayType(u8, 32))], ((0, 2), 34, 2), ((0, 2), 34, 2)),
    ([("a", u8), ("v", T.ArrayType(vec2[f32], 3))], ((0, 8), 32, 8), ((0, 4), 28, 4)),
    ([("a", f32), ("v", T.ArrayType(vec3[f32], 2))], ((0, 16), 48, 16), ((0, 4), 28, 4)),
    ([("n", u32), ("p", cd.Ptr[f32]), ("h", f16)], ((0, 8, 16), 24, 8), ((0, 8, 16), 18, 8)),
    ([("x", f64), ("y", f32)], ((0, 8), 16, 8), ((0, 8), 12, 8)),
]


@pytest.mark.parametrize("members,std430,scalar", STRUCTS, ids=lambda x: str(x))
def test_structs(members, std430, scalar):
    for rule, (offsets, size, align) in (("std430", std430), ("scalar", scalar)):
        st = _struct(members, rule)
        lay = STD430 if rule == "std430" else SCALAR
        assert (st.offsets, lay.size(st), lay.align(st)) == (offsets, size, align), rule


def test_array_members_get_the_rules_stride():
    st = _struct([("a", f32), ("v", T.ArrayType(vec3[f32], 2))])
    assert st.members[1][1] == T.ArrayType(vec3[f32], 2, 16)
    st = _struct([("a", f32), ("v", T.ArrayType(vec3[f32], 2))], "scalar")
    assert st.members[1][1] == T.ArrayType(vec3[f32], 2, 12)


def test_nested_structs():
    # std430: Inner {vec2 w; uint k} is 12 bytes of members, aligned 8, so 16; Outer.z follows at 16
    inner = laid_out("Inner", [("w", vec2[f32]), ("k", u32)])
    outer = laid_out("Outer", [("i", inner), ("z", u32)])
    assert (inner.offsets, size_of(inner), align_of(inner)) == ((0, 8), 16, 8)
    assert (outer.offsets, size_of(outer), align_of(outer)) == ((0, 16), 24, 8)
    # scalar: Inner is 12 bytes (no tail padding), aligned 4, and Outer.z sits right after it
    inner_s = laid_out("Inner", [("w", vec2[f32]), ("k", u32)], "scalar")
    outer_s = laid_out("Outer", [("i", inner_s), ("z", u32)], "scalar")
    assert (inner_s.offsets, size_of(inner_s, "scalar"), align_of(inner_s, "scalar")) == ((0, 8), 12, 4)
    assert (outer_s.offsets, size_of(outer_s, "scalar")) == ((0, 12), 16)
    # a struct without explicit offsets (shared or local memory) is laid out std430
    plain = T.StructType("P", (("a", f32), ("b", vec3[f32])))
    assert (STD430.offsets(plain), STD430.size(plain)) == ((0, 16), 32)


def test_declarations_read_the_layout():
    @cd.struct
    class Item:
        a: f32
        b: vec3[f32]
        c: f32

    @cd.struct(layout_rule="scalar")
    class Packed:
        a: f32
        b: vec3[f32]
        c: f32

    assert (Item.offsets, Packed.offsets) == ((0, 16, 28), (0, 4, 16))
    # buffers and Ptr[T] address { T data[]; } blocks with the std430 stride of T
    assert array_block("b", vec3[f32]).members[0][1].stride == 16
    assert T.block_array(cd.Ptr[Item]).stride == 32
    assert T.block_array(cd.Ptr[vec3[f16]]).stride == 8


def test_device_accesses_are_aligned_to_the_widest_scalar():
    assert [access_alignment(t) for t in (f16, vec3[f32], vec2[f64], cd.Ptr[f16])] == [2, 4, 8, 8]
    inner = laid_out("Inner", [("w", vec2[f32]), ("k", u32), ("p", cd.Ptr[f32])])
    assert access_alignment(inner) == 8


def test_push_constant_blocks_are_laid_out_std430_in_parameter_order():
    @cd.kernel(workgroup_size=(1, 1, 1))
    def k(out: cd.Buffer[f32], h: f16, v: vec3[f32], s: f32, p: cd.Ptr[f32], w: vec2[f16]):
        out[0] = s + f32(h) + v.x + p[0] + f32(w.x)

    push = k.reflect()["push_constants"]
    assert [(m["name"], m["offset"], m["size"]) for m in push["members"]] == [
        ("h", 0, 2), ("v", 16, 12), ("s", 28, 4), ("p", 32, 8), ("w", 40, 4)]
    assert push["size"] == 48  # 44 rounded up to the block's 16-byte alignment


def test_the_flat_member_table():
    inner = laid_out("Inner", [("w", vec2[f32]), ("qs", T.ArrayType(u8, 4)), ("p", cd.Ptr[vec4[u32]])])
    outer = laid_out("Outer", [("n", u32), ("i", inner)])
    assert flat_members(outer) == [
        {"name": "n", "offset": 0, "type": "u32", "size": 4},
        {"name": "i.w", "offset": 8, "type": "vec2<f32>", "size": 8},
        {"name": "i.qs", "offset": 16, "type": "u8[4]", "size": 4, "stride": 1, "length": 4},
        {"name": "i.p", "offset": 24, "type": "ptr", "size": 8, "pointee": "vec4<u32>"}]


def test_an_unknown_rule_is_refused():
    with pytest.raises(ValueError, match="std430, scalar"):
        Layouter("std140")  # type: ignore[arg-type]
