"""Whether a Python number fits a scalar type: the one place that decides (stdlib only).

A type is given by its traits (kind, width, signedness, float encoding), so that the compiler's
IR (``coopdsl.ir.literals``, for kernel literals, splats and specialization constants) and the
runtime (push constants and specialization data packed for Vulkan) ask the same function; none
wraps or rounds a value silently into a type it does not fit.
"""

from __future__ import annotations

import math
import struct
from functools import cache
from typing import Any

_F64 = struct.Struct("<d")


def float_key(value: float) -> bytes:
    """A Python float's identity, for memos and constant pools: its 64 bits, so that 0.0 and -0.0, and NaNs of
    other payloads, stay apart (``==`` merges the zeros and ``float.hex`` every NaN)."""
    return _F64.pack(value)


# largest finite value and the rounding threshold above it (max + half an ulp), per float format
FLOAT_LIMITS = {
    (16, None): (65504.0, 65520.0),
    (32, None): (3.4028234663852886e38, 3.4028235677973366e38),
    (64, None): (1.7976931348623157e308, math.inf),
    (16, "BFloat16KHR"): (3.3895313892515355e38, 3.39617752923046e38),
    (8, "Float8E4M3EXT"): (448.0, 464.0),
    (8, "Float8E5M2EXT"): (57344.0, 61440.0),
}

# smallest positive (subnormal) value per float format: a nonzero literal at or below half of it rounds to 0
SMALLEST = {(16, None): 2.0 ** -24, (32, None): 2.0 ** -149, (64, None): 5e-324, (16, "BFloat16KHR"): 2.0 ** -133,
            (8, "Float8E4M3EXT"): 2.0 ** -9, (8, "Float8E5M2EXT"): 2.0 ** -16}

# reflection type name -> (kind, width, signed, float encoding)
TRAITS = {"bool": ("bool", 32, False, None),
          **{f"i{w}": ("int", w, True, None) for w in (8, 16, 32, 64)},
          **{f"u{w}": ("int", w, False, None) for w in (8, 16, 32, 64)},
          "f16": ("float", 16, True, None), "f32": ("float", 32, True, None), "f64": ("float", 64, True, None),
          "bf16": ("float", 16, True, "BFloat16KHR"), "e4m3": ("float", 8, True, "Float8E4M3EXT"),
          "e5m2": ("float", 8, True, "Float8E5M2EXT")}


# significant bits (with the implicit one) per float format
SIGNIFICANT_BITS = {(16, None): 11, (32, None): 24, (64, None): 53, (16, "BFloat16KHR"): 8,
                    (8, "Float8E4M3EXT"): 4, (8, "Float8E5M2EXT"): 3}


def _round_int(value: int, bits: int) -> int:
    """``value`` rounded to ``bits`` significant bits, to nearest, ties to even: exact integer arithmetic, so that
    an int past 2**53 is rounded once into a float format, not first to f64 and then again."""
    shift = abs(value).bit_length() - bits
    if shift <= 0:
        return value
    mag = abs(value)
    q, rem = mag >> shift, mag & ((1 << shift) - 1)
    half = 1 << (shift - 1)
    if rem > half or (rem == half and q & 1):
        q += 1
    return (q << shift) * (1 if value > 0 else -1)


class LiteralError(ValueError):
    """A Python value that does not fit the type it is given to (the message says why)."""


def int_range(width: int, signed: bool) -> tuple[int, int]:
    """The smallest and largest value of an integer type."""
    if signed:
        return -(1 << (width - 1)), (1 << (width - 1)) - 1
    return 0, (1 << width) - 1


def python_value(value: Any) -> Any:
    """``value``, or a numpy scalar's Python value (``np.uint32(4)`` is ``4``): how every path takes a numpy
    scalar (a launch's arguments, ``compile(spec=...)``, the autotuner's keys). ``np.longdouble`` stays a numpy
    scalar (no Python number holds it), and anything else is returned as it is."""
    if type(value).__module__ == "numpy":   # (numpy is imported only when it gave the value)
        import numpy as np

        if isinstance(value, np.generic):
            return value.item()
    return value


