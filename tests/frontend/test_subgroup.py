"""Subgroup operations: votes, broadcasts, ballots, shuffles, reductions and scans."""

import coopdsl as cd
from coopdsl import TypeMismatchError, f32, i32, u32
from coopdsl.lang.subgroup import SUBGROUP

from ..conftest import compile_checked, expect_error


@cd.kernel(workgroup_size=(64, 1, 1))
def everything(x: cd.Buffer[f32], y: cd.Buffer[i32], z: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    f, s, u = x[i], y[i], z[i]
    lane = cd.subgroup_invocation_id
    if cd.subgroup_elect() and cd.subgroup_all(f > 0.0) and cd.subgroup_any(s < 0) and cd.subgroup_all_equal(u):
        z[0] = 1
    x[i] = (cd.subgroup_add(f) + cd.subgroup_mul(f) + cd.subgroup_min(f) + cd.subgroup_max(f)
            + cd.subgroup_inclusive_add(f) + cd.subgroup_exclusive_mul(f) + cd.subgroup_broadcast(f, 3)
            + cd.subgroup_broadcast(f, lane ^ 1) + cd.subgroup_broadcast_first(f) + cd.subgroup_shuffle(f, lane)
            + cd.subgroup_shuffle_xor(f, 1) + cd.subgroup_shuffle_up(f, 1) + cd.subgroup_shuffle_down(f, 2))
    y[i] = cd.subgroup_add(s) + cd.subgroup_min(s) + cd.subgroup_max(s) + cd.subgroup_inclusive_max(s)
    z[i] = (cd.subgroup_min(u) + cd.subgroup_max(u) + cd.subgroup_and(u) + cd.subgroup_or(u) + cd.subgroup_xor(u)
            + cd.subgroup_exclusive_or(u) + cd.subgroup_ballot(u > 3).x)


def test_subgroup_operations():
    compile_checked(
        everything, r"OpCapability GroupNonUniform\n", r"OpCapability GroupNonUniformVote",
        r"OpCapability GroupNonUniformArithmetic", r"OpCapability GroupNonUniformBallot",
        r"OpCapability GroupNonUniformShuffle\n", r"OpCapability GroupNonUniformShuffleRelative",
        r"OpGroupNonUniformElect %bool %uint_3", r"OpGroupNonUniformAll ", r"OpGroupNonUniformAny ",
        r"OpGroupNonUniformAllEqual", r"OpGroupNonUniformFAdd %float %uint_3 Reduce",
        r"OpGroupNonUniformFAdd %float %uint_3 InclusiveScan", r"OpGroupNonUniformFMul %float %uint_3 ExclusiveScan",
        r"OpGroupNonUniformFMin", r"OpGroupNonUniformFMax", r"OpGroupNonUniformBroadcast %float %uint_3 %\w+ %uint_3",
        r"OpGroupNonUniformBroadcastFirst", r"OpGroupNonUniformShuffle ", r"OpGroupNonUniformShuffleXor",
        r"OpGroupNonUniformShuffleUp", r"OpGroupNonUniformShuffleDown", r"OpGroupNonUniformIAdd %int",
        r"OpGroupNonUniformSMin", r"OpGroupNonUniformSMax %int %uint_3 InclusiveScan", r"OpGroupNonUniformUMin",
        r"OpGroupNonUniformUMax", r"OpGroupNonUniformBitwiseAnd", r"OpGroupNonUniformBitwiseOr",
        r"OpGroupNonUniformBitwiseXor %uint %uint_3 Reduce", r"OpGroupNonUniformBitwiseOr %uint %uint_3 ExclusiveScan",
        r"OpGroupNonUniformBallot %v4uint")
    assert len(SUBGROUP) == 21 + 11


@cd.kernel(workgroup_size=(32, 1, 1))
def k_float_and(x: cd.Buffer[f32]):
    x[0] = cd.subgroup_and(x[1])  # E:sgand


def test_bitwise_reduction_on_floats():
    expect_error(k_float_and, TypeMismatchError, "subgroup_and() takes integers, got f32", "# E:sgand", 12)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_matrix(x: cd.Buffer[f32]):
    m = cd.Acc[f32, 16, 16].splat(0.0)
    y = cd.subgroup_add(m)  # E:sgmat


def test_subgroup_op_on_a_matrix():
    expect_error(k_matrix, TypeMismatchError, "subgroup_add() takes a numeric scalar or vector", "# E:sgmat", 9)
