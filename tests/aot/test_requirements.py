"""Device extensions, features and subgroup operations derived from a module's capabilities."""

from coopdsl.aot import requirements


def test_gemm_needs_cooperative_matrices_and_16_bit_storage():
    need = requirements({"capabilities": ["Shader", "Float16", "StorageBuffer16BitAccess", "VulkanMemoryModel",
                                          "CooperativeMatrixKHR"], "extensions": ["SPV_KHR_cooperative_matrix"]})
    assert need.extensions == ("VK_KHR_cooperative_matrix",)
    assert need.features == ("cooperativeMatrix", "shaderFloat16", "storageBuffer16BitAccess", "vulkanMemoryModel")
    assert need.subgroup_operations == 0 and need.unmapped_capabilities == ()


def test_subgroup_bits_spirv_extensions_and_unmapped_capabilities():
    need = requirements({"capabilities": ["Shader", "GroupNonUniformArithmetic", "GroupNonUniformBallot",
                                          "SomeFutureCapability"],
                         "extensions": ["SPV_NV_cooperative_matrix2"]})
    assert need.subgroup_operations == 0x4 | 0x8
    assert need.extensions == ("VK_NV_cooperative_matrix2",)
    assert need.features == ()
    assert need.unmapped_capabilities == ("SomeFutureCapability",)
