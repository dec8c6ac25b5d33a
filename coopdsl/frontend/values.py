"""Compile-time wrappers the code generator passes around besides IR values."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import types as T
from ..ir.core import GlobalVar


@dataclass
class BufferRef:
    """A storage-buffer kernel parameter: indexing it loads/stores elements."""

    name: str
    var: GlobalVar  # pointer to the Block struct { elem data[]; }
    elem: T.Type
    storage: str = "StorageBuffer"


@dataclass(frozen=True)
class BoundMethod:
    """``obj.method`` looked up on a type object or a runtime value."""

    builtin: object
    receiver: object


@dataclass(frozen=True)
class BuiltinVar:
    """A SPIR-V built-in input such as ``workgroup_id`` (loaded where it is used)."""

    name: str
    spirv: str
    type: T.Type
    doc: str = ""

    def __repr__(self) -> str:
        return f"coopdsl.{self.name}"
