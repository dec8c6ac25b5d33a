"""Element access with explicit memory operands, and the memory-operand keywords loads and stores share."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import ArgumentError, TypeMismatchError
from ..ir import types as T
from ..ir.attrs import MemoryAccess
from ..ir.core import Value
from ..ir.layout import align_of
from . import arith
from .conversions import CompileTime, Literal, ScopeArg
from .pointers import ptr_element
from .registry import Builtin, bind, builtin
from .structs import is_data_ptr
from .values import BufferRef

if TYPE_CHECKING:
    from .context import Builder


def memory_pointer(cg: Builder, buf: Any, offset: Any, what: str,
                   accepted: str = "a buffer, a shared or local array or a Ptr[...]") -> Any:
    """Pointer to element ``offset`` of a buffer, shared or local array, or ``Ptr[T]``; ``accepted`` is what
    the caller takes, as the error for anything else lists it (matrix loads refuse local arrays first)."""
    if isinstance(buf, Value) and is_data_ptr(buf.type):
        return ptr_element(cg, buf, offset)
    if not isinstance(buf, BufferRef):
        raise TypeMismatchError(f"{what} needs {accepted}, got {cg.describe(buf)}", cg.em.loc)
    return cg.element_pointer(buf, offset)


def psb_aligned(ptr: Any, mem: MemoryAccess | None) -> MemoryAccess | None:
    """Accesses through PhysicalStorageBuffer pointers carry Aligned (natural alignment unless given)."""
    if not ptr.type.storage.is_physical:
        return mem
    return (mem or MemoryAccess()).with_alignment(align_of(ptr.type.pointee))


def bind_access(cg: Builder, b: Builtin, args: list[Any], kwargs: dict[str, Any], is_store: bool) -> dict[str, Any]:
    """Bind the arguments of a load or store, explaining a visibility keyword on the wrong side."""
    wrong, right = ("visible", "available") if is_store else ("available", "visible")
    if kwargs.get(wrong) is not None:
        raise ArgumentError(f"{wrong}= applies to {'loads' if is_store else 'stores'}; a "
                            f"{'store' if is_store else 'load'} takes {right}=", cg.em.loc)
    if wrong in kwargs:  # (given as None: dropped)
        kwargs = {k: v for k, v in kwargs.items() if k != wrong}
    return bind(cg, b, args, kwargs)


def bind_load(cg: Builder, b: Builtin, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The binder of loads (:func:`bind_access`)."""
    return bind_access(cg, b, args, kwargs, is_store=False)


def bind_store(cg: Builder, b: Builtin, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The binder of stores (:func:`bind_access`)."""
    return bind_access(cg, b, args, kwargs, is_store=True)


MEMORY_KW = ("aligned", "nontemporal", "volatile", "available", "visible")
# the memory-operand keywords every load and store takes, as the conversions of their parameters
ALIGNED = Literal(T.u32, lambda n: n > 0 and not n & (n - 1),  # the operand's literal is a 32-bit word
                  "aligned must be a power-of-two number of bytes, got {value!r}", "{param}={value}: {why}")
LOAD_OPERANDS = {"aligned": ALIGNED, "nontemporal": CompileTime(bool), "volatile": CompileTime(bool),
                 "visible": ScopeArg("{param}=")}
STORE_OPERANDS = {**{k: v for k, v in LOAD_OPERANDS.items() if k != "visible"}, "available": ScopeArg("{param}=")}


def memory_operands(p: dict[str, Any], is_store: bool) -> MemoryAccess | None:
    """The Memory Operands of a load/store from its keyword arguments, as :data:`LOAD_OPERANDS` /
    :data:`STORE_OPERANDS` converted them (None when there are none).

    ``aligned=N`` (a power of two, bytes) -> Aligned N; ``nontemporal=True``;
    ``volatile=True``; ``available=scope`` (stores) / ``visible=scope`` (loads)
    -> MakePointerAvailable/MakePointerVisible + NonPrivatePointer with the
    scope (Vulkan memory model).
    """
    fields: dict[str, Any] = {}
    for name in ("aligned", "nontemporal", "volatile", "available" if is_store else "visible"):
        value = p.get(name)
        if value is not None and value is not False:
            fields[name] = value
    return MemoryAccess(**fields) if fields else None


@builtin("(buffer, index, *, aligned=None, nontemporal=None, volatile=None, visible=None)", binder=bind_load,
         conversions=LOAD_OPERANDS)
def load_element(cg: Builder, **p: Any) -> Value:
    """``buffer[index]`` with explicit memory operands (OpLoad ... Aligned/Nontemporal/Volatile/MakePointerVisible).

    ``buffer`` is a buffer parameter, a shared or local array, or a ``Ptr[T]``
    (whose accesses always carry ``Aligned``, natural alignment unless given).
    """
    ptr = memory_pointer(cg, p["buffer"], p["index"], "load_element")
    mem = psb_aligned(ptr, memory_operands(p, is_store=False))
    return cg.em.op("load", ptr.type.pointee, [ptr], **({"memory": mem} if mem else {}))


@builtin("(buffer, index, value, *, aligned=None, nontemporal=None, volatile=None, available=None)",
         binder=bind_store, conversions=STORE_OPERANDS)
def store_element(cg: Builder, **p: Any) -> None:
    """``buffer[index] = value`` with explicit memory operands (OpStore ... MakePointerAvailable etc.).

    ``buffer`` is as for :func:`load_element`.
    """
    buf = p["buffer"]
    ptr = memory_pointer(cg, buf, p["index"], "store_element")
    elem = ptr.type.pointee
    value = cg.as_operand(p["value"])
    if isinstance(value, (bool, int, float)):
        value = arith.literal(cg.em, value, elem)
    if not isinstance(value, Value) or value.type != elem:
        raise TypeMismatchError(f"cannot store {cg.describe(value)} into {cg.describe(buf)} of {elem}", cg.em.loc)
    if isinstance(buf, BufferRef):
        cg.note_buffer_write(buf)
    mem = psb_aligned(ptr, memory_operands(p, is_store=True))
    cg.em.op("store", T.void, [ptr, value], **({"memory": mem} if mem else {}))
