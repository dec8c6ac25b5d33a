"""Layout bugs fixed: pointer arithmetic steps by the array stride, and arrays of scalar-layout structs
stride by their scalar size (as glslang lays them out under GL_EXT_scalar_block_layout)."""

import numpy as np

import coopdsl as cd
from coopdsl import f32, u32, vec3
from coopdsl.ir import types as T
from coopdsl.ir.layout import SCALAR, STD430, array_block


@cd.kernel(workgroup_size=(4, 1, 1))
def ptr_steps(p: cd.Ptr[vec3[f32]], out: cd.Buffer[f32]):
    i = cd.local_invocation_index
    out[i] = (p + i)[0].y - p[i].y  # p + i addresses element i, 16 bytes apart in std430


def test_pointer_offsets_step_by_the_array_stride():
    v = np.arange(4 * 4, dtype=np.float32).reshape(4, 4) * 3  # vec3 elements padded to 16 bytes
    out = np.full(4, -1, np.float32)
    ptr_steps.launch((1,), v, out, device="cpu")
    np.testing.assert_array_equal(out, np.zeros(4, np.float32))


@cd.struct(layout_rule="scalar")
class Packed:
    a: f32
    b: vec3[f32]


@cd.struct
class Padded:
    a: f32
    b: vec3[f32]


def test_arrays_of_scalar_structs_stride_by_their_scalar_size():
    assert (Packed.rule, Padded.rule) == ("scalar", "std430")
    # Packed is 16 bytes of members aligned to 4: 16 bytes apart, in any array (std430 would say 32)
    assert T.block_array(cd.Ptr[Packed]).stride == 16
    assert array_block("b", Packed).members[0][1].stride == 16
    assert (STD430.size(Packed), STD430.align(Packed)) == (16, 4)
    assert (SCALAR.size(Packed), SCALAR.align(Packed)) == (16, 4)
    assert T.block_array(cd.Ptr[Padded]).stride == 32
    # a std430 struct holding a scalar one lays it out by its own (scalar) rule
    outer = cd.struct(type("Outer", (), {"__annotations__": {"p": Packed, "n": u32}}))
    assert outer.offsets == (0, 16)


@cd.kernel(workgroup_size=(4, 1, 1))
def packed_items(items: cd.Buffer[Packed], q: cd.Ptr[Packed], out: cd.Buffer[f32]):
    i = cd.local_invocation_index
    out[i] = items[i].b.z + q[i].a * 100.0 + (q + i)[0].a * 1000.0


def test_scalar_struct_buffers_and_pointers_on_the_interpreter():
    dt = np.dtype({"names": ["a", "b"], "formats": ["<f4", ("<f4", 3)], "offsets": [0, 4], "itemsize": 16})
    items = np.zeros(4, dt)
    items["a"] = np.arange(4)
    items["b"][:, 2] = np.arange(4) + 0.5
    out = np.zeros(4, np.float32)
    packed_items.launch((1,), items, items, out, device="cpu")
    np.testing.assert_array_equal(out, np.arange(4) + 0.5 + np.arange(4) * 1100.0)
