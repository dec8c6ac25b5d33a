"""Specialization constants as matrix dimensions, derived constants (OpSpecConstantOp), LocalSizeId."""

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
