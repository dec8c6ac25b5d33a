"""SPV_NV_cooperative_matrix2 matrix ops: OpCooperativeMatrixReduceNV, PerElementOpNV, ConvertNV, TransposeNV.

The instructions declare their capabilities (CooperativeMatrixReductionsNV,
CooperativeMatrixPerElementOperationsNV, CooperativeMatrixConversionsNV) through
the grammar, and the module builder adds ``SPV_NV_cooperative_matrix2`` for
them.  Only a component-type conversion that also changes the use needs its
capability required here: it is an ordinary Op*Convert.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...ir import types as T
from ...ir.core import Op
from ...ir.ops.coopmat2 import ReduceMode
from .arith import convert_steps, emit_steps
from .registry import lowering

if TYPE_CHECKING:
    from ..writer import Writer

REDUCE_NAMES = {ReduceMode.Row: "Row", ReduceMode.Column: "Column", ReduceMode.Quad2x2: "2x2"}


@lowering("coop_reduce")
def _reduce(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    mode = tuple(name for flag, name in REDUCE_NAMES.items() if flag in op.attrs["mode"])
    w.emit("OpCooperativeMatrixReduceNV", ty, rid, args[0], mode, args[1])


@lowering("coop_per_element")
def _per_element(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit("OpCooperativeMatrixPerElementOpNV", ty, rid, *args)


@lowering("coop_transpose")
def _transpose(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit("OpCooperativeMatrixTransposeNV", ty, rid, args[0])


@lowering("coop_convert_use")
def _convert_use(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    """OpCooperativeMatrixConvertNV when only the use changes; else Op*Convert with the use change.

    OpBitcast may not change the use, so a signedness-only change (same width
    integers) first changes the use, then reinterprets the bits.
    """
    src, dst = op.operands[0].type, op.type
    assert isinstance(src, T.CoopMatType) and isinstance(dst, T.CoopMatType)
    if src.elem == dst.elem:
        w.emit("OpCooperativeMatrixConvertNV", ty, rid, args[0])
        return
    w.b.require("CooperativeMatrixConversionsNV", f"a conversion of {src} to {dst} changes the use")
    steps = convert_steps(src, dst)
    value = args[0]
    if steps[0][0] == "OpBitcast":
        value = w.b.new_id()
        w.emit("OpCooperativeMatrixConvertNV", w.b.type_id(T.CoopMatType(src.elem, src.scope, src.rows, src.cols,
                                                                           dst.use)), value, args[0])
    assert rid is not None
    emit_steps(w, steps, value, rid)
