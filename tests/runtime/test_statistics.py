"""Kernel.statistics: the driver's report on a compiled pipeline, and its errors (the H100 figures are in
tests/gpu/test_statistics_gpu.py)."""

import pytest

import coopdsl as cd
from coopdsl import f32, runtime, u32

pytestmark = pytest.mark.vulkan


@cd.kernel(workgroup_size=("WG", 1, 1))
def scale(x: cd.Buffer[f32], n: u32, WG: cd.Spec[u32] = 64):
    i = cd.global_invocation_id.x
    if i < n:
        x[i] = 2.0 * x[i]


def test_statistics_takes_a_device_object():
    with pytest.raises(TypeError, match="scale.statistics: device must be a coopdsl.runtime.Device, got str"):
        scale.statistics(device="gpu")


def test_a_device_without_the_extension_is_named(device, monkeypatch):
    monkeypatch.setitem(device.info.features, "pipelineExecutableInfo", False)
    with pytest.raises(runtime.DeviceFeatureError, match="does not report pipeline statistics "
                                                          "\\(VK_KHR_pipeline_executable_properties"):
        scale.statistics(device=device, WG=32)


def test_a_device_with_the_extension_reports_each_executable(device):
    if not device.info.features.get("pipelineExecutableInfo"):
        pytest.skip(f"{device.info.name} does not offer VK_KHR_pipeline_executable_properties")
    (first, *_) = scale.statistics(device=device, WG=32)
    assert set(first) == {"name", "description", "subgroup_size", "statistics"} and first["statistics"]
