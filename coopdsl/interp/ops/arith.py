"""Arithmetic, comparison, logic, selection and conversion ops (scalars, vectors, matrices).

Integers wrap at their width (numpy fixed-width arithmetic); signed division
truncates toward zero (OpSDiv) and the remainder takes the dividend's sign
(C's %, what coopdsl's lowering of signed % computes); a zero divisor, undefined in SPIR-V, gives 0.  f16 arithmetic is
rounded to f16 after every operation.  Float-to-integer conversions truncate
and saturate (NaN gives 0); float-to-float conversions round to nearest even.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ...ir import types as T
from ...ir.core import Op
from ..floats import round_float
from ..values import decode, encode, storage_dtype, value_dtype
from .registry import semantics

if TYPE_CHECKING:
    from ..machine import Machine

_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "and": np.bitwise_and, "or": np.bitwise_or,
    "xor": np.bitwise_xor, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "eq": np.equal, "ne": np.not_equal, "land": np.logical_and, "lor": np.logical_or,
}


def apply_arith(kind: str, operand: T.Type, result: T.Type, args: list[Any]) -> Any:
    """The value of arithmetic op ``kind`` on ``args`` (operand type ``operand``, result type ``result``).

    Shared by the op semantics and the evaluation of OpSpecConstantOp.
    """
    if kind in _BINARY:
        return _BINARY[kind](args[0], args[1])
    if kind in ("div", "rem"):
        return _divide(kind, T.scalar_of(operand), args[0], args[1])
    if kind in ("shl", "shr"):
        a = np.asarray(args[0])
        amount = np.asarray(args[1]).astype(a.dtype)
        return np.left_shift(a, amount) if kind == "shl" else np.right_shift(a, amount)
    if kind == "neg":
        return np.negative(args[0])
    if kind == "not":
        return np.logical_not(args[0]) if T.scalar_of(operand).is_bool else np.invert(args[0])
    if kind == "select":
        return np.where(_align_condition(args[0], args[1]), args[1], args[2])
    if kind == "convert":
        return convert(args[0], T.scalar_of(operand), T.scalar_of(result))
    if kind == "bitcast":
        return bitcast(args[0], operand, result)
    if kind == "fmod":  # OpFMod: one operation, so f16 rounds once too (evaluated in float32, as math functions)
        e = T.scalar_of(operand)
        x, y = (np.asarray(a, np.float32) if e.width < 32 else a for a in args)
        return round_float(x - y * np.floor(x / y), e) if e.width < 32 else x - y * np.floor(x / y)
    raise KeyError(kind)


def _align_condition(cond: Any, value: Any) -> np.ndarray:
    """A scalar bool per invocation, shaped to select between per-invocation vectors."""
    c, v = np.asarray(cond), np.asarray(value)
    return c[..., None] if v.ndim > c.ndim and c.ndim else c


def _divide(kind: str, e: T.ScalarType, a: Any, b: Any) -> Any:
    if e.is_float:
        return np.divide(a, b) if kind == "div" else np.fmod(a, b)
    a, b = np.asarray(a), np.asarray(b)
    zero = b == 0
    safe = np.where(zero, np.ones_like(b), b)
    if not e.signed:
        out = a // safe if kind == "div" else a % safe
    elif kind == "rem":
        out = np.fmod(a, safe)
    else:
        q = a // safe
        out = q + ((a - q * safe != 0) & ((a < 0) != (safe < 0))).astype(q.dtype)
    return np.where(zero, np.zeros_like(out), out)


def convert(x: Any, src: T.ScalarType, dst: T.ScalarType) -> np.ndarray:
    """Numeric conversion of ``x`` from ``src`` to ``dst`` component values."""
    x = np.asarray(x)
    if dst.is_float:
        if src.is_float or dst.encoding is None:
            return round_float(x, dst)
        return round_float(_float64_rounding_once(x), dst)
    if src.is_float:
        return _float_to_int(x, dst)
    return cast(np.ndarray, x.astype(value_dtype(dst)))


def _float64_rounding_once(x: np.ndarray) -> np.ndarray:
    """Integers as float64 values that round to a format of at most 24 significant bits (bf16, fp8) as the
    integers themselves do: exact below 2**53; above, the bits below the 53rd are replaced by one sticky bit
    (round to odd), so the one rounding to the format is the conversion's (a plain float64 conversion rounds
    first to 53 bits, and 2**55 + 2**47 + 1, just above a bf16 tie, became the tie and rounded down)."""
    if x.dtype.itemsize < 8:
        return x.astype(np.float64)
    bits = x.view(np.uint64)
    negative = x < 0 if x.dtype.kind == "i" else np.zeros(x.shape, bool)
    with np.errstate(over="ignore"):  # (a 0-d value computes with numpy scalars, which warn when they wrap)
        magnitude = np.where(negative, ~bits + np.uint64(1), bits)  # (-2**63 too: its magnitude 2**63, unsigned)
    low = np.uint64(0xFFF)
    sticky = (magnitude & ~low) | ((magnitude & low) != 0).astype(np.uint64) << np.uint64(11)
    exact = np.where(magnitude >= np.uint64(1 << 53), sticky, magnitude).astype(np.float64)
    return np.where(negative, -exact, exact)


def _float_to_int(x: np.ndarray, dst: T.ScalarType) -> np.ndarray:
    d = value_dtype(dst)
    lo, hi = (-(1 << (dst.width - 1)), (1 << (dst.width - 1)) - 1) if dst.signed else (0, (1 << dst.width) - 1)
    t = np.trunc(x.astype(np.float64))
    big, small = t >= float(hi) + 1.0, t < float(lo)
    inside = np.where(big | small | np.isnan(t), 0.0, t).astype(d)
    return np.where(big, d.type(hi), np.where(small, d.type(lo), inside))


def bitcast(x: Any, src: T.Type, dst: T.Type) -> np.ndarray:
    """The bits of ``x`` (type ``src``) reinterpreted as ``dst`` (same total size)."""
    se, de = T.scalar_of(src), T.scalar_of(dst)
    raw = np.array(encode(se, x), order="C")  # (np.ascontiguousarray makes a uniform 0-d value one of shape (1,))
    lead = raw.shape[:-1] if isinstance(src, T.VectorType) else raw.shape
    if isinstance(src, T.CoopMatType):
        return decode(de, raw.view(storage_dtype(de)))
    as_bytes = raw.reshape(lead + (-1,)).view(np.uint8)
    out = as_bytes.view(storage_dtype(de))
    if not isinstance(dst, T.VectorType):
        out = out.reshape(lead)
    return decode(de, out)


@semantics("add", "sub", "mul", "div", "rem", "and", "or", "xor", "shl", "shr", "lt", "le", "gt", "ge", "eq",
           "ne", "neg", "not", "land", "lor", "convert", "bitcast", "fmod")
def _arith(m: Machine, op: Op, args: list[Any]) -> Any:
    return apply_arith(op.kind, op.operands[0].type, op.type, args)


@semantics("select")
def _select(m: Machine, op: Op, args: list[Any]) -> Any:
    cond, a, b = args
    if isinstance(op.operands[0].type, T.VectorType):
        return np.where(cond, a, b)
    full = np.broadcast_to(cond, (m.lanes.N,))
    return m.merge(op.type, full, a, b)


@semantics("dot")
def _dot(m: Machine, op: Op, args: list[Any]) -> Any:
    t = op.type
    assert isinstance(t, T.ScalarType)  # a dot product of vectors gives their scalar
    wide: type[np.floating[Any]] = np.float64 if t.width == 64 else np.float32
    a, b = (np.asarray(v, wide) for v in args)
    return round_float((a * b).sum(axis=-1), t)


@semantics("isnan")
def _isnan(m: Machine, op: Op, args: list[Any]) -> Any:
    return np.isnan(args[0])


@semantics("isinf")
def _isinf(m: Machine, op: Op, args: list[Any]) -> Any:
    return np.isinf(args[0])


@semantics("any")
def _any(m: Machine, op: Op, args: list[Any]) -> Any:
    return np.any(args[0], axis=-1)


@semantics("all")
def _all(m: Machine, op: Op, args: list[Any]) -> Any:
    return np.all(args[0], axis=-1)


@semantics("mat_times_scalar")
def _mat_times_scalar(m: Machine, op: Op, args: list[Any]) -> Any:
    mat, s = args
    assert isinstance(op.type, T.CoopMatType)
    scope = m.layout.scope(op.type)
    per_group = m.group_uniform(op, scope, s, "the scalar of a matrix-times-scalar")
    return mat * per_group.astype(mat.dtype)[:, None, None]
