"""IR types: frozen, hashable dataclasses whose equality is SPIR-V's uniqueness.

Two IR types compare equal exactly when SPIR-V requires them to be the same
type id (SPIR-V 2.8 "Types", uniqueness rules), so the SPIR-V writer can key
its type cache on them directly (as naga does).  The scalar instances below are
also the names kernels use: ``coopdsl.f16`` *is* ``ScalarType(ScalarKind.FLOAT, 16)``.  Scalar kinds,
float encodings, storage classes, matrix uses and scopes are the enums of :mod:`coopdsl.ir.vocab`.

Cooperative-matrix dimensions (scope, rows, columns, use) are ``Dim``: a Python
``int`` or a :class:`SymDim`, a symbolic value computed from specialization
constants, compared structurally (``SymDim`` equality is symbolic equality).
"""

from __future__ import annotations

import contextvars
from typing import Any, Literal, NoReturn

from .._numbers import int_op
from .._records import record
from .vocab import MATRIX_SCOPES, FloatEncoding, ScalarKind, StorageClass, matrix_scope, matrix_use


class Type:
    """Base of every IR type."""

    def __str__(self) -> str:  # pragma: no cover - overridden
        return type(self).__name__


@record(frozen=True)
class VoidType(Type):
    """The type of nothing (functions and ops without a result)."""

    def __str__(self) -> str:
        return "void"


