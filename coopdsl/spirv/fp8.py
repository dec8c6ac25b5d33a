"""FP8 (E4M3 / E5M2, SPV_EXT_float8) encode/decode by table, round to nearest even."""

from __future__ import annotations

import math
from functools import lru_cache

FORMATS = {  # encoding -> (exponent bits, mantissa bits, bias, has infinities)
    "Float8E4M3EXT": (4, 3, 7, False),
    "Float8E5M2EXT": (5, 2, 15, True),
}


def fp8_value(encoding: str, code: int) -> float:
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


@lru_cache(maxsize=None)
def _finite_codes(encoding: str) -> tuple[tuple[float, int], ...]:
    return tuple(sorted((fp8_value(encoding, c), c) for c in range(256)
                        if math.isfinite(fp8_value(encoding, c)) and not (c == 0x80)))


def fp8_bits(encoding: str, value: float) -> int:
    """Nearest code to ``value`` (ties to even mantissa; saturates to the largest finite)."""
    if math.isnan(value):
        return 0x7F if encoding == "Float8E4M3EXT" else 0x7E
    best = min(_finite_codes(encoding), key=lambda vc: (abs(vc[0] - value), vc[1] & 1))
    code = best[1]
    if value < 0 or (value == 0 and math.copysign(1, value) < 0):
        code |= 0x80
        if fp8_value(encoding, code) == 0:
            code = 0x80
    return code
