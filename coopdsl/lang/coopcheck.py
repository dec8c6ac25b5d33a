"""Cooperative-matrix rules checked at compile time, with the user's location.

The rules themselves are pure functions next to the op definitions
(:mod:`coopdsl.ir.ops.coopmat`, :mod:`coopdsl.ir.ops.coopmat2`,
:mod:`coopdsl.ir.ops.tensor`), which the IR verifier applies too; this module
describes the values a kernel passed and raises a rule's problem at the
user's line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import ArgumentError, CompileError, ShapeError, TypeMismatchError
from ..ir import types as T
from ..ir.ops import coopmat as rules
from ..ir.ops.base import Problem

describe_mismatch = rules.describe_mismatch
if TYPE_CHECKING:
    from ..ir.builder import Emitter

_ERRORS: dict[str, type[CompileError]] = {"shape": ShapeError, "type": TypeMismatchError, "argument": ArgumentError}


def raise_problem(em: Emitter, problem: Problem | None, prefix: str = "") -> None:
    """Raise ``problem`` (a rule's finding; nothing when None) at the user's line, ``prefix`` before it."""
    if problem is not None:
        raise _ERRORS[problem.kind](prefix + problem.message, em.loc)


def describe_value(v: Any) -> str:
    """A value as users write it: "a runtime f32", "the number 0.0", "the type MatA[f16, 16, 16]"."""
    t = getattr(v, "type", None)
    if isinstance(t, T.Type):
        return f"a runtime {t}"
    if isinstance(v, (bool, int, float)):
        return f"the number {v!r}"
    if isinstance(v, T.Type):
        return f"the type {v}"
    return f"a {type(v).__name__}"


def require_coopmat(em: Emitter, v: Any, what: str) -> T.CoopMatType:
    t = getattr(v, "type", None)
    if not isinstance(t, T.CoopMatType):
        raise TypeMismatchError(f"{what} must be a cooperative matrix, got {describe_value(v)}", em.loc)
    return t


def check_muladd(em: Emitter, a: Any, b: Any, c: Any) -> frozenset[str]:
    """Check A*B+C; return the names of the operands with signed integer components."""
    ta = require_coopmat(em, a, "the first operand (A) of muladd")
    tb = require_coopmat(em, b, "the second operand (B) of muladd")
    if not isinstance(getattr(c, "type", None), T.CoopMatType):
        raise TypeMismatchError(
            f"the third operand (C) of muladd must be an accumulator matrix (Acc[...]), got "
            f"{describe_value(c)}; to start from zero, pass Acc[T, M, N].splat(0)", em.loc)
    tc = c.type
    raise_problem(em, rules.muladd_problem(ta, tb, tc))
    return rules.muladd_signed(ta, tb, tc)


def check_conversion_shape(em: Emitter, src: T.CoopMatType, dst: T.CoopMatType) -> None:
    raise_problem(em, rules.conversion_problem(src, dst))