@record(frozen=True)
class ScalarType(Type):
    """bool, signed/unsigned integers and floats (with optional FP encoding)."""

    kind: ScalarKind
    width: int
    signed: bool = False
    encoding: FloatEncoding | None = None  # None: IEEE (or not a float)

    def __post_init__(self) -> None:
        # a kind or encoding given by its spelling ("int", "BFloat16KHR") is held as the enum member
        if type(self.kind) is not ScalarKind:
            object.__setattr__(self, "kind", ScalarKind(self.kind))
        if self.encoding is not None and type(self.encoding) is not FloatEncoding:
            object.__setattr__(self, "encoding", FloatEncoding(self.encoding))

    @property
    def name(self) -> str:
        if self.kind.is_bool:
            return "bool"
        if self.kind.is_float:
            return f"f{self.width}" if self.encoding is None else self.encoding.type_name
        return f"{'i' if self.signed else 'u'}{self.width}"

    @property
    def is_float(self) -> bool:
        return self.kind.is_float

    @property
    def is_int(self) -> bool:
        return self.kind.is_int

    @property
    def is_bool(self) -> bool:
        return self.kind.is_bool

    @property
    def is_ieee(self) -> bool:
        """True for f16/f32/f64: floats SPIR-V arithmetic accepts (bf16/fp8 not)."""
        return self.kind.is_float and self.encoding is None

    @property
    def is_unsigned_int(self) -> bool:
        return self.kind.is_int and not self.signed

    @property
    def nbytes(self) -> int:
        return max(self.width // 8, 1) if not self.kind.is_bool else 4

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return self.name

    def __call__(self, *args: object, **kwargs: object) -> NoReturn:
        from ..errors import DeclarationError, caller_loc

        what = "decorates nothing" if len(args) == 1 and callable(args[0]) else "converts values"
        raise DeclarationError(f"{self.name}(...) {what} outside a kernel: it converts values inside a coopdsl "
                               f"kernel only (an annotation is written `x: {self.name}`)", caller_loc(self.name))


@record(frozen=True)
class VectorType(Type):
    """A vector of ``count`` scalars."""

    elem: ScalarType
    count: int

    def __str__(self) -> str:
        return f"vec{self.count}[{self.elem}]"  # as kernels write it


@record(frozen=True)
class SymDim:
    """A symbolic dimension: a specialization constant or an expression of them.

    ``op`` is "spec" (``args`` = (id, name, type name, default)) or an
    arithmetic operator name whose ``args`` are Dims.
    """

    op: str
    args: tuple[Any, ...]

    def __repr__(self) -> str:
        """The dataclass repr, kept once made: :func:`symbolic` orders operands by it (the fields never change)."""
        text = self.__dict__.get("_repr")
        if text is None:
            text = self.__dict__["_repr"] = f"SymDim(op={self.op!r}, args={self.args!r})"
        return text

    def __str__(self) -> str:
        if self.op == "spec":
            return str(self.args[1])
        if len(self.args) == 1:
            return f"{_SYMBOLS.get(self.op, self.op)}{self.args[0]}"
        return f"({f' {_SYMBOLS.get(self.op, self.op)} '.join(str(a) for a in self.args)})"


def dim_value(d: Dim) -> int | None:
    """``d`` evaluated with its specialization constants at their defaults -- during ``compile(spec=...)``, at the
    values given -- or None where it cannot be (a division by zero, a shift by the width or more, an operator
    without an evaluation here).  The arithmetic is the module's: that of the constants' integer type, as
    OpSpecConstantOp computes it on the device and the interpreter does (u32: ``K * 2**31 + 1`` is 1 at K = 2),
    so that the rules on sizes check the length a kernel gets."""
    if isinstance(d, int):
        return d
    if d.op == "spec":
        return d.args[3] if isinstance(d.args[3], int) and not isinstance(d.args[3], bool) else None
    maybe = [dim_value(a) for a in d.args]
    args = [a for a in maybe if a is not None]
    if len(args) != len(maybe):
        return None
    return int_op(d.op, args, _dim_type(d))


def _dim_type(d: Dim) -> str | None:
    """The integer type name of a symbolic dimension's specialization constants (its arithmetic's type)."""
    if isinstance(d, int):
        return None
    if d.op == "spec":
        return str(d.args[2])
    return next((t for t in (_dim_type(a) for a in d.args) if t is not None), None)


# the specialization constants a compile was given values for (compile(spec=...), a launch's, emit --spec):
# kernel._compile sets it while it compiles
GIVEN_SPECS: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar("given_specs", default=frozenset())


def _spec_names(d: Dim) -> set[str]:
    if isinstance(d, int):
        return set()
    if d.op == "spec":
        return {str(d.args[1])}
    return set().union(*(_spec_names(a) for a in d.args))


def given_value(d: Dim) -> int | None:
    """``d``'s value where the rules on sizes check it: an int, or a specialization constant (expression) at the
    values a compile or launch gives (:data:`GIVEN_SPECS`); None otherwise.  At their defaults alone spec-sized
    dimensions are not checked, as glslang checks none: a port's defaults may be placeholders
    (vk_cooperative_matrix_perf's size ``C_ROWS * C_COLS`` is 0 there)."""
    if isinstance(d, SymDim) and not _spec_names(d) & GIVEN_SPECS.get():
        return None
    return dim_value(d)


def dim_shown(d: Dim) -> str:
    """``d`` as a message names it: an int as itself; a specialization constant (expression) with its value and
    where that value comes from (given to the compile or launch, or the defaults)."""
    if isinstance(d, int):
        return str(d)
    return f"{d} = {dim_value(d)}" + ("" if _spec_names(d) & GIVEN_SPECS.get() else " by default")


def spec_values_shown(d: Dim) -> str:
    """The values of ``d``'s specialization constants as a message names them: ``S = 64`` (``A = 1 and B = 2``)."""
    leaves: dict[str, object] = {}

    def walk(x: Dim) -> None:
        if isinstance(x, SymDim):
            if x.op == "spec":
                leaves[str(x.args[1])] = x.args[3]
            for a in x.args if x.op != "spec" else ():
                walk(a)

    walk(d)
    return " and ".join(f"{n} = {v}" for n, v in sorted(leaves.items()))


def given_shown(d: Dim) -> str:
    """``d`` at its :func:`given_value` as a message names it: ``8``, ``W = 22``, ``(T + 1) = 21 at T = 20``."""
    if isinstance(d, int):
        return str(d)
    if d.op == "spec":
        return f"{d} = {dim_value(d)}"
    return f"{d} = {dim_value(d)} at {spec_values_shown(d)}"


# the operators whose exact result may not fit the constants' type, which OpSpecConstantOp then wraps
_WRAPPING = frozenset({"add", "sub", "mul", "neg", "shl", "div"})


def dim_wrap(d: Dim) -> tuple[SymDim, int, int] | None:
    """The first operation of ``d`` (innermost first) whose result at the constants' values does not fit their
    integer type, which the module's arithmetic wraps (u32: ``S - 65`` at S = 64 is 4294967295): the operation,
    its exact result and the wrapped one; None where nothing wraps or a value is unknown."""
    if isinstance(d, int) or d.op == "spec":
        return None
    for a in d.args:
        inner = dim_wrap(a)
        if inner is not None:
            return inner
    if d.op not in _WRAPPING:
        return None
    args = [dim_value(a) for a in d.args]
    known = [a for a in args if a is not None]
    if len(known) != len(args):
        return None
    exact, wrapped = int_op(d.op, known, None), int_op(d.op, known, _dim_type(d))
    if exact is None or wrapped is None or exact == wrapped:
        return None
    return d, exact, wrapped


def wrap_shown(d: Dim) -> str | None:
    """Where ``d``'s arithmetic wraps (:func:`dim_wrap`) as a message says it, ``got (S - 65) at S = 64: (S - 65) =
    -1 does not fit u32, whose arithmetic wraps it to 4294967295``; None where it does not."""
    wrap = dim_wrap(d)
    if wrap is None:
        return None
    op, exact, wrapped = wrap
    return (f"got {d} at {spec_values_shown(d)}: {op} = {exact} does not fit {_dim_type(d)}, whose arithmetic "
            f"wraps it to {wrapped}")


def dim_problem(d: Dim, what: str, top: int = 0xFFFFFFFF) -> str | None:
    """Why ``d`` cannot be a matrix dimension or an array length (from 1 to ``top``), at its
    :func:`given_value`; None if it can.  A specialization-constant expression whose arithmetic wraps in the
    constants' type at those values (u32: ``S - 65`` at S = 64) cannot be one either: the length it gets is not
    the one written."""
    v = given_value(d)
    if v is None:
        return None
    wrapped = wrap_shown(d)
    if wrapped is not None:
        return f"{what} must be from 1 to {top} without wrapping, {wrapped}"
    if 0 < v <= top:
        return None
    if isinstance(d, int):
        return f"{what} must be from 1 to {top}, got {v}"
    if d.op == "spec":
        return f"{what} must be from 1 to {top}, got {d} = {v} (its specialization constants' values)"
    return f"{what} must be from 1 to {top}, got {given_shown(d)}"


COMMUTATIVE = frozenset({"add", "mul", "and", "or", "xor", "eq", "ne", "land", "lor"})
_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "//", "rem": "%", "and": "&", "or": "|", "xor": "^",
            "shl": "<<", "shr": ">>", "neg": "-", "not": "~", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
            "eq": "==", "ne": "!=", "land": "and", "lor": "or", "select": "?"}


