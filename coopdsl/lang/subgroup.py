"""Subgroup operations (SPIR-V GroupNonUniform*, Subgroup scope).

The F/I/S/U instruction is chosen from the value's type; capabilities
(GroupNonUniform, ...Vote, ...Arithmetic, ...Ballot, ...Shuffle,
...ShuffleRelative) come from the grammar tables while encoding.
"""

from __future__ import annotations

from ..errors import ArgumentError, TypeMismatchError
from ..ir import types as T
from ..ir.core import Value
from ..ir.ops import OpDef, register_op
from .builtins import BUILTINS, Builtin

register_op("subgroup", OpDef(None, doc="OpGroupNonUniform*; attrs: spirv, group_op"))

ARITH = {  # name -> (float op, int op) with signed/unsigned min/max split below
    "add": ("OpGroupNonUniformFAdd", "OpGroupNonUniformIAdd"),
    "mul": ("OpGroupNonUniformFMul", "OpGroupNonUniformIMul"),
    "min": ("OpGroupNonUniformFMin", ("OpGroupNonUniformSMin", "OpGroupNonUniformUMin")),
    "max": ("OpGroupNonUniformFMax", ("OpGroupNonUniformSMax", "OpGroupNonUniformUMax")),
    "and": (None, "OpGroupNonUniformBitwiseAnd"),
    "or": (None, "OpGroupNonUniformBitwiseOr"),
    "xor": (None, "OpGroupNonUniformBitwiseXor"),
}
GROUP_OPS = {"": "Reduce", "inclusive_": "InclusiveScan", "exclusive_": "ExclusiveScan"}


def _numeric(cg, name, v) -> Value:
    v = cg.as_runtime(v)
    e = T.elem_of(v.type)
    if not isinstance(v.type, (T.ScalarType, T.VectorType)) or e.kind == "bool" or (e.kind == "float" and not e.is_ieee):
        raise TypeMismatchError(f"{name}() takes a numeric scalar or vector (not {v.type})", cg.em.loc)
    return v


def _args(cg, name, args, kwargs, n):
    if kwargs or len(args) != n:
        raise ArgumentError(f"{name}() takes {n} argument{'s' if n != 1 else ''}", cg.em.loc)
    return args


def _arith(op, prefix):
    name = f"subgroup_{prefix}{op}"

    def impl(cg, args, kwargs):
        (v,) = _args(cg, name, args, kwargs, 1)
        v = _numeric(cg, name, v)
        e = T.elem_of(v.type)
        fop, iop = ARITH[op]
        spirv = fop if e.kind == "float" else (iop if isinstance(iop, str) else iop[0 if e.signed else 1])
        if spirv is None:
            raise TypeMismatchError(f"{name}() takes integers, got {v.type}", cg.em.loc)
        return cg.em.op("subgroup", v.type, [v], spirv=spirv, group_op=GROUP_OPS[prefix])

    what = {"": "reduction", "inclusive_": "inclusive scan", "exclusive_": "exclusive scan"}[prefix]
    return Builtin(name, impl, f"Subgroup {what} with {op} ({ARITH[op][0] or ARITH[op][1]} ...).", "(value)")


def _elect(cg, args, kwargs):
    _args(cg, "subgroup_elect", args, kwargs, 0)
    return cg.em.op("subgroup", T.boolean, [], spirv="OpGroupNonUniformElect", group_op=None)


def _vote(kind):
    def impl(cg, args, kwargs):
        (b,) = _args(cg, f"subgroup_{kind}", args, kwargs, 1)
        b = cg.as_runtime(b) if not isinstance(b, bool) else cg.em.const(T.boolean, b)
        if b.type != T.boolean:
            raise TypeMismatchError(f"subgroup_{kind}() takes a bool, got {b.type}", cg.em.loc)
        return cg.em.op("subgroup", T.boolean, [b], spirv=f"OpGroupNonUniform{kind.capitalize()}", group_op=None)
    return impl


