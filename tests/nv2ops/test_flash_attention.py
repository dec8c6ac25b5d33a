"""examples/flash_attention.py: both head sizes compile, validate, and fit the H100's workgroup-scope shapes."""

import re
import runpy
from pathlib import Path

import pytest

from coopdsl.spirv import tools

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "flash_attention.py"


@pytest.fixture(scope="module")
def kernel():
    return runpy.run_path(str(EXAMPLE))["flash_attention"]


@pytest.mark.parametrize("D", [64, 128])
def test_head_sizes_64_and_128(kernel, D):
    k = kernel.specialize(D=D)
    binary = k.compile(device="nvidia-h100")  # also checks every matrix type and MulAdd against the H100 profile
    assert tools.validation_message(binary, "vulkan1.3") is None
    text = tools.disassemble(binary)
    assert re.search(rf"OpTypeCooperativeMatrixKHR %float %uint_2 %uint_64 %uint_{D} %uint_2", text)
    # S = Q K^T, P x ones (row sums), P x V
    assert text.count("OpCooperativeMatrixMulAddKHR") == 3
    # row max, and the two smears (eM and L resized from 64 x 64 to 64 x D)
    assert len(re.findall(r"OpCooperativeMatrixReduceNV %\w+ %\w+ Row %reduce_max_f32", text)) == 1
    assert len(re.findall(r"OpCooperativeMatrixReduceNV %\w+ %\w+ Row %keep_first", text)) == 2
    # the mask (one scalar extra), the max with M_old (a matrix extra), exp twice
    assert re.search(r"OpCooperativeMatrixPerElementOpNV %\w+ %\w+ %mask_keys %\w+\n", text)
    assert re.search(r"OpCooperativeMatrixPerElementOpNV %\w+ %\w+ %larger %\w+\n", text)
    assert len(re.findall(r"OpCooperativeMatrixPerElementOpNV %\w+ %\w+ %exp_elem\n", text)) == 2
    # P: f32 accumulator -> f16 A matrix (component and use change)
    assert re.search(r"OpCapability CooperativeMatrixConversionsNV", text) and "OpFConvert" in text
    assert k.reflect()["workgroup_size"] == [128, 1, 1]
