"""What each IR op does on the CPU, one module per op family (mirroring :mod:`coopdsl.ir.ops`).

Control flow and calls (``br``, ``cond_br``, ``return``, ``unreachable``,
``phi``, ``call``) are carried out by the block scheduler in
:mod:`coopdsl.interp.control`; every other kind has an entry in
:data:`SEMANTICS`.
"""

from __future__ import annotations

from . import arith, atomics, composite, coopmat, coopmat2, hints, intdot, math, memory, qcom, subgroup, tensor  # noqa: F401  (register)
from .registry import SEMANTICS, semantics

SCHEDULER_KINDS = ("br", "cond_br", "return", "unreachable", "phi", "call")

__all__ = ["SEMANTICS", "SCHEDULER_KINDS", "semantics"]
