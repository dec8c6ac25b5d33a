"""Integer dot products of four 8-bit lanes (SPV_KHR_integer_dot_product; core in SPIR-V 1.6, an extension
before): ``cd.dot4x8(a, b)``, GLSL's ``dotPacked4x8EXT`` / ``dot`` on 8-bit vectors
(GL_EXT_integer_dot_product) and HLSL's ``dot4add_i8packed`` without the add.  The rule is
:func:`coopdsl.ir.ops.intdot.dot4x8_problem` (the IR verifier applies the same one)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import TypeMismatchError
from ..ir import types as T
from ..ir.core import Value
from ..ir.ops import intdot as rules
from . import arith
from .conversions import Operand
from .registry import builtin

if TYPE_CHECKING:
    from .context import Builder


@builtin("(a, b)", a=Operand(), b=Operand())
def dot4x8(cg: Builder, a: Value | int, b: Value | int) -> Value:
    """The sum of the products of the four 8-bit lanes of ``a`` and ``b``: two i32/u32 values each holding four
    lanes (byte 0 is lane 0), or two 4-vectors of i8/u8.  Lanes of a signed operand are signed, of an unsigned
    one unsigned; the result is i32 when either operand is signed (OpSDot, OpSUDot), else u32 (OpUDot).
    One operand may be a Python int (``dot4x8(q, 0x01010101)`` sums q's lanes): a constant of the other's type,
    which it must fit."""
    if not isinstance(a, Value) and not isinstance(b, Value):
        raise TypeMismatchError(f"dot4x8() takes at least one runtime operand, got the numbers {a!r} and {b!r}",
                                cg.em.loc)
    if not isinstance(a, Value):
        assert isinstance(b, Value)
        a = number_operand(cg, a, b)
    elif not isinstance(b, Value):
        b = number_operand(cg, b, a)
    problem = rules.dot4x8_problem(a.type, b.type)
    if problem is not None:
        raise TypeMismatchError(f"dot4x8() {problem.message}", cg.em.loc)
    return cg.em.op("dot4x8", rules.dot4x8_result(a.type, b.type), [a, b])


def number_operand(cg: Builder, n: object, other: Value) -> Value:
    """The number ``n`` as a constant of ``other``'s type (a packed i32/u32), located when it is not an int
    or does not fit (:func:`coopdsl.lang.arith.literal` decides)."""
    if isinstance(n, bool) or not isinstance(n, int) or not isinstance(other.type, T.ScalarType):
        raise TypeMismatchError(f"dot4x8() takes an int with a packed 32-bit operand (i32 or u32), got {n!r} "
                                f"with {other.type}", cg.em.loc)
    return arith.literal(cg.em, n, other.type)
