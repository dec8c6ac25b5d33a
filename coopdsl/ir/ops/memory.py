"""Memory ops: pointers, loads and stores, function variables, addresses, barriers."""

from __future__ import annotations

from .. import types as T
from ..attrs import MemoryAccess, Scope, Semantics
from ..core import Op
from ..vocab import StorageClass
from .base import define, fail, integer, pointer, result_is


def _access(op: Op) -> None:
    pointer(op, 0)
    for i in range(1, len(op.operands)):
        integer(op, i)
    if not isinstance(op.type, T.PointerType):
        fail(op, f"result must be a pointer, got {op.type}")


def _load(op: Op) -> None:
    result_is(op, pointer(op, 0).pointee)


def _store(op: Op) -> None:
    p = pointer(op, 0)
    if op.operands[1].type is not p.pointee and op.operands[1].type != p.pointee:
        fail(op, f"stores {op.operands[1].type} through a pointer to {p.pointee}")


def _variable(op: Op) -> None:
    if not isinstance(op.type, T.PointerType) or op.type.storage != StorageClass.Function:
        fail(op, f"a function variable is a Function pointer, got {op.type}")


def _to_u64(op: Op) -> None:
    pointer(op, 0)
    result_is(op, T.u64)


def _to_ptr(op: Op) -> None:
    if op.operands[0].type != T.u64 or not isinstance(op.type, T.PointerType):
        fail(op, f"converts a u64 to a pointer, got {op.operands[0].type} -> {op.type}")


def _array_length(op: Op) -> None:
    block = pointer(op, 0).pointee
    member = op.attrs["member"]
    if not isinstance(block, T.StructType) or not 0 <= member < len(block.members) or \
            not isinstance(block.members[member][1], T.RuntimeArrayType):
        fail(op, f"member {member} of {block} is not a runtime array")
    result_is(op, T.u32)


def _debug_printf(op: Op) -> None:
    for i, v in enumerate(op.operands):
        if not isinstance(v.type, (T.ScalarType, T.VectorType)):
            fail(op, f"operand {i} is {v.type}, not a scalar or vector")
    result_is(op, T.void)


_MEMORY = {"memory": (MemoryAccess, False)}
define("access", (1, None), verify=_access, doc="pointer to an element: base pointer, then indices")
define("load", 1, attrs=_MEMORY, verify=_load, pure=False, doc="load through a pointer")
define("store", 2, attrs=_MEMORY, verify=_store, pure=False, writes=True,
       doc="(pointer, value): store through a pointer")
define("variable", 0, verify=_variable, pure=False, attrs={"array_name": (str, False)},
       doc="a Function-storage variable (placed first in the entry block); array_name: the local array's name "
           "in the kernel, for the interpreter's reports")
define("array_length", 1, verify=_array_length, attrs={"member": (int, True)},
       doc="the element count of the runtime array that is member `member` of a storage buffer's block (u32)")
define("debug_printf", (0, None), verify=_debug_printf, pure=False, attrs={"format": (str, True)},
       doc="print the values with a printf format, per invocation (NonSemantic.DebugPrintf)")
define("ptr_to_u64", 1, verify=_to_u64, doc="the 64-bit address of a device pointer")
define("u64_to_ptr", 1, verify=_to_ptr, doc="a device pointer from a 64-bit address")
define("control_barrier", 0, pure=False, tangled="execution",
       attrs={"exec_scope": (Scope, True), "mem_scope": (Scope, True), "semantics": (Semantics, True)},
       doc="wait until every invocation of the execution scope arrives, ordering memory at the memory scope")
define("memory_barrier", 0, pure=False, attrs={"mem_scope": (Scope, True), "semantics": (Semantics, True)},
       doc="order this invocation's memory accesses at a scope")
