"""A kernel written from docs/autotune.md and docs/runtime.md alone (tests/runtime/autotune_docs_only_kernel.py):
an autotuned matrix-vector product with a short clock-up, checked against numpy on the CPU interpreter (the
first config, untimed) and on a Vulkan device (every config timed, then the fastest launched)."""

import pytest

from tests.runtime.autotune_docs_only_kernel import CONFIGS, run


def test_on_the_interpreter_the_first_config_runs():
    assert run("cpu") == {}  # nothing timed


@pytest.mark.vulkan
def test_on_a_vulkan_device_every_config_is_timed(device):
    timings = run(device)
    assert set(timings) == {repr(c) for c in CONFIGS}
    assert all(isinstance(t, float) and t > 0 for t in timings.values())
