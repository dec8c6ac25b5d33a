"""How the interpreter holds values: numpy arrays across invocations.

* A scalar is an array of shape ``(N,)`` (one entry per invocation slot) or
  a 0-d array when it is the same everywhere (constants, push constants).
* A vector adds a last axis: ``(N, count)`` or ``(count,)``.
* A cooperative matrix is one whole matrix per instance of its scope:
  ``(G, rows, cols)`` with G the number of subgroups (or workgroups) in the
  batch, or ``(1, rows, cols)`` for a constant splat.
* A struct is a tuple of member values, an array value a list of elements,
  a pointer a :class:`~coopdsl.interp.memory.Ptr`.

bf16 and fp8 values live in float32 arrays holding exactly representable
values (see :mod:`coopdsl.interp.floats`); bools in ``np.bool_`` arrays.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

import numpy as np

from ..ir import types as T
from .floats import constant_float, from_bits, to_bits

_INT = {(8, True): np.int8, (16, True): np.int16, (32, True): np.int32, (64, True): np.int64,
        (8, False): np.uint8, (16, False): np.uint16, (32, False): np.uint32, (64, False): np.uint64}
_FLOAT = {16: np.float16, 32: np.float32, 64: np.float64}


def value_dtype(t: T.ScalarType) -> np.dtype:
    """The numpy dtype values of scalar type ``t`` are computed in."""
    if t.is_bool:
        return np.dtype(np.bool_)
    if t.is_int:
        return np.dtype(_INT[(t.width, t.signed)])
    return np.dtype(_FLOAT[t.width] if t.encoding is None else np.float32)


def storage_dtype(t: T.ScalarType) -> np.dtype:
    """The numpy dtype of ``t``'s bits in memory (bf16/fp8 as unsigned ints, bool as u32)."""
    if t.is_bool:
        return np.dtype(np.uint32)
    if t.is_float and t.encoding is not None:
        return np.dtype(np.uint16 if t.width == 16 else np.uint8)
    return value_dtype(t)


def unsigned_of(dtype: np.dtype) -> np.dtype:
    """The unsigned integer dtype of the same width."""
    return np.dtype(f"u{np.dtype(dtype).itemsize}")


def signed_of(dtype: np.dtype) -> np.dtype:
    """The signed integer dtype of the same width."""
    return np.dtype(f"i{np.dtype(dtype).itemsize}")


def scalar_constant(t: T.ScalarType, value: Any) -> np.ndarray:
    """A Python number as a 0-d array of ``t``'s value dtype (ints wrap, floats round)."""
    if t.is_bool:
        return np.array(bool(value))
    if t.is_int:
        bits = int(value) & ((1 << t.width) - 1)
        return np.array(bits, unsigned_of(value_dtype(t))).view(value_dtype(t))
    return np.array(constant_float(value, t))


def constant(t: T.Type, value: Any) -> Any:
    """The value of IR constant ``value`` of type ``t`` (vectors and matrices are splats)."""
    if isinstance(t, T.ScalarType):
        return scalar_constant(t, value)
    if isinstance(t, T.VectorType):
        return np.full(t.count, scalar_constant(t.elem, value))
    if isinstance(t, T.CoopMatType):
        raise TypeError("matrix constants need their dimensions: use Machine.constant")
    raise TypeError(f"no constant of type {t}")


def matrix_splat(t: T.CoopMatType, scalar: Any, rows: int, cols: int) -> np.ndarray:
    """A (1, rows, cols) matrix of one scalar value."""
    return np.full((1, rows, cols), scalar, value_dtype(t.elem))


def decode(t: T.ScalarType, raw: np.ndarray) -> np.ndarray:
    """Values of ``t`` from their storage bits."""
    if t.is_bool:
        return cast(np.ndarray, raw != 0)
    if t.is_float and t.encoding is not None:
        return from_bits(raw, t)
    return raw


def encode(t: T.ScalarType, values: np.ndarray) -> np.ndarray:
    """Storage bits of ``t`` values."""
    if t.is_bool:
        return np.asarray(values).astype(np.uint32)
    if t.is_float and t.encoding is not None:
        return to_bits(values, t)
    return np.asarray(values).astype(value_dtype(t), copy=False)


_Lanes = TypeVar("_Lanes", bound="PerLane")  # a PerLane merges with its own kind


class PerLane:
    """A value with its own per-invocation layout (pointers): it merges, takes and scatters itself."""

    def merged(self: _Lanes, mask: np.ndarray, old: _Lanes) -> _Lanes:  # pragma: no cover - interface
        """``self`` where ``mask``, ``old`` elsewhere."""
        raise NotImplementedError

    def taken(self, idx: np.ndarray) -> PerLane:  # pragma: no cover - interface
        """The entries of slots ``idx``."""
        raise NotImplementedError

    def scattered(self, n: int, idx: np.ndarray) -> PerLane:  # pragma: no cover - interface
        """``n`` slots holding these (compressed) entries at ``idx``."""
        raise NotImplementedError


def where(mask: np.ndarray, new: Any, old: Any) -> Any:
    """Per-invocation choice between two values of one type (``mask`` over invocation slots).

    Matrices are merged per scope instance: ``mask`` is then a per-instance mask.
    """
    if isinstance(new, tuple):
        return tuple(where(mask, a, b) for a, b in zip(new, old))
    if isinstance(new, list):
        return [where(mask, a, b) for a, b in zip(new, old)]
    if isinstance(new, PerLane):
        return new.merged(mask, old)
    new, old = np.asarray(new), np.asarray(old)
    m = mask.reshape(mask.shape + (1,) * (max(new.ndim, old.ndim) - 1))
    return np.where(m, new, old)


def base_ndim(t: T.Type) -> int:
    """Array dimensions of one invocation's scalar (0) or vector (1) value."""
    return 1 if isinstance(t, T.VectorType) else 0


def take_lanes(t: T.Type, v: Any, idx: np.ndarray) -> Any:
    """The entries of value ``v`` of type ``t`` at invocation slots ``idx`` (uniform values broadcast)."""
    if isinstance(t, T.StructType):
        return tuple(take_lanes(m, x, idx) for (_, m), x in zip(t.members, v))
    if isinstance(t, T.ArrayType):
        return [take_lanes(t.elem, x, idx) for x in v]
    if isinstance(v, PerLane):
        return v.taken(idx)
    a = np.asarray(v)
    if a.ndim > base_ndim(t):
        return a[idx]
    return np.broadcast_to(a, idx.shape + a.shape)


def scatter(t: T.Type, n: int, idx: np.ndarray, values: Any) -> Any:
    """A per-invocation value of ``n`` slots holding ``values`` at slots ``idx`` (zeros elsewhere)."""
    if isinstance(t, T.StructType):
        return tuple(scatter(m, n, idx, v) for (_, m), v in zip(t.members, values))
    if isinstance(t, T.ArrayType):
        return [scatter(t.elem, n, idx, v) for v in values]
    if isinstance(values, PerLane):
        return values.scattered(n, idx)
    values = np.asarray(values)
    out = np.zeros((n,) + values.shape[1:], values.dtype)
    out[idx] = values
    return out
