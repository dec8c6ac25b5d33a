"""Choosing the CPU, subgroup sizes, batches of workgroups, and the lower-level run()."""

import re

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f32, i32, u32, vec2
from coopdsl.interp import run, subgroup_size_from, wants_cpu


def test_device_choice(monkeypatch):
    monkeypatch.delenv("COOPDSL_DEVICE", raising=False)
    assert wants_cpu("cpu") and wants_cpu("CPU") and not wants_cpu(None)
    monkeypatch.setenv("COOPDSL_DEVICE", "cpu")
    assert wants_cpu(None)
    assert not wants_cpu(object())  # an explicit GPU device wins over the environment
    monkeypatch.setenv("COOPDSL_DEVICE", "gpu")
    assert not wants_cpu(None)
    monkeypatch.setenv("COOPDSL_DEVICE", "0")   # a device index: the GPU runtime's (runtime.default_device)
    assert not wants_cpu(None)
    monkeypatch.setenv("COOPDSL_DEVICE", "npu")
    with pytest.raises(ValueError, match=r"COOPDSL_DEVICE must be 'cpu', 'gpu' or a device index \(as `coopdsl "
                                         r"devices` numbers them\), got 'npu'"):
        wants_cpu(None)


def test_a_device_index_in_the_environment_picks_the_default_device():
    """``COOPDSL_DEVICE=<index>`` means a device index to the C++ host example (docs/aot.md); it was an error
    in Python ('must be cpu or gpu'): the default device is that one now, and an index no device has is the
    Device's own error."""
    import subprocess
    import sys

    code = ("from coopdsl import runtime\n"
            "d = runtime.default_device()\n"
            "print(d.index)\n")
    env = {**__import__("os").environ, "COOPDSL_DEVICE": "0"}
    got = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if "no Vulkan" in got.stderr or "VulkanUnavailable" in got.stderr:
        pytest.skip("no Vulkan device")
    assert got.returncode == 0 and got.stdout.strip() == "0", got.stderr
    env["COOPDSL_DEVICE"] = "99"
    got = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert got.returncode != 0 and "device index must be an int from 0 to" in got.stderr and "got 99" in got.stderr


def test_subgroup_size_choice(monkeypatch):
    monkeypatch.delenv("COOPDSL_SUBGROUP_SIZE", raising=False)
    assert subgroup_size_from(None) == 32 and subgroup_size_from(8) == 8
    monkeypatch.setenv("COOPDSL_SUBGROUP_SIZE", "64")
    assert subgroup_size_from(None) == 64 and subgroup_size_from(16) == 16
    monkeypatch.setenv("COOPDSL_SUBGROUP_SIZE", "wide")
    with pytest.raises(ValueError, match="subgroup size must be one of"):
        subgroup_size_from(None)


@cd.kernel(workgroup_size=(32, 1, 1))
def sizes(out: cd.Buffer[u32]):
    out[cd.global_invocation_id.x] = cd.subgroup_size * 1000 + cd.subgroup_invocation_id


def test_subgroup_size_keyword_and_gpu_only_rejection():
    out = np.zeros(32, np.uint32)
    sizes.launch((1,), out, device="cpu", subgroup_size=8)
    np.testing.assert_array_equal(out, 8000 + np.arange(32) % 8)
    # a LaunchError (still a ValueError), so that `except LaunchError` catches it as every launch mistake
    from coopdsl.errors import LaunchError

    with pytest.raises(LaunchError, match="subgroup_size= applies to device='cpu' only"):
        sizes.launch((1,), out, device=object(), subgroup_size=8)


@cd.kernel(workgroup_size=(4, 1, 1))
def counter(hits: cd.Buffer[u32], order: cd.Buffer[u32], v: vec2[f32], scale: f32):
    i = cd.global_invocation_id.x
    order[i] = cd.atomic_add(hits, 0, 1)
    hits[1 + i] = u32(v.x * scale + v.y)


def test_batches_of_workgroups_give_the_same_result_as_one_batch():
    results = []
    for max_slots in (1 << 16, 32, 4):  # one batch; 8 workgroups per batch; one per batch
        hits, order = np.zeros(1 + 4 * 50, np.uint32), np.zeros(4 * 50, np.uint32)
        run(counter.ir(), (50, 1, 1), {"hits": hits, "order": order, "v": (2.0, 1.0), "scale": 3.0},
            max_slots=max_slots)
        results.append((hits.copy(), order.copy()))
    for hits, order in results:
        np.testing.assert_array_equal(order, np.arange(200))  # atomics in invocation order across batches
        assert hits[0] == 200 and (hits[1:] == 7).all()


