"""examples/gemm_workgroup.py and examples/q4_matmul.py: what they emit (they run on the GPU in tests/gpu)."""

import re
import runpy
from pathlib import Path

import pytest

from ..conftest import compile_checked

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def gemm():
    return runpy.run_path(str(EXAMPLES / "gemm_workgroup.py"))


@pytest.mark.parametrize("name,out", [("gemm_wg", "float"), ("gemm_wg_f16", "half")])
def test_workgroup_gemm_tiles_are_spec_constants_and_b_may_be_column_major(gemm, name, out):
    row = compile_checked(gemm[name], r"OpExecutionModeId %\w+ LocalSizeId %WG %uint_1 %uint_1",
                          r"OpTypeCooperativeMatrixKHR %half %uint_2 %BM %BK %uint_0",
                          r"OpTypeCooperativeMatrixKHR %float %uint_2 %BM %BN %uint_2",
                          r"OpCooperativeMatrixStoreTensorNV %\w+ %\w+ %\w+ None None",
                          r"OpTypeTensorLayoutNV %uint_2 %uint_1", absent=(r"TensorView %",))
    col = compile_checked(gemm[name].specialize(B_COLMAJOR=True),
                          r"OpTypeTensorViewNV %uint_2 %false %uint_1 %uint_0",
                          r"OpCooperativeMatrixLoadTensorNV %\w+ %\w+ %\w+ %\w+ None TensorView %\w+")
    assert row != col
    assert re.search(rf"OpTypeCooperativeMatrixKHR %{out} %uint_2 %BM %BN %uint_2", row)


def test_q4_matmul_decodes_blocks_read_through_a_device_address():
    ns = runpy.run_path(str(EXAMPLES / "q4_matmul.py"))
    compile_checked(ns["q4_matmul"], r"OpCapability CooperativeMatrixBlockLoadsNV",
                    r"OpTensorLayoutSetBlockSizeNV %\w+ %\w+ %uint_1 %uint_32",
                    r"OpCooperativeMatrixLoadTensorNV %\w+ %\w+ %\w+ %\w+ Aligned 16 DecodeFunc %dequant_q4_0",
                    r"%dequant_q4_0 = OpFunction %half None %\w+\n\s+%\w+ = OpFunctionParameter "
                    r"%_ptr_PhysicalStorageBuffer_BlockQ4_0")
