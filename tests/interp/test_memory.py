"""Shared memory with barriers, local arrays, structs, uniform/push blocks, device addresses."""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f32, i32, u32, vec4


@cd.kernel(workgroup_size=(64, 1, 1))
def tree_sum(x: cd.Buffer[f32], out: cd.Buffer[f32]):
    tile = cd.shared(f32, 64)
    i = cd.local_invocation_index
    tile[i] = x[cd.global_invocation_id.x]
    cd.barrier()
    step = u32(32)
    while step > 0:
        if i < step:
            tile[i] = tile[i] + tile[i + step]
        cd.barrier()
        step = step // 2
    if i == 0:
        out[cd.workgroup_id.x] = tile[0]


def test_shared_memory_reduction_with_barriers_in_a_loop():
    x = np.arange(64 * 5, dtype=np.float32)
    out = np.zeros(5, np.float32)
    tree_sum.launch((5,), x, out, device="cpu", subgroup_size=16)
    np.testing.assert_array_equal(out, x.reshape(5, 64).sum(1))


@cd.kernel(workgroup_size=(8, 1, 1))
def local_arrays(out: cd.Buffer[i32]):
    i = i32(cd.local_invocation_index)
    acc = cd.local_array(i32, 5)
    for k in range(5):
        acc[k] = i * k
    acc[i % 5] = acc[i % 5] + 100
    total = i32(0)
    for k in range(5):
        total += acc[k]
    out[i] = total


def test_local_arrays_are_private_to_each_invocation():
    out = np.zeros(8, np.int32)
    local_arrays.launch((1,), out, device="cpu")
    np.testing.assert_array_equal(out, [i * 10 + 100 for i in range(8)])


@cd.struct
class Item:
    weight: f32
    pos: vec4[f32]
    tag: u32


@cd.struct
class Scale:
    factor: f32
    offset: f32
    src: cd.Ptr[f32]


@cd.kernel(workgroup_size=(64, 1, 1))
def structs(items: cd.Buffer[Item], out: cd.Buffer[f32], cfg: cd.Uniform[Scale], p: Scale, n: u32):
    i = cd.global_invocation_id.x
    if i < n:
        it = items[i]
        out[i] = it.weight * it.pos.y + f32(it.tag) + p.src[i] * p.factor + p.offset + cfg.factor * (cfg.src + 1)[i]
        p.src[i] = f32(i)


def test_struct_buffers_uniform_and_push_structs_and_device_addresses():
    n = 100
    dt = np.dtype({"names": ["weight", "pos", "tag"], "formats": ["<f4", ("<f4", 4), "<u4"],
                   "offsets": [0, 16, 32], "itemsize": 48})
    items = np.zeros(n, dt)
    items["weight"] = np.arange(n)
    items["pos"][:, 1] = 0.5
    items["tag"] = 7
    src = np.linspace(0, 1, n + 1).astype(np.float32)
    other = np.arange(n + 1, dtype=np.float32) * 3
    out = np.zeros(n, np.float32)
    structs.launch((2,), items, out, {"factor": 10.0, "offset": 0.0, "src": other},
                   {"factor": 2.0, "offset": 1.0, "src": src}, n, device="cpu")
    ref = np.arange(n) * 0.5 + 7 + np.linspace(0, 1, n + 1)[:n].astype(np.float32) * 2 + 1 + 10 * other[1:n + 1]
    ref = ref.astype(np.float32)
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    np.testing.assert_array_equal(src[:n], np.arange(n, dtype=np.float32))  # written through the pointer


@cd.kernel(workgroup_size=(32, 1, 1))
def vec3_buffer(v: cd.Buffer[cd.vec3[f32]], out: cd.Buffer[f32]):
    i = cd.local_invocation_index
    out[i] = v[i].x + v[i].z * 10.0


def test_vec3_buffer_elements_are_16_bytes_apart():
    v = np.arange(32 * 4, dtype=np.float32).reshape(32, 4)
    out = np.zeros(32, np.float32)
    vec3_buffer.launch((1,), v, out, device="cpu")
    np.testing.assert_array_equal(out, v[:, 0] + v[:, 2] * 10)


@cd.kernel(workgroup_size=(4, 1, 1))
def readonly_input(x: cd.Buffer[f32], y: cd.Buffer[f32], ALPHA: cd.Spec[f32] = 1.0):
    i = cd.local_invocation_index
    y[i] = x[i] * ALPHA


def test_readonly_buffers_are_not_written_back_and_spec_constants_apply():
    x = np.arange(4, dtype=np.float32)
    y = np.zeros(4, np.float32)
    readonly_input.launch((1,), x, y, ALPHA=2.5, device="cpu")
    np.testing.assert_array_equal(y, x * 2.5)
    readonly_input.launch((1,), x, y, device="cpu")
    np.testing.assert_array_equal(y, x)


