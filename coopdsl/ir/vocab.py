"""The IR's vocabulary: scalar kinds, storage classes, float encodings, matrix uses and scopes as enums.

Each is a ``str`` or ``int`` enum whose values are what the IR held before as strings and bare ints
(a scalar kind is ``"int"``, a storage class and a float encoding are SPIR-V enumerant names, a matrix
use and a scope are SPIR-V enumerant values), so members compare and hash as those values, print as
them, and tables keyed by them keep working; code asks the predicates (``kind.is_int``,
``storage.is_physical``, ``use.is_operand``) instead of comparing spellings.  The SPIR-V names and values
are the generated grammar tables' (``tests/ir/test_vocab.py`` checks every member against them).
"""

from __future__ import annotations

import enum


class _Named(str, enum.Enum):
    """A str-valued enum that prints as its value (as the strings it replaces did)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class _Numbered(int, enum.Enum):
    """An int-valued enum that prints as its value (as the ints it replaces did)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(int(self.value), spec)


class ScalarKind(_Named):
    """What a scalar is: a boolean, an integer (signed or not) or a float (of any encoding)."""

    BOOL = "bool"
    INT = "int"
    FLOAT = "float"

    @property
    def is_bool(self) -> bool:
        return self is ScalarKind.BOOL

    @property
    def is_int(self) -> bool:
        return self is ScalarKind.INT

    @property
    def is_float(self) -> bool:
        return self is ScalarKind.FLOAT

    @property
    def is_numeric(self) -> bool:
        """An integer or a float (arithmetic applies)."""
        return self is not ScalarKind.BOOL


class FloatEncoding(_Named):
    """A non-IEEE float encoding (SPIR-V FPEncoding); IEEE floats have none (``None``)."""

    BFloat16KHR = "BFloat16KHR"
    Float8E4M3EXT = "Float8E4M3EXT"
    Float8E5M2EXT = "Float8E5M2EXT"

    @property
    def type_name(self) -> str:
        """How kernels name the scalar type of this encoding (``bf16``, ``e4m3``, ``e5m2``)."""
        return _ENCODING_NAMES[self]

    @property
    def is_fp8(self) -> bool:
        return self is not FloatEncoding.BFloat16KHR

    @property
    def is_bfloat(self) -> bool:
        return self is FloatEncoding.BFloat16KHR

    @property
    def has_infinities(self) -> bool:
        """Whether the encoding has infinities (E4M3 saturates: it has none)."""
        return self is not FloatEncoding.Float8E4M3EXT


_ENCODING_NAMES = {FloatEncoding.BFloat16KHR: "bf16", FloatEncoding.Float8E4M3EXT: "e4m3",
                   FloatEncoding.Float8E5M2EXT: "e5m2"}


class StorageClass(_Named):
    """The SPIR-V StorageClass of a pointer or variable (the ones coopdsl uses)."""

    UniformConstant = "UniformConstant"
    Input = "Input"
    Uniform = "Uniform"
    Output = "Output"
    Workgroup = "Workgroup"
    Private = "Private"
    Function = "Function"
    PushConstant = "PushConstant"
    StorageBuffer = "StorageBuffer"
    PhysicalStorageBuffer = "PhysicalStorageBuffer"

    @property
    def is_physical(self) -> bool:
        """Memory addressed by a 64-bit device address (``Ptr``): accesses carry alignments."""
        return self is StorageClass.PhysicalStorageBuffer

    @property
    def is_interface(self) -> bool:
        """Entry-point interface variables (built-in inputs and outputs)."""
        return self in (StorageClass.Input, StorageClass.Output)

    @property
    def is_shared(self) -> bool:
        """Workgroup-shared memory."""
        return self is StorageClass.Workgroup

    @property
    def is_invocation_local(self) -> bool:
        """Memory each invocation has its own copy of (function and private variables)."""
        return self in (StorageClass.Function, StorageClass.Private)

    @property
    def is_device(self) -> bool:
        """Device memory: storage buffers and device pointers."""
        return self in (StorageClass.StorageBuffer, StorageClass.PhysicalStorageBuffer)


class MatrixUse(_Numbered):
    """A cooperative matrix's use (SPIR-V CooperativeMatrixUse): the A or B operand, or the accumulator."""

    A = 0
    B = 1
    Acc = 2

    @property
    def spirv_name(self) -> str:
        """The SPIR-V enumerant name (``MatrixAKHR``, ``MatrixBKHR``, ``MatrixAccumulatorKHR``)."""
        return ("MatrixAKHR", "MatrixBKHR", "MatrixAccumulatorKHR")[self.value]

    @property
    def family(self) -> str:
        """The type family kernels write it with (``MatA``, ``MatB``, ``Acc``)."""
        return ("MatA", "MatB", "Acc")[self.value]

    @property
    def described(self) -> str:
        """How messages name it: ``A (MatA)``, ``B (MatB)``, ``accumulator (Acc)``."""
        return ("A (MatA)", "B (MatB)", "accumulator (Acc)")[self.value]

    @property
    def is_operand(self) -> bool:
        """The A or B operand of a multiply."""
        return self is not MatrixUse.Acc

    @property
    def is_accumulator(self) -> bool:
        return self is MatrixUse.Acc


class Scope(_Numbered):
    """An execution or memory scope (the values are SPIR-V's Scope values); prints as its name."""

    CrossDevice = 0
    Device = 1
    Workgroup = 2
    Subgroup = 3
    Invocation = 4
    QueueFamily = 5

    def __str__(self) -> str:
        return self.name

    def __format__(self, spec: str) -> str:
        return format(self.name, spec)

    @property
    def is_subgroup(self) -> bool:
        return self is Scope.Subgroup

    @property
    def is_workgroup(self) -> bool:
        return self is Scope.Workgroup


MATRIX_SCOPES = (Scope.Subgroup, Scope.Workgroup)  # the scopes a cooperative matrix can have


def matrix_use(value: object) -> MatrixUse | None:
    """The use a matrix type's ``use`` dimension names, or None (a symbolic use, or no use)."""
    return MatrixUse(value) if isinstance(value, int) and value in _USES else None


def matrix_scope(value: object) -> Scope | None:
    """The scope a matrix type's ``scope`` dimension names, or None (a symbolic or unknown scope)."""
    return Scope(value) if isinstance(value, int) and value in _SCOPES else None


_USES = frozenset(u.value for u in MatrixUse)
_SCOPES = frozenset(s.value for s in Scope)
