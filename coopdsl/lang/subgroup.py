"""Subgroup operations (scope Subgroup): their type rules and documentation.

The ops are declared in :mod:`coopdsl.ir.ops.subgroup`; the SPIR-V lowering
picks the F/I/S/U GroupNonUniform instruction from the value's type and the
grammar tables add the capabilities (GroupNonUniform, ...Vote, ...Arithmetic,
...Ballot, ...Shuffle, ...ShuffleRelative).
"""

from __future__ import annotations

from ..errors import ArgumentError, TypeMismatchError
from ..ir import types as T
from ..ir.core import Value
from .registry import BUILTINS, Builtin, make_builtin

ARITH = {  # name -> (takes floats, instruction family named in the docs)
    "add": (True, "OpGroupNonUniformFAdd/IAdd"), "mul": (True, "OpGroupNonUniformFMul/IMul"),
    "min": (True, "OpGroupNonUniformFMin/SMin/UMin"), "max": (True, "OpGroupNonUniformFMax/SMax/UMax"),
    "and": (False, "OpGroupNonUniformBitwiseAnd"), "or": (False, "OpGroupNonUniformBitwiseOr"),
    "xor": (False, "OpGroupNonUniformBitwiseXor"),
}
GROUP_OPS = {"": "reduce", "inclusive_": "inclusive_scan", "exclusive_": "exclusive_scan"}


def _numeric(cg, name, v) -> Value:
    v = cg.as_runtime(v)
    e = T.elem_of(v.type)
    if not isinstance(v.type, (T.ScalarType, T.VectorType)) or not isinstance(e, T.ScalarType) or e.kind == "bool" or \
            (e.kind == "float" and not e.is_ieee):
        raise TypeMismatchError(f"{name}() takes a numeric scalar or vector (not {v.type})", cg.em.loc)
    return v


def _lane_value(cg, name, v) -> Value:
    """A value the lanes of a subgroup exchange (broadcast, shuffle, all-equal): a runtime scalar or vector
    (numbers, bools), as the SPIR-V group instructions take; not a matrix, array, struct or pointer."""
    v = cg.as_runtime(v)
    e = T.elem_of(v.type)
    if not isinstance(v.type, (T.ScalarType, T.VectorType)) or not isinstance(e, T.ScalarType) or \
            (e.kind == "float" and not e.is_ieee):
        raise TypeMismatchError(f"{name}() takes a scalar or vector of numbers or bools (not {v.type})", cg.em.loc)
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
        if T.scalar_of(v.type).kind == "float" and not ARITH[op][0]:
            raise TypeMismatchError(f"{name}() takes integers, got {v.type}", cg.em.loc)
        return cg.em.op("subgroup_reduce", v.type, [v], op=op, mode=GROUP_OPS[prefix])

    what = {"": "reduction", "inclusive_": "inclusive scan", "exclusive_": "exclusive scan"}[prefix]
    return make_builtin(name, impl, f"Subgroup {what} with {op} ({ARITH[op][1]} ...).", "(value)")


def _elect(cg, args, kwargs):
    _args(cg, "subgroup_elect", args, kwargs, 0)
    return cg.em.op("subgroup_elect", T.boolean, [])


def _vote(kind):
    def impl(cg, args, kwargs):
        (b,) = _args(cg, f"subgroup_{kind}", args, kwargs, 1)
        b = cg.as_runtime(b) if not isinstance(b, bool) else cg.em.const(T.boolean, b)
        if b.type != T.boolean:
            raise TypeMismatchError(f"subgroup_{kind}() takes a bool, got {b.type}", cg.em.loc)
        return cg.em.op(f"subgroup_{kind}", T.boolean, [b])
    return impl


def _all_equal(cg, args, kwargs):
    (v,) = _args(cg, "subgroup_all_equal", args, kwargs, 1)
    v = _lane_value(cg, "subgroup_all_equal", v)
    return cg.em.op("subgroup_all_equal", T.boolean, [v])


def _broadcast(cg, args, kwargs):
    v, lane = _args(cg, "subgroup_broadcast", args, kwargs, 2)
    v = _lane_value(cg, "subgroup_broadcast", v)
    if isinstance(lane, int) and not isinstance(lane, bool):
        return cg.em.op("subgroup_broadcast", v.type, [v, cg.em.literal(lane, T.u32)])
    lane = cg.as_index(lane, "the lane")  # a runtime lane: a shuffle (Broadcast needs a constant before 1.5)
    return cg.em.op("subgroup_shuffle", v.type, [v, lane], mode="index")


def _broadcast_first(cg, args, kwargs):
    (v,) = _args(cg, "subgroup_broadcast_first", args, kwargs, 1)
    v = _lane_value(cg, "subgroup_broadcast_first", v)
    return cg.em.op("subgroup_broadcast_first", v.type, [v])


def _ballot(cg, args, kwargs):
    (b,) = _args(cg, "subgroup_ballot", args, kwargs, 1)
    b = cg.as_runtime(b)
    if b.type != T.boolean:
        raise TypeMismatchError(f"subgroup_ballot() takes a bool, got {b.type}", cg.em.loc)
    return cg.em.op("subgroup_ballot", T.VectorType(T.u32, 4), [b])


def _shuffle(kind, mode):
    name = f"subgroup_shuffle{kind}"

    def impl(cg, args, kwargs):
        v, lane = _args(cg, name, args, kwargs, 2)
        v = _lane_value(cg, name, v)
        lane = cg.as_index(lane, "the lane")
        if lane.type != T.u32:
            raise TypeMismatchError(f"{name}() lane must be u32, got {lane.type}", cg.em.loc)
        return cg.em.op("subgroup_shuffle", v.type, [v, lane], mode=mode)
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
        ("subgroup_shuffle", _shuffle("", "index"), "The value of invocation ``lane``.",
         "(v, lane)"),
        ("subgroup_shuffle_xor", _shuffle("_xor", "xor"),
         "The value of invocation ``id ^ mask``.", "(v, mask)"),
        ("subgroup_shuffle_up", _shuffle("_up", "up"),
         "The value of invocation ``id - delta``.", "(v, delta)"),
        ("subgroup_shuffle_down", _shuffle("_down", "down"),
         "The value of invocation ``id + delta``.", "(v, delta)")):
    SUBGROUP[_name] = make_builtin(_name, _impl, _doc, _sig)
BUILTINS.update(SUBGROUP)
