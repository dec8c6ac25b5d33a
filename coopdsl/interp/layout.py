"""Byte layout of values in memory for one launch: coopdsl/ir/layout.py's rules with the launch's values.

The sizes, alignments, member offsets and array strides are the IR layout's
(std430; explicit offsets and ArrayStrides as declared).  Shared and local
memory have no layout in SPIR-V; the interpreter gives them std430's (vec3
aligned like vec4), which is what a cooperative-matrix load from a shared
``vec4[u32]`` array assumes.  What only a launch knows is filled in here: the
length of an array sized by a specialization constant, and the components a
cooperative matrix in local memory takes per invocation (``length()``, see
docs/interpreter.md).
"""

from __future__ import annotations

from ..ir import types as T
from ..ir.attrs import Scope
from ..ir.layout import Layouter
from .lanes import Lanes
from .spec import SpecValues


class Layout(Layouter):
    """Sizes and offsets of IR types for one launch (spec constants and subgroup size fixed)."""

    def __init__(self, spec: SpecValues, lanes: Lanes):
        super().__init__("std430", dim=spec.dim, coop_length=self.coop_length)
        self.spec = spec
        self.lanes = lanes

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

    def member_offset(self, t: T.StructType, index: int) -> int:
        """Byte offset of member ``index`` of struct ``t``."""
        return self.offsets(t)[index]
