"""The device check on a real GPU (run with -m gpu): refused kernels never reach the driver, accepted ones run.

    python -m pytest -m gpu tests/gpu/test_device_check_gpu.py -v
"""

import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

from coopdsl.devices import load_profile, mismatches
from coopdsl.runtime.packing import DTYPES

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests.devices import kernels as K  # noqa: E402

pytestmark = pytest.mark.gpu
KERNELS = [K.f32_16x16x8, K.f16_32x32x16, K.workgroup_64x64x16, K.odd_matrix, K.int8_saturating, K.u8_as_signed,
           K.spec_tiles]


def _zeros(kernel, n=16384):
    return {b["name"]: np.zeros(n, DTYPES[b["element_type"]]) for b in kernel.reflect()["bindings"]}


class _Spy:
    """Counts pipeline creations (the first driver call a launch makes after its checks)."""

    def __init__(self, real):
        self.real, self.calls = real, 0

    def method(self):
        def create(program, *args):
            self.calls += 1
            return self.real(program, *args)
        return create


@pytest.mark.parametrize("kernel", KERNELS, ids=[k.name for k in KERNELS])
def test_verdict_on_the_live_device(device, kernel, monkeypatch):
    """Refused: DeviceFeatureError and no pipeline. Accepted: the driver builds and runs it."""
    from coopdsl import runtime
    from coopdsl.runtime.program import Program

    spy = _Spy(Program._create)
    monkeypatch.setattr(Program, "_create", spy.method())
    refused = mismatches(kernel.reflect(), device)
    if refused:
        with pytest.raises(runtime.DeviceFeatureError) as e:
            kernel.launch((1, 1, 1), device=device, **_zeros(kernel))
        assert spy.calls == 0, "the driver was asked for a pipeline"
        assert f"kernels.py:{refused[0].loc.line}:" in str(e.value) and "nearest offered" in str(e.value)
    else:
        kernel.launch((1, 1, 1), device=device, **_zeros(kernel))
        assert spy.calls == 1


def test_f32_16x16x8_is_refused_on_the_h100(device):
    if "H100" not in device.info.name:
        pytest.skip(f"not an H100: {device.info.name}")
    assert mismatches(K.f32_16x16x8.reflect(), device)


def test_live_listing_matches_the_shipped_profile(device):
    if "H100" not in device.info.name:
        pytest.skip(f"not an H100: {device.info.name}")
    live, shipped = load_profile(device), load_profile("nvidia-h100")
    assert (live.configs, live.flexible, live.subgroup_size) == (shipped.configs, shipped.flexible,
                                                                 shipped.subgroup_size)
    for k in KERNELS:
        assert (mismatches(k.reflect(), live) == []) == (mismatches(k.reflect(), shipped) == []), k.name


def test_portable_gemm_with_the_devices_tile(device):
    ns = runpy.run_path(str(ROOT / "examples" / "gemm_portable.py"))
    spec = ns["tile_spec"](device)
    M = N = K_ = 256
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K_)).astype(np.float16)
    b = rng.standard_normal((K_, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    ns["gemm"].launch((N // spec["TN"], M // spec["TM"]), a, b, c, M=M, N=N, K=K_, device=device, **spec)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=2e-2, atol=2e-2)
