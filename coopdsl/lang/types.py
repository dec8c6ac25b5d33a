"""What kernel code names as types: scalars, vectors, cooperative matrices,
parameter kinds (Buffer, Spec, Push), layouts, scopes and uses.

These objects are evaluated at compile time.  ``MatA[f16, 16, 16]`` is a
:class:`~coopdsl.ir.types.CoopMatType`; ``Buffer[f16]`` describes a storage
buffer parameter; ``RowMajor`` is a layout constant.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._records import record
from ..errors import ArgumentError, DeclarationError, caller_loc
from ..ir import types as T
from ..ir.attrs import Scope
from ..ir.types import (  # noqa: F401  (re-exported names kernels use)
    CoopMatType,
    ScalarType,
    VectorType,
)
from ..ir.types import bf16 as bf16
from ..ir.types import boolean as boolean
from ..ir.types import e4m3 as e4m3
from ..ir.types import e5m2 as e5m2
from ..ir.types import f16 as f16
from ..ir.types import f32 as f32
from ..ir.types import f64 as f64
from ..ir.types import i8 as i8
from ..ir.types import i16 as i16
from ..ir.types import i32 as i32
from ..ir.types import i64 as i64
from ..ir.types import u8 as u8
from ..ir.types import u16 as u16
from ..ir.types import u32 as u32
from ..ir.types import u64 as u64

if TYPE_CHECKING:
    from .context import Builder


@record(frozen=True)
class Enumerant:
    """A named SPIR-V enumerant kernels pass to builtins (layouts, scopes, uses)."""

    kind: str
    name: str
    value: int
    label: str = ""  # how kernels name it (coopdsl.<label>), when it differs from the SPIR-V name

    def __repr__(self) -> str:
        return self.label or self.name


RowMajor = Enumerant("CooperativeMatrixLayout", "RowMajorKHR", 0, "RowMajor")
ColumnMajor = Enumerant("CooperativeMatrixLayout", "ColumnMajorKHR", 1, "ColumnMajor")
CrossDevice = Enumerant("Scope", "CrossDevice", 0)
Device = Enumerant("Scope", "Device", 1)
Workgroup = Enumerant("Scope", "Workgroup", 2)
Subgroup = Enumerant("Scope", "Subgroup", 3)
Invocation = Enumerant("Scope", "Invocation", 4)
QueueFamily = Enumerant("Scope", "QueueFamily", 5)
UseA = Enumerant("CooperativeMatrixUse", "MatrixAKHR", 0, "UseA")
UseB = Enumerant("CooperativeMatrixUse", "MatrixBKHR", 1, "UseB")
UseAcc = Enumerant("CooperativeMatrixUse", "MatrixAccumulatorKHR", 2, "UseAcc")
ClampUndefined = Enumerant("TensorClampMode", "Undefined", 0, "ClampUndefined")
ClampConstant = Enumerant("TensorClampMode", "Constant", 1, "ClampConstant")
ClampToEdge = Enumerant("TensorClampMode", "ClampToEdge", 2)
ClampRepeat = Enumerant("TensorClampMode", "Repeat", 3, "ClampRepeat")
ClampRepeatMirrored = Enumerant("TensorClampMode", "RepeatMirrored", 4, "ClampRepeatMirrored")


VULKAN_SCOPES = ("Device", "Workgroup", "Subgroup", "Invocation", "QueueFamily")


def as_scope(cg: Builder, value: object, what: str, allowed: tuple[str, ...] = VULKAN_SCOPES) -> Scope:
    """``value`` as an IR scope: the one place that checks a scope argument.

    Vulkan has no CrossDevice scope (VUID-StandaloneSpirv-None-04636..04638),
    so it is refused unless ``allowed`` names it.
    """
    if not isinstance(value, Enumerant) or value.kind != "Scope":
        raise ArgumentError(f"{what} must be a scope (coopdsl.{', '.join(allowed)}), got {cg.describe(value)}",
                            cg.em.loc)
    if value.name not in allowed:
        raise ArgumentError(f"{what} cannot be {value.name} in Vulkan; use one of {', '.join(allowed)}", cg.em.loc)
    return Scope[value.name]


ENUM_DIMS = {"use": ("CooperativeMatrixUse", "UseA, UseB or UseAcc"), "scope": ("Scope", "Subgroup or Workgroup")}
ENUM_VALUES = {"use": (0, 1, 2), "scope": (Workgroup.value, Subgroup.value)}


def _dim(value: object, what: str) -> int | T.SymDim:
    """A matrix type parameter: a positive 32-bit int or a symbolic (spec-constant) one; enumerants only
    where they belong (a use for ``use``, a scope for ``scope``)."""
    kind, names = ENUM_DIMS.get(what, (None, None))
    if isinstance(value, Enumerant):
        if value.kind != kind:
            expected = f"{names}" if kind else "a number"
            raise _declaration_error(f"{what} must be {expected}, not coopdsl.{value!r}", "[")
        return value.value
    if isinstance(value, bool) or not isinstance(value, (int, T.SymDim)):
        expected = f"{names} (or a specialization constant)" if kind else \
            "an int, a compile-time constant or a specialization constant"
        raise _declaration_error(f"{what} must be {expected}, not {named(value)}", "[")
    if isinstance(value, int) and not 0 < value <= 0xFFFFFFFF and kind is None:
        raise _declaration_error(f"{what} must be from 1 to 4294967295 (a 32-bit constant), got {value}", "[")
    if isinstance(value, T.SymDim) and kind is None:
        problem = T.dim_problem(value, what)
        if problem is not None:
            raise _declaration_error(problem, "[")
    if isinstance(value, T.SymDim) and kind is not None:   # a use or scope: checked at every value, default too
        v = T.dim_value(value)
        if v is not None and v not in ENUM_VALUES[what]:
            raise _declaration_error(f"{what} must be {names}, got {T.dim_shown(value)}", "[")
    return value


class CoopMatFamily:
    """``MatA``/``MatB``/``Acc``: subscript with [component, rows, cols(, scope)].

    ``CoopMat`` (no fixed use) takes [component, rows, cols, use(, scope)].
    """

    def __init__(self, name: str, use: int | None):
        self.name = name
        self.use = use

    def __getitem__(self, params: Any) -> CoopMatType:
        params = params if isinstance(params, tuple) else (params,)
        need = 3 if self.use is not None else 4
        if len(params) not in (need, need + 1):
            shape = "component, rows, cols" + ("" if self.use is not None else ", use")
            raise _declaration_error(f"{self.name}[...] takes [{shape}] and an optional scope, got {len(params)} "
                                     f"parameters", f"{self.name}[")
        elem = params[0]
        if not isinstance(elem, ScalarType) or elem.is_bool:
            raise _declaration_error(f"{self.name} component type must be a numeric scalar type, not "
                                     f"{named(elem)}", f"{self.name}[")
        rows = _dim(params[1], "rows")
        cols = _dim(params[2], "cols")
        use = self.use if self.use is not None else _dim(params[3], "use")
        scope = _dim(params[need], "scope") if len(params) > need else Subgroup.value
        if isinstance(scope, int) and scope not in ENUM_VALUES["scope"]:
            given = params[need]
            shown = f"coopdsl.{given!r} ({scope})" if isinstance(given, Enumerant) else str(scope)
            raise _declaration_error(f"scope must be Subgroup or Workgroup, got {shown}", f"{self.name}[")
        if isinstance(use, int) and use not in ENUM_VALUES["use"]:
            raise _declaration_error(f"use must be UseA, UseB or UseAcc, got {use}", f"{self.name}[")
        return CoopMatType(elem, scope, rows, cols, use)

    def __repr__(self) -> str:
        return self.name


MatA = CoopMatFamily("MatA", 0)
MatB = CoopMatFamily("MatB", 1)
Acc = CoopMatFamily("Acc", 2)
CoopMat = CoopMatFamily("CoopMat", None)


class _VecFamily:
    def __init__(self, n: int):
        self.n = n

    def __getitem__(self, elem: object) -> VectorType:
        if not isinstance(elem, ScalarType):
            raise _declaration_error(f"vec{self.n}[...] takes a scalar type, not {named(elem)}", f"vec{self.n}[")
        return VectorType(elem, self.n)

    def __repr__(self) -> str:
        return f"vec{self.n}"


vec2, vec3, vec4 = _VecFamily(2), _VecFamily(3), _VecFamily(4)


# -- kernel parameter kinds ---------------------------------------------------
@record(frozen=True)
class BufferParam:
    """A storage buffer of ``elem`` (scalar or vector) at (set, binding)."""

    elem: T.Type

    def __str__(self) -> str:
        return f"Buffer[{named(self.elem)}]"


@record(frozen=True)
class SpecParam:
    """A specialization constant of ``type``; ``spec_id`` None = next free id."""

    type: ScalarType
    spec_id: int | None = None

    def __str__(self) -> str:
        return f"Spec[{self.type}]" if self.spec_id is None else f"Spec[{self.type}, {self.spec_id}]"


@record(frozen=True)
class PushParam:
    """A push-constant scalar."""

    type: T.Type

    def __str__(self) -> str:
        return f"Push[{named(self.type)}]"


def named(x: object) -> str:
    """A declaration argument as users write it: a type, a parameter kind's annotation (``Buffer[f32]``: what
    spells itself, with its own ``__str__``), a matrix family, a Python class by its name (``int``)."""
    if isinstance(x, CoopMatFamily):
        return x.name
    if isinstance(x, type):
        return x.__name__
    if not isinstance(x, str) and type(x).__str__ is not object.__str__:
        return str(x)
    return repr(x)


class _Nothing:
    """What an empty subscript (``Buffer[()]``) gives a parameter kind: a type it refuses, named as such."""

    def __repr__(self) -> str:
        return "nothing"


_NOTHING = _Nothing()


class _ParamKind:
    def __init__(self, name: str, make: Callable[..., Any]):
        self.name = name
        self.make = make

    def __getitem__(self, params: Any) -> Any:
        params = params if isinstance(params, tuple) else (params,)
        return self.make(*(params or (_NOTHING,)))   # (Buffer[()]: the kind's own error, "got nothing")

    def __repr__(self) -> str:
        return self.name


def _declaration_error(message: str, word: str) -> DeclarationError:
    return DeclarationError(message, caller_loc(word))


def _buffer(elem: object, *rest: object) -> BufferParam:
    if rest or not isinstance(elem, (ScalarType, VectorType, T.StructType)):
        raise _declaration_error(f"Buffer[...] takes one scalar, vector or struct element type, e.g. Buffer[f16]; "
                                 f"got {named(elem)}", "Buffer[")
    return BufferParam(elem)


def _spec(t: object, spec_id: object = None, *rest: object) -> SpecParam:
    if rest or not isinstance(t, ScalarType):
        got = ", ".join(named(x) for x in (t, spec_id, *rest)) if rest else named(t)
        raise _declaration_error(f"Spec[...] takes a scalar type and an optional id, e.g. Spec[u32, 3]; "
                                 f"got {got}", "Spec[")
    if spec_id is not None and (isinstance(spec_id, bool) or not isinstance(spec_id, int) or
                                not 0 <= spec_id <= 0xFFFFFFFF):
        raise _declaration_error(f"a specialization constant id must be an int from 0 to 4294967295 (a 32-bit "
                                 f"SpecId), got {spec_id!r}", "Spec[")
    return SpecParam(t, spec_id)


def _push(t: object, *rest: object) -> PushParam:
    if rest or not isinstance(t, (ScalarType, VectorType, T.StructType, T.PointerType)):
        raise _declaration_error(f"Push[...] takes one scalar, vector, struct or Ptr type, e.g. Push[u32]; "
                                 f"got {named(t)}", "Push[")
    return PushParam(t)


Buffer = _ParamKind("Buffer", _buffer)
Spec = _ParamKind("Spec", _spec)
Push = _ParamKind("Push", _push)


@record(frozen=True)
class ConstParam:
    """A compile-time kernel parameter: its value is part of the compiled kernel."""

    type: type | None = None  # int, float, bool, or None for any compile-time value

    def __str__(self) -> str:
        return "Const" if self.type is None else f"Const[{named(self.type)}]"

    def accepts(self, value: object) -> bool:
        """Whether ``value`` is a value of this compile-time type (a bool is no int here, as in a launch's
        numbers): the one rule of a kernel's ``Const`` parameters and a device function's."""
        return self.type is None or isinstance(value, self.type) and not (self.type is int and isinstance(value, bool))


def _const(t: object = None, *rest: object) -> ConstParam:
    if rest or t not in (None, int, float, bool, T.Type) and not isinstance(t, type):
        raise _declaration_error("Const[...] takes a Python type such as int, float or bool, e.g. Const[int]",
                                 "Const[")
    return ConstParam(t)


Const = _ParamKind("Const", _const)
