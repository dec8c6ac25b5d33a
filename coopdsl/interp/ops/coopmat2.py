"""SPV_NV_cooperative_matrix2 matrix ops on the CPU: reductions, per-element functions, use changes, transposes.

Callbacks run through the scheduler (``m.call_function``), like calls, by
the invocations of the matrix's scope instance:

* a per-element function runs in each invocation for the components it
  holds (the element mapping of :mod:`coopdsl.interp.mapping`), one component
  index after the other, so built-in inputs, shared memory and stores in it
  are those of the invocation holding the element;
* a combine function combines pairs of values spread over the members of
  each scope instance, along a binary tree (SPIR-V leaves the order open;
  floating-point results may differ from a GPU's in the last bits).

At workgroup scope the shared-memory accesses of either count as the whole
workgroup's for race tracking (SPIR-V does not say which invocation calls a
callback): see :mod:`coopdsl.interp.callbacks`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ...ir import types as T
from ...ir.attrs import Scope
from ...ir.core import Function, Op
from ...ir.ops.coopmat2 import ReduceMode
from ..mapping import lanes_to_matrix, matrix_to_lanes
from ..values import value_dtype
from .arith import convert
from .registry import semantics

if TYPE_CHECKING:
    from ..machine import Machine


@semantics("coop_convert_use")
def _convert_use(m: Machine, op: Op, args: list[Any]) -> Any:
    return convert(args[0], T.scalar_of(op.operands[0].type), T.scalar_of(op.type))


@semantics("coop_transpose")
def _transpose(m: Machine, op: Op, args: list[Any]) -> Any:
    return np.ascontiguousarray(np.swapaxes(np.asarray(args[0]), -1, -2))


@semantics("coop_per_element")
def _per_element(m: Machine, op: Op, args: list[Any]) -> Any:
    mat, func, *extras = args
    t = op.type
    assert isinstance(t, T.CoopMatType) and m.call_function is not None  # (set at launch)
    lanes, scope = m.lanes, m.layout.scope(t)
    n, (rows, cols) = m.layout.coop_length(t), m.layout.shape(t)
    lane = np.arange(lanes.N) % lanes.group_size(scope)
    comps = matrix_to_lanes(m, t, mat)
    extra = [matrix_to_lanes(m, t, e) if isinstance(v.type, T.CoopMatType) else e
             for v, e in zip(op.operands[2:], extras)]
    out = comps.copy()
    saved, was = m.mask, m.workgroup_callback
    m.workgroup_callback = scope is Scope.Workgroup
    try:
        for i in range(n):
            flat = lane * n + i
            inside = saved & (lane < lanes.members(scope)) & (flat < rows * cols)
            if not inside.any():
                continue
            call = [(flat // cols).astype(np.uint32), (flat % cols).astype(np.uint32), comps[:, i]]
            call += [e[:, i] if isinstance(v.type, T.CoopMatType) else e for v, e in zip(op.operands[2:], extra)]
            result = np.broadcast_to(m.call_function(m, func, call, inside), (lanes.N,))
            out[:, i] = np.where(inside, result, out[:, i])
    finally:
        m.set_mask(saved)
        m.workgroup_callback = was
    return lanes_to_matrix(m, t, out)


@semantics("coop_reduce")
def _reduce(m: Machine, op: Op, args: list[Any]) -> Any:
    mat, func = args
    src, t = op.operands[0].type, op.type
    assert isinstance(src, T.CoopMatType) and isinstance(t, T.CoopMatType)
    scope = m.layout.scope(src)
    groups = m.lanes.groups(scope)
    (rows, cols), (out_rows, out_cols) = m.layout.shape(src), m.layout.shape(t)
    x = np.broadcast_to(np.asarray(mat), (groups, rows, cols))

    def combine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return _combine(m, func, scope, a, b)

    mode = op.attrs["mode"]
    if mode == ReduceMode.Quad2x2:
        q = x.reshape(groups, out_rows, 2, out_cols, 2)
        return combine(combine(q[:, :, 0, :, 0], q[:, :, 1, :, 0]), combine(q[:, :, 0, :, 1], q[:, :, 1, :, 1]))
    if mode == ReduceMode.Row:
        per_row = _tree(combine, x)
        return np.ascontiguousarray(np.broadcast_to(per_row[:, :, None], (groups, out_rows, out_cols)))
    if mode == ReduceMode.Column:
        per_col = _tree(combine, np.swapaxes(x, 1, 2))
        return np.ascontiguousarray(np.broadcast_to(per_col[:, None, :], (groups, out_rows, out_cols)))
    total = _tree(combine, x.reshape(groups, rows * cols))
    return np.ascontiguousarray(np.broadcast_to(total[:, None, None], (groups, out_rows, out_cols)))


def _tree(combine: Callable[[np.ndarray, np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """``x`` combined along its last axis, pairwise in a binary tree."""
    while x.shape[-1] > 1:
        half = x.shape[-1] // 2
        paired = combine(x[..., 0:2 * half:2], x[..., 1:2 * half:2])
        x = np.concatenate([paired, x[..., 2 * half:]], axis=-1)
    return x[..., 0]


def _combine(m: Machine, func: Function, scope: Scope, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``func(a, b)`` for pairs of shape (G, ...), run by the members of each of the G scope instances."""
    lanes = m.lanes
    shape, groups = a.shape, a.shape[0]
    size, members = lanes.group_size(scope), lanes.members(scope)
    a2, b2 = a.reshape(groups, -1), b.reshape(groups, -1)
    count = a2.shape[1]
    out = np.zeros((groups, count), value_dtype(T.scalar_of(func.type.ret)))
    saved, was = m.mask, m.workgroup_callback
    running = lanes.group_mask(scope, saved)
    m.workgroup_callback = scope is Scope.Workgroup
    try:
        for k0 in range(0, count, members):
            k = min(members, count - k0)
            pa, pb = np.zeros((groups, size), a2.dtype), np.zeros((groups, size), b2.dtype)
            pa[:, :k], pb[:, :k] = a2[:, k0:k0 + k], b2[:, k0:k0 + k]
            mask = np.zeros((groups, size), bool)
            mask[:, :k] = running[:, None]
            assert m.call_function is not None  # (set at launch)
            result = m.call_function(m, func, [pa.reshape(-1), pb.reshape(-1)], mask.reshape(-1))
            out[:, k0:k0 + k] = np.broadcast_to(result, (lanes.N,)).reshape(groups, size)[:, :k]
    finally:
        m.set_mask(saved)
        m.workgroup_callback = was
    return out.reshape(shape)
