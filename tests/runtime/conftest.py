"""The Vulkan device the runtime tests launch on (lavapipe in CI); tests that need one skip without it."""

import pytest


@pytest.fixture(scope="session")
def device():
    """A ``runtime.Device`` (skips the test, with the reason, when there is no Vulkan device)."""
    from coopdsl import runtime

    try:
        return runtime.Device()
    except (runtime.VulkanUnavailableError, runtime.VulkanError, OSError) as e:
        pytest.skip(f"no Vulkan device: {e}")
