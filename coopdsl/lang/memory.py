"""Kernel-declared memory: shared (workgroup) arrays, local arrays, and barriers."""

from __future__ import annotations

from ..errors import ArgumentError, TypeMismatchError
from ..ir import types as T
from ..ir.attrs import Scope, Semantics
from ..ir.core import Const, GlobalVar, SpecConst, SpecOp, dim_of
from ..ir.literals import LiteralError, fit
from .registry import bind, builtin
from .types import as_scope
from .values import BufferRef


def _array_params(cg, b, args, kwargs, allow_matrices: bool = False):
    p = bind(cg, b, args, kwargs)
    elem, length = p["elem"], p["length"]
    if isinstance(elem, T.CoopMatType) and allow_matrices:
        pass
    elif isinstance(elem, T.CoopMatType):
        raise TypeMismatchError(
            f"{b.name}: cooperative matrices may only live in Function or Private memory "
            f"(SPV_KHR_cooperative_matrix); keep them in variables or compile-time lists", cg.em.loc)
    elif not isinstance(elem, (T.ScalarType, T.VectorType)) or (isinstance(elem, T.ScalarType) and elem.is_bool):
        raise TypeMismatchError(f"{b.name}: the element type must be a numeric scalar or vector type, "
                                f"not {cg.describe(elem)}", cg.em.loc)
    if isinstance(length, (SpecConst, SpecOp, Const)) and isinstance(length.type, T.ScalarType) and \
            length.type.kind == "int":
        length = dim_of(length)
    elif isinstance(length, bool) or not isinstance(length, int):
        raise TypeMismatchError(f"{b.name}: the length must be a compile-time int or an integer Spec constant, "
                                f"got {cg.describe(length)}", cg.em.loc)
    if isinstance(length, int) and length <= 0:
        raise ArgumentError(f"{b.name}: the length must be positive, got {length}", cg.em.loc)
    if isinstance(length, int):
        try:  # an array type's length is a 32-bit constant
            fit(length, T.u32)
        except LiteralError as e:
            raise ArgumentError(f"{b.name}: the length {length} does not fit an array type: {e}", cg.em.loc) \
                from None
    return elem, length


@builtin("(elem, length)")
def shared(cg, args, kwargs):
    """A workgroup-shared array of ``length`` elements of ``elem`` (GLSL ``shared``).

    ``elem`` is a scalar or vector type (e.g. ``vec4[u32]`` to stage 128-bit
    loads); ``length`` a compile-time int or an integer ``Spec`` constant.
    Index it like a buffer; cooperative matrices load from / store to it with
    ``stride`` and offset counted in ``elem`` units.  Declares an OpVariable in
    the Workgroup storage class.
    """
    elem, length = _array_params(cg, shared, args, kwargs)
    n = sum(1 for g in cg.module.globals if g.role == "shared")
    var = GlobalVar(T.PointerType(T.ArrayType(elem, length), "Workgroup"), f"shared{n}", "shared")
    cg.module.globals.append(var)
    return BufferRef(var.name, var, elem, "Workgroup", (), length)


@builtin("(elem, length)")
def local_array(cg, args, kwargs):
    """A per-invocation array of ``length`` elements of ``elem`` (OpVariable Function).

    ``elem`` is a scalar, vector or cooperative-matrix type (arrays of
    accumulators whose count is a specialization constant live here);
    ``length`` is a compile-time int or an integer ``Spec`` constant; indices
    may be runtime values.
    """
    elem, length = _array_params(cg, local_array, args, kwargs, allow_matrices=True)
    ptr = T.PointerType(T.ArrayType(elem, length), "Function")
    var = cg.function_variable(ptr)
    return BufferRef("local", var, elem, "Function", (), length)


@builtin("(elem, length)")
def private_array(cg, args, kwargs):
    """A per-invocation array of ``length`` elements of ``elem`` at module scope (OpVariable Private), as a
    GLSL global array or an HLSL ``static`` one is.

    It is used like :func:`local_array` (scalars, vectors or cooperative matrices; compile-time or
    ``Spec`` length; runtime indices), and differs only in its storage class: one variable for the
    whole module instead of one per function, which some drivers compile differently (the peer GEMM of
    ``benchmarks/peer_gemm`` keeps its accumulators in one). Each call declares a new variable, and
    its values start undefined.
    """
    elem, length = _array_params(cg, private_array, args, kwargs, allow_matrices=True)
    n = sum(1 for g in cg.module.globals if g.role == "private")
    var = GlobalVar(T.PointerType(T.ArrayType(elem, length), "Private"), f"private{n}", "private")
    cg.module.globals.append(var)
    return BufferRef(var.name, var, elem, "Private", (), length)


SEMANTICS = ("Acquire", "Release", "AcquireRelease", "SequentiallyConsistent", "UniformMemory",
             "WorkgroupMemory", "ImageMemory", "OutputMemory", "MakeAvailable", "MakeVisible", "Volatile")


def _scope(cg, v, what: str) -> Scope:
    return as_scope(cg, v, what)


def _semantics(cg, v) -> Semantics:
    names = (v,) if isinstance(v, str) else tuple(v) if isinstance(v, (tuple, list)) else None
    if not names or any(n not in SEMANTICS for n in names):
        raise ArgumentError(f"semantics must be names from {', '.join(SEMANTICS)} (a string or a tuple), "
                            f"got {v!r}", cg.em.loc)
    order = [n for n in names if n in ("Acquire", "Release", "AcquireRelease", "SequentiallyConsistent")]
    if len(order) > 1:
        raise ArgumentError(f"semantics may name at most one ordering, got {', '.join(order)}", cg.em.loc)
    return Semantics(names)


@builtin("(execution, memory, semantics)")
def control_barrier(cg, args, kwargs):
    """OpControlBarrier with explicit execution scope, memory scope and semantics.

    ``cd.control_barrier(cd.Workgroup, cd.Workgroup, ("AcquireRelease", "WorkgroupMemory"))``
    is GLSL's ``barrier()``.
    """
    p = bind(cg, control_barrier, args, kwargs)
    cg.em.op("control_barrier", T.void, [], exec_scope=_scope(cg, p["execution"], "execution"),
             mem_scope=_scope(cg, p["memory"], "memory"), semantics=_semantics(cg, p["semantics"]))




@builtin("(memory, semantics)")
def memory_barrier(cg, args, kwargs):
    """OpMemoryBarrier: ``cd.memory_barrier(cd.Device, ("AcquireRelease", "UniformMemory"))``."""
    p = bind(cg, memory_barrier, args, kwargs)
    cg.em.op("memory_barrier", T.void, [], mem_scope=_scope(cg, p["memory"], "memory"),
             semantics=_semantics(cg, p["semantics"]))


@builtin("()")
def barrier(cg, args, kwargs):
    """Workgroup execution and shared-memory barrier (GLSL ``barrier()``).

    OpControlBarrier Workgroup Workgroup AcquireRelease|WorkgroupMemory.
    """
    bind(cg, barrier, args, kwargs)
    cg.em.op("control_barrier", T.void, [], exec_scope=Scope.Workgroup, mem_scope=Scope.Workgroup,
             semantics=Semantics(("AcquireRelease", "WorkgroupMemory")))
    return None
