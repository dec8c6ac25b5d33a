"""Whether a Python number fits a scalar type: the one place that decides (stdlib only).

A type is given by its traits (kind, width, signedness, float encoding), so that the compiler's
IR (``coopdsl.ir.literals``, for kernel literals, splats and specialization constants) and the
runtime (push constants and specialization data packed for Vulkan) ask the same function; none
wraps or rounds a value silently into a type it does not fit.
"""

from __future__ import annotations

import math

# largest finite value and the rounding threshold above it (max + half an ulp), per float format
FLOAT_LIMITS = {
    (16, None): (65504.0, 65520.0),
    (32, None): (3.4028234663852886e38, 3.4028235677973366e38),
    (64, None): (1.7976931348623157e308, math.inf),
    (16, "BFloat16KHR"): (3.3895313892515355e38, 3.39617752923046e38),
    (8, "Float8E4M3EXT"): (448.0, 464.0),
    (8, "Float8E5M2EXT"): (57344.0, 61440.0),
}

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


def fit_number(value: object, kind: str, width: int, signed: bool, encoding: str | None,
               name: str) -> bool | int | float:
    """``value`` as a constant of the scalar type with these traits (``name`` in messages);
    :class:`LiteralError` when it does not fit.

    bools fit only ``bool``; ints fit integer types within their range and float types; floats fit
    float types whose finite range holds them after rounding (infinities and NaN are kept as they
    are), never integer types.
    """
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
    if isinstance(value, int) and abs(value) > 1 << 53:
        value = _round_int(value, SIGNIFICANT_BITS[(width, encoding)])   # (float() would round it first)
    try:
        f = float(value)
    except OverflowError:
        raise LiteralError(f"the literal {value} does not fit in {name}") from None
    largest, limit = FLOAT_LIMITS[(width, encoding)]
    if math.isinf(f) and encoding == "Float8E4M3EXT":
        raise LiteralError(f"{name} has no infinity (largest finite value {largest:g})")
    if math.isfinite(f) and abs(f) >= limit:
        raise LiteralError(f"the literal {value!r} does not fit in {name} (largest finite value {largest:g})")
    return f


def fit_named(value: object, name: str) -> bool | int | float:
    """:func:`fit_number` for a scalar type given by its reflection name (``u32``, ``f16``, ``bf16`` ...)."""
    return fit_number(value, *TRAITS[name], name)
