"""The semantics registry: one function per IR op kind, ``fn(machine, op, args) -> value``.

``args`` are the operand values (see :mod:`coopdsl.interp.values`); the
function computes the result for every invocation slot of the batch (the
machine keeps the old value in inactive slots) and performs side effects for
the active slots only (``machine.active``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...ir.core import Op

if TYPE_CHECKING:
    from ..machine import Machine

Semantics = Callable[["Machine", Op, list[Any]], Any]
"""A semantics function: ``(machine, op, operand values) -> result value`` (None for an op of type void)."""

SEMANTICS: dict[str, Semantics] = {}


def semantics(*kinds: str) -> Callable[[Semantics], Semantics]:
    """Register the decorated function as the meaning of IR op ``kinds``."""
    def deco(fn: Semantics) -> Semantics:
        for k in kinds:
            if k in SEMANTICS:
                raise ValueError(f"two semantics for {k}")
            SEMANTICS[k] = fn
        return fn
    return deco
