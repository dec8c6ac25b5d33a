"""Fixed-size array members of structs (``cd.array[T, N]``, see :mod:`.arrays`) and pointers to one struct in
device memory.

A decode function (``load_tensor(..., decode=fn)``) receives a
PhysicalStorageBuffer pointer to *one* block of a block-quantized tensor, e.g.
one q4_0 block::

    @cd.struct
    class BlockQ4_0:
        d: f16                    # the scale
        qs: cd.array[u8, 16]      # 32 four-bit weights

Inside the function ``bl.d`` loads the member and ``bl.qs[i]`` one element of
the array member (each load carries ``Aligned``, as every access through a
device pointer must).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import TypeMismatchError
from ..ir import types as T
from ..ir.attrs import MemoryAccess
from ..ir.core import Value
from ..ir.layout import access_alignment
from ..ir.vocab import StorageClass
from .structs import is_data_ptr
from .values import BufferRef

if TYPE_CHECKING:
    from .context import Builder


def device_access(storage: StorageClass, t: T.Type) -> dict[str, MemoryAccess]:
    """The attributes of a load/store of ``t`` in ``storage``: ``Aligned`` in device memory (an alignment every
    object of ``t`` there has: its widest scalar), none elsewhere."""
    return {"memory": MemoryAccess(access_alignment(t))} if storage.is_physical else {}


def is_block_ptr(t: T.Type) -> bool:
    """A device pointer to one struct (not ``Ptr[T]``, which points at an array of them)."""
    return isinstance(t, T.PointerType) and t.storage.is_physical and \
        isinstance(t.pointee, T.StructType) and not is_data_ptr(t)


def block_member(cg: Builder, ptr: Value, name: str, owner: str | None = None) -> Value | BufferRef:
    """``ptr.name`` for a pointer to one struct (a device pointer, or an element of a buffer, shared or local
    array: ``mem[i].name``): only the member is read, through an access chain to it, as glslang does; an array
    member is the memory its elements are indexed in (``ptr.qs[i]``), named ``owner`` (the buffer whose
    writes it marks) or else after the member."""
    st = T.pointee_struct(ptr.type)
    try:
        index = st.member_index(name)
    except KeyError:
        raise TypeMismatchError(f"struct {st.name} has no member '{name}' (it has: "
                                f"{', '.join(n for n, _ in st.members)})", cg.em.loc) from None
    t = st.members[index][1]
    assert isinstance(ptr.type, T.PointerType)  # (pointee_struct checked it)
    storage = ptr.type.storage
    if isinstance(t, T.ArrayType):
        return BufferRef(owner or name, ptr, t.elem, storage, (index,), t.length)
    member = cg.em.op("access", T.PointerType(t, storage), [ptr, cg.em.const(T.u32, index)])
    return cg.em.op("load", t, [member], **device_access(storage, t))
