"""GLSL.std.450 math functions, component-wise on scalars and vectors.

Float functions are evaluated in float32 (float64 for f64) and rounded to
the argument type.  ``round`` rounds halves away from zero (GLSL leaves the
direction to the implementation); ``round_even`` to even.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ...ir import types as T
from ...ir.core import Op
from ..floats import round_float
from .registry import semantics

if TYPE_CHECKING:
    from ..machine import Machine


def _smoothstep(e0: Any, e1: Any, x: Any) -> Any:
    t = np.clip((x - e0) / (e1 - e0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


def _normalize(x: Any) -> Any:
    return x / np.sqrt((x * x).sum(axis=-1, keepdims=True))


FLOAT: dict[str, Callable[..., Any]] = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
    "inversesqrt": lambda x: 1.0 / np.sqrt(x), "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "round": lambda x: np.trunc(x + np.copysign(0.5, x)), "round_even": np.rint,
    "fract": lambda x: x - np.floor(x), "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "atan2": np.arctan2, "pow": np.power, "abs": np.abs, "sign": np.sign, "min": np.minimum, "max": np.maximum,
    "clamp": lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi), "mix": lambda x, y, a: x * (1.0 - a) + y * a,
    "step": lambda edge, x: np.where(x < edge, 0.0, 1.0), "smoothstep": _smoothstep,
    "fma": lambda a, b, c: np.asarray(a, np.float64) * b + c,  # rounded once, to the argument type
    "length": lambda x: np.sqrt((x * x).sum(axis=-1)),
    "distance": lambda a, b: np.sqrt(((a - b) ** 2).sum(axis=-1)), "normalize": _normalize,
    "cross": lambda a, b: np.cross(a, b),
}

def _find_lsb(x: Any) -> Any:
    """GLSL.std.450 FindILsb: the index of the lowest 1 bit, -1 (all ones) for 0."""
    a = np.asarray(x)
    u = a.astype(np.int64) & 0xFFFFFFFF
    low = u & -u                                             # the lowest set bit alone
    idx = np.where(u == 0, -1, np.log2(np.where(low == 0, 1, low)).astype(np.int64))
    return idx.astype(a.dtype)


def _find_msb(x: Any) -> Any:
    """GLSL.std.450 FindSMsb / FindUMsb: the index of the highest 1 bit (for a negative signed value, of the
    highest 0 bit), -1 (all ones) when there is none."""
    a = np.asarray(x)
    v = a.astype(np.int64)
    if a.dtype.kind == "i":
        v = np.where(v < 0, ~v, v)                           # FindSMsb: the highest bit unlike the sign
    v = v & 0xFFFFFFFF
    idx = np.where(v == 0, -1, np.floor(np.log2(np.where(v == 0, 1, v))).astype(np.int64))
    return idx.astype(a.dtype)


INTEGER: dict[str, Callable[..., Any]] = {
    "abs": np.abs, "sign": np.sign, "min": np.minimum, "max": np.maximum,
    "clamp": lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi), "find_lsb": _find_lsb, "find_msb": _find_msb,
}


def _bit_count(x: Any) -> Any:
    a = np.asarray(x)
    u = a.astype(np.int64) & 0xFFFFFFFF
    n = np.zeros(u.shape, np.int64)
    for i in range(32):
        n += (u >> i) & 1
    return n.astype(a.dtype)


def _bit_reverse(x: Any) -> Any:
    a = np.asarray(x)
    u = a.astype(np.int64) & 0xFFFFFFFF
    r = np.zeros(u.shape, np.int64)
    for i in range(32):
        r |= ((u >> i) & 1) << (31 - i)
    return r.astype(np.uint32).view(np.int32).astype(a.dtype) if a.dtype.kind == "i" else r.astype(a.dtype)


def _counts(offset: Any, count: Any) -> tuple[Any, Any]:
    """Offset and count as int64 (SPIR-V leaves offset + count > 32 undefined: they are taken modulo here as
    the shifts give them)."""
    return np.asarray(offset).astype(np.int64), np.asarray(count).astype(np.int64)


def _field_mask(count: Any) -> Any:
    return np.where(count >= 32, 0xFFFFFFFF, (np.int64(1) << np.minimum(count, 31)) - 1)


def _bit_extract(base: Any, offset: Any, count: Any) -> Any:
    a = np.asarray(base)
    off, cnt = _counts(offset, count)
    off, cnt = _lanes(off, a), _lanes(cnt, a)
    u = a.astype(np.int64) & 0xFFFFFFFF
    field = (u >> off) & _field_mask(cnt)
    if a.dtype.kind == "i":                                  # OpBitFieldSExtract: the field's top bit extended
        sign = np.where(cnt > 0, (field >> np.maximum(cnt - 1, 0)) & 1, 0)
        field = np.where((sign == 1) & (cnt < 32), field - (np.int64(1) << np.minimum(cnt, 31)), field)
        field = np.where(cnt == 0, 0, field)
        return (field & 0xFFFFFFFF).astype(np.uint32).view(np.int32).astype(a.dtype)
    return np.where(cnt == 0, 0, field).astype(a.dtype)


def _bit_insert(base: Any, insert: Any, offset: Any, count: Any) -> Any:
    a = np.asarray(base)
    off, cnt = _counts(offset, count)
    off, cnt = _lanes(off, a), _lanes(cnt, a)
    u = a.astype(np.int64) & 0xFFFFFFFF
    ins = np.asarray(insert).astype(np.int64) & 0xFFFFFFFF
    mask = (_field_mask(cnt) << off) & 0xFFFFFFFF
    out = np.where(cnt == 0, u, (u & ~mask) | ((ins << off) & mask)) & 0xFFFFFFFF
    return out.astype(np.uint32).view(np.int32).astype(a.dtype) if a.dtype.kind == "i" else out.astype(a.dtype)


def _lanes(s: Any, like: Any) -> Any:
    """A per-lane scalar (shape (lanes,)) broadcast against vector values (shape (lanes, n))."""
    s = np.asarray(s)
    return s[..., None] if like.ndim == s.ndim + 1 else s


BIT_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "count": _bit_count, "reverse": _bit_reverse, "extract": _bit_extract, "insert": _bit_insert,
}


@semantics("pack_half")
def _pack_half(m: Machine, op: Op, args: list[Any]) -> Any:
    h = np.asarray(args[0], np.float32).astype(np.float16).view(np.uint16).astype(np.uint32)   # (round to even)
    return h[..., 0] | (h[..., 1] << np.uint32(16))


@semantics("unpack_half")
def _unpack_half(m: Machine, op: Op, args: list[Any]) -> Any:
    p = np.asarray(args[0]).astype(np.uint32)
    lo = (p & np.uint32(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float32)
    hi = (p >> np.uint32(16)).astype(np.uint16).view(np.float16).astype(np.float32)
    return np.stack([lo, hi], axis=-1)


@semantics("bits")
def _bits(m: Machine, op: Op, args: list[Any]) -> Any:
    return BIT_FUNCTIONS[op.attrs["fn"]](*args)


@semantics("math")
def _math(m: Machine, op: Op, args: list[Any]) -> Any:
    fn = op.attrs["fn"]
    e = T.scalar_of(op.operands[0].type)
    if e.is_int:
        return INTEGER[fn](*args)
    wide: type[np.floating[Any]] = np.float64 if e.width == 64 else np.float32
    if fn == "round_even" and e.width == 16:
        wide = np.float16  # exact: rint of an f16 is an f16
    out = FLOAT[fn](*(np.asarray(a, wide) for a in args))
    return round_float(out, e)
