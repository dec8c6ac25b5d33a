"""What a function operand closes over: kernel values bound to a callback when it is compiled.

A callback (the combine function of a reduction, the function of a
per-element operation, a decoder) is an ``OpFunction`` whose parameters are
fixed by the instruction calling it, so everything else it uses is bound at
compile time, like the buffer arguments of a ``@cd.func`` call:

* buffers, shared arrays, specialization constants, numbers, types and other
  compile-time values are bound as they are (each distinct value compiles
  its own specialisation);
* a constant (``f16(0.5)``) becomes a constant of the callback;
* a push constant read in the kernel body is read again inside the callback,
  from the same member of the push-constant block;
* any other runtime value cannot be bound: SPIR-V gives the callback no
  parameter for it (pass it as an extra operand of a per-element operation).
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any, cast

from .._records import record
from ..errors import TypeMismatchError, UnsupportedSyntaxError
from ..ir.builder import Emitter
from ..ir.core import Const, GlobalVar, Op, SpecConst, SpecOp, Value, const_key
from ..ir.vocab import StorageClass
from ..lang.values import BufferRef

if TYPE_CHECKING:
    from ..lang.context import Builder


@record(frozen=True)
class Captured:
    """A kernel value a callback reads itself instead of receiving it: a constant or a push constant."""

    value: Value = field(compare=False)
    key: tuple[Any, ...]  # what makes two captures the same specialisation

    def materialize(self, em: Emitter) -> Value:
        """The value inside the function ``em`` builds (a push constant is loaded again)."""
        if isinstance(self.value, Const):
            return self.value
        load = self.value
        access = load.operands[0] if isinstance(load, Op) else None
        assert isinstance(access, Op)  # load(access(push constants, member)): push_constant_member found it
        ptr = em.op("access", access.type, list(access.operands))
        return em.op("load", self.value.type, [ptr])


def push_constant_member(v: Value) -> int | None:
    """The member index when ``v`` is the load of a push constant in the kernel body, else None."""
    if not (isinstance(v, Op) and v.kind == "load"):
        return None
    access = v.operands[0]
    if not (isinstance(access, Op) and access.kind == "access" and len(access.operands) == 2):
        return None
    var, index = access.operands
    if isinstance(var, GlobalVar) and var.role == "push" and isinstance(index, Const):
        return cast(int, index.value)
    return None


def check_memory_argument(cg: Builder, what: str, v: Any) -> None:
    """A located error for memory a device function or callback cannot be given: memory is bound into the
    function's specialisation, which works for module-level variables (buffers, shared and private arrays), not
    for memory reached through values of the calling function (a local array; the array member of one struct in
    memory, ``buf[i].arr``)."""
    if not isinstance(v, BufferRef) or isinstance(v.var, GlobalVar):
        return
    if v.storage == StorageClass.Function:
        raise UnsupportedSyntaxError(f"{what} is the local array '{v.name}', which belongs to the function that "
                                     f"declares it: declare it in the device function, or use a shared array or "
                                     f"a buffer", cg.em.loc)
    raise UnsupportedSyntaxError(f"{what} is an array inside one struct in memory ('{v.name}', such as "
                                 f"buf[i].member): a device function takes a whole buffer, shared array or device "
                                 f"pointer; pass that and the index, and read the member inside", cg.em.loc)


def capture(cg: Builder, name: str, value: Any) -> Any:
    """``value`` bound to parameter ``name`` of a callback: as it is, or :class:`Captured`; a located error
    for a runtime value the callback could not receive."""
    check_memory_argument(cg, f"'{name}'", value)
    if isinstance(value, (SpecConst, SpecOp)) or not isinstance(value, Value):
        return value
    if isinstance(value, Const):
        return Captured(value, ("const", value.type, const_key(value.value)))
    member = push_constant_member(value)
    if member is not None:
        return Captured(value, ("push", member))
    raise TypeMismatchError(
        f"cannot bind '{name}' to {cg.describe(value)}: a callback receives only the parameters its instruction "
        f"passes, so it can close over buffers, shared arrays, push constants, specialization constants and "
        f"compile-time values, not other runtime values (pass them as extra operands of m.map(...))", cg.em.loc)
