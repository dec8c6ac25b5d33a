"""What each IR op does on the CPU, one module per op family (mirroring :mod:`coopdsl.ir.ops`).

Control flow and calls (``br``, ``cond_br``, ``return``, ``unreachable``,
``phi``, ``call``) are carried out by the block scheduler in
:mod:`coopdsl.interp.control`; every other kind has an entry in
:data:`SEMANTICS`.  The extension families' modules (atomics, NV2, QCOM, subgroup operations,
tensors, integer dot products) are the ones :mod:`coopdsl.ir.families` names for this layer.
"""

from __future__ import annotations

import importlib

from ...ir.families import modules
from . import arith, composite, coopmat, hints, math, memory  # noqa: F401  (register)
from .registry import SEMANTICS, semantics

for _family in modules(__name__, "interp.ops"):  # the extension families (coopdsl.ir.families), all up front
    importlib.import_module(_family)

SCHEDULER_KINDS = ("br", "cond_br", "return", "unreachable", "phi", "call")

__all__ = ["SEMANTICS", "SCHEDULER_KINDS", "semantics"]
