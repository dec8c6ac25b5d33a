"""Cooperative-matrix ops with SPV_KHR_cooperative_matrix's matrix-level semantics.

Matrices are whole numpy matrices per scope instance (see
:mod:`coopdsl.interp.values`), so loads, stores and MulAdd are one numpy
operation per instruction for all subgroups (or workgroups) of the batch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ...ir import types as T
from ...ir.attrs import Layout as MemLayout
from ...ir.core import Op
from ..floats import round_float
from ..memory import Ptr, check_alignment, check_range, first_unwritten, read_scalars, write_scalars
from ..races import WORKGROUP, Tracker
from ..values import encode, signed_of, unsigned_of, value_dtype
from .registry import semantics

if TYPE_CHECKING:
    from ..machine import Machine


class _Access:
    """Where each element of the matrices of the active scope instances lies in memory."""

    def __init__(self, m: Machine, op: Op, pointer: Ptr, stride: Any, t: T.CoopMatType, store: bool):
        lay = m.layout
        self.scope = lay.scope(t)
        rows, cols = lay.shape(t)
        what = "the pointer of a cooperative-matrix " + ("store" if store else "load")
        base = m.group_uniform(op, self.scope, pointer.addr, what)
        step = m.group_uniform(op, self.scope, np.asarray(stride).astype(np.int64), "the stride").astype(np.int64)
        groups = m.lanes.groups(self.scope)
        self.active = np.nonzero(m.lanes.group_mask(self.scope, m.mask))[0]
        size = m.lanes.group_size(self.scope)
        self.slots = self.active * size + np.argmax(m.mask.reshape(groups, size)[self.active], axis=1)
        # (uniform values have one entry)
        pick: Callable[[np.ndarray], np.ndarray] = lambda a: a if len(a) == 1 else a[self.active]  # noqa: E731
        base, step = pick(base), pick(step)
        if np.any(step < (1 if store else 0)):
            k = int(np.argmax(step < (1 if store else 0)))
            raise m.error(op, f"cooperative-matrix {'store' if store else 'load'} stride must be "
                              f"{'> 0' if store else '>= 0'}, got {int(step[k])}", int(self.slots[k]))
        ptr = op.operands[0].type
        assert isinstance(ptr, T.PointerType)
        elem = lay.size(ptr.pointee)
        isz = t.elem.nbytes
        r, c = np.arange(rows)[:, None], np.arange(cols)[None, :]
        major, minor = (r, c) if _row_major(m, op) else (c, r)
        self.addr = base[:, None, None] + major * (step[:, None, None] * elem) + minor * isz
        self.addr = np.broadcast_to(self.addr, (max(len(base), len(self.active)), rows, cols))
        self.isz = isz
        self.pointer = pointer.taken(self.slots)
        flat = self.addr.reshape(len(self.addr), -1)
        what = "cooperative-matrix " + ("store" if store else "load")
        check_range(self.pointer, flat.min(axis=1), flat.max(axis=1) + isz, what, self.slots)
        mem = op.attrs.get("memory")
        check_alignment(self.pointer, self.pointer.addr, None if mem is None else mem.aligned, what, self.slots)
        self.groups, self.rows, self.cols = groups, rows, cols

    def tracked_bytes(self, tracker: Tracker) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(byte addresses (E, isz), agents (E,), slots (E,)) of every element, for race tracking."""
        per = self.rows * self.cols
        byte_addr = self.addr.reshape(-1)[:, None] + np.arange(self.isz)
        if self.scope.is_workgroup:
            agents = np.full(len(byte_addr), WORKGROUP, np.int16)
        else:
            agents = np.repeat(tracker.agents(self.slots), per)
        return byte_addr, agents, np.repeat(self.slots, per)


def _row_major(m: Machine, op: Op) -> bool:
    """Whether ``op`` reads or writes rows: its layout, or the value of its specialization-constant layout."""
    layout = op.attrs["layout"]
    if isinstance(layout, MemLayout):
        return layout is MemLayout.RowMajor
    value = int(m.spec.value(layout))
    if value not in (MemLayout.RowMajor.value, MemLayout.ColumnMajor.value):
        raise m.error(op, f"cooperative-matrix {'store' if op.kind == 'coop_store' else 'load'} layout is "
                          f"{value} at this launch (a specialization constant); it must be "
                          f"{MemLayout.RowMajor.value} (RowMajor) or {MemLayout.ColumnMajor.value} (ColumnMajor)")
    return value == MemLayout.RowMajor.value


