"""Runtime pieces that need no device: packing, argument checks, capability mapping, struct layouts."""

import ctypes
import struct

import numpy as np
import pytest

from coopdsl.runtime import LaunchError, pack_push, pack_spec, vk
from coopdsl.runtime.features import DeviceFeatureError, check_supported, requirements
from coopdsl.runtime.packing import check_array

REFL = {
    "spec_constants": [{"id": 3, "name": "K", "type": "u32", "default": 16},
                       {"id": 0, "name": "SCALE", "type": "f32", "default": 1.5},
                       {"id": 7, "name": "FLAG", "type": "bool", "default": False}],
    "push_constants": {"size": 24, "members": [{"name": "n", "offset": 0, "type": "u32", "size": 4},
                                               {"name": "alpha", "offset": 4, "type": "f32", "size": 4},
                                               {"name": "p", "offset": 8, "type": "ptr", "size": 8},
                                               {"name": "h", "offset": 16, "type": "f16", "size": 2}]},
}


def test_spec_constants_pack_defaults_and_overrides():
    data, entries = pack_spec(REFL, {"K": 64, "FLAG": True})
    assert entries == [(3, 0, 4), (0, 4, 4), (7, 8, 4)]
    assert struct.unpack("<IfI", data) == (64, 1.5, 1)


def test_unknown_spec_constant_is_named():
    with pytest.raises(LaunchError, match=r"unknown specialization constant\(s\) \['Q'\]"):
        pack_spec(REFL, {"Q": 1})
    with pytest.raises(LaunchError, match="K \\(u32\\) cannot be -1"):
        pack_spec(REFL, {"K": -1})


@pytest.mark.parametrize("t,default,given", [("bf16", 1.5, 1.0 + 2.0 ** -8 + 2.0 ** -30), ("e4m3", 2.0, 448.0),
                                              ("e5m2", -0.5, 57344.0)])
def test_bf16_and_fp8_spec_constants_pack_as_the_compilers_constant_of_the_number(t, default, given):
    """A launch value of a Spec[bf16] / Spec[e4m3] / Spec[e5m2] is a number, as the kernel's default is, sent as
    the format's bits (2 bytes, 1 byte) rounded once as the compiler rounds the default (a KeyError before)."""
    from coopdsl.ir import types as T
    from coopdsl.spirv.module import float_bits

    refl = {"spec_constants": [{"id": 3, "name": "S", "type": t, "default": default}]}
    size = 2 if t == "bf16" else 1
    for spec, number in ((None, default), ({"S": given}, given)):
        data, entries = pack_spec(refl, spec)
        assert entries == [(3, 0, size)]
        assert int.from_bytes(data, "little") == float_bits(getattr(T, t), number)
    with pytest.raises(LaunchError, match=f"specialization constant S \\({t}\\) cannot be 1e\\+40"):
        pack_spec(refl, {"S": 1e40})
    with pytest.raises(LaunchError, match="give a number"):
        pack_spec(refl, {"S": "1.0"})


def test_push_constants_pack_at_their_offsets():
    raw = pack_push(REFL, {"n": 7, "alpha": 2.0, "p": 0x1122334455667788, "h": 0.5})
    assert len(raw) == 24
    assert struct.unpack_from("<IfQe", raw) == (7, 2.0, 0x1122334455667788, 0.5)


def test_missing_push_constant():
    with pytest.raises(LaunchError, match="missing push constant 'alpha' \\(f32\\)"):
        pack_push(REFL, {"n": 1, "p": 0, "h": 0.0})


def test_array_checks():
    b = {"name": "a", "element_type": "f16", "components": 1}
    assert check_array(b, np.zeros(4, np.float16)).dtype == np.float16
    with pytest.raises(LaunchError, match="holds f16; got a float32 array"):
        check_array(b, np.zeros(4, np.float32))
    with pytest.raises(LaunchError, match="needs a numpy array"):
        check_array(b, [1, 2])
    with pytest.raises(LaunchError, match="C-contiguous"):
        check_array(b, np.zeros((4, 4), np.float16)[:, ::2])
    vec = {"name": "v", "element_type": "u32", "components": 4}
    assert check_array(vec, np.zeros(64, np.float16)).nbytes == 128  # uvec4 view of f16 data
    with pytest.raises(LaunchError, match="16-byte elements"):
        check_array(vec, np.zeros(3, np.float16))


