"""Hints lower to no instruction: the result of an op in ALIASES *is* its first operand's id."""

from __future__ import annotations

from .registry import lowering

ALIASES = frozenset({"assume_uniform"})  # the writer gives these ops their first operand's id


@lowering(*ALIASES)
def _alias(w, op, ty, rid, args):
    """Nothing to emit (the writer resolves uses of ``op`` to its operand)."""
