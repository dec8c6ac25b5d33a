"""The lowering registry and the operand encoders the families share."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..._lazy import Registry
from ...ir import types as T
from ...ir.attrs import MemoryAccess, Scope, Semantics
from ...ir.core import Op
from ..grammar import enum_value

if TYPE_CHECKING:
    from ..writer import Writer

Lowering = Callable[["Writer", Op, int | None, int | None, list[int]], None]
"""A lowering: ``(writer, op, result type id, result id, operand ids)``; the type id and the result id
are None for an op of type void (an op with a result always gets both)."""

LOWERINGS: Registry[str, Lowering] = Registry()  # the families ``coopdsl.spirv.lower`` defers load on first need


def lowering(*kinds: str) -> Callable[[Lowering], Lowering]:
    """Register the decorated function as the lowering of IR op ``kinds``."""
    def deco(fn: Lowering) -> Lowering:
        for k in kinds:
            if LOWERINGS.declared(k):
                raise ValueError(f"two lowerings for {k}")
            LOWERINGS[k] = fn
        return fn
    return deco


def scope_id(w: Writer, scope: Scope) -> int:
    """The id of a Scope constant; Device scope under the Vulkan memory model needs its capability."""
    if scope is Scope.Device:
        w.b.require("VulkanMemoryModelDeviceScope", "Device scope under the Vulkan memory model")
    return w.b.const_id(T.u32, enum_value("Scope", scope.name))


def semantics_id(w: Writer, semantics: Semantics) -> int:
    """The id of a MemorySemantics constant OR-ing the named bits."""
    return w.b.const_id(T.u32, sum(enum_value("MemorySemantics", s) for s in semantics.names))


def memory_operands(w: Writer, mem: MemoryAccess | None) -> tuple[object, ...]:
    """Memory Operands for an access: the bit names, then their parameters in bit order."""
    if mem is None:
        return ()
    names: list[str] = []
    params: list[int] = []
    if mem.aligned is not None:
        names.append("Aligned")
        params.append(mem.aligned)
    if mem.nontemporal:
        names.append("Nontemporal")
    if mem.volatile:
        names.append("Volatile")
    for scope, bit in ((mem.available, "MakePointerAvailable"), (mem.visible, "MakePointerVisible")):
        if scope is not None:
            names += [bit, "NonPrivatePointer"]
            params.append(scope_id(w, scope))
    return (tuple(names), *params) if names else ()


def family(t: T.Type) -> int:
    """0 for floats, 1 for signed and 2 for unsigned integers (the column of an opcode table)."""
    e = T.elem_of(t)
    if not isinstance(e, T.ScalarType) or e.is_bool:
        raise ValueError(f"no arithmetic on {t}")
    return 0 if e.is_float else (1 if e.signed else 2)
