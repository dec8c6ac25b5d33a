"""Subgroup operations: votes, broadcasts, ballots, shuffles, reductions and scans."""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import ArgumentError, TypeMismatchError, f32, i32, u32
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
    assert len(SUBGROUP) == 21 + 7 + 11 + 4 + 7   # reductions and scans, clustered reductions, quads, the others


@cd.kernel(workgroup_size=(64, 1, 1))
def ballot_queries(x: cd.Buffer[f32], z: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    bal = cd.subgroup_ballot(x[i] > 0.0)
    z[i] = (cd.subgroup_ballot_bit_count(bal) + cd.subgroup_ballot_inclusive_bit_count(bal)
            + cd.subgroup_ballot_exclusive_bit_count(bal) + cd.subgroup_ballot_find_lsb(bal)
            + cd.subgroup_ballot_find_msb(bal) + u32(cd.subgroup_inverse_ballot(bal))
            + u32(cd.subgroup_ballot_bit_extract(bal, 7)) + u32(cd.subgroup_ballot_bit_extract(bal, z[0])))


def test_ballot_bit_queries():
    """GLSL's subgroupBallotBitCount, Inclusive/ExclusiveBitCount, FindLSB/MSB, InverseBallot, BitExtract."""
    compile_checked(
        ballot_queries, r"OpCapability GroupNonUniformBallot",
        r"OpGroupNonUniformBallotBitCount %uint %uint_3 Reduce %\w+",
        r"OpGroupNonUniformBallotBitCount %uint %uint_3 InclusiveScan %\w+",
        r"OpGroupNonUniformBallotBitCount %uint %uint_3 ExclusiveScan %\w+",
        r"OpGroupNonUniformBallotFindLSB %uint %uint_3 %\w+", r"OpGroupNonUniformBallotFindMSB %uint %uint_3 %\w+",
        r"OpGroupNonUniformInverseBallot %bool %uint_3 %\w+",
        r"OpGroupNonUniformBallotBitExtract %bool %uint_3 %\w+ %uint_7",
        r"OpGroupNonUniformBallotBitExtract %bool %uint_3 %\w+ %\w+")


@cd.kernel(workgroup_size=(64, 1, 1))
def lane_masks(z: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    z[i] = (cd.subgroup_eq_mask.x + cd.subgroup_ge_mask.y + cd.subgroup_gt_mask.z + cd.subgroup_le_mask.w
            + cd.subgroup_ballot_bit_count(cd.subgroup_lt_mask))


def test_lane_masks_are_the_core_ballot_builtins():
    """gl_SubgroupEq/Ge/Gt/Le/LtMask: BuiltIn SubgroupEqMask ... with GroupNonUniformBallot, as glslang declares
    them for GL_KHR_shader_subgroup_ballot, not SPV_KHR_shader_ballot's SubgroupBallotKHR (the grammar lists
    both; the core one is taken)."""
    for env in ("vulkan1.1", "vulkan1.3"):
        compile_checked(lane_masks, r"OpCapability GroupNonUniformBallot", *(
            rf"OpDecorate %\w+ BuiltIn Subgroup{k}Mask\n" for k in ("Eq", "Ge", "Gt", "Le", "Lt")),
            target_env=env, absent=(r"SubgroupBallotKHR", r"SPV_KHR_shader_ballot"))


@cd.kernel(workgroup_size=(32, 1, 1))
def k_count_of_a_bool(x: cd.Buffer[f32], z: cd.Buffer[u32]):
    z[0] = cd.subgroup_ballot_bit_count(x[0] > 0.0)  # E:bool


@cd.kernel(workgroup_size=(32, 1, 1))
def k_extract_signed(x: cd.Buffer[f32], z: cd.Buffer[u32]):
    bal = cd.subgroup_ballot(x[0] > 0.0)
    z[0] = u32(cd.subgroup_ballot_bit_extract(bal, i32(z[1])))  # E:signed


@cd.kernel(workgroup_size=(32, 1, 1))
def k_inverse_of_a_vec4_f32(x: cd.Buffer[f32], z: cd.Buffer[u32]):
    z[0] = u32(cd.subgroup_inverse_ballot(cd.vec4[f32](x[0], x[1], x[2], x[3])))  # E:vecf


def test_ballot_queries_take_a_ballot_and_an_unsigned_index():
    expect_error(k_count_of_a_bool, TypeMismatchError,
                 "subgroup_ballot_bit_count() takes a ballot: a vec4[u32] such as cd.subgroup_ballot(b) gives "
                 "(not bool)", "# E:bool", 12)
    expect_error(k_extract_signed, TypeMismatchError, "subgroup_ballot_bit_extract() index must be u32, got i32",
                 "# E:signed", 16)
    expect_error(k_inverse_of_a_vec4_f32, TypeMismatchError, "subgroup_inverse_ballot() takes a ballot",
                 "# E:vecf", 16)


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


@cd.kernel(workgroup_size=(64, 1, 1))
def count_lanes(x: cd.Buffer[f32], n: cd.Buffer[i32]):
    i = cd.global_invocation_id.x
    x[i] = cd.subgroup_add(1.0)             # GLSL's subgroupAdd(1.0): the literal is an f32
    if i % 3 == 0:
        n[i] = cd.subgroup_add(1)           # ... and 1 an i32
        n[i + 1] = cd.subgroup_exclusive_add(2)


def test_a_subgroup_reduction_of_a_number_takes_the_literals_type():
    compile_checked(count_lanes, r"OpGroupNonUniformFAdd %float %\w+ Reduce %float_1",
                    r"OpGroupNonUniformIAdd %int %\w+ Reduce %int_1", r"OpGroupNonUniformIAdd %int %\w+ ExclusiveScan")
    x, n = np.zeros(64, np.float32), np.zeros(66, np.int32)
    count_lanes.launch((1, 1, 1), x, n, device="cpu")   # (subgroups of 32 on the interpreter)
    assert x.tolist() == [32.0] * 64
    assert n[0] == n[3] == 11 and n[33] == 11 and (n[1], n[4], n[7]) == (0, 2, 4)


@cd.kernel(workgroup_size=(32, 1, 1))
def reduce_a_bool_number(n: cd.Buffer[i32]):
    n[0] = cd.subgroup_add(True)  # E:sg-bool


def test_a_subgroup_reduction_of_a_bool_number_is_refused():
    expect_error(reduce_a_bool_number, TypeMismatchError, "subgroup_add() takes a numeric scalar or vector (not bool)",
                 "# E:sg-bool", 12)


@cd.kernel(workgroup_size=(64, 1, 1))
def clustered(x: cd.Buffer[f32], k: cd.Buffer[u32], o: cd.Buffer[f32], p: cd.Buffer[u32], q: cd.Buffer[i32]):
    i = cd.global_invocation_id.x
    o[i] = cd.subgroup_clustered_add(x[i], 4)
    p[i] = cd.subgroup_clustered_or(k[i], 8)
    if i % 3 != 0:                                  # inactive invocations take no part
        q[i] = cd.subgroup_clustered_max(i32(i), 2) + cd.subgroup_clustered_add(1, 4)


def test_clustered_reductions_reduce_each_aligned_cluster_of_active_invocations():
    """GLSL's subgroupClusteredAdd etc. (GL_KHR_shader_subgroup_clustered): OpGroupNonUniform* ClusteredReduce
    with the ClusterSize constant, capability GroupNonUniformClustered."""
    compile_checked(clustered, r"OpCapability GroupNonUniformClustered",
                    r"OpGroupNonUniformFAdd %float %\w+ ClusteredReduce %\w+ %uint_4",
                    r"OpGroupNonUniformBitwiseOr %uint %\w+ ClusteredReduce %\w+ %uint_8",
                    r"OpGroupNonUniformSMax %int %\w+ ClusteredReduce %\w+ %uint_2")
    x, k = np.arange(64, dtype=np.float32), (1 << (np.arange(64) % 32)).astype(np.uint32)
    o, p, q = np.zeros(64, np.float32), np.zeros(64, np.uint32), np.full(64, -1, np.int32)
    clustered.launch((1, 1, 1), x, k, o, p, q, device="cpu")
    assert o.tolist() == x.reshape(-1, 4).sum(1).repeat(4).tolist()
    assert p.tolist() == np.bitwise_or.reduce(k.reshape(-1, 8), axis=1).repeat(8).tolist()
    active = np.arange(64) % 3 != 0
    want = np.full(64, -1)
    for i in np.flatnonzero(active):
        pair, four = range(i // 2 * 2, i // 2 * 2 + 2), range(i // 4 * 4, i // 4 * 4 + 4)
        want[i] = max(j for j in pair if active[j]) + sum(1 for j in four if active[j])
    assert q.tolist() == want.tolist()


@cd.kernel(workgroup_size=(32, 1, 1))
def cluster_of_three(x: cd.Buffer[f32]):
    x[0] = cd.subgroup_clustered_add(x[1], 3)  # E:cluster-three


@cd.kernel(workgroup_size=(32, 1, 1))
def cluster_of_floats_or(x: cd.Buffer[f32]):
    x[0] = cd.subgroup_clustered_or(x[1], 4)  # E:cluster-float


@cd.kernel(workgroup_size=(32, 1, 1))
def cluster_wider_than_the_subgroup(x: cd.Buffer[f32]):
    x[0] = cd.subgroup_clustered_add(x[1], 64)  # E:cluster-wide


def test_a_cluster_size_must_be_a_power_of_two_and_no_wider_than_the_subgroup():
    expect_error(cluster_of_three, ArgumentError, "subgroup_clustered_add() cluster size must be a compile-time power "
                 "of two from 1 to 128 (SPIR-V's ClusterSize), got the number 3", "# E:cluster-three", 12)
    expect_error(cluster_of_floats_or, TypeMismatchError, "subgroup_clustered_or() takes integers, got f32",
                 "# E:cluster-float", 12)
    from coopdsl.interp import InterpreterError

    with pytest.raises(InterpreterError, match="cluster of 64 invocations is larger than the subgroup \\(32 "
                                               "invocations\\): undefined in SPIR-V") as e:
        cluster_wider_than_the_subgroup.launch((1, 1, 1), np.zeros(2, np.float32), device="cpu")
    assert e.value.loc.line == cluster_wider_than_the_subgroup.fn.__code__.co_firstlineno + 2


@cd.kernel(workgroup_size=(16, 1, 1))
def quads(x: cd.Buffer[u32], v: cd.Buffer[cd.vec2[f32]], o: cd.Buffer[u32], w: cd.Buffer[cd.vec2[f32]]):
    i = cd.global_invocation_id.x
    o[i * 4] = cd.subgroup_quad_broadcast(x[i], 2)
    o[i * 4 + 1] = cd.subgroup_quad_swap_horizontal(x[i])
    o[i * 4 + 2] = cd.subgroup_quad_swap_vertical(x[i])
    o[i * 4 + 3] = cd.subgroup_quad_swap_diagonal(x[i])
    w[i] = cd.subgroup_quad_swap_diagonal(v[i])


def test_quad_operations_read_the_quads_other_lanes():
    """GLSL's subgroupQuadBroadcast and subgroupQuadSwap* (GL_KHR_shader_subgroup_quad): capability
    GroupNonUniformQuad; a quad is lanes 4q .. 4q + 3."""
    compile_checked(quads, r"OpCapability GroupNonUniformQuad",
                    r"OpGroupNonUniformQuadBroadcast %uint %\w+ %\w+ %uint_2",
                    r"OpGroupNonUniformQuadSwap %uint %\w+ %\w+ %uint_0",
                    r"OpGroupNonUniformQuadSwap %uint %\w+ %\w+ %uint_1",
                    r"OpGroupNonUniformQuadSwap %v2float %\w+ %\w+ %uint_2")
    x = np.arange(16, dtype=np.uint32) * 10
    v = np.arange(32, dtype=np.float32).reshape(16, 2)
    o, w = np.zeros(64, np.uint32), np.zeros((16, 2), np.float32)
    quads.launch((1, 1, 1), x, v, o, w, device="cpu")
    lane = np.arange(16)
    assert o.reshape(16, 4).tolist() == np.stack([x[(lane & ~3) + 2], x[lane ^ 1], x[lane ^ 2], x[lane ^ 3]],
                                                 axis=1).tolist()
    assert w.tolist() == v[lane ^ 3].tolist()


@cd.kernel(workgroup_size=(32, 1, 1))
def quad_broadcast_of_lane_four(x: cd.Buffer[f32]):
    x[0] = cd.subgroup_quad_broadcast(x[1], 4)  # E:quad-four


def test_a_quad_broadcast_reads_lane_0_to_3():
    expect_error(quad_broadcast_of_lane_four, ArgumentError, "subgroup_quad_broadcast() index must be a compile-time "
                 "int from 0 to 3 (a lane of the quad), got the number 4", "# E:quad-four", 12)


@cd.kernel(workgroup_size=(32, 1, 1), subgroup_size=8)
def cluster_wider_than_the_required_subgroup(x: cd.Buffer[f32]):
    x[0] = cd.subgroup_clustered_add(x[1], 16)  # E:cluster-required


def test_a_cluster_wider_than_the_required_subgroup_size_is_a_compile_error():
    expect_error(cluster_wider_than_the_required_subgroup, cd.CompileError, "a clustered reduction's cluster of 16 "
                 "invocations is wider than the subgroup this kernel requires (8 invocations, its subgroup_size)",
                 "# E:cluster-required", 12)