def symbolic(op: str, args: tuple[Any, ...]) -> SymDim:
    """The symbolic dimension ``op(args)`` in a normal form: operands of commutative ops in a fixed order,
    so ``2 * TN`` and ``TN * 2`` are the same dimension."""
    if op in COMMUTATIVE:
        args = tuple(sorted(args, key=lambda a: (not isinstance(a, SymDim), repr(a))))
    return SymDim(op, args)


Dim = int | SymDim


@record(frozen=True)
class ArrayType(Type):
    """An array of ``length`` elements (a Dim), with an explicit stride in laid-out memory."""

    elem: Type
    length: Dim
    stride: int | None = None  # ArrayStride decoration (explicit layouts only)

    def __str__(self) -> str:
        return f"{self.elem}[{self.length}]"


@record(frozen=True)
class RuntimeArrayType(Type):
    """An array whose length is the buffer's (the last member of a storage-buffer block)."""

    elem: Type
    stride: int

    def __str__(self) -> str:
        return f"{self.elem}[]"


LayoutRule = Literal["std430", "scalar"]


@record(frozen=True)
class StructType(Type):
    """A struct; ``offsets`` non-empty means an explicitly laid-out (Block) struct.

    ``rule`` is the layout rule its offsets were computed under (coopdsl/ir/layout.py): a ``"scalar"``
    struct (``@cd.struct(layout_rule="scalar")``) keeps its scalar size and alignment wherever it is laid
    out, so arrays of it stride by its scalar size, as glslang lays out structs under scalar block layout.
    """

    name: str
    members: tuple[tuple[str, Type], ...]
    offsets: tuple[int, ...] = ()
    block: bool = False
    rule: LayoutRule = "std430"

    def member_index(self, name: str) -> int:
        for i, (n, _) in enumerate(self.members):
            if n == name:
                return i
        raise KeyError(name)

    def __str__(self) -> str:
        return self.name


