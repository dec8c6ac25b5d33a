"""What a device offers the ops, asked in one place: VK_NV_cooperative_matrix2's features, the SM count, and
which cooperative-matrix shapes and types it multiplies.

Each function takes a runtime ``Device`` (anything with its ``info``), or a str / None for the CPU interpreter,
which offers everything.
"""

import ctypes
import weakref
from typing import Any

DEFAULT_CORES = 132  # the H100 SXM and the H200; used where the device does not say
NV2_FEATURES = ("cooperativeMatrixWorkgroupScope", "cooperativeMatrixFlexibleDimensions",
                "cooperativeMatrixReductions", "cooperativeMatrixConversions",
                "cooperativeMatrixPerElementOperations", "cooperativeMatrixTensorAddressing")


def has_nv2(dev: Any) -> bool:
    """Whether runtime Device ``dev`` offers what ggml's kernels need of VK_NV_cooperative_matrix2 (every feature
    of :data:`NV2_FEATURES`, workgroups of 256)."""
    c = dev.info.coopmat2
    return bool(c) and all(c.get(f) for f in NV2_FEATURES) and int(c.get("max_workgroup_size") or 0) >= 256


def offers_coopmat(dev: Any, m: int, n: int, k: int, a: str = "f16", b: str = "f16", c: str = "f32",
                   scope: str = "Subgroup") -> bool:
    """Whether ``dev`` offers ``m x n x k`` cooperative matrices of A ``a``, B ``b`` and accumulator ``c`` at
    ``scope`` (VK_KHR_cooperative_matrix's properties; True on the interpreter: a str or None)."""
    if dev is None or isinstance(dev, str):
        return True
    info = getattr(dev, "info", None)
    return any(p.get("M") == m and p.get("N") == n and p.get("K") == k and p.get("A") == a and p.get("B") == b
               and p.get("C") == c and p.get("scope") == scope
               for p in getattr(info, "coopmat_configs", None) or [])


_cores: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()


def shader_cores(dev: Any) -> int:
    """The device's SM count, as ggml reads it (``VK_NV_shader_sm_builtins``' shaderSMCount); 132
    (an H100 SXM, an H200) where the device does not report one, and on the interpreter."""
    if isinstance(dev, str):
        return DEFAULT_CORES
    if dev in _cores:
        return _cores[dev]
    count = DEFAULT_CORES
    if "VK_NV_shader_sm_builtins" in dev.info.extensions:
        try:
            from ..runtime import vk

            sm_props = vk.chained("VkPhysicalDeviceShaderSMBuiltinsPropertiesNV", 1000154001,
                                  extra=[("shaderSMCount", ctypes.c_uint32), ("shaderWarpsPerSM", ctypes.c_uint32)])
            sm = vk.make(sm_props)
            props = vk.PhysicalDeviceProperties2(sType=vk.ST_PHYSICAL_DEVICE_PROPERTIES_2)
            props.pNext = vk.chain(sm)
            dev.vk.vkGetPhysicalDeviceProperties2(dev.physical, ctypes.cast(ctypes.pointer(props), ctypes.c_void_p))
            if sm.shaderSMCount:
                count = int(sm.shaderSMCount)
        except Exception:  # an unexpected loader: keep the default
            pass
    _cores[dev] = count
    return count


def subgroup_sizes(dev: Any) -> tuple[int, int]:
    """(smallest, largest) subgroup size ``dev`` (a runtime Device) runs: its min/max subgroup sizes, else its one
    subgroup size (0, 0 when it reports none)."""
    info = dev.info
    lo = int(getattr(info, "min_subgroup_size", 0) or getattr(info, "subgroup_size", 0) or 0)
    hi = int(getattr(info, "max_subgroup_size", 0) or getattr(info, "subgroup_size", 0) or 0)
    return lo, hi
