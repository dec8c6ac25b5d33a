"""The one check the GPU test suite and the GPU benchmarks share: is there a usable GPU here?

    from benchmarks._gpu import gpu_problem, require_gpu
    device = require_gpu("gemm_bench.py")   # exits with one clear message when there is none
"""

from __future__ import annotations

NEEDS = ("a Vulkan GPU whose driver offers VK_KHR_cooperative_matrix (NVIDIA, or a recent AMD/Intel Mesa "
         "driver); `coopdsl devices` shows what this machine has")


def gpu_problem() -> str | None:
    """Why this machine cannot run the GPU suite and benchmarks, or None when it can."""
    from coopdsl import runtime

    try:
        infos = runtime.list_devices()
    except (runtime.VulkanUnavailableError, runtime.VulkanError, OSError) as e:
        return str(e)
    if not infos:
        return f"the Vulkan loader found no devices; these need {NEEDS}"
    if not any(i.has_coopmat for i in infos):
        found = ", ".join(f"{i.name} ({i.device_type})" for i in infos)
        return f"no device with cooperative matrices (found: {found}); these need {NEEDS}"
    return None


def require_gpu(script: str):
    """A ``runtime.Device`` on the first GPU with cooperative matrices; exits with one message if there is none."""
    problem = gpu_problem()
    if problem is not None:
        raise SystemExit(f"{script}: cannot run: {problem}")
    from coopdsl import runtime

    return runtime.Device()


def require_vulkan(script: str):
    """A ``runtime.Device`` on any Vulkan device (lavapipe will do); exits with one message if there is none."""
    from coopdsl import runtime

    try:
        return runtime.Device()
    except (runtime.VulkanUnavailableError, runtime.VulkanError, OSError) as e:
        raise SystemExit(f"{script}: cannot run: {e}") from None
