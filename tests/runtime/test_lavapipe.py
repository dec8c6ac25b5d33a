"""Launch, buffers, spec constants, push constants and timing for real on any Vulkan device.

CI installs Mesa's CPU driver (lavapipe) so these run without a GPU; with no
Vulkan device at all they skip with the reason (the ``device`` fixture is in conftest.py).
"""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f16, f32, i32, u32

pytestmark = pytest.mark.vulkan


@cd.kernel(workgroup_size=(64, 1, 1))
def saxpy(x: cd.Buffer[f32], y: cd.Buffer[f32], n: u32, alpha: f32, BIAS: cd.Spec[i32] = 0):
    i = cd.global_invocation_id.x
    if i < n:
        y[i] = alpha * x[i] + y[i] + f32(BIAS)


def test_launch_with_push_and_spec_constants(device):
    n = 1000
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    saxpy.launch(((n + 63) // 64,), x, y, n, 2.0, BIAS=3, device=device)
    np.testing.assert_array_equal(y, 2 * x + 1 + 3)
    assert x[5] == 5  # read-only input untouched


@cd.kernel(workgroup_size=(32, 1, 1))
def loops_and_halves(src: cd.Buffer[f16], dst: cd.Buffer[f32], n: u32, WIDTH: cd.Spec[u32] = 4):
    i = cd.global_invocation_id.x
    if i >= n:
        return
    total = f32(0.0)
    for j in range(WIDTH):
        total += f32(src[i * WIDTH + j])
    dst[i] = total


def test_loops_halves_and_early_return(device):
    n, width = 100, 8
    src = np.random.default_rng(1).uniform(-1, 1, n * width).astype(np.float16)
    dst = np.zeros(n, np.float32)
    loops_and_halves.launch((4,), src, dst, n, WIDTH=width, device=device)
    np.testing.assert_allclose(dst, src.astype(np.float32).reshape(n, width).sum(1), rtol=1e-5, atol=1e-5)


def test_bench_reports_gpu_timestamps(device):
    n = 4096
    x = np.ones(n, np.float32)
    y = np.zeros(n, np.float32)
    r = saxpy.bench((n // 64,), x, y, n, 1.0, device=device, warmup=1, repeat=3, flops=2.0 * n)
    assert len(r.times_ms) == 3 and r.min_ms <= r.median_ms <= r.max_ms
    assert r.median_ms > 0 and r.tflops > 0
    np.testing.assert_array_equal(y, 4.0)  # 1 warm-up + 3 timed dispatches, each adds x


def test_bad_arguments_fail_before_dispatch(device):
    from coopdsl.runtime import LaunchError

    with pytest.raises(LaunchError, match="holds f32; got a float64 array"):
        saxpy.launch((1,), np.zeros(4), np.zeros(4, np.float32), 4, 1.0, device=device)
    with pytest.raises(LaunchError, match=r"holds f32; got an int32 array \(pass float32\)"):
        saxpy.launch((1,), np.zeros(4, np.int32), np.zeros(4, np.float32), 4, 1.0, device=device)
    with pytest.raises(LaunchError, match="missing push constant 'alpha'"):
        saxpy.launch((1,), np.zeros(4, np.float32), np.zeros(4, np.float32), n=4, device=device)


def test_a_resident_array_given_to_the_interpreter_is_told_how_to_pass_its_contents(device):
    from coopdsl import runtime
    from coopdsl.interp import LaunchArgumentError

    x = runtime.zeros(4, np.float32, device=device)
    with pytest.raises(LaunchArgumentError, match=r"buffer 'x' needs a numpy array, got Array \(a resident array "
                                                  r"lives on its GPU: pass its contents, arr.numpy\(\)"):
        saxpy.launch((1,), x, np.zeros(4, np.float32), 4, 1.0, device="cpu")
    with pytest.raises(LaunchArgumentError, match="buffer 'x' holds f32; got an int32 array"):
        saxpy.launch((1,), np.zeros(4, np.int32), np.zeros(4, np.float32), 4, 1.0, device="cpu")


def test_coopmat_kernel_on_a_device_without_cooperative_matrices(device):
    from coopdsl.runtime import DeviceFeatureError

    if device.info.has_coopmat:
        pytest.skip("this device has cooperative matrices")
    import runpy
    from pathlib import Path

    k = runpy.run_path(str(Path(__file__).resolve().parents[2] / "examples" / "gemm_khr.py"))["gemm"]
    a = np.zeros((16, 16), np.float16)
    with pytest.raises(DeviceFeatureError, match="VK_KHR_cooperative_matrix") as e:
        k.launch((1, 1), a, a, np.zeros((16, 16), np.float32), M=16, N=16, K=16, device=device)
    assert str(e.value).endswith('; the CPU interpreter runs it: device="cpu" (or COOPDSL_DEVICE=cpu in the '
                                 'environment)')


def test_an_op_on_a_device_that_cannot_run_it_names_the_interpreter(device):
    """ops.linear's GEMV needs subgroups of 32: on a device that has no such subgroups the error says where it
    runs instead."""
    from coopdsl import ops
    from coopdsl.runtime import DeviceFeatureError

    if device.info.max_subgroup_size >= 32 >= device.info.min_subgroup_size:
        pytest.skip("this device runs subgroups of 32")
    w = np.zeros((8, 64), np.float16)
    with pytest.raises(DeviceFeatureError, match=r"requires subgroups of 32 invocations .*the CPU interpreter runs "
                                                 r"ops.linear: device=\"cpu\""):
        ops.linear(np.zeros((1, 64), np.float32), w, device=device)


def test_devices_command_lists_the_device(capsys, device):
    from coopdsl.cli import main

    assert main(["devices"]) == 0
    assert device.info.name in capsys.readouterr().out


@cd.struct
class Scale:
    factor: f32
    offset: f32
    src: cd.Ptr[f32]


@cd.kernel(workgroup_size=(64, 1, 1))
def through_pointers(out: cd.Buffer[f32], cfg: cd.Uniform[Scale], p: Scale, n: u32):
    i = cd.global_invocation_id.x
    if i < n:
        out[i] = p.src[i] * p.factor + p.offset + cfg.factor * cfg.src[i]


def test_uniform_struct_push_struct_and_device_addresses(device):
    if not device.info.features.get("bufferDeviceAddress"):
        pytest.skip("no bufferDeviceAddress")
    n = 256
    src = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    through_pointers.launch((4,), out, {"factor": 10.0, "offset": 0.0, "src": src},
                            {"factor": 2.0, "offset": 1.0, "src": src}, n, device=device)
    np.testing.assert_array_equal(out, src * 2.0 + 1.0 + 10.0 * src)


@cd.struct
class Pair:
    a: u32
    b: f32


@cd.kernel(workgroup_size=(1, 1, 1))
def pair_push(out: cd.Buffer[f32], p: Pair):
    out[0] = f32(p.a) + p.b


def test_a_struct_push_constant_given_no_dict_is_refused_in_the_packers_words(device):
    """A numpy array (the bytes of the struct, say) for a struct push constant was a bare IndexError from the
    GPU launch's fast path (found by a check written from the docs alone); the interpreter said it right."""
    from coopdsl.runtime import LaunchError

    out = np.zeros(1, np.float32)
    for bad in (np.zeros(8, np.uint8), np.zeros(2, np.float32), (1, 2.0)):
        for dev in (device, "cpu"):
            with pytest.raises(LaunchError, match=r"^push constant 'p' is a struct: give a dict of its members$"):
                pair_push.launch((1,), out, bad, device=dev)
    pair_push.launch((1,), out, {"a": 2, "b": 0.5}, device=device)
    assert out[0] == 2.5


def test_a_non_contiguous_numpy_array_for_a_pointer_is_refused(device):
    """It was staged as a contiguous copy, so what the kernel stored through the pointer never reached the
    array; a buffer parameter refuses such an array, and so does a pointer now."""
    from coopdsl.runtime import LaunchError

    if not device.info.features.get("bufferDeviceAddress"):
        pytest.skip("no bufferDeviceAddress")
    n = 64
    src = np.arange(2 * n, dtype=np.float32)[::2]
    with pytest.raises(LaunchError, match=r"^pointer 'src' must be C-contiguous \(use np.ascontiguousarray\)$"):
        through_pointers.launch((1,), np.zeros(n, np.float32), {"factor": 1.0, "offset": 0.0, "src": src},
                                {"factor": 1.0, "offset": 0.0, "src": src}, n, device=device)


@cd.kernel(workgroup_size=(64, 1, 1))
def histogram(x: cd.Buffer[f32], hist: cd.Buffer[u32], total: cd.Buffer[f32], n: u32):
    i = cd.global_invocation_id.x
    if i < n:
        cd.atomic_add(hist, u32(x[i]) % 4, 1)
        cd.atomic_add(total, 0, x[i])


def test_integer_and_float_atomics(device):
    if not device.info.features.get("shaderBufferFloat32AtomicAdd"):
        pytest.skip("no shaderBufferFloat32AtomicAdd")
    n = 1000
    x = (np.arange(n) % 7).astype(np.float32)
    hist = np.zeros(4, np.uint32)
    total = np.zeros(1, np.float32)
    histogram.launch(((n + 63) // 64,), x, hist, total, n, device=device)
    np.testing.assert_array_equal(hist, np.bincount(x.astype(np.uint32) % 4, minlength=4))
    assert total[0] == x.sum()


@cd.kernel(workgroup_size=(64, 1, 1))
def count_positive(x: cd.Buffer[f32], out: cd.Buffer[u32], n: u32):
    i = cd.global_invocation_id.x
    if i < n and x[i] > 0.0:
        cd.atomic_add(out, 0, 1)
    k = u32(0)
    while k < n and x[k] <= 0.0:
        k += 1
    if i == 0:
        out[1] = k


def test_short_circuit_semantics(device):
    n = 100
    x = np.where(np.arange(n) % 3 == 0, 1.0, -1.0).astype(np.float32)
    x[0] = -2.0
    out = np.zeros(2, np.uint32)
    count_positive.launch((2,), x, out, n, device=device)
    assert out[0] == int((x > 0).sum()) and out[1] == 3


def test_a_comparison_chain_short_circuits_on_the_device_as_on_the_interpreter(device):
    from tests.frontend.test_control_flow import _chain_reference, chained

    for x, n in ((-5, 2), (3, 0), (20, 5)):
        a = np.array([10, 1, 10, 3], np.int32)
        cnt = np.zeros(3, np.int32)
        got = a.copy()
        chained.launch((1,), cnt, got, x, n, device=device)
        want_cnt, want_a = _chain_reference(x, a, n)
        assert cnt.tolist() == want_cnt and got.tolist() == want_a.tolist(), (x, n)


@cd.kernel(workgroup_size=(64, 1, 1))
def fp8_to_f32(src: cd.Buffer[cd.e4m3], dst: cd.Buffer[f32], n: u32):
    i = cd.global_invocation_id.x
    if i < n:
        dst[i] = f32(src[i])


def test_fp8_module_needs_vk_ext_shader_float8(device):
    from coopdsl.runtime import DeviceFeatureError

    src = np.array([0x38, 0x40, 0xB8, 0x00], np.uint8)  # e4m3 bits of 1, 2, -1, 0
    dst = np.zeros(4, np.float32)
    if not device.info.features.get("shaderFloat8"):
        assert "Float8EXT" in fp8_to_f32.reflect()["capabilities"]
        with pytest.raises(DeviceFeatureError, match="missing: extension VK_EXT_shader_float8, feature shaderFloat8"):
            fp8_to_f32.launch((1,), src, dst, 4, device=device)
        return
    fp8_to_f32.launch((1,), src, dst, 4, device=device)  # a device with the extension gets it enabled
    np.testing.assert_array_equal(dst, [1.0, 2.0, -1.0, 0.0])


def test_bad_device_index(device):
    from coopdsl import runtime

    with pytest.raises(ValueError, match="device index must be an int from 0 to .*coopdsl devices.*got 99"):
        runtime.Device(99)


def test_a_grid_beyond_the_devices_limit_is_refused_before_anything_is_recorded(device):
    # a count above the device's maxComputeWorkGroupCount is invalid usage (one beyond 32 bits once wrapped
    # to a dispatch of nothing, silently)
    limit = device.info.max_workgroup_count
    x = np.ones(64, np.float32)
    y = np.zeros(64, np.float32)
    with pytest.raises(cd.runtime.LaunchError, match=r"exceeds what .* dispatches at once "
                                                     r"\(maxComputeWorkGroupCount \(\d+, \d+, \d+\)\)"):
        saxpy.launch((1, limit[1] + 1, 1), x, y, 64, 2.0, device=device)
    with pytest.raises(cd.runtime.LaunchError, match=r"repeat must be from 1 to 1,000,000 and warmup from 0 to "
                                                     r"1,000,000 .* got repeat=0"):
        saxpy.bench((1,), x, y, 64, 2.0, device=device, repeat=0)
    with pytest.raises(cd.runtime.LaunchError, match=r"got repeat=3, warmup=True"):
        saxpy.bench((1,), x, y, 64, 2.0, device=device, repeat=3, warmup=True)
    # numpy integers are counts, as for grids and push constants (np.int64(3) was refused)
    assert len(saxpy.bench((1,), x, y, 64, 2.0, device=device, repeat=np.int64(3), warmup=np.uint8(1)).times_ms) == 3
    y[:] = 0.0
    saxpy.launch((1,), x, y, 64, 2.0, device=device)  # the device is fine afterwards
    np.testing.assert_array_equal(y, np.full(64, 2.0, np.float32))


def test_the_low_level_launch_and_bench_take_the_grids_kernel_launch_takes(device):
    # runtime.launch with a grid of (-1, 1, 1) ran until killed, (16,) was an IndexError, 16 a TypeError, (1.5, 1, 1) a
    # ctypes error and (0, 1, 1) ran nothing silently; bench took flops=-5 (found by a host integrator working from
    # the docs alone): one grid rule (coopdsl/_grid.py) for every launch
    from coopdsl import runtime
    from coopdsl.errors import LaunchError

    x, y = np.ones(64, np.float32), np.zeros(64, np.float32)
    spirv, refl = saxpy.compile(), saxpy.reflect()
    args = {"x": x, "y": y, "n": 64, "alpha": 1.0}
    for grid in ((-1, 1, 1), (1.5, 1, 1), (0, 1, 1), "16", None):
        with pytest.raises(LaunchError, match="grid must be 1 to 3 positive ints"):
            runtime.launch(spirv, refl, grid, args, device=device)
        with pytest.raises(LaunchError, match="grid must be 1 to 3 positive ints"):
            runtime.bench(spirv, refl, grid, args, device=device)
    for grid in ((1,), (1, 1), 1):
        runtime.launch(spirv, refl, grid, args, device=device)
    assert (y == 3).all()
    with pytest.raises(LaunchError, match="flops must be a non-negative number"):
        runtime.bench(spirv, refl, 1, args, device=device, flops=-5)
    # a reflection that is not the module's (an empty dict) was a KeyError from inside the runtime
    for bad in ({}, {"bindings": []}, "refl"):
        with pytest.raises(LaunchError, match=r"the reflection given for the module lacks 'entry_point'.*: pass the "
                                              r"kernel's own \(Kernel.reflect\(\) of the kernel that compiled it\)"):
            runtime.launch(spirv + b"\0\0\0\0" * len(str(bad)), bad, 1, args, device=device)
    # another kernel's reflection (its entry point not in the module) was VK_ERROR_UNKNOWN from the driver
    other = dict(refl, entry_point="not_this_one")
    with pytest.raises(LaunchError, match=r"the reflection given is of entry point 'not_this_one', which the module "
                                          r"does not have \(its entry points: \w+\)"):
        runtime.launch(spirv, other, 1, args, device=device)


def test_a_bool_is_no_push_constant_number_on_the_gpu_either(device):
    # True for a u32 or f32 push constant ran on lavapipe (as 1) while the interpreter refused it: struct.pack took it
    from coopdsl.errors import LaunchError

    x, y = np.ones(64, np.float32), np.zeros(64, np.float32)
    for dev in (device, "cpu"):
        with pytest.raises(LaunchError, match=r"push constant 'n' \(u32\) cannot be True: give a number"):
            saxpy.launch((1,), x, y, True, 1.0, device=dev)
        with pytest.raises(LaunchError, match=r"push constant 'alpha' \(f32\) cannot be True: give a number"):
            saxpy.launch((1,), x, y, 64, True, device=dev)
        saxpy.launch((1,), x, y, np.int64(64), np.float32(1.0), device=dev)


def test_bench_on_the_interpreter_says_it_does_not_time():
    from coopdsl.errors import LaunchError

    with pytest.raises(LaunchError, match=r"saxpy.bench times kernels on a Vulkan device .* device='cpu' is the CPU "
                                          r"interpreter, which does not time them"):
        saxpy.bench((1,), np.ones(64, np.float32), np.zeros(64, np.float32), 64, 1.0, device="cpu")


def test_an_allocation_that_fails_names_its_size(device, monkeypatch):
    # it was 'vkCreateBuffer failed with VkResult -2 (VK_ERROR_OUT_OF_DEVICE_MEMORY)' with no size
    from coopdsl import runtime

    with monkeypatch.context() as m:   # a heap that seems large enough: Vulkan refuses it, and the error says
        m.setattr(device, "largest_heap", lambda: 2 ** 62)
        with pytest.raises(runtime.VulkanError, match=r"failed with VkResult .* making a buffer of "
                                                      r"140737488355328 bytes \(131072.00 GiB\) of device-local"):
            runtime.empty(2 ** 45, np.float32, device=device)

    # (past the device's largest memory heap it is refused before Vulkan sees it, naming the size too)
    with pytest.raises(runtime.ArrayError, match=r"a device array of shape \(35184372088832,\) and float32 is "
                                                 r"140,737,488,355,328 bytes, more than the device's largest memory "
                                                 r"heap"):
        runtime.empty(2 ** 45, np.float32, device=device)


@cd.kernel(workgroup_size=(2048, 1, 1))
def wide(x: cd.Buffer[f32]):
    x[cd.global_invocation_id.x] = 1.0


def test_a_workgroup_the_interpreter_refuses_too_is_not_sent_there(device):
    # a workgroup of 2048 that the device refused was told "the CPU interpreter runs it: device='cpu'", which refuses
    # it as well (found by a check written from the docs alone)
    from coopdsl.runtime.features import DeviceFeatureError

    if device.info.max_workgroup_invocations >= 2048:
        pytest.skip(f"{device.info.name} runs workgroups of 2048")
    with pytest.raises(DeviceFeatureError, match=r"a workgroup of 2048x1x1 = 2048 invocations") as e:
        wide.launch((1,), np.zeros(2048, np.float32), device=device)
    assert "interpreter" not in str(e.value)


def test_the_lower_level_launch_names_an_argument_of_another_type(device):
    """runtime.launch and runtime.bench with args as a list, spec as a string, spirv as None reached .items(),
    len() or a hash (found by a fuzzer of the host API); devices.mismatches with spec as a number iterated it."""
    from coopdsl import devices, runtime

    binary, reflection = through_pointers.compile(), through_pointers.reflect()
    good = {"out": np.zeros(4, np.float32)}
    for kwargs, word in (({"args": [1]}, "args"), ({"spec": "WG=1"}, "spec"), ({"spirv": None}, "spirv")):
        call = {"spirv": binary, "reflection": reflection, "grid": (1,), "args": good, **kwargs}
        for fn in (runtime.launch, runtime.bench):
            with pytest.raises(TypeError, match=rf"launch: {word} must be "):
                fn(call["spirv"], call["reflection"], call["grid"], call["args"], spec=call.get("spec"),
                   device=device)
    for spec in (1.5, np.array([1]), "N"):
        with pytest.raises(TypeError, match=r"spec must be a dict of specialization-constant values by name"):
            devices.mismatches(reflection, "nvidia-h100", spec)


def test_spin_ns_a_freed_arrays_view_and_a_long_double_are_refused_where_they_are_given(device):
    """Found by a check written from the docs alone: ``dev.spin_ns = None`` failed at the next wait with a
    comparison TypeError; a freed array handed out a view; an np.longdouble push constant was packed on the GPU
    and refused by the interpreter (one rule now: refused on both)."""
    from coopdsl import runtime
    from coopdsl.runtime import ArrayError, LaunchError

    before = device.spin_ns
    for bad in (None, "x", -1, 1.5, 10 ** 30, True):
        with pytest.raises(ValueError, match=r"^Device.spin_ns must be an int from 0 to 10,000,000,000 \(ns\), got "):
            device.spin_ns = bad
    assert device.spin_ns == before
    device.spin_ns = np.int64(1000)
    assert device.spin_ns == 1000 and type(device.spin_ns) is int
    device.spin_ns = before
    a = runtime.zeros(8, np.float32, device=device)
    a.free()
    with pytest.raises(ArrayError, match=r"view: the device array \(8,\) float32 was freed"):
        a.view(np.uint16)
    out = np.zeros(1, np.float32)
    for dev in (device, "cpu"):
        with pytest.raises(LaunchError, match=r"push constant 'p.b' \(f32\) cannot be np.longdouble\('0.5'\): give a "
                                              r"Python number or a numpy scalar of at most 64 bits"):
            pair_push.launch((1,), out, {"a": 1, "b": np.longdouble(0.5)}, device=dev)


def test_the_low_level_launch_refuses_bytes_that_are_no_spirv_module(device):
    """``runtime.launch(b'garbage!', ...)`` reached the driver: VK_ERROR_UNKNOWN from vkCreateComputePipelines."""
    from coopdsl import runtime
    from coopdsl.runtime import LaunchError

    spirv, refl = saxpy.compile(), saxpy.reflect()
    args = {"x": np.ones(4, np.float32), "y": np.zeros(4, np.float32), "n": 4, "alpha": 1.0}
    for bad in (b"garbage!", spirv[:-2], b"\0" * 4 + spirv[4:], spirv[:16]):
        with pytest.raises(LaunchError, match=r"^launch: spirv is not a SPIR-V module \(\d+ bytes; a module is whole "
                                              r"32-bit words"):
            runtime.launch(bad, refl, 1, args, device=device)
    runtime.launch(bytearray(spirv), refl, 1, args, device=device)
    assert args["y"].tolist() == [1.0] * 4


def test_bench_of_a_kernel_the_device_cannot_run_does_not_point_at_the_interpreter(device):
    """bench's DeviceFeatureError ended '...the CPU interpreter runs it: device="cpu"', which cannot time it."""
    import runpy
    from pathlib import Path

    from coopdsl.runtime import DeviceFeatureError

    if device.info.features.get("cooperativeMatrix"):
        pytest.skip("the device runs cooperative matrices")
    gemm = runpy.run_path(str(Path(__file__).resolve().parents[2] / "examples" / "gemm_khr.py"))["gemm"]
    a = np.zeros((16, 16), np.float16)
    c = np.zeros((16, 16), np.float32)
    with pytest.raises(DeviceFeatureError, match="the CPU interpreter runs it"):
        gemm.launch((1, 1), a, a, c, M=16, N=16, K=16, device=device)   # (a launch keeps the hint)
    with pytest.raises(DeviceFeatureError) as e:
        gemm.bench((1, 1), a, a, c, M=16, N=16, K=16, device=device)
    assert "bench times kernels on a GPU (the CPU interpreter runs them, device=\"cpu\", but does not time them)" \
        in str(e.value) and "the CPU interpreter runs it" not in str(e.value)


@cd.kernel(workgroup_size=(1, 1, 1))
def buffer_lengths(x: cd.Buffer[f32], h: cd.Buffer[f16], b: cd.Buffer[cd.u8], v: cd.Buffer[cd.vec3[f32]],
                   o: cd.Buffer[u32]):
    o[0] = len(x)
    o[1] = len(h)
    o[2] = len(b)
    o[3] = len(v)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 64])
def test_len_of_a_buffer_counts_the_bound_elements_on_a_device_as_on_the_interpreter(device, n):
    """A buffer's descriptor binds the array's own bytes (not at least 4: a one-element f16 array was 2 elements
    long to OpArrayLength), so len(buf) on a device is what the interpreter counts."""
    from coopdsl import runtime

    args = [np.zeros(n, np.float32), np.zeros(n, np.float16), np.zeros(n, np.uint8), np.zeros((n, 4), np.float32)]
    got = {}
    for where in ("cpu", device):
        o = np.zeros(4, np.uint32)
        buffer_lengths.launch((1, 1, 1), *args, o, device=where)
        got[str(where)] = o.tolist()
    assert got["cpu"] == got[str(device)] == [n, n, n, n]
    resident = [runtime.array(a, device=device) for a in args]
    o = runtime.zeros(4, np.uint32, device=device)
    buffer_lengths.launch((1, 1, 1), *resident, o, device=device)
    assert o.numpy().tolist() == [n, n, n, n]


@cd.kernel(workgroup_size=(1, 1, 1))
def masked_add(x: cd.Buffer[f32], mask: cd.Buffer[cd.vec3[f32]] = None, USE_MASK: cd.Const[bool] = False):
    v = x[0]
    if USE_MASK:
        v = v + mask[0].x
    x[0] = v


@pytest.mark.parametrize("where", ["cpu", "device"])
def test_a_buffer_no_instruction_uses_may_be_none(device, where):
    """A buffer read only in a Const branch a variant does not take: reflection says "used": false, and a launch
    takes None for it, or nothing (its default); None for a buffer the kernel uses says so."""
    from coopdsl.errors import LaunchError

    target = "cpu" if where == "cpu" else device
    assert [b["used"] for b in masked_add.reflect()["bindings"]] == [True, False]
    x = np.array([1.0], np.float32)
    masked_add.launch((1, 1, 1), x, None, device=target)
    masked_add.launch((1, 1, 1), x, device=target)
    assert x[0] == 1.0
    with_mask = masked_add.specialize(USE_MASK=True)
    assert [b["used"] for b in with_mask.reflect()["bindings"]] == [True, True]
    with pytest.raises(LaunchError, match="buffer 'mask' is read or written by this kernel; None stands only for a "
                                          "buffer no instruction uses"):
        with_mask.launch((1, 1, 1), x, None, device=target)
    with_mask.launch((1, 1, 1), x, np.full((1, 4), 2.0, np.float32), device=target)
    assert x[0] == 3.0


def test_the_lower_level_launch_takes_none_for_a_buffer_no_instruction_uses(device):
    """``runtime.launch`` with the kernel's SPIR-V and reflection applies Kernel.launch's rule: None binds a
    placeholder for a buffer whose reflection says "used": false, and is refused, by name, for one the kernel
    reads or writes (a reflection without "used" counts every buffer as used)."""
    from coopdsl import runtime
    from coopdsl.errors import LaunchError

    x = np.array([1.5], np.float32)
    runtime.launch(masked_add.compile(), masked_add.reflect(), (1, 1, 1), {"x": x, "mask": None}, device=device)
    assert x[0] == 1.5
    with_mask = masked_add.specialize(USE_MASK=True)
    with pytest.raises(LaunchError, match="launch: buffer 'mask' is read or written by this kernel; None stands only "
                                          "for a buffer no instruction uses"):
        runtime.launch(with_mask.compile(), with_mask.reflect(), (1, 1, 1), {"x": x, "mask": None}, device=device)
    old = masked_add.reflect()
    old = {**old, "bindings": [{k: v for k, v in b.items() if k != "used"} for b in old["bindings"]]}
    with pytest.raises(LaunchError, match="buffer 'mask' is read or written"):
        runtime.launch(masked_add.compile(), old, (1, 1, 1), {"x": x, "mask": None}, device=device)


@cd.kernel(workgroup_size=(1, 1, 1))
def biased(x: cd.Buffer[f32], bias: cd.Buffer[f32], o: cd.Buffer[f32], USE: cd.Const[bool] = False):
    o[0] = x[0] + bias[0] if USE else x[0]


@pytest.mark.parametrize("where", ["cpu", "device"])
def test_an_unused_buffer_without_a_default_is_still_an_argument(device, where):
    """Left out, a buffer without '= None' is missing, as a Python call says, even where no instruction uses it;
    None may be given for it."""
    from coopdsl.errors import LaunchError

    target = "cpu" if where == "cpu" else device
    x, o = np.array([1.0], np.float32), np.zeros(1, np.float32)
    with pytest.raises(LaunchError, match="missing buffer 'bias'"):
        biased.launch((1, 1, 1), x, o=o, device=target)
    biased.launch((1, 1, 1), x, None, o, device=target)
    assert o[0] == 1.0


@cd.kernel(workgroup_size=(64, 1, 1))
def clustered_sums(x: cd.Buffer[f32], k: cd.Buffer[u32], o: cd.Buffer[f32], p: cd.Buffer[u32], q: cd.Buffer[i32]):
    i = cd.global_invocation_id.x
    o[i] = cd.subgroup_clustered_add(x[i], 4)
    p[i] = cd.subgroup_clustered_xor(k[i], 8)
    if i % 3 != 0:
        q[i] = cd.subgroup_clustered_min(i32(i), 2) + cd.subgroup_clustered_add(1, 4)


def test_clustered_reductions_on_a_device_match_the_interpreter(device, monkeypatch):
    """Clustered reductions (GroupNonUniformClustered) on lavapipe (subgroups of 8) and on the interpreter at the
    device's subgroup size."""
    x = np.arange(64, dtype=np.float32)
    k = (np.arange(64, dtype=np.uint64) * 2654435761 % 2**32).astype(np.uint32)
    got = {}
    monkeypatch.setenv("COOPDSL_SUBGROUP_SIZE", str(device.info.subgroup_size))
    for where in ("cpu", device):
        out = (np.zeros(64, np.float32), np.zeros(64, np.uint32), np.full(64, -1, np.int32))
        clustered_sums.launch((1, 1, 1), x, k, *out, device=where)
        got[str(where)] = [a.tolist() for a in out]
    assert got["cpu"] == got[str(device)]
    assert got["cpu"][0] == x.reshape(-1, 4).sum(1).repeat(4).tolist()


@cd.kernel(workgroup_size=(16, 1, 1))
def quad_reads(x: cd.Buffer[u32], o: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    o[i * 4] = cd.subgroup_quad_broadcast(x[i], 3)
    o[i * 4 + 1] = cd.subgroup_quad_swap_horizontal(x[i])
    o[i * 4 + 2] = cd.subgroup_quad_swap_vertical(x[i])
    o[i * 4 + 3] = cd.subgroup_quad_swap_diagonal(x[i])


def test_quad_operations_on_a_device_match_the_interpreter(device, monkeypatch):
    monkeypatch.setenv("COOPDSL_SUBGROUP_SIZE", str(device.info.subgroup_size))
    x = np.arange(16, dtype=np.uint32) * 7 + 1
    got = {}
    for where in ("cpu", device):
        o = np.zeros(64, np.uint32)
        quad_reads.launch((1, 1, 1), x, o, device=where)
        got[str(where)] = o.tolist()
    assert got["cpu"] == got[str(device)]
