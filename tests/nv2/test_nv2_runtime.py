"""The runtime enables (and checks) the VK_NV_cooperative_matrix2 features tensor addressing, block loads and
workgroup-scope matrices need; C++ headers list them too."""

import runpy
from pathlib import Path

import pytest

from coopdsl.aot import requirements as aot_requirements
from coopdsl.runtime.features import DeviceFeatureError, check_supported, requirements

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _reflection(example: str, kernel: str) -> dict:
    return runpy.run_path(str(EXAMPLES / example))[kernel].reflect()


def _needs(r: dict):
    return requirements(r["capabilities"], r["extensions"], r["cooperative_matrices"])


def test_workgroup_gemm_needs_tensor_addressing_and_workgroup_scope():
    r = _reflection("gemm_workgroup.py", "gemm_wg")
    exts, feats, _ = _needs(r)
    assert "VK_NV_cooperative_matrix2" in exts
    assert {"cooperativeMatrixTensorAddressing", "cooperativeMatrixWorkgroupScope", "cooperativeMatrix"} <= feats
    assert "cooperativeMatrixWorkgroupScope" in aot_requirements(r).features


def test_q4_matmul_needs_block_loads_and_device_addresses():
    exts, feats, _ = _needs(_reflection("q4_matmul.py", "q4_matmul"))
    assert {"cooperativeMatrixBlockLoads", "bufferDeviceAddress", "storageBuffer8BitAccess"} <= feats


def test_a_device_without_workgroup_scope_is_refused_by_name():
    r = _reflection("gemm_workgroup.py", "gemm_wg")
    exts, feats, _ = _needs(r)
    have = {f: True for f in feats if f != "cooperativeMatrixWorkgroupScope"}
    with pytest.raises(DeviceFeatureError,
                       match="missing: feature cooperativeMatrixWorkgroupScope; the CPU interpreter"):
        check_supported("gpu", sorted(exts), have, 0xFF, r["capabilities"], r["extensions"],
                        r["cooperative_matrices"])
    check_supported("gpu", sorted(exts), {**have, "cooperativeMatrixWorkgroupScope": True}, 0xFF,
                    r["capabilities"], r["extensions"], r["cooperative_matrices"])
