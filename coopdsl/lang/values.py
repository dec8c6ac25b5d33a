"""Compile-time wrappers the code generator passes around besides IR values."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._records import record
from ..ir import types as T
from ..ir.core import Value
from ..ir.vocab import StorageClass

if TYPE_CHECKING:
    from .registry import Builtin


_KINDS = {StorageClass.StorageBuffer: "buffer", StorageClass.Workgroup: "shared array",
          StorageClass.Function: "local array", StorageClass.Private: "private array"}


@record
class BufferRef:
    """Memory that kernels index element by element: a storage buffer parameter,
    a shared (Workgroup) array, or a function-local array.

    ``prefix`` is the access-chain indices that lead from ``var`` to the array
    (``(0,)`` for a buffer's ``{ elem data[]; }`` block, ``()`` for arrays).
    """

    name: str
    var: Value  # GlobalVar, or the 'variable' op of a local array
    elem: T.Type
    storage: StorageClass = StorageClass.StorageBuffer
    prefix: tuple[int, ...] = (0,)
    length: T.Dim | None = None  # element count of fixed-size arrays

    @property
    def kind(self) -> str:
        return _KINDS.get(self.storage, "memory")


@record(frozen=True)
class BoundMethod:
    """``obj.method`` looked up on a type object or a runtime value."""

    builtin: Builtin
    receiver: object


@record(frozen=True)
class BuiltinVar:
    """A SPIR-V built-in input such as ``workgroup_id`` (loaded where it is used)."""

    name: str
    spirv: str
    type: T.Type
    doc: str = ""

    def __repr__(self) -> str:
        return f"coopdsl.{self.name}"
