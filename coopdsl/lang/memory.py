"""Kernel-declared memory: shared (workgroup) arrays, local arrays, and barriers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._records import record
from ..errors import ArgumentError, TypeMismatchError
from ..ir import types as T
from ..ir.attrs import Scope, Semantics
from ..ir.core import Const, GlobalVar, SpecConst, SpecOp, dim_of
from ..ir.layout import size_of, unlaid
from ..ir.literals import LiteralError, fit
from ..ir.vocab import StorageClass
from .conversions import Conversion, ScopeArg
from .registry import builtin
from .values import BufferRef

if TYPE_CHECKING:
    from .context import Builder


@record(frozen=True)
class ArrayElement(Conversion):
    """The element type of a declared array: a numeric scalar or vector type, a ``@cd.struct`` or array type
    (without layout: :func:`coopdsl.ir.layout.unlaid`), or a cooperative-matrix type where ``matrices``
    (Function and Private memory only)."""

    matrices: bool = False

    def __call__(self, cg: Builder, elem: Any, name: str, param: str) -> T.Type:
        if isinstance(elem, T.CoopMatType) and self.matrices:
            return elem
        if isinstance(elem, T.CoopMatType):
            raise TypeMismatchError(
                f"{name}: cooperative matrices may only live in Function or Private memory "
                f"(SPV_KHR_cooperative_matrix); keep them in variables or compile-time lists", cg.em.loc)
        if isinstance(elem, (T.StructType, T.ArrayType)):   # (without layout decorations: none in these memories)
            return unlaid(elem)   # (an array type holds numeric scalars or vectors: cd.array[...] checks them)
        if not isinstance(elem, (T.ScalarType, T.VectorType)):
            raise TypeMismatchError(f"{name}: the element type must be a scalar, vector, struct or array type, "
                                    f"not {cg.describe(elem)}", cg.em.loc)
        return elem


@record(frozen=True)
class ArrayLength(Conversion):
    """The length of a declared array: a positive compile-time int that fits 32 bits, or an integer Spec
    constant (expression), as the array type's length (an int or a symbolic dimension)."""

    def __call__(self, cg: Builder, length: Any, name: str, param: str) -> T.Dim:
        if isinstance(length, (SpecConst, SpecOp, Const)) and isinstance(length.type, T.ScalarType) and \
                length.type.is_int:
            d = dim_of(length)
            problem = T.dim_problem(d, f"{name}: the length")
            if problem is not None:
                raise ArgumentError(problem, cg.em.loc)
            return d
        if isinstance(length, bool) or not isinstance(length, int):
            raise TypeMismatchError(f"{name}: the length must be a compile-time int or an integer Spec constant, "
                                    f"got {cg.describe(length)}", cg.em.loc)
        if length <= 0:
            raise ArgumentError(f"{name}: the length must be positive, got {length}", cg.em.loc)
        try:  # an array type's length is a 32-bit constant
            fit(length, T.u32)
        except LiteralError as e:
            raise ArgumentError(f"{name}: the length {length} does not fit an array type: {e}", cg.em.loc) \
                from None
        return length


SHARED_ELEMENT, LOCAL_ELEMENT, LENGTH = ArrayElement(), ArrayElement(matrices=True), ArrayLength()


@builtin("(elem, length)", elem=SHARED_ELEMENT, length=LENGTH)
def shared(cg: Builder, elem: T.Type, length: T.Dim) -> BufferRef:
    """A workgroup-shared array of ``length`` elements of ``elem`` (GLSL ``shared``).

    ``elem`` is a scalar or vector type (e.g. ``vec4[u32]`` to stage 128-bit
    loads), a ``@cd.struct`` type (``shared Item s[32];``: members are read and
    written in place, ``s[i].x += 1.0``) or an array type (``cd.array[f32, 17]`` for
    ``shared float tile[16][17];``, indexed ``tile[y][x]``); ``length`` a compile-time
    int or an integer ``Spec`` constant.
    Index it like a buffer; cooperative matrices load from / store to it with
    ``stride`` and offset counted in ``elem`` units.  Declares an OpVariable in
    the Workgroup storage class.
    """
    try:
        size_of(elem)
    except TypeError:   # (an inner length that is a specialization constant: the element has no fixed size)
        raise TypeMismatchError(
            f"shared: an element of {cg.describe(elem)} has no fixed size (an inner length is a specialization "
            f"constant); the host reads a shared array's bytes before a launch, so only its outer length may be a "
            f"Spec constant: give the inner length as an int, or flatten it (cd.shared(f32, T * (T + 1)), indexed "
            f"y * (T + 1) + x)", cg.em.loc) from None
    n = sum(1 for g in cg.module.globals if g.role == "shared")
    var = GlobalVar(T.PointerType(T.ArrayType(elem, length), StorageClass.Workgroup), f"shared{n}", "shared",
                    loc=cg.em.loc)  # (where the device check's shared-memory error points)
    cg.module.globals.append(var)
    return BufferRef(var.name, var, elem, StorageClass.Workgroup, (), length)


