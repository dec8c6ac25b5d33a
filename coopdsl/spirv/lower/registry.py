"""The lowering registry and the operand encoders the families share."""

from __future__ import annotations

from collections.abc import Callable

from ..._lazy import Registry
from ...ir import types as T
from ...ir.attrs import MemoryAccess, Scope, Semantics
from ..grammar import enum_value

LOWERINGS: Registry[str, Callable] = Registry()  # the families ``coopdsl.spirv.lower`` defers load on first need


def lowering(*kinds: str):
    """Register the decorated function as the lowering of IR op ``kinds``."""
    def deco(fn):
        for k in kinds:
            if LOWERINGS.declared(k):
                raise ValueError(f"two lowerings for {k}")
            LOWERINGS[k] = fn
        return fn
    return deco


def scope_id(w, scope: Scope) -> int:
    """The id of a Scope constant; Device scope under the Vulkan memory model needs its capability."""
    if scope is Scope.Device:
        w.b.require("VulkanMemoryModelDeviceScope", "Device scope under the Vulkan memory model")
    return w.b.const_id(T.u32, enum_value("Scope", scope.name))


def semantics_id(w, semantics: Semantics) -> int:
    """The id of a MemorySemantics constant OR-ing the named bits."""
    return w.b.const_id(T.u32, sum(enum_value("MemorySemantics", s) for s in semantics.names))


def memory_operands(w, mem: MemoryAccess | None) -> tuple:
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