@cd.kernel(workgroup_size=("WG", 1, 1))
def spec_workgroup(out: cd.Buffer[u32], WG: cd.Spec[u32] = 8):
    out[cd.global_invocation_id.x] = cd.local_invocation_index + cd.num_workgroups.x * 100


def test_workgroup_size_from_a_spec_constant():
    out = np.zeros(3 * 24, np.uint32)
    spec_workgroup.launch((3,), out, WG=24, device="cpu")
    np.testing.assert_array_equal(out, np.tile(np.arange(24), 3) + 300)


def test_unknown_arguments_and_spec_constants():
    from coopdsl.interp import LaunchArgumentError

    with pytest.raises(LaunchArgumentError, match=r"unknown specialization constant\(s\) \['SIZE'\]"):
        run(spec_workgroup.ir(), (1, 1, 1), {"out": np.zeros(8, np.uint32)}, {"SIZE": 3})
    with pytest.raises(LaunchArgumentError, match=r"unknown argument\(s\) \['extra'\]"):
        run(spec_workgroup.ir(), (1, 1, 1), {"out": np.zeros(8, np.uint32), "extra": 1})


def test_run_takes_a_grid_as_launch_does():
    """interp.run: one to three workgroup counts (or one int), the missing ones 1; anything else is a
    LaunchArgumentError, never a foreign exception (a 1-entry grid once raised IndexError)."""
    from coopdsl.interp import LaunchArgumentError

    for grid in ((2,), 2, [2, 1], (np.int64(2), 1, 1)):
        out = np.zeros(2 * 24, np.uint32)
        assert run(spec_workgroup.ir(), grid, {"out": out}, {"WG": 24}) is None
        np.testing.assert_array_equal(out, np.tile(np.arange(24), 2) + 200)   # (num_workgroups.x * 100)
    for grid in ((), (1, 1, 1, 1), "2", b"ab", (1.5,), None, (-1,), (True,)):   # (bytes were iterated as ints)
        with pytest.raises(LaunchArgumentError, match=r"grid must be 1 to 3 workgroup counts \(ints\), got "):
            run(spec_workgroup.ir(), grid, {"out": np.zeros(8, np.uint32)})
    out = np.zeros(8, np.uint32)
    assert run(spec_workgroup.ir(), (0, 1, 1), {"out": out}, {"WG": 8}) is None   # no workgroup: nothing runs
    assert not out.any()
    # (the same rule as Kernel.launch, coopdsl._grid: a dispatch's counts are 32-bit)
    with pytest.raises(LaunchArgumentError, match=re.escape("grid (4294967296, 1, 1) does not fit a dispatch")):
        run(spec_workgroup.ir(), 2**32, {"out": out})


@cd.kernel(workgroup_size=(32, 1, 1))
def scaled_by(x: cd.Buffer[f32], s: f32):
    x[cd.global_invocation_id.x] = x[cd.global_invocation_id.x] * s



def test_grids_that_no_dispatch_can_hold_are_refused_on_every_device():
    from coopdsl.runtime import LaunchError

    x = np.zeros(64, np.float32)
    for grid, shown in (((2**32,), "(4294967296, 1, 1)"), (2**40, "(1099511627776, 1, 1)")):
        with pytest.raises(LaunchError, match=re.escape(f"grid {shown} does not fit a dispatch: each count is a "
                                                        "32-bit unsigned int")):
            scaled_by.launch(grid, x, device="cpu")
    from coopdsl.interp import LaunchArgumentError

    # the interpreter's argument errors are LaunchArgumentErrors (a LaunchError), the grid's too (it was the base
    # LaunchError: found by a check written from the docs alone)
    with pytest.raises(LaunchArgumentError, match=r"grid must be 1 to 3 positive ints, got \(1, 0\)"):
        scaled_by.launch((1, 0), x, device="cpu")
    with pytest.raises(LaunchArgumentError, match=r"grid must be 1 to 3 positive ints, got \(0,\)"):
        scaled_by.launch((0,), x, device="cpu")


def test_workgroup_ids_are_made_per_batch_in_dispatch_order():
    from coopdsl.interp.launch import _workgroup_ids

    grid = (3, 2, 2)
    whole = _workgroup_ids(grid, 0, 100)
    assert whole.tolist() == [[x, y, z] for z in range(2) for y in range(2) for x in range(3)]
    assert _workgroup_ids(grid, 4, 5).tolist() == whole[4:9].tolist()
    assert _workgroup_ids((2**31, 2**31, 1), 2**40, 2).tolist() == [[0, 512, 0], [1, 512, 0]]  # no 2**62 ids