@record(frozen=True)
class PointerType(Type):
    """A pointer into a storage class (a spelling given for ``storage`` is converted to the member)."""

    pointee: Type
    storage: StorageClass

    def __post_init__(self) -> None:
        if type(self.storage) is not StorageClass:
            object.__setattr__(self, "storage", StorageClass(self.storage))

    @property
    def space(self) -> StorageClass:
        """The storage class, typed (``storage`` is always a StorageClass member once made)."""
        return StorageClass(self.storage)

    def __str__(self) -> str:
        return f"ptr<{self.storage}, {self.pointee}>"




def _dim_text(d: Dim) -> str:
    """A dimension as types print it: the number, or the symbolic expression."""
    return str(int(d)) if isinstance(d, int) else str(d)


@record(frozen=True)
class CoopMatType(Type):
    """OpTypeCooperativeMatrixKHR: component type, Scope, Rows, Columns, Use."""

    elem: ScalarType
    scope: Dim
    rows: Dim
    cols: Dim
    use: Dim

    def __str__(self) -> str:
        use = matrix_use(self.use)
        scope = matrix_scope(self.scope)
        use_name = use.name if use is not None else _dim_text(self.use)
        scope_name = scope.name if scope in MATRIX_SCOPES else _dim_text(self.scope)
        name = {"A": "MatA", "B": "MatB", "Acc": "Acc"}.get(use_name, f"CoopMat<use={use_name}>")
        suffix = "" if scope_name == "Subgroup" else f", {scope_name}"
        return f"{name}[{self.elem}, {self.rows}, {self.cols}{suffix}]"


CLAMP_NAMES = {0: "Undefined", 1: "Constant", 2: "ClampToEdge", 3: "Repeat", 4: "RepeatMirrored"}


@record(frozen=True)
class TensorLayoutType(Type):
    """OpTypeTensorLayoutNV: ``dim`` dimensions (1 to 5) and a TensorClampMode (0 to 4, or a spec constant)."""

    dim: int
    clamp: Dim

    def __str__(self) -> str:
        clamp = CLAMP_NAMES.get(self.clamp, str(self.clamp)) if isinstance(self.clamp, int) else str(self.clamp)
        return f"TensorLayout[{self.dim}, {clamp}]"


@record(frozen=True)
class TensorViewType(Type):
    """OpTypeTensorViewNV: ``dim`` dimensions, whether the view has its own dimensions, a permutation."""

    dim: int
    has_dims: bool
    perm: tuple[int, ...]

    def __str__(self) -> str:
        return f"TensorView[{self.dim}, {self.has_dims}, {', '.join(map(str, self.perm))}]"


