"""The proposal's four workloads (examples/qcom_*.py): emitted, validated, and run on the CPU interpreter against
numpy (benchmarks/cases.py QCOM_CASES).  No GPU at hand offers VK_QCOM_cooperative_matrix_conversion."""

import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

import coopdsl
from coopdsl.spirv import tools

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.cases import QCOM_CASES  # noqa: E402

# example -> the QCOM instructions its kernel must contain (at least once each)
INSTRUCTIONS = {
    "qcom_conv_im2col.py": ("OpCompositeConstructCoopMatQCOM",),
    "qcom_ntc_mlp.py": ("OpCompositeConstructCoopMatQCOM", "OpCompositeExtractCoopMatQCOM"),
    "qcom_flash_attention.py": ("OpCompositeExtractCoopMatQCOM", "OpExtractSubArrayQCOM",
                                "OpCompositeConstructCoopMatQCOM", "OpGroupNonUniformAny"),
    "qcom_dequant_q4.py": ("OpExtractSubArrayQCOM", "OpCompositeConstructCoopMatQCOM"),
}


def test_every_qcom_example_is_listed_and_has_a_case():
    found = {p.name for p in (ROOT / "examples").glob("qcom_*.py")}
    assert found == set(INSTRUCTIONS)
    assert {name.removesuffix(".py") for name in found} == set(QCOM_CASES)
    assert all(fn.__name__ == name for name, (fn, _) in QCOM_CASES.items())


@pytest.mark.parametrize("name", sorted(INSTRUCTIONS))
def test_example_emits_valid_spirv_with_its_instructions(name):
    (k,) = [v for v in runpy.run_path(str(ROOT / "examples" / name)).values() if isinstance(v, coopdsl.Kernel)]
    binary = k.compile()
    assert tools.validation_message(binary, k.target_env) is None
    text = tools.disassemble(binary)
    assert 'OpExtension "SPV_QCOM_cooperative_matrix_conversion"' in text
    for instruction in INSTRUCTIONS[name]:
        assert instruction in text, f"{name}: no {instruction}"
    assert "Workgroup" not in text.split("OpFunction ", 1)[1], "nothing is staged through shared memory"


@pytest.mark.parametrize("case,size", [(c, s) for c, (_, sizes) in QCOM_CASES.items() for s in sizes])
def test_example_on_the_interpreter_matches_numpy(case, size):
    fn, _ = QCOM_CASES[case]
    r = fn(size, np.random.default_rng(7), device="cpu")
    assert r.passed, r


def test_the_h100_profile_refuses_the_f32_tiles():
    # the examples target VK_QCOM_cooperative_matrix_conversion devices (f32 A rows are 8 wide), not the H100
    from coopdsl.devices import DeviceMismatchError

    (k,) = [v for v in runpy.run_path(str(ROOT / "examples" / "qcom_conv_im2col.py")).values()
            if isinstance(v, coopdsl.Kernel)]
    with pytest.raises(DeviceMismatchError, match="offers no MulAdd"):
        k.compile(device="nvidia-h100")


def test_the_conv_reference_is_the_direct_definition():
    ns = runpy.run_path(str(ROOT / "examples" / "qcom_conv_im2col.py"))
    rng = np.random.default_rng(3)
    x, w = rng.uniform(-1, 1, (5, 6, 3)), rng.uniform(-1, 1, (4, 3, 3, 3))
    stride, dilation, oh, ow = 2, 2, 3, 3
    direct = np.zeros((oh, ow, 4))
    for a in range(oh):
        for b in range(ow):
            for r in range(3):
                for s in range(3):
                    i, j = stride * a + dilation * (r - 1), stride * b + dilation * (s - 1)
                    if 0 <= i < 5 and 0 <= j < 6:
                        direct[a, b] += w[:, r, s, :] @ x[i, j]
    np.testing.assert_allclose(ns["reference"](x, w, stride, dilation, oh, ow), direct, atol=1e-12)


def test_the_q4_0_encoding_round_trips_within_half_a_step():
    ns = runpy.run_path(str(ROOT / "examples" / "qcom_dequant_q4.py"))
    w = np.random.default_rng(4).uniform(-1, 1, (32, 64)).astype(np.float32)
    words = ns["quantize_q4_0"](w)
    assert words.dtype == np.uint16 and words.size == 32 * 64 // 32 * 9
    back = ns["dequantize_q4_0"](words, 32, 64).astype(np.float32)
    step = np.abs(words.reshape(-1, 9)[:, 0].view(np.float16).astype(np.float32))
    assert np.all(np.abs(back - w).reshape(-1, 32) <= step[:, None] * 1.01)
