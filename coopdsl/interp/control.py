"""Structured control flow with divergence: blocks run in order for the invocations waiting there.

All invocations of a batch execute together.  Each block has a set of
*pending* invocations; the scheduler always runs the lowest-numbered block
(in the function's block list) that has any, with exactly those invocations
active ("min-PC" reconvergence).  Branches add invocations to their targets,
and each invocation remembers the block it came from, which picks its
incoming value at a ``phi``.  The front end lays blocks out in structured
order (a loop's header, body and continue block before its merge block;
back edges go to lower indices), so invocations that leave a loop wait at its
merge while the others keep iterating, and meet again there.
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np

from ..ir.core import Block, Function, Op
from ..ir.ops import OPS
from .environ import positive_env
from .machine import Machine
from .memory import Fault
from .ops import SEMANTICS
from .plans import plan_of
from .races import Race


def run_function(m: Machine, func: Function, args: list[Any], mask: np.ndarray) -> Any:
    """Run ``func`` for the invocations in ``mask``; its return value per invocation (None for void)."""
    for p, a in zip(func.params, args):
        m.env[id(p)] = a
    index = _block_index(func)
    pending: dict[int, np.ndarray] = {0: mask.copy()}
    queue = [0]
    came_from = np.full(m.lanes.N, -1, np.int32)
    result = None
    taken = m.back_edges  # shared by every call of the batch: a loop's count includes the loops it runs and calls
    limit = max_iterations()
    while queue:
        b = heapq.heappop(queue)
        here = pending.pop(b)
        block = func.blocks[b]
        m.set_mask(here)
        _phis(m, block, came_from, index)
        for op in block.ops:
            execute(m, op)
        t = block.last_op
        kind = t.kind
        if kind == "br":
            target = index[id(t.attrs["targets"][0])]
            if target <= b:  # a loop's back edge: a loop that never ends is reported, not run forever
                taken[0] += 1
                if taken[0] > limit:
                    raise m.error(t, f"a loop ran {limit:,} iterations without ending (counting every iteration "
                                     f"this batch of workgroups ran, in the functions it calls too); it may never "
                                     f"end (a range step of 0, a condition that never changes?); raise "
                                     f"COOPDSL_INTERP_MAX_ITERATIONS if it really is this long",
                                  int(np.argmax(here)))
            _goto(pending, queue, target, here)
        elif kind == "cond_br":
            cond = np.broadcast_to(m.value(t.operands[0]), here.shape)
            yes, no = t.attrs["targets"]
            _goto(pending, queue, index[id(yes)], here & cond)
            _goto(pending, queue, index[id(no)], here & ~cond)
        elif kind == "return":
            if t.operands:
                value = m.value(t.operands[0])
                result = value if result is None else m.merge(t.operands[0].type, here, value, result)
        else:  # unreachable
            raise m.error(t, "control reached code marked unreachable", int(np.argmax(here)))
        came_from[here] = b
    m.set_mask(mask)
    return result


def max_iterations() -> int:
    """How many times the back edges of one batch of workgroups (every function it calls included) may be taken
    before the interpreter reports a loop that does not end (COOPDSL_INTERP_MAX_ITERATIONS, default 1,048,576):
    counted per call, a loop calling a function with a loop ran the product of the two limits."""
    return positive_env("COOPDSL_INTERP_MAX_ITERATIONS", 1 << 20)


def execute(m: Machine, op: Op) -> None:
    """Execute one non-terminator op for the active invocations."""
    plan = plan_of(op, m)
    if plan.scope is not None:
        m.check_whole_scope(op, plan.scope, plan.what)
    try:
        args = [m.value(v) for v in op.operands]
        if plan.fn is None:   # a call: errors inside it name this call site
            m.calls.append(op)
            try:
                result = run_function(m, op.attrs["func"], args, m.mask)
            finally:
                m.calls.pop()
        else:
            result = plan.fn(m, op, args)
    except (Fault, Race) as f:
        raise m.error(op, f.message, f.slot) from None
    if plan.has_result:
        m.define(op, result)


def _phis(m: Machine, block: Block, came_from: np.ndarray, index: dict[int, int]) -> None:
    if not block.phis:
        return
    values = []
    for phi in block.phis:
        plan = plan_of(phi, m)
        if plan.scope is not None:
            m.check_whole_scope(phi, plan.scope, plan.what)
        value = None
        for pred, v in zip(phi.attrs["incoming"], phi.operands):
            arrived = came_from == index[id(pred)]
            if not (arrived & m.mask).any():
                continue
            incoming = m.value(v)
            value = incoming if value is None else m.merge(phi.type, arrived, incoming, value)
        values.append(value)
    for phi, value in zip(block.phis, values):
        m.define(phi, value)


def _goto(pending: dict[int, np.ndarray], queue: list[int], target: int, lanes: np.ndarray) -> None:
    if not lanes.any():
        return
    if target in pending:
        pending[target] |= lanes
    else:
        pending[target] = lanes.copy()
        heapq.heappush(queue, target)


_INDEX: dict[int, tuple[Function, dict[int, int]]] = {}


def _block_index(func: Function) -> dict[int, int]:
    got = _INDEX.get(id(func))
    if got is None or got[0] is not func:
        got = (func, {id(b): i for i, b in enumerate(func.blocks)})
        _INDEX[id(func)] = got
    return got[1]


def check_complete() -> list[str]:
    """IR op kinds with no interpreter semantics (should be none)."""
    from .ops import SCHEDULER_KINDS

    return sorted(k for k in OPS if k not in SEMANTICS and k not in SCHEDULER_KINDS)
