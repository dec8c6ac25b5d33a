"""Shared arrays beyond maxComputeSharedMemorySize (VUID-RuntimeSpirv-Workgroup-06530) are refused before the
driver: the H100's (49152 bytes) took a module with more and lost the device at the first submit.

The kernel side is reflection's ``shared_memory`` (its bytes a dimension a host evaluates for its
specialization values); the device side is the profile's ``max_shared_memory``."""

import dataclasses
import json

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f32, u32
from coopdsl.devices import DeviceMismatchError, load_profile, mismatches, shipped_profiles
from coopdsl.devices.dims import resolve
from coopdsl.devices.profile import profiles_dir

from . import kernels as K

H100 = load_profile("nvidia-h100")
OVER = ("the kernel's shared arrays take 65536 bytes (a: 32768, b: 32768); NVIDIA H100 80GB HBM3 allows at most "
        "49152 bytes of shared memory per workgroup (maxComputeSharedMemorySize)")


def _raw_h100() -> dict:
    (entry,) = json.loads((profiles_dir() / "nvidia-h100.json").read_text())
    return entry


def test_reflection_lists_the_used_shared_arrays_and_their_bytes():
    r = K.shared_2x20k.reflect()
    json.dumps(r)  # plain data, for a C++ host
    shared = r["shared_memory"]
    assert shared["bytes"] == 40960  # the unused third array is not in the module
    assert [(a["name"], a["element_type"], a["components"], a["stride"], a["length"], a["bytes"])
            for a in shared["arrays"]] == [("a", "f32", 1, 4, 5120, 20480), ("b", "f32", 1, 4, 5120, 20480)]
    assert K.shared_2x32k.reflect()["shared_memory"]["arrays"][0]["loc"].endswith(
        f"kernels.py:{K.line('shared-pair')}:13")  # the array's declaration (cd.shared)


def test_spec_sized_bytes_are_a_dimension_resolved_by_spec_values():
    shared = K.shared_by_spec.reflect()["shared_memory"]
    assert shared["bytes"]["expr"] == "(4096 + (N * 16))" and shared["bytes"]["value"] == 8192
    assert resolve(shared["bytes"], {"N": 2817}) == 49168
    t, s = shared["arrays"]
    assert (t["bytes"], s["stride"], s["length"]["name"]) == (4096, 16, "N")
    assert K.shared_by_spec.reflect(spec={"N": 1024})["shared_memory"]["bytes"]["value"] == 20480


@cd.kernel(workgroup_size=(64, 1, 1))
def placeholder_defaults(x: cd.Buffer[f32], A: cd.Spec[u32] = 64, B: cd.Spec[u32] = 0):
    s = cd.shared(f32, A // B)  # B = 0: a placeholder the launch replaces
    i = cd.local_invocation_index
    s[i] = x[i]
    x[i] = s[i]


def test_a_length_that_divides_by_zero_at_the_defaults_is_left_to_the_launch_values():
    r = placeholder_defaults.reflect()
    assert r["shared_memory"]["bytes"]["expr"] == "((A // B) * 4)" and r["shared_memory"]["bytes"]["value"] is None
    assert mismatches(r, H100) == [] and mismatches(r, H100, {"B": 2}) == []
    (m,) = mismatches(r, H100, {"A": 65536, "B": 4})
    assert m.what.startswith("the kernel's shared arrays take 65536 bytes (s: 65536 at length (A // B) = 16384); ")


def test_profiles_carry_the_limit():
    assert {name: load_profile(name).max_shared_memory for name in shipped_profiles()} == {
        "amd-rdna3-radv": 65536, "intel-arc-a770-anv": 65536, "nvidia-h100": 49152}
    assert H100.khr_only().max_shared_memory == 49152


def test_64k_of_shared_arrays_is_refused_at_48k_with_the_limit_named():
    (m,) = mismatches(K.shared_2x32k.reflect(), H100)
    assert m.what == OVER
    assert (m.loc.line, m.loc.col) == (K.line("shared-pair"), 13)
    with pytest.raises(DeviceMismatchError) as e:
        K.shared_2x32k.compile(device="nvidia-h100")
    assert e.value.message == OVER
    assert mismatches(K.shared_2x32k.reflect(), "amd-rdna3-radv") == []  # 64 KiB there


def test_40k_of_shared_arrays_passes():
    assert mismatches(K.shared_2x20k.reflect(), H100) == []
    K.shared_2x20k.compile(device="nvidia-h100")
    small = dataclasses.replace(H100, name="a 32 KiB device", max_shared_memory=32768)
    (m,) = mismatches(K.shared_2x20k.reflect(), small)
    assert m.what.startswith("the kernel's shared arrays take 40960 bytes (a: 20480, b: 20480); a 32 KiB device")


def test_a_spec_sized_array_is_refused_only_at_values_beyond_the_limit():
    r = K.shared_by_spec.reflect()
    assert mismatches(r, H100) == [] and mismatches(r, H100, {"N": 2816}) == []  # 4096 + 45056: the limit
    (m,) = mismatches(r, H100, {"N": 2817})
    assert m.what == ("the kernel's shared arrays take 49168 bytes (t: 4096, s: 45072 at length N = 2817); "
                      "NVIDIA H100 80GB HBM3 allows at most 49152 bytes of shared memory per workgroup "
                      "(maxComputeSharedMemorySize)")
    assert m.loc.line == K.line("shared-spec")  # the largest array's declaration
    K.shared_by_spec.compile(spec={"N": 2816}, device="nvidia-h100")
    with pytest.raises(DeviceMismatchError, match=r"take 49168 bytes"):
        K.shared_by_spec.compile(spec={"N": 2817}, device="nvidia-h100")


def test_a_profile_without_the_limit_skips_the_rule():
    raw = _raw_h100()
    del raw["max_shared_memory"]
    assert load_profile(raw).max_shared_memory == 0
    assert mismatches(K.shared_2x32k.reflect(), raw) == []


def test_the_runtime_check_refuses_it_against_the_device_info():
    from coopdsl import runtime
    from coopdsl.runtime.program import check_launch

    fields = {f.name for f in dataclasses.fields(runtime.DeviceInfo)}
    info = runtime.DeviceInfo(**{k: v for k, v in _raw_h100().items() if k in fields})
    assert load_profile(info).max_shared_memory == 49152
    with pytest.raises(runtime.DeviceFeatureError) as e:
        check_launch(K.shared_2x32k.reflect(), info)
    assert OVER in str(e.value) and e.value.loc.line == K.line("shared-pair") and len(e.value.mismatches) == 1
    check_launch(K.shared_2x20k.reflect(), info)
    check_launch(K.shared_by_spec.reflect(), info, {"N": np.uint32(2816)})
    with pytest.raises(runtime.DeviceFeatureError, match=r"take 49168 bytes .* \(maxComputeSharedMemorySize\)"):
        check_launch(K.shared_by_spec.reflect(), info, {"N": np.uint32(2817)})
    check_launch(K.shared_2x32k.reflect(), dataclasses.replace(info, max_shared_memory=65536))
