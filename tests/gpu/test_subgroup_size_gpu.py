"""``@coopdsl.kernel(subgroup_size=N)`` on a real GPU (run with -m gpu): the pipeline runs at the required size,
and a size the device cannot run is refused before the driver sees the kernel.

    python -m pytest -m gpu tests/gpu/test_subgroup_size_gpu.py -v
"""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import u32

pytestmark = pytest.mark.gpu


def _kernel(size):
    @cd.kernel(workgroup_size=(128, 1, 1), subgroup_size=size)
    def sizes(out: cd.Buffer[u32]):
        i = cd.global_invocation_id.x
        out[i] = cd.subgroup_size * 1000 + cd.subgroup_id

    return sizes


def test_a_size_the_device_offers_runs_at_that_size(device):
    info = device.info
    assert info.min_subgroup_size <= info.subgroup_size <= info.max_subgroup_size
    for size in sorted({info.min_subgroup_size, info.max_subgroup_size}):
        out = np.zeros(256, np.uint32)
        _kernel(size).launch((2,), out, device=device)
        assert set(out // 1000) == {size}
        assert sorted(set(out % 1000)) == list(range(128 // size))  # subgroups of exactly that size
        (exe,) = _kernel(size).statistics(device)
        assert exe["subgroup_size"] == size


def test_devices_json_lists_the_range(device):
    from coopdsl.runtime.instance import devices_json

    (entry,) = devices_json([device.info])
    assert entry["min_subgroup_size"] == device.info.min_subgroup_size >= 1
    assert entry["max_subgroup_size"] == device.info.max_subgroup_size >= entry["min_subgroup_size"]


def test_a_size_the_device_cannot_run_never_reaches_the_driver(device, monkeypatch):
    from coopdsl.runtime import DeviceFeatureError
    from coopdsl.runtime.program import Program

    info = device.info
    size = info.max_subgroup_size * 2
    calls = []
    monkeypatch.setattr(Program, "_create", lambda *a, **k: calls.append(a))
    with pytest.raises(DeviceFeatureError, match=f"the kernel requires subgroups of {size} invocations "
                                                 f"\\(subgroup_size={size}\\); {info.name} runs (only )?subgroups of "):
        _kernel(size).launch((1,), np.zeros(128, np.uint32), device=device)
    assert calls == []


def test_the_ops_kernels_that_assume_32_say_so_and_run(device):
    from coopdsl.ops import gemm, gemm_tiled

    assert gemm_tiled.make(cd.f16, cd.f32).subgroup_size == 32
    assert gemm.tiled_kernel("f16", False).subgroup_size == 32
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (256, 128)).astype(np.float16)
    b = rng.uniform(-1, 1, (128, 256)).astype(np.float16)
    got = cd.ops.matmul(a, b, device=device)
    np.testing.assert_allclose(got, a.astype(np.float32) @ b.astype(np.float32), rtol=2e-3, atol=2e-3)
