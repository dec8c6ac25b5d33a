"""``pytest -m gpu`` on a machine without a usable GPU stops at once with one message (instead of
reporting every GPU test as skipped)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks._gpu import gpu_problem  # noqa: E402


def pytest_collection_finish(session: pytest.Session) -> None:
    """After selection: if any gpu-marked test is to run and there is no usable GPU, exit with the reason."""
    if not any(item.get_closest_marker("gpu") for item in session.items):
        return
    problem = gpu_problem()
    if problem is not None:
        pytest.exit(f"the GPU tests (-m gpu) cannot run on this machine: {problem}", returncode=1)


@pytest.fixture(scope="module")
def device():
    """A Device on the first GPU with VK_KHR_cooperative_matrix (the test skips without one)."""
    from coopdsl import runtime

    try:
        infos = runtime.list_devices()
    except Exception as e:  # no loader or no driver
        pytest.skip(f"no Vulkan: {e}")
    if not any(i.has_coopmat for i in infos):
        pytest.skip("no Vulkan device with VK_KHR_cooperative_matrix")
    return runtime.Device()
