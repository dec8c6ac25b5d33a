"""Every example kernel compiles, passes spirv-val and has its key instructions."""

import runpy
from pathlib import Path

import pytest

import coopdsl
from coopdsl.spirv import tools

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.py"))


# every example is a cooperative-matrix kernel unless listed here with the instructions it must contain
MATRIX_GEMM = ("OpCooperativeMatrixLoadKHR", "OpCooperativeMatrixMulAddKHR", "OpCooperativeMatrixStoreKHR")
TENSOR_GEMM = ("OpCooperativeMatrixLoadTensorNV", "OpCooperativeMatrixMulAddKHR", "OpCooperativeMatrixStoreTensorNV")
EXPECTED: dict[str, tuple[str, ...]] = {
    "gemm_workgroup.py": TENSOR_GEMM, "q4_matmul.py": TENSOR_GEMM + ("DecodeFunc",),
    "flash_attention.py": MATRIX_GEMM + ("OpCooperativeMatrixReduceNV", "OpCooperativeMatrixPerElementOpNV",
                                         "OpFConvert", "OpLoopMerge"),
}
QCOM = ("OpCompositeConstructCoopMatQCOM", "OpCooperativeMatrixMulAddKHR")  # tests/qcom/test_examples.py has more
EXPECTED.update({name: QCOM for name in (
    "qcom_conv_im2col.py", "qcom_ntc_mlp.py", "qcom_flash_attention.py", "qcom_dequant_q4.py")})


def _kernels(path):
    ns = runpy.run_path(str(path))
    return [k for k in ns.values() if isinstance(k, coopdsl.Kernel)]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_compiles_and_validates(path):
    kernels = _kernels(path)
    assert kernels, f"{path.name} defines no kernel"
    for k in kernels:
        binary = k.compile()
        assert tools.validation_message(binary, k.target_env) is None
        text = tools.disassemble(binary)
        for instruction in EXPECTED.get(path.name, MATRIX_GEMM):
            assert instruction in text, f"{path.name}: {k.name} has no {instruction}"


def test_gemm_khr_has_the_four_instructions():
    (k,) = _kernels(EXAMPLES[[p.name for p in EXAMPLES].index("gemm_khr.py")])
    text = k.disassemble()
    for op in ("OpTypeCooperativeMatrixKHR", "OpCooperativeMatrixLoadKHR", "OpCooperativeMatrixMulAddKHR",
               "OpCooperativeMatrixStoreKHR", "OpConstantComposite", "OpLoopMerge"):
        assert op in text
