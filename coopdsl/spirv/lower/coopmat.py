"""Cooperative-matrix ops: SPV_KHR_cooperative_matrix instructions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...ir import types as T
from ...ir.attrs import Layout
from ...ir.core import Op
from ..grammar import enum_value
from .registry import lowering, memory_operands

if TYPE_CHECKING:
    from ..writer import Writer

LAYOUTS = {"RowMajor": "RowMajorKHR", "ColumnMajor": "ColumnMajorKHR"}
SIGNED = (("a", "MatrixASignedComponentsKHR"), ("b", "MatrixBSignedComponentsKHR"),
          ("c", "MatrixCSignedComponentsKHR"), ("result", "MatrixResultSignedComponentsKHR"))


def _layout_id(w: Writer, op: Op) -> int:
    layout = op.attrs["layout"]
    if not isinstance(layout, Layout):  # a specialization constant
        return w.id(layout)
    key = ("layout", id(layout))  # (Layout members live as long as the process)
    cid = w.memo.get(key)
    if cid is None:
        cid = w.memo[key] = w.b.const_id(T.u32, enum_value("CooperativeMatrixLayout", LAYOUTS[layout.name]))
    return cid


@lowering("coop_load")
def _load(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit("OpCooperativeMatrixLoadKHR", ty, rid, args[0], _layout_id(w, op), *args[1:],
           *memory_operands(w, op.attrs.get("memory")))


@lowering("coop_store")
def _store(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit("OpCooperativeMatrixStoreKHR", args[0], args[1], _layout_id(w, op), *args[2:],
           *memory_operands(w, op.attrs.get("memory")))


@lowering("coop_muladd")
def _muladd(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    flags = tuple(name for operand, name in SIGNED if operand in op.attrs["signed"])
    if op.attrs["saturate"]:
        flags += ("SaturatingAccumulationKHR",)
    w.emit("OpCooperativeMatrixMulAddKHR", ty, rid, *args, *((flags,) if flags else ()))


@lowering("coop_length")
def _length(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit("OpCooperativeMatrixLengthKHR", ty, rid, w.b.type_id(op.attrs["mat_type"]))
