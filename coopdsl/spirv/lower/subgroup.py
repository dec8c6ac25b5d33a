"""Subgroup operations (GroupNonUniform*) and atomics: the F/I/S/U instruction chosen by type."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...ir import types as T
from ...ir.attrs import Scope, Semantics
from ...ir.core import Op
from .registry import family, lowering, scope_id, semantics_id

if TYPE_CHECKING:
    from ..writer import Writer

# op -> (float, signed int, unsigned int)
REDUCTIONS = {
    "add": ("OpGroupNonUniformFAdd", "OpGroupNonUniformIAdd", "OpGroupNonUniformIAdd"),
    "mul": ("OpGroupNonUniformFMul", "OpGroupNonUniformIMul", "OpGroupNonUniformIMul"),
    "min": ("OpGroupNonUniformFMin", "OpGroupNonUniformSMin", "OpGroupNonUniformUMin"),
    "max": ("OpGroupNonUniformFMax", "OpGroupNonUniformSMax", "OpGroupNonUniformUMax"),
    "and": (None, "OpGroupNonUniformBitwiseAnd", "OpGroupNonUniformBitwiseAnd"),
    "or": (None, "OpGroupNonUniformBitwiseOr", "OpGroupNonUniformBitwiseOr"),
    "xor": (None, "OpGroupNonUniformBitwiseXor", "OpGroupNonUniformBitwiseXor"),
}
GROUP_OPERATIONS = {"reduce": "Reduce", "inclusive_scan": "InclusiveScan", "exclusive_scan": "ExclusiveScan",
                    "clustered_reduce": "ClusteredReduce"}
SIMPLE = {"subgroup_elect": "OpGroupNonUniformElect", "subgroup_all": "OpGroupNonUniformAll",
          "subgroup_any": "OpGroupNonUniformAny", "subgroup_all_equal": "OpGroupNonUniformAllEqual",
          "subgroup_broadcast": "OpGroupNonUniformBroadcast",
          "subgroup_broadcast_first": "OpGroupNonUniformBroadcastFirst",
          "subgroup_ballot": "OpGroupNonUniformBallot"}
SHUFFLES = {"index": "OpGroupNonUniformShuffle", "xor": "OpGroupNonUniformShuffleXor",
            "up": "OpGroupNonUniformShuffleUp", "down": "OpGroupNonUniformShuffleDown"}


@lowering("subgroup_reduce")
def _reduce(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    name = REDUCTIONS[op.attrs["op"]][family(op.type)]
    if name is None:
        raise ValueError(f"no {op.attrs['op']} reduction on {op.type}")
    cluster = op.attrs.get("cluster")   # (ClusterSize: a constant id after the value)
    size = () if cluster is None else (w.b.const_id(T.u32, cluster),)
    w.emit(name, ty, rid, scope_id(w, Scope.Subgroup), GROUP_OPERATIONS[op.attrs["mode"]], *args, *size)


@lowering("subgroup_quad")
def _quad(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    scope = scope_id(w, Scope.Subgroup)
    if op.attrs["mode"] == "broadcast":   # (Index and Direction: constant ids)
        w.emit("OpGroupNonUniformQuadBroadcast", ty, rid, scope, *args, w.b.const_id(T.u32, op.attrs["index"]))
        return
    direction = {"swap_horizontal": 0, "swap_vertical": 1, "swap_diagonal": 2}[op.attrs["mode"]]
    w.emit("OpGroupNonUniformQuadSwap", ty, rid, scope, *args, w.b.const_id(T.u32, direction))


@lowering(*SIMPLE)
def _simple(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit(SIMPLE[op.kind], ty, rid, scope_id(w, Scope.Subgroup), *args)


BALLOT_BITS = {"count": ("OpGroupNonUniformBallotBitCount", "Reduce"),
               "inclusive_count": ("OpGroupNonUniformBallotBitCount", "InclusiveScan"),
               "exclusive_count": ("OpGroupNonUniformBallotBitCount", "ExclusiveScan"),
               "find_lsb": ("OpGroupNonUniformBallotFindLSB", None),
               "find_msb": ("OpGroupNonUniformBallotFindMSB", None),
               "inverse": ("OpGroupNonUniformInverseBallot", None),
               "extract": ("OpGroupNonUniformBallotBitExtract", None)}


@lowering("subgroup_ballot_bits")
def _ballot_bits(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    name, group_operation = BALLOT_BITS[op.attrs["query"]]
    operation = (group_operation,) if group_operation else ()
    w.emit(name, ty, rid, scope_id(w, Scope.Subgroup), *operation, *args)


@lowering("subgroup_shuffle")
def _shuffle(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit(SHUFFLES[op.attrs["mode"]], ty, rid, scope_id(w, Scope.Subgroup), *args)


# -- atomics ------------------------------------------------------------------------------------
ATOMIC_RMW = {  # op -> (float, signed int, unsigned int)
    "add": ("OpAtomicFAddEXT", "OpAtomicIAdd", "OpAtomicIAdd"),
    "sub": (None, "OpAtomicISub", "OpAtomicISub"),
    "min": (None, "OpAtomicSMin", "OpAtomicUMin"), "max": (None, "OpAtomicSMax", "OpAtomicUMax"),
    "and": (None, "OpAtomicAnd", "OpAtomicAnd"), "or": (None, "OpAtomicOr", "OpAtomicOr"),
    "xor": (None, "OpAtomicXor", "OpAtomicXor"),
    "exchange": ("OpAtomicExchange", "OpAtomicExchange", "OpAtomicExchange"),
}


def _atomic_caps(w: Writer, t: T.Type, op: str) -> None:
    assert isinstance(t, T.ScalarType)  # (atomics are on scalars)
    if t.is_float and op == "add":
        w.b.require(f"AtomicFloat{t.width}AddEXT", f"atomic add on {t}")
    if t.is_int and t.width == 64:
        w.b.require("Int64Atomics", f"atomics on {t}")


def _scope_sem(w: Writer, op: Op) -> tuple[int, int]:
    sem = semantics_id(w, op.attrs["semantics"])  # (ids in this order keep output byte-identical)
    return scope_id(w, op.attrs["scope"]), sem


@lowering("atomic_rmw")
def _rmw(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    _atomic_caps(w, op.type, op.attrs["op"])
    name = ATOMIC_RMW[op.attrs["op"]][family(op.type)]
    if name is None:
        raise ValueError(f"no atomic {op.attrs['op']} on {op.type}")
    w.emit(name, ty, rid, args[0], *_scope_sem(w, op), *args[1:])


@lowering("atomic_cmpxchg")
def _cmpxchg(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    _atomic_caps(w, op.type, "cmpxchg")
    scope, sem = _scope_sem(w, op)
    w.emit("OpAtomicCompareExchange", ty, rid, args[0], scope, sem, _unequal(w, op, sem), *args[1:])


def _unequal(w: Writer, op: Op, equal: int) -> int:
    """The Unequal semantics of a compare-exchange: the Equal ones, less a release (Vulkan: Unequal must not
    release, VUID-StandaloneSpirv-UnequalMemorySemantics-10875): AcquireRelease becomes Acquire, Release
    relaxed (no storage-class bits without an ordering)."""
    names = op.attrs["semantics"].names
    if "AcquireRelease" in names:
        return semantics_id(w, Semantics(tuple("Acquire" if n == "AcquireRelease" else n for n in names)))
    if "Release" in names:
        return semantics_id(w, Semantics(()))
    return equal


@lowering("atomic_load")
def _load(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    _atomic_caps(w, op.type, "load")
    w.emit("OpAtomicLoad", ty, rid, args[0], *_scope_sem(w, op))


@lowering("atomic_store")
def _store(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    _atomic_caps(w, op.operands[1].type, "store")
    w.emit("OpAtomicStore", args[0], *_scope_sem(w, op), *args[1:])