def _all_equal(cg, args, kwargs):
    (v,) = _args(cg, "subgroup_all_equal", args, kwargs, 1)
    v = cg.as_runtime(v)
    return cg.em.op("subgroup", T.boolean, [v], spirv="OpGroupNonUniformAllEqual", group_op=None)


def _broadcast(cg, args, kwargs):
    v, lane = _args(cg, "subgroup_broadcast", args, kwargs, 2)
    v = cg.as_runtime(v)
    if isinstance(lane, int) and not isinstance(lane, bool):
        return cg.em.op("subgroup", v.type, [v, cg.em.literal(lane, T.u32)], spirv="OpGroupNonUniformBroadcast",
                        group_op=None)
    lane = cg.as_index(lane, "the lane")  # a runtime lane: a shuffle (Broadcast needs a constant before 1.5)
    return cg.em.op("subgroup", v.type, [v, lane], spirv="OpGroupNonUniformShuffle", group_op=None)


def _broadcast_first(cg, args, kwargs):
    (v,) = _args(cg, "subgroup_broadcast_first", args, kwargs, 1)
    v = cg.as_runtime(v)
    return cg.em.op("subgroup", v.type, [v], spirv="OpGroupNonUniformBroadcastFirst", group_op=None)


def _ballot(cg, args, kwargs):
    (b,) = _args(cg, "subgroup_ballot", args, kwargs, 1)
    b = cg.as_runtime(b)
    if b.type != T.boolean:
        raise TypeMismatchError(f"subgroup_ballot() takes a bool, got {b.type}", cg.em.loc)
    return cg.em.op("subgroup", T.VectorType(T.u32, 4), [b], spirv="OpGroupNonUniformBallot", group_op=None)


def _shuffle(kind, spirv):
    name = f"subgroup_shuffle{kind}"

    def impl(cg, args, kwargs):
        v, lane = _args(cg, name, args, kwargs, 2)
        v = cg.as_runtime(v)
        lane = cg.as_index(lane, "the lane")
        if lane.type != T.u32:
            raise TypeMismatchError(f"{name}() lane must be u32, got {lane.type}", cg.em.loc)
        return cg.em.op("subgroup", v.type, [v, lane], spirv=spirv, group_op=None)
    return impl


SUBGROUP: dict[str, Builtin] = {}
for _op in ARITH:
    for _prefix in GROUP_OPS:
        _b = _arith(_op, _prefix)
        SUBGROUP[_b.name] = _b
for _name, _impl, _doc, _sig in (
        ("subgroup_elect", _elect, "True in exactly one active invocation (OpGroupNonUniformElect).", "()"),
        ("subgroup_all", _vote("all"), "True if the bool is true in every active invocation.", "(b)"),
        ("subgroup_any", _vote("any"), "True if the bool is true in any active invocation.", "(b)"),
        ("subgroup_all_equal", _all_equal, "True if every active invocation has the same value.", "(v)"),
        ("subgroup_broadcast", _broadcast,
         "The value of invocation ``lane`` (a constant: OpGroupNonUniformBroadcast; runtime: Shuffle).", "(v, lane)"),
        ("subgroup_broadcast_first", _broadcast_first, "The value of the lowest active invocation.", "(v)"),
        ("subgroup_ballot", _ballot, "uvec4 bit mask of the invocations where the bool is true.", "(b)"),
        ("subgroup_shuffle", _shuffle("", "OpGroupNonUniformShuffle"), "The value of invocation ``lane``.",
         "(v, lane)"),
        ("subgroup_shuffle_xor", _shuffle("_xor", "OpGroupNonUniformShuffleXor"),
         "The value of invocation ``id ^ mask``.", "(v, mask)"),
        ("subgroup_shuffle_up", _shuffle("_up", "OpGroupNonUniformShuffleUp"),
         "The value of invocation ``id - delta``.", "(v, delta)"),
        ("subgroup_shuffle_down", _shuffle("_down", "OpGroupNonUniformShuffleDown"),
         "The value of invocation ``id + delta``.", "(v, delta)")):
    SUBGROUP[_name] = Builtin(_name, _impl, _doc, _sig)
BUILTINS.update(SUBGROUP)
