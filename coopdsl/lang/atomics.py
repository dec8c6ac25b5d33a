"""Atomic operations on buffer and shared-array elements (OpAtomic*).

``cd.atomic_add(mem, index, value)`` and friends return the value the
element held before.  ``mem`` is a buffer parameter or a shared array.  The
scope defaults to Device for buffers and Workgroup for shared memory; the
semantics default to relaxed.  Giving an ordering (``semantics="AcquireRelease"``)
adds the storage-class bit (UniformMemory / WorkgroupMemory) automatically.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._records import record
from ..errors import ArgumentError, TypeMismatchError
from ..ir import types as T
from ..ir.attrs import Scope, Semantics
from ..ir.core import Value
from ..ir.vocab import StorageClass
from . import arith
from .conversions import Conversion, ScopeArg
from .memory import scope_problem
from .registry import BUILTINS, Builtin, make_builtin
from .values import BufferRef

if TYPE_CHECKING:
    from .context import Builder

ORDERINGS = ("Acquire", "Release", "AcquireRelease")  # (Vulkan allows no SequentiallyConsistent)


@record(frozen=True)
class AtomicMemory(Conversion):
    """What an atomic works on: a buffer parameter or a shared array of 32- or 64-bit scalars."""

    def __call__(self, cg: Builder, mem: Any, name: str, param: str) -> BufferRef:
        if not isinstance(mem, BufferRef) or mem.storage not in (StorageClass.StorageBuffer, StorageClass.Workgroup):
            raise TypeMismatchError(f"{name}() works on a buffer parameter or a shared array, got "
                                    f"{cg.describe(mem)}", cg.em.loc)
        elem = mem.elem
        if not isinstance(elem, T.ScalarType) or elem.is_bool or elem.width not in (32, 64):
            raise TypeMismatchError(f"{name}() needs 32- or 64-bit scalar elements, got {mem.kind} '{mem.name}' of "
                                    f"{elem}", cg.em.loc)
        return mem


@record(frozen=True)
class Ordering(Conversion):
    """The semantics of an atomic: at most one ordering name (a string or a one-name tuple)."""

    def __call__(self, cg: Builder, sem: Any, name: str, param: str) -> tuple[str, ...]:
        names = (sem,) if isinstance(sem, str) else tuple(sem) if isinstance(sem, (tuple, list)) else (sem,)
        if "SequentiallyConsistent" in names:
            raise ArgumentError(f"{name}(): Vulkan does not allow SequentiallyConsistent semantics "
                                f"(VUID-StandaloneSpirv-MemorySemantics-10866); use AcquireRelease", cg.em.loc)
        allowed = ORDERINGS_OF.get(name, ORDERINGS)
        if any(n not in allowed for n in names) or len(names) > 1:
            why = f" ({WHY_NOT[name]})" if name in WHY_NOT and any(n in ORDERINGS for n in names) else ""
            choices = f"one of {', '.join(allowed)}," if len(allowed) > 1 else allowed[0]
            raise ArgumentError(f"{name}(): semantics must be {choices} or None (relaxed, the default){why}",
                                cg.em.loc)
        return names


# an atomic load only acquires and a store only releases (Vulkan: VUID-StandaloneSpirv-MemorySemantics-10867/10868)
ORDERINGS_OF = {"atomic_load": ("Acquire",), "atomic_store": ("Release",)}
WHY_NOT = {"atomic_load": "a load cannot release", "atomic_store": "a store cannot acquire"}


def _scope_and_semantics(cg: Builder, name: str, mem: BufferRef, scope: Scope | None,
                         semantics: tuple[str, ...] | None) -> tuple[Scope, Semantics]:
    """The scope (Device for buffers, Workgroup for shared arrays unless given) and the semantics, with the
    storage-class bit an ordering needs; Vulkan's scope rules (:func:`coopdsl.lang.memory.scope_problem`)."""
    if scope is None:
        scope = Scope.Workgroup if mem.storage.is_shared else Scope.Device
    names = semantics or ()
    if names:
        names += ("WorkgroupMemory" if mem.storage.is_shared else "UniformMemory",)
    problem = scope_problem(scope, names)
    if problem:
        raise ArgumentError(f"{name}(): {problem}", cg.em.loc)
    return scope, Semantics(names)


def _value(cg: Builder, v: Any, elem: T.ScalarType, name: str) -> Value:
    v = cg.as_operand(v)
    if isinstance(v, (bool, int, float)):
        return arith.literal(cg.em, v, elem)
    if not isinstance(v, Value) or v.type != elem:
        raise TypeMismatchError(f"{name}() value must be {elem}, got {cg.describe(v)}", cg.em.loc)
    return v


def _pointer(cg: Builder, mem: BufferRef, index: Any) -> tuple[Value, T.ScalarType]:
    elem = mem.elem
    assert isinstance(elem, T.ScalarType)  # AtomicMemory checked it
    return cg.element_pointer(mem, index), elem


