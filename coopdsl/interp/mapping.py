"""Which invocation holds which element of a cooperative matrix (the interpreter's choice).

SPIR-V leaves the mapping implementation-defined.  The interpreter flattens
a ``rows x cols`` matrix in row-major order and gives each of the ``n``
invocations of its scope (the subgroup size, or the workgroup size for
workgroup scope) ``len = ceil(rows * cols / n)`` consecutive elements:
invocation ``l`` (its lane in the subgroup, or its local invocation index)
holds flat elements ``l * len .. l * len + len - 1``, so component ``i`` of
invocation ``l`` is element ``(row, col) = divmod(l * len + i, cols)``.
``m.length()`` is ``len``; components past the end of the matrix (when
``n`` does not divide ``rows * cols``) read as 0 and writes to them are lost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..ir import types as T
from ..ir.attrs import Scope
from ..ir.core import Op

if TYPE_CHECKING:
    from .machine import Machine


def _geometry(m: Machine, t: T.CoopMatType) -> tuple[Scope, int, int, int, int, int]:
    """(scope, components per invocation, rows, cols, invocations per scope instance, instances) of ``t``."""
    lanes, layout = m.lanes, m.layout
    scope = layout.scope(t)
    rows, cols = layout.shape(t)
    return scope, layout.coop_length(t), rows, cols, lanes.members(scope), lanes.groups(scope)


def matrix_to_lanes(m: Machine, t: T.CoopMatType, mat: np.ndarray) -> np.ndarray:
    """The components each invocation slot holds: shape (N, len)."""
    lanes = m.lanes
    scope, n, rows, cols, members, groups = _geometry(m, t)
    flat = np.broadcast_to(mat, (groups, rows, cols)).reshape(groups, rows * cols)
    if members * n != rows * cols:
        flat = np.concatenate([flat, np.zeros((groups, members * n - rows * cols), flat.dtype)], axis=1)
    per = flat.reshape(groups, members, n)
    if scope is Scope.Workgroup and lanes.slots_per_wg != members:
        pad = np.zeros((groups, lanes.slots_per_wg - members, n), flat.dtype)
        per = np.concatenate([per, pad], axis=1)
    return per.reshape(lanes.N, n)


def lanes_to_matrix(m: Machine, t: T.CoopMatType, components: np.ndarray) -> np.ndarray:
    """The matrices (G, rows, cols) whose invocations hold ``components`` (N, len)."""
    _, n, rows, cols, members, groups = _geometry(m, t)
    per = components.reshape(groups, -1, n)[:, :members, :]
    return np.ascontiguousarray(per.reshape(groups, members * n)[:, :rows * cols]).reshape(groups, rows, cols)


def _check(m: Machine, op: Op, t: T.CoopMatType, index: np.ndarray) -> int:
    n = m.layout.coop_length(t)
    i = int(index)
    if not 0 <= i < n:
        raise m.error(op, f"component {i} of {t} does not exist: each invocation holds {n} components "
                          f"(m.length())")
    return i


def extract_element(m: Machine, op: Op, t: T.CoopMatType, mat: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Component ``index`` of ``mat`` in each invocation slot."""
    i = _check(m, op, t, index)
    return matrix_to_lanes(m, t, mat)[:, i]


def insert_element(m: Machine, op: Op, t: T.CoopMatType, mat: np.ndarray, index: np.ndarray, value: Any) -> np.ndarray:
    """``mat`` with component ``index`` of each active invocation replaced by its ``value``."""
    i = _check(m, op, t, index)
    comps = matrix_to_lanes(m, t, mat).copy()
    comps[:, i] = np.broadcast_to(value, (m.lanes.N,))
    return lanes_to_matrix(m, t, comps)
