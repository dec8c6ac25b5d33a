"""Hints: ops that compute nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...ir.core import Op
from .registry import semantics

if TYPE_CHECKING:
    from ..machine import Machine


@semantics("assume_uniform")
def _assume_uniform(m: Machine, op: Op, args: list[Any]) -> Any:
    """The operand itself.  Whether the assumption holds is checked where it matters: a matrix
    operation or barrier reached by part of its scope is reported there."""
    return args[0]
