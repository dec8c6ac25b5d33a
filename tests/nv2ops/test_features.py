"""A kernel using NV2 matrix ops asks the runtime for the matching VK_NV_cooperative_matrix2 features."""

from coopdsl.runtime.features import requirements

from .test_convert import use_changes
from .test_map import per_element
from .test_reduce import workgroup_scope


def test_nv2_capabilities_map_to_vk_nv_cooperative_matrix2_features():
    caps, exts = set(), set()
    for k in (use_changes, per_element, workgroup_scope):
        r = k.reflect()
        caps |= set(r["capabilities"])
        exts |= set(r["extensions"])
    assert {"CooperativeMatrixReductionsNV", "CooperativeMatrixConversionsNV",
            "CooperativeMatrixPerElementOperationsNV"} <= caps
    assert "SPV_NV_cooperative_matrix2" in exts
    device_exts, features, _ = requirements(sorted(caps), sorted(exts))
    assert "VK_NV_cooperative_matrix2" in device_exts
    assert {"cooperativeMatrixReductions", "cooperativeMatrixConversions",
            "cooperativeMatrixPerElementOperations", "cooperativeMatrix"} <= features
