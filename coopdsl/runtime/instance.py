"""One Vulkan instance per process, and what each physical device offers."""

from __future__ import annotations

import ctypes
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

from . import vk
from .errors import VulkanUnavailableError, no_vulkan_message, vulkan_result_reason


@dataclass
class DeviceInfo:
    """What a physical device offers for coopdsl kernels."""

    index: int
    name: str
    device_type: str
    vendor_id: int
    device_id: int
    api_version: str
    driver_name: str
    driver_info: str
    subgroup_size: int
    subgroup_operations: int
    max_shared_memory: int
    max_workgroup_invocations: int
    timestamp_period_ns: float
    extensions: list[str] = field(repr=False, default_factory=list)
    features: dict[str, bool] = field(repr=False, default_factory=dict)
    coopmat_configs: list[dict[str, Any]] = field(default_factory=list)
    coopmat2: dict[str, Any] = field(default_factory=dict)
    flexible_configs: list[dict[str, Any]] = field(default_factory=list)
    float16: bool = False
    int8: bool = False
    bfloat16: bool = False
    bfloat16_coopmat: bool = False
    # subgroup size control (Vulkan 1.3): the sizes a pipeline may require (both subgroup_size without it)
    # maxComputeWorkGroupCount: the largest grid a dispatch may have, per axis (Vulkan's minimum: 65535)
    max_workgroup_count: tuple[int, int, int] = (65535, 65535, 65535)
    # maxComputeWorkGroupSize: the largest workgroup per axis (Vulkan's minimum: 128 x 128 x 64)
    max_workgroup_size: tuple[int, int, int] = (128, 128, 64)
    min_subgroup_size: int = 0
    max_subgroup_size: int = 0
    max_compute_workgroup_subgroups: int = 0

    @property
    def has_coopmat(self) -> bool:
        return bool(self.coopmat_configs)


EXTENSION_FEATURES = {  # device extension -> its feature struct (queried, and enabled when the device has it)
    "VK_KHR_cooperative_matrix": vk.CoopMatFeaturesKHR,
    "VK_NV_cooperative_matrix2": vk.CoopMat2FeaturesNV,
    "VK_KHR_shader_bfloat16": vk.Bfloat16FeaturesKHR,
    "VK_EXT_shader_atomic_float": vk.AtomicFloatFeaturesEXT,
    "VK_EXT_shader_float8": vk.Float8FeaturesEXT,
    "VK_QCOM_cooperative_matrix_conversion": vk.CoopMatConversionFeaturesQCOM,
    "VK_KHR_pipeline_executable_properties": vk.PipelineExecutableFeaturesKHR,  # Program.statistics
}


def extension_feature_structs(exts: list[str]) -> list[type]:
    """The feature struct classes to chain for the device extensions ``exts`` (in a fixed order)."""
    return [cls for ext, cls in EXTENSION_FEATURES.items() if ext in exts]


