"""Cooperative-matrix ops (SPV_KHR_cooperative_matrix semantics)."""

from __future__ import annotations

from .. import types as T
from ..attrs import MATRIX_OPERANDS, Layout, MemoryAccess
from ..core import Op, SpecConst, SpecOp
from .base import define, fail, integer, matrix, pointer, result_is

USE_A, USE_B, USE_ACC = 0, 1, 2


def _memory_pointer(op: Op, index: int) -> None:
    p = pointer(op, index)
    if p.storage not in ("StorageBuffer", "Workgroup", "PhysicalStorageBuffer", "Function"):
        fail(op, f"cannot address a matrix in {p.storage} memory")


def _load(op: Op) -> None:
    _memory_pointer(op, 0)
    integer(op, 1)
    if not isinstance(op.type, T.CoopMatType):
        fail(op, f"loads a cooperative matrix, result is {op.type}")


def _store(op: Op) -> None:
    _memory_pointer(op, 0)
    matrix(op, 1)
    integer(op, 2)


def _muladd(op: Op) -> None:
    a, b, c = (matrix(op, i) for i in range(3))
    for t, use, name in ((a, USE_A, "A"), (b, USE_B, "B"), (c, USE_ACC, "C")):
        if isinstance(t.use, int) and t.use != use:
            fail(op, f"{name} has use {t.use}, expected {use}")
    result_is(op, c)
    signed = op.attrs["signed"]
    if not isinstance(signed, frozenset) or not signed <= set(MATRIX_OPERANDS):
        fail(op, f"signed must be a frozenset of {MATRIX_OPERANDS}, got {signed!r}")


def _length(op: Op) -> None:
    if not isinstance(op.attrs["mat_type"], T.CoopMatType):
        fail(op, "mat_type must be a cooperative-matrix type")
    result_is(op, T.u32)


# the layout is a Layout, or a 32-bit integer specialization constant (SPIR-V allows any constant instruction)
_MEMORY = {"layout": ((Layout, SpecConst, SpecOp), True), "memory": (MemoryAccess, False)}
define("coop_load", 2, attrs=_MEMORY, verify=_load, pure=False, tangled="matrix",
       doc="(pointer to the first element, stride): load a cooperative matrix")
define("coop_store", 3, attrs=_MEMORY, verify=_store, pure=False, tangled="matrix",
       doc="(pointer to the first element, matrix, stride): store a cooperative matrix")
define("coop_muladd", 3, attrs={"signed": (frozenset, True), "saturate": (bool, True)}, verify=_muladd,
       tangled="matrix",
       doc="A x B + C; ``signed`` names the operands whose integer components are signed")
define("coop_length", 0, attrs={"mat_type": (T.CoopMatType, True)}, verify=_length,
       doc="how many elements of a matrix of ``mat_type`` each invocation holds")
