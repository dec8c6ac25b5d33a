"""Differential tests: the interpreter and a real Vulkan implementation (lavapipe in CI) agree.

Lavapipe has no cooperative matrices; these kernels cover control flow,
subgroup operations, integer and float arithmetic, shared memory, atomics and
device addresses.  The interpreter runs at the device's subgroup size.  Skips
without a Vulkan device.
"""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f32, u32, vec4

from . import test_arith, test_control_flow, test_memory


@pytest.fixture(scope="module")
def device():
    from coopdsl import runtime

    try:
        return runtime.Device()
    except Exception as e:  # no loader, no ICD
        pytest.skip(f"no Vulkan device: {e}")


def both(device, kernel, grid, make_args, **kw):
    """Launch on the device and on the interpreter with equal fresh arguments; both argument lists."""
    gpu, cpu = make_args(), make_args()
    kernel.launch(grid, *gpu, device=device, **kw)
    kernel.launch(grid, *cpu, device="cpu", subgroup_size=device.info.subgroup_size, **kw)
    return gpu, cpu


def test_divergent_control_flow(device):
    gpu, cpu = both(device, test_control_flow.divergent, (2,), lambda: [np.full(128, 7, np.uint32), 90])
    np.testing.assert_array_equal(gpu[0], cpu[0])
    gpu, cpu = both(device, test_control_flow.nested, (1,), lambda: [np.zeros(32, np.int32)])
    np.testing.assert_array_equal(gpu[0], cpu[0])


def test_integer_arithmetic(device):
    rng = np.random.default_rng(7)
    a = rng.integers(-2**31, 2**31, 16).astype(np.int32)
    b = rng.integers(-100, 100, 16).astype(np.int32)
    b[b == 0] = 1
    gpu, cpu = both(device, test_arith.int_ops, (1,), lambda: [a.copy(), b.copy(), np.zeros(96, np.int32),
                                                               np.zeros(48, np.uint32), np.zeros(16, np.uint8)])
    for g, c in zip(gpu[2:], cpu[2:]):
        np.testing.assert_array_equal(g, c)


def test_signed_remainder_with_negative_operands(device):
    # Vulkan leaves OpSRem/OpSMod undefined for negative operands (NVIDIA returns the dividend);
    # coopdsl's % lowers to OpUMod of the magnitudes, so every implementation agrees
    a = np.array([7, -7, 7, -7, -2**31, 5, 0, -1, 2**31 - 1, -100, 100, 3, -3, 9, -9, 1], np.int32)
    b = np.array([2, 2, -2, -2, -1, -3, 5, 7, -2**31, 7, -7, 2**31 - 1, 5, -1, 4, -2**31], np.int32)
    gpu, cpu = both(device, test_arith.rem_only, (1,), lambda: [a.copy(), b.copy(), np.zeros(16, np.int32)])
    np.testing.assert_array_equal(gpu[2], cpu[2])