class Instance:
    """The process's VkInstance and its physical devices."""

    def __init__(self) -> None:
        self.vk = vk.Loader()
        app = vk.ApplicationInfo(sType=vk.ST_APPLICATION_INFO, pApplicationName=b"coopdsl",
                                 pEngineName=b"coopdsl", apiVersion=vk.API_VERSION_1_3)
        info = vk.InstanceCreateInfo(sType=vk.ST_INSTANCE_CREATE_INFO, pApplicationInfo=ctypes.pointer(app))
        handle = vk.VkHandle()
        try:
            self.vk.call("vkCreateInstance", ctypes.byref(info), None, ctypes.byref(handle))
        except vk.VulkanError as e:
            reason = vulkan_result_reason("vkCreateInstance", e.result)
            if reason is None:
                raise
            raise VulkanUnavailableError(no_vulkan_message(reason)) from None
        self.handle = handle
        count = ctypes.c_uint32()
        self.vk.call("vkEnumeratePhysicalDevices", handle, ctypes.byref(count), None)
        arr = (vk.VkHandle * count.value)()
        self.vk.call("vkEnumeratePhysicalDevices", handle, ctypes.byref(count), arr)
        self.physical = [vk.VkHandle(arr[i]) for i in range(count.value)]

    def extensions(self, pd: vk.VkHandle) -> list[str]:
        count = ctypes.c_uint32()
        self.vk.call("vkEnumerateDeviceExtensionProperties", pd, None, ctypes.byref(count), None)
        arr = (vk.ExtensionProperties * count.value)()
        self.vk.call("vkEnumerateDeviceExtensionProperties", pd, None, ctypes.byref(count), arr)
        return sorted(arr[i].extensionName.decode() for i in range(count.value))

    def feature_structs(self, pd: vk.VkHandle, exts: list[str]) -> list[Any]:
        """The feature chain this device can report (and coopdsl can enable), filled in."""
        structs = [vk.make(vk.Features2), vk.make(vk.Vulkan11Features), vk.make(vk.Vulkan12Features),
                   vk.make(vk.Vulkan13Features)]
        structs += [vk.make(cls) for cls in extension_feature_structs(exts)]
        vk.chain(*structs)
        self.vk.vkGetPhysicalDeviceFeatures2(pd, ctypes.cast(ctypes.pointer(structs[0]), ctypes.c_void_p))
        return structs

    def _api_version(self, pd: vk.VkHandle) -> tuple[int, int]:
        """(major, minor) of the device's Vulkan version (which property structs it knows)."""
        props = vk.PhysicalDeviceProperties2(sType=vk.ST_PHYSICAL_DEVICE_PROPERTIES_2)
        self.vk.vkGetPhysicalDeviceProperties2(pd, ctypes.cast(ctypes.pointer(props), ctypes.c_void_p))
        v = props.properties.apiVersion
        return v >> 22, (v >> 12) & 0x3FF

    def info(self, index: int) -> DeviceInfo:
        pd = self.physical[index]
        exts = self.extensions(pd)
        props = vk.PhysicalDeviceProperties2(sType=vk.ST_PHYSICAL_DEVICE_PROPERTIES_2)
        driver = vk.make(vk.DriverProperties)
        sub = vk.make(vk.SubgroupProperties)
        tail = [driver, sub]
        size_control = None
        if self._api_version(pd) >= (1, 3) or "VK_EXT_subgroup_size_control" in exts:
            size_control = vk.make(vk.SubgroupSizeControlProperties)
            tail.append(size_control)
        nv2 = None
        if "VK_NV_cooperative_matrix2" in exts:
            nv2 = vk.make(vk.CoopMat2PropertiesNV)
            tail.append(nv2)
        props.pNext = vk.chain(*tail)
        self.vk.vkGetPhysicalDeviceProperties2(pd, ctypes.cast(ctypes.pointer(props), ctypes.c_void_p))
        p = props.properties
        features = {}
        for s in self.feature_structs(pd, exts):
            for b in s.BOOLS:
                features[b] = bool(getattr(s, b))
        v = p.apiVersion
        info = DeviceInfo(
            index=index, name=p.deviceName.decode(), device_type=vk.DEVICE_TYPES.get(p.deviceType, "?"),
            vendor_id=p.vendorID, device_id=p.deviceID,
            api_version=f"{v >> 22}.{(v >> 12) & 0x3FF}.{v & 0xFFF}",
            driver_name=driver.driverName.decode(), driver_info=driver.driverInfo.decode(),
            subgroup_size=sub.subgroupSize, subgroup_operations=sub.supportedOperations,
            max_shared_memory=p.limits.maxComputeSharedMemorySize,
            max_workgroup_invocations=p.limits.maxComputeWorkGroupInvocations,
            max_workgroup_count=(int(p.limits.maxComputeWorkGroupCount[0]), int(p.limits.maxComputeWorkGroupCount[1]),
                                 int(p.limits.maxComputeWorkGroupCount[2])),
            max_workgroup_size=(int(p.limits.maxComputeWorkGroupSize[0]), int(p.limits.maxComputeWorkGroupSize[1]),
                                int(p.limits.maxComputeWorkGroupSize[2])),
            timestamp_period_ns=float(p.limits.timestampPeriod), extensions=exts, features=features,
            float16=features.get("shaderFloat16", False), int8=features.get("shaderInt8", False),
            bfloat16=features.get("shaderBFloat16Type", False),
            bfloat16_coopmat=features.get("shaderBFloat16CooperativeMatrix", False))
        if size_control is not None and size_control.minSubgroupSize:
            info.min_subgroup_size = size_control.minSubgroupSize
            info.max_subgroup_size = size_control.maxSubgroupSize
            info.max_compute_workgroup_subgroups = size_control.maxComputeWorkgroupSubgroups
        else:
            info.min_subgroup_size = info.max_subgroup_size = sub.subgroupSize
        if "VK_KHR_cooperative_matrix" in exts:
            info.coopmat_configs = self._coopmat_configs(pd)
        if nv2 is not None:
            info.coopmat2 = {b: features.get(b, False) for b in vk.CoopMat2FeaturesNV.BOOLS}
            info.coopmat2.update(
                max_workgroup_size=nv2.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize,
                flexible_max_dimension=nv2.cooperativeMatrixFlexibleDimensionsMaxDimension,
                reserved_shared_memory=nv2.cooperativeMatrixWorkgroupScopeReservedSharedMemory)
            info.flexible_configs = self._flexible_configs(pd)
        return info

    def _coopmat_configs(self, pd: vk.VkHandle) -> list[dict[str, Any]]:
        fn = self.vk.instance_function(self.handle, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR")
        if fn is None:
            return []
        count = ctypes.c_uint32()
        fn(pd, ctypes.byref(count), None)
        arr = (vk.CoopMatPropertiesKHR * count.value)()
        for i in range(count.value):
            arr[i].sType = vk.ST_COOPERATIVE_MATRIX_PROPERTIES_KHR
        fn(pd, ctypes.byref(count), arr)
        t = vk.COMPONENT_TYPES
        return [{"M": c.MSize, "N": c.NSize, "K": c.KSize, "A": t.get(c.AType, str(c.AType)),
                 "B": t.get(c.BType, str(c.BType)), "C": t.get(c.CType, str(c.CType)),
                 "Result": t.get(c.ResultType, str(c.ResultType)), "saturating": bool(c.saturatingAccumulation),
                 "scope": vk.SCOPES.get(c.scope, str(c.scope))} for c in arr[:count.value]]

    def _flexible_configs(self, pd: vk.VkHandle) -> list[dict[str, Any]]:
        fn = self.vk.instance_function(
            self.handle, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV")
        if fn is None:
            return []
        count = ctypes.c_uint32()
        fn(pd, ctypes.byref(count), None)
        arr = (vk.FlexDimPropertiesNV * count.value)()
        for i in range(count.value):
            arr[i].sType = vk.ST_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV
        fn(pd, ctypes.byref(count), arr)
        t = vk.COMPONENT_TYPES
        return [{"MGranularity": c.MGranularity, "NGranularity": c.NGranularity, "KGranularity": c.KGranularity,
                 "A": t.get(c.AType, str(c.AType)), "B": t.get(c.BType, str(c.BType)),
                 "C": t.get(c.CType, str(c.CType)), "Result": t.get(c.ResultType, str(c.ResultType)),
                 "saturating": bool(c.saturatingAccumulation), "scope": vk.SCOPES.get(c.scope, str(c.scope)),
                 "workgroup_invocations": c.workgroupInvocations} for c in arr[:count.value]]


@lru_cache(maxsize=1)
def instance() -> Instance:
    """The process-wide Vulkan instance (created on first use)."""
    return Instance()


def list_devices() -> list[DeviceInfo]:
    """Every Vulkan physical device, with its cooperative-matrix support."""
    inst = instance()
    return [inst.info(i) for i in range(len(inst.physical))]


def devices_json(infos: list[DeviceInfo]) -> list[dict[str, Any]]:
    """``list_devices()`` as JSON-ready dicts."""
    out = []
    for i in infos:
        d = asdict(i)
        d.pop("extensions")
        d["features"] = {k: v for k, v in d["features"].items() if v}
        out.append(d)
    return out


def format_devices(infos: list[DeviceInfo]) -> str:
    """A readable report of ``list_devices()``."""
    if not infos:
        return "no Vulkan devices"
    lines = []
    for i in infos:
        lines.append(f"[{i.index}] {i.name} ({i.device_type}), Vulkan {i.api_version}, "
                     f"driver {i.driver_name} {i.driver_info}")
        sizes = f" ({i.min_subgroup_size} to {i.max_subgroup_size} on request)" \
            if i.min_subgroup_size != i.max_subgroup_size else ""
        lines.append(f"    subgroup size {i.subgroup_size}{sizes}; shared memory {i.max_shared_memory} B; "
                     f"f16 {'yes' if i.float16 else 'no'}, int8 {'yes' if i.int8 else 'no'}, "
                     f"bf16 {'yes' if i.bfloat16 else 'no'} (coopmat {'yes' if i.bfloat16_coopmat else 'no'})")
        if not i.coopmat_configs:
            lines.append("    VK_KHR_cooperative_matrix: not supported")
        else:
            lines.append("    VK_KHR_cooperative_matrix:")
            lines.append("      " + f"{'M':>4} {'N':>4} {'K':>4}  {'A':>5} {'B':>5} {'C':>5} {'Result':>6}  "
                         f"{'scope':9} sat")
            for c in i.coopmat_configs:
                lines.append("      " + f"{c['M']:>4} {c['N']:>4} {c['K']:>4}  {c['A']:>5} {c['B']:>5} "
                             f"{c['C']:>5} {c['Result']:>6}  {c['scope']:9} {'yes' if c['saturating'] else 'no'}")
        if i.coopmat2:
            on = [k.replace("cooperativeMatrix", "") for k, v in i.coopmat2.items() if v is True]
            lines.append(f"    VK_NV_cooperative_matrix2: {', '.join(on) or 'no features'}; workgroup scope up to "
                         f"{i.coopmat2.get('max_workgroup_size')} invocations, flexible dims up to "
                         f"{i.coopmat2.get('flexible_max_dimension')}")
            for c in i.flexible_configs:
                lines.append(f"      flexible {c['A']}x{c['B']}->{c['Result']} granularity "
                             f"{c['MGranularity']}/{c['NGranularity']}/{c['KGranularity']} at "
                             f"{c['workgroup_invocations']} invocations ({c['scope']})")
    return "\n".join(lines)
