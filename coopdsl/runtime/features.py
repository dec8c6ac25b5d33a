"""Which device extension and feature each SPIR-V capability of a module needs.

The runtime reads the module's OpCapability list and enables exactly the
Vulkan features behind them; a capability the device lacks is reported by
name (with the Vulkan feature it maps to) before anything is dispatched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..devices.check import Mismatch
    from ..errors import SourceLoc


class DeviceFeatureError(RuntimeError):
    """The device cannot run the module: a feature or extension it needs is missing.

    When the launch-time check finds cooperative-matrix configurations the device
    does not offer, ``mismatches`` lists them and ``loc`` is the kernel line of
    the first; otherwise ``mismatches`` is empty and ``loc`` is None.
    """

    def __init__(self, message: str, mismatches: Sequence[Mismatch] = (), loc: SourceLoc | None = None):
        super().__init__(message)
        self.mismatches = list(mismatches)
        self.loc = loc


@dataclass(frozen=True)
class Need:
    extension: str | None = None     # device extension to enable
    feature: str | None = None       # feature boolean (name as in the Vulkan feature structs)
    subgroup_op: int = 0             # VkSubgroupFeatureFlagBits needed


ALWAYS = {"Shader", "Matrix"}
# ends the (first line of the) message of a module a device cannot run: where else it runs
INTERPRETER_HINT = "; the CPU interpreter runs it: device=\"cpu\" (or COOPDSL_DEVICE=cpu in the environment)"


def hinted(message: str) -> str:
    """``message`` with :data:`INTERPRETER_HINT` at the end of its first line (before a kernel line it
    quotes)."""
    first, sep, rest = message.partition("\n")
    return first + INTERPRETER_HINT + sep + rest
SUBGROUP = {"GroupNonUniform": 0x1, "GroupNonUniformVote": 0x2, "GroupNonUniformArithmetic": 0x4,
            "GroupNonUniformBallot": 0x8, "GroupNonUniformShuffle": 0x10, "GroupNonUniformShuffleRelative": 0x20,
            "GroupNonUniformClustered": 0x40, "GroupNonUniformQuad": 0x80}
CAPABILITIES: dict[str, Need] = {
    "Float16": Need(feature="shaderFloat16"),
    "Float64": Need(feature="shaderFloat64"),
    "Int8": Need(feature="shaderInt8"),
    "Int16": Need(feature="shaderInt16"),
    "Int64": Need(feature="shaderInt64"),
    "StorageBuffer16BitAccess": Need(feature="storageBuffer16BitAccess"),
    "UniformAndStorageBuffer16BitAccess": Need(feature="uniformAndStorageBuffer16BitAccess"),
    "StoragePushConstant16": Need(feature="storagePushConstant16"),
    "StorageBuffer8BitAccess": Need(feature="storageBuffer8BitAccess"),
    "UniformAndStorageBuffer8BitAccess": Need(feature="uniformAndStorageBuffer8BitAccess"),
    "StoragePushConstant8": Need(feature="storagePushConstant8"),
    "VulkanMemoryModel": Need(feature="vulkanMemoryModel"),
    "VulkanMemoryModelDeviceScope": Need(feature="vulkanMemoryModelDeviceScope"),
    "PhysicalStorageBufferAddresses": Need(feature="bufferDeviceAddress"),
    "Int64Atomics": Need(feature="shaderBufferInt64Atomics"),
    "DotProduct": Need(feature="shaderIntegerDotProduct"),
    "DotProductInput4x8Bit": Need(feature="shaderIntegerDotProduct"),
    "DotProductInput4x8BitPacked": Need(feature="shaderIntegerDotProduct"),
    "AtomicFloat32AddEXT": Need("VK_EXT_shader_atomic_float", "shaderBufferFloat32AtomicAdd"),
    "AtomicFloat64AddEXT": Need("VK_EXT_shader_atomic_float", "shaderBufferFloat64AtomicAdd"),
    "CooperativeMatrixKHR": Need("VK_KHR_cooperative_matrix", "cooperativeMatrix"),
    "CooperativeMatrixConversionQCOM": Need("VK_QCOM_cooperative_matrix_conversion", "cooperativeMatrixConversion"),
    "BFloat16TypeKHR": Need("VK_KHR_shader_bfloat16", "shaderBFloat16Type"),
    "BFloat16CooperativeMatrixKHR": Need("VK_KHR_shader_bfloat16", "shaderBFloat16CooperativeMatrix"),
    "Float8EXT": Need("VK_EXT_shader_float8", "shaderFloat8"),
    "Float8CooperativeMatrixEXT": Need("VK_EXT_shader_float8", "shaderFloat8CooperativeMatrix"),
    "CooperativeMatrixReductionsNV": Need("VK_NV_cooperative_matrix2", "cooperativeMatrixReductions"),
    "CooperativeMatrixConversionsNV": Need("VK_NV_cooperative_matrix2", "cooperativeMatrixConversions"),
    "CooperativeMatrixPerElementOperationsNV": Need("VK_NV_cooperative_matrix2",
                                                    "cooperativeMatrixPerElementOperations"),
    "TensorAddressingNV": Need("VK_NV_cooperative_matrix2", "cooperativeMatrixTensorAddressing"),
    "CooperativeMatrixTensorAddressingNV": Need("VK_NV_cooperative_matrix2", "cooperativeMatrixTensorAddressing"),
    "CooperativeMatrixBlockLoadsNV": Need("VK_NV_cooperative_matrix2", "cooperativeMatrixBlockLoads"),
    **{cap: Need(subgroup_op=bit) for cap, bit in SUBGROUP.items()},
}
# Workgroup-scope matrices need VK_NV_cooperative_matrix2's feature, yet no capability says so (spirv-val accepts
# them with no NV2 capability or extension): the reflection's matrix list does.
WORKGROUP_SCOPE = Need("VK_NV_cooperative_matrix2", "cooperativeMatrixWorkgroupScope")
EXTENSION_FOR_SPIRV = {  # SPIR-V extension -> device extension (when not implied by a capability above)
    "SPV_NV_cooperative_matrix2": "VK_NV_cooperative_matrix2",
    "SPV_NV_tensor_addressing": "VK_NV_cooperative_matrix2",
    "SPV_EXT_float8": "VK_EXT_shader_float8",
}


def matrix_needs(matrices: Sequence[dict[str, Any]]) -> list[Need]:
    """What a module's cooperative-matrix types (reflection ``cooperative_matrices``) need beyond its capabilities."""
    return [WORKGROUP_SCOPE] if any(m.get("scope") == "Workgroup" for m in matrices) else []


