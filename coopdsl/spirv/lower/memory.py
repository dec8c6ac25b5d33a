"""Pointers, loads and stores, function variables, device addresses, barriers."""

from __future__ import annotations

from ...ir.vocab import StorageClass
from .registry import lowering, memory_operands, scope_id, semantics_id


@lowering("access")
def _access(w, op, ty, rid, args):
    w.emit("OpAccessChain", ty, rid, *args)


@lowering("load")
def _load(w, op, ty, rid, args):
    w.emit("OpLoad", ty, rid, args[0], *memory_operands(w, op.attrs.get("memory")))


@lowering("store")
def _store(w, op, ty, rid, args):
    w.emit("OpStore", args[0], args[1], *memory_operands(w, op.attrs.get("memory")))


@lowering("variable")
def _variable(w, op, ty, rid, args):
    w.emit("OpVariable", ty, rid, StorageClass.Function)


@lowering("ptr_to_u64")
def _ptr_to_u64(w, op, ty, rid, args):
    w.emit("OpConvertPtrToU", ty, rid, *args)


@lowering("u64_to_ptr")
def _u64_to_ptr(w, op, ty, rid, args):
    w.emit("OpConvertUToPtr", ty, rid, *args)


@lowering("control_barrier")
def _barrier(w, op, ty, rid, args):
    w.emit("OpControlBarrier", scope_id(w, op.attrs["exec_scope"]), scope_id(w, op.attrs["mem_scope"]),
           semantics_id(w, op.attrs["semantics"]))


@lowering("memory_barrier")
def _memory_barrier(w, op, ty, rid, args):
    w.emit("OpMemoryBarrier", scope_id(w, op.attrs["mem_scope"]), semantics_id(w, op.attrs["semantics"]))
