"""A workgroup the device cannot run (maxComputeWorkGroupInvocations, maxComputeWorkGroupSize) is refused at the
decorator, at compile time against a profile and before every pipeline at launch (with the size as specialized):
lavapipe handed a workgroup of 2**20 invocations died of a floating-point exception."""

import json

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f32, u32
from coopdsl.devices import DeviceMismatchError, mismatches
from coopdsl.devices.profile import profiles_dir


@cd.kernel(workgroup_size=("WG", 1, 1))  # L:wg
def by_spec(x: cd.Buffer[f32], n: u32, WG: cd.Spec[u32] = 64):
    i = cd.global_invocation_id.x
    if i < n:
        x[i] = 1.0


@cd.kernel(workgroup_size=(8, 64, 1))  # L:wg2d
def tall(x: cd.Buffer[f32]):
    x[cd.global_invocation_id.x] = 1.0


def _line(marker: str) -> int:
    lines = open(__file__).read().splitlines()
    return next(i + 1 for i, line in enumerate(lines) if line.rstrip().endswith(marker))


def _profile(**changes) -> dict:
    (entry,) = json.loads((profiles_dir() / "nvidia-h100.json").read_text())
    return {**entry, **changes}


def test_too_many_invocations_are_refused_at_the_decorator_for_the_specialized_size():
    assert mismatches(by_spec.reflect(), "nvidia-h100") == []
    (m,) = mismatches(by_spec.reflect(), "nvidia-h100", {"WG": 2048})
    assert m.what == ("a workgroup of 2048x1x1 = 2048 invocations; NVIDIA H100 80GB HBM3 runs at most 1024 "
                      "(maxComputeWorkGroupInvocations)")
    assert (m.loc.line, m.loc.col) == (_line("# L:wg"), len("@cd.kernel(") + 1)
    (zero,) = mismatches(by_spec.reflect(), "nvidia-h100", {"WG": 0})
    assert zero.what == "a workgroup of 0x1x1 invocations: each size must be at least 1"



@pytest.mark.parametrize("spec, error, message", [
    ({"WG": 2048.0}, ValueError, "specialization constant WG (u32) cannot be 2048.0: cannot use the float literal "
                                 "2048.0 as u32; convert explicitly"),
    ({"WG": "2048"}, ValueError, "specialization constant WG (u32) cannot be '2048': give a number"),
    ({"WG": -1}, ValueError, "specialization constant WG (u32) cannot be -1: the literal -1 does not fit in u32 "
                             "(0..4294967295)"),
    ({"wg": 2048}, ValueError, "unknown specialization constant(s) ['wg']; the kernel has ['WG']"),
])
def test_spec_values_a_launch_would_refuse_are_refused_not_dropped(spec, error, message):
    # verify() dropped them and checked the default (64): {"WG": 2048.0} passed a workgroup the H100 cannot run;
    # they are refused with the launch's words (coopdsl._packing), for every entry point that takes spec values
    for check in (lambda: cd.devices.verify(by_spec.reflect(), "nvidia-h100", spec),
                  lambda: mismatches(by_spec.reflect(), "nvidia-h100", spec),
                  lambda: cd.devices.check.workgroup_size(by_spec.reflect(), spec)):
        with pytest.raises(error) as info:
            check()
        assert str(info.value) == message
    with pytest.raises(DeviceMismatchError, match="2048 invocations"):   # (the int still reaches the check)
        cd.devices.verify(by_spec.reflect(), "nvidia-h100", {"WG": 2048})

def test_a_size_along_one_axis_beyond_the_device_is_refused():
    small = _profile(max_workgroup_size=[1024, 32, 64])
    (m,) = mismatches(tall.reflect(), small)
    assert m.what == ("a workgroup of 8x64x1 invocations: 64 along y; NVIDIA H100 80GB HBM3 allows at most 1024x32x64 "
                      "(maxComputeWorkGroupSize)")
    assert mismatches(tall.reflect(), _profile(max_workgroup_size=[1024, 1024, 64])) == []
    with pytest.raises(DeviceMismatchError, match="maxComputeWorkGroupSize"):
        tall.compile(device=small)


@pytest.mark.vulkan
def test_a_launch_with_a_workgroup_the_device_cannot_run_never_reaches_the_driver(device):
    from coopdsl import runtime

    too_many = device.info.max_workgroup_invocations * 2
    with pytest.raises(runtime.DeviceFeatureError, match=rf"a workgroup of {too_many}x1x1 = {too_many} invocations; "
                                                          r".* runs at most \d+ \(maxComputeWorkGroupInvocations\)"):
        by_spec.launch((1,), np.zeros(64, np.float32), 64, WG=too_many, device=device)
    x = np.zeros(64, np.float32)
    by_spec.launch((1,), x, 64, device=device)  # the default size runs
    assert (x == 1.0).all()