@cd.kernel(workgroup_size=(64, 1, 1))
def add_to_both(a: cd.Buffer[u32], b: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    a[i] = a[i] + 1000
    b[i] = b[i] + 1


@cd.kernel(workgroup_size=(64, 1, 1))
def buffer_and_pointer(a: cd.Buffer[u32], p: cd.Ptr[u32]):
    i = cd.global_invocation_id.x
    a[i] = a[i] + 1000
    p[i] = p[i] + 1


def test_one_array_given_for_two_parameters_is_one_memory():
    """The GPU runtime uploads one numpy array once however many parameters it is given for; the interpreter
    placed a copy per parameter, and the last one written back won ([1 2 3] instead of lavapipe's [1001 ...])."""
    base = np.arange(64, dtype=np.uint32)
    add_to_both.launch((1,), base, base, device="cpu")
    np.testing.assert_array_equal(base, np.arange(64) + 1001)
    base = np.arange(64, dtype=np.uint32)
    buffer_and_pointer.launch((1,), base, base, device="cpu")
    np.testing.assert_array_equal(base, np.arange(64) + 1001)


def test_overlapping_views_are_placed_apart_and_written_back_in_the_gpus_order():
    """Two views of one array are two uploads on a GPU too; they are written back arrays given for pointers
    first, then buffers in parameter order, so where they overlap the same store wins as on lavapipe."""
    base = np.arange(96, dtype=np.uint32)
    add_to_both.launch((1,), base[:64], base[32:], device="cpu")
    np.testing.assert_array_equal(base, np.concatenate([np.arange(32) + 1000, np.arange(32, 96) + 1]))
    base = np.arange(96, dtype=np.uint32)
    buffer_and_pointer.launch((1,), base[:64], base[32:], device="cpu")  # the pointer's is written back first
    np.testing.assert_array_equal(base, np.concatenate([np.arange(64) + 1000, np.arange(64, 96) + 1]))


@cd.struct
class Pair:
    a: u32
    b: u32


@cd.kernel(workgroup_size=(1, 1, 1))
def uniform_and_buffer(cfg: cd.Uniform[Pair], out: cd.Buffer[u32]):
    out[0] = cfg.a + cfg.b


def placed_arguments(kernel, values):
    """(allocation by parameter name, the DeviceMemory) of the interpreter's placement of ``values``."""
    from coopdsl.interp.bind import allocate_arguments
    from coopdsl.interp.layout import Layout
    from coopdsl.interp.memory import DeviceMemory
    from coopdsl.interp.spec import SpecValues

    module, device = kernel.ir(), DeviceMemory()
    placed = allocate_arguments(module, Layout(SpecValues(module, {}), None), values, device)
    return {g.name: placed[id(g)] for g in module.globals if id(g) in placed}, device


def test_an_array_given_for_a_uniform_block_and_a_buffer_is_placed_once():
    """As the GPU runtime stages it once (its uniform block array was copied apart); a view is another upload."""
    x = np.zeros(4, np.uint32)
    placed, device = placed_arguments(uniform_and_buffer, {"cfg": x, "out": x})
    assert placed["cfg"].start == placed["out"].start and len(device.allocations) == 1
    assert (placed["cfg"].label, placed["out"].label) == ("uniform block 'cfg'", "buffer 'out'")
    assert device.allocations[0].writable and device.allocations[0].array is x
    placed, device = placed_arguments(uniform_and_buffer, {"cfg": x[:], "out": x})
    assert placed["cfg"].start != placed["out"].start and len(device.allocations) == 2


@cd.kernel(workgroup_size=(64, 1, 1))
def through_pointers(src: cd.Ptr[u32], dst: cd.Ptr[u32], n: u32):
    i = cd.global_invocation_id.x
    if i < n:
        dst[i] = src[i] * 2


def test_a_non_contiguous_array_for_a_pointer_is_refused_as_for_a_buffer():
    """It was placed as a contiguous copy and the kernel's stores through the pointer were lost."""
    from coopdsl.interp import LaunchArgumentError

    big = np.arange(128, dtype=np.uint32)
    out = np.zeros(128, np.uint32)
    with pytest.raises(LaunchArgumentError, match=r"^pointer 'dst' must be C-contiguous \(use "
                                                  r"np.ascontiguousarray\)$"):
        through_pointers.launch((1,), big[:64], out[::2], 64, device="cpu")
    with pytest.raises(LaunchArgumentError, match=r"^pointer 'src' must be C-contiguous \(use "
                                                  r"np.ascontiguousarray\)$"):
        through_pointers.launch((1,), big[::2], out[:64], 64, device="cpu")
    assert not out.any()


def test_a_read_only_array_for_a_pointer_the_kernel_stores_through_is_not_written_back():
    """docs/runtime.md: a read-only array given for a Ptr member is not written back (numpy's bare ValueError,
    'assignment destination is read-only', came out of the write-back)."""
    ro = np.zeros(64, np.uint32)
    ro.flags.writeable = False
    through_pointers.launch((1,), np.arange(64, dtype=np.uint32), ro, 64, device="cpu")
    assert not ro.any()
    src = np.arange(64, dtype=np.uint32)
    src.flags.writeable = False
    out = np.zeros(64, np.uint32)
    through_pointers.launch((1,), src, out, 64, device="cpu")
    np.testing.assert_array_equal(out, np.arange(64) * 2)
