"""Device pointers (``Ptr[T]``): element addresses and pointer arithmetic in elements."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import TypeMismatchError
from ..ir import types as T
from ..ir.core import Value
from ..ir.layout import STD430
from ..ir.vocab import StorageClass
from . import arith
from .arrays import known_index
from .structs import ptr_elem

if TYPE_CHECKING:
    from .context import Builder


def ptr_offset(cg: Builder, p: Value, n: Any, op: str) -> Value:
    """``p + n`` / ``p - n`` in elements: through a 64-bit address (OpConvertPtrToU / OpConvertUToPtr), ``n``
    times the array stride ``p[1]`` is at (a ``vec3`` strides 16 bytes in std430, not its 12)."""
    size = STD430.stride(T.block_array(p.type))
    n = cg.as_index(n, "a pointer offset")
    addr = cg.em.op("ptr_to_u64", T.u64, [p])
    n64 = arith.convert(cg.em, n, T.u64 if not n.type.signed else T.i64)
    if n64.type != T.u64:
        n64 = cg.em.op("bitcast", T.u64, [n64])
    delta = cg.em.op("mul", T.u64, [n64, arith.literal(cg.em, size, T.u64)])
    return cg.em.op("u64_to_ptr", p.type, [cg.em.op(op, T.u64, [addr, delta])])


def ptr_element(cg: Builder, p: Value, index: Any) -> Any:  # (an IR pointer value)
    """Pointer to element ``index`` of the array a ``Ptr[T]`` points at."""
    elem = ptr_elem(p.type)
    known = known_index(index)
    if known is not None and known < 0:
        # (an access chain's index stays inside the array it points at: -1 would be undefined behaviour)
        raise TypeMismatchError(f"pointer index {known}: indices count from 0 (Python's negative indices are not "
                                f"supported); for an element before the pointer, offset it first: "
                                f"(p - {-known})[0]", cg.em.loc)
    idx = cg.as_index(index, "a pointer index")
    return cg.em.op("access", T.PointerType(elem, StorageClass.PhysicalStorageBuffer), [p, cg.em.const(T.u32, 0), idx])
