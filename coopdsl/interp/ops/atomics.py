"""Atomics, applied deterministically in invocation order.

The active invocations of one atomic instruction apply their operations one
after another in slot order (workgroup by workgroup, then by local
invocation index), each seeing the previous one's result, exactly as if
they ran sequentially.  The work is vectorised over distinct addresses (one
round per repeated use of an address) or, when few addresses are hit many
times, over each address's sequence with a numpy accumulate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ...ir import types as T
from ...ir.core import Op
from ..memory import Ptr, check_range, check_written, read_scalars, write_scalars
from ..values import scatter, take_lanes
from .registry import semantics

if TYPE_CHECKING:
    from ..machine import Machine

_UFUNC = {"add": np.add, "sub": np.subtract, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
          "or": np.bitwise_or, "xor": np.bitwise_xor}


def _step(kind: str) -> Callable[[Any, Any, Any], Any]:
    """new = step(old, value, comparator) for one atomic operation."""
    if kind == "exchange":
        return lambda old, v, c: v
    if kind == "cmpxchg":
        return lambda old, v, c: np.where(old == c, v, old)
    fn = _UFUNC[kind]
    return lambda old, v, c: fn(old, v)


def _apply(m: Machine, p: Ptr, t: T.ScalarType, kind: str, values: Any, comparators: Any = None) -> Any:
    """Apply the atomic to every active invocation in order; the old value each one saw (per slot)."""
    idx = m.active
    cp = p.taken(idx)
    check_range(cp, cp.addr, cp.addr + t.nbytes, "atomic access", idx)
    check_written(cp, cp.addr, t, m.layout, "atomic access", idx)  # (shared memory starts undefined)
    addr = np.asarray(cp.addr, np.int64)
    vals = np.asarray(take_lanes(t, values, idx))
    cmps = None if comparators is None else np.asarray(take_lanes(t, comparators, idx))
    order = np.argsort(addr, kind="stable")
    sorted_addr = addr[order]
    starts = np.nonzero(np.r_[True, sorted_addr[1:] != sorted_addr[:-1]])[0]
    seg = np.cumsum(np.r_[True, sorted_addr[1:] != sorted_addr[:-1]]) - 1
    rank = np.empty(len(addr), np.int64)
    rank[order] = np.arange(len(addr)) - starts[seg]
    rounds = int(rank.max()) + 1 if len(addr) else 0
    old = np.empty(len(addr), vals.dtype)
    step = _step(kind)
    if rounds <= len(starts) or kind == "cmpxchg" and rounds <= 4 * len(starts):
        for r in range(rounds):
            sel = np.nonzero(rank == r)[0]
            cur = read_scalars(p.region, addr[sel], t)
            old[sel] = cur
            write_scalars(p.region, addr[sel], t, step(cur, vals[sel], None if cmps is None else cmps[sel]))
    else:
        ends = np.r_[starts[1:], len(addr)]
        for a, b in zip(starts, ends):
            lanes = order[a:b]
            at = addr[lanes[:1]]
            cur = read_scalars(p.region, at, t)
            seq = _sequence(kind, cur, vals[lanes], None if cmps is None else cmps[lanes], step)
            old[lanes] = seq[:-1]
            write_scalars(p.region, at, t, seq[-1:])
    return scatter(t, m.lanes.N, idx, old)


def _sequence(kind: str, first: np.ndarray, vals: np.ndarray, cmps: Any,
              step: Callable[[Any, Any, Any], Any]) -> np.ndarray:
    """The successive contents of one address: its value, then after each operation."""
    if kind in _UFUNC:
        return _UFUNC[kind].accumulate(np.concatenate([first, vals]).astype(vals.dtype), dtype=vals.dtype)
    if kind == "exchange":
        return np.concatenate([first, vals]).astype(vals.dtype)
    out = [first[0]]
    for v, c in zip(vals, cmps):
        out.append(step(out[-1], v, c)[()])
    return np.array(out, vals.dtype)


@semantics("atomic_rmw")
def _rmw(m: Machine, op: Op, args: list[Any]) -> Any:
    p, value = args
    return _apply(m, p, T.scalar_of(op.type), op.attrs["op"], value)


@semantics("atomic_cmpxchg")
def _cmpxchg(m: Machine, op: Op, args: list[Any]) -> Any:
    p, value, comparator = args
    return _apply(m, p, T.scalar_of(op.type), "cmpxchg", value, comparator)


@semantics("atomic_load")
def _load(m: Machine, op: Op, args: list[Any]) -> Any:
    (p,) = args
    t = T.scalar_of(op.type)
    idx = m.active
    cp = p.taken(idx)
    check_range(cp, cp.addr, cp.addr + t.nbytes, "atomic access", idx)
    check_written(cp, cp.addr, t, m.layout, "atomic load", idx)
    return scatter(t, m.lanes.N, idx, read_scalars(p.region, np.asarray(cp.addr, np.int64), t))


@semantics("atomic_store")
def _store(m: Machine, op: Op, args: list[Any]) -> None:
    p, value = args
    t = T.scalar_of(op.operands[1].type)
    idx = m.active
    cp = p.taken(idx)
    check_range(cp, cp.addr, cp.addr + t.nbytes, "atomic access", idx)
    write_scalars(p.region, np.asarray(cp.addr, np.int64), t, take_lanes(t, value, idx))