def test_capabilities_map_to_extensions_and_features():
    exts, feats, ops = requirements(["Shader", "Float16", "StorageBuffer16BitAccess", "VulkanMemoryModel",
                                     "CooperativeMatrixKHR", "GroupNonUniformArithmetic"])
    assert exts == {"VK_KHR_cooperative_matrix"}
    assert feats == {"shaderFloat16", "storageBuffer16BitAccess", "vulkanMemoryModel", "cooperativeMatrix"}
    assert ops == 0x4


def test_missing_feature_is_reported_before_dispatch():
    with pytest.raises(DeviceFeatureError, match="missing: extension VK_KHR_cooperative_matrix, "
                                                 "feature cooperativeMatrix"):
        check_supported("llvmpipe", ["VK_KHR_8bit_storage"], {"shaderFloat16": True}, 0xFF,
                        ["Shader", "Float16", "CooperativeMatrixKHR"])
    with pytest.raises(DeviceFeatureError, match="does not know how to enable"):
        requirements(["Shader", "RayQueryKHR"])


def test_struct_layouts_match_the_registry():
    # sizes from vulkan_core.h on LP64
    assert ctypes.sizeof(vk.PhysicalDeviceLimits) == 504
    assert ctypes.sizeof(vk.PhysicalDeviceProperties) == 824
    assert vk.PhysicalDeviceLimits.timestampPeriod.offset == 424
    assert ctypes.sizeof(vk.CoopMatPropertiesKHR) == 56
    assert ctypes.sizeof(vk.WriteDescriptorSet) == 64
    assert ctypes.sizeof(vk.ComputePipelineCreateInfo) == 96
    assert ctypes.sizeof(vk.RequiredSubgroupSizeCreateInfo) == 24
    size_control = vk.SubgroupSizeControlProperties  # chained(): its members, then spare padding
    assert (size_control.minSubgroupSize.offset, size_control.requiredSubgroupSizeStages.offset) == (16, 28)
    assert len(vk.Vulkan12Features.BOOLS) == 47 and len(vk.Vulkan13Features.BOOLS) == 15
    assert len(vk.FEATURES_1_0) == 55


def test_vec3_buffers_stride_like_vec4():
    vec3 = {"name": "v", "element_type": "f32", "components": 3}
    assert check_array(vec3, np.zeros((4, 4), np.float32)).nbytes == 64
    with pytest.raises(LaunchError, match="16-byte elements"):
        check_array(vec3, np.zeros(12, np.float32)[:9].copy())
    # rows of 3 packed tightly: 8 of them are 96 bytes, a whole number of 16-byte elements, and were read at a
    # 16-byte stride (element 1 from values 4-6); refused by their shape, with the fix
    for rows in (4, 5, 8):
        with pytest.raises(LaunchError, match=rf"buffer 'v' holds vec3\[f32\] elements padded to 16 bytes \(a vec3 "
                                              rf"takes a vec4's room\), but the array given has 3 values a row, packed "
                                              rf"tightly: pass shape \({rows}, 4\)"):
            check_array(vec3, np.zeros((rows, 3), np.float32))
    # a vector of floats takes its components' dtype (a float64 array was read as its bytes); a vector of
    # integers takes other data as its bits (f16 values loaded as uvec4 words, the GLSL idiom)
    with pytest.raises(LaunchError, match=r"buffer 'v' holds vec3\[f32\]; got a float64 array \(pass float32, 3 "
                                          r"values an element\)"):
        check_array(vec3, np.zeros((8, 3), np.float64))
    words = {"name": "w", "element_type": "u32", "components": 4}
    assert check_array(words, np.zeros((4, 8), np.float16)).nbytes == 64


def test_fp8_capabilities_map_to_vk_ext_shader_float8():
    from coopdsl.runtime.device import OPTIONAL_EXTENSIONS
    from coopdsl.runtime.instance import extension_feature_structs

    exts, feats, _ = requirements(["Shader", "Float8EXT", "Float8CooperativeMatrixEXT", "CooperativeMatrixKHR"],
                                  ["SPV_EXT_float8", "SPV_KHR_cooperative_matrix"])
    assert exts == {"VK_EXT_shader_float8", "VK_KHR_cooperative_matrix"}
    assert feats == {"shaderFloat8", "shaderFloat8CooperativeMatrix", "cooperativeMatrix"}
    with pytest.raises(DeviceFeatureError, match="missing: extension VK_EXT_shader_float8, feature shaderFloat8; the "
                                                 "CPU interpreter runs it"):
        check_supported("llvmpipe", [], {}, 0, ["Shader", "Float8EXT"])
    # a device that has the extension gets its feature struct queried and chained into vkCreateDevice
    assert "VK_EXT_shader_float8" in OPTIONAL_EXTENSIONS
    assert vk.Float8FeaturesEXT in extension_feature_structs(["VK_KHR_cooperative_matrix", "VK_EXT_shader_float8"])
    assert vk.Float8FeaturesEXT not in extension_feature_structs(["VK_KHR_cooperative_matrix"])
    assert vk.Float8FeaturesEXT.STYPE == 1000567000  # VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT8_FEATURES_EXT
    assert vk.Float8FeaturesEXT.BOOLS == ("shaderFloat8", "shaderFloat8CooperativeMatrix")
    assert vk.Float8FeaturesEXT.shaderFloat8.offset == 16


