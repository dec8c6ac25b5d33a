"""Integer dot products of four 8-bit lanes (SPV_KHR_integer_dot_product, core in SPIR-V 1.6)."""

from __future__ import annotations

from .. import types as T
from ..core import Op
from .base import Problem, check, define, result_is


def packed_or_vec4x8(t: T.Type) -> bool:
    """A 32-bit integer holding four 8-bit lanes, or a 4-vector of 8-bit integers."""
    if isinstance(t, T.ScalarType):
        return t.is_int and t.width == 32
    return isinstance(t, T.VectorType) and t.count == 4 and t.elem.is_int and t.elem.width == 8


def dot4x8_problem(a: T.Type, b: T.Type) -> Problem | None:
    """The rule of ``dot4x8(a, b)``: both packed 32-bit integers, or both 4-vectors of 8-bit integers."""
    if not (packed_or_vec4x8(a) and packed_or_vec4x8(b)) or isinstance(a, T.ScalarType) != isinstance(b, T.ScalarType):
        return Problem("type", f"takes two 32-bit integers holding four 8-bit lanes each (i32 or u32), or two "
                       f"4-vectors of 8-bit integers (vec4[i8] or vec4[u8]), got {a} and {b}")
    return None


def dot4x8_result(a: T.Type, b: T.Type) -> T.ScalarType:
    """i32 when a lane of either operand is signed (OpSDot, OpSUDot), else u32 (OpUDot)."""
    return T.i32 if T.scalar_of(a).signed or T.scalar_of(b).signed else T.u32


def _dot4x8(op: Op) -> None:
    a, b = (v.type for v in op.operands)
    check(op, dot4x8_problem(a, b))
    result_is(op, dot4x8_result(a, b))


define("dot4x8", 2, verify=_dot4x8,
       doc="sum of the products of the four 8-bit lanes of two packed integers or 4-vectors (lanes of a signed "
           "operand are signed)")
