"""Subgroup operations (scope Subgroup): their type rules and documentation.

The ops are declared in :mod:`coopdsl.ir.ops.subgroup`; the SPIR-V lowering
picks the F/I/S/U GroupNonUniform instruction from the value's type and the
grammar tables add the capabilities (GroupNonUniform, ...Vote, ...Arithmetic,
...Ballot, ...Shuffle, ...ShuffleRelative).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import ArgumentError, TypeMismatchError
from ..ir import types as T
from ..ir.core import Const, Value
from . import arith
from .conversions import Bool, Index, Runtime, exchangeable, numeric
from .registry import BUILTINS, Builtin, make_builtin

if TYPE_CHECKING:
    from .context import Builder

ARITH = {  # name -> (takes floats, instruction family named in the docs)
    "add": (True, "OpGroupNonUniformFAdd/IAdd"), "mul": (True, "OpGroupNonUniformFMul/IMul"),
    "min": (True, "OpGroupNonUniformFMin/SMin/UMin"), "max": (True, "OpGroupNonUniformFMax/SMax/UMax"),
    "and": (False, "OpGroupNonUniformBitwiseAnd"), "or": (False, "OpGroupNonUniformBitwiseOr"),
    "xor": (False, "OpGroupNonUniformBitwiseXor"),
}
GROUP_OPS = {"": "reduce", "inclusive_": "inclusive_scan", "exclusive_": "exclusive_scan"}


NUMERIC = Runtime(numeric, "{name}() takes a numeric scalar or vector (not {type})", numbers=True)
LANE_VALUE = Runtime(exchangeable, "{name}() takes a scalar or vector of numbers or bools (not {type})")
BALLOT = Runtime(lambda t: t == T.VectorType(T.u32, 4),
                 "{name}() takes a ballot: a vec4[u32] such as cd.subgroup_ballot(b) gives (not {type})")


def _arith(op: str, prefix: str) -> Builtin:
    name = f"subgroup_{prefix}{op}"

    def impl(cg: Builder, value: Value) -> Value:
        if T.scalar_of(value.type).is_float and not ARITH[op][0]:
            raise TypeMismatchError(f"{name}() takes integers, got {value.type}", cg.em.loc)
        return cg.em.op("subgroup_reduce", value.type, [value], op=op, mode=GROUP_OPS[prefix])

    what = {"": "reduction", "inclusive_": "inclusive scan", "exclusive_": "exclusive scan"}[prefix]
    return make_builtin(name, impl, f"Subgroup {what} with {op} ({ARITH[op][1]} ...); a Python number is an i32 or "
                        f"f32 constant, as GLSL's literals are (``subgroup_{prefix}{op}(1)`` over the active "
                        f"invocations).", "(value)",
                        {"value": NUMERIC})


MAX_CLUSTER = 128   # a subgroup has at most 128 invocations (Vulkan)


def _clustered(op: str) -> Builtin:
    name = f"subgroup_clustered_{op}"

    def impl(cg: Builder, value: Value, cluster: Any) -> Value:
        if isinstance(cluster, bool) or not isinstance(cluster, int) or not 1 <= cluster <= MAX_CLUSTER or \
                cluster & (cluster - 1):
            raise ArgumentError(f"{name}() cluster size must be a compile-time power of two from 1 to "
                                f"{MAX_CLUSTER} (SPIR-V's ClusterSize), got {cg.describe(cluster)}", cg.em.loc)
        if T.scalar_of(value.type).is_float and not ARITH[op][0]:
            raise TypeMismatchError(f"{name}() takes integers, got {value.type}", cg.em.loc)
        return cg.em.op("subgroup_reduce", value.type, [value], op=op, mode="clustered_reduce", cluster=cluster)

    return make_builtin(name, impl, f"Reduction with {op} over each aligned cluster of ``cluster`` invocations "
                        f"(a compile-time power of two, at most the subgroup size): lanes 0 .. cluster - 1, the "
                        f"next cluster, ...; inactive invocations take no part ({ARITH[op][1]} ClusteredReduce; "
                        f"GLSL subgroupClustered{op.capitalize()}). A Python number is an i32 or f32 constant.",
                        "(value, cluster)", {"value": NUMERIC})


def _quad_broadcast(cg: Builder, v: Value, index: Any) -> Value:
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= 3:
        raise ArgumentError(f"subgroup_quad_broadcast() index must be a compile-time int from 0 to 3 (a lane of the "
                            f"quad), got {cg.describe(index)}", cg.em.loc)
    return cg.em.op("subgroup_quad", v.type, [v], mode="broadcast", index=index)


def _quad_swap(mode: str) -> Callable[..., Value]:
    def impl(cg: Builder, v: Value) -> Value:
        return cg.em.op("subgroup_quad", v.type, [v], mode=mode)
    return impl


def _elect(cg: Builder) -> Value:
    return cg.em.op("subgroup_elect", T.boolean, [])


def _vote(kind: str) -> Callable[..., Value]:
    def impl(cg: Builder, b: Value) -> Value:
        return cg.em.op(f"subgroup_{kind}", T.boolean, [b])
    return impl


def _all_equal(cg: Builder, v: Value) -> Value:
    return cg.em.op("subgroup_all_equal", T.boolean, [v])


MAX_SUBGROUP_SIZE = 128  # Vulkan: subgroupSize is at most 128, so lanes and ballot bits are 0..127


def _broadcast(cg: Builder, v: Value, lane: Any) -> Value:
    if isinstance(lane, int) and not isinstance(lane, bool):
        if lane >= MAX_SUBGROUP_SIZE:
            raise ArgumentError(f"subgroup_broadcast() lane {lane} is in no subgroup: a subgroup has at most "
                                f"{MAX_SUBGROUP_SIZE} invocations (lanes 0 to {MAX_SUBGROUP_SIZE - 1})", cg.em.loc)
        return cg.em.op("subgroup_broadcast", v.type, [v, arith.literal(cg.em, lane, T.u32)])
    lane = cg.as_index(lane, "the lane")  # a runtime lane: a shuffle (Broadcast needs a constant before 1.5)
    if lane.type != T.u32:  # (SPIR-V: an unsigned id, as for the shuffles)
        raise TypeMismatchError(f"subgroup_broadcast() lane must be u32 or a Python int, got {lane.type}",
                                cg.em.loc)
    return cg.em.op("subgroup_shuffle", v.type, [v, lane], mode="index")


def _broadcast_first(cg: Builder, v: Value) -> Value:
    return cg.em.op("subgroup_broadcast_first", v.type, [v])


def _ballot(cg: Builder, b: Value) -> Value:
    return cg.em.op("subgroup_ballot", T.VectorType(T.u32, 4), [b])


def _ballot_bits(query: str, result: T.Type) -> Callable[..., Value]:
    def impl(cg: Builder, ballot: Value, index: Value | None = None) -> Value:
        if index is not None and index.type != T.u32:  # (SPIR-V: an unsigned index)
            raise TypeMismatchError(f"subgroup_ballot_bit_extract() index must be u32, got {index.type}", cg.em.loc)
        if isinstance(index, Const) and isinstance(index.value, int) and index.value >= MAX_SUBGROUP_SIZE:
            raise ArgumentError(f"subgroup_ballot_bit_extract() index {index.value} is past every subgroup: a ballot "
                                f"has a bit per invocation, at most {MAX_SUBGROUP_SIZE} (bits 0 to "
                                f"{MAX_SUBGROUP_SIZE - 1})", cg.em.loc)
        operands = [ballot] if index is None else [ballot, index]
        return cg.em.op("subgroup_ballot_bits", result, operands, query=query)
    return impl


def _shuffle(kind: str, mode: str) -> Callable[..., Value]:
    name = f"subgroup_shuffle{kind}"

    def impl(cg: Builder, v: Value, **lane_mask_or_delta: Value) -> Value:
        ((param, lane),) = lane_mask_or_delta.items()  # named as the parameter: lane, mask or delta
        if lane.type != T.u32:
            raise TypeMismatchError(f"{name}() {param} must be u32, got {lane.type}", cg.em.loc)
        return cg.em.op("subgroup_shuffle", v.type, [v, lane], mode=mode)
    return impl


SUBGROUP: dict[str, Builtin] = {}
for _op in ARITH:
    for _prefix in GROUP_OPS:
        _b = _arith(_op, _prefix)
        SUBGROUP[_b.name] = _b
    _b = _clustered(_op)
    SUBGROUP[_b.name] = _b
_LANE = Index("the lane")
_DELTA = Index("the delta")
for _name, _impl, _doc, _sig, _conversions in (
        ("subgroup_elect", _elect, "True in exactly one active invocation (OpGroupNonUniformElect).", "()", {}),
        ("subgroup_quad_broadcast", _quad_broadcast, "The value of lane ``index`` (a compile-time 0 to 3) of this "
         "invocation's quad, the four neighbouring lanes 4q .. 4q + 3 (OpGroupNonUniformQuadBroadcast; GLSL "
         "subgroupQuadBroadcast).", "(v, index)", {"v": LANE_VALUE}),
        ("subgroup_quad_swap_horizontal", _quad_swap("swap_horizontal"), "The value of the quad's lane beside this "
         "one, lane ^ 1 (OpGroupNonUniformQuadSwap Direction 0; GLSL subgroupQuadSwapHorizontal).", "(v)",
         {"v": LANE_VALUE}),
        ("subgroup_quad_swap_vertical", _quad_swap("swap_vertical"), "The value of the quad's lane ^ 2 "
         "(OpGroupNonUniformQuadSwap Direction 1; GLSL subgroupQuadSwapVertical).", "(v)", {"v": LANE_VALUE}),
        ("subgroup_quad_swap_diagonal", _quad_swap("swap_diagonal"), "The value of the quad's lane ^ 3 "
         "(OpGroupNonUniformQuadSwap Direction 2; GLSL subgroupQuadSwapDiagonal).", "(v)", {"v": LANE_VALUE}),
        ("subgroup_all", _vote("all"), "True if the bool is true in every active invocation.", "(b)",
         {"b": Bool()}),
        ("subgroup_any", _vote("any"), "True if the bool is true in any active invocation.", "(b)", {"b": Bool()}),
        ("subgroup_all_equal", _all_equal, "True if every active invocation has the same value.", "(v)",
         {"v": LANE_VALUE}),
        ("subgroup_broadcast", _broadcast,
         "The value of invocation ``lane`` (a constant, 0 to 127: OpGroupNonUniformBroadcast; runtime: Shuffle).",
         "(v, lane)",
         {"v": LANE_VALUE}),
        ("subgroup_broadcast_first", _broadcast_first, "The value of the lowest active invocation.", "(v)",
         {"v": LANE_VALUE}),
        ("subgroup_ballot", _ballot, "uvec4 bit mask of the invocations where the bool is true "
         "(``cd.subgroup_ballot(True)``: the active invocations).", "(b)", {"b": Bool()}),
        ("subgroup_ballot_bit_count", _ballot_bits("count", T.u32),
         "How many invocations of the subgroup ``ballot`` has set (OpGroupNonUniformBallotBitCount Reduce; GLSL "
         "subgroupBallotBitCount; HLSL WaveActiveCountBits(b) is this of cd.subgroup_ballot(b)); here and in the "
         "other ballot queries, bits past the subgroup size do not count.", "(ballot)",
         {"ballot": BALLOT}),
        ("subgroup_ballot_inclusive_bit_count", _ballot_bits("inclusive_count", T.u32),
         "How many bits of ``ballot`` are set up to this invocation's, its own included (BallotBitCount "
         "InclusiveScan).", "(ballot)", {"ballot": BALLOT}),
        ("subgroup_ballot_exclusive_bit_count", _ballot_bits("exclusive_count", T.u32),
         "How many bits of ``ballot`` are set below this invocation's (BallotBitCount ExclusiveScan; HLSL "
         "WavePrefixCountBits(b) is this of cd.subgroup_ballot(b)): a lane's slot among the lanes that keep a value.",
         "(ballot)", {"ballot": BALLOT}),
        ("subgroup_ballot_find_lsb", _ballot_bits("find_lsb", T.u32),
         "The lowest invocation whose bit ``ballot`` has set (OpGroupNonUniformBallotFindLSB; undefined for no "
         "bit: the interpreter gives 0xFFFFFFFF).", "(ballot)", {"ballot": BALLOT}),
        ("subgroup_ballot_find_msb", _ballot_bits("find_msb", T.u32),
         "The highest invocation whose bit ``ballot`` has set (OpGroupNonUniformBallotFindMSB; undefined for no "
         "bit: the interpreter gives 0xFFFFFFFF).", "(ballot)", {"ballot": BALLOT}),
        ("subgroup_inverse_ballot", _ballot_bits("inverse", T.boolean),
         "Whether ``ballot`` has this invocation's bit set (OpGroupNonUniformInverseBallot; ``ballot`` must be "
         "the same in every active invocation).", "(ballot)", {"ballot": BALLOT}),
        ("subgroup_ballot_bit_extract", _ballot_bits("extract", T.boolean),
         "Whether ``ballot`` has bit ``index`` set (OpGroupNonUniformBallotBitExtract): ``index`` a u32 below the "
         "subgroup size (SPIR-V leaves the result undefined past it; the interpreter reports it).", "(ballot, index)",
         {"ballot": BALLOT, "index": Index("the bit index")}),
        ("subgroup_shuffle", _shuffle("", "index"), "The value of invocation ``lane``.",
         "(v, lane)", {"v": LANE_VALUE, "lane": _LANE}),
        ("subgroup_shuffle_xor", _shuffle("_xor", "xor"),
         "The value of invocation ``id ^ mask``.", "(v, mask)", {"v": LANE_VALUE, "mask": Index("the mask")}),
        ("subgroup_shuffle_up", _shuffle("_up", "up"),
         "The value of invocation ``id - delta``.", "(v, delta)", {"v": LANE_VALUE, "delta": _DELTA}),
        ("subgroup_shuffle_down", _shuffle("_down", "down"),
         "The value of invocation ``id + delta``.", "(v, delta)", {"v": LANE_VALUE, "delta": _DELTA})):
    SUBGROUP[_name] = make_builtin(_name, _impl, _doc, _sig, _conversions)
BUILTINS.update(SUBGROUP)