def test_vectors_and_math(device):
    rng = np.random.default_rng(8)
    a = rng.uniform(-3, 4, (16, 4)).astype(np.float32)
    b = rng.uniform(-3, 4, (16, 4)).astype(np.float32)
    gpu, cpu = both(device, test_arith.vectors, (1,), lambda: [a, b, np.zeros((16, 4), np.float32),
                                                               np.zeros(16, np.uint32)])
    np.testing.assert_allclose(gpu[2], cpu[2], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(gpu[3], cpu[3])


def test_shared_memory_and_barriers(device):
    x = np.random.default_rng(9).uniform(-1, 1, 64 * 3).astype(np.float32)
    gpu, cpu = both(device, test_memory.tree_sum, (3,), lambda: [x, np.zeros(3, np.float32)])
    np.testing.assert_array_equal(gpu[1], cpu[1])


@cd.kernel(workgroup_size=(64, 1, 1))
def subgroups(x: cd.Buffer[u32], out: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    v = x[i]
    out[i * 8] = cd.subgroup_add(v)
    out[i * 8 + 1] = cd.subgroup_exclusive_add(v)
    out[i * 8 + 2] = cd.subgroup_inclusive_max(v)
    out[i * 8 + 3] = cd.subgroup_shuffle_xor(v, 1)
    out[i * 8 + 4] = cd.subgroup_ballot(v % 2 == 0).x
    if v % 3 != 0:
        out[i * 8 + 5] = cd.subgroup_add(v)
        out[i * 8 + 6] = cd.subgroup_broadcast_first(v) + u32(cd.subgroup_elect()) * 1000
        out[i * 8 + 7] = u32(cd.subgroup_all(v > 3)) + u32(cd.subgroup_any(v > 100)) * 2


def test_subgroup_operations_with_divergence(device):
    x = np.random.default_rng(10).integers(0, 200, 128).astype(np.uint32)
    gpu, cpu = both(device, subgroups, (2,), lambda: [x, np.zeros(128 * 8, np.uint32)])
    np.testing.assert_array_equal(gpu[1], cpu[1])


@cd.kernel(workgroup_size=(64, 1, 1))
def ballot_bits(x: cd.Buffer[u32], out: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    bal = cd.subgroup_ballot(x[i] % 3 == 0)
    o = i * 8
    out[o] = cd.subgroup_ballot_bit_count(bal)
    out[o + 1] = cd.subgroup_ballot_inclusive_bit_count(bal)
    out[o + 2] = cd.subgroup_ballot_exclusive_bit_count(bal)
    out[o + 3] = cd.subgroup_ballot_find_lsb(bal | vec4[u32](1, 0, 0, 0))
    out[o + 4] = cd.subgroup_ballot_find_msb(bal | vec4[u32](1, 0, 0, 0))
    out[o + 5] = u32(cd.subgroup_inverse_ballot(bal))
    out[o + 6] = u32(cd.subgroup_ballot_bit_extract(bal, 2))
    out[o + 7] = u32(cd.subgroup_ballot_bit_extract(bal, cd.subgroup_invocation_id ^ 1))
    out[1024 + i] = cd.subgroup_ballot_bit_count(bal & cd.subgroup_lt_mask) + cd.subgroup_ge_mask.x \
        + cd.subgroup_eq_mask.x + cd.subgroup_gt_mask.y + cd.subgroup_le_mask.x


def test_ballot_bit_queries(device):
    """The seven questions about a ballot's bits and the five lane masks, on the device's subgroups and the
    interpreter's of its size."""
    x = np.random.default_rng(11).integers(0, 200, 128).astype(np.uint32)
    gpu, cpu = both(device, ballot_bits, (2,), lambda: [x, np.zeros(128 * 9, np.uint32)])
    np.testing.assert_array_equal(gpu[1], cpu[1])


@cd.kernel(workgroup_size=(64, 1, 1))
def histogram(x: cd.Buffer[f32], hist: cd.Buffer[u32], n: u32):
    i = cd.global_invocation_id.x
    if i < n:
        cd.atomic_add(hist, u32(x[i]) % 4, 1)
        cd.atomic_max(hist, 4, u32(x[i] * 10.0))


def test_atomics(device):
    x = (np.arange(1000) % 7).astype(np.float32)
    gpu, cpu = both(device, histogram, (16,), lambda: [x, np.zeros(5, np.uint32), 1000])
    np.testing.assert_array_equal(gpu[1], cpu[1])


def test_struct_buffers_uniforms_and_device_addresses(device):
    if not device.info.features.get("bufferDeviceAddress"):
        pytest.skip("no bufferDeviceAddress")
    n = 100
    dt = np.dtype({"names": ["weight", "pos", "tag"], "formats": ["<f4", ("<f4", 4), "<u4"],
                   "offsets": [0, 16, 32], "itemsize": 48})

    def make():
        items = np.zeros(n, dt)
        items["weight"] = np.arange(n)
        items["pos"][:, 1] = 0.25
        items["tag"] = 3
        src = np.linspace(0, 1, n + 1).astype(np.float32)
        other = np.arange(n + 1, dtype=np.float32)
        return [items, np.zeros(n, np.float32), {"factor": 10.0, "offset": 0.0, "src": other},
                {"factor": 2.0, "offset": 1.0, "src": src}, n]

    gpu, cpu = both(device, test_memory.structs, (2,), make)
    np.testing.assert_array_equal(gpu[1], cpu[1])
    np.testing.assert_array_equal(gpu[3]["src"], cpu[3]["src"])


def test_one_array_for_two_parameters_and_overlapping_views(device):
    """One numpy array given twice is one upload on the GPU (and one memory on the interpreter); views of one
    array are uploads of their own, written back in the same order on both."""
    if not device.info.features.get("bufferDeviceAddress"):
        pytest.skip("no bufferDeviceAddress")
    for kernel in (test_memory.add_to_both, test_memory.buffer_and_pointer):
        for pick in (lambda base: (base[:64],) * 2, lambda base: (base[:64], base[32:])):
            results = []
            for dev in (device, "cpu"):
                base = np.arange(96, dtype=np.uint32)
                kernel.launch((1,), *pick(base), device=dev)
                results.append(base)
            np.testing.assert_array_equal(results[0], results[1])


@cd.kernel(workgroup_size=(4, 1, 1))
def sum3(v: cd.Buffer[cd.vec3[f32]], o: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    o[i] = v[i].x + v[i].y + v[i].z


def test_both_refuse_the_same_mistakes_in_the_same_words(device):
    """A tightly packed (N, 3) array for a vec3 buffer (16-byte elements) was read at the wrong offsets when 12 N
    was a multiple of 16; an int for a uniform block had different words on the two paths."""
    from coopdsl.runtime import LaunchError

    def message(call):
        with pytest.raises(LaunchError) as e:
            call()
        return str(e.value)

    for rows in (4, 5, 8):
        v = np.zeros((rows, 3), np.float32)
        texts = {message(lambda d=d, v=v: sum3.launch((1,), v, np.zeros(4, np.float32), device=d))
                 for d in (device, "cpu")}
        assert texts == {f"buffer 'v' holds vec3[f32] elements padded to 16 bytes (a vec3 takes a vec4's room), but "
                         f"the array given has 3 values a row, packed tightly: pass shape ({rows}, 4) (e.g. "
                         f"np.pad(x, ((0, 0), (0, 1)))), or declare the buffer vec4"}
    out = np.zeros(4, np.float32)
    sum3.launch((1,), np.arange(16, dtype=np.float32).reshape(4, 4), out, device=device)
    assert out.tolist() == [3, 15, 27, 39]
    p = {"factor": 1.0, "offset": 0.0, "src": np.zeros(4, np.float32)}
    texts = {message(lambda d=d: test_memory.structs.launch((1,), np.zeros(48, np.uint8), np.zeros(4, np.float32), 5,
                                                            p, 1, device=d)) for d in (device, "cpu")}
    assert len(texts) == 1 and texts.pop().startswith("uniform block 'cfg' needs a dict of its members or an array")


@cd.kernel(workgroup_size=(8, 1, 1))
def nan_minmax(x: cd.Buffer[f32], y: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    y[i] = cd.subgroup_max(x[i])
    y[8 + i] = cd.subgroup_min(x[i])
    y[16 + i] = cd.subgroup_inclusive_max(x[i])


def test_subgroup_min_and_max_choose_the_value_that_is_not_nan(device):
    """OpGroupNonUniformFMin/FMax: of two values one of which is a NaN, the other is chosen (all-NaN is undefined).
    The interpreter's np.minimum/np.maximum gave NaN on every lane where lavapipe gave 3 and 0."""
    x = np.array([1, np.nan, 2, 3, 0, 0, 0, 0], np.float32)
    out = np.zeros(24, np.float32)
    nan_minmax.launch((1,), x, out, device="cpu", subgroup_size=8)
    assert out[:16].tolist() == [3.0] * 8 + [0.0] * 8
    assert out[16:].tolist() == [1, 1, 2, 3, 3, 3, 3, 3]
    if device.info.subgroup_size == 8:
        gpu = np.zeros(24, np.float32)
        nan_minmax.launch((1,), x, gpu, device=device)
        np.testing.assert_array_equal(gpu, out)
