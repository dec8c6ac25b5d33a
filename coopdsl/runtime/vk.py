"""The thinnest ctypes layer over the Vulkan loader (libvulkan.so.1) that the runtime uses.

Struct layouts, enum values and structure-type numbers follow the Vulkan
registry (vk.xml / vulkan_core.h, Vulkan 1.3 plus VK_KHR_cooperative_matrix,
VK_NV_cooperative_matrix2, VK_KHR_shader_bfloat16 and VK_EXT_shader_float8).  Feature structs that
the driver fills are declared as their named booleans plus spare padding, so
a miscount could never let the driver write past them.

Why ctypes and not a binding package: see docs/runtime.md ("The binding").
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Sequence
from ctypes import (
    POINTER,
    Structure,
    c_char,
    c_char_p,
    c_float,
    c_int32,
    c_size_t,
    c_uint8,
    c_uint32,
    c_uint64,
    c_void_p,
)
from typing import Any

from .errors import VulkanUnavailableError, no_vulkan_message

VkHandle = c_void_p       # dispatchable handles (instance, physical device, device, queue, command buffer)
VkNonDispatchable = c_uint64
VkBool32 = c_uint32
VkDeviceSize = c_uint64


class VulkanError(RuntimeError):
    """A Vulkan call failed (its VkResult is in ``result``)."""

    def __init__(self, call: str, result: int):
        super().__init__(f"{call} failed with VkResult {result} ({RESULTS.get(result, 'unknown')})")
        self.result = result


RESULTS = {0: "VK_SUCCESS", 1: "VK_NOT_READY", 2: "VK_TIMEOUT", 5: "VK_INCOMPLETE",
           -1: "VK_ERROR_OUT_OF_HOST_MEMORY", -2: "VK_ERROR_OUT_OF_DEVICE_MEMORY",
           -3: "VK_ERROR_INITIALIZATION_FAILED", -4: "VK_ERROR_DEVICE_LOST", -5: "VK_ERROR_MEMORY_MAP_FAILED",
           -6: "VK_ERROR_LAYER_NOT_PRESENT", -7: "VK_ERROR_EXTENSION_NOT_PRESENT",
           -8: "VK_ERROR_FEATURE_NOT_PRESENT", -9: "VK_ERROR_INCOMPATIBLE_DRIVER",
           -12: "VK_ERROR_FRAGMENTED_POOL", -13: "VK_ERROR_UNKNOWN", -1000069000: "VK_ERROR_OUT_OF_POOL_MEMORY",
           -1000012000: "VK_ERROR_INVALID_SHADER_NV"}
ERROR_INCOMPATIBLE_DRIVER = -9
ERROR_INITIALIZATION_FAILED = -3
ERROR_FRAGMENTED_POOL = -12
ERROR_OUT_OF_POOL_MEMORY = -1000069000

# -- structure types (VkStructureType) -----------------------------------------------------
ST_APPLICATION_INFO = 0
ST_INSTANCE_CREATE_INFO = 1
ST_DEVICE_QUEUE_CREATE_INFO = 2
ST_DEVICE_CREATE_INFO = 3
ST_SUBMIT_INFO = 4
ST_MEMORY_ALLOCATE_INFO = 5
ST_FENCE_CREATE_INFO = 8
ST_QUERY_POOL_CREATE_INFO = 11
ST_BUFFER_CREATE_INFO = 12
ST_SHADER_MODULE_CREATE_INFO = 16
ST_PIPELINE_SHADER_STAGE_CREATE_INFO = 18
ST_COMPUTE_PIPELINE_CREATE_INFO = 29
ST_PIPELINE_LAYOUT_CREATE_INFO = 30
ST_DESCRIPTOR_SET_LAYOUT_CREATE_INFO = 32
ST_DESCRIPTOR_POOL_CREATE_INFO = 33
ST_DESCRIPTOR_SET_ALLOCATE_INFO = 34
ST_WRITE_DESCRIPTOR_SET = 35
ST_COMMAND_POOL_CREATE_INFO = 39
ST_COMMAND_BUFFER_ALLOCATE_INFO = 40
ST_COMMAND_BUFFER_BEGIN_INFO = 42
ST_MEMORY_BARRIER = 46
ST_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES = 49
ST_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES = 51
ST_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES = 53
ST_PHYSICAL_DEVICE_FEATURES_2 = 1000059000
ST_PHYSICAL_DEVICE_PROPERTIES_2 = 1000059001
ST_MEMORY_ALLOCATE_FLAGS_INFO = 1000060000
ST_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES = 1000094000
ST_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR = 1000141000
ST_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_CONVERSION_FEATURES_QCOM = 1000172000
ST_PHYSICAL_DEVICE_DRIVER_PROPERTIES = 1000196000
ST_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES = 1000225000
ST_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO = 1000225001
ST_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT = 1000260000
ST_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR = 1000269000
ST_PIPELINE_INFO_KHR = 1000269001
ST_PIPELINE_EXECUTABLE_PROPERTIES_KHR = 1000269002
ST_PIPELINE_EXECUTABLE_INFO_KHR = 1000269003
ST_PIPELINE_EXECUTABLE_STATISTIC_KHR = 1000269004
PIPELINE_CREATE_CAPTURE_STATISTICS = 0x40  # VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR
ST_BUFFER_DEVICE_ADDRESS_INFO = 1000244001
ST_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR = 1000506000
ST_COOPERATIVE_MATRIX_PROPERTIES_KHR = 1000506001
ST_PHYSICAL_DEVICE_SHADER_FLOAT8_FEATURES_EXT = 1000567000
ST_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV = 1000593000
ST_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV = 1000593002
ST_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV = 1000593001

# -- other enums and flags --------------------------------------------------------------------
API_VERSION_1_3 = (1 << 22) | (3 << 12)
QUEUE_COMPUTE_BIT = 0x2
DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET = 0x1
DESCRIPTOR_TYPE_UNIFORM_BUFFER = 6
DESCRIPTOR_TYPE_STORAGE_BUFFER = 7
SHADER_STAGE_COMPUTE_BIT = 0x20
PIPELINE_BIND_POINT_COMPUTE = 1
BUFFER_USAGE_TRANSFER_SRC = 0x1
BUFFER_USAGE_TRANSFER_DST = 0x2
BUFFER_USAGE_UNIFORM_BUFFER = 0x10
BUFFER_USAGE_STORAGE_BUFFER = 0x20
BUFFER_USAGE_SHADER_DEVICE_ADDRESS = 0x20000
MEMORY_PROPERTY_DEVICE_LOCAL = 0x1
MEMORY_PROPERTY_HOST_VISIBLE = 0x2
MEMORY_PROPERTY_HOST_COHERENT = 0x4
MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT = 0x2
QUERY_TYPE_TIMESTAMP = 2
QUERY_RESULT_64 = 0x1
QUERY_RESULT_WAIT = 0x2
PIPELINE_STAGE_TOP_OF_PIPE = 0x1
PIPELINE_STAGE_COMPUTE_SHADER = 0x800
PIPELINE_STAGE_TRANSFER = 0x1000
PIPELINE_STAGE_BOTTOM_OF_PIPE = 0x2000
PIPELINE_STAGE_HOST = 0x4000
ACCESS_SHADER_READ = 0x20
ACCESS_SHADER_WRITE = 0x40
ACCESS_TRANSFER_READ = 0x800
ACCESS_TRANSFER_WRITE = 0x1000
ACCESS_HOST_READ = 0x2000
ACCESS_HOST_WRITE = 0x4000
COMMAND_POOL_RESET_COMMAND_BUFFER = 0x2
COMMAND_BUFFER_LEVEL_PRIMARY = 0
COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT = 0x1
WHOLE_SIZE = (1 << 64) - 1
SHARING_MODE_EXCLUSIVE = 0

COMPONENT_TYPES = {  # VkComponentTypeKHR -> coopdsl scalar name
    0: "f16", 1: "f32", 2: "f64", 3: "i8", 4: "i16", 5: "i32", 6: "i64", 7: "u8", 8: "u16", 9: "u32",
    10: "u64", 1000141000: "bf16", 1000491000: "i8packed", 1000491001: "u8packed",
    1000491002: "e4m3", 1000491003: "e5m2",
}
SCOPES = {1: "Device", 2: "Workgroup", 3: "Subgroup", 5: "QueueFamily"}
DEVICE_TYPES = {0: "other", 1: "integrated GPU", 2: "discrete GPU", 3: "virtual GPU", 4: "CPU"}


def _s(name: str, fields: list[tuple[str, Any]]) -> Any:
    """A ctypes Structure class made at run time (Any: its fields are read as attributes)."""
    return type(name, (Structure,), {"_fields_": fields})


def chained(name: str, stype: int, bools: Sequence[str] = (), extra: Sequence[tuple[str, Any]] = (),
            pad: int = 16) -> Any:
    """A pNext-chainable struct: sType, pNext, named VkBool32s, extra fields, spare padding."""
    fields = [("sType", c_uint32), ("pNext", c_void_p)] + [(b, VkBool32) for b in bools] + list(extra)
    fields.append(("_spare", c_uint32 * pad))
    cls = _s(name, fields)
    cls.STYPE = stype
    cls.BOOLS = tuple(bools)
    return cls


ApplicationInfo = _s("VkApplicationInfo", [
    ("sType", c_uint32), ("pNext", c_void_p), ("pApplicationName", c_char_p), ("applicationVersion", c_uint32),
    ("pEngineName", c_char_p), ("engineVersion", c_uint32), ("apiVersion", c_uint32)])
InstanceCreateInfo = _s("VkInstanceCreateInfo", [
    ("sType", c_uint32), ("pNext", c_void_p), ("flags", c_uint32), ("pApplicationInfo", POINTER(ApplicationInfo)),
    ("enabledLayerCount", c_uint32), ("ppEnabledLayerNames", POINTER(c_char_p)),
    ("enabledExtensionCount", c_uint32), ("ppEnabledExtensionNames", POINTER(c_char_p))])

_u = c_uint32
PhysicalDeviceLimits = _s("VkPhysicalDeviceLimits", [
    *[(n, _u) for n in ("maxImageDimension1D", "maxImageDimension2D", "maxImageDimension3D",
                        "maxImageDimensionCube", "maxImageArrayLayers", "maxTexelBufferElements",
                        "maxUniformBufferRange", "maxStorageBufferRange", "maxPushConstantsSize",
                        "maxMemoryAllocationCount", "maxSamplerAllocationCount")],
    ("bufferImageGranularity", VkDeviceSize), ("sparseAddressSpaceSize", VkDeviceSize),
    *[(n, _u) for n in (
        "maxBoundDescriptorSets", "maxPerStageDescriptorSamplers", "maxPerStageDescriptorUniformBuffers",
        "maxPerStageDescriptorStorageBuffers", "maxPerStageDescriptorSampledImages",
        "maxPerStageDescriptorStorageImages", "maxPerStageDescriptorInputAttachments", "maxPerStageResources",
        "maxDescriptorSetSamplers", "maxDescriptorSetUniformBuffers", "maxDescriptorSetUniformBuffersDynamic",
        "maxDescriptorSetStorageBuffers", "maxDescriptorSetStorageBuffersDynamic", "maxDescriptorSetSampledImages",
        "maxDescriptorSetStorageImages", "maxDescriptorSetInputAttachments", "maxVertexInputAttributes",
        "maxVertexInputBindings", "maxVertexInputAttributeOffset", "maxVertexInputBindingStride",
        "maxVertexOutputComponents", "maxTessellationGenerationLevel", "maxTessellationPatchSize",
        "maxTessellationControlPerVertexInputComponents", "maxTessellationControlPerVertexOutputComponents",
        "maxTessellationControlPerPatchOutputComponents", "maxTessellationControlTotalOutputComponents",
        "maxTessellationEvaluationInputComponents", "maxTessellationEvaluationOutputComponents",
        "maxGeometryShaderInvocations", "maxGeometryInputComponents", "maxGeometryOutputComponents",
        "maxGeometryOutputVertices", "maxGeometryTotalOutputComponents", "maxFragmentInputComponents",
        "maxFragmentOutputAttachments", "maxFragmentDualSrcAttachments", "maxFragmentCombinedOutputResources",
        "maxComputeSharedMemorySize")],
    ("maxComputeWorkGroupCount", _u * 3), ("maxComputeWorkGroupInvocations", _u),
    ("maxComputeWorkGroupSize", _u * 3),
    *[(n, _u) for n in ("subPixelPrecisionBits", "subTexelPrecisionBits", "mipmapPrecisionBits",
                        "maxDrawIndexedIndexValue", "maxDrawIndirectCount")],
    ("maxSamplerLodBias", c_float), ("maxSamplerAnisotropy", c_float), ("maxViewports", _u),
    ("maxViewportDimensions", _u * 2), ("viewportBoundsRange", c_float * 2), ("viewportSubPixelBits", _u),
    ("minMemoryMapAlignment", c_size_t), ("minTexelBufferOffsetAlignment", VkDeviceSize),
    ("minUniformBufferOffsetAlignment", VkDeviceSize), ("minStorageBufferOffsetAlignment", VkDeviceSize),
    ("minTexelOffset", c_int32), ("maxTexelOffset", _u), ("minTexelGatherOffset", c_int32),
    ("maxTexelGatherOffset", _u), ("minInterpolationOffset", c_float), ("maxInterpolationOffset", c_float),
    *[(n, _u) for n in (
        "subPixelInterpolationOffsetBits", "maxFramebufferWidth", "maxFramebufferHeight", "maxFramebufferLayers",
        "framebufferColorSampleCounts", "framebufferDepthSampleCounts", "framebufferStencilSampleCounts",
        "framebufferNoAttachmentsSampleCounts", "maxColorAttachments", "sampledImageColorSampleCounts",
        "sampledImageIntegerSampleCounts", "sampledImageDepthSampleCounts", "sampledImageStencilSampleCounts",
        "storageImageSampleCounts", "maxSampleMaskWords", "timestampComputeAndGraphics")],
    ("timestampPeriod", c_float), ("maxClipDistances", _u), ("maxCullDistances", _u),
    ("maxCombinedClipAndCullDistances", _u), ("discreteQueuePriorities", _u), ("pointSizeRange", c_float * 2),
    ("lineWidthRange", c_float * 2), ("pointSizeGranularity", c_float), ("lineWidthGranularity", c_float),
    ("strictLines", VkBool32), ("standardSampleLocations", VkBool32),
    ("optimalBufferCopyOffsetAlignment", VkDeviceSize), ("optimalBufferCopyRowPitchAlignment", VkDeviceSize),
    ("nonCoherentAtomSize", VkDeviceSize)])
PhysicalDeviceProperties = _s("VkPhysicalDeviceProperties", [
    ("apiVersion", _u), ("driverVersion", _u), ("vendorID", _u), ("deviceID", _u), ("deviceType", _u),
    ("deviceName", c_char * 256), ("pipelineCacheUUID", c_uint8 * 16), ("limits", PhysicalDeviceLimits),
    ("sparseProperties", _u * 5)])
PhysicalDeviceProperties2 = _s("VkPhysicalDeviceProperties2", [
    ("sType", _u), ("pNext", c_void_p), ("properties", PhysicalDeviceProperties)])
DriverProperties = chained("VkPhysicalDeviceDriverProperties", ST_PHYSICAL_DEVICE_DRIVER_PROPERTIES, extra=[
    ("driverID", _u), ("driverName", c_char * 256), ("driverInfo", c_char * 256), ("conformanceVersion", c_uint8 * 4)])
SubgroupProperties = chained("VkPhysicalDeviceSubgroupProperties", ST_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, extra=[
    ("subgroupSize", _u), ("supportedStages", _u), ("supportedOperations", _u), ("quadOperationsInAllStages", _u)])
SubgroupSizeControlProperties = chained(
    "VkPhysicalDeviceSubgroupSizeControlProperties", ST_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES, extra=[
        ("minSubgroupSize", _u), ("maxSubgroupSize", _u), ("maxComputeWorkgroupSubgroups", _u),
        ("requiredSubgroupSizeStages", _u)])
CoopMat2PropertiesNV = chained(
    "VkPhysicalDeviceCooperativeMatrix2PropertiesNV", ST_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV, extra=[
        ("cooperativeMatrixWorkgroupScopeMaxWorkgroupSize", _u),
        ("cooperativeMatrixFlexibleDimensionsMaxDimension", _u),
        ("cooperativeMatrixWorkgroupScopeReservedSharedMemory", _u)])

FEATURES_1_0 = (
    "robustBufferAccess", "fullDrawIndexUint32", "imageCubeArray", "independentBlend", "geometryShader",
    "tessellationShader", "sampleRateShading", "dualSrcBlend", "logicOp", "multiDrawIndirect",
    "drawIndirectFirstInstance", "depthClamp", "depthBiasClamp", "fillModeNonSolid", "depthBounds", "wideLines",
    "largePoints", "alphaToOne", "multiViewport", "samplerAnisotropy", "textureCompressionETC2",
    "textureCompressionASTC_LDR", "textureCompressionBC", "occlusionQueryPrecise", "pipelineStatisticsQuery",
    "vertexPipelineStoresAndAtomics", "fragmentStoresAndAtomics", "shaderTessellationAndGeometryPointSize",
    "shaderImageGatherExtended", "shaderStorageImageExtendedFormats", "shaderStorageImageMultisample",
    "shaderStorageImageReadWithoutFormat", "shaderStorageImageWriteWithoutFormat",
    "shaderUniformBufferArrayDynamicIndexing", "shaderSampledImageArrayDynamicIndexing",
    "shaderStorageBufferArrayDynamicIndexing", "shaderStorageImageArrayDynamicIndexing", "shaderClipDistance",
    "shaderCullDistance", "shaderFloat64", "shaderInt64", "shaderInt16", "shaderResourceResidency",
    "shaderResourceMinLod", "sparseBinding", "sparseResidencyBuffer", "sparseResidencyImage2D",
    "sparseResidencyImage3D", "sparseResidency2Samples", "sparseResidency4Samples", "sparseResidency8Samples",
    "sparseResidency16Samples", "sparseResidencyAliased", "variableMultisampleRate", "inheritedQueries")
Features2 = chained("VkPhysicalDeviceFeatures2", ST_PHYSICAL_DEVICE_FEATURES_2, FEATURES_1_0)
Vulkan11Features = chained("VkPhysicalDeviceVulkan11Features", ST_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, (
    "storageBuffer16BitAccess", "uniformAndStorageBuffer16BitAccess", "storagePushConstant16",
    "storageInputOutput16", "multiview", "multiviewGeometryShader", "multiviewTessellationShader",
    "variablePointersStorageBuffer", "variablePointers", "protectedMemory", "samplerYcbcrConversion",
    "shaderDrawParameters"))
Vulkan12Features = chained("VkPhysicalDeviceVulkan12Features", ST_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, (
    "samplerMirrorClampToEdge", "drawIndirectCount", "storageBuffer8BitAccess", "uniformAndStorageBuffer8BitAccess",
    "storagePushConstant8", "shaderBufferInt64Atomics", "shaderSharedInt64Atomics", "shaderFloat16", "shaderInt8",
    "descriptorIndexing", "shaderInputAttachmentArrayDynamicIndexing",
    "shaderUniformTexelBufferArrayDynamicIndexing", "shaderStorageTexelBufferArrayDynamicIndexing",
    "shaderUniformBufferArrayNonUniformIndexing", "shaderSampledImageArrayNonUniformIndexing",
    "shaderStorageBufferArrayNonUniformIndexing", "shaderStorageImageArrayNonUniformIndexing",
    "shaderInputAttachmentArrayNonUniformIndexing", "shaderUniformTexelBufferArrayNonUniformIndexing",
    "shaderStorageTexelBufferArrayNonUniformIndexing", "descriptorBindingUniformBufferUpdateAfterBind",
    "descriptorBindingSampledImageUpdateAfterBind", "descriptorBindingStorageImageUpdateAfterBind",
    "descriptorBindingStorageBufferUpdateAfterBind", "descriptorBindingUniformTexelBufferUpdateAfterBind",
    "descriptorBindingStorageTexelBufferUpdateAfterBind", "descriptorBindingUpdateUnusedWhilePending",
    "descriptorBindingPartiallyBound", "descriptorBindingVariableDescriptorCount", "runtimeDescriptorArray",
    "samplerFilterMinmax", "scalarBlockLayout", "imagelessFramebuffer", "uniformBufferStandardLayout",
    "shaderSubgroupExtendedTypes", "separateDepthStencilLayouts", "hostQueryReset", "timelineSemaphore",
    "bufferDeviceAddress", "bufferDeviceAddressCaptureReplay", "bufferDeviceAddressMultiDevice",
    "vulkanMemoryModel", "vulkanMemoryModelDeviceScope", "vulkanMemoryModelAvailabilityVisibilityChains",
    "shaderOutputViewportIndex", "shaderOutputLayer", "subgroupBroadcastDynamicId"))
Vulkan13Features = chained("VkPhysicalDeviceVulkan13Features", ST_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, (
    "robustImageAccess", "inlineUniformBlock", "descriptorBindingInlineUniformBlockUpdateAfterBind",
    "pipelineCreationCacheControl", "privateData", "shaderDemoteToHelperInvocation", "shaderTerminateInvocation",
    "subgroupSizeControl", "computeFullSubgroups", "synchronization2", "textureCompressionASTC_HDR",
    "shaderZeroInitializeWorkgroupMemory", "dynamicRendering", "shaderIntegerDotProduct", "maintenance4"))
CoopMatFeaturesKHR = chained("VkPhysicalDeviceCooperativeMatrixFeaturesKHR",
                             ST_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR,
                             ("cooperativeMatrix", "cooperativeMatrixRobustBufferAccess"))
CoopMat2FeaturesNV = chained("VkPhysicalDeviceCooperativeMatrix2FeaturesNV",
                             ST_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV, (
                                 "cooperativeMatrixWorkgroupScope", "cooperativeMatrixFlexibleDimensions",
                                 "cooperativeMatrixReductions", "cooperativeMatrixConversions",
                                 "cooperativeMatrixPerElementOperations", "cooperativeMatrixTensorAddressing",
                                 "cooperativeMatrixBlockLoads"))
CoopMatConversionFeaturesQCOM = chained("VkPhysicalDeviceCooperativeMatrixConversionFeaturesQCOM",
                                        ST_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_CONVERSION_FEATURES_QCOM,
                                        ("cooperativeMatrixConversion",))
Bfloat16FeaturesKHR = chained("VkPhysicalDeviceShaderBfloat16FeaturesKHR",
                              ST_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR,
                              ("shaderBFloat16Type", "shaderBFloat16DotProduct", "shaderBFloat16CooperativeMatrix"))

PipelineExecutableFeaturesKHR = chained("VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR",
                                       ST_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
                                       ("pipelineExecutableInfo",))
PipelineInfoKHR = _s("VkPipelineInfoKHR", [("sType", _u), ("pNext", c_void_p), ("pipeline", VkNonDispatchable)])
PipelineExecutablePropertiesKHR = _s("VkPipelineExecutablePropertiesKHR", [
    ("sType", _u), ("pNext", c_void_p), ("stages", _u), ("name", c_char * 256), ("description", c_char * 256),
    ("subgroupSize", _u)])
PipelineExecutableInfoKHR = _s("VkPipelineExecutableInfoKHR", [
    ("sType", _u), ("pNext", c_void_p), ("pipeline", VkNonDispatchable), ("executableIndex", _u)])
StatisticValueKHR = type("VkPipelineExecutableStatisticValueKHR", (ctypes.Union,), {"_fields_": [
    ("b32", VkBool32), ("i64", ctypes.c_int64), ("u64", c_uint64), ("f64", ctypes.c_double)]})
PipelineExecutableStatisticKHR = _s("VkPipelineExecutableStatisticKHR", [
    ("sType", _u), ("pNext", c_void_p), ("name", c_char * 256), ("description", c_char * 256), ("format", _u),
    ("value", StatisticValueKHR)])
STATISTIC_FORMATS = {0: "b32", 1: "i64", 2: "u64", 3: "f64"}  # VkPipelineExecutableStatisticFormatKHR

Float8FeaturesEXT = chained("VkPhysicalDeviceShaderFloat8FeaturesEXT", ST_PHYSICAL_DEVICE_SHADER_FLOAT8_FEATURES_EXT,
                            ("shaderFloat8", "shaderFloat8CooperativeMatrix"))
AtomicFloatFeaturesEXT = chained("VkPhysicalDeviceShaderAtomicFloatFeaturesEXT",
                                 ST_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT, (
                                     "shaderBufferFloat32Atomics", "shaderBufferFloat32AtomicAdd",
                                     "shaderBufferFloat64Atomics", "shaderBufferFloat64AtomicAdd",
                                     "shaderSharedFloat32Atomics", "shaderSharedFloat32AtomicAdd",
                                     "shaderSharedFloat64Atomics", "shaderSharedFloat64AtomicAdd",
                                     "shaderImageFloat32Atomics", "shaderImageFloat32AtomicAdd",
                                     "sparseImageFloat32Atomics", "sparseImageFloat32AtomicAdd"))

CoopMatPropertiesKHR = _s("VkCooperativeMatrixPropertiesKHR", [
    ("sType", _u), ("pNext", c_void_p), ("MSize", _u), ("NSize", _u), ("KSize", _u), ("AType", _u),
    ("BType", _u), ("CType", _u), ("ResultType", _u), ("saturatingAccumulation", VkBool32), ("scope", _u)])
FlexDimPropertiesNV = _s("VkCooperativeMatrixFlexibleDimensionsPropertiesNV", [
    ("sType", _u), ("pNext", c_void_p), ("MGranularity", _u), ("NGranularity", _u), ("KGranularity", _u),
    ("AType", _u), ("BType", _u), ("CType", _u), ("ResultType", _u), ("saturatingAccumulation", VkBool32),
    ("scope", _u), ("workgroupInvocations", _u)])
QueueFamilyProperties = _s("VkQueueFamilyProperties", [
    ("queueFlags", _u), ("queueCount", _u), ("timestampValidBits", _u), ("minImageTransferGranularity", _u * 3)])
ExtensionProperties = _s("VkExtensionProperties", [("extensionName", c_char * 256), ("specVersion", _u)])
MemoryType = _s("VkMemoryType", [("propertyFlags", _u), ("heapIndex", _u)])
MemoryHeap = _s("VkMemoryHeap", [("size", VkDeviceSize), ("flags", _u)])
PhysicalDeviceMemoryProperties = _s("VkPhysicalDeviceMemoryProperties", [
    ("memoryTypeCount", _u), ("memoryTypes", MemoryType * 32), ("memoryHeapCount", _u),
    ("memoryHeaps", MemoryHeap * 16)])
DeviceQueueCreateInfo = _s("VkDeviceQueueCreateInfo", [
    ("sType", _u), ("pNext", c_void_p), ("flags", _u), ("queueFamilyIndex", _u), ("queueCount", _u),
    ("pQueuePriorities", POINTER(c_float))])
DeviceCreateInfo = _s("VkDeviceCreateInfo", [
    ("sType", _u), ("pNext", c_void_p), ("flags", _u), ("queueCreateInfoCount", _u),
    ("pQueueCreateInfos", POINTER(DeviceQueueCreateInfo)), ("enabledLayerCount", _u),
    ("ppEnabledLayerNames", POINTER(c_char_p)), ("enabledExtensionCount", _u),
    ("ppEnabledExtensionNames", POINTER(c_char_p)), ("pEnabledFeatures", c_void_p)])
BufferCreateInfo = _s("VkBufferCreateInfo", [
    ("sType", _u), ("pNext", c_void_p), ("flags", _u), ("size", VkDeviceSize), ("usage", _u),
    ("sharingMode", _u), ("queueFamilyIndexCount", _u), ("pQueueFamilyIndices", POINTER(_u))])
MemoryRequirements = _s("VkMemoryRequirements", [
    ("size", VkDeviceSize), ("alignment", VkDeviceSize), ("memoryTypeBits", _u)])
MemoryAllocateInfo = _s("VkMemoryAllocateInfo", [
    ("sType", _u), ("pNext", c_void_p), ("allocationSize", VkDeviceSize), ("memoryTypeIndex", _u)])
MemoryAllocateFlagsInfo = _s("VkMemoryAllocateFlagsInfo", [
    ("sType", _u), ("pNext", c_void_p), ("flags", _u), ("deviceMask", _u)])
BufferDeviceAddressInfo = _s("VkBufferDeviceAddressInfo", [
    ("sType", _u), ("pNext", c_void_p), ("buffer", VkNonDispatchable)])
DescriptorSetLayoutBinding = _s("VkDescriptorSetLayoutBinding", [
    ("binding", _u), ("descriptorType", _u), ("descriptorCount", _u), ("stageFlags", _u),
    ("pImmutableSamplers", c_void_p)])
DescriptorSetLayoutCreateInfo = _s("VkDescriptorSetLayoutCreateInfo", [
    ("sType", _u), ("pNext", c_void_p), ("flags", _u), ("bindingCount", _u),
    ("pBindings", POINTER(DescriptorSetLayoutBinding))])
PushConstantRange = _s("VkPushConstantRange", [("stageFlags", _u), ("offset", _u), ("size", _u)])
PipelineLayoutCreateInfo = _s("VkPipelineLayoutCreateInfo", [
    ("sType", _u), ("pNext", c_void_p), ("flags", _u), ("setLayoutCount", _u),
    ("pSetLayouts", POINTER(VkNonDispatchable)), ("pushConstantRangeCount", _u),
    ("pPushConstantRanges", POINTER(PushConstantRange))])
ShaderModuleCreateInfo = _s("VkShaderModuleCreateInfo", [
    ("sType", _u), ("pNext", c_void_p), ("flags", _u), ("codeSize", c_size_t), ("pCode", c_void_p)])
SpecializationMapEntry = _s("VkSpecializationMapEntry", [("constantID", _u), ("offset", _u), ("size", c_size_t)])
SpecializationInfo = _s("VkSpecializationInfo", [
    ("mapEntryCount", _u), ("pMapEntries", POINTER(SpecializationMapEntry)), ("dataSize", c_size_t),
    ("pData", c_void_p)])
PipelineShaderStageCreateInfo = _s("VkPipelineShaderStageCreateInfo", [
    ("sType", _u), ("pNext", c_void_p), ("flags", _u), ("stage", _u), ("module", VkNonDispatchable),
    ("pName", c_char_p), ("pSpecializationInfo", POINTER(SpecializationInfo))])
RequiredSubgroupSizeCreateInfo = _s("VkPipelineShaderStageRequiredSubgroupSizeCreateInfo", [
    ("sType", _u), ("pNext", c_void_p), ("requiredSubgroupSize", _u)])
ComputePipelineCreateInfo = _s("VkComputePipelineCreateInfo", [
    ("sType", _u), ("pNext", c_void_p), ("flags", _u), ("stage", PipelineShaderStageCreateInfo),
    ("layout", VkNonDispatchable), ("basePipelineHandle", VkNonDispatchable), ("basePipelineIndex", c_int32)])
DescriptorPoolSize = _s("VkDescriptorPoolSize", [("type", _u), ("descriptorCount", _u)])
DescriptorPoolCreateInfo = _s("VkDescriptorPoolCreateInfo", [
    ("sType", _u), ("pNext", c_void_p), ("flags", _u), ("maxSets", _u), ("poolSizeCount", _u),
    ("pPoolSizes", POINTER(DescriptorPoolSize))])
DescriptorSetAllocateInfo = _s("VkDescriptorSetAllocateInfo", [
    ("sType", _u), ("pNext", c_void_p), ("descriptorPool", VkNonDispatchable), ("descriptorSetCount", _u),
    ("pSetLayouts", POINTER(VkNonDispatchable))])
DescriptorBufferInfo = _s("VkDescriptorBufferInfo", [
    ("buffer", VkNonDispatchable), ("offset", VkDeviceSize), ("range", VkDeviceSize)])
WriteDescriptorSet = _s("VkWriteDescriptorSet", [
    ("sType", _u), ("pNext", c_void_p), ("dstSet", VkNonDispatchable), ("dstBinding", _u),
    ("dstArrayElement", _u), ("descriptorCount", _u), ("descriptorType", _u), ("pImageInfo", c_void_p),
    ("pBufferInfo", POINTER(DescriptorBufferInfo)), ("pTexelBufferView", c_void_p)])
CommandPoolCreateInfo = _s("VkCommandPoolCreateInfo", [
    ("sType", _u), ("pNext", c_void_p), ("flags", _u), ("queueFamilyIndex", _u)])
CommandBufferAllocateInfo = _s("VkCommandBufferAllocateInfo", [
    ("sType", _u), ("pNext", c_void_p), ("commandPool", VkNonDispatchable), ("level", _u),
    ("commandBufferCount", _u)])
CommandBufferBeginInfo = _s("VkCommandBufferBeginInfo", [
    ("sType", _u), ("pNext", c_void_p), ("flags", _u), ("pInheritanceInfo", c_void_p)])
SubmitInfo = _s("VkSubmitInfo", [
    ("sType", _u), ("pNext", c_void_p), ("waitSemaphoreCount", _u), ("pWaitSemaphores", c_void_p),
    ("pWaitDstStageMask", c_void_p), ("commandBufferCount", _u), ("pCommandBuffers", POINTER(VkHandle)),
    ("signalSemaphoreCount", _u), ("pSignalSemaphores", c_void_p)])
FenceCreateInfo = _s("VkFenceCreateInfo", [("sType", _u), ("pNext", c_void_p), ("flags", _u)])
QueryPoolCreateInfo = _s("VkQueryPoolCreateInfo", [
    ("sType", _u), ("pNext", c_void_p), ("flags", _u), ("queryType", _u), ("queryCount", _u),
    ("pipelineStatistics", _u)])
MemoryBarrier = _s("VkMemoryBarrier", [("sType", _u), ("pNext", c_void_p), ("srcAccessMask", _u),
                                       ("dstAccessMask", _u)])
BufferCopy = _s("VkBufferCopy", [("srcOffset", VkDeviceSize), ("dstOffset", VkDeviceSize), ("size", VkDeviceSize)])

_P = POINTER
_H, _N = VkHandle, VkNonDispatchable
# name -> (argument types); every function returns VkResult (int) unless listed in VOID
PROTOTYPES = {
    "vkCreateInstance": (_P(InstanceCreateInfo), c_void_p, _P(_H)),
    "vkDestroyInstance": (_H, c_void_p),
    "vkEnumeratePhysicalDevices": (_H, _P(_u), _P(_H)),
    "vkGetPhysicalDeviceProperties2": (_H, c_void_p),
    "vkGetPhysicalDeviceFeatures2": (_H, c_void_p),
    "vkGetPhysicalDeviceQueueFamilyProperties": (_H, _P(_u), _P(QueueFamilyProperties)),
    "vkGetPhysicalDeviceMemoryProperties": (_H, _P(PhysicalDeviceMemoryProperties)),
    "vkEnumerateDeviceExtensionProperties": (_H, c_char_p, _P(_u), _P(ExtensionProperties)),
    "vkCreateDevice": (_H, _P(DeviceCreateInfo), c_void_p, _P(_H)),
    "vkDestroyDevice": (_H, c_void_p),
    "vkGetDeviceQueue": (_H, _u, _u, _P(_H)),
    "vkCreateBuffer": (_H, _P(BufferCreateInfo), c_void_p, _P(_N)),
    "vkDestroyBuffer": (_H, _N, c_void_p),
    "vkGetBufferMemoryRequirements": (_H, _N, _P(MemoryRequirements)),
    "vkAllocateMemory": (_H, _P(MemoryAllocateInfo), c_void_p, _P(_N)),
    "vkFreeMemory": (_H, _N, c_void_p),
    "vkBindBufferMemory": (_H, _N, _N, VkDeviceSize),
    "vkMapMemory": (_H, _N, VkDeviceSize, VkDeviceSize, _u, _P(c_void_p)),
    "vkUnmapMemory": (_H, _N),
    "vkGetBufferDeviceAddress": (_H, _P(BufferDeviceAddressInfo)),
    "vkCreateDescriptorSetLayout": (_H, _P(DescriptorSetLayoutCreateInfo), c_void_p, _P(_N)),
    "vkDestroyDescriptorSetLayout": (_H, _N, c_void_p),
    "vkCreatePipelineLayout": (_H, _P(PipelineLayoutCreateInfo), c_void_p, _P(_N)),
    "vkDestroyPipelineLayout": (_H, _N, c_void_p),
    "vkCreateShaderModule": (_H, _P(ShaderModuleCreateInfo), c_void_p, _P(_N)),
    "vkDestroyShaderModule": (_H, _N, c_void_p),
    "vkCreateComputePipelines": (_H, _N, _u, _P(ComputePipelineCreateInfo), c_void_p, _P(_N)),
    "vkDestroyPipeline": (_H, _N, c_void_p),
    "vkCreateDescriptorPool": (_H, _P(DescriptorPoolCreateInfo), c_void_p, _P(_N)),
    "vkDestroyDescriptorPool": (_H, _N, c_void_p),
    "vkAllocateDescriptorSets": (_H, _P(DescriptorSetAllocateInfo), _P(_N)),
    "vkUpdateDescriptorSets": (_H, _u, _P(WriteDescriptorSet), _u, c_void_p),
    "vkFreeDescriptorSets": (_H, _N, _u, _P(_N)),
    "vkCreateCommandPool": (_H, _P(CommandPoolCreateInfo), c_void_p, _P(_N)),
    "vkDestroyCommandPool": (_H, _N, c_void_p),
    "vkAllocateCommandBuffers": (_H, _P(CommandBufferAllocateInfo), _P(_H)),
    "vkFreeCommandBuffers": (_H, _N, _u, _P(_H)),
    "vkBeginCommandBuffer": (_H, _P(CommandBufferBeginInfo)),
    "vkEndCommandBuffer": (_H,),
    "vkResetCommandBuffer": (_H, _u),
    "vkCmdBindPipeline": (_H, _u, _N),
    "vkCmdBindDescriptorSets": (_H, _u, _N, _u, _u, _P(_N), _u, c_void_p),
    "vkCmdPushConstants": (_H, _N, _u, _u, _u, c_void_p),
    "vkCmdDispatch": (_H, _u, _u, _u),
    "vkCmdCopyBuffer": (_H, _N, _N, _u, _P(BufferCopy)),
    "vkCmdFillBuffer": (_H, _N, VkDeviceSize, VkDeviceSize, _u),
    "vkCmdPipelineBarrier": (_H, _u, _u, _u, _u, _P(MemoryBarrier), _u, c_void_p, _u, c_void_p),
    "vkCmdWriteTimestamp": (_H, _u, _N, _u),
    "vkCmdResetQueryPool": (_H, _N, _u, _u),
    "vkQueueSubmit": (_H, _u, _P(SubmitInfo), _N),
    "vkQueueWaitIdle": (_H,),
    "vkCreateFence": (_H, _P(FenceCreateInfo), c_void_p, _P(_N)),
    "vkDestroyFence": (_H, _N, c_void_p),
    "vkWaitForFences": (_H, _u, _P(_N), _u, c_uint64),
    "vkGetFenceStatus": (_H, _N),
    "vkResetFences": (_H, _u, _P(_N)),
    "vkCreateQueryPool": (_H, _P(QueryPoolCreateInfo), c_void_p, _P(_N)),
    "vkDestroyQueryPool": (_H, _N, c_void_p),
    "vkGetQueryPoolResults": (_H, _N, _u, _u, c_size_t, c_void_p, VkDeviceSize, _u),
    "vkDeviceWaitIdle": (_H,),
}
VOID = {"vkDestroyInstance", "vkGetPhysicalDeviceProperties2", "vkGetPhysicalDeviceFeatures2",
        "vkGetPhysicalDeviceQueueFamilyProperties", "vkGetPhysicalDeviceMemoryProperties", "vkDestroyDevice",
        "vkGetDeviceQueue", "vkDestroyBuffer", "vkGetBufferMemoryRequirements", "vkFreeMemory", "vkUnmapMemory",
        "vkDestroyDescriptorSetLayout", "vkDestroyPipelineLayout", "vkDestroyShaderModule", "vkDestroyPipeline",
        "vkDestroyDescriptorPool", "vkUpdateDescriptorSets", "vkDestroyCommandPool", "vkFreeCommandBuffers",
        "vkCmdBindPipeline", "vkCmdBindDescriptorSets", "vkCmdPushConstants", "vkCmdDispatch", "vkCmdCopyBuffer",
        "vkCmdFillBuffer", "vkCmdPipelineBarrier", "vkCmdWriteTimestamp", "vkCmdResetQueryPool", "vkDestroyFence",
        "vkDestroyQueryPool"}
RETURNS_U64 = {"vkGetBufferDeviceAddress"}
# void commands also loaded without argtypes (``Loader.raw``): a batch records one barrier and one dispatch per
# launch, and an untyped call with arguments wrapped once costs about half of a typed one
UNTYPED = ("vkCmdPipelineBarrier", "vkCmdDispatch")
INSTANCE_EXTENSION_FUNCTIONS = {
    "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR": (_H, _P(_u), _P(CoopMatPropertiesKHR)),
    "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV": (_H, _P(_u), _P(FlexDimPropertiesNV)),
}


class Loader:
    """libvulkan.so.1 with typed entry points; ``call`` checks VkResult."""

    def __init__(self, path: str | None = None):
        try:
            self.lib = ctypes.CDLL(path or "libvulkan.so.1")
        except OSError:
            found = None if path else ctypes.util.find_library("vulkan")
            if not found:
                raise VulkanUnavailableError(no_vulkan_message(
                    f"the Vulkan loader {path or 'libvulkan.so.1'} was not found")) from None
            self.lib = ctypes.CDLL(found)
        self.fns = {}
        for fname, argtypes in PROTOTYPES.items():
            fn = getattr(self.lib, fname)
            fn.argtypes = list(argtypes)
            fn.restype = None if fname in VOID else (c_uint64 if fname in RETURNS_U64 else c_int32)
            self.fns[fname] = fn
            setattr(self, fname, fn)  # plain attribute lookup on the hot path
        self.raw: dict[str, Any] = {}  # callers pass handles as c_void_p and 32-bit values as ints below 2**31
        for fname in UNTYPED:
            fn = self.lib[fname]  # a separate function object: the typed one keeps its argtypes
            fn.restype = None
            self.raw[fname] = fn
        self.lib.vkGetInstanceProcAddr.argtypes = [VkHandle, c_char_p]
        self.lib.vkGetInstanceProcAddr.restype = c_void_p
        self.lib.vkGetDeviceProcAddr.argtypes = [VkHandle, c_char_p]
        self.lib.vkGetDeviceProcAddr.restype = c_void_p

    def __getattr__(self, fname: str) -> Any:
        fns = self.__dict__.get("fns", {})
        if fname in fns:
            return fns[fname]
        raise AttributeError(fname)

    def call(self, fname: str, *args: Any) -> int:
        r: int = self.fns[fname](*args)
        if r not in (0, 5):  # VK_SUCCESS, VK_INCOMPLETE
            raise VulkanError(fname, r)
        return r

    def instance_function(self, instance: Any, fname: str) -> Any:
        """An instance-level extension entry point, or None when the loader lacks it."""
        addr = self.lib.vkGetInstanceProcAddr(instance, fname.encode())
        if not addr:
            return None
        proto = ctypes.CFUNCTYPE(c_int32, *INSTANCE_EXTENSION_FUNCTIONS[fname])
        return proto(addr)


DEVICE_EXTENSION_FUNCTIONS = {
    "vkGetPipelineExecutablePropertiesKHR": (_H, _P(PipelineInfoKHR), _P(_u), c_void_p),
    "vkGetPipelineExecutableStatisticsKHR": (_H, _P(PipelineExecutableInfoKHR), _P(_u), c_void_p),
}


def device_function(loader: Loader, device: Any, fname: str) -> Any:
    """A device-level extension entry point (returning VkResult), or None when the device lacks it."""
    addr = loader.lib.vkGetDeviceProcAddr(device, fname.encode())
    if not addr:
        return None
    return ctypes.CFUNCTYPE(c_int32, *DEVICE_EXTENSION_FUNCTIONS[fname])(addr)


def chain(*structs: ctypes.Structure) -> c_void_p | None:
    """Link ``structs`` through pNext in order; returns a pointer to the first (None for no structs)."""
    for a, b in zip(structs, structs[1:]):
        a.pNext = ctypes.cast(ctypes.pointer(b), c_void_p)
    if structs:
        structs[-1].pNext = None
    return ctypes.cast(ctypes.pointer(structs[0]), c_void_p) if structs else None


def make(cls: Any, **fields: Any) -> Any:
    """An instance of chainable ``cls`` with its sType set."""
    obj = cls()
    obj.sType = cls.STYPE
    for k, v in fields.items():
        setattr(obj, k, v)
    return obj
