"""SPV_NV_cooperative_matrix2 shape rules, checked at compile time with the user's location.

The rules are the pure functions of :mod:`coopdsl.ir.ops.coopmat2`, which the
IR verifier applies too (spirv-val checks the shapes of
OpCooperativeMatrixReduceNV only when every dimension is a plain constant;
the rules compare specialization-constant dimensions symbolically); this
module raises their problems at the user's line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..ir import types as T
from ..ir.ops import coopmat2 as rules
from ..ir.ops.coopmat2 import ReduceMode
from .coopcheck import raise_problem

if TYPE_CHECKING:
    from ..ir.builder import Emitter


def require_accumulator(em: Emitter, t: T.CoopMatType, what: str) -> None:
    """A located ShapeError unless ``t`` is an accumulator (with a use known at compile time)."""
    raise_problem(em, rules.accumulator_problem(t, what))


def check_reduce(em: Emitter, t: T.CoopMatType, into: object, mode: ReduceMode) -> None:
    """The matrix and result types of ``m.reduce(mode, ..., into=into)``."""
    raise_problem(em, rules.reduce_problem(t, into, mode))


def check_transpose(em: Emitter, t: T.CoopMatType, into: object) -> T.CoopMatType:
    """The result type of ``m.transpose(into=into)``: the accumulator's B matrix with rows and columns swapped."""
    raise_problem(em, rules.transpose_problem(t, into))
    return rules.transpose_result(t)
