"""Every IR operation, declared once: operands, typed attributes, type rule, meaning.

An :class:`OpDef` says how many operands an op takes, which attributes it
carries and their Python types (typed values from :mod:`coopdsl.ir.attrs`,
never SPIR-V or GLSL spellings), whether it has side effects (``pure`` ops
with unused results are removed by the ``dce`` pass), whether it ends a block,
whether it is *tangled* (must be reached by every invocation of a scope
together: cooperative-matrix instructions, control barriers, subgroup
operations), and a ``verify`` hook that checks operand and result types.
The IR builder (:mod:`coopdsl.ir.builder`), the verifier and the ``dce`` pass
look kinds up here; the SPIR-V lowering has its own registry by kind.

The ops live in one file per family (``arith``, ``composite``, ``memory``,
``coopmat``, ``qcom``, ``subgroup``, ``atomics``, ``math``, ``control``, ``hints``, ``coopmat2``,
``tensor``, ``intdot``); a new family is a new file imported below.  The families few kernels use
(``atomics``, ``subgroup``, ``coopmat2``, ``qcom``, ``tensor``, ``intdot``: :mod:`coopdsl.ir.families`) are
deferred: :data:`OPS` imports them when asked for a kind it lacks or listed whole, and the builtins that make
their ops import them first.
"""

from __future__ import annotations

from ..families import deferred
from . import arith, composite, control, coopmat, hints, math, memory  # noqa: F401  (declare)
from .base import OPS, OpDef, VerifyError, define, opdef

OPS.defer(__name__, *deferred("ir.ops"))

__all__ = ["OPS", "OpDef", "VerifyError", "define", "opdef"]