def host_bool(value: Any) -> bool | None:
    """A value the host gives a bool specialization constant (a launch's, ``compile(spec=...)``'s, ``emit
    --spec``'s) as a bool: True or False, or the ints 1 and 0 (VkBool32's values; numpy scalars as their Python
    value); None for anything else.  The one rule every path asks; a kernel's own literals stay stricter (a
    number is not a bool there)."""
    value = python_value(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    return None


def fit_number(value: object, kind: str, width: int, signed: bool, encoding: str | None,
               name: str) -> bool | int | float:
    """``value`` as a constant of the scalar type with these traits (``name`` in messages);
    :class:`LiteralError` when it does not fit.

    bools fit only ``bool``; ints fit integer types within their range and float types; floats fit
    float types whose finite range holds them after rounding (infinities and NaN are kept as they
    are) and in which a nonzero value does not round to 0, never integer types.  A numpy scalar
    (``np.uint32(4)``) counts as its Python value, for ``compile(spec=...)`` as for a launch.
    """
    value = python_value(value)   # (a numpy scalar: its Python value, as a launch takes it)
    if isinstance(value, bool):
        if kind != "bool":
            raise LiteralError(f"cannot use {value!r} as {name}")
        return value
    if not isinstance(value, (int, float)):
        raise LiteralError(f"{value!r} is not a number")
    if kind == "bool":
        raise LiteralError(f"cannot use the number {value!r} as a bool")
    if kind == "int":
        if isinstance(value, float):
            raise LiteralError(f"cannot use the float literal {value!r} as {name}; convert explicitly")
        lo, hi = int_range(width, signed)
        if not lo <= value <= hi:
            raise LiteralError(f"the literal {value} does not fit in {name} ({lo}..{hi})")
        return int(value)
    given = value
    if isinstance(value, int) and abs(value) > 1 << 53:
        value = _round_int(value, SIGNIFICANT_BITS[(width, encoding)])   # (float() would round it first)
    try:
        f = float(value)
    except OverflowError:
        raise LiteralError(f"the literal {_shown(given)} does not fit in {name}") from None
    largest, limit = FLOAT_LIMITS[(width, encoding)]
    if math.isinf(f) and encoding == "Float8E4M3EXT":
        raise LiteralError(f"{name} has no infinity (largest finite value {largest:g})")
    if math.isfinite(f) and abs(f) >= limit:
        raise LiteralError(f"the literal {_shown(given)} does not fit in {name} (largest finite value {largest:g})")
    smallest = SMALLEST[(width, encoding)]
    if f != 0.0 and abs(f) <= smallest / 2:
        raise LiteralError(f"the literal {_shown(given)} is 0 in {name} (its smallest nonzero value is "
                           f"{smallest:g}); write 0.0 if zero is meant")
    return f


def _shown(value: int | float) -> str:
    """A number as a message shows it: as given, or an integer of more than 20 digits in scientific notation
    (``10**39``: 1e+39, not its 40 digits)."""
    if isinstance(value, int) and abs(value) >= 10 ** 20:
        digits = str(abs(value))
        mantissa = f"{digits[0]}.{digits[1:4]}".rstrip("0").rstrip(".")
        return f"{'-' if value < 0 else ''}{mantissa}e+{len(digits) - 1}"
    return repr(value)


def fit_named(value: object, name: str) -> bool | int | float:
    """:func:`fit_number` for a scalar type given by its reflection name (``u32``, ``f16``, ``bf16`` ...)."""
    return fit_number(value, *TRAITS[name], name)


# -- a number's bits in a float format (the encoder the compiler's constants and the runtime's data share) --

FP8_FORMATS = {  # encoding -> (exponent bits, mantissa bits, bias, has infinities)
    "Float8E4M3EXT": (4, 3, 7, False),
    "Float8E5M2EXT": (5, 2, 15, True),
}


def fp8_value(encoding: str, code: int) -> float:
    """The real value of the 8-bit ``code`` of an FP8 ``encoding`` (SPV_EXT_float8)."""
    e_bits, m_bits, bias, has_inf = FP8_FORMATS[encoding]
    sign = -1.0 if code & 0x80 else 1.0
    exp = (code >> m_bits) & ((1 << e_bits) - 1)
    man = code & ((1 << m_bits) - 1)
    top = (1 << e_bits) - 1
    if has_inf and exp == top:
        return sign * math.inf if man == 0 else math.nan
    if not has_inf and exp == top and man == (1 << m_bits) - 1:
        return math.nan  # E4M3: S.1111.111 is NaN, no infinities
    if exp == 0:
        return sign * man * 2.0 ** (1 - bias - m_bits)
    return sign * (1 + man / (1 << m_bits)) * 2.0 ** (exp - bias)


@cache
def _positive_codes(encoding: str) -> tuple[tuple[float, int], ...]:
    """The finite non-negative codes (sign bit clear) and their values."""
    return tuple(sorted((fp8_value(encoding, c), c) for c in range(0x80) if math.isfinite(fp8_value(encoding, c))))


def fp8_bits(encoding: str, value: float) -> int:
    """Nearest code to ``value``: round to nearest, ties to an even mantissa, the sign in bit 7.

    Infinities encode as E5M2's infinity; E4M3 has none and saturates to its largest finite value
    (:func:`fit_number` refuses an infinite E4M3 literal first).
    """
    if math.isnan(value):
        return 0x7F if encoding == "Float8E4M3EXT" else 0x7E
    sign = 0x80 if math.copysign(1.0, value) < 0 else 0
    magnitude = abs(value)
    if math.isinf(magnitude) and encoding == "Float8E5M2EXT":
        return sign | 0x7C
    codes = _positive_codes(encoding)
    if math.isinf(magnitude):
        return sign | codes[-1][1]
    best = min(codes, key=lambda vc: (abs(vc[0] - magnitude), vc[1] & 1))
    return sign | best[1]


def stored_float(value: float, width: int, encoding: str | None = None) -> float:
    """The value a float format of ``width`` bits and ``encoding`` stores for ``value`` (:func:`float_pattern`'s
    rounding), as a Python float: what a module holds for a literal or a specialization constant's default."""
    bits = float_pattern(value, width, encoding)
    if encoding is None:
        fmt = {16: "<e", 32: "<f", 64: "<d"}[width]
        ifmt = {16: "<H", 32: "<I", 64: "<Q"}[width]
        return float(struct.unpack(fmt, struct.pack(ifmt, bits))[0])
    if encoding == "BFloat16KHR":
        return float(struct.unpack("<f", struct.pack("<I", bits << 16))[0])
    return fp8_value(encoding, bits)


def float_pattern(value: float, width: int, encoding: str | None = None) -> int:
    """The bit pattern of ``value`` in the float format of ``width`` bits and ``encoding`` (None: IEEE binary16/32/
    64; "BFloat16KHR"; the FP8 encodings), rounded once to nearest, ties to even."""
    if encoding is None:
        fmt = {16: "<e", 32: "<f", 64: "<d"}[width]
        ifmt = {16: "<H", 32: "<I", 64: "<Q"}[width]
        return int(struct.unpack(ifmt, struct.pack(fmt, value))[0])
    if encoding == "BFloat16KHR":
        if math.isnan(value):
            return 0x7FC0
        if math.isfinite(value) and value != 0.0:   # rounded once, from the value itself (not via f32)
            _, e = math.frexp(value)
            ue = max(e - 8, -133)                   # 8 significant bits; subnormals below 2**-126
            value = math.copysign(math.ldexp(round(math.ldexp(value, -ue)), ue), value)
        f32 = struct.unpack("<I", struct.pack("<f", value))[0]   # exact: value has at most 8 significant bits
        return int(f32 >> 16) & 0xFFFF
    return fp8_bits(encoding, value)


def float_pattern_named(value: float, name: str) -> int:
    """:func:`float_pattern` for a float type given by its reflection name (``f16``, ``bf16``, ``e4m3`` ...)."""
    _, width, _, encoding = TRAITS[name]
    return float_pattern(value, width, encoding)


def int_op(op: str, args: list[int], name: str | None) -> int | None:
    """``op`` (an IR operator name: add, sub, mul, div, rem, neg, not, and, or, xor, shl, shr, comparisons,
    land, lor, select) on ints of the integer type ``name`` as OpSpecConstantOp computes it on the device (and
    the interpreter does): results wrap to the type's width, division truncates toward zero, ``shr`` is
    arithmetic for a signed type and logical otherwise; with ``name`` None, on Python's unbounded ints.  None
    where SPIR-V leaves the result undefined: a division by zero, a shift by a negative count or by the width
    or more.  One evaluation of a spec-constant
    expression for the compiler's size rules and the device checks of its reflection (``ir.types.dim_value``,
    ``devices.dims.resolve``)."""
    kind, width, signed, _ = TRAITS.get(name or "", ("int", 0, True, None))
    if kind != "int":
        width, signed = 32, False
    mask = (1 << width) - 1

    def wrap(v: int) -> int:
        if not width:   # (no type: Python's ints)
            return int(v)
        v = int(v) & mask
        return v - (1 << width) if signed and v >> (width - 1) else v

    a = args[0]
    b = args[1] if len(args) > 1 else 0
    if op in ("div", "rem"):
        if not b:
            return None
        q = abs(a) // abs(b)
        q = -q if (a < 0) != (b < 0) else q
        return wrap(q if op == "div" else a - q * b)
    if op in ("shl", "shr"):
        if b < 0 or (width and b >= width):
            return None
        return wrap(a << b) if op == "shl" else wrap((a if signed else a & mask) >> b)
    simple = {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "neg": lambda: -a,
              "not": lambda: ~a, "and": lambda: a & b, "or": lambda: a | b, "xor": lambda: a ^ b}
    if op in simple:
        return wrap(simple[op]())
    compare = {"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b, "eq": a == b, "ne": a != b,
               "land": bool(a) and bool(b), "lor": bool(a) or bool(b)}
    if op in compare:
        return int(compare[op])
    if op == "select":
        return args[1] if args[0] else args[2]
    return None
