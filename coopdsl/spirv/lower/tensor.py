"""Tensor layouts and views (SPV_NV_tensor_addressing) and tensor-addressed matrix loads and stores
(SPV_NV_cooperative_matrix2).

The capabilities (TensorAddressingNV, CooperativeMatrixTensorAddressingNV and,
for a decode function, CooperativeMatrixBlockLoadsNV) and their extensions
come from the grammar tables as the instructions and operands are encoded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...ir.core import FuncRef, Op
from .registry import lowering, memory_operands

if TYPE_CHECKING:
    from ..writer import Writer

CREATE = {"tensor_layout": "OpCreateTensorLayoutNV", "tensor_view": "OpCreateTensorViewNV"}
SET = {
    "tensor_layout_dimension": "OpTensorLayoutSetDimensionNV",
    "tensor_layout_stride": "OpTensorLayoutSetStrideNV",
    "tensor_layout_block_size": "OpTensorLayoutSetBlockSizeNV",
    "tensor_layout_slice": "OpTensorLayoutSliceNV",
    "tensor_layout_clamp_value": "OpTensorLayoutSetClampValueNV",
    "tensor_view_dimension": "OpTensorViewSetDimensionNV",
    "tensor_view_stride": "OpTensorViewSetStrideNV",
    "tensor_view_clip": "OpTensorViewSetClipNV",
}


@lowering(*CREATE)
def _create(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit(CREATE[op.kind], ty, rid)


@lowering(*SET)
def _set(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit(SET[op.kind], ty, rid, *args)


def _operands(w: Writer, op: Op, args: list[int]) -> tuple[object, ...]:
    """Memory Operands (the literal is required: None when empty), then Tensor Addressing Operands."""
    memory = memory_operands(w, op.attrs.get("memory")) or ("None",)
    names, ids = [], []
    for v, vid in zip(op.operands[3:], args[3:]):
        names.append("DecodeFunc" if isinstance(v, FuncRef) else "TensorView")
        ids.append(vid)
    return (*memory, tuple(names) or "None", *ids)


@lowering("coop_load_tensor")
def _load(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit("OpCooperativeMatrixLoadTensorNV", ty, rid, *args[:3], *_operands(w, op, args))


@lowering("coop_store_tensor")
def _store(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit("OpCooperativeMatrixStoreTensorNV", *args[:3], *_operands(w, op, args))
