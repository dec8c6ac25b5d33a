"""SPV_NV_cooperative_matrix2 ops on matrices: reductions, per-element functions, use changes, transposes.

The callbacks of ``coop_reduce`` and ``coop_per_element`` are operands that
name a function (:class:`~coopdsl.ir.core.FuncRef`), never calls.
"""

from __future__ import annotations

import enum

from .. import types as T
from ..core import FuncRef, Op
from .base import define, fail, matrix, result_is
from .coopmat import USE_A, USE_ACC, USE_B


class ReduceMode(enum.Flag):
    """Which elements a reduction combines (SPIR-V's Cooperative Matrix Reduce mask)."""

    Row = 1
    Column = 2
    Quad2x2 = 4  # "2x2": each aligned 2x2 neighbourhood

    def __str__(self) -> str:
        return "|".join(m.name or "" for m in ReduceMode if m in self)  # single-bit members all have names


VALID_MODES = (ReduceMode.Row, ReduceMode.Column, ReduceMode.Row | ReduceMode.Column, ReduceMode.Quad2x2)


def _function(op: Op, index: int) -> T.FunctionType:
    v = op.operands[index]
    if not isinstance(v, FuncRef):
        fail(op, f"operand {index} must name a function, got {v!r}")
    return v.type


def _accumulator(op: Op, t: T.CoopMatType, what: str) -> None:
    if t.use != USE_ACC:
        fail(op, f"{what} must be an accumulator, got {t}")


def _reduce(op: Op) -> None:
    m = matrix(op, 0)
    _accumulator(op, m, "the matrix")
    r = op.type
    if not isinstance(r, T.CoopMatType):
        fail(op, f"result must be a cooperative matrix, got {r}")
    _accumulator(op, r, "the result")
    if (r.elem, r.scope) != (m.elem, m.scope):
        fail(op, f"result {r} and matrix {m} differ in component type or scope")
    if op.attrs["mode"] not in VALID_MODES:
        fail(op, f"invalid reduce mode {op.attrs['mode']}")
    f = _function(op, 1)
    if f != T.FunctionType(m.elem, (m.elem, m.elem)):
        fail(op, f"combine function must be fn({m.elem}, {m.elem}) -> {m.elem}, got {f}")


def _per_element(op: Op) -> None:
    m = matrix(op, 0)
    result_is(op, m)
    f = _function(op, 1)
    extras = [v.type for v in op.operands[2:]]
    want = [m.elem if t == m else t for t in extras]
    if f.ret != m.elem or len(f.params) != 3 + len(extras) or f.params[2] != m.elem or list(f.params[3:]) != want:
        fail(op, f"function {f} does not fit {m} with extra operands {', '.join(map(str, extras)) or 'none'}")
    if any(not (isinstance(p, T.ScalarType) and p.kind == "int" and p.width == 32) for p in f.params[:2]):
        fail(op, f"row and column parameters must be 32-bit integers, got {f}")


def _convert_use(op: Op) -> None:
    m = matrix(op, 0)
    r = op.type
    _accumulator(op, m, "the matrix")
    if not isinstance(r, T.CoopMatType) or r.use not in (USE_A, USE_B):
        fail(op, f"converts to an A or B matrix, got {r}")
    if (r.scope, r.rows, r.cols) != (m.scope, m.rows, m.cols):
        fail(op, f"{m} -> {r} changes the shape or scope")


def _transpose(op: Op) -> None:
    m = matrix(op, 0)
    _accumulator(op, m, "the matrix")
    result_is(op, T.CoopMatType(m.elem, m.scope, m.cols, m.rows, USE_B))


define("coop_reduce", 2, attrs={"mode": (ReduceMode, True)}, verify=_reduce, tangled="matrix",
       doc="(matrix, combine function): combine the elements of each row, column, both or 2x2 block; "
           "the result (any accumulator shape the mode allows) holds the combined value everywhere")
define("coop_per_element", (2, None), verify=_per_element, pure=False, tangled="matrix",
       doc="(matrix, function, *extras): function(row, col, element, *extra elements) for every element; "
           "not pure: the function may store to memory")
define("coop_convert_use", 1, verify=_convert_use, tangled="matrix",
       doc="accumulator -> A or B matrix of the same shape, converting the component type if it differs")
define("coop_transpose", 1, verify=_transpose, tangled="matrix",
       doc="accumulator M x N -> B matrix N x M (the same component type)")
