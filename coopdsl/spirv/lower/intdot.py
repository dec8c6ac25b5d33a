"""SPV_KHR_integer_dot_product: four 8-bit lanes multiplied and summed (OpSDot, OpUDot, OpSUDot)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...ir import types as T
from ...ir.core import Op
from .registry import lowering

if TYPE_CHECKING:
    from ..writer import Writer


@lowering("dot4x8")
def _dot4x8(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    a, b = (v.type for v in op.operands)
    sa, sb = T.scalar_of(a).signed, T.scalar_of(b).signed
    x, y = args
    if sa == sb:
        name = "OpSDot" if sa else "OpUDot"
    else:  # OpSUDot reads its first operand's lanes as signed, the second's as unsigned
        name = "OpSUDot"
        if sb:
            x, y = y, x
    if isinstance(a, T.ScalarType):
        w.b.require("DotProductInput4x8BitPacked", f"{name} on packed 8-bit lanes")
        w.emit(name, ty, rid, x, y, "PackedVectorFormat4x8Bit")
    else:
        w.b.require("DotProductInput4x8Bit", f"{name} on 4-vectors of 8-bit integers")
        w.emit(name, ty, rid, x, y)
