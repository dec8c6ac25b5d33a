"""Per-op facts the scheduler needs on every execution, worked out once per launch.

A plan holds the op's semantics function, whether it has a result, and the
scope that must reach it as a whole: the scope of any cooperative matrix it
takes or produces (SPV_KHR_cooperative_matrix: "all the invocations in the
Scope instance are active or none of them are"), or a control barrier's
execution scope.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import InternalCompilerError
from ..ir import types as T
from ..ir.attrs import Scope
from ..ir.core import Op
from .ops import SEMANTICS
from .ops.registry import Semantics

if TYPE_CHECKING:
    from .machine import Machine


@dataclass(frozen=True)
class Plan:
    """What executing an op needs: semantics (None for the scheduler's own), result, the scope that must
    reach it whole (and its name)."""

    fn: Semantics | None
    has_result: bool
    scope: Scope | None
    what: str


def plan_of(op: Op, m: Machine) -> Plan:
    """The plan of ``op`` on machine ``m`` (cached on the machine)."""
    got = m.plans.get(id(op))
    if got is None:
        got = m.plans[id(op)] = _plan(op, m)
    return got


def _plan(op: Op, m: Machine) -> Plan:
    fn = SEMANTICS.get(op.kind)  # None: carried out by the scheduler (phi, call)
    if fn is None and op.kind not in ("phi", "call"):
        raise InternalCompilerError(f"the interpreter has no semantics for IR op '{op.kind}'", op.loc)
    mat = _matrix_type([op.type] + [v.type for v in op.operands])
    if mat is not None:
        scope = m.layout.scope(mat)
        if scope is Scope.Subgroup and m.lanes.wgn % m.lanes.sgs:
            raise m.error(op, f"cooperative matrices of subgroup scope need full subgroups: the workgroup size "
                              f"{m.lanes.wgn} is not a multiple of the subgroup size {m.lanes.sgs}")
        return Plan(fn, op.has_result, scope, f"cooperative-matrix operation '{op.kind}'")
    if op.kind == "control_barrier" and op.attrs["exec_scope"] in (Scope.Subgroup, Scope.Workgroup):
        return Plan(fn, False, op.attrs["exec_scope"], "control barrier")
    return Plan(fn, op.has_result, None, "")


def _matrix_type(types: list[T.Type], depth: int = 0) -> T.CoopMatType | None:
    for t in types:
        if isinstance(t, T.CoopMatType):
            return t
        if depth < 4:
            inner = [m for _, m in t.members] if isinstance(t, T.StructType) else \
                [t.elem] if isinstance(t, T.ArrayType) else []
            found = _matrix_type(inner, depth + 1)
            if found is not None:
                return found
    return None
