"""Subgroup operations over the *active* invocations of each subgroup.

Values are laid out (subgroups, lanes, ...) and combined with numpy along
the lane axis; inactive lanes take the operation's identity.  Reading a lane
that does not exist (a shuffle past the subgroup, or to a lane a partial
subgroup lacks) gives the reader's own value; reading an inactive lane gives
whatever it last held (both undefined in SPIR-V).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ...ir import types as T
from ...ir.attrs import Scope
from ...ir.core import Op
from ..values import base_ndim, value_dtype
from .registry import semantics

if TYPE_CHECKING:
    from ..machine import Machine

# fmin/fmax: OpGroupNonUniformFMin/FMax choose the other value where one of two is a NaN (only all-NaN is
# undefined), as lavapipe does; np.minimum would spread the NaN to every lane
_UFUNC = {"add": np.add, "mul": np.multiply, "min": np.fmin, "max": np.fmax, "and": np.bitwise_and,
          "or": np.bitwise_or, "xor": np.bitwise_xor}


def _grid(m: Machine, t: T.Type, v: Any) -> np.ndarray:
    """``v`` of type ``t`` as (subgroups, lanes, ...)."""
    shape = (m.lanes.N,) + ((t.count,) if isinstance(t, T.VectorType) else ())
    a = np.asarray(v)
    if a.ndim == base_ndim(t):
        a = np.broadcast_to(a, shape)
    return a.reshape((m.lanes.groups(Scope.Subgroup), m.lanes.sgs) + shape[1:])


def _active(m: Machine, like: np.ndarray) -> np.ndarray:
    act = m.mask.reshape(m.lanes.groups(Scope.Subgroup), m.lanes.sgs)
    return act.reshape(act.shape + (1,) * (like.ndim - 2))


def _flat(m: Machine, g: np.ndarray) -> np.ndarray:
    return g.reshape((m.lanes.N,) + g.shape[2:])


def _identity(op: str, dtype: np.dtype) -> Any:
    if op in ("add", "or", "xor"):
        return dtype.type(0)
    if op == "mul":
        return dtype.type(1)
    if op == "and":
        return ~dtype.type(0)
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    big = dtype.type(np.inf) if dtype.kind == "f" else dtype.type(info.max)
    small = dtype.type(-np.inf) if dtype.kind == "f" else dtype.type(info.min)
    return big if op == "min" else small


@semantics("subgroup_reduce")
def _reduce(m: Machine, op: Op, args: list[Any]) -> Any:
    t = op.type
    g = _grid(m, t, args[0])
    fn, mode = _UFUNC[op.attrs["op"]], op.attrs["mode"]
    ident = _identity(op.attrs["op"], value_dtype(T.scalar_of(t)))
    x = np.where(_active(m, g), g, ident).astype(g.dtype)
    if mode == "reduce":
        out = np.broadcast_to(fn.reduce(x, axis=1, dtype=x.dtype)[:, None], g.shape)  # no widening: wrap
    elif mode == "clustered_reduce":   # each aligned cluster of lanes (its active ones) on its own
        c = op.attrs["cluster"]
        if c > m.lanes.sgs:
            raise m.error(op, f"a clustered reduction's cluster of {c} invocations is larger than the subgroup "
                              f"({m.lanes.sgs} invocations): undefined in SPIR-V")
        parts = x.reshape(x.shape[0], m.lanes.sgs // c, c, *x.shape[2:])
        sums = fn.reduce(parts, axis=2, dtype=x.dtype)[:, :, None]
        out = np.broadcast_to(sums, parts.shape).reshape(g.shape)
    else:
        out = fn.accumulate(x, axis=1, dtype=x.dtype)
        if mode == "exclusive_scan":
            out = np.concatenate([np.full_like(out[:, :1], ident), out[:, :-1]], axis=1)
    return _flat(m, np.ascontiguousarray(out))


def _first_active(m: Machine) -> np.ndarray:
    act = m.mask.reshape(m.lanes.groups(Scope.Subgroup), m.lanes.sgs)
    return cast(np.ndarray, np.argmax(act, axis=1))


@semantics("subgroup_elect")
def _elect(m: Machine, op: Op, args: list[Any]) -> Any:
    first = _first_active(m)
    return np.arange(m.lanes.N) % m.lanes.sgs == np.repeat(first, m.lanes.sgs)


@semantics("subgroup_all", "subgroup_any")
def _vote(m: Machine, op: Op, args: list[Any]) -> Any:
    g = _grid(m, op.operands[0].type, args[0])
    act = _active(m, g)
    hit = np.all(g | ~act, axis=1) if op.kind == "subgroup_all" else np.any(g & act, axis=1)
    return np.repeat(hit, m.lanes.sgs)


@semantics("subgroup_all_equal")
def _all_equal(m: Machine, op: Op, args: list[Any]) -> Any:
    t = op.operands[0].type
    g = _grid(m, t, args[0])
    first = g[np.arange(len(g)), _first_active(m)][:, None]
    same = (g == first) | (np.isnan(g) & np.isnan(first) if g.dtype.kind == "f" else False)
    if same.ndim == 3:
        same = same.all(axis=2)
    act = m.mask.reshape(same.shape)
    return np.repeat(np.all(same | ~act, axis=1), m.lanes.sgs)


def _gather(m: Machine, t: T.Type, v: Any, src: np.ndarray) -> np.ndarray:
    """Each slot's value of lane ``src`` (per slot) of its subgroup; its own value where ``src`` is outside the
    subgroup: out of range, or a lane a partial subgroup does not have (its slot is padding, holding nothing)."""
    g = _grid(m, t, v)
    own = np.arange(m.lanes.N) % m.lanes.sgs
    src = np.broadcast_to(np.asarray(src).astype(np.int64), (m.lanes.N,))
    groups = np.arange(m.lanes.N) // m.lanes.sgs
    inside = (src >= 0) & (src < m.lanes.sgs)
    if m.lanes.n_valid != m.lanes.N:  # partial subgroups: their missing lanes are outside too
        inside &= m.lanes.valid[groups * m.lanes.sgs + np.where(inside, src, 0)]
    return g[groups, np.where(inside, src, own)]


@semantics("subgroup_broadcast")
def _broadcast(m: Machine, op: Op, args: list[Any]) -> Any:
    return _gather(m, op.type, args[0], args[1])


@semantics("subgroup_broadcast_first")
def _broadcast_first(m: Machine, op: Op, args: list[Any]) -> Any:
    return _gather(m, op.type, args[0], np.repeat(_first_active(m), m.lanes.sgs))


@semantics("subgroup_shuffle")
def _shuffle(m: Machine, op: Op, args: list[Any]) -> Any:
    value, n = args
    lane = np.arange(m.lanes.N) % m.lanes.sgs
    n = np.asarray(n).astype(np.int64)
    sources: dict[str, Callable[[], np.ndarray]] = {"index": lambda: n + 0 * lane, "xor": lambda: lane ^ n,
                                                    "up": lambda: lane - n, "down": lambda: lane + n}
    src = sources[op.attrs["mode"]]()
    return _gather(m, op.type, value, src)


@semantics("subgroup_quad")
def _quad(m: Machine, op: Op, args: list[Any]) -> Any:
    """Lanes in quads of four neighbours: broadcast reads lane ``index`` of the quad, the swaps lane ^ 1, ^ 2, ^ 3."""
    lane = np.arange(m.lanes.N) % m.lanes.sgs
    mode = op.attrs["mode"]
    src = (lane & ~3) + op.attrs["index"] if mode == "broadcast" else \
        lane ^ {"swap_horizontal": 1, "swap_vertical": 2, "swap_diagonal": 3}[mode]
    return _gather(m, op.type, args[0], src)


@semantics("subgroup_ballot")
def _ballot(m: Machine, op: Op, args: list[Any]) -> Any:
    g = _grid(m, T.boolean, args[0]) & _active(m, _grid(m, T.boolean, args[0]))
    bits = np.zeros((len(g), 128), bool)
    bits[:, :m.lanes.sgs] = g
    words = np.packbits(bits, axis=1, bitorder="little").view("<u4").astype(np.uint32)
    return np.repeat(words, m.lanes.sgs, axis=0)


@semantics("subgroup_ballot_bits")
def _ballot_bits(m: Machine, op: Op, args: list[Any]) -> Any:
    """The ballot's bits for the subgroup's invocations (bits past the subgroup size do not count)."""
    words = np.broadcast_to(np.asarray(args[0], np.uint32), (m.lanes.N, 4))
    if op.attrs["query"] == "inverse":   # (SPIR-V: the Value of OpGroupNonUniformInverseBallot must be uniform)
        for k in range(4):
            m.group_uniform(op, Scope.Subgroup, np.ascontiguousarray(words[:, k]),
                            "the ballot given to cd.subgroup_inverse_ballot()")
    bits = np.unpackbits(np.ascontiguousarray(words).view(np.uint8), axis=1, bitorder="little").astype(bool)
    bits[:, m.lanes.sgs:] = False
    rows = np.arange(m.lanes.N)
    lane = rows % m.lanes.sgs
    query = op.attrs["query"]
    if query == "count":
        return bits.sum(axis=1).astype(np.uint32)
    if query in ("inclusive_count", "exclusive_count"):
        upto = np.cumsum(bits, axis=1)[rows, lane]
        return (upto - (bits[rows, lane] if query == "exclusive_count" else 0)).astype(np.uint32)
    if query in ("find_lsb", "find_msb"):
        cols = np.arange(128)
        found = np.where(bits, cols, 128 if query == "find_lsb" else -1)
        at = found.min(axis=1) if query == "find_lsb" else found.max(axis=1)
        return np.where(bits.any(axis=1), at, 0xFFFFFFFF).astype(np.uint32)   # (none set: undefined in SPIR-V)
    if query == "inverse":
        return bits[rows, lane]
    index = np.broadcast_to(np.asarray(args[1]).astype(np.int64), (m.lanes.N,))
    past = (index >= m.lanes.sgs) & m.mask
    if past.any():   # (SPIR-V: the result is undefined for an index past the group's size)
        slot = int(np.argmax(past))
        raise m.error(op, f"the bit index of cd.subgroup_ballot_bit_extract() is {int(index[slot])}, past the "
                          f"subgroup's {m.lanes.sgs} invocations: SPIR-V leaves the result undefined", slot)
    return bits[rows, np.where(index < 128, index, 0)]
