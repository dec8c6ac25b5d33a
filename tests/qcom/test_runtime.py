"""A device without VK_QCOM_cooperative_matrix_conversion is told so, by name, before anything is dispatched."""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import Acc, f32
from coopdsl.runtime import vk
from coopdsl.runtime.features import DeviceFeatureError, check_supported, requirements
from coopdsl.runtime.instance import EXTENSION_FEATURES

CAPS = ["Shader", "VulkanMemoryModel", "CooperativeMatrixKHR", "CooperativeMatrixConversionQCOM"]


def test_the_capability_maps_to_the_extension_and_its_feature():
    exts, feats, _ = requirements(CAPS, ["SPV_KHR_cooperative_matrix", "SPV_QCOM_cooperative_matrix_conversion"])
    assert exts == {"VK_KHR_cooperative_matrix", "VK_QCOM_cooperative_matrix_conversion"}
    assert feats == {"vulkanMemoryModel", "cooperativeMatrix", "cooperativeMatrixConversion"}


def test_a_device_with_cooperative_matrices_but_not_the_conversions_is_named():
    with pytest.raises(DeviceFeatureError, match="missing: extension VK_QCOM_cooperative_matrix_conversion, "
                                                 "feature cooperativeMatrixConversion; the CPU interpreter"):
        check_supported("NVIDIA H100", ["VK_KHR_cooperative_matrix"],
                        {"vulkanMemoryModel": True, "cooperativeMatrix": True}, 0xFF, CAPS)


def test_a_device_with_the_extension_gets_its_feature_struct_chained():
    cls = EXTENSION_FEATURES["VK_QCOM_cooperative_matrix_conversion"]
    s = vk.make(cls)
    assert s.sType == 1000172000  # VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_CONVERSION_FEATURES_QCOM
    assert cls.BOOLS == ("cooperativeMatrixConversion",)
    assert cls.cooperativeMatrixConversion.offset == 16  # after sType and pNext, as in vulkan_core.h


@cd.kernel(workgroup_size=(32, 1, 1))
def ones_by_rows(out: cd.Buffer[f32]):
    Acc[f32, 32, 32].from_rows(cd.array(f32, 32, 1.0)).store(out, 0, stride=32)


@pytest.mark.vulkan
def test_launch_on_a_device_without_the_extension_names_it(device):
    if "VK_QCOM_cooperative_matrix_conversion" in device.info.extensions:
        pytest.skip("this device has the extension")
    with pytest.raises(DeviceFeatureError, match="extension VK_QCOM_cooperative_matrix_conversion.*"
                                                 "feature cooperativeMatrixConversion"):
        ones_by_rows.launch((1,), np.zeros(32 * 32, np.float32), device=device)
