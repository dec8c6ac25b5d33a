"""The semantics registry: one function per IR op kind, ``fn(machine, op, args) -> value``.

``args`` are the operand values (see :mod:`coopdsl.interp.values`); the
function computes the result for every invocation slot of the batch (the
machine keeps the old value in inactive slots) and performs side effects for
the active slots only (``machine.active``).
"""

from __future__ import annotations

from collections.abc import Callable

SEMANTICS: dict[str, Callable] = {}


def semantics(*kinds: str):
    """Register the decorated function as the meaning of IR op ``kinds``."""
    def deco(fn):
        for k in kinds:
            if k in SEMANTICS:
                raise ValueError(f"two semantics for {k}")
            SEMANTICS[k] = fn
        return fn
    return deco
