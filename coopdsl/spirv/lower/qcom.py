"""SPV_QCOM_cooperative_matrix_conversion: arrays to and from cooperative matrices, array bitcasts and slices."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...ir.core import Op
from .registry import lowering

if TYPE_CHECKING:
    from ..writer import Writer

OPCODES = {
    "bitcast_array": "OpBitCastArrayQCOM",
    "coop_from_array": "OpCompositeConstructCoopMatQCOM",
    "coop_to_array": "OpCompositeExtractCoopMatQCOM",
    "sub_array": "OpExtractSubArrayQCOM",
}


@lowering(*OPCODES)
def _qcom(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    name = OPCODES[op.kind]
    w.b.require("CooperativeMatrixConversionQCOM", f"{name} (SPV_QCOM_cooperative_matrix_conversion)")
    w.emit(name, ty, rid, *args)
