"""The argument conversions builtin signatures declare: each turns an argument into the checked value a builtin gets.

A builtin declares, per parameter, what it takes (``@builtin("(value, type)", value=RUNTIME,
type=TypeObject(...))``); :func:`coopdsl.lang.registry.bind` applies the conversions once, in parameter
order, before the builtin's ``impl`` runs, so an ``impl`` receives values it need not check again: a
runtime value (built-in inputs loaded), an integer index, a compile-time constant of a Python type, a
cooperative matrix, a scope, a type object...  Each kind raises a located :class:`CompileError`
naming the builtin and the argument (``message`` says it in the builtin's own words, with ``{name}``
the builtin, ``{param}`` the parameter, ``{got}`` the argument as kernels name it, ``{value}`` the
argument itself and ``{type}`` the type of a runtime argument), never lets a compile-time object (a
type, an enum, a function, a string) through to the builtin's IR, and never raises anything but a
CompileError for a user's mistake.

Where a Python number becomes a typed constant the language decides in one place:
:func:`coopdsl.lang.arith.literal` (its fit is :func:`coopdsl.ir.literals.fit`'s); the kinds here that
take numbers (:class:`Index`, :class:`Literal`, :class:`Bool`) ask it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._records import record
from ..errors import ArgumentError, CompileError
from ..ir import types as T
from ..ir.attrs import Scope
from ..ir.core import Value
from ..ir.literals import LiteralError, fit
from ..ir.vocab import StorageClass
from . import arith
from .registry import Conversion as Conversion
from .types import VULKAN_SCOPES, Enumerant, as_scope
from .values import BufferRef

if TYPE_CHECKING:
    from .context import Builder


@record(frozen=True)
class Runtime(Conversion):
    """A runtime value (a built-in input is loaded) whose type ``accepts`` takes; ``message`` otherwise.

    Without ``accepts`` any runtime value is taken; a compile-time argument is refused with
    ``Builder.as_runtime``'s message ("expected a runtime value, got ..."), but with ``numbers`` a Python number is
    a constant of :func:`arith.default_type` (``1`` an i32, ``1.0`` an f32, ``True`` a bool).
    """

    accepts: Callable[[T.Type], bool] | None = None
    message: str = "{name}() takes a runtime value, got {got}"
    numbers: bool = False   # a Python number is a constant of its default type (i32, f32), as GLSL's literals are

    def __call__(self, cg: Builder, v: Any, name: str, param: str) -> Value:
        if self.numbers and isinstance(v, (int, float)):   # (subgroupAdd(1.0) in GLSL: the literal's type)
            v = arith.literal(cg.em, v, arith.default_type(v))
        value = cg.as_runtime(v)
        if self.accepts is not None and not self.accepts(value.type):
            raise self.fail(cg, value, name, param)
        return value


@record(frozen=True)
class Operand(Conversion):
    """An operand of arithmetic or math: a Python number or a runtime value (:func:`arith.operand`, the one
    gate), whose refusal names ``what`` (default: ``name()``)."""

    what: str = ""

    def __call__(self, cg: Builder, v: Any, name: str, param: str) -> Any:
        return arith.operand(cg.em, cg.as_operand(v), self.what or f"{name}()")


@record(frozen=True)
class Index(Conversion):
    """An integer index value (``Builder.as_index``: a Python int becomes a u32 constant, i32 when negative,
    by :func:`coopdsl.lang.arith.index_literal`); ``what`` names it in messages."""

    what: str = "the index"

    def __call__(self, cg: Builder, v: Any, name: str, param: str) -> Value:
        return cg.as_index(v, self.what)


@record(frozen=True)
class CompileTime(Conversion):
    """A compile-time value of Python type ``kind`` (``Builder.compile_time``; ``what`` names it)."""

    kind: type
    what: str = ""

    def __call__(self, cg: Builder, v: Any, name: str, param: str) -> Any:
        return cg.compile_time(v, self.what or param, self.kind)


@record(frozen=True)
class Literal(Conversion):
    """A compile-time integer that ``accepts`` takes and that fits the scalar type ``fits``, as a Python int
    (an operand of an instruction's literal word, an array length...).  ``message`` refuses anything else;
    ``fits_message`` (``{value}`` and ``{why}``) a value that does not fit."""

    fits: T.ScalarType = T.u32
    accepts: Callable[[int], bool] | None = None
    message: str = "{param} must be a compile-time int, got {got}"
    fits_message: str = "{param}={value}: {why}"
    error: type[CompileError] = ArgumentError

    def __call__(self, cg: Builder, v: Any, name: str, param: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or self.accepts is not None and not self.accepts(v):
            raise self.fail(cg, v, name, param)
        try:
            return int(fit(v, self.fits))
        except LiteralError as e:
            raise self.error(self.fits_message.format(name=name, param=param, value=v, why=e), cg.em.loc) from None


@record(frozen=True)
class TypeObject(Conversion):
    """A type object of one of the IR type classes ``classes`` (``f32``, ``vec4[u32]``, ``MatA[...]``)."""

    classes: tuple[type, ...] = (T.ScalarType, T.VectorType)
    message: str = "{name}: {param} must be a type, got {got}"
    accepts: Callable[[T.Type], bool] | None = None

    def __call__(self, cg: Builder, v: Any, name: str, param: str) -> T.Type:
        if not isinstance(v, T.Type) or not isinstance(v, self.classes) or \
                self.accepts is not None and not self.accepts(v):
            raise self.fail(cg, v, name, param)
        return v


@record(frozen=True)
class Matrix(Conversion):
    """A runtime cooperative matrix, of use ``use`` (0 A, 1 B, 2 accumulator) unless None."""

    use: int | None = None
    message: str = "{name}: {param} must be a cooperative matrix, got {got}"

    def __call__(self, cg: Builder, v: Any, name: str, param: str) -> Value:
        v = cg.as_operand(v)
        if not isinstance(v, Value) or not isinstance(v.type, T.CoopMatType) or \
                self.use is not None and v.type.use != self.use:
            raise self.fail(cg, v, name, param)
        return v


@record(frozen=True)
class Enum(Conversion):
    """An enumerant of SPIR-V kind ``kind`` (``cd.RowMajor``, ``cd.UseA``...)."""

    kind: str
    message: str = "{param} must be a coopdsl enumerant, got {got}"
    error: type[CompileError] = ArgumentError

    def __call__(self, cg: Builder, v: Any, name: str, param: str) -> Enumerant:
        if not isinstance(v, Enumerant) or v.kind != self.kind:
            raise self.fail(cg, v, name, param)
        return v


@record(frozen=True)
class ScopeArg(Conversion):
    """A scope (:func:`coopdsl.lang.types.as_scope`, the one check of scopes), as the IR's :class:`Scope`;
    ``what`` names it (``{name}`` and ``{param}`` filled in)."""

    what: str = "{param}"
    allowed: tuple[str, ...] = VULKAN_SCOPES

    def __call__(self, cg: Builder, v: Any, name: str, param: str) -> Scope:
        return as_scope(cg, v, self.what.format(name=name, param=param), self.allowed)


@record(frozen=True)
class Memory(Conversion):
    """Memory a kernel indexes (a buffer parameter, a shared, local or private array: a :class:`BufferRef`)
    in one of the storage classes ``storages``."""

    storages: tuple[StorageClass, ...] = (StorageClass.StorageBuffer, StorageClass.Workgroup,
                                          StorageClass.Function, StorageClass.Private)
    message: str = "{name}() works on a buffer or an array, got {got}"

    def __call__(self, cg: Builder, v: Any, name: str, param: str) -> BufferRef:
        if not isinstance(v, BufferRef) or v.storage not in self.storages:
            raise self.fail(cg, v, name, param)
        return v


@record(frozen=True)
class Bool(Conversion):
    """A bool: a runtime ``bool`` value, or a Python bool as a constant."""

    message: str = "{name}() takes a bool, got {type}"

    def __call__(self, cg: Builder, v: Any, name: str, param: str) -> Value:
        if isinstance(v, bool):
            return arith.literal(cg.em, v, T.boolean)
        value = cg.as_runtime(v)
        if value.type != T.boolean:
            raise self.fail(cg, value, name, param)
        return value


# the kinds most builtins take, declared once
RUNTIME = Runtime()
OPERAND = Operand()


def scalar_or_vector(t: T.Type) -> bool:
    """A scalar or vector type."""
    return isinstance(t, (T.ScalarType, T.VectorType))


def numeric(t: T.Type) -> bool:
    """A scalar or vector of numbers that take arithmetic (not bools, not bf16/fp8)."""
    e = T.elem_of(t)
    return scalar_or_vector(t) and isinstance(e, T.ScalarType) and not e.is_bool and \
        not (e.is_float and not e.is_ieee)


def exchangeable(t: T.Type) -> bool:
    """A scalar or vector of numbers or bools (not bf16/fp8): what the lanes of a subgroup exchange."""
    e = T.elem_of(t)
    return scalar_or_vector(t) and isinstance(e, T.ScalarType) and not (e.is_float and not e.is_ieee)


def float_scalar_or_vector(t: T.Type) -> bool:
    """A float scalar or vector (any encoding)."""
    e = T.elem_of(t)
    return scalar_or_vector(t) and isinstance(e, T.ScalarType) and e.is_float


def bool_vector(t: T.Type) -> bool:
    """A vector of bools."""
    return isinstance(t, T.VectorType) and t.elem == T.boolean
