"""FP8 (E4M3 / E5M2, SPV_EXT_float8) encode/decode by table, round to nearest even."""

from __future__ import annotations

import math
from functools import cache

from ..ir.vocab import FloatEncoding

FORMATS = {  # encoding -> (exponent bits, mantissa bits, bias, has infinities)
    FloatEncoding.Float8E4M3EXT: (4, 3, 7, False),
    FloatEncoding.Float8E5M2EXT: (5, 2, 15, True),
}


def fp8_value(encoding: FloatEncoding, code: int) -> float:
    """The real value of the 8-bit ``code``."""
    e_bits, m_bits, bias, has_inf = FORMATS[encoding]
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
def _positive_codes(encoding: FloatEncoding) -> tuple[tuple[float, int], ...]:
    """The finite non-negative codes (sign bit clear) and their values."""
    return tuple(sorted((fp8_value(encoding, c), c) for c in range(0x80) if math.isfinite(fp8_value(encoding, c))))


def fp8_bits(encoding: FloatEncoding, value: float) -> int:
    """Nearest code to ``value``: round to nearest, ties to an even mantissa, the sign in bit 7.

    Infinities encode as E5M2's infinity; E4M3 has none and saturates to its
    largest finite value (ir.literals.fit refuses an infinite E4M3 literal first).
    """
    if math.isnan(value):
        return 0x7F if encoding == FloatEncoding.Float8E4M3EXT else 0x7E
    sign = 0x80 if math.copysign(1.0, value) < 0 else 0
    magnitude = abs(value)
    if math.isinf(magnitude) and encoding == FloatEncoding.Float8E5M2EXT:
        return sign | 0x7C
    codes = _positive_codes(encoding)
    if math.isinf(magnitude):
        return sign | codes[-1][1]
    best = min(codes, key=lambda vc: (abs(vc[0] - magnitude), vc[1] & 1))
    return sign | best[1]
