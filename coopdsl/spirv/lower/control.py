"""Function calls (branches, phis and returns are written by the writer's block walk)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...ir.core import Op
from .registry import lowering

if TYPE_CHECKING:
    from ..writer import Writer


@lowering("call")
def _call(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    if rid is None:  # a void call still has a result id and type
        ty, rid = w.b.type_id(op.type), w.b.new_id()
    w.emit("OpFunctionCall", ty, rid, w.function_id(op.attrs["func"]), *args)
