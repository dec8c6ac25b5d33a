"""Capabilities and extensions per builtin family, as naga's capability tests check them.

For each family a small kernel that uses it declares exactly the capabilities and extensions the family
needs beyond what every kernel declares (its required list), and a plain kernel declares none of the
family's (its forbidden list). A lowering that starts to require too much, too little, or something on
behalf of a kernel that does not use the family fails here by name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, bf16, e4m3, f16, f32, i8, i16, i32, u8, u16, u32, u64, vec4
from coopdsl.spirv import tools

ENVS = ("vulkan1.1", "vulkan1.2", "vulkan1.3", "vulkan1.4")


def base(target_env: str) -> frozenset[str]:
    """What every compute kernel declares: coopdsl writes the Vulkan memory model (an extension below
    SPIR-V 1.5)."""
    return frozenset({"Shader", "VulkanMemoryModel"} | ({"SPV_KHR_vulkan_memory_model"}
                                                         if target_env == "vulkan1.1" else set()))


def declared(k: cd.Kernel, target_env: str) -> frozenset[str]:
    """The capabilities and the extensions the validated module of ``k`` declares."""
    binary = k.compile(target_env)
    tools.validate(binary, target_env)
    text = tools.disassemble(binary)
    return frozenset(re.findall(r"^\s*OpCapability (\w+)$", text, re.M)
                     + re.findall(r'^\s*OpExtension "(\w+)"$', text, re.M))


# -- the plain kernel: 32-bit loads, stores and arithmetic only -------------------------------------------

@cd.kernel(workgroup_size=(64, 1, 1))
def plain(a: cd.Buffer[f32], b: cd.Buffer[f32], n: cd.Buffer[u32], out: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    if i < n[0]:
        out[i] = a[i] * b[i] + f32(n[i] % 3)


# -- one small kernel per family ------------------------------------------------------------------------

@cd.kernel(workgroup_size=(32, 1, 1))
def khr_coopmat(a: cd.Buffer[f32], c: cd.Buffer[f32]):
    x = MatA[f32, 16, 8].load(a, 0, stride=8)
    y = MatB[f32, 8, 16].load(a, 128, stride=16)
    cd.muladd(x, y, Acc[f32, 16, 16].splat(0.0)).store(c, 0, stride=16)


@cd.kernel(workgroup_size=(32, 1, 1))
def nv2_reduce(a: cd.Buffer[f32], o: cd.Buffer[f32]):
    Acc[f32, 16, 16].load(a, 0, stride=16).reduce(cd.Row, cd.reduce_max).store(o, 0, stride=16)


@cd.kernel(workgroup_size=(32, 1, 1))
def nv2_convert(a: cd.Buffer[f32], c: cd.Buffer[f32]):
    acc = Acc[f32, 16, 16].load(a, 0, stride=16)
    cd.muladd(MatA[f32, 16, 16](acc), acc.transpose(), Acc[f32, 16, 16].splat(0.0)).store(c, 0, stride=16)


@cd.func
def _doubled(row, col, x):
    return x + x


@cd.kernel(workgroup_size=(32, 1, 1))
def nv2_per_element(a: cd.Buffer[f32], o: cd.Buffer[f32]):
    Acc[f32, 16, 16].load(a, 0, stride=16).map(_doubled).store(o, 0, stride=16)


@cd.kernel(workgroup_size=(32, 1, 1))
def tensor_addressing(a: cd.Buffer[f32], o: cd.Buffer[f32], n: u32):
    L = cd.tensor_layout(2).dimension(n, n).slice(0, 16, 0, 16)
    Acc[f32, 16, 16].load_tensor(a, 0, L).store_tensor(o, 0, L)


@cd.kernel(workgroup_size=(32, 1, 1))
def qcom_conversion(out: cd.Buffer[f32]):
    c = Acc[f32, 32, 16].from_rows(cd.array(f32, 16, 1.0))
    rows = c.to_rows()
    out[cd.global_invocation_id.x] = rows[0]


@cd.kernel(workgroup_size=(64, 1, 1))
def subgroup_basic(z: cd.Buffer[u32]):
    if cd.subgroup_elect():
        z[cd.subgroup_id] = cd.subgroup_size


@cd.kernel(workgroup_size=(64, 1, 1))
def subgroup_arithmetic(x: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    x[i] = cd.subgroup_add(x[i]) + cd.subgroup_exclusive_max(x[i])


@cd.kernel(workgroup_size=(64, 1, 1))
def subgroup_vote(x: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    if cd.subgroup_any(x[i] > 0.0):
        x[i] = 1.0


@cd.kernel(workgroup_size=(64, 1, 1))
def subgroup_ballot(x: cd.Buffer[f32], z: cd.Buffer[vec4[u32]]):
    i = cd.global_invocation_id.x
    x[i] = cd.subgroup_broadcast(x[i], 3) + cd.subgroup_broadcast_first(x[i])
    z[i] = cd.subgroup_ballot(x[i] > 0.0)


@cd.kernel(workgroup_size=(64, 1, 1))
def subgroup_shuffle(x: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    x[i] = cd.subgroup_shuffle(x[i], i ^ 1) + cd.subgroup_shuffle_xor(x[i], 2)


@cd.kernel(workgroup_size=(64, 1, 1))
def subgroup_relative(x: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    x[i] = cd.subgroup_shuffle_up(x[i], 1) + cd.subgroup_shuffle_down(x[i], 1)


@cd.kernel(workgroup_size=(64, 1, 1))
def atomics_32(counts: cd.Buffer[u32]):
    cd.atomic_add(counts, 0, 1)


@cd.kernel(workgroup_size=(64, 1, 1))
def atomics_workgroup(counts: cd.Buffer[u32]):
    cd.atomic_add(counts, 0, 1, scope=cd.Workgroup)


@cd.kernel(workgroup_size=(64, 1, 1))
def atomics_float(sums: cd.Buffer[f32]):
    cd.atomic_add(sums, 0, 1.5)


@cd.kernel(workgroup_size=(64, 1, 1))
def atomics_64(big: cd.Buffer[u64]):
    cd.atomic_add(big, 0, 1)


@cd.kernel(workgroup_size=(32, 1, 1))
def dot_packed(a: cd.Buffer[i32], b: cd.Buffer[i32], o: cd.Buffer[i32]):
    i = cd.global_invocation_id.x
    o[i] = cd.dot4x8(a[i], b[i])


@cd.kernel(workgroup_size=(32, 1, 1))
def dot_vectors(a: cd.Buffer[vec4[i8]], b: cd.Buffer[vec4[i8]], o: cd.Buffer[i32]):
    i = cd.global_invocation_id.x
    o[i] = cd.dot4x8(a[i], b[i])


@cd.kernel(workgroup_size=(64, 1, 1))
def storage_8bit(a: cd.Buffer[u8], o: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    o[i] = u32(a[i])


@cd.kernel(workgroup_size=(64, 1, 1))
def storage_16bit(a: cd.Buffer[u16], o: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    o[i] = u32(a[i])


@cd.kernel(workgroup_size=(64, 1, 1))
def int16_arith(a: cd.Buffer[u32], o: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    o[i] = u32(i16(a[i]) * i16(3))


@cd.kernel(workgroup_size=(64, 1, 1))
def float16(a: cd.Buffer[f32], o: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    o[i] = f32(f16(a[i]) * f16(2.0))


@cd.kernel(workgroup_size=(64, 1, 1))
def float16_storage(a: cd.Buffer[f16], o: cd.Buffer[f16]):
    i = cd.global_invocation_id.x
    o[i] = a[i]


@cd.kernel(workgroup_size=(64, 1, 1))
def bfloat16(a: cd.Buffer[f32], o: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    o[i] = f32(bf16(a[i]))


@cd.kernel(workgroup_size=(32, 1, 1))
def bfloat16_matrix(a: cd.Buffer[bf16], c: cd.Buffer[f32]):
    x = MatA[bf16, 16, 16].load(a, 0, stride=16)
    y = MatB[bf16, 16, 16].load(a, 256, stride=16)
    cd.muladd(x, y, Acc[f32, 16, 16].splat(0.0)).store(c, 0, stride=16)


@cd.kernel(workgroup_size=(32, 1, 1))
def float8(a: cd.Buffer[f32], c: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    c[i] = f32(e4m3(a[i]))


KHR = {"CooperativeMatrixKHR", "SPV_KHR_cooperative_matrix"}
NV2 = "SPV_NV_cooperative_matrix2"

# family -> what a kernel that does not use it must not declare
FORBIDDEN: dict[str, set[str]] = {
    "KHR cooperative matrix": KHR,
    "NV2 reductions": {"CooperativeMatrixReductionsNV", NV2},
    "NV2 conversions": {"CooperativeMatrixConversionsNV", NV2},
    "NV2 per-element": {"CooperativeMatrixPerElementOperationsNV", NV2},
    "tensor addressing": {"TensorAddressingNV", "CooperativeMatrixTensorAddressingNV", "SPV_NV_tensor_addressing"},
    "QCOM conversions": {"CooperativeMatrixConversionQCOM", "SPV_QCOM_cooperative_matrix_conversion"},
    "subgroup ops": {"GroupNonUniform", "GroupNonUniformArithmetic", "GroupNonUniformVote", "GroupNonUniformBallot",
                     "GroupNonUniformShuffle", "GroupNonUniformShuffleRelative"},
    "atomics": {"VulkanMemoryModelDeviceScope", "AtomicFloat32AddEXT", "SPV_EXT_shader_atomic_float_add",
                "Int64Atomics", "Int64"},
    "integer dot products": {"DotProduct", "DotProductInput4x8Bit", "DotProductInput4x8BitPacked",
                             "SPV_KHR_integer_dot_product"},
    "8/16-bit storage": {"Int8", "Int16", "StorageBuffer8BitAccess", "StorageBuffer16BitAccess",
                         "SPV_KHR_8bit_storage", "SPV_KHR_16bit_storage"},
    "float16/bf16/fp8": {"Float16", "BFloat16TypeKHR", "BFloat16CooperativeMatrixKHR", "SPV_KHR_bfloat16",
                         "Float8EXT", "Float8CooperativeMatrixEXT", "SPV_EXT_float8"},
}


@dataclass(frozen=True)
class Case:
    family: str
    kernel: cd.Kernel
    required: frozenset[str]  # declared beyond base(target_env), exactly
    target_env: str = "vulkan1.3"


def _case(family: str, kernel: cd.Kernel, required: set[str], target_env: str = "vulkan1.3") -> Case:
    return Case(family, kernel, frozenset(required), target_env)


CASES = [
    _case("KHR cooperative matrix", khr_coopmat, KHR),
    _case("NV2 reductions", nv2_reduce, KHR | {"CooperativeMatrixReductionsNV", NV2}),
    _case("NV2 conversions", nv2_convert, KHR | {"CooperativeMatrixConversionsNV", NV2}),
    _case("NV2 per-element", nv2_per_element, KHR | {"CooperativeMatrixPerElementOperationsNV", NV2}),
    _case("tensor addressing", tensor_addressing,
          KHR | {"TensorAddressingNV", "CooperativeMatrixTensorAddressingNV", "SPV_NV_tensor_addressing", NV2}),
    _case("QCOM conversions", qcom_conversion,
          KHR | {"CooperativeMatrixConversionQCOM", "SPV_QCOM_cooperative_matrix_conversion"}),
    _case("subgroup ops", subgroup_basic, {"GroupNonUniform"}),
    _case("subgroup ops", subgroup_arithmetic, {"GroupNonUniform", "GroupNonUniformArithmetic"}),
    _case("subgroup ops", subgroup_vote, {"GroupNonUniform", "GroupNonUniformVote"}),
    _case("subgroup ops", subgroup_ballot, {"GroupNonUniform", "GroupNonUniformBallot"}),
    _case("subgroup ops", subgroup_shuffle, {"GroupNonUniform", "GroupNonUniformShuffle"}),
    _case("subgroup ops", subgroup_relative, {"GroupNonUniform", "GroupNonUniformShuffleRelative"}),
    _case("atomics", atomics_32, {"VulkanMemoryModelDeviceScope"}),  # (atomics are at Device scope by default)
    _case("atomics", atomics_workgroup, set()),
    _case("atomics", atomics_float, {"VulkanMemoryModelDeviceScope", "AtomicFloat32AddEXT",
                                     "SPV_EXT_shader_atomic_float_add"}),
    _case("atomics", atomics_64, {"VulkanMemoryModelDeviceScope", "Int64Atomics", "Int64"}),
    _case("integer dot products", dot_packed, {"DotProduct", "DotProductInput4x8BitPacked"}),
    _case("integer dot products", dot_packed, {"DotProduct", "DotProductInput4x8BitPacked",
                                               "SPV_KHR_integer_dot_product"}, "vulkan1.2"),  # core in SPIR-V 1.6
    _case("integer dot products", dot_vectors, {"DotProduct", "DotProductInput4x8Bit",
                                                "Int8", "StorageBuffer8BitAccess"}),  # (vec4[i8] buffers)
    _case("8/16-bit storage", storage_8bit, {"Int8", "StorageBuffer8BitAccess"}),
    _case("8/16-bit storage", storage_8bit, {"Int8", "StorageBuffer8BitAccess", "SPV_KHR_8bit_storage"},
          "vulkan1.1"),  # core in SPIR-V 1.5
    _case("8/16-bit storage", storage_16bit, {"Int16", "StorageBuffer16BitAccess"}),
    _case("8/16-bit storage", storage_16bit, {"Int16", "StorageBuffer16BitAccess"}, "vulkan1.1"),  # core in 1.3
    _case("8/16-bit storage", int16_arith, {"Int16"}),
    _case("float16/bf16/fp8", float16, {"Float16"}),
    _case("float16/bf16/fp8", float16_storage, {"Float16", "StorageBuffer16BitAccess"}),
    _case("float16/bf16/fp8", bfloat16, {"BFloat16TypeKHR", "SPV_KHR_bfloat16"}),
    _case("float16/bf16/fp8", bfloat16_matrix, KHR | {"BFloat16TypeKHR", "BFloat16CooperativeMatrixKHR",
                                                      "SPV_KHR_bfloat16", "StorageBuffer16BitAccess"}),
    _case("float16/bf16/fp8", float8, {"Float8EXT", "SPV_EXT_float8"}),
]


def _id(c: Case) -> str:
    return f"{c.family}:{c.kernel.name}:{c.target_env}".replace(" ", "_")


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_a_kernel_using_the_family_declares_exactly_what_it_requires(case):
    got = declared(case.kernel, case.target_env) - base(case.target_env)
    assert got == case.required, (f"{case.kernel.name} ({case.family}, {case.target_env}) declares "
                                  f"{sorted(got - case.required)} it should not "
                                  f"and lacks {sorted(case.required - got)}")
    assert case.required & FORBIDDEN[case.family] or not case.required, \
        f"{case.kernel.name} does not exercise its family {case.family}"


@pytest.mark.parametrize("target_env", ENVS)
def test_the_plain_kernel_declares_only_the_base(target_env):
    assert declared(plain, target_env) == base(target_env)


@pytest.mark.parametrize("target_env", ENVS)
@pytest.mark.parametrize("family", sorted(FORBIDDEN))
def test_a_kernel_not_using_the_family_declares_none_of_it(family, target_env):
    leaked = declared(plain, target_env) & FORBIDDEN[family]
    assert not leaked, f"a kernel that uses no {family} declares {sorted(leaked)}"


def test_every_family_has_a_case():
    assert {c.family for c in CASES} == set(FORBIDDEN)
