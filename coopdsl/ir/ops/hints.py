"""Hints: ops that tell the compiler something it cannot prove, and compute nothing."""

from __future__ import annotations

from .. import types as T
from ..core import Op
from .base import define, fail, result_is


def _assume_uniform(op: Op) -> None:
    t = op.operands[0].type
    if not isinstance(t, (T.ScalarType, T.VectorType)):
        fail(op, f"takes a scalar or vector, got {t}")
    result_is(op, t)


define("assume_uniform", 1, verify=_assume_uniform,
       doc="the operand, asserted by the kernel's author to be the same in every invocation of the workgroup "
           "(the uniformity analysis trusts it; it lowers to no instruction)")
