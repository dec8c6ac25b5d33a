"""Specialization constants as matrix dimensions, derived constants (OpSpecConstantOp), LocalSizeId."""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, ShapeError, f16, f32, u32

from ..conftest import compile_checked, expect_error


@cd.kernel(workgroup_size=("WG", 1, 1))
def spec_tiles(a: cd.Buffer[f16], c: cd.Buffer[f32], out: cd.Buffer[u32], scale: cd.Buffer[f32],
               TM: cd.Spec[u32] = 16, TK: cd.Spec[u32] = 16, WG: cd.Spec[u32, 9] = 32, S: cd.Spec[f32] = 1.0):
    TN = TM * 2
    ta = MatA[f16, TM, TK].load(a, 0, stride=TK)
    tb = MatB[f16, TK, TN].load(a, 0, stride=TN)
    acc = cd.muladd(ta, tb, Acc[f32, TM, TN].splat(0.0))
    acc.store(c, cd.workgroup_id.x * TM, stride=TN)
    out[0] = TN + TK // 4 - 1
    scale[0] = S * 2.0


def test_spec_constant_dimensions_and_derived_constants():
    compile_checked(
        spec_tiles,
        r"OpExecutionModeId %spec_tiles LocalSizeId %WG %uint_1 %uint_1", r"OpDecorate %WG SpecId 9",
        r"(%\w+) = OpSpecConstantOp %uint IMul %TM %uint_2",
        r"OpSpecConstantOp %uint UDiv %TK %uint_4", r"OpSpecConstantOp %uint ISub",
        r"OpTypeCooperativeMatrixKHR %half %uint_3 %TM %TK %uint_0",
        r"OpTypeCooperativeMatrixKHR %float %uint_3 %TM %\w+ %uint_2",
        r"OpSpecConstant %float 1", r"OpFMul %float %S %float_2")  # float spec math stays at runtime
    r = spec_tiles.reflect()
    assert r["workgroup_size"] == [32, 1, 1] and r["workgroup_size_spec_ids"] == [9, None, None]


@cd.kernel(workgroup_size=(32, 1, 1))
def spec_k_mismatch(a: cd.Buffer[f16], TM: cd.Spec[u32] = 16, TK: cd.Spec[u32] = 16):
    ta = MatA[f16, TM, TK].load(a, 0, stride=TK)
    tb = MatB[f16, TM, TK].load(a, 0, stride=TK)
    acc = cd.muladd(ta, tb, Acc[f32, TM, TK].splat(0.0))  # E:symk


def test_symbolic_shape_mismatch_is_caught():
    # spirv-val skips this check for spec-constant dims; coopdsl compares them symbolically
    expect_error(spec_k_mismatch, ShapeError, "muladd K mismatch: A has TK columns but B has TM rows",
                 "# E:symk", 11)


@cd.kernel(workgroup_size=("WG", 1, 1))
def workgroup_scope(a: cd.Buffer[f16], c: cd.Buffer[f32], WG: cd.Spec[u32] = 128):
    ta = MatA[f16, 64, 16, cd.Workgroup].load(a, 0, stride=16)
    tb = MatB[f16, 16, 64, cd.Workgroup].load(a, 0, stride=64)
    acc = cd.muladd(ta, tb, Acc[f32, 64, 64, cd.Workgroup].splat(0.0))
    acc.store(c, 0, stride=64)


def test_workgroup_scope_with_spec_constant_workgroup_size():
    compile_checked(workgroup_scope, r"OpTypeCooperativeMatrixKHR %half %uint_2 %uint_64 %uint_16 %uint_0",
                    r"LocalSizeId %WG")


@cd.kernel(workgroup_size=("WG", 1, "WZ"), target_env="vulkan1.2")
def spec_workgroup_old_target(out: cd.Buffer[u32], WG: cd.Spec[u32, 3] = 64, WZ: cd.Spec[u32, 4] = 1):
    i = cd.global_invocation_id.x + cd.global_invocation_id.z * 1000
    out[i] = cd.local_invocation_id.x + WG * 100


def test_a_spec_constant_workgroup_size_before_vulkan_1_3_is_the_workgroup_size_builtin():
    # Vulkan takes LocalSizeId from SPIR-V 1.6 (Vulkan 1.3); before, a spec-constant uvec3 decorated BuiltIn
    # WorkgroupSize (glslang's local_size_x_id), which overrides LocalSize (it was an InternalCompilerError:
    # spirv-val refuses LocalSizeId there; found by a docs-only check)
    for env in ("vulkan1.1", "vulkan1.2"):
        text = compile_checked(spec_workgroup_old_target,
                               r"OpExecutionMode %spec_workgroup_old_target LocalSize 64 1 1",
                               r"OpDecorate (%\w+) BuiltIn WorkgroupSize",
                               r"= OpSpecConstantComposite %v3uint %WG %uint_1 %WZ", target_env=env,
                               absent=("LocalSizeId",))
    compile_checked(spec_workgroup_old_target, r"LocalSizeId %WG %uint_1 %WZ", target_env="vulkan1.3",
                    absent=("BuiltIn WorkgroupSize",))
    assert text


@pytest.mark.vulkan
@pytest.mark.parametrize("wg", [32, 64])
def test_the_workgroup_size_builtin_sizes_the_workgroup_on_a_vulkan_device(device, wg):
    out = np.zeros(2 * wg, np.uint32)
    spec_workgroup_old_target.launch((2, 1, 1), out, WG=wg, device=device)
    np.testing.assert_array_equal(out, np.arange(2 * wg) % wg + wg * 100)


def test_compile_takes_spec_as_a_dict():
    # a list reached "'list' object has no attribute 'items'" (found by a docs-only check)
    with pytest.raises(TypeError, match=r"spec_tiles.compile: spec must be a dict of specialization-constant values "
                                        r"by name, got list"):
        spec_tiles.compile(spec=[1])
