"""The launch-time check runs before pipeline creation, against the device's own listing (no GPU needed).

A stand-in device carries the H100's measured listing as its ``info`` and
fails the test if the runtime ever asks it for a pipeline.
"""

import runpy
from pathlib import Path

import numpy as np
import pytest

from coopdsl import runtime
from coopdsl.devices.profile import profiles_dir

from . import kernels as K

ROOT = Path(__file__).resolve().parents[2]
PORTABLE = runpy.run_path(str(ROOT / "examples" / "gemm_portable.py"))["gemm"]


class PipelineReached(Exception):
    pass


class _NoVulkan:
    """Any Vulkan call a discarded batch makes is a no-op (nothing was recorded)."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: 0


class StandInDevice(runtime.Device):
    """A Device with the H100's measured listing and no driver: creating a pipeline (the first driver call
    a launch makes after its checks) is counted and stops the launch."""

    def __init__(self):  # no Vulkan instance: only what a launch touches before the driver
        import json

        self.info = json.loads((profiles_dir() / "nvidia-h100.json").read_text())[0]
        self.pipelines = 0
        self._programs = {}
        self.vk = _NoVulkan()
        self.recording = 0
        self.pool = self.descriptors = _NoVulkan()

    def check(self, reflection):
        pass

    def layouts(self, reflection):
        return 0, 0


@pytest.fixture(autouse=True)
def _count_pipelines(monkeypatch):
    from coopdsl.runtime.program import Program

    def create(self, *args):
        self.dev.pipelines += 1
        raise PipelineReached

    monkeypatch.setattr(Program, "_create", create)


def test_unsupported_kernel_fails_before_the_pipeline():
    dev = StandInDevice()
    with pytest.raises(runtime.DeviceFeatureError) as e:
        runtime.launch(K.f32_16x16x8.compile(), K.f32_16x16x8.reflect(), (1, 1, 1), {}, device=dev)
    assert dev.pipelines == 0
    text = str(e.value)
    assert f"kernels.py:{K.line('f32-muladd')}:11: error: NVIDIA H100 80GB HBM3 offers no MulAdd (M x N x K) " \
           f"16x16x8 f32 x f32 + f32 -> f32" in text
    assert "nearest offered: 16x16x16 f16 x f16 + f32 -> f32" in text
    assert e.value.loc.line == K.line("f32-muladd") and len(e.value.mismatches) == 3


def test_supported_kernel_reaches_the_pipeline():
    dev = StandInDevice()
    with pytest.raises(PipelineReached):
        runtime.launch(K.f16_32x32x16.compile(), K.f16_32x32x16.reflect(), (1, 1, 1), {}, device=dev)
    assert dev.pipelines == 1


def test_launch_spec_values_are_checked():
    a = np.zeros((64, 64), np.float16)
    c = np.zeros((64, 64), np.float32)
    dev = StandInDevice()
    with pytest.raises(PipelineReached):
        PORTABLE.launch((4, 4), a, a, c, device=dev)
    with pytest.raises(runtime.DeviceFeatureError, match=r"offers no MulAdd \(M x N x K\) 16x16x8 f16"):
        PORTABLE.launch((4, 4), a, a, c, TK=8, device=dev)
    with pytest.raises(runtime.DeviceFeatureError, match=r"workgroup x size \(16\) must be a multiple of the "
                                                         r"subgroup size of NVIDIA H100 80GB HBM3 \(32\)"):
        PORTABLE.launch((4, 4), a, a, c, WG=np.uint32(16), device=dev)
    assert dev.pipelines == 1


def test_shared_memory_beyond_the_device_fails_before_the_pipeline():
    """On the H100 a module over maxComputeSharedMemorySize lost the device at the first submit."""
    x = np.zeros(256, np.float32)
    dev = StandInDevice()
    with pytest.raises(runtime.DeviceFeatureError) as e:
        K.shared_2x32k.launch((1,), x, device=dev)
    assert "shared arrays take 65536 bytes (a: 32768, b: 32768); NVIDIA H100 80GB HBM3 allows at most 49152 " \
           "bytes of shared memory per workgroup (maxComputeSharedMemorySize)" in str(e.value)
    assert e.value.loc.line == K.line("shared-pair") and dev.pipelines == 0
    with pytest.raises(runtime.DeviceFeatureError, match=r"take 49168 bytes \(t: 4096, s: 45072 at length N = 2817\)"):
        K.shared_by_spec.launch((1,), x, N=2817, device=dev)
    assert dev.pipelines == 0
    with pytest.raises(PipelineReached):
        K.shared_by_spec.launch((1,), x, N=2816, device=dev)
    with pytest.raises(PipelineReached):
        K.shared_2x20k.launch((1,), x, device=dev)
    assert dev.pipelines == 2
