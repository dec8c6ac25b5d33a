"""Meaning of the integer dot products of four 8-bit lanes (``dot4x8``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...ir import types as T
from ...ir.core import Op
from ..values import value_dtype
from .registry import semantics

if TYPE_CHECKING:
    from ..machine import Machine


def _lanes(t: T.Type, x: Any) -> np.ndarray:
    """The four 8-bit lanes of each value (last axis), as int64: a packed integer's bytes from the lowest
    (signed when its type is), or a 4-vector's components."""
    if isinstance(t, T.ScalarType):
        u = np.asarray(x).astype(np.uint32)
        lanes = np.stack([(u >> np.uint32(8 * k)) & np.uint32(0xFF) for k in range(4)], axis=-1).astype(np.int64)
        return np.where(lanes >= 128, lanes - 256, lanes) if t.signed else lanes
    return np.asarray(x).astype(np.int64)


@semantics("dot4x8")
def _dot4x8(m: Machine, op: Op, args: list[Any]) -> Any:
    a, b = (_lanes(v.type, x) for v, x in zip(op.operands, args))
    return (a * b).sum(axis=-1).astype(value_dtype(T.scalar_of(op.type)))  # (|sum| <= 4 * 255 * 255: no wrap)
