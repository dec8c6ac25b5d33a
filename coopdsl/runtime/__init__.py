"""Run coopdsl kernels on a Vulkan GPU from Python (through the system's libvulkan.so.1).

    from coopdsl import runtime
    print(runtime.format_devices(runtime.list_devices()))
    kernel.launch((N // 16, M // 16), a, b, c, M=M, N=N, K=K)   # numpy arrays in, results in place

See docs/runtime.md.
"""

from .device import Buffer, Device
from .features import DeviceFeatureError
from .instance import DeviceInfo, devices_json, format_devices, list_devices
from .launch import BenchResult, LaunchError, bench, default_device, launch, pack_push, pack_spec
from .vk import VulkanError

__all__ = ["list_devices", "format_devices", "devices_json", "DeviceInfo", "Device", "Buffer", "launch", "bench",
           "BenchResult", "LaunchError", "DeviceFeatureError", "VulkanError", "default_device", "pack_spec",
           "pack_push"]
