"""Subgroup operations (scope Subgroup): votes, broadcasts, shuffles, reductions and scans."""

from __future__ import annotations

from typing import Any

from .. import types as T
from ..core import Module, Op
from .base import define, fail, integer, is_bool, is_numeric, result_is

REDUCTIONS = ("add", "mul", "min", "max", "and", "or", "xor")
MODES = ("reduce", "inclusive_scan", "exclusive_scan", "clustered_reduce")
MAX_CLUSTER = 128   # a subgroup has at most 128 invocations (Vulkan), so a cluster too
SHUFFLES = ("index", "xor", "up", "down")
BALLOT_QUERIES = {  # query -> (operands, result type)
    "count": (1, T.u32), "inclusive_count": (1, T.u32), "exclusive_count": (1, T.u32),
    "find_lsb": (1, T.u32), "find_msb": (1, T.u32), "inverse": (1, T.boolean), "extract": (2, T.boolean),
}


def _value(op: Op) -> None:
    t = op.operands[0].type
    if not isinstance(t, (T.ScalarType, T.VectorType)):
        fail(op, f"takes a scalar or vector, got {t}")
    result_is(op, t)


def _reduce(op: Op) -> None:
    _value(op)
    if not is_numeric(op.operands[0].type):
        fail(op, "takes numbers")
    if op.attrs["op"] not in REDUCTIONS or op.attrs["mode"] not in MODES:
        fail(op, f"unknown reduction {op.attrs['op']}/{op.attrs['mode']}")
    cluster = op.attrs.get("cluster")
    if (op.attrs["mode"] == "clustered_reduce") != (cluster is not None):
        fail(op, "a clustered reduction, and only it, has a cluster size")
    if cluster is not None and (cluster < 1 or cluster > MAX_CLUSTER or cluster & (cluster - 1)):
        fail(op, f"cluster size {cluster} is not a power of two from 1 to {MAX_CLUSTER}")


def cluster_problems(module: Module, subgroup_size: int) -> list[tuple[str, Any]]:
    """(message, location) of each clustered reduction of ``module`` whose cluster is wider than the subgroup size
    the kernel requires (undefined in SPIR-V; without a required size only the interpreter, at a launch, knows)."""
    return [(f"a clustered reduction's cluster of {op.attrs['cluster']} invocations is wider than the subgroup "
             f"this kernel requires ({subgroup_size} invocations, its subgroup_size): undefined in SPIR-V", op.loc)
            for f in module.functions for op in f.ops()
            if op.kind == "subgroup_reduce" and op.attrs.get("cluster", 0) > subgroup_size]


def _vote(op: Op) -> None:
    if op.operands and not is_bool(op.operands[0].type):
        fail(op, "votes on a bool")
    result_is(op, T.boolean)


def _all_equal(op: Op) -> None:
    result_is(op, T.boolean)


def _lane(op: Op) -> None:
    _value(op)
    integer(op, 1)
    if op.kind == "subgroup_shuffle" and op.attrs["mode"] not in SHUFFLES:
        fail(op, f"unknown shuffle {op.attrs['mode']}")


def _ballot(op: Op) -> None:
    if op.operands[0].type != T.boolean:
        fail(op, "takes a bool")
    result_is(op, T.VectorType(T.u32, 4))


def _ballot_bits(op: Op) -> None:
    query = op.attrs["query"]
    if query not in BALLOT_QUERIES:
        fail(op, f"unknown ballot query {query}")
    count, result = BALLOT_QUERIES[query]
    if len(op.operands) != count:
        fail(op, f"{query} takes {count} operand(s)")
    if op.operands[0].type != T.VectorType(T.u32, 4):
        fail(op, f"takes a ballot (vec4 of u32), got {op.operands[0].type}")
    if count == 2:
        integer(op, 1)
    result_is(op, result)


_SG = "subgroup"
define("subgroup_reduce", 1, attrs={"op": (str, True), "mode": (str, True), "cluster": (int, False)}, verify=_reduce,
       tangled=_SG, doc="reduction or scan of the value over the active invocations (clustered_reduce: over each "
                        "aligned cluster of `cluster` invocations)")
QUADS = {"broadcast": None, "swap_horizontal": 0, "swap_vertical": 1, "swap_diagonal": 2}   # mode -> Direction


def _quad(op: Op) -> None:
    _value(op)
    mode, index = op.attrs["mode"], op.attrs.get("index")
    if mode not in QUADS:
        fail(op, f"unknown quad operation {mode}")
    if (mode == "broadcast") != (index is not None) or index is not None and not 0 <= index <= 3:
        fail(op, "a quad broadcast, and only it, reads lane 0 .. 3 of its quad")


define("subgroup_quad", 1, attrs={"mode": (str, True), "index": (int, False)}, verify=_quad, tangled=_SG,
       doc="a value of another invocation of the quad (four neighbouring lanes): broadcast from lane `index`, or "
           "swapped horizontally (lane ^ 1), vertically (^ 2) or diagonally (^ 3)")
define("subgroup_elect", 0, verify=_vote, tangled=_SG, doc="true in exactly one active invocation")
define("subgroup_all", 1, verify=_vote, tangled=_SG, doc="true if the bool is true in every active invocation")
define("subgroup_any", 1, verify=_vote, tangled=_SG, doc="true if the bool is true in any active invocation")
define("subgroup_all_equal", 1, verify=_all_equal, tangled=_SG,
       doc="true if every active invocation has the same value")
define("subgroup_broadcast", 2, verify=_lane, tangled=_SG,
       doc="(value, constant lane): the value of that invocation")
define("subgroup_broadcast_first", 1, verify=_value, tangled=_SG,
       doc="the value of the lowest active invocation")
define("subgroup_ballot", 1, verify=_ballot, tangled=_SG, doc="bit mask of the invocations where the bool is true")
define("subgroup_ballot_bits", (1, 2), attrs={"query": (str, True)}, verify=_ballot_bits, tangled=_SG,
       doc="(ballot[, index]): a question about a ballot's bits by ``query``: how many are set (count, and up to "
           "this invocation's bit, with it or not), the lowest or highest set, this invocation's bit (inverse), "
           "the bit at index (extract)")
define("subgroup_shuffle", 2, attrs={"mode": (str, True)}, verify=_lane, tangled=_SG,
       doc="(value, lane): the value of invocation lane / id^lane / id-lane / id+lane by ``mode``")
