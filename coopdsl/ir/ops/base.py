"""The op-definition record, the registry, and the type predicates op rules share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import Any, NoReturn

from ..._lazy import Registry
from ..._records import record
from .. import types as T
from ..core import Op
from ..targets import Availability


class VerifyError(Exception):
    """An op breaks its definition (a bug in coopdsl, reported as an InternalCompilerError)."""


@record(frozen=True)
class Problem:
    """A broken rule, as the rule functions next to the op definitions return it: ``kind`` is "type"
    (element types, array-ness, what a value is), "shape" (lengths, dimensions, uses, scope, ranges) or
    "argument" (a value a builtin was given); ``message`` says what is wrong in the words kernels are written
    in.  The builtins raise it at the user's line (TypeMismatchError, ShapeError, ArgumentError by kind); the
    verifier reports it as an internal error (the front end should have refused the kernel first)."""

    kind: str
    message: str


@record(frozen=True)
class OpDef:
    """The definition of one op kind.

    ``operands`` is (minimum, maximum or None for any).  ``attrs`` maps each
    attribute name to (accepted Python type(s), required).  ``verify(op)``
    raises :class:`VerifyError` when operand or result types are wrong.
    ``tangled`` names what must execute the op together: ``"matrix"`` (the
    scope of the cooperative matrix it uses), ``"subgroup"``, or
    ``"execution"`` (the op's own execution-scope attribute).

    The traits passes read: ``writes`` (it writes the memory its operand 0 points to), ``atomic`` (an
    atomic access: its result differs between invocations), ``element_access`` (it reads or writes one
    invocation's elements of a composite, a cooperative matrix included, so it needs no matrix scope's
    uniformity) and ``per_invocation_operands`` (a matrix op whose operands are each invocation's own by
    nature, exempt from SPIR-V's rule that a matrix op's operands be uniform in the matrix's scope).

    ``availability`` is what the op needs of the kernel's target (the minimum SPIR-V version, what brings it,
    and how kernels spell the op in the error): the IR builder checks it for every op it builds, at the
    user's line, so a family declares it here and no builtin checks it itself.
    """

    kind: str
    operands: tuple[int, int | None]
    attrs: dict[str, tuple[Any, bool]] = field(default_factory=dict)
    verify: Callable[[Op], None] | None = None
    pure: bool = True
    terminator: bool = False
    tangled: str | None = None
    doc: str = ""
    writes: bool = False
    atomic: bool = False
    element_access: bool = False
    per_invocation_operands: bool = False
    availability: Availability | None = None


OPS: Registry[str, OpDef] = Registry()  # the families ``coopdsl.ir.ops`` defers load on first need


def define(kind: str, operands: int | tuple[int, int | None], *, doc: str,
           attrs: dict[str, tuple[Any, bool]] | None = None, verify: Callable[[Op], None] | None = None,
           pure: bool = True, terminator: bool = False, tangled: str | None = None, writes: bool = False,
           atomic: bool = False, element_access: bool = False, per_invocation_operands: bool = False,
           availability: Availability | None = None) -> OpDef:
    """Declare op ``kind`` (each kind exactly once)."""
    if OPS.declared(kind):
        raise ValueError(f"op kind {kind!r} is declared twice")
    arity = (operands, operands) if isinstance(operands, int) else operands
    d = OpDef(kind, arity, dict(attrs or {}), verify, pure, terminator, tangled, doc, writes, atomic,
              element_access, per_invocation_operands, availability)
    OPS[kind] = d
    return d


def opdef(kind: str) -> OpDef:
    """The definition of ``kind`` (KeyError for an unknown kind)."""
    return OPS[kind]


# -- predicates the rules share ------------------------------------------------------------------
def fail(op: Op, message: str) -> NoReturn:
    raise VerifyError(f"{op.kind}: {message}")


def check(op: Op, problem: Problem | None) -> None:
    """Fail ``op`` with ``problem``'s message when a rule function found one."""
    if problem is not None:
        fail(op, problem.message)


def types_of(op: Op) -> list[T.Type]:
    return [v.type for v in op.operands]


def is_numeric(t: T.Type) -> bool:
    e = T.elem_of(t)
    return isinstance(t, (T.ScalarType, T.VectorType, T.CoopMatType)) and isinstance(e, T.ScalarType) \
        and e.kind.is_numeric


def is_int(t: T.Type) -> bool:
    e = T.elem_of(t)
    return isinstance(e, T.ScalarType) and e.is_int


def is_float(t: T.Type) -> bool:
    e = T.elem_of(t)
    return isinstance(e, T.ScalarType) and e.is_float


def is_bool(t: T.Type) -> bool:
    return T.elem_of(t) == T.boolean and isinstance(t, (T.ScalarType, T.VectorType))


def bool_like(t: T.Type) -> T.Type:
    """bool for a scalar, a bool vector of the same size for a vector."""
    return T.VectorType(T.boolean, t.count) if isinstance(t, T.VectorType) else T.boolean


def same_shape(a: T.Type, b: T.Type) -> bool:
    if isinstance(a, T.VectorType) and isinstance(b, T.VectorType):
        return a.count == b.count
    if isinstance(a, T.CoopMatType) and isinstance(b, T.CoopMatType):
        return (a.rows, a.cols, a.scope) == (b.rows, b.cols, b.scope)
    return isinstance(a, T.ScalarType) and isinstance(b, T.ScalarType)


def result_is(op: Op, want: T.Type) -> None:
    if op.type is not want and op.type != want:  # (identity first: record equality is a Python call)
        fail(op, f"result is {op.type}, expected {want}")


def operands_equal(op: Op, what: str = "operand types differ") -> None:
    operands = op.operands
    if operands:
        first = operands[0].type
        for v in operands:
            if v.type is not first and v.type != first:
                fail(op, f"{what}: {', '.join(map(str, types_of(op)))}")


def pointer(op: Op, index: int) -> T.PointerType:
    t = op.operands[index].type
    if not isinstance(t, T.PointerType):
        fail(op, f"operand {index} must be a pointer, got {t}")
    return t


def integer(op: Op, index: int) -> None:
    t = op.operands[index].type
    if not (isinstance(t, T.ScalarType) and t.is_int):
        fail(op, f"operand {index} must be an integer scalar, got {t}")


def matrix(op: Op, index: int) -> T.CoopMatType:
    t = op.operands[index].type
    if not isinstance(t, T.CoopMatType):
        fail(op, f"operand {index} must be a cooperative matrix, got {t}")
    return t
