"""SPV_QCOM_cooperative_matrix_conversion: arrays to and from cooperative matrices, array bitcasts and slices."""

from __future__ import annotations

from .registry import lowering

OPCODES = {
    "bitcast_array": "OpBitCastArrayQCOM",
    "coop_from_array": "OpCompositeConstructCoopMatQCOM",
    "coop_to_array": "OpCompositeExtractCoopMatQCOM",
    "sub_array": "OpExtractSubArrayQCOM",
}


@lowering(*OPCODES)
def _qcom(w, op, ty, rid, args):
    name = OPCODES[op.kind]
    w.b.require("CooperativeMatrixConversionQCOM", f"{name} (SPV_QCOM_cooperative_matrix_conversion)")
    w.emit(name, ty, rid, *args)