def test_a_float_push_constant_beyond_its_type_and_a_read_only_output_are_refused():
    from coopdsl.interp import LaunchArgumentError

    with pytest.raises(LaunchArgumentError, match=r"push constant 's' \(f32\) cannot be 1e\+300: the literal "
                                                  r"1e\+300 does not fit in f32"):
        scaled_by.launch((1,), np.zeros(32, np.float32), 1e300, device="cpu")
    with pytest.raises(LaunchArgumentError, match="buffer 'x' is written by the kernel, but the numpy array given "
                                                  "for it is read-only"):
        scaled_by.launch((1,), np.frombuffer(bytes(128), np.float32), 2.0, device="cpu")


@cd.kernel(workgroup_size=("WG", 1, 1))
def sized_by_spec(x: cd.Buffer[f32], WG: cd.Spec[u32] = 64):
    x[cd.local_invocation_index] = 1.0


def test_a_workgroup_no_gpu_runs_is_refused_on_the_interpreter_too():
    # (2**32 - 1 invocations once failed with numpy's MemoryError)
    from coopdsl.interp import LaunchArgumentError

    x = np.zeros(1024, np.float32)
    sized_by_spec.launch((1,), x, WG=1024, device="cpu")
    assert (x == 1.0).all()
    for wg in (1025, 2**32 - 1):
        with pytest.raises(LaunchArgumentError, match=rf"a workgroup of {wg}x1x1 = {wg} invocations: the "
                                                      r"interpreter runs at most 1024"):
            sized_by_spec.launch((1,), x, WG=wg, device="cpu")


@cd.kernel(workgroup_size=(4, 1, 1))
def spec_sized_memory(d: cd.Buffer[u32], L: cd.Spec[i32] = -3, P: cd.Spec[i32] = 0, S: cd.Spec[i32] = -1):
    t = cd.local_array(u32, L)  # X:local
    p = cd.private_array(u32, P)
    s = cd.shared(u32, S)
    i = cd.local_invocation_index
    t[0] = i
    p[0] = i  # X:private
    s[i] = i  # X:shared
    d[i] = t[0] + p[0] + s[i]


def test_an_array_sized_below_one_at_a_launch_is_a_located_error():
    # compiling does not check spec-sized lengths at their defaults (docs/language.md); a launch that runs with
    # them did reach numpy ("negative dimensions are not allowed"), found by a docs-only check
    from coopdsl.interp import InterpreterError

    from ..conftest import marker_line

    out = np.zeros(4, np.uint32)
    # (a local array at its declaration; shared and private arrays, module variables, at their first use)
    for spec, marker, what in [({"P": 1, "S": 4}, "# X:local", "the local array has L = -3 elements"),
                               ({"L": 2, "S": 4}, "# X:private", "private array 'p' has P = 0 elements"),
                               ({"L": 2, "P": 1}, "# X:shared", "shared array 's' has S = -1 elements")]:
        with pytest.raises(InterpreterError, match="at this launch") as info:
            spec_sized_memory.launch((1,), out, device="cpu", **spec)
        assert what in str(info.value) and info.value.loc.line == marker_line(marker)
    spec_sized_memory.launch((1,), out, device="cpu", L=2, P=1, S=4)
    assert out.tolist() == [0, 3, 6, 9]


def test_a_resident_array_names_what_sent_the_launch_to_the_interpreter(monkeypatch):
    """With COOPDSL_DEVICE=cpu the message told the user to drop a device='cpu' they never passed."""
    from coopdsl import runtime
    from coopdsl.interp import LaunchArgumentError

    try:
        x = runtime.zeros(32, np.float32)
    except Exception as e:  # no Vulkan device
        pytest.skip(f"no Vulkan device: {e}")
    lives = ("buffer 'x' needs a numpy array, got Array (a resident array lives on its GPU: pass its contents, "
             "arr.numpy(), to the interpreter, or launch on the array's device ")
    monkeypatch.delenv("COOPDSL_DEVICE", raising=False)
    with pytest.raises(LaunchArgumentError, match="^" + re.escape(lives + "without device='cpu')") + "$"):
        scaled_by.launch((1,), x, 2.0, device="cpu")
    monkeypatch.setenv("COOPDSL_DEVICE", "cpu")
    with pytest.raises(LaunchArgumentError, match="^" + re.escape(
            lives + "instead: COOPDSL_DEVICE=cpu in the environment sends launches that name no device to the "
                    "interpreter; unset it, or pass device=arr.device)") + "$"):
        scaled_by.launch((1,), x, 2.0)