@semantics("coop_load")
def _load(m: Machine, op: Op, args: list[Any]) -> Any:
    pointer, stride = args
    t = op.type
    assert isinstance(t, T.CoopMatType)
    acc = _Access(m, op, pointer, stride, t, store=False)
    region = pointer.region
    if region.tracker is not None:
        region.tracker.read(*acc.tracked_bytes(region.tracker))
    bad = first_unwritten(region, acc.addr, t.elem.nbytes)
    if bad is not None:
        k, e = divmod(bad, acc.rows * acc.cols)
        raise m.error(op, f"cooperative-matrix load of {acc.pointer.label} reads element ({e // acc.cols}, "
                          f"{e % acc.cols}) before anything was stored there: the value is undefined",
                      int(acc.slots[k]))
    values = read_scalars(region, acc.addr, t.elem)
    if len(acc.active) == acc.groups:
        return values
    out = np.zeros((acc.groups, acc.rows, acc.cols), values.dtype)
    out[acc.active] = values
    return out


@semantics("coop_store")
def _store(m: Machine, op: Op, args: list[Any]) -> None:
    pointer, mat, stride = args
    t = op.operands[1].type
    assert isinstance(t, T.CoopMatType)
    acc = _Access(m, op, pointer, stride, t, store=True)
    values = np.broadcast_to(mat, (acc.groups, acc.rows, acc.cols))[acc.active]
    region = pointer.region
    if region.tracker is not None:
        byte_addr, agents, slots = acc.tracked_bytes(region.tracker)
        raw = np.ascontiguousarray(encode(t.elem, values)).reshape(-1, 1).view(np.uint8)
        region.tracker.write(byte_addr, raw.reshape(byte_addr.shape), agents, slots)
    write_scalars(region, acc.addr, t.elem, values)


@semantics("coop_length")
def _length(m: Machine, op: Op, args: list[Any]) -> Any:
    return np.array(m.layout.coop_length(op.attrs["mat_type"]), np.uint32)


@semantics("coop_muladd")
def _muladd(m: Machine, op: Op, args: list[Any]) -> Any:
    a, b, c = args
    ta, tb, tc = (T.scalar_of(v.type) for v in op.operands)
    tr = T.scalar_of(op.type)
    if tr.is_float:
        wide = np.float64 if 64 in (ta.width, tb.width, tc.width) else np.float32
        product = np.matmul(np.asarray(a, wide), np.asarray(b, wide))
        return round_float(product + np.asarray(c, wide), tr)
    return _integer_muladd(m, op, a, b, c)


def _integer_muladd(m: Machine, op: Op, a: Any, b: Any, c: Any) -> np.ndarray:
    signed, saturate = op.attrs["signed"], op.attrs["saturate"]
    ta, tb, tc = (T.scalar_of(v.type) for v in op.operands)
    tr = T.scalar_of(op.type)
    # int64 sums of products of <= 16-bit operands are exact; wider saturating ones use Python ints.
    # Without saturation only the low bits count, and int64 arithmetic wraps.
    wide = saturate and max(ta.width, tb.width, tc.width) > 16
    A, B, C = (_extend(x, t, key in signed, wide) for x, t, key in ((a, ta, "a"), (b, tb, "b"), (c, tc, "c")))
    product = np.matmul(A, B)
    if not saturate:
        return _low_bits(product + C, tr)
    lo, hi = _range(tr.width, "result" in signed)
    if np.any((product < lo) | (product > hi)):
        raise m.error(op, f"the product A x B overflows {tr} before the saturating accumulation "
                          f"(undefined in SPV_KHR_cooperative_matrix)")
    return _low_bits(np.clip(product + C, lo, hi), tr)


def _extend(x: Any, t: T.ScalarType, signed: bool, wide: bool) -> np.ndarray:
    """Integer components sign- or zero-extended (Matrix*SignedComponents) to int64 (Python ints if ``wide``)."""
    x = np.asarray(x)
    bits: np.ndarray = x.view(signed_of(x.dtype) if signed else unsigned_of(x.dtype))
    return bits.astype(object) if wide else bits.astype(np.int64)


def _range(width: int, signed: bool) -> tuple[int, int]:
    return (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)


def _low_bits(total: np.ndarray, t: T.ScalarType) -> np.ndarray:
    """The low ``t.width`` bits of integers ``total`` as ``t`` components."""
    mask = (1 << t.width) - 1
    if total.dtype == object:
        low: np.ndarray = np.vectorize(lambda v: int(v) & mask, otypes=[np.uint64])(total)
    else:
        low = total.astype(np.uint64) & np.uint64(mask)
    return low.astype(unsigned_of(value_dtype(t))).view(value_dtype(t))
