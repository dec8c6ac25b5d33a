"""Hints lower to no instruction: the result of an op in ALIASES *is* its first operand's id."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...ir.core import Op
from .registry import lowering

if TYPE_CHECKING:
    from ..writer import Writer

ALIASES = frozenset({"assume_uniform"})  # the writer gives these ops their first operand's id


@lowering(*ALIASES)
def _alias(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    """Nothing to emit (the writer resolves uses of ``op`` to its operand)."""
