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
from ...ir.ops.math import NORM_FORMATS, norm_top
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
    u = _u32(x)
    low = u & -u                                             # the lowest set bit alone
    return _low32(np.where(u == 0, -1, np.log2(np.where(low == 0, 1, low)).astype(np.int64)), x)


def _find_msb(x: Any) -> Any:
    """GLSL.std.450 FindSMsb / FindUMsb: the index of the highest 1 bit (for a negative signed value, of the
    highest 0 bit), -1 (all ones) when there is none."""
    v = np.asarray(x).astype(np.int64)
    if np.asarray(x).dtype.kind == "i":
        v = np.where(v < 0, ~v, v)                           # FindSMsb: the highest bit unlike the sign
    v = v & 0xFFFFFFFF
    return _low32(np.where(v == 0, -1, np.floor(np.log2(np.where(v == 0, 1, v))).astype(np.int64)), x)


INTEGER: dict[str, Callable[..., Any]] = {
    "abs": np.abs, "sign": np.sign, "min": np.minimum, "max": np.maximum,
    "clamp": lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi), "find_lsb": _find_lsb, "find_msb": _find_msb,
}


def _u32(x: Any) -> Any:
    """The 32 bits of an i32/u32 array as non-negative int64 values (room for the shifts below)."""
    return np.asarray(x).astype(np.int64) & 0xFFFFFFFF


def _low32(v: Any, like: Any) -> Any:
    """The low 32 bits of int64 ``v`` as ``like``'s dtype (i32 values wrap to their two's complement)."""
    return (np.asarray(v) & 0xFFFFFFFF).astype(np.uint32).astype(np.asarray(like).dtype)


def _field(offset: Any, count: Any, vector: bool) -> tuple[Any, Any, Any]:
    """(offset, count, the count's mask) as int64; for a ``vector`` base, each of offset and count that is per lane
    (shape (lanes,)) gets a component axis, to broadcast against the base's (lanes, n) or (n,) (each on its own:
    a uniform offset with a per-lane count, or the reverse, once broadcast to (lanes, lanes)). SPIR-V leaves
    offset + count > 32 undefined."""
    off, cnt = (np.asarray(v).astype(np.int64) for v in (offset, count))
    if vector:
        off, cnt = (v[..., None] if v.ndim == 1 else v for v in (off, cnt))
    return off, cnt, np.where(cnt >= 32, 0xFFFFFFFF, (np.int64(1) << np.minimum(cnt, 31)) - 1)


def _bit_count(x: Any) -> Any:
    u = _u32(x)
    return _low32(sum((u >> i) & 1 for i in range(32)), x)


def _bit_reverse(x: Any) -> Any:
    u = _u32(x)
    return _low32(sum(((u >> i) & 1) << (31 - i) for i in range(32)), x)


def _bit_extract(base: Any, offset: Any, count: Any, vector: bool = False) -> Any:
    off, cnt, mask = _field(offset, count, vector)
    field = np.where(cnt == 0, 0, (_u32(base) >> off) & mask)
    if np.asarray(base).dtype.kind == "i":                   # OpBitFieldSExtract: the field's top bit extended
        negative = (cnt > 0) & (cnt < 32) & (((field >> np.maximum(cnt - 1, 0)) & 1) == 1)
        field = np.where(negative, field - (np.int64(1) << np.minimum(cnt, 31)), field)
    return _low32(field, base)


def _bit_insert(base: Any, insert: Any, offset: Any, count: Any, vector: bool = False) -> Any:
    off, cnt, mask = _field(offset, count, vector)
    at = (mask << off) & 0xFFFFFFFF
    u = _u32(base)
    return _low32(np.where(cnt == 0, u, (u & ~at) | ((_u32(insert) << off) & at)), base)


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


@semantics("pack_norm")
def _pack_norm(m: Machine, op: Op, args: list[Any]) -> Any:
    n, bits, signed = NORM_FORMATS[op.attrs["fmt"]]
    top = np.float32(norm_top(op.attrs["fmt"]))
    c = np.clip(np.asarray(args[0], np.float32), np.float32(-1.0 if signed else 0.0), np.float32(1.0))
    q = np.rint(c * top).astype(np.int64) & ((1 << bits) - 1)   # (round half to even; two's complement bits)
    out = np.zeros(q.shape[:-1], np.uint32)
    for i in range(n):
        out |= q[..., i].astype(np.uint32) << np.uint32(bits * i)
    return out


@semantics("unpack_norm")
def _unpack_norm(m: Machine, op: Op, args: list[Any]) -> Any:
    n, bits, signed = NORM_FORMATS[op.attrs["fmt"]]
    p = np.asarray(args[0]).astype(np.uint32)
    mask = np.uint32((1 << bits) - 1)
    parts = []
    for i in range(n):
        q = ((p >> np.uint32(bits * i)) & mask).astype(np.int64)
        if signed:
            q = np.where(q >= 1 << (bits - 1), q - (1 << bits), q)
        f = q.astype(np.float32) / np.float32(norm_top(op.attrs["fmt"]))
        if signed:
            f = np.maximum(f, np.float32(-1.0))
        parts.append(f.astype(np.float32))
    return np.stack(parts, axis=-1)


@semantics("bits")
def _bits(m: Machine, op: Op, args: list[Any]) -> Any:
    if op.attrs["fn"] in ("extract", "insert"):            # a field past bit 31: undefined in SPIR-V
        end = np.broadcast_to(np.asarray(args[-2]).astype(np.int64) + np.asarray(args[-1]).astype(np.int64),
                              (m.lanes.N,))
        bad = m.mask & (end > 32)
        if bad.any():
            slot = int(np.argmax(bad))
            off = int(np.broadcast_to(np.asarray(args[-2]), (m.lanes.N,))[slot])
            raise m.error(op, f"bit field from bit {off} to {int(end[slot])} reaches past bit 31 (offset + bits > "
                              f"32): the result is undefined", slot)
        return BIT_FUNCTIONS[op.attrs["fn"]](*args, vector=isinstance(op.operands[0].type, T.VectorType))
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