# blocks in the scalar layout (reflection ``scalar_block_layout``): no capability says so either
SCALAR_BLOCK_LAYOUT = Need(feature="scalarBlockLayout")


def extra_needs(matrices: Sequence[dict[str, Any]] = (), scalar_block_layout: bool = False) -> list[Need]:
    """What a module needs that its capabilities do not say: workgroup-scope matrices, scalar-layout blocks."""
    return matrix_needs(matrices) + ([SCALAR_BLOCK_LAYOUT] if scalar_block_layout else [])


def requirements(capabilities: list[str], spirv_extensions: Sequence[str] = (),
                 matrices: Sequence[dict[str, Any]] = (),
                 scalar_block_layout: bool = False) -> tuple[set[str], set[str], int]:
    """(device extensions, feature names, subgroup operation bits) a module needs.

    ``matrices`` is the reflection's ``cooperative_matrices`` (workgroup scope
    needs a feature no capability names).  Raises DeviceFeatureError for a
    capability coopdsl's runtime does not know how to enable.
    """
    exts: set[str] = set()
    feats: set[str] = set()
    ops = 0
    for extra in extra_needs(matrices, scalar_block_layout):
        if extra.extension:
            exts.add(extra.extension)
        if extra.feature:
            feats.add(extra.feature)
    for cap in capabilities:
        if cap in ALWAYS:
            continue
        need = CAPABILITIES.get(cap)
        if need is None:
            raise DeviceFeatureError(f"the module needs SPIR-V capability {cap}, which the coopdsl runtime "
                                     f"does not know how to enable")
        if need.extension:
            exts.add(need.extension)
        if need.feature:
            feats.add(need.feature)
        ops |= need.subgroup_op
    for e in spirv_extensions:
        if e in EXTENSION_FOR_SPIRV:
            exts.add(EXTENSION_FOR_SPIRV[e])
    return exts, feats, ops


def check_supported(device_name: str, extensions: list[str], features: dict[str, bool], subgroup_ops: int,
                    capabilities: list[str], spirv_extensions: Sequence[str] = (),
                    matrices: Sequence[dict[str, Any]] = (), scalar_block_layout: bool = False) -> None:
    """Raise DeviceFeatureError naming everything the device lacks for these capabilities (and matrices, and
    blocks in the scalar layout)."""
    exts, feats, ops = requirements(capabilities, spirv_extensions, matrices, scalar_block_layout)
    missing = [f"extension {e}" for e in sorted(exts) if e not in extensions]
    missing += [f"feature {f}" for f in sorted(feats) if not features.get(f)]
    if ops & ~subgroup_ops:
        missing.append(f"subgroup operations 0x{ops & ~subgroup_ops:x}")
    if missing:
        caps = ", ".join(c for c in capabilities if c not in ALWAYS)
        raise DeviceFeatureError(f"{device_name} cannot run this module (capabilities: {caps}); missing: "
                                 + ", ".join(missing) + INTERPRETER_HINT)