@builtin("(elem, length)", elem=LOCAL_ELEMENT, length=LENGTH)
def local_array(cg: Builder, elem: T.Type, length: T.Dim) -> BufferRef:
    """A per-invocation array of ``length`` elements of ``elem`` (OpVariable Function).

    ``elem`` is a scalar, vector, struct, array or cooperative-matrix type (arrays of
    accumulators whose count is a specialization constant live here);
    ``length`` is a compile-time int or an integer ``Spec`` constant; indices
    may be runtime values.
    """
    ptr = T.PointerType(T.ArrayType(elem, length), StorageClass.Function)
    var = cg.function_variable(ptr)
    return BufferRef("local", var, elem, StorageClass.Function, (), length)


@builtin("(elem, length)", elem=LOCAL_ELEMENT, length=LENGTH)
def private_array(cg: Builder, elem: T.Type, length: T.Dim) -> BufferRef:
    """A per-invocation array of ``length`` elements of ``elem`` at module scope (OpVariable Private), as a
    GLSL global array or an HLSL ``static`` one is.

    It is used like :func:`local_array` (scalars, vectors or cooperative matrices; compile-time or
    ``Spec`` length; runtime indices), and differs only in its storage class: one variable for the
    whole module instead of one per function, which some drivers compile differently (the peer GEMM of
    ``benchmarks/peer_gemm`` keeps its accumulators in one). Each call declares a new variable, and
    its values start undefined.
    """
    n = sum(1 for g in cg.module.globals if g.role == "private")
    var = GlobalVar(T.PointerType(T.ArrayType(elem, length), StorageClass.Private), f"private{n}", "private")
    cg.module.globals.append(var)
    return BufferRef(var.name, var, elem, StorageClass.Private, (), length)


SEMANTICS = ("Acquire", "Release", "AcquireRelease", "SequentiallyConsistent", "UniformMemory",
             "WorkgroupMemory", "ImageMemory", "OutputMemory", "MakeAvailable", "MakeVisible", "Volatile")


@record(frozen=True)
class MemorySemantics(Conversion):
    """Memory semantics: names from :data:`SEMANTICS` (a string or a tuple), at most one ordering."""

    def __call__(self, cg: Builder, v: Any, name: str, param: str) -> Semantics:
        names = (v,) if isinstance(v, str) else tuple(v) if isinstance(v, (tuple, list)) else None
        if names is None or not names and name != "control_barrier" or any(n not in SEMANTICS for n in names):
            raise ArgumentError(f"semantics must be names from {', '.join(SEMANTICS)} (a string or a tuple), "
                                f"got {v!r}", cg.em.loc)
        order = [n for n in names if n in ("Acquire", "Release", "AcquireRelease", "SequentiallyConsistent")]
        if len(order) > 1:
            raise ArgumentError(f"semantics may name at most one ordering, got {', '.join(order)}", cg.em.loc)
        problem = barrier_semantics_problem(name, names)
        if problem:
            raise ArgumentError(f"{name}(): semantics {v!r}: {problem}", cg.em.loc)
        return Semantics(names)


STORAGE_BITS = ("UniformMemory", "WorkgroupMemory", "ImageMemory", "OutputMemory")