@record(frozen=True)
class FunctionType(Type):
    """A function's result and parameter types."""

    ret: Type
    params: tuple[Type, ...]

    def __str__(self) -> str:
        return f"fn({', '.join(map(str, self.params))}) -> {self.ret}"


void = VoidType()
boolean = ScalarType(ScalarKind.BOOL, 1)
i8 = ScalarType(ScalarKind.INT, 8, True)
i16 = ScalarType(ScalarKind.INT, 16, True)
i32 = ScalarType(ScalarKind.INT, 32, True)
i64 = ScalarType(ScalarKind.INT, 64, True)
u8 = ScalarType(ScalarKind.INT, 8)
u16 = ScalarType(ScalarKind.INT, 16)
u32 = ScalarType(ScalarKind.INT, 32)
u64 = ScalarType(ScalarKind.INT, 64)
f16 = ScalarType(ScalarKind.FLOAT, 16)
f32 = ScalarType(ScalarKind.FLOAT, 32)
f64 = ScalarType(ScalarKind.FLOAT, 64)
bf16 = ScalarType(ScalarKind.FLOAT, 16, encoding=FloatEncoding.BFloat16KHR)
e4m3 = ScalarType(ScalarKind.FLOAT, 8, encoding=FloatEncoding.Float8E4M3EXT)
e5m2 = ScalarType(ScalarKind.FLOAT, 8, encoding=FloatEncoding.Float8E5M2EXT)

SCALARS = {t.name: t for t in (boolean, i8, i16, i32, i64, u8, u16, u32, u64,
                                f16, f32, f64, bf16, e4m3, e5m2)}


def elem_of(t: Type) -> Type:
    """The scalar a vector or cooperative matrix is made of; the type itself otherwise."""
    if isinstance(t, (VectorType, CoopMatType)):
        return t.elem
    return t


def scalar_of(t: Type) -> ScalarType:
    """The scalar ``t`` is made of: ``t`` itself, or the component of a vector or cooperative matrix.

    For code that already knows ``t`` is scalar-based; any other type is a
    compiler bug (``TypeError``).
    """
    if isinstance(t, ScalarType):
        return t
    if isinstance(t, (VectorType, CoopMatType)):
        return t.elem
    raise TypeError(f"{t} is not a scalar, vector or cooperative matrix")


def pointee_struct(t: Type) -> StructType:
    """The struct ``t`` points at (buffer, uniform and push-constant blocks, ``Ptr`` data)."""
    if not (isinstance(t, PointerType) and isinstance(t.pointee, StructType)):
        raise TypeError(f"{t} does not point at a struct")
    return t.pointee


def block_array(t: Type) -> RuntimeArrayType:
    """The runtime array of a pointer to a ``{ elem data[]; }`` block (storage buffers and ``Ptr[elem]``)."""
    members = pointee_struct(t).members
    if not members or not isinstance(members[0][1], RuntimeArrayType):
        raise TypeError(f"{t} does not point at a block holding a runtime array")
    return members[0][1]


def data_elem(t: PointerType) -> Type | None:
    """The scalar or vector a device pointer addresses (``Ptr[f32]``: a block around a runtime array of
    f32), or None when it addresses structs (what an array passed for it must hold, if anything)."""
    p = t.pointee
    if isinstance(p, StructType) and len(p.members) == 1 and isinstance(p.members[0][1], RuntimeArrayType):
        p = p.members[0][1].elem
    return p if isinstance(p, (ScalarType, VectorType)) else None


def with_elem(t: Type, elem: ScalarType) -> Type:
    """``t`` with its scalar component replaced (shape kept)."""
    if isinstance(t, VectorType):
        return VectorType(elem, t.count)
    if isinstance(t, CoopMatType):
        return CoopMatType(elem, t.scope, t.rows, t.cols, t.use)
    return elem