def test_read_only_output_and_uniform_size_checks():
    out = {"name": "c", "element_type": "f32", "components": 1, "readonly": False}
    frozen = np.zeros(4, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(LaunchError, match="buffer 'c' is written by the kernel, but the numpy array given for it "
                                          "is read-only"):
        check_array(out, frozen)
    assert check_array({**out, "readonly": True}, frozen) is frozen
    uniform = {"name": "u", "kind": "uniform_buffer", "element_type": "u8", "components": 12, "size": 12}
    with pytest.raises(LaunchError, match="uniform block 'u' needs a dict of its members or an array of at least 12 "
                                          "bytes; 8 bytes given"):
        check_array(uniform, np.zeros(8, np.uint8))
    assert check_array(uniform, np.zeros(100, np.uint8)).nbytes == 100   # more bytes are not read (as the interpreter)
    # a uniform block is only read: a non-contiguous array's bytes are copied, as the interpreter copies them
    strided = np.arange(48, dtype=np.uint8)[::2]
    got = check_array(uniform, strided)
    assert got.flags.c_contiguous and got.tolist() == strided.tolist()


def test_scalar_push_blocks_pack_through_one_precompiled_struct():
    from coopdsl.runtime.program import flat_struct

    block = {"size": 14, "members": [{"name": "n", "offset": 0, "type": "u32", "size": 4},
                                     {"name": "alpha", "offset": 4, "type": "f32", "size": 4},
                                     {"name": "d", "offset": 8, "type": "f16", "size": 2},
                                     {"name": "k", "offset": 12, "type": "i16", "size": 2}]}
    st, names = flat_struct(block, 16)
    assert names == ("n", "alpha", "d", "k") and st.size == 16
    values = {"n": 7, "alpha": 0.5, "d": 2.0, "k": -3}
    assert st.pack(*[values[n] for n in names]) == pack_push({"push_constants": block}, values) + b"\0\0"
    assert flat_struct(REFL["push_constants"], 24) == (None, ())  # a pointer member: the general path
    # members of a struct argument (p.M) too; a struct inside a struct goes to the general path
    st, names = flat_struct({"size": 8, "members": [{"name": "p.M", "offset": 0, "type": "u32", "size": 4},
                                                    {"name": "p.x", "offset": 4, "type": "f32", "size": 4}]}, 8)
    assert names == ("p.M", "p.x") and st.pack(3, 0.5) == struct.pack("<If", 3, 0.5)
    assert flat_struct({"size": 8, "members": [{"name": "p.q.M", "offset": 0, "type": "u32", "size": 4}]}, 8)[0] is None


@pytest.mark.parametrize("values, message", [
    ({"n": 3, "alpha": 1e300, "p": 0, "h": 0.0}, "push constant 'alpha' (f32) cannot be 1e+300: the literal 1e+300 "
                                                  "does not fit in f32"),
    ({"n": 3, "alpha": 1.0, "p": 0, "h": 70000.0}, "push constant 'h' (f16) cannot be 70000.0: the literal 70000.0 "
                                                    "does not fit in f16"),
    ({"n": 2**32, "alpha": 1.0, "p": 0, "h": 0.0}, "push constant 'n' (u32) cannot be 4294967296: the literal "
                                                    "4294967296 does not fit in u32"),
    ({"n": np.array([1, 2]), "alpha": 1.0, "p": 0, "h": 0.0}, "push constant 'n' (u32) cannot be array([1, 2]): "
                                                               "give a number"),
    ({"n": 1.5, "alpha": 1.0, "p": 0, "h": 0.0}, "cannot use the float literal 1.5 as u32"),
], ids=["f32 overflow", "f16 overflow", "u32 overflow", "an array for a scalar", "a float for an int"])
def test_push_constants_go_through_the_one_literal_check(values, message):
    # (1e300 once became +inf for f32 on the CPU path, and an OverflowError or numpy TypeError on the GPU path)
    with pytest.raises(LaunchError) as e:
        pack_push(REFL, values)
    assert message in str(e.value)


def test_push_constants_keep_numpy_scalars_infinities_and_nan():
    raw = pack_push(REFL, {"n": np.uint32(7), "alpha": float("inf"), "p": 0, "h": np.float16(0.5)})
    n, alpha = struct.unpack_from("<If", raw)
    assert n == 7 and alpha == float("inf")


def test_spec_constant_values_go_through_the_one_literal_check():
    with pytest.raises(LaunchError, match=r"specialization constant SCALE \(f32\) cannot be 1e\+300: the literal "
                                          r"1e\+300 does not fit in f32"):
        pack_spec(REFL, {"SCALE": 1e300})


def test_the_runtime_knows_each_capability_by_the_name_the_reflection_gives():
    """The reflection names a capability by the grammar's own name, never an alias (the tables listed names
    alphabetically, so 4434 read as StorageUniform16, which the runtime's table did not hold: a uniform block with
    an f16 member could not run on Vulkan); every name the runtime's table holds is such a name."""
    from coopdsl.runtime.features import CAPABILITIES
    from coopdsl.spirv.grammar import ENUMS, enum_name

    for name in CAPABILITIES:
        assert enum_name("Capability", ENUMS["Capability"][name][0]) == name, name
    assert enum_name("Capability", 4434) == "UniformAndStorageBuffer16BitAccess"


UNIFORM16 = """
import coopdsl as cd
from coopdsl import f16, f32, u32


@cd.struct
class P:
    h: f16
    n: u32


@cd.kernel(workgroup_size=(1, 1, 1))
def k(out: cd.Buffer[f32], p: cd.Uniform[P]):
    out[0] = f32(p.h) + f32(p.n)
"""


def test_a_uniform_block_with_16_bit_members_runs(device, tmp_path):
    from tests.conftest import exec_source

    if not device.info.features.get("uniformAndStorageBuffer16BitAccess"):
        pytest.skip("no uniformAndStorageBuffer16BitAccess")
    k = exec_source(UNIFORM16, tmp_path / "uni16.py")["k"]
    assert "UniformAndStorageBuffer16BitAccess" in k.reflect()["capabilities"]
    out = np.zeros(1, np.float32)
    k.launch((1,), out, {"h": 1.5, "n": 2}, device=device)
    assert out[0] == 3.5


def test_a_uniform_block_s_raw_bytes_on_the_gpu_path_follow_the_interpreter_s_rule():
    """coopdsl/_packing.uniform_block_problem for the runtime's binding (its reflection's members): items wider
    than the widest member scalar (numpy's default float64 for u32 and f32 members) are refused."""
    block = {"name": "u", "kind": "uniform_buffer", "size": 8,
             "members": [{"name": "a", "offset": 0, "type": "u32", "size": 4},
                         {"name": "b", "offset": 4, "type": "f32", "size": 4}]}
    with pytest.raises(LaunchError, match=r"uniform block 'u' takes a dict of its members or its raw bytes \(a "
                                          r"uint8 array, or items of at most its widest member's 4 bytes\); got a "
                                          r"float64 array"):
        check_array(block, np.array([1.0, 2.5]))
    assert check_array(block, np.array([1, 2.5], np.float32)).nbytes == 8
    assert check_array(block, np.zeros(8, np.uint8)).nbytes == 8


def test_the_runtime_s_spirv_constants_are_the_grammar_s():
    """The runtime reads no grammar (tests/test_layers.py): its magic number and OpEntryPoint opcode are checked
    here against coopdsl.spirv's tables, and its reading of entry-point names against a compiled module's."""
    from coopdsl.runtime.program import OP_ENTRY_POINT, SPIRV_MAGIC, entry_point_names
    from coopdsl.spirv._tables import MAGIC
    from coopdsl.spirv.grammar import opcode

    assert OP_ENTRY_POINT == opcode("OpEntryPoint") and SPIRV_MAGIC == MAGIC.to_bytes(4, "little")
    import coopdsl as cd
    from tests.aot.sample_kernels import __dict__ as sample

    kernel = next(v for v in sample.values() if isinstance(v, cd.Kernel))
    assert entry_point_names(kernel.compile()) == [kernel.reflect()["entry_point"]]
    assert entry_point_names(b"\0" * 20) is None and entry_point_names(kernel.compile()[:-4] + b"\xff\xff\xff\xff") \
        is None
