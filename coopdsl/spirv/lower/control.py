"""Function calls (branches, phis and returns are written by the writer's block walk)."""

from __future__ import annotations

from .registry import lowering


@lowering("call")
def _call(w, op, ty, rid, args):
    if rid is None:  # a void call still has a result id and type
        ty, rid = w.b.type_id(op.type), w.b.new_id()
    w.emit("OpFunctionCall", ty, rid, w.function_id(op.attrs["func"]), *args)
