"""Atomic operations on buffer and shared-array elements (OpAtomic*).

``cd.atomic_add(mem, index, value)`` and friends return the value the
element held before.  ``mem`` is a buffer parameter or a shared array.  The
scope defaults to Device for buffers and Workgroup for shared memory; the
semantics default to relaxed.  Giving an ordering (``semantics="AcquireRelease"``)
adds the storage-class bit (UniformMemory / WorkgroupMemory) automatically.
"""

from __future__ import annotations

from ..errors import ArgumentError, TypeMismatchError
from ..ir import types as T
from ..ir.attrs import Scope, Semantics
from ..ir.core import Value
from .registry import BUILTINS, Builtin, bind, make_builtin
from .types import as_scope
from .values import BufferRef

ORDERINGS = ("Acquire", "Release", "AcquireRelease", "SequentiallyConsistent")


def _target(cg, name, mem, index):
    if not isinstance(mem, BufferRef) or mem.storage not in ("StorageBuffer", "Workgroup"):
        raise TypeMismatchError(f"{name}() works on a buffer parameter or a shared array, got {cg.describe(mem)}",
                                cg.em.loc)
    elem = mem.elem
    if not isinstance(elem, T.ScalarType) or elem.kind == "bool" or elem.width not in (32, 64):
        raise TypeMismatchError(f"{name}() needs 32- or 64-bit scalar elements, got {mem.kind} '{mem.name}' of {elem}",
                                cg.em.loc)
    return cg.element_pointer(mem, index), elem


def _scope_and_semantics(cg, name, mem, p):
    scope = p.get("scope")
    if scope is None:
        scope = Scope.Device if mem.storage == "StorageBuffer" else Scope.Workgroup
    else:
        scope = as_scope(cg, scope, f"{name}(): scope")
    sem = p.get("semantics")
    names = () if sem is None else ((sem,) if isinstance(sem, str) else tuple(sem))
    if any(n not in ORDERINGS for n in names) or len(names) > 1:
        raise ArgumentError(f"{name}(): semantics must be one of {', '.join(ORDERINGS)}", cg.em.loc)
    if names:
        names += ("UniformMemory" if mem.storage == "StorageBuffer" else "WorkgroupMemory",)
    return scope, Semantics(names)


def _value(cg, v, elem, name):
    v = cg.as_operand(v)
    if isinstance(v, (bool, int, float)):
        return cg.em.literal(v, elem)
    if not isinstance(v, Value) or v.type != elem:
        raise TypeMismatchError(f"{name}() value must be {elem}, got {cg.describe(v)}", cg.em.loc)
    return v


def _rmw(op):
    name = f"atomic_{op}"

    def impl(cg, args, kwargs):
        p = bind(cg, BUILTINS[name], args, kwargs)
        ptr, elem = _target(cg, name, p["mem"], p["index"])
        if elem.kind == "float" and op not in ("add", "exchange"):
            raise TypeMismatchError(f"{name}() takes integers; floats support atomic_add and atomic_exchange",
                                    cg.em.loc)
        scope, sem = _scope_and_semantics(cg, name, p["mem"], p)
        cg.note_buffer_write(p["mem"])
        return cg.em.op("atomic_rmw", elem, [ptr, _value(cg, p["value"], elem, name)], op=op, scope=scope,
                        semantics=sem)

    instruction = {"add": "OpAtomicIAdd, OpAtomicFAddEXT for floats", "sub": "OpAtomicISub",
                   "min": "OpAtomicSMin/UMin", "max": "OpAtomicSMax/UMax", "and": "OpAtomicAnd", "or": "OpAtomicOr",
                   "xor": "OpAtomicXor", "exchange": "OpAtomicExchange"}[op]
    return make_builtin(name, impl, f"Atomically apply {op} to mem[index] and return the old value ({instruction}). "
                        f"``mem`` is a buffer or shared array of 32- or 64-bit scalars; ``scope`` defaults to "
                        f"Device for buffers and Workgroup for shared arrays; ``semantics`` is an ordering name.",
                   "(mem, index, value, *, scope=None, semantics=None)")


def _cmpxchg(cg, args, kwargs):
    name = "atomic_compare_exchange"
    p = bind(cg, BUILTINS[name], args, kwargs)
    ptr, elem = _target(cg, name, p["mem"], p["index"])
    if elem.kind != "int":
        raise TypeMismatchError(f"{name}() takes integers, got {elem}", cg.em.loc)
    scope, sem = _scope_and_semantics(cg, name, p["mem"], p)
    cg.note_buffer_write(p["mem"])
    return cg.em.op("atomic_cmpxchg", elem,
                    [ptr, _value(cg, p["value"], elem, name), _value(cg, p["comparator"], elem, name)],
                    scope=scope, semantics=sem)


def _load(cg, args, kwargs):
    name = "atomic_load"
    p = bind(cg, BUILTINS[name], args, kwargs)
    ptr, elem = _target(cg, name, p["mem"], p["index"])
    scope, sem = _scope_and_semantics(cg, name, p["mem"], p)
    return cg.em.op("atomic_load", elem, [ptr], scope=scope, semantics=sem)


def _store(cg, args, kwargs):
    name = "atomic_store"
    p = bind(cg, BUILTINS[name], args, kwargs)
    ptr, elem = _target(cg, name, p["mem"], p["index"])
    scope, sem = _scope_and_semantics(cg, name, p["mem"], p)
    cg.note_buffer_write(p["mem"])
    cg.em.op("atomic_store", T.void, [ptr, _value(cg, p["value"], elem, name)], scope=scope, semantics=sem)


ATOMICS: dict[str, Builtin] = {}
for _op in ("add", "sub", "min", "max", "and", "or", "xor", "exchange"):
    ATOMICS[f"atomic_{_op}"] = _rmw(_op)
ATOMICS["atomic_compare_exchange"] = make_builtin(
    "atomic_compare_exchange", _cmpxchg, "If mem[index] == comparator, store value; return the old value "
    "(OpAtomicCompareExchange, integers).",
    "(mem, index, comparator, value, *, scope=None, semantics=None)")
ATOMICS["atomic_load"] = make_builtin("atomic_load", _load, "Atomic read of mem[index] (OpAtomicLoad).",
                                      "(mem, index, *, scope, semantics)")
ATOMICS["atomic_store"] = make_builtin("atomic_store", _store, "Atomic write of mem[index] (OpAtomicStore).",
                                  "(mem, index, value, *, scope, semantics)")
BUILTINS.update(ATOMICS)