@pytest.mark.parametrize("variable", ["COOPDSL_INTERP_MAX_INVOCATIONS", "COOPDSL_INTERP_MAX_ITERATIONS"])
@pytest.mark.parametrize("value", ["0", "-5", "abc", "1.5"])
def test_an_interpreter_limit_that_is_not_a_positive_integer_is_refused(monkeypatch, variable, value):
    """0 and -5 became a limit of 1, and 'abc' the default, silently."""
    from coopdsl.interp import LaunchArgumentError

    monkeypatch.setenv(variable, value)
    x = np.ones(32, np.float32)
    with pytest.raises(LaunchArgumentError, match="^" + re.escape(f"{variable} must be a positive integer, got "
                                                                  f"{value!r}") + "$"):
        scaled_by.launch((1,), x, 2.0, device="cpu")
    assert (x == 1).all()  # refused before anything ran
    monkeypatch.setenv(variable, "64")
    scaled_by.launch((1,), x, 2.0, device="cpu")
    assert (x == 2).all()


@cd.func
def _sync_everyone():
    cd.barrier()  # E:helper-barrier


@cd.kernel(workgroup_size=(32, 1, 1))
def _barrier_in_a_helper(x: cd.Buffer[u32]):
    if cd.assume_uniform(cd.local_invocation_index < 16):
        _sync_everyone()  # E:helper-call
    x[cd.local_invocation_index] = 1


def test_an_error_inside_a_device_function_names_its_call_site():
    """A barrier in a helper reached by half the workgroup was reported at the helper's line alone."""
    from coopdsl.interp import InterpreterError

    lines = open(__file__).read().splitlines()
    at = {tag: next(i for i, t in enumerate(lines, 1) if t.endswith(tag)) for tag in ("# E:helper-barrier",
                                                                                       "# E:helper-call")}
    with pytest.raises(InterpreterError, match=rf"control barrier reached by 16 of the 32 invocations .* \(in "
                                               rf"_sync_everyone\(\), called at line {at['# E:helper-call']}\); in "
                                               r"workgroup \(0, 0, 0\)") as e:
        _barrier_in_a_helper.launch((1,), np.zeros(32, np.uint32), device="cpu")
    assert e.value.loc.line == at["# E:helper-barrier"]


@cd.kernel(workgroup_size=(1, 1, 1))
def copy_vec4(out: cd.Buffer[cd.vec4[f32]], src: cd.Buffer[cd.vec4[f32]]):
    out[0] = src[0]


def test_a_buffer_of_float_vectors_takes_its_components_dtype():
    """A float64 (or int32) array for a vec4[f32] buffer was read as its bytes: [1, 2, 3, 4] gave
    [0, 1.875, 0, 2]. It is refused as a scalar buffer's wrong dtype is; float32 runs."""
    from coopdsl.interp import LaunchArgumentError

    out = np.zeros(4, np.float32)
    for bad in (np.array([1.0, 2.0, 3.0, 4.0]), np.arange(4, dtype=np.int32)):
        with pytest.raises(LaunchArgumentError, match=rf"buffer 'src' holds vec4\[f32\]; got an? {bad.dtype} array "
                                                      r"\(pass float32, 4 values an element\)"):
            copy_vec4.launch((1,), out, bad, device="cpu")
    copy_vec4.launch((1,), out, np.arange(4, dtype=np.float32), device="cpu")
    assert out.tolist() == [0.0, 1.0, 2.0, 3.0]


@cd.struct
class _Pair:
    a: u32
    b: f32


@cd.kernel(workgroup_size=(1, 1, 1))
def read_uniform(out: cd.Buffer[f32], u: cd.Uniform[_Pair]):
    out[0] = u.b


def test_a_uniform_block_s_raw_bytes_are_no_wider_than_its_widest_member():
    """np.array([1.0, 2.5]) (float64) for a block of a u32 and an f32 was read as their bytes (1.875); it is
    refused, as a complex array is; a dict, uint8 bytes and 4-byte words are taken."""
    from coopdsl.interp import LaunchArgumentError

    out = np.zeros(1, np.float32)
    for bad in (np.array([1.0, 2.5]), np.array([1 + 2j, 3])):
        with pytest.raises(LaunchArgumentError, match=r"uniform block 'u' takes a dict of its members or its raw "
                                                      rf"bytes \(a uint8 array, or items of at most its widest "
                                                      rf"member's 4 bytes\); got an? {bad.dtype} array"):
            read_uniform.launch((1,), out, bad, device="cpu")
    for good in ({"a": 1, "b": 2.5}, np.array([1, 2.5], np.float32), np.array([1, 2.5], np.float32).view(np.uint8)):
        out[0] = 0
        read_uniform.launch((1,), out, good, device="cpu")
        assert out[0] == 2.5
