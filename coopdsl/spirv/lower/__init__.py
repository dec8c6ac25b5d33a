"""IR op -> SPIR-V instructions, one file per op family.

This is the only place that chooses opcodes (and the capabilities the
meaning of an op implies, each required with its reason).  A lowering is a
function ``(writer, op, result type id, result id, operand ids)`` registered
for one or more IR op kinds with :func:`lowering`; enumerant values come from
the generated grammar tables through :mod:`coopdsl.spirv.grammar`.  The families few kernels use
(``subgroup`` with the atomics, ``coopmat2``, ``qcom``, ``tensor``, ``intdot``) are deferred: :data:`LOWERINGS`
imports them when asked for a kind it lacks or listed whole.
"""

from __future__ import annotations

from ...ir.families import deferred
from . import arith, control, coopmat, hints, math, memory  # noqa: F401  (register the lowerings)
from .registry import LOWERINGS, lowering

LOWERINGS.defer(__name__, *deferred("spirv.lower"))  # (coopdsl.ir.families: the one table)

__all__ = ["LOWERINGS", "lowering"]
