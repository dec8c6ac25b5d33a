"""Integer dot products of four 8-bit lanes (SPV_KHR_integer_dot_product; core in SPIR-V 1.6, an extension
before): ``cd.dot4x8(a, b)``, GLSL's ``dotPacked4x8EXT`` / ``dot`` on 8-bit vectors
(GL_EXT_integer_dot_product) and HLSL's ``dot4add_i8packed`` without the add.  The rule is
:func:`coopdsl.ir.ops.intdot.dot4x8_problem` (the IR verifier applies the same one)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import TypeMismatchError
from ..ir.core import Value
from ..ir.ops import intdot as rules
from .conversions import RUNTIME
from .registry import builtin

if TYPE_CHECKING:
    from .context import Builder


@builtin("(a, b)", a=RUNTIME, b=RUNTIME)
def dot4x8(cg: Builder, a: Value, b: Value) -> Value:
    """The sum of the products of the four 8-bit lanes of ``a`` and ``b``: two i32/u32 values each holding four
    lanes (byte 0 is lane 0), or two 4-vectors of i8/u8.  Lanes of a signed operand are signed, of an unsigned
    one unsigned; the result is i32 when either operand is signed (OpSDot, OpSUDot), else u32 (OpUDot)."""
    problem = rules.dot4x8_problem(a.type, b.type)
    if problem is not None:
        raise TypeMismatchError(f"dot4x8() {problem.message}", cg.em.loc)
    return cg.em.op("dot4x8", rules.dot4x8_result(a.type, b.type), [a, b])
