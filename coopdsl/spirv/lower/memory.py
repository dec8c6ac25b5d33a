"""Pointers, loads and stores, function variables, device addresses, barriers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...ir import types as T
from ...ir.core import Op
from ...ir.vocab import StorageClass
from .registry import lowering, memory_operands, scope_id, semantics_id

if TYPE_CHECKING:
    from ..writer import Writer


@lowering("access")
def _access(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit("OpAccessChain", ty, rid, *args)


@lowering("load")
def _load(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit("OpLoad", ty, rid, args[0], *memory_operands(w, op.attrs.get("memory")))


@lowering("store")
def _store(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit("OpStore", args[0], args[1], *memory_operands(w, op.attrs.get("memory")))


@lowering("variable")
def _variable(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit("OpVariable", ty, rid, StorageClass.Function)


@lowering("array_length")
def _array_length(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit("OpArrayLength", ty, rid, *args, op.attrs["member"])


@lowering("debug_printf")
def _debug_printf(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.b.extension("SPV_KHR_non_semantic_info")
    fmt = w.b.string_id(op.attrs["format"])
    w.emit("OpExtInst", w.b.type_id(T.void), rid or w.b.new_id(), w.b.ext_inst_import("NonSemantic.DebugPrintf"), 1,
           fmt, *args)


@lowering("ptr_to_u64")
def _ptr_to_u64(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit("OpConvertPtrToU", ty, rid, *args)


@lowering("u64_to_ptr")
def _u64_to_ptr(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit("OpConvertUToPtr", ty, rid, *args)


@lowering("control_barrier")
def _barrier(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit("OpControlBarrier", scope_id(w, op.attrs["exec_scope"]), scope_id(w, op.attrs["mem_scope"]),
           semantics_id(w, op.attrs["semantics"]))


@lowering("memory_barrier")
def _memory_barrier(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit("OpMemoryBarrier", scope_id(w, op.attrs["mem_scope"]), semantics_id(w, op.attrs["semantics"]))
