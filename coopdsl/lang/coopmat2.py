"""SPV_NV_cooperative_matrix2 builtins on matrices: reductions, per-element functions, use changes, transposes.

``m.reduce(mode, combine, into=...)``, ``m.map(fn, *extras)`` and
``m.transpose()`` are methods of matrix values; a use change is the
constructor ``MatA[f16, M, N](acc)`` (:func:`convert_use`, called by the
conversion rules in :mod:`.arith`).  The rules spirv-val does not check
(callback signatures, shapes with specialization-constant dimensions, the
component type of a transpose) are :mod:`.coopmat2_checks`'s and
:mod:`.callbacks`'; every NV2 instruction needs SPIR-V 1.6.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._records import record
from ..errors import ArgumentError, TypeMismatchError
from ..ir import types as T
from ..ir.builder import Emitter
from ..ir.core import FuncRef, Function, Param, Value
from ..ir.ops.coopmat2 import ReduceMode, per_element_extra_problem
from .callbacks import callback_operand
from .coopcheck import raise_problem
from .coopmat2_checks import check_reduce, check_transpose
from .registry import Conversion, builtin
from .types import Enumerant

if TYPE_CHECKING:
    from .context import Builder


# -- reduce modes and built-in combine functions ------------------------------------------------
@record(frozen=True, repr=False)
class ReduceEnumerant(Enumerant):
    """A reduce mode kernels pass to ``m.reduce``; ``cd.Row | cd.Column`` combines Row and Column."""

    def __or__(self, other: ReduceEnumerant) -> ReduceEnumerant:
        if not isinstance(other, ReduceEnumerant):
            return NotImplemented
        value = self.value | other.value
        return ReduceEnumerant(self.kind, str(ReduceMode(value)), value, f"{self!r} | {other!r}")


Row = ReduceEnumerant("CooperativeMatrixReduce", "Row", ReduceMode.Row.value, "Row")
Column = ReduceEnumerant("CooperativeMatrixReduce", "Column", ReduceMode.Column.value, "Column")
Reduce2x2 = ReduceEnumerant("CooperativeMatrixReduce", "2x2", ReduceMode.Quad2x2.value, "Reduce2x2")


@record(frozen=True)
class BuiltinCombine:
    """A combine function coopdsl writes itself (``cd.reduce_add``, ``cd.reduce_max``, ``cd.reduce_min``)."""

    name: str  # the IR op: "add", or the math function "max" / "min"

    def __repr__(self) -> str:
        return f"reduce_{self.name}"

    def operand(self, cg: Builder, elem: T.ScalarType) -> FuncRef:
        """``fn(a, b) -> elem`` combining two elements, one function per component type and module."""
        key = (self, elem)
        func = cg.module.helpers.get(key)
        if func is None:
            a, b = Param(elem, "a"), Param(elem, "b")
            func = Function(f"reduce_{self.name}_{elem}", T.FunctionType(elem, (elem, elem)), [a, b], loc=cg.em.loc)
            cg.module.functions.append(func)
            cg.module.helpers[key] = func
            em = Emitter(cg.module, func, cg.em.loc)
            em.start(em.new_block("entry"))
            result = em.op("add", elem, [a, b]) if self.name == "add" else em.op("math", elem, [a, b], fn=self.name)
            em.terminate("return", [result])
        return FuncRef(func)


reduce_add, reduce_max, reduce_min = BuiltinCombine("add"), BuiltinCombine("max"), BuiltinCombine("min")


@record(frozen=True)
class ReduceModeArg(Conversion):
    """A reduce mode: ``cd.Row``, ``cd.Column``, ``cd.Row | cd.Column`` or ``cd.Reduce2x2`` (alone)."""

    def __call__(self, cg: Builder, value: Any, name: str, param: str) -> ReduceMode:
        if not isinstance(value, ReduceEnumerant):
            raise ArgumentError(f"the reduce mode must be cd.Row, cd.Column, cd.Row | cd.Column or cd.Reduce2x2, "
                                f"got {cg.describe(value)}", cg.em.loc)
        mode = ReduceMode(value.value)
        if ReduceMode.Quad2x2 in mode and mode != ReduceMode.Quad2x2:
            raise ArgumentError(f"cd.Reduce2x2 cannot be combined with Row or Column (got {value!r})", cg.em.loc)
        return mode


@builtin("(mode, combine, *, into=None)", method_of=T.CoopMatType, on_values=True, mode=ReduceModeArg())
def reduce(cg: Builder, mat: Value, mode: ReduceMode, combine: Any, into: Any = None) -> Value:
    """Combine the elements of each row, column, both, or 2x2 block (OpCooperativeMatrixReduceNV).

    ``mode`` is ``cd.Row``, ``cd.Column``, ``cd.Row | cd.Column`` or
    ``cd.Reduce2x2``; ``combine`` is ``cd.reduce_add``, ``cd.reduce_max``,
    ``cd.reduce_min`` or a ``@cd.func`` ``(a, b) -> component`` (commutative
    and associative).  The matrix is a floating-point accumulator; the result
    is the accumulator type ``into`` (default: the matrix's type), whose every
    element holds the combined value of its row (Row: same rows, any columns),
    column (Column: same columns, any rows), of the whole matrix (Row |
    Column: any shape) or of its 2x2 block (half the rows and columns).
    """
    t = mat.type
    assert isinstance(t, T.CoopMatType)  # a method of matrix values
    into = into or t
    check_reduce(cg.em, t, into, mode)
    if isinstance(combine, BuiltinCombine):
        if not t.elem.is_ieee:
            raise TypeMismatchError(f"cd.{combine!r} cannot combine {t.elem} values (SPV_KHR_bfloat16 and "
                                    f"SPV_EXT_float8 allow no arithmetic on them): convert the matrix to f16 or f32 "
                                    f"first", cg.em.loc)
        ref = combine.operand(cg, t.elem)
    else:
        ref = callback_operand(cg, combine, "the combine function of m.reduce", [("a", t.elem), ("b", t.elem)],
                               t.elem)
    return cg.em.op("coop_reduce", into, [mat, ref], mode=mode)


@builtin("(fn, *extras)", method_of=T.CoopMatType, on_values=True, typed=True)
def map_(cg: Builder, mat: Value, fn: Any, extras: tuple[Any, ...] = ()) -> Value:
    """``fn(row, col, element, *extra elements)`` for every element (OpCooperativeMatrixPerElementOpNV).

    ``fn`` is a ``@cd.func`` (or ``cd.partial`` of one) receiving the row and
    column as u32, the element, and one value per extra operand: for an extra
    matrix (of exactly this matrix's type) its element at the same position,
    for an extra scalar or vector that value.  It returns the new element (the
    component type).  Calls are unordered and may repeat, so stores it makes
    must not depend on their order.
    """
    t = mat.type
    assert isinstance(t, T.CoopMatType)  # a method of matrix values
    values = [_extra(cg, t, i, cg.as_operand(v)) for i, v in enumerate(extras, 1)]
    passes: list[tuple[str, T.Type]] = [("row", T.u32), ("col", T.u32), ("element", t.elem)]
    passes += [(f"extra {i}", t.elem if v.type == t else v.type) for i, v in enumerate(values, 1)]
    ref = callback_operand(cg, fn, "the function of m.map", passes, t.elem)
    return cg.em.op("coop_per_element", t, [mat, ref, *values])


def _extra(cg: Builder, t: T.CoopMatType, i: int, v: Any) -> Value:
    """Extra operand ``i`` of map: a matrix of the matrix's own type, or a runtime scalar or vector."""
    if isinstance(v, (bool, int, float)):
        raise ArgumentError(
            f"extra operand {i} of map is the number {v!r}, which has no type: bind compile-time numbers to the "
            f"function with cd.partial(fn, name={v!r}), or give it one (e.g. {t.elem}({v!r}))", cg.em.loc)
    if isinstance(v, Value):
        raise_problem(cg.em, per_element_extra_problem(t, i, v.type))
        return v
    raise TypeMismatchError(
        f"extra operand {i} of map must be a runtime scalar, vector or matrix of type {t}, got "
        f"{cg.describe(v)} (bind buffers and compile-time values with cd.partial(fn, name=...))", cg.em.loc)


@builtin("(*, into=None)", method_of=T.CoopMatType, on_values=True, typed=True)
def transpose(cg: Builder, mat: Value, into: Any = None) -> Value:
    """The accumulator M x N as a B matrix N x M (OpCooperativeMatrixTransposeNV).

    The component type and scope stay (GLSL requires the same component
    type); ``into`` may spell the result type, and is checked.
    """
    t = mat.type
    assert isinstance(t, T.CoopMatType)  # a method of matrix values
    result = check_transpose(cg.em, t, into)
    return cg.em.op("coop_transpose", result, [mat])


def convert_use(em: Emitter, v: Value, target: T.CoopMatType) -> Value:
    """``target(v)`` for an accumulator ``v`` and an A or B ``target`` of the same shape and scope."""
    return em.op("coop_convert_use", target, [v])
