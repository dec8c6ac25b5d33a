"""Run coopdsl kernels on a Vulkan GPU from Python (through the system's libvulkan.so.1).

    from coopdsl import runtime
    print(runtime.format_devices(runtime.list_devices()))
    kernel.launch((N // 16, M // 16), a, b, c, M=M, N=N, K=K)   # numpy arrays in, results in place

    x = runtime.array(a)                      # resident device arrays: no copies per launch
    with runtime.batch():                     # many launches, one submission, one wait
        for _ in range(100):
            kernel.launch(grid, x, y, n)

See docs/runtime.md.
"""

from .array import Array, array, empty, zeros
from .batch import FLUSH_EVERY, Batch, batch
from .device import Device, default_device
from .errors import ArrayError, LaunchError, VulkanUnavailableError
from .features import DeviceFeatureError
from .instance import DeviceInfo, devices_json, format_devices, list_devices
from .launch import launch, replay
from .memory import Buffer
from .packing import pack_push, pack_spec
from .timing import BenchResult, bench
from .vk import VulkanError

__all__ = ["list_devices", "format_devices", "devices_json", "DeviceInfo", "Device", "Buffer", "launch", "bench",
           "BenchResult", "LaunchError", "ArrayError", "DeviceFeatureError", "VulkanError",
           "VulkanUnavailableError", "default_device", "pack_spec", "pack_push", "Array", "array", "empty", "zeros",
           "Batch", "batch", "FLUSH_EVERY", "replay"]