def _rmw(op: str) -> Builtin:
    name = f"atomic_{op}"

    def impl(cg: Builder, mem: BufferRef, index: Any, value: Any, scope: Scope | None = None,
             semantics: tuple[str, ...] | None = None) -> Value:
        ptr, elem = _pointer(cg, mem, index)
        if elem.is_float and op not in ("add", "exchange"):
            raise TypeMismatchError(f"{name}() takes integers; floats support atomic_add and atomic_exchange",
                                    cg.em.loc)
        sc, sem = _scope_and_semantics(cg, name, mem, scope, semantics)
        cg.note_buffer_write(mem)
        return cg.em.op("atomic_rmw", elem, [ptr, _value(cg, value, elem, name)], op=op, scope=sc, semantics=sem)

    instruction = {"add": "OpAtomicIAdd, OpAtomicFAddEXT for floats", "sub": "OpAtomicISub",
                   "min": "OpAtomicSMin/UMin", "max": "OpAtomicSMax/UMax", "and": "OpAtomicAnd", "or": "OpAtomicOr",
                   "xor": "OpAtomicXor", "exchange": "OpAtomicExchange"}[op]
    return make_builtin(name, impl, f"Atomically apply {op} to mem[index] and return the old value ({instruction}). "
                        f"``mem`` is a buffer or shared array of 32- or 64-bit scalars; ``scope`` defaults to "
                        f"Device for buffers and Workgroup for shared arrays; ``semantics`` is an ordering name "
                        f"(Acquire, Release or AcquireRelease) or None (relaxed).",
                        "(mem, index, value, *, scope=None, semantics=None)", CONVERSIONS)


def _cmpxchg(cg: Builder, mem: BufferRef, index: Any, comparator: Any, value: Any, scope: Scope | None = None,
             semantics: tuple[str, ...] | None = None) -> Value:
    name = "atomic_compare_exchange"
    ptr, elem = _pointer(cg, mem, index)
    if not elem.is_int:
        raise TypeMismatchError(f"{name}() takes integers, got {elem}", cg.em.loc)
    sc, sem = _scope_and_semantics(cg, name, mem, scope, semantics)
    cg.note_buffer_write(mem)
    return cg.em.op("atomic_cmpxchg", elem,
                    [ptr, _value(cg, value, elem, name), _value(cg, comparator, elem, name)],
                    scope=sc, semantics=sem)


def _load(cg: Builder, mem: BufferRef, index: Any, scope: Scope | None = None,
          semantics: tuple[str, ...] | None = None) -> Value:
    ptr, elem = _pointer(cg, mem, index)
    sc, sem = _scope_and_semantics(cg, "atomic_load", mem, scope, semantics)
    return cg.em.op("atomic_load", elem, [ptr], scope=sc, semantics=sem)


def _store(cg: Builder, mem: BufferRef, index: Any, value: Any, scope: Scope | None = None,
           semantics: tuple[str, ...] | None = None) -> None:
    ptr, elem = _pointer(cg, mem, index)
    sc, sem = _scope_and_semantics(cg, "atomic_store", mem, scope, semantics)
    cg.note_buffer_write(mem)
    cg.em.op("atomic_store", T.void, [ptr, _value(cg, value, elem, "atomic_store")], scope=sc, semantics=sem)


# the parameters every atomic shares; scope and semantics (None: the defaults) depend on the memory
CONVERSIONS = {"mem": AtomicMemory(), "scope": ScopeArg("{name}(): scope"), "semantics": Ordering()}
ATOMICS: dict[str, Builtin] = {}
for _op in ("add", "sub", "min", "max", "and", "or", "xor", "exchange"):
    ATOMICS[f"atomic_{_op}"] = _rmw(_op)
ATOMICS["atomic_compare_exchange"] = make_builtin(
    "atomic_compare_exchange", _cmpxchg, "If mem[index] == comparator, store value; return the old value "
    "(OpAtomicCompareExchange, integers).",
    "(mem, index, comparator, value, *, scope=None, semantics=None)", CONVERSIONS)
ATOMICS["atomic_load"] = make_builtin(
    "atomic_load", _load, "Atomic read of mem[index] (OpAtomicLoad). ``scope`` defaults to Device for buffers and "
    "Workgroup for shared arrays; ``semantics`` is None (relaxed) or \"Acquire\".",
    "(mem, index, *, scope=None, semantics=None)", CONVERSIONS)
ATOMICS["atomic_store"] = make_builtin(
    "atomic_store", _store, "Atomic write of mem[index] (OpAtomicStore). ``scope`` defaults to Device for buffers "
    "and Workgroup for shared arrays; ``semantics`` is None (relaxed) or \"Release\".",
    "(mem, index, value, *, scope=None, semantics=None)", CONVERSIONS)
BUILTINS.update(ATOMICS)
