"""Byte layout of values in memory: sizes, alignments, member offsets, array strides.

Types with an explicit layout (buffer, uniform and push-constant blocks,
structs used in them, arrays with an ArrayStride) use it.  Shared and local
memory have no layout in SPIR-V; the interpreter gives them std430's (vec3
aligned like vec4), which is what a cooperative-matrix load from a shared
``vec4[u32]`` array assumes.  A cooperative matrix in local memory takes
``length()`` components per invocation (see docs/interpreter.md).
"""

from __future__ import annotations

from functools import lru_cache

from ..ir import types as T
from ..ir.attrs import Scope
from .lanes import Lanes
from .spec import SpecValues

POINTER_SIZE = 8  # PhysicalStorageBuffer64 addresses


class Layout:
    """Sizes and offsets of IR types for one launch (spec constants and subgroup size fixed)."""

    def __init__(self, spec: SpecValues, lanes: Lanes):
        self.spec = spec
        self.lanes = lanes
        self.size = lru_cache(maxsize=None)(self._size)
        self.align = lru_cache(maxsize=None)(self._align)

    def scope(self, t: T.CoopMatType) -> Scope:
        """The scope of a cooperative-matrix type."""
        return Scope(self.spec.dim(t.scope))

    def shape(self, t: T.CoopMatType) -> tuple[int, int]:
        """(rows, cols) of a cooperative-matrix type."""
        return self.spec.dim(t.rows), self.spec.dim(t.cols)

    def coop_length(self, t: T.CoopMatType) -> int:
        """Components of a matrix of type ``t`` each invocation holds (OpCooperativeMatrixLengthKHR)."""
        rows, cols = self.shape(t)
        members = self.lanes.members(self.scope(t))
        return -(-rows * cols // members)

    def length(self, t: T.ArrayType) -> int:
        """The number of elements of a fixed-size array type."""
        return self.spec.dim(t.length)

    def stride(self, t: T.ArrayType | T.RuntimeArrayType) -> int:
        """Bytes from one array element to the next."""
        if t.stride:
            return t.stride
        return _round_up(self.size(t.elem), self.align(t.elem))

    def member_offset(self, t: T.StructType, index: int) -> int:
        """Byte offset of member ``index`` of struct ``t``."""
        return self._offsets(t)[index]

    def _offsets(self, t: T.StructType) -> tuple[int, ...]:
        if t.offsets:
            return t.offsets
        out, at = [], 0
        for _, m in t.members:
            at = _round_up(at, self.align(m))
            out.append(at)
            at += self.size(m)
        return tuple(out)

    def _size(self, t: T.Type) -> int:
        if isinstance(t, T.ScalarType):
            return t.nbytes
        if isinstance(t, T.VectorType):
            return t.elem.nbytes * t.count
        if isinstance(t, T.PointerType):
            return POINTER_SIZE
        if isinstance(t, T.CoopMatType):
            return self.coop_length(t) * t.elem.nbytes
        if isinstance(t, T.ArrayType):
            return self.stride(t) * self.length(t)
        if isinstance(t, T.StructType):
            last = self._offsets(t)[-1] + self.size(t.members[-1][1])
            return _round_up(last, self.align(t))
        raise TypeError(f"type {t} has no size")

    def _align(self, t: T.Type) -> int:
        if isinstance(t, T.ScalarType):
            return t.nbytes
        if isinstance(t, T.VectorType):
            return t.elem.nbytes * (4 if t.count == 3 else t.count)
        if isinstance(t, (T.ArrayType, T.RuntimeArrayType)):
            return self.align(t.elem)
        if isinstance(t, T.CoopMatType):
            return t.elem.nbytes
        if isinstance(t, T.StructType):
            return max((self.align(m) for _, m in t.members), default=1)
        return POINTER_SIZE


def _round_up(n: int, a: int) -> int:
    return (n + a - 1) // a * a