def barrier_semantics_problem(name: str, names: tuple[str, ...]) -> str | None:
    """What Vulkan's rules for the memory semantics of a barrier refuse in ``names`` (None: nothing), the
    VUID-StandaloneSpirv-MemorySemantics-1086x/1087x rules spirv-val checks."""
    order = next((n for n in names if n in ("Acquire", "Release", "AcquireRelease", "SequentiallyConsistent")), None)
    storage = [n for n in names if n in STORAGE_BITS]
    if order == "SequentiallyConsistent":
        return "Vulkan does not allow SequentiallyConsistent; use AcquireRelease"
    if "Volatile" in names:
        return "Volatile applies to atomics, not barriers"
    if order is not None and not storage:
        return (f"the ordering {order} needs the memory it orders: add one of {', '.join(STORAGE_BITS)} "
                f"(e.g. (\"AcquireRelease\", \"WorkgroupMemory\"))")
    if order is None and (storage or name == "memory_barrier"):
        return ("a memory barrier needs an ordering (Acquire, Release or AcquireRelease)" if name == "memory_barrier"
                else f"{', '.join(storage)} without an ordering orders nothing: add Acquire, Release or AcquireRelease")
    if "MakeAvailable" in names and order not in ("Release", "AcquireRelease"):
        return "MakeAvailable needs Release or AcquireRelease"
    if "MakeVisible" in names and order not in ("Acquire", "AcquireRelease"):
        return "MakeVisible needs Acquire or AcquireRelease"
    return None


SCOPE, MEMORY_SEMANTICS = ScopeArg(), MemorySemantics()


def scope_problem(memory: Scope, semantics: tuple[str, ...], execution: Scope | None = None) -> str | None:
    """What Vulkan's rules on the scopes of a barrier or an atomic refuse (None: nothing), as spirv-val checks
    them: a control barrier's execution scope in a compute shader is Workgroup or Subgroup
    (VUID-StandaloneSpirv-None-04636), and memory scope Invocation takes relaxed semantics only
    (VUID-StandaloneSpirv-None-04641)."""
    if execution is not None and execution not in (Scope.Workgroup, Scope.Subgroup):
        return (f"the execution scope of a control barrier is Workgroup or Subgroup in a compute shader, not "
                f"{execution.name}")
    if memory == Scope.Invocation and semantics:
        return (f"memory scope Invocation takes relaxed semantics only (no ordering or memory bits), got "
                f"{', '.join(semantics)}: use a wider scope (Subgroup, Workgroup, Device)")
    return None


@builtin("(execution, memory, semantics)", execution=SCOPE, memory=SCOPE, semantics=MEMORY_SEMANTICS)
def control_barrier(cg: Builder, execution: Scope, memory: Scope, semantics: Semantics) -> None:
    """OpControlBarrier with explicit execution scope, memory scope and semantics.

    ``cd.control_barrier(cd.Workgroup, cd.Workgroup, ("AcquireRelease", "WorkgroupMemory"))``
    is GLSL's ``barrier()``. The execution scope is Workgroup or Subgroup; memory scope Invocation takes no
    semantics (Vulkan's rules).
    """
    problem = scope_problem(memory, semantics.names, execution)
    if problem:
        raise ArgumentError(f"control_barrier(): {problem}", cg.em.loc)
    cg.em.op("control_barrier", T.void, [], exec_scope=execution, mem_scope=memory, semantics=semantics)


@builtin("(memory, semantics)", memory=SCOPE, semantics=MEMORY_SEMANTICS)
def memory_barrier(cg: Builder, memory: Scope, semantics: Semantics) -> None:
    """OpMemoryBarrier: ``cd.memory_barrier(cd.Device, ("AcquireRelease", "UniformMemory"))`` (not at scope
    Invocation, which orders nothing)."""
    problem = scope_problem(memory, semantics.names)
    if problem:
        raise ArgumentError(f"memory_barrier(): {problem}", cg.em.loc)
    cg.em.op("memory_barrier", T.void, [], mem_scope=memory, semantics=semantics)


@builtin("()", typed=True)
def barrier(cg: Builder) -> None:
    """Workgroup execution and shared-memory barrier (GLSL ``barrier()``).

    OpControlBarrier Workgroup Workgroup AcquireRelease|WorkgroupMemory.
    """
    cg.em.op("control_barrier", T.void, [], exec_scope=Scope.Workgroup, mem_scope=Scope.Workgroup,
             semantics=Semantics(("AcquireRelease", "WorkgroupMemory")))
    return None
