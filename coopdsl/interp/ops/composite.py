"""Composite ops: vectors, structs, arrays, and cooperative-matrix elements by invocation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...ir import types as T
from ...ir.core import Op
from ..mapping import extract_element, insert_element
from .registry import semantics

if TYPE_CHECKING:
    from ..machine import Machine


@semantics("extract")
def _extract(m: Machine, op: Op, args: list[Any]) -> Any:
    (obj,), t, i = args, op.operands[0].type, op.attrs["index"]
    if isinstance(t, T.ArrayType) and not 0 <= i < len(obj):
        _past_end(m, op, "read", t, i, len(obj))
        return obj[-1]   # (no active invocation reads it)
    if isinstance(t, (T.StructType, T.ArrayType)):
        return obj[i]
    if isinstance(t, T.CoopMatType):
        return extract_element(m, op, t, obj, np.asarray(i))
    return np.asarray(obj)[..., i]


@semantics("insert")
def _insert(m: Machine, op: Op, args: list[Any]) -> Any:
    value, obj = args
    t, i = op.type, op.attrs["index"]
    if isinstance(t, T.ArrayType) and not 0 <= i < len(obj):
        _past_end(m, op, "write", t, i, len(obj))
        return obj   # (no active invocation writes it)
    if isinstance(t, (T.StructType, T.ArrayType)):
        out = list(obj)
        out[i] = value
        return tuple(out) if isinstance(t, T.StructType) else out
    if isinstance(t, T.CoopMatType):
        return insert_element(m, op, t, obj, np.asarray(i), value)
    assert isinstance(t, T.VectorType)
    return _with_component(t, obj, np.asarray(i), value)


def _past_end(m: Machine, op: Op, what: str, t: T.ArrayType, index: int, count: int) -> None:
    """A constant index past the end of an array value (one whose length is a specialization constant, which the
    compiler checks only at the values a compile or launch gives): the out-of-bounds report, naming the first
    active invocation; nothing where none is active."""
    if m.mask.any():
        raise m.error(op, f"{what} of element {index} of an array value {t} out of bounds: it holds {count} "
                          f"elements", int(np.argmax(m.mask)))


def _with_component(t: T.VectorType, vec: Any, index: np.ndarray, value: Any) -> np.ndarray:
    vec, value = np.asarray(vec), np.asarray(value)
    lead = np.broadcast_shapes(vec.shape[:-1], value.shape, index.shape)
    out = np.array(np.broadcast_to(vec, lead + (t.count,)))
    hit = np.arange(t.count) == index[..., None]
    return np.where(hit, value[..., None], out)


def _check_index(m: Machine, op: Op, index: np.ndarray, count: int) -> None:
    a = np.broadcast_to(index, (m.lanes.N,))
    bad = m.mask & ((a < 0) | (a >= count))
    if bad.any():
        slot = int(np.argmax(bad))
        raise m.error(op, f"index {int(a[slot])} out of bounds for {op.operands[0].type} "
                          f"({count} components)", slot)


@semantics("extract_dyn")
def _extract_dyn(m: Machine, op: Op, args: list[Any]) -> Any:
    obj, index = args
    t = op.operands[0].type
    assert isinstance(t, (T.VectorType, T.ArrayType))
    count = t.count if isinstance(t, T.VectorType) else m.layout.length(t)
    _check_index(m, op, np.asarray(index), count)
    if isinstance(t, T.ArrayType):
        return _pick(obj, np.asarray(index).astype(np.int64))
    vec = np.asarray(obj)
    idx = np.clip(np.asarray(index).astype(np.int64), 0, count - 1)
    if vec.ndim == 1 and idx.ndim == 0:
        return vec[idx]
    lead = np.broadcast_shapes(vec.shape[:-1], idx.shape)
    return np.take_along_axis(np.broadcast_to(vec, lead + (count,)), np.broadcast_to(idx, lead)[..., None],
                              axis=-1)[..., 0]


def _pick(elements: list[Any], index: np.ndarray) -> Any:
    idx = np.clip(index, 0, len(elements) - 1)
    stacked = np.stack([np.asarray(e) for e in np.broadcast_arrays(*elements)])
    if idx.ndim == 0:
        return stacked[int(idx)]
    return stacked[idx, np.arange(len(idx))]


@semantics("insert_dyn")
def _insert_dyn(m: Machine, op: Op, args: list[Any]) -> Any:
    obj, value, index = args
    t = op.type
    assert isinstance(t, (T.VectorType, T.ArrayType))
    count = t.count if isinstance(t, T.VectorType) else m.layout.length(t)
    idx = np.asarray(index).astype(np.int64)
    _check_index(m, op, idx, count)
    if isinstance(t, T.ArrayType):
        return [np.where(idx == i, value, e) for i, e in enumerate(obj)]
    return _with_component(t, obj, idx, value)


@semantics("construct")
def _construct(m: Machine, op: Op, args: list[Any]) -> Any:
    t = op.type
    if isinstance(t, T.StructType):
        return tuple(args)
    if isinstance(t, T.ArrayType):
        return list(args)
    parts = np.broadcast_arrays(*[np.asarray(a) for a in args])
    return np.stack(parts, axis=-1)


@semantics("shuffle")
def _shuffle(m: Machine, op: Op, args: list[Any]) -> Any:
    a, b = (np.asarray(v) for v in args)
    a, b = np.broadcast_arrays(a, b)
    both = np.concatenate([a, b], axis=-1)
    return both[..., list(op.attrs["components"])]


@semantics("splat")
def _splat(m: Machine, op: Op, args: list[Any]) -> Any:
    t, (x,) = op.type, args
    if isinstance(t, T.VectorType):
        x = np.asarray(x)
        return np.repeat(x[..., None], t.count, axis=-1)
    assert isinstance(t, T.CoopMatType)
    scope = m.layout.scope(t)
    rows, cols = m.layout.shape(t)
    per_group = m.group_uniform(op, scope, x, "the value splat into a cooperative matrix")
    return np.broadcast_to(per_group[:, None, None], (len(per_group), rows, cols)).copy()

